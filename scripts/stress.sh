#!/usr/bin/env bash
# The suite under load, as real machines are used: a test that fails here depends on
# timing, or shares something it should not (a port, a temporary name, a cache).
#   bash scripts/stress.sh hog  [--hogs N] [--runs K] [--command CMD]   one whole run beside
#                                                 N busy processes
#   bash scripts/stress.sh pair [--hogs N] [--runs K] [--command CMD]   two whole runs at
#                                                 once, beside N busy processes
# Each run is `bash .ci/run` (scripts/test.sh: the set-up from nothing, then everything;
# --command runs CMD instead, e.g. "bash scripts/test.sh --quick") in a fresh clone of this checkout's HEAD under build/stress/ (commit first: uncommitted
# changes are not in a clone). Clones share no venv and no cache of their own; pip's and
# npm's download caches are the user's, which both tools keep safe for concurrent use.
# The busy processes run at normal priority, beside pytest's two workers. --hogs defaults
# to the number of cores, --runs to 1; each run's log stays in build/stress/, and the clone
# of a run that failed too. Prints each run's tally and time; exits 1 if any run failed. Takes 15 to 45 minutes a run: use it
# on a machine nobody else is using (CONTRIBUTING.md says when).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

usage() {
    echo "usage: bash scripts/stress.sh hog|pair [--hogs N] [--runs K] [--command CMD]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
MODE=$1
shift
case "$MODE" in hog) SUITES=1 ;; pair) SUITES=2 ;; *) usage ;; esac
HOGS=$(nproc 2>/dev/null || echo 2)
RUNS=1
COMMAND="bash .ci/run"
while [ $# -gt 0 ]; do
    case "$1" in
        --hogs) HOGS=${2:?--hogs needs a number} && shift 2 ;;
        --runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
        --command) COMMAND=${2:?--command needs a command} && shift 2 ;;
        *) usage ;;
    esac
done
[[ "$HOGS" =~ ^[0-9]+$ && "$RUNS" =~ ^[1-9][0-9]*$ ]] || usage

say() { echo "scripts/stress.sh: $*" >&2; }
WORK=$ROOT/build/stress
mkdir -p "$WORK"
HOG_PIDS=()
SUITE_PIDS=()

# stop: end the busy processes and any suite still running, by their own ids.
stop() {
    local pid
    for pid in "${HOG_PIDS[@]}" "${SUITE_PIDS[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    done
}
trap stop EXIT
trap 'exit 130' INT TERM

hog() {
    local n
    for ((n = 0; n < HOGS; n++)); do
        setsid bash -c 'while :; do :; done' &
        HOG_PIDS+=($!)
    done
}

# suite NAME: a fresh clone of HEAD at build/stress/NAME, then COMMAND in it, its
# output in build/stress/NAME.log and its exit code and seconds in build/stress/NAME.done.
suite() {
    local name=$1 dir=$WORK/$1 start=$SECONDS rc=0
    rm -rf "$dir"
    git clone --quiet --no-hardlinks "$ROOT" "$dir"
    (cd "$dir" && bash -c "$COMMAND") >"$WORK/$name.log" 2>&1 </dev/null || rc=$?
    echo "$rc $((SECONDS - start))" >"$WORK/$name.done"
}

# tally NAME: pytest's closing line of that run (or what ended it instead), and its time.
tally() {
    local name=$1 rc seconds line
    read -r rc seconds <"$WORK/$name.done"
    line=$(grep -E '^=+ .*[0-9]+ (passed|failed|error)' "$WORK/$name.log" | tail -n 1 |
        sed -E 's/^=+ *| *=+$//g' || true)
    [ -n "$line" ] || line="no pytest summary; the end of build/stress/$name.log: $(tail -n 1 "$WORK/$name.log")"
    printf '%s: exit %s, %d min %02d s, %s\n' "$name" "$rc" $((seconds / 60)) $((seconds % 60)) "$line"
    [ "$rc" -eq 0 ] || return 1
    rm -rf "${WORK:?}/$name"  # a green run's clone is not needed again; its log stays
}

export WORK ROOT COMMAND
export -f suite
failed=0
for ((run = 1; run <= RUNS; run++)); do
    say "run $run of $RUNS: $SUITES suite(s) beside $HOGS busy process(es)"
    hog
    SUITE_PIDS=()
    for ((s = 1; s <= SUITES; s++)); do
        setsid bash -c 'suite "$0"' "$MODE-$run-$s" &
        SUITE_PIDS+=($!)
    done
    for pid in "${SUITE_PIDS[@]}"; do wait "$pid" || true; done
    SUITE_PIDS=()
    stop
    HOG_PIDS=()
    for ((s = 1; s <= SUITES; s++)); do
        tally "$MODE-$run-$s" || failed=1
    done
done
exit "$failed"

#!/usr/bin/env bash
# Everything the test suite needs, from nothing, then the suite itself.
#   bash scripts/test.sh [PYTEST-ARGS...]
#   bash scripts/test.sh --quick [PYTEST-ARGS...]   the loop to run every minute: see below
# Creates .venv (if missing) with the package (editable) and the pinned dependency groups
# test, docs and release of pyproject.toml, the example plugin, and the pinned Node MCP
# counterparts from tests/node/package-lock.json. Then ruff, mypy (also as on Windows), the
# import contract; with no arguments (what .ci/run runs) also the package and docs checks
# (scripts/check-release.sh) and the smoke subset on Python 3.12 and 3.13
# (scripts/matrix.sh); last, pytest over the whole suite, with any arguments given. Steps that
# mostly wait on the disk and the package index (the Node install, the other Pythons' venvs, the
# release checks) run in the background beside the ones that use the CPU.
#
# --quick: the same .venv made the same way, then ruff and the unit tests and the portable
# subset (pytest -m quick: no Node.js, no browser, no other Python); no Node install, no
# Chromium, no SDK 1.x venv, no wheelhouse, no mypy, no release checks. A few minutes from
# nothing, and less once .venv exists. The full command stays what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
fi

PYTHON="${PYTHON:-python3}"
# The suite starts a few thousand Python processes (`python -m cassette`, servers, clients).
# With PYTHONDONTWRITEBYTECODE set (some CI images set it), the editable package and tests/
# are compiled again in every one of them; their bytecode is written once instead
# (compileall below, and by the interpreter for whatever it misses).
unset PYTHONDONTWRITEBYTECODE
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
TIMES=()

# step NAME COMMAND...: run it, and note how long it took (printed before pytest starts).
step() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    TIMES+=("$name $((SECONDS - start)) s")
    echo "scripts/test.sh: $name: $((SECONDS - start)) s" >&2
}

python_deps() {
    if [ ! -x .venv/bin/python ]; then
        "$PYTHON" -m venv .venv
    fi
    # pip 25.1 is the first to install PEP 735 dependency groups (--group).
    "${PIP[@]}" --upgrade 'pip>=25.1'
    "${PIP[@]}" -e '.[http]' --group test --group docs --group release
    # The third-party plugin example, installed as a user would: found through its entry point.
    "${PIP[@]}" -e examples/cassette-tcp
    .venv/bin/python -m compileall -q -j 0 -x '(node_modules|\.venv)' \
        cassette cassette_mcp tests examples benchmarks >/dev/null
    if [ "$QUICK" = 1 ]; then return 0; fi  # the quick loop needs no more
    # The Python SDK 1.x client of the cross-client matrix (tests/e2e/test_client_matrix.py)
    # cannot share .venv with mcp 2.x: it gets its own, pinned in
    # tests/clients/requirements-mcp1.txt.
    local mcp1=tests/clients/.venv-mcp1
    if [ ! -x "$mcp1/bin/python" ]; then
        "$PYTHON" -m venv "$mcp1"
    fi
    "$mcp1/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r tests/clients/requirements-mcp1.txt
    # What tests install into throwaway venvs, as wheels in build/wheelhouse: the suite
    # itself never reaches the package index (tests/helpers/wheelhouse.py).
    .venv/bin/python -m tests.helpers.wheelhouse
}

node_deps() {
    if ! command -v npm >/dev/null 2>&1; then
        echo "scripts/test.sh: npm not found; installing Node.js from Debian's packages" >&2
        apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
    fi
    npm ci --prefix tests/node --no-audit --no-fund --loglevel=error

    # Headless Chromium (and its WebDriver) render `cassette show --html` in tests/e2e
    # (test_tools_cli.py, test_show_webdriver.py). Installed from Debian's packages where we
    # may (root with apt); elsewhere those tests skip.
    if { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; } \
        && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "scripts/test.sh: installing Debian's chromium and chromium-driver for the HTML timeline tests" >&2
        (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver \
            >/dev/null) || echo "scripts/test.sh: chromium could not be installed; its tests will skip" >&2
    fi
}

lint() {
    .venv/bin/ruff check cassette cassette_mcp tests examples benchmarks scripts
    .venv/bin/ruff format --check cassette cassette_mcp tests examples benchmarks scripts
    # The Windows branches (the msvcrt lock, the thread fallbacks) type-check too; the two
    # mypy runs are single-threaded, so they take a core each.
    .venv/bin/mypy --platform win32 --cache-dir .mypy_cache/win32 &
    local win32=$!
    .venv/bin/mypy
    wait "$win32"
    .venv/bin/lint-imports --no-cache  # the architecture contract in pyproject.toml
}

# together NAME COMMAND...: run COMMAND in the background, its output kept in
# build/steps/NAME.log; `joined NAME` waits for it, prints that log, and fails as it failed.
# The installs of the other Pythons and the release checks mostly wait on the disk and
# the package index, so they overlap the steps that use the CPU.
together() {
    local name=$1
    shift
    mkdir -p build/steps
    ("$@" >"build/steps/$name.log" 2>&1) &
    eval "PID_${name//[^a-zA-Z0-9]/_}=$!"
}
joined() {
    local name=$1 start=$SECONDS var="PID_${1//[^a-zA-Z0-9]/_}" rc=0
    wait "${!var}" || rc=$?
    cat "build/steps/$name.log" >&2
    TIMES+=("$name (waited) $((SECONDS - start)) s")
    if [ "$rc" -ne 0 ]; then
        echo "scripts/test.sh: $name failed (exit $rc); its output is above" >&2
        exit "$rc"
    fi
}

if [ "$QUICK" = 1 ]; then
    step "python deps" python_deps
    step "ruff" .venv/bin/ruff check --quiet cassette cassette_mcp tests examples benchmarks scripts
    echo "scripts/test.sh: steps: $(IFS=,; echo "${TIMES[*]}" | sed 's/,/, /g'); now the quick tests" >&2
    exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" -m quick "$@"
fi

if [ $# -eq 0 ]; then
    together "python 3.12 and 3.13 venvs" env MATRIX_INSTALL_ONLY=1 bash scripts/matrix.sh
fi
together "node deps" node_deps
step "python deps" python_deps
joined "node deps"
if [ $# -eq 0 ]; then
    together "package and docs checks" bash scripts/check-release.sh
fi
step "lint and types" lint
if [ $# -eq 0 ]; then
    joined "python 3.12 and 3.13 venvs"
    step "python 3.12 and 3.13" bash scripts/matrix.sh
    joined "package and docs checks"
fi
echo "scripts/test.sh: steps: $(IFS=,; echo "${TIMES[*]}" | sed 's/,/, /g'); now the whole suite" >&2
# Two workers by default (pytest-xdist; the suite is mostly waiting on real servers and
# clients in subprocesses): PYTEST_WORKERS=0 runs it in one process.
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"

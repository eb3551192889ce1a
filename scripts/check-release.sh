#!/usr/bin/env bash
# What would be published, checked as a packager and a new user would meet it:
#   1. the sdist and the wheel, built in isolation (python -m build: the wheel from the sdist);
#   2. twine check --strict (metadata, the readme renders);
#   3. what each holds (scripts/check_dist.py);
#   4. a build at the declared backend floor (hatchling 1.27.0) without isolation;
#   5. the wheel alone in a clean venv: `cassette --version` and the README's replay;
#   6. the sdist unpacked: its smoke tests run from it, as from a checkout;
#   7. the docs site (mkdocs.yml) in strict mode: every page in the nav, every internal
#      link and anchor resolves;
#   8. the hosted workflow (.github/workflows/) with actionlint.
# Needs .venv from scripts/test.sh; writes only under build/.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
OUT=build/release
VENV=.venv/bin
say() { echo "scripts/check-release.sh: $*" >&2; }
rm -rf "$OUT" && mkdir -p "$OUT"

say "1. build (isolated)"
"$VENV/python" -m build --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }

say "2. twine check --strict"
"$VENV/twine" check --strict "$OUT"/dist/*

say "3. contents"
"$VENV/python" scripts/check_dist.py "$OUT/dist"

say "4. build at the floor, hatchling 1.27.0, --no-isolation"
"$PYTHON" -m venv "$OUT/floor"
"$OUT/floor/bin/python" -m pip install --quiet --disable-pip-version-check 'hatchling==1.27.0' 'build==1.6.1'
"$OUT/floor/bin/python" -m build --no-isolation --outdir "$OUT/dist-floor" . >"$OUT/floor.log" 2>&1 \
    || { cat "$OUT/floor.log"; exit 1; }
"$VENV/python" scripts/check_dist.py "$OUT/dist-floor"

say "5. the wheel alone, in a clean venv"
"$PYTHON" -m venv "$OUT/wheel"
"$OUT/wheel/bin/python" -m pip install --quiet --disable-pip-version-check "$OUT"/dist/*.whl
"$OUT/wheel/bin/cassette" --version
(cd "$OUT" && wheel/bin/cassette replay -q ../../examples/everything.jsonl \
    <../../examples/everything-requests.jsonl >replay.out)
lines=$(wc -l <"$OUT/replay.out")
[ "$lines" -ge 5 ] || { say "the README's replay answered $lines lines"; exit 1; }
say "   the README's replay from the wheel answered $lines lines"

say "6. the sdist's smoke tests, from the unpacked sdist"
tar -xzf "$OUT"/dist/*.tar.gz -C "$OUT"
(cd "$OUT"/cassette_mcp-*/ && "$OLDPWD/$VENV/python" -m pytest -q -p no:cacheprovider \
    tests/test_packaging.py tests/e2e/test_cli.py tests/plugin/test_plugin.py tests/test_platform_guards.py)

say "7. docs: mkdocs build --strict"
NO_MKDOCS_2_WARNING=1 "$VENV/mkdocs" build --strict --quiet --site-dir "$OUT/site"

say "8. actionlint"
"$VENV/actionlint" .github/workflows/*.yml
say "all checks passed"

#!/usr/bin/env bash
# Everything the test suite needs, from nothing, then the suite itself.
#   bash scripts/test.sh [PYTEST-ARGS...]
# Creates .venv (if missing) with the package and its pinned test dependencies, installs the
# pinned Node MCP counterparts from tests/node/package-lock.json, then runs the linters,
# the type checker, the import contract and pytest. .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[http,test]'
# The third-party plugin example, installed as a user would: found through its entry point.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e examples/cassette-tcp
# The Python SDK 1.x client of the cross-client matrix (tests/e2e/test_client_matrix.py) cannot
# share .venv with mcp 2.x: it gets its own, pinned in tests/clients/requirements-mcp1.txt.
MCP1_VENV=tests/clients/.venv-mcp1
if [ ! -x "$MCP1_VENV/bin/python" ]; then
    "$PYTHON" -m venv "$MCP1_VENV"
fi
"$MCP1_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/clients/requirements-mcp1.txt

if ! command -v npm >/dev/null 2>&1; then
    echo "scripts/test.sh: npm not found; installing Node.js from Debian's packages" >&2
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
npm ci --prefix tests/node --no-audit --no-fund --loglevel=error

# Headless Chromium (and its WebDriver) render `cassette show --html` in tests/e2e
# (test_tools_cli.py, test_show_webdriver.py). Installed from Debian's packages where we may
# (root with apt); elsewhere those tests skip.
if { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; } \
    && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "scripts/test.sh: installing Debian's chromium and chromium-driver for the HTML timeline tests" >&2
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver \
        >/dev/null) || echo "scripts/test.sh: chromium could not be installed; its tests will skip" >&2
fi

.venv/bin/ruff check cassette tests examples benchmarks
.venv/bin/ruff format --check cassette tests examples benchmarks
.venv/bin/mypy
.venv/bin/lint-imports --no-cache  # the architecture contract in pyproject.toml
exec .venv/bin/python -m pytest "$@"

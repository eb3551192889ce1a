#!/usr/bin/env bash
# The smoke subset on the other Pythons users run: import, the command line, stdio and
# HTTP replay, the pytest plugin (SMOKE below), on each version in VERSIONS.
#   bash scripts/matrix.sh [VERSION...]        (default: 3.12 3.13)
#   MATRIX_INSTALL_ONLY=1 bash scripts/matrix.sh   only make the venvs (scripts/test.sh runs
#                                                  this in the background from its start)
# Each interpreter comes from pyenv (the machine image has them under
# $PYENV_ROOT/versions), else from PATH as pythonX.Y; a missing one is one clear line and
# exit 1. Each gets its own .venv-X.Y with the package (editable), the pinned `portable`
# dependency group and the example plugin. The whole portable subset (pytest -m portable)
# runs on three systems in .github/workflows/ci.yml; here, this part of it keeps CI short.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then VERSIONS=("$@"); else VERSIONS=(3.12 3.13); fi
SMOKE=(
    tests/test_packaging.py              # import, version, entry points, the name check
    tests/e2e/test_cli.py                # the command line; stdio record and replay
    tests/unit/test_http_front.py        # streamable-HTTP replay
    tests/unit/test_memory_replay.py     # in-process replay
    tests/plugin/test_plugin.py          # the pytest plugin
    tests/test_examples.py               # the README's replay command
)

find_python() {
    local version=$1 root="${PYENV_ROOT:-$HOME/.pyenv}" found=""
    # The newest patch release pyenv has for this minor version.
    found=$(ls -d "$root"/versions/"$version".*/bin/python"$version" 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$found" ] && command -v "python$version" >/dev/null 2>&1; then
        found=$(command -v "python$version")
    fi
    echo "$found"
}

for version in "${VERSIONS[@]}"; do
    python=$(find_python "$version")
    if [ -z "$python" ]; then
        echo "scripts/matrix.sh: Python $version not found (looked in ${PYENV_ROOT:-$HOME/.pyenv}/versions/$version.* and for python$version on PATH); install it with 'pyenv install $version'" >&2
        exit 1
    fi
    venv=".venv-$version"
    if [ ! -x "$venv/bin/python" ]; then
        "$python" -m venv "$venv"
    fi
    pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
    # The installs are editable: they need doing again only when pyproject.toml changes.
    if [ ! "$venv/.installed" -nt pyproject.toml ]; then
        "${pip[@]}" --upgrade 'pip>=25.1'
        "${pip[@]}" -e '.[http]' --group portable
        # The example plugin too, so that `pytest -m portable` (all of it) collects here as well.
        "${pip[@]}" -e examples/cassette-tcp
        touch "$venv/.installed"
    fi
    [ "${MATRIX_INSTALL_ONLY:-0}" = 1 ] && continue
    echo "scripts/matrix.sh: Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())') ($python)" >&2
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -m portable "${SMOKE[@]}"
done

"""Check what a built sdist and wheel hold, as a packager would look at them.

    python scripts/check_dist.py DIST_DIR

The wheel holds the two import packages (``cassette``, with ``py.typed`` and the JSON
Schema, and ``cassette_mcp``), the license, the three entry-point groups, and nothing else
(no tests, no caches). The sdist holds what is needed to build, test and document the
package from it alone (sources, tests with the Node lock file, docs, examples,
changelog, license, scripts) and nothing from a working tree (virtual environments,
``node_modules``, caches). The metadata names the version of ``cassette/_version.py``,
the license expression and file, the classifiers and the project URLs. Exit 1 with the
list of what is wrong.
"""

from __future__ import annotations

import email.parser
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WHEEL_REQUIRED = {
    "cassette/__init__.py",
    "cassette/py.typed",
    "cassette/cli/main.py",
    "cassette/pytest_plugin.py",
    "cassette/schema/cassette-v1.schema.json",
    "cassette/schema/scenarios-v1.schema.json",
    "cassette_mcp/__init__.py",
    "cassette_mcp/py.typed",
}
SDIST_REQUIRED = {
    "pyproject.toml",
    "PKG-INFO",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "mkdocs.yml",
    "cassette/__init__.py",
    "cassette_mcp/__init__.py",
    "tests/conftest.py",
    "tests/helpers/support.py",
    "tests/node/package.json",
    "tests/node/package-lock.json",
    "docs/index.md",
    "docs/cli.md",
    "examples/everything.jsonl",
    "examples/cassette-tcp/pyproject.toml",
    "examples/server-testing/scenarios.toml",
    "examples/server-testing/cassettes/forecast.jsonl",
    "scripts/test.sh",
    ".ci/run",
    ".github/workflows/ci.yml",
}
NEVER = re.compile(
    r"(^|/)(\.venv[^/]*|node_modules|__pycache__|\.mypy_cache|\.pytest_cache|build|dist)/|\.pyc$"
)
CLASSIFIERS = {
    "Framework :: Pytest",
    "Typing :: Typed",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
}
URLS = {"Homepage", "Documentation", "Source", "Issues", "Changelog"}


def version() -> str:
    found = re.search(r'__version__ = "([^"]+)"', (ROOT / "cassette" / "_version.py").read_text())
    assert found is not None
    return found.group(1)


def check_metadata(text: str, where: str) -> list[str]:
    meta = email.parser.Parser().parsestr(text)
    problems = []
    if meta["Version"] != version():
        problems.append(
            f"{where}: Version {meta['Version']}, cassette/_version.py says {version()}"
        )
    if meta["License-Expression"] != "Apache-2.0":
        problems.append(f"{where}: License-Expression is {meta['License-Expression']!r}")
    if "LICENSE" not in (meta.get_all("License-File") or []):
        problems.append(f"{where}: no License-File: LICENSE")
    missing = CLASSIFIERS - set(meta.get_all("Classifier") or [])
    if missing:
        problems.append(f"{where}: classifiers missing: {sorted(missing)}")
    urls = {url.split(",")[0].strip() for url in meta.get_all("Project-URL") or []}
    if URLS - urls:
        problems.append(f"{where}: project URLs missing: {sorted(URLS - urls)}")
    if "Provides-Extra: test" in text:
        problems.append(f"{where}: the test dependencies are published as an extra")
    if meta["Description-Content-Type"] != "text/markdown":
        problems.append(f"{where}: readme content type {meta['Description-Content-Type']!r}")
    return problems


def check_wheel(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as wheel:
        names = set(wheel.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        problems = check_metadata(wheel.read(f"{info}/METADATA").decode(), path.name)
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    problems += [f"{path.name}: missing {n}" for n in sorted(WHEEL_REQUIRED - names)]
    if not any(n.startswith("cassette/schema/") and n.endswith(".json") for n in names):
        problems.append(f"{path.name}: no JSON Schema under cassette/schema/")
    if f"{info}/licenses/LICENSE" not in names:
        problems.append(f"{path.name}: no {info}/licenses/LICENSE")
    stray = sorted(
        n
        for n in names
        if not n.startswith(("cassette/", "cassette_mcp/", f"{info}/")) or NEVER.search(n)
    )
    problems += [f"{path.name}: does not belong: {n}" for n in stray]
    for group in ("[console_scripts]", "[pytest11]", "[cassette.transports]"):
        if group not in entry_points:
            problems.append(f"{path.name}: entry-point group {group} missing")
    if "cassette = cassette_mcp:main" not in entry_points:
        problems.append(f"{path.name}: the cassette script does not go through cassette_mcp")
    return problems


def check_sdist(path: Path) -> list[str]:
    with tarfile.open(path) as sdist:
        members = sdist.getnames()
        top = members[0].split("/")[0]
        names = {m.split("/", 1)[1] for m in members if "/" in m}
        pkg_info = sdist.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        problems = check_metadata(pkg_info.read().decode(), path.name)
    problems += [f"{path.name}: missing {n}" for n in sorted(SDIST_REQUIRED - names)]
    problems += [f"{path.name}: does not belong: {n}" for n in sorted(names) if NEVER.search(n)]
    # Every test module that the sdist ships imports only what the sdist ships.
    for name in sorted(n for n in names if n.startswith("tests/") and n.endswith(".py")):
        problems += [
            f"{path.name}: {name} imports {module}, which is not in the sdist"
            for module in re.findall(
                r"^from (tests(?:\.\w+)*) import", _read(path, top, name), re.M
            )
            if not _shipped(module, names)
        ]
    return problems


def _shipped(module: str, names: set[str]) -> bool:
    """Whether the sdist holds MODULE: a module file, a package, or a folder of modules
    imported as a namespace package (``from tests.clients import agent_cli``)."""
    where = module.replace(".", "/")
    return f"{where}.py" in names or any(n.startswith(f"{where}/") for n in names)


def _read(path: Path, top: str, name: str) -> str:
    with tarfile.open(path) as sdist:
        member = sdist.extractfile(f"{top}/{name}")
        assert member is not None
        return member.read().decode()


def main(argv: list[str]) -> int:
    dist = Path(argv[1]) if len(argv) > 1 else ROOT / "dist"
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"check_dist: expected one wheel and one sdist in {dist}", file=sys.stderr)
        return 1
    problems = check_wheel(wheels[0]) + check_sdist(sdists[0])
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_dist: {wheels[0].name} and {sdists[0].name} hold what they should")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

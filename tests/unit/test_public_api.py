"""The public API holds together: what each public module says it exports is what it
exports, every name resolves, and nothing reports an internal module as its home.

Three lists name a lazily exporting module's names: ``__all__``, the table that imports
them on first use (``cassette._lazy.TABLES``) and the ``TYPE_CHECKING`` imports that type
checkers read. Nothing but this test keeps them from drifting apart.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cassette._lazy import TABLES, is_public
from tests.helpers.support import scaled

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "everything.jsonl"
PUBLIC = [
    "cassette",
    "cassette.transport",
    "cassette.errors",
    "cassette.registry",
    "cassette.testing",
    "cassette.client",
    "cassette.mock",
]
LAZY = ["cassette", "cassette.transport", "cassette.testing", "cassette.client", "cassette.mock"]


def _type_checking_imports(module: str) -> set[str]:
    """The names the module's top-level ``if TYPE_CHECKING:`` block imports."""
    source = inspect.getsource(importlib.import_module(module))
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in statement.names)
    return names


@pytest.mark.parametrize("module", LAZY)
def test_all_the_lazy_table_and_the_type_checking_imports_agree(module: str) -> None:
    package = importlib.import_module(module)
    table = set(TABLES[module])
    assert table == _type_checking_imports(module)
    assert table <= set(package.__all__)
    eager = set(package.__all__) - table
    assert all(name in vars(package) for name in eager), "listed, but neither here nor lazy"


@pytest.mark.parametrize("module", PUBLIC)
def test_every_exported_name_resolves_and_has_a_public_home(module: str) -> None:
    package = importlib.import_module(module)
    assert len(set(package.__all__)) == len(package.__all__), "a name listed twice"
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            home = value.__module__
            if home.startswith("cassette"):
                assert is_public(home), f"{module}.{name} reports {home}"
                assert getattr(importlib.import_module(home), name) is value


def test_the_package_exports_what_the_docs_import() -> None:
    """Every name docs/library.md tells a user to use is importable from ``cassette``."""
    import cassette

    for name in (
        "Candidate",
        "ReplayPool",
        "Replayer",
        "Responder",
        "ModeChoice",
        "ModeOptions",
        "run_mode",
        "run_stdio",
        "Pacing",
        "replay_sessions",
        "replay_pool",
        "ReplayOptions",
        "record_http",
        "DeliveryPolicy",
    ):
        assert name in cassette.__all__
        assert getattr(cassette, name).__module__ == "cassette"


def test_a_rehomed_value_class_still_converts_through_the_codec() -> None:
    """Re-homing resolves an attrs class's annotations first, so cattrs still reads them
    (a fresh process: the converter is built after every name was re-homed)."""
    code = (
        "import cassette\n"
        "for name in cassette.__all__: getattr(cassette, name)\n"
        "from cassette.core.tape.codec import _converter, encode\n"
        f"tape = cassette.Cassette.load({str(EXAMPLE)!r})\n"
        "assert cassette.Header.__module__ == 'cassette'\n"
        "conv = _converter()\n"
        "assert conv.structure(encode(tape.header), cassette.Header) == tape.header\n"
        "for event in tape.events:\n"
        "    if not isinstance(event, cassette.MessageEvent):\n"
        "        assert conv.structure(encode(event), type(event)) == event\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=scaled(60))


def _only_a_docstring(module: str) -> bool:
    """A package whose ``__init__`` holds its docstring alone (the core's rooms): loading
    it runs no code, so it is no weight to count."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
        return False
    body = ast.parse(Path(spec.origin).read_text()).body
    return len(body) == 1 and isinstance(body[0], ast.Expr)


def test_a_plugin_author_imports_the_contract_in_ten_modules_or_fewer() -> None:
    """``import cassette.transport`` loads the plugin-facing module, not the serving and
    speed-up ones, nor more of the package than the values they name."""
    code = (
        "import sys, cassette.transport\n"
        "print(sorted(m for m in sys.modules if m.startswith('cassette')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60)
    ).stdout
    loaded = ast.literal_eval(out)
    assert "cassette.transport.plugin" in loaded
    assert "cassette.transport.serving" not in loaded
    assert "cassette.transport.speed" not in loaded
    weighed = [m for m in loaded if not _only_a_docstring(m)]
    assert len(weighed) <= 10, weighed


def test_docs_and_examples_import_only_public_modules() -> None:
    private = re.compile(r"from cassette\.(core|runtime|modes|store|transports)\b")
    for path in [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "examples").rglob("*"),
    ]:
        if path.suffix not in (".md", ".py", ".toml") or ".venv" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not private.search(line), f"{path}:{number}: {line.strip()}"

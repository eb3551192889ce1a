"""Project settings from ``[tool.cassette]`` in pyproject.toml, merged with the command line.

Redaction (read by the one gate, ``cassette.store.gate``) and the input limits are
configured here::

    [tool.cassette.redact]
    patterns = ["acct-[0-9]{6}"]          # regular expressions whose matches are secret
    paths = ["/params/arguments/note"]    # JSON Pointers into messages whose values are secret
    env = ["MY_SERVICE_TOKEN"]            # variables whose values are secret wherever they appear
    pii = true                            # e-mail addresses and phone numbers too (default false)
    reviewed = [{ pointer = "/message/result/structuredContent/etag", rule = "entropy" }]
                                          # suspects a person reviewed (docs/redaction.md)

    [tool.cassette]
    redact = false                        # turn redaction off (warned about on every recording)
    max-message-bytes = "16MiB"           # one stdio line or HTTP body (default 64MiB)
    max-depth = 128                       # JSON nesting (default 256; cassette.core.wire.limits)

    ignore-params = ["/params/arguments/requestId"]   # never matched on (docs/matching.md)
    before-record = "tests/hooks.py:scrub"            # sees each message before it is written
    stderr = false                        # keep no server stderr in cassettes (--no-stderr)
    probe = false                         # no probes of the server beside a recording

    [tool.cassette.pytest]                # the pytest plugin (docs/pytest.md)
    cassette-dir = "tests/cassettes"      # where cassettes live (default: beside each test)
    mode = "once"                         # the default record mode
    probe = false                         # as [tool.cassette] probe, for the plugin only
    strategy = "default"                  # the default matching strategy
    fail-on-unused = true                 # a test that leaves recordings unplayed fails
    record-on-failure = false             # keep what a failing test recorded

A command-line option wins over the file. A mistake is one line naming the file and the
line of the key.

The file is found by walking up from the working directory, as most Python tools do.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cassette.core.wire.limits import parse_size
from cassette.errors import UsageError

__all__ = [
    "find_pyproject",
    "ignore_params_for",
    "keep_stderr_for",
    "limits_for",
    "load_hook",
    "load_settings",
    "probe_setting",
    "setting_error",
]


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def fast_json_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether cassettes may be parsed by orjson: the ``CASSETTE_FAST_JSON`` switch (``0``
    turns it off, for this process and the replays it starts, which inherit it), read
    here at the edge and passed to the codec as a value; the core reads no environment."""
    env = os.environ if environ is None else environ
    return env.get("CASSETTE_FAST_JSON", "1") != "0"


def fast_json(environ: Mapping[str, str] | None = None) -> bool:
    """Whether large cassettes are parsed by orjson: the extra installed and not turned
    off (``fast_json_enabled``)."""
    from cassette.core.wire.jsonrpc import fast_json as installed

    return fast_json_enabled(environ) and installed()


def load_settings(start: Path | None = None) -> dict[str, Any]:
    """``[tool.cassette]`` of the nearest pyproject.toml, or ``{}`` (a copy: the caller's
    to change)."""
    path = find_pyproject(start)
    if path is None:
        return {}
    return copy.deepcopy(_section(path))


#: Parsed sections by file and version: one command asks for its settings several times
#: (limits, ignored parameters, redaction), and a project's pyproject.toml can be long.
_PARSED: dict[tuple[Path, int, int, int], dict[str, Any]] = {}


def _section(path: Path) -> dict[str, Any]:
    try:
        stat = path.stat()
        key = (path, stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if key not in _PARSED:
            _PARSED[key] = _parsed_section(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read [tool.cassette]: {exc}") from exc
    return _PARSED[key]


def _parsed_section(path: Path, text: str) -> dict[str, Any]:
    """``[tool.cassette]`` of ``text``; parsed only when the text may hold it, because
    ``tomllib`` with its ``datetime`` costs a replay's start-up (the speed-exceptions table in
    docs/architecture.md has the figure), and most projects
    that use us name ``cassette-mcp`` among their dependencies, never the table."""
    if not _may_hold_table(text):
        return {}
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: cannot read [tool.cassette]: {exc}") from exc
    section = data.get("tool", {}).get("cassette", {})
    return section if isinstance(section, dict) else {}


def _may_hold_table(text: str) -> bool:
    r"""False only when no TOML spelling of the table ``tool.cassette`` is in ``text``.
    The key ``tool`` comes first in every one: followed (after an optional quote and
    blanks) by ``.`` and the key ``cassette``, as in ``[tool.cassette]``,
    ``[tool."cassette".redact]`` or ``tool.cassette.x = 1``; or by ``]`` or ``=``
    (``[tool]``, ``tool = {...}``), where the key ``cassette`` may come anywhere after, so
    then any ``cassette`` key means: parse it (``_names_cassette``). A project's own
    ``cassette = "app:main"`` script or ``"cassette.x"`` module names are not the table.
    A key written with escapes (``"\u0063assette"``) cannot be seen this way, so any
    escape that can spell a letter (``\u``, ``\U``, and TOML 1.1's ``\x``) means: parse it."""
    if "\\u" in text or "\\U" in text or "\\x" in text:
        return True
    start = text.find("tool")
    while start >= 0:
        after = _past_quotes(text, start + 4)
        mark = text[after : after + 1]
        if mark in ("]", "="):
            return _names_cassette(text)
        if mark == "." and _key_at(text, _past_quotes(text, after + 1)):
            return True
        start = text.find("tool", start + 4)
    return False


def _past_quotes(text: str, at: int) -> int:
    """The first place from ``at`` that is no quote or blank (a key's spelling around it)."""
    while at < len(text) and text[at] in "\"' \t":
        at += 1
    return at


def _names_cassette(text: str) -> bool:
    """Whether the key ``cassette`` may be anywhere in ``text`` (``_key_at``)."""
    start = text.find("cassette")
    while start >= 0:
        if _key_at(text, start):
            return True
        start = text.find("cassette", start + 8)
    return False


def _key_at(text: str, at: int) -> bool:
    """Whether the key ``cassette`` may start at ``at``: the word followed (after an
    optional quote and blanks) by ``.``, ``]`` or ``=``."""
    if not text.startswith("cassette", at):
        return False
    after = _past_quotes(text, at + 8)
    return text[after : after + 1] in (".", "]", "=")


def limits_for(
    settings: Mapping[str, Any], *, max_message_bytes: int | None, max_depth: int | None
) -> tuple[int | None, int | None]:
    """The size and depth limits: the command line's, else the project's, else ``None``
    (the built-in defaults). A bad value in the file is a ``UsageError`` naming the key."""
    size: Any = max_message_bytes
    if size is None and settings.get("max-message-bytes") is not None:
        value = settings["max-message-bytes"]
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise UsageError("[tool.cassette] max-message-bytes must be a size like 16MiB")
        try:
            size = parse_size(value)
        except UsageError as exc:
            raise UsageError(f"[tool.cassette] max-message-bytes: {exc}") from None
    depth: Any = max_depth
    if depth is None and settings.get("max-depth") is not None:
        depth = settings["max-depth"]
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise UsageError("[tool.cassette] max-depth must be a whole number of at least 1")
    return size, depth


def _key_line(path: Path, key: str) -> int:
    """The line ``key = ...`` is on in ``path`` (the first; 1 when it cannot be found)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 1
    for number, line in enumerate(lines, 1):
        if line.strip().startswith(key) and line.split("=", 1)[0].strip() in (key, f'"{key}"'):
            return number
    return 1


def setting_error(start: Path | None, section: str, key: str, text: str) -> UsageError:
    path = find_pyproject(start)
    where = f"{path}:{_key_line(path, key)}: " if path is not None else ""
    return UsageError(f"{where}[{section}] {key} {text}")


def ignore_params_for(
    settings: Mapping[str, Any], given: Sequence[str] = (), start: Path | None = None
) -> tuple[str, ...]:
    """The JSON Pointers never matched on: the project's ``ignore-params``, then ``given``
    (the command line's, a marker's), each once."""
    value = settings.get("ignore-params", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise setting_error(
            start, "tool.cassette", "ignore-params", "must be a list of JSON Pointers"
        )
    return tuple(dict.fromkeys([*value, *given]))


def keep_stderr_for(
    settings: Mapping[str, Any], given: bool | None = None, start: Path | None = None
) -> bool:
    """Whether a recording keeps the server's stderr: ``given`` (``--no-stderr`` gives
    ``False``), else the project's ``stderr``, else yes."""
    if given is not None:
        return given
    value = settings.get("stderr", True)
    if not isinstance(value, bool):
        raise setting_error(start, "tool.cassette", "stderr", "must be true or false")
    return value


def load_hook(spec: str, root: Path | None = None) -> Any:
    """The callable ``spec`` names: ``package.module:function``, or ``path/to/file.py:function``
    (relative to ``root``, default the working directory). A ``UsageError`` says why it
    cannot be had."""
    import importlib
    import importlib.util

    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"before-record {spec!r}: give module:function or file.py:function")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_absolute():
                path = (root or Path.cwd()) / path
            loaded = importlib.util.spec_from_file_location(f"_cassette_hook_{path.stem}", path)
            if loaded is None or loaded.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
        found: Any = module
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, OSError) as exc:
        raise UsageError(f"before-record {spec!r}: {exc}") from None
    if not callable(found):
        raise UsageError(f"before-record {spec!r} is not callable")
    return found


def probe_setting(option: bool | None, start: Path | None = None) -> bool:
    """Whether a recording probes the server beside its session
    (``cassette.runtime.probe``): as the option says (``--probe``, ``--no-probe``), else
    as ``[tool.cassette] probe`` says (default: it does)."""
    if option is not None:
        return option
    value = load_settings(start).get("probe", True)
    if not isinstance(value, bool):
        raise setting_error(start, "tool.cassette", "probe", "must be true or false")
    return value

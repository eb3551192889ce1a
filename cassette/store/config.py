"""Project settings from ``[tool.cassette]`` in pyproject.toml, merged with the command line.

Redaction and the input limits are configured here::

    [tool.cassette.redact]
    patterns = ["acct-[0-9]{6}"]          # regular expressions whose matches are secret
    paths = ["/params/arguments/note"]    # JSON Pointers into messages whose values are secret
    env = ["MY_SERVICE_TOKEN"]            # variables whose values are secret wherever they appear

    [tool.cassette]
    redact = false                        # turn redaction off (warned about on every recording)
    max-message-bytes = "16MiB"           # one stdio line or HTTP body (default 64MiB)
    max-depth = 128                       # JSON nesting (default 256; see cassette.core.limits)

A command-line option wins over the file.

The file is found by walking up from the working directory, as most Python tools do.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cassette.core.limits import parse_size
from cassette.core.redaction import Redactor
from cassette.errors import UsageError

__all__ = ["find_pyproject", "limits_for", "load_settings", "redactor_for"]


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(start: Path | None = None) -> dict[str, Any]:
    """``[tool.cassette]`` of the nearest pyproject.toml, or ``{}``."""
    path = find_pyproject(start)
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read [tool.cassette]: {exc}") from exc
    section = data.get("tool", {}).get("cassette", {})
    return section if isinstance(section, dict) else {}


def _strings(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"[tool.cassette.redact] {where} must be a list of strings")
    return list(value)


def redactor_for(
    settings: Mapping[str, Any],
    *,
    enabled: bool = True,
    patterns: Sequence[str] = (),
    paths: Sequence[str] = (),
    env: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Redactor | None:
    """The recorder's redactor: project rules plus command-line ones; ``None`` when off."""
    if not enabled or settings.get("redact") is False:
        return None
    section = settings.get("redact")
    rules: Mapping[str, Any] = section if isinstance(section, dict) else {}
    return Redactor.configured(
        patterns=[*_strings(rules.get("patterns"), "patterns"), *patterns],
        paths=[*_strings(rules.get("paths"), "paths"), *paths],
        env=[*_strings(rules.get("env"), "env"), *env],
        environ=os.environ if environ is None else environ,
    )


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

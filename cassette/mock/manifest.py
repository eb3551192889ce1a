"""Reading and writing mock manifests, as JSON or as TOML (chosen by the file's suffix).

TOML has no ``null``, and JSON values (schemas above all: ``"default": null``) often hold
one, so in TOML a null is written as the table ``{"$null" = true}`` and read back as
``null``: a manifest round-trips through TOML unchanged. An object that is literally
``{"$null": true}`` cannot be told from that stand-in and is refused when writing TOML.
TOML dates and times have no JSON form and are refused when reading (quote them).

Reading TOML needs nothing (stdlib ``tomllib``); writing it needs ``tomli-w`` (the ``toml``
extra). Errors name the file, and the line where the parser gives one.

A manifest's values are JSON values, in either spelling: ``nan`` and ``inf`` (which TOML
has, and Python's JSON reader takes) are refused when reading, naming where they are,
since no JSON answer can carry them. A lone UTF-16 surrogate in a recorded answer (legal
as a JSON escape) is written as that escape in JSON, so it reads back exact; TOML cannot
hold one at all, so there it is written as the six characters of its escape, and the
caller is told (``notes``). Files are written whole or not at all (``write_atomic``).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from cassette.core.words.jsondiff import pointer, same_json
from cassette.core.words.text import has_surrogates, surrogates_escaped
from cassette.errors import CassetteError, CassetteExistsError, ManifestError, UsageError
from cassette.store.files import read_definitions, write_atomic

__all__ = [
    "MANIFEST_FORMAT",
    "TOML_NULL",
    "dumps_manifest",
    "json_type",
    "load_manifest",
    "loads_manifest",
    "manifest_kind",
    "write_manifest",
]

#: The newest manifest format this code reads and writes (the manifest's ``manifest`` key).
MANIFEST_FORMAT: Final = 1
#: How TOML spells a JSON ``null``.
TOML_NULL: Final = {"$null": True}
_TOML_LINE: Final = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")

Kind = Literal["json", "toml"]


def manifest_kind(path: str | os.PathLike[str]) -> Kind:
    """``json`` or ``toml``, from the file's suffix; anything else is a usage error."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix == ".toml":
        return "toml"
    raise UsageError(f"{os.fspath(path)}: a manifest file ends in .json or .toml")


def load_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a manifest file (not yet validated: see ``validate_manifest``). Only a regular
    file is read, and no more of it than ``definitions_limit`` (the message size limit,
    at least the default): the file is read whole, so it is bounded."""
    source = os.fspath(path)
    kind = manifest_kind(source)
    try:
        text = read_definitions(source, "manifest")
    except CassetteError as exc:
        raise ManifestError(str(exc)) from None
    return loads_manifest(text, kind, source)


def loads_manifest(text: str, kind: Kind = "json", source: str = "<manifest>") -> dict[str, Any]:
    """Read a manifest from its text."""
    if kind == "toml":
        import tomllib

        try:
            value: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ManifestError(_toml_error(source, exc)) from exc
        value = _from_toml(value, (), source)
    else:
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except _NotJson as exc:
            raise ManifestError(f"{source}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise ManifestError(
                f"{source}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})"
            ) from exc
    if not isinstance(value, dict):
        raise ManifestError(f"{source}:1: a manifest is a JSON object, not {json_type(value)}")
    return value


def dumps_manifest(
    manifest: Mapping[str, Any], kind: Kind = "json", notes: list[str] | None = None
) -> str:
    """The manifest as JSON (indented, UTF-8) or TOML text; ``notes`` hears of values
    TOML cannot hold exactly (see the module docstring)."""
    if kind == "json":
        return surrogates_escaped(json.dumps(manifest, indent=2, ensure_ascii=False)) + "\n"
    try:
        import tomli_w
    except ImportError:
        from cassette._install import install_command

        raise UsageError(
            f"writing TOML needs tomli-w: {install_command('toml')}, or write a .json path"
        ) from None
    changed: list[str] = []
    value = _to_toml(manifest, (), changed)
    if notes is not None:
        notes += [
            f"{where}: a lone surrogate, which TOML cannot hold, is written as the text of "
            "its escape (write a .json manifest to keep it exact)"
            for where in changed
        ]
    text = tomli_w.dumps(value, multiline_strings=True)
    plain = _to_toml(json.loads(json.dumps(manifest)), (), [])
    if not same_json(_to_toml(loads_manifest(text, "toml"), (), []), plain):  # a lost "\r"
        text = tomli_w.dumps(value)
    return text


def write_manifest(
    manifest: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    notes: list[str] | None = None,
) -> None:
    """Write ``manifest`` to ``path`` as its suffix says, whole or not at all; refuses to
    replace a non-empty file unless ``overwrite`` (a manifest is meant to be edited by
    hand). ``notes`` hears of values TOML cannot hold exactly."""
    target = Path(path)
    text = dumps_manifest(manifest, manifest_kind(target), notes)
    if target.is_dir():
        raise ManifestError(f"{target}: is a directory")
    if not overwrite and target.exists() and target.stat().st_size > 0:
        raise CassetteExistsError(
            f"{target}: already exists; refusing to overwrite it (pass --overwrite, or "
            "choose another path)"
        )
    try:
        write_atomic(target, text.encode("utf-8"))
    except CassetteError as exc:
        raise ManifestError(str(exc)) from exc


def json_type(value: Any) -> str:
    """What kind of JSON value ``value`` is, for a message ("an object", "null", ...)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else "null")


def _toml_error(source: str, exc: Exception) -> str:
    message = str(exc)
    line = getattr(exc, "lineno", None)
    found = _TOML_LINE.search(message)
    if found is not None:
        line = line or int(found.group(1))
        message = message[: found.start()] + f" (column {found.group(2)})"
    return f"{source}:{line or 1}: not valid TOML: {message}"


class _NotJson(ValueError):
    """A value JSON cannot carry (NaN, Infinity)."""


def _no_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _from_toml(value: Any, at: tuple[str | int, ...], source: str) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise ManifestError(
            f"{source}: {pointer(at) or '/'}: {value} is not a JSON number (JSON has no NaN "
            "or Infinity)"
        )
    if isinstance(value, dict):
        if same_json(value, TOML_NULL):
            return None
        return {k: _from_toml(v, (*at, k), source) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_toml(v, (*at, i), source) for i, v in enumerate(value)]
    if isinstance(value, str | int | float | bool):
        return value
    raise ManifestError(
        f"{source}: {pointer(at) or '/'}: a TOML date or time has no JSON form; quote it"
    )


def _to_toml(value: Any, at: tuple[str | int, ...], changed: list[str]) -> Any:
    if value is None:
        return dict(TOML_NULL)
    if isinstance(value, str) and has_surrogates(value):
        changed.append(pointer(at) or "/")
        return surrogates_escaped(value)
    if isinstance(value, Mapping):
        if same_json(dict(value), TOML_NULL):
            raise ManifestError(
                f"{pointer(at) or '/'}: the object {json.dumps(TOML_NULL)} is how TOML "
                "spells null here; write this manifest as .json"
            )
        return {_key(k, changed, at): _to_toml(v, (*at, k), changed) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_toml(v, (*at, i), changed) for i, v in enumerate(value)]
    return value


def _key(key: str, changed: list[str], at: tuple[str | int, ...]) -> str:
    if has_surrogates(key):
        changed.append(pointer((*at, key)))
        return surrogates_escaped(key)
    return key

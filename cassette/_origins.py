"""Origins and the default host: shared by ``cassette.transport`` and ``RecordOptions``.

Apart so that ``RecordOptions`` (``cassette._record_options``, built on first use) needs
nothing from ``cassette.transport``, which exports both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

__all__ = ["DEFAULT_HOST", "normalize_origin"]

#: Where a front or proxy listens unless told otherwise: this machine only.
DEFAULT_HOST: Final = "127.0.0.1"

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def normalize_origin(text: str) -> str:
    """``text`` as a browser writes it in an ``Origin`` header: ``scheme://host[:port]``,
    lowercase, the scheme's default port left out. A front compares a request's ``Origin``
    with ``allowed_origins`` in this form; ``ValueError`` says why ``text`` is not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in _DEFAULT_PORTS
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise ValueError(
            f"{text!r} is not an origin: give scheme://host[:port], e.g. https://app.example.com"
        )
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = f":{port}" if port is not None and port != _DEFAULT_PORTS[parts.scheme] else ""
    return f"{parts.scheme}://{host}{shown}"


def _origins(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(normalize_origin(value) for value in values))

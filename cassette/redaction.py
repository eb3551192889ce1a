"""Keep secrets out of cassettes: the server command line, for now.

A cassette is meant to be committed, so what it says about its target must not carry the
credentials that were on the command line when it was recorded. This module recognises
the usual shapes (``--token VALUE``, ``--api-key=VALUE``, ``PASSWORD=VALUE``, URL
credentials, and provider token formats) and replaces them with ``[REDACTED]``.

Values under a secret-sounding *option* are secrets; a flag that merely contains a word
like ``token`` inside a longer name (``--max-tokens``) is not, which is why option names
are matched as whole words rather than substrings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["PLACEHOLDER", "redact_argv", "redact_text"]

PLACEHOLDER: Final = "[REDACTED]"

# Words that name secrets (not a secret, whatever a linter thinks).
_SECRET_WORD: Final = (
    r"(?:token|secret|password|passwd|api[-_]?key|auth|authorization|credentials?)"  # noqa: S105
)
# --token, --api-key, --github-token, --client-secret; not --max-tokens or --tokenizer.
_SECRET_OPTION: Final = re.compile(rf"^--?(?:[a-z0-9]+[-_])*{_SECRET_WORD}$", re.IGNORECASE)
# GITHUB_TOKEN=..., API_KEY=..., password=...
_SECRET_ASSIGNMENT: Final = re.compile(
    rf"^((?:[A-Za-z0-9]+[-_])*{_SECRET_WORD})=(.+)$", re.IGNORECASE
)
_TOKEN_SHAPES: Final = re.compile(
    "|".join(
        (
            r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}",
            r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",  # JWT
            r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
            r"github_pat_[A-Za-z0-9_]{20,}",
            r"sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic style
            r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"(?:AKIA|ASIA)[A-Z0-9]{16}",  # AWS access key id
            r"AIza[A-Za-z0-9_-]{35}",  # Google API key
        )
    )
)
# scheme://user:password@host -> scheme://[REDACTED]@host (any scheme)
_URL_CREDENTIALS: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s:]+(?::[^/@\s]*)?@")


def redact_text(text: str) -> str:
    """Replace token-shaped substrings and URL credentials inside free text."""
    text = _URL_CREDENTIALS.sub(rf"\1{PLACEHOLDER}@", text)
    return _TOKEN_SHAPES.sub(PLACEHOLDER, text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to store: secret option values and token shapes removed."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(PLACEHOLDER)
            hide_next = False
            continue
        name, eq, _value = arg.partition("=")
        if eq and _SECRET_OPTION.match(name):
            out.append(f"{name}={PLACEHOLDER}")
            continue
        if _SECRET_OPTION.match(arg):
            out.append(arg)
            hide_next = True
            continue
        assignment = _SECRET_ASSIGNMENT.match(arg)
        if assignment and not arg.startswith("-"):
            out.append(f"{assignment.group(1)}={PLACEHOLDER}")
            continue
        out.append(redact_text(arg))
    return out

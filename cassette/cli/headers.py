"""``--header 'NAME: VALUE'``: headers every command that reaches a live server over HTTP
sends with each request, their values taken from the environment (``${GITHUB_TOKEN}``).

The same templates may come from ``[tool.cassette] headers`` (a table of names to values);
a name given on the command line replaces the project's. Templates are expanded here, once,
from this process's environment (``cassette.core.redaction.headers``): a variable that is not set
is refused before anything is sent or recorded, and no message ever shows a value.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cassette.core.redaction.headers import Expanded
    from cassette.core.redaction.redactor import Redactor
    from cassette.modes.policy import ModeChoice

__all__ = [
    "goes_live",
    "header_options",
    "upstream_headers",
    "with_header_secrets",
]


def header_options(parser: argparse.ArgumentParser, what: str = "the server") -> None:
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        dest="headers",
        help=f"send this header to {what} with every HTTP request (repeatable); VALUE may "
        "name environment variables, expanded when the command runs: 'Authorization: "
        "Bearer ${GITHUB_TOKEN}' (quote it so the shell leaves it alone). Values are never "
        "recorded or printed; the cassette keeps the header names. Also [tool.cassette] "
        "headers",
    )


def upstream_headers(args: argparse.Namespace) -> Expanded | None:
    """The headers ``args.headers`` ask for, after the project's, expanded from this
    process's environment; ``None`` when there are none."""
    from cassette.store.headers import project_headers

    return project_headers(args.headers)


def goes_live(choice: ModeChoice, path: str | os.PathLike[str]) -> bool:
    """Whether a session in mode ``choice`` on cassette ``path`` reaches the live server
    (it records or extends), and so needs the credentials its headers carry."""
    from cassette.modes.policy import Action, plan

    return plan(choice.mode, Path(path).exists()) in (Action.RECORD, Action.EXTEND)


def with_header_secrets(redactor: Redactor | None, expanded: Expanded | None) -> Redactor | None:
    """``redactor``, also redacting the header values wherever an upstream echoes them."""
    if redactor is None or expanded is None:
        return redactor
    from cassette.store.gate import with_values

    return with_values(redactor, expanded.secrets)

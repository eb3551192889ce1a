"""``cassette hook lint|scan FILE...``: the checks of ``.pre-commit-hooks.yaml``, on every
file a hook is handed.

pre-commit passes a hook all its staged files at once; ``lint`` and ``redact --scan``
read one cassette each. This runs the command on each file in turn, through the same
``execute`` as the command line (the same messages, the same exit codes), and exits with
the worst code: 0 when every file passed, else the highest code seen (1 findings, 3 a
cassette that does not read), so one broken file fails the commit and every file is
still reported.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

__all__ = ["add_parsers"]

#: Each check and the command line it runs on one file.
_CHECKS: Final = {"lint": ("lint",), "scan": ("redact", "--scan")}


def add_parsers(sub: Any, only: str | None = None) -> None:
    """Register ``hook``."""
    hook = sub.add_parser(
        "hook",
        help="run lint or redact --scan on each of many cassettes (for pre-commit)",
        description="Run `cassette lint FILE` (lint) or `cassette redact --scan FILE` (scan) "
        "on each FILE; exit with the worst exit code. The entry of the pre-commit hooks: "
        "see docs/sharing.md.",
    )
    hook.add_argument("check", choices=sorted(_CHECKS), help="the check to run")
    hook.add_argument("files", nargs="*", metavar="FILE", help="the cassettes to check")
    hook.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from cassette.cli.main import execute, parse

    worst = 0
    for file in args.files:
        worst = max(worst, execute(parse([*_CHECKS[args.check], file])))
    return worst

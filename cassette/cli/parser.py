"""The command line's argument parser: its help layout, and its one-line usage errors."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, NoReturn

from cassette.cli.exits import EXIT_USAGE

if TYPE_CHECKING:
    from cassette.cli.layout import Layout

__all__ = ["TAKES_COMMAND", "Parser"]

#: Commands that take a server command after ``--``.
TAKES_COMMAND: Final = frozenset({"replay", "check", "record", "verify", "variant"})


class _Formatter(argparse.HelpFormatter):
    """Paragraphs wrapped to the terminal, as argparse does; lines indented by two spaces
    (the examples) kept as written, so a command reads as one."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        # argparse makes a formatter for every option it is given and asks ``shutil`` for
        # the terminal's width each time; importing ``shutil`` (and with it ``bz2``,
        # ``lzma``, ``zlib``) is paid by every replay, which never prints its help.
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if lines and all(line.startswith("  ") for line in lines[1:]):
                head, rest = lines[0], lines[1:]
                out.append("\n".join([super()._fill_text(head, width, indent), *rest]))
            else:
                out.append(super()._fill_text(block, width, indent))
        return "\n\n".join(out)

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):  # the commands, without a
            return "".join(  # "COMMAND" line above them
                self._format_action(sub) for sub in action._get_subactions()
            )
        return super()._format_action(action)


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it: ``COLUMNS``, else
    stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """argparse, with our usage exit code and one-line error (docs/cli.md): no usage
    block first; a subcommand's own error names the subcommand, a mistyped choice gets
    the one most likely meant, and no option may be abbreviated."""

    #: the top-level parser's commands, by name (``cassette.cli.main.parser`` sets it)
    commands: Mapping[str, argparse.ArgumentParser]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        # No silent prefixes: ``--htm`` is not ``--html``. A prefix that argparse takes
        # today is a different option once one is added that starts the same way, so an
        # abbreviation is answered with the option it most likely means, as a typo is.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.commands = {}
        #: the help's layout, or what makes it (a replay's parser never builds it)
        self.layout: Layout | Callable[[], Layout] | None = None

    def format_help(self) -> str:
        if self.layout is not None:  # arranged only when shown (cassette.cli.layout)
            from cassette.cli.layout import apply_layout

            layout, self.layout = self.layout, None
            apply_layout(self, layout() if callable(layout) else layout)
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        if "invalid choice" in message:
            from cassette.cli.suggest import invalid_choice

            message = invalid_choice(message)
        command = self.prog.removeprefix("cassette").strip()
        if command and not message.startswith(f"{command}:"):
            message = f"{command}: {message}; see cassette {command} --help"
        self.exit(EXIT_USAGE, f"cassette: error: {message}\n")

"""The client configuration a serving command (``replay``, ``mock``) prints on stderr,
ready to paste: the ``mcpServers`` block with absolute paths and, for a server started by
command, the ``claude mcp add`` and ``gemini mcp add`` lines that register the same.

Everything here goes to stderr: in stdio modes stdout belongs to the protocol.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cassette.cli.output import err

__all__ = ["add_commands", "client_config", "print_config", "server_name", "serving_on"]


def server_name(tape: Path) -> str:
    """The name a configuration gives the server of ``tape``: its file name's stem, each
    run of other characters than letters, digits, ``-`` and ``_`` made one ``-`` (Claude
    Code refuses any other name), else ``cassette``."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]+", "-", tape.stem).strip("-") or "cassette"


def client_config(tape: Path, command: str = "replay", extra: Sequence[str] = ()) -> dict[str, Any]:
    """The ``mcpServers`` block that runs ``cassette COMMAND TAPE`` (replay, mock) with the
    options ``extra`` that change its behaviour: pasted, it serves exactly this."""
    return {
        "mcpServers": {
            server_name(tape): {
                "command": sys.executable,
                "args": ["-m", "cassette", command, str(tape), *extra],
            }
        }
    }


def print_config(config: dict[str, Any]) -> None:
    """A ready-to-paste client configuration, on stderr; for a server started by command
    (stdio), also the one command that adds it to Claude Code and to Gemini CLI."""
    text = "client configuration:\n" + json.dumps(config, indent=2) + "\n"
    added = add_commands(config)
    if added:
        text += "or add it with one command:\n" + "\n".join(added) + "\n"
    sys.stderr.write(text)
    sys.stderr.flush()


def add_commands(config: Mapping[str, Any]) -> list[str]:
    """``claude mcp add NAME -- COMMAND...`` and ``gemini mcp add NAME COMMAND...`` for the
    stdio server of an ``mcpServers`` block (none for a URL): the syntax of Claude Code
    2.1.328's and Gemini CLI 0.61.0's ``mcp add --help``, quoted for this system's shell.
    Claude Code takes the command after ``--``; Gemini CLI takes no ``--`` there, and
    passes on every argument that is not one of its own options (none of a replay's is)."""
    servers = config.get("mcpServers")
    if not isinstance(servers, Mapping) or len(servers) != 1:
        return []
    ((name, entry),) = servers.items()
    if not isinstance(entry, Mapping) or "command" not in entry:
        return []
    argv = [str(entry["command"]), *map(str, entry.get("args", ()))]
    return [
        f"claude mcp add {_shell([name])} -- {_shell(argv)}",
        f"gemini mcp add {_shell([name])} {_shell(argv)}",
    ]


def _shell(argv: Sequence[str]) -> str:
    """``argv`` as one command line a person pastes into this system's shell."""
    if sys.platform == "win32":  # cmd and PowerShell read the C runtime's quoting
        from subprocess import list2cmdline

        return list2cmdline(argv)
    import shlex

    return shlex.join(argv)


def serving_on(path: Path, *, quiet: bool) -> Callable[[str], None]:
    """A front's ``on_ready`` for serving ``path`` (replay, mock): the URL and, unless
    ``quiet``, the client configuration that names it."""

    def ready(url: str) -> None:
        err(f"serving on {url}")
        if not quiet:
            name = server_name(path)
            print_config({"mcpServers": {name: {"url": url}}})

    return ready

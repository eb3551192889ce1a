"""What every command of the command line shares: exit codes, the one-line error, option
groups, limits, signals, and the client configuration a serving command prints.

Everything for people goes to stderr: in stdio modes stdout belongs to the protocol.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn

from cassette.errors import PluginError, TransportError, UsageError

__all__ = [
    "EXIT_CASSETTE",
    "EXIT_INTERNAL",
    "EXIT_MISSES",
    "EXIT_TRANSPORT",
    "EXIT_USAGE",
    "FRONT_ALIASES",
    "Parser",
    "allowed_origins",
    "apply_limits",
    "client_config",
    "err",
    "exit_code",
    "front_name",
    "limit_options",
    "listen_options",
    "origin_options",
    "print_config",
    "run_async",
    "serving_on",
]

EXIT_MISSES: Final = 1
EXIT_USAGE: Final = 2
EXIT_CASSETTE: Final = 3
EXIT_TRANSPORT: Final = 4
EXIT_INTERNAL: Final = 70

#: Short names a person may give for a transport.
FRONT_ALIASES: Final = {"http": "streamable-http"}


class Parser(argparse.ArgumentParser):
    """argparse, with our usage exit code and one-line error."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"cassette: error: {message}\n")


def err(text: str) -> None:
    """One line for a person, on stderr, prefixed ``cassette:``."""
    sys.stderr.write(f"cassette: {text}\n")
    sys.stderr.flush()


def front_name(name: str | None, default: str) -> str:
    """A transport's registered name, from what a person typed (``http`` included)."""
    chosen = name or default
    return FRONT_ALIASES.get(chosen, chosen)


def exit_code(exc: BaseException) -> int:
    """The documented exit code of an anticipated error (a ``CassetteError``)."""
    if isinstance(exc, UsageError | PluginError):
        return EXIT_USAGE
    if isinstance(exc, TransportError):
        return EXIT_TRANSPORT
    return EXIT_CASSETTE


def run_async(func: Callable[[], Awaitable[int]], outcome: list[int] | None = None) -> int:
    """Run ``func`` under anyio, turning SIGINT/SIGTERM into a clean, coded exit.

    A network front runs until it is stopped, so for it a signal is the normal end: it
    puts its own exit code in ``outcome`` (from a ``finally``), and that code wins.
    """
    import anyio

    caught: list[int] = []

    async def guarded() -> int:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                if sys.platform == "win32":  # no signal receiver there; Ctrl-C still works
                    return
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        caught.append(int(signum))
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            code = await func()
            tg.cancel_scope.cancel()
        if caught:
            return outcome[0] if outcome else 128 + caught[0]
        return code

    try:
        return anyio.run(guarded)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


def _size(text: str) -> int:
    from cassette.core.limits import parse_size

    try:
        return parse_size(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def limit_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--max-message-bytes`` and ``--max-depth``."""
    parser.add_argument(
        "--max-message-bytes",
        type=_size,
        metavar="SIZE",
        help=f"largest {what}: bytes, or with KB, MB, GB, KiB, MiB, GiB "
        "(default 64MiB, or max-message-bytes in [tool.cassette])",
    )
    parser.add_argument(
        "--max-depth",
        type=int,
        metavar="N",
        help="JSON nested deeper than N arrays and objects is refused, in messages and "
        "cassettes (default 256, or max-depth in [tool.cassette])",
    )


def apply_limits(args: argparse.Namespace) -> int:
    """Set the process's depth limit; return the size limit (the option, else the
    project's ``[tool.cassette]``, else the default)."""
    from cassette.core.limits import DEFAULT_MAX_BYTES, set_max_depth
    from cassette.store.config import limits_for, load_settings

    if args.max_depth is not None and args.max_depth < 1:
        raise UsageError(f"--max-depth must be at least 1, not {args.max_depth}")
    size, depth = limits_for(
        load_settings(), max_message_bytes=args.max_message_bytes, max_depth=args.max_depth
    )
    if depth is not None:
        set_max_depth(depth)
    return DEFAULT_MAX_BYTES if size is None else size


def listen_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--host`` and ``--port``."""
    parser.add_argument(
        "--host", default="127.0.0.1", help=f"address {what} listens on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help=f"port {what} listens on (default 0: a free one)"
    )


def origin_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--allow-origin`` (repeatable): web pages from elsewhere that may reach ``what``."""
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help=f"also let web pages from ORIGIN (scheme://host[:port]) reach {what}, with "
        "CORS; pages on this machine always may, any other gets 403 (repeatable)",
    )


def allowed_origins(values: Sequence[str], *, served: bool) -> tuple[str, ...]:
    """``--allow-origin`` values as the fronts compare them, checked once: each must be an
    origin, and there must be an HTTP front (``served``) for them to mean anything."""
    from cassette.transport import normalize_origin

    if values and not served:
        raise UsageError("--allow-origin is for a network front or proxy, not for stdio")
    try:
        return tuple(dict.fromkeys(normalize_origin(value) for value in values))
    except ValueError as exc:
        raise UsageError(f"--allow-origin: {exc}") from None


def client_config(tape: Path, command: str = "replay") -> dict[str, Any]:
    """The ``mcpServers`` block that runs ``cassette COMMAND TAPE`` (replay, mock)."""
    return {
        "mcpServers": {
            tape.stem.replace(".", "-") or "cassette": {
                "command": sys.executable,
                "args": ["-m", "cassette", command, str(tape)],
            }
        }
    }


def print_config(config: dict[str, Any]) -> None:
    """A ready-to-paste client configuration, on stderr."""
    sys.stderr.write("client configuration:\n" + json.dumps(config, indent=2) + "\n")
    sys.stderr.flush()


def serving_on(path: Path, *, quiet: bool) -> Callable[[str], None]:
    """A front's ``on_ready`` for serving ``path`` (replay, mock): the URL and, unless
    ``quiet``, the client configuration that names it."""

    def ready(url: str) -> None:
        err(f"serving on {url}")
        if not quiet:
            name = path.stem.replace(".", "-") or "cassette"
            print_config({"mcpServers": {name: {"url": url}}})

    return ready

"""What every command of the command line shares: exit codes, the one-line error, option
groups, limits and signals (the client configuration a serving command prints is
``cassette.cli.configs``'s).

Everything for people goes to stderr: in stdio modes stdout belongs to the protocol.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from cassette.errors import PluginError, TransportError, UsageError
from cassette.registry import ALIASES

if TYPE_CHECKING:
    from cassette.cli.layout import Layout
    from cassette.core.words.volatile import Ignores
    from cassette.runtime.record import RecordResult

__all__ = [
    "EXIT_CASSETTE",
    "EXIT_INTERNAL",
    "EXIT_MISSES",
    "EXIT_SERVER",
    "EXIT_TRANSPORT",
    "EXIT_USAGE",
    "FRONT_ALIASES",
    "REDACTION_DESTS",
    "TAKES_COMMAND",
    "Parser",
    "allow_repeats",
    "allowed_origins",
    "apply_limits",
    "err",
    "exit_code",
    "factor",
    "fault_options",
    "fault_policy",
    "folder",
    "front_name",
    "ignore_options",
    "ignore_params",
    "keep_volatile",
    "limit_options",
    "listen_options",
    "listening_given",
    "origin_options",
    "port_number",
    "positive_count",
    "recording_exit",
    "redaction_options",
    "regular_expression",
    "repeat_options",
    "run_async",
    "seconds",
    "startup_over",
    "volatile_options",
]

EXIT_MISSES: Final = 1
EXIT_USAGE: Final = 2
EXIT_CASSETTE: Final = 3
EXIT_TRANSPORT: Final = 4
EXIT_SERVER: Final = 5
EXIT_INTERNAL: Final = 70

#: Commands that take a server command after ``--``.
TAKES_COMMAND: Final = frozenset({"replay", "check", "record", "verify", "variant"})

#: Short names a person may give for a transport (the registry's one table).
FRONT_ALIASES: Final = ALIASES


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


#: the environment variable naming a file ``record`` and ``replay`` also log to
LOG_ENV: Final = "CASSETTE_LOG"
#: where every line ``err`` prints is also appended (``log_to``)
_LOG: list[Any] = []


def err(text: str) -> None:
    """One line for a person, on stderr, prefixed ``cassette:``; recorded text in it (a
    miss quotes what was recorded) is shown, never obeyed (``cassette.core.words.text``). The
    same line goes to the log file, if one was asked for (``log_to``): clients that start
    a server hide its stderr, so a miss or a warning would otherwise be seen by nobody."""
    from cassette.core.words.text import printable

    line = f"cassette: {printable(text, lines=True)}\n"
    marked = text.startswith(_PAINTED) or _UNANSWERED in text
    sys.stderr.write(_painted(line) if marked else line)
    sys.stderr.flush()
    for log in _LOG:
        with contextlib.suppress(OSError):  # a full disk must not end a replay
            log.write(line)
            log.flush()


#: the words that open a line ``err`` paints on a terminal, and the head of the miss
#: summary at the end of a replay (``cassette.core.replay.replay_parts``)
_PAINTED: Final = ("miss:", "error:", "warning:")
_UNANSWERED: Final = "had no recording:"


def _painted(line: str) -> str:
    """``line`` (printable already) with its opening word coloured, when stderr takes
    colour (``cassette.core.words.colour``: a terminal, ``NO_COLOR`` unset): a miss or an error
    red, a warning yellow. The log file gets the plain line."""
    from cassette.core.words.colour import Rule, on, painted

    if not on(sys.stderr, os.environ):
        return line
    rules = (
        Rule.of(r"^cassette: (miss:|error:|\d+ request\(s\) had no recording:)", "red"),
        Rule.of(r"^cassette: (warning:)", "yellow"),
    )
    return painted(line, rules)


def log_to(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Append every line ``err`` prints to the file ``--log`` names, else the one
    ``CASSETTE_LOG`` names; the path logged to (``None``: none). The lines are the very
    ones printed on stderr, so what a miss shows there (redacted) is all the file gets."""
    import os

    path = option or (os.environ if environ is None else environ).get(LOG_ENV) or None
    if path is None:
        return None
    from cassette.store.files import open_log

    handle = open_log(path)
    _LOG[:] = [handle]
    return path


def log_option(parser: Any) -> None:
    """``--log FILE``, as ``record`` and ``replay`` take it."""
    parser.add_argument(
        "--log",
        metavar="FILE",
        default=None,
        help=f"also append every line this command prints for people (banner, warnings, "
        f"misses, summary) to FILE; for clients that hide a server's stderr (default: "
        f"${LOG_ENV})",
    )


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


_paused = [False]  # the entry point paused the collector, and it has not resumed yet


def paused_at_entry() -> None:
    """The entry point turned the cyclic collector off for start-up
    (``cassette.cli.process`` says why); ``startup_over`` turns it back on."""
    _paused[0] = True


def startup_over() -> None:
    """What the process serves is in memory: collect cycles again, but never through what
    start-up made (frozen). Does nothing unless the entry point paused the collector, so a
    command run in-process leaves its caller's collector alone."""
    if _paused[0]:
        _paused[0] = False
        gc.freeze()
        gc.enable()


def run_async(
    func: Callable[[], Awaitable[int]], on_signal: Callable[[], int | None] | None = None
) -> int:
    """Run ``func`` under anyio and return its exit code, turning SIGINT/SIGTERM into a
    clean, coded exit.

    A network front runs until it is stopped, so for it a signal is the normal end:
    ``on_signal`` then says the code it exits with (by what it served); without it, or
    when it says ``None``, a signal's exit is 128 plus its number.
    """
    import anyio

    caught: list[int] = []

    async def guarded() -> int:
        startup_over()  # the event loop is up; loading and preparing pause it themselves
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
            chosen = on_signal() if on_signal is not None else None
            return chosen if chosen is not None else 128 + caught[0]
        return code

    try:
        return anyio.run(guarded)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


def recording_exit(result: RecordResult | None, *, told: bool = False) -> int:
    """``record``'s exit code once the recording has its name, and the line that explains
    one that is not 0: no request succeeded (4, and why: the server's exit code and last
    stderr, where the session is kept), or the server exited by itself with an error
    (5; its own code is named, never passed on, so it cannot pass for one of ours).
    ``told``: the failure was said already (a record mode says it as it happens)."""
    if result is None:
        return 0
    if not result.succeeded:
        if not told:
            err(f"error: {result.failure()}")
        return EXIT_TRANSPORT
    code = result.exit_code
    if isinstance(code, int) and code > 0:
        err(f"the recorded server exited with code {code}; the recording is in {result.path}")
        return EXIT_SERVER
    return 0


def _size(text: str) -> int:
    from cassette.core.wire.limits import parse_size

    try:
        return parse_size(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- option values checked as they are parsed: a bad one is a usage error (exit 2) before
# the banner, never a traceback once the server runs.


def port_number(text: str) -> int:
    """``--port``: 0 (a free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0: a free one)")
    return port


def positive_count(text: str) -> int:
    """A count option (``--max-sessions``): a whole number of 1 or more."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number}: must be 1 or more")
    return number


def _finite(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if number - number != 0.0:  # NaN or an infinity
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return number


def seconds(text: str) -> float:
    """A duration option: a finite number of seconds above 0."""
    number = _finite(text)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} seconds: must be more than 0")
    return number


def factor(text: str) -> float:
    """A scale (``--pace-scale``) or a cap in seconds (``--pace-cap``): a finite number
    (the replay command refuses a negative one, naming the option)."""
    return _finite(text)


def regular_expression(text: str) -> str:
    """``--redact-pattern``: a regular expression Python compiles, and not a value written
    as one (``cassette.core.redaction.literal_patterns``). Neither refusal shows what was given: it
    may be a secret pasted in the wrong place."""
    from cassette.store.gate import pattern_problem

    problem = pattern_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def folder(text: str) -> str:
    """``--sessions``: a folder, or a path where one can be made (not a file)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is not a folder")
    return text


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
    """Set the process's size and depth limits (the options, else the project's
    ``[tool.cassette]``, else the defaults) and return the size limit. Every command calls
    it, so every reader of the run (cassettes and manifests too) agrees on them; a command
    without the options takes the project's."""
    from cassette.core.wire.limits import DEFAULT_MAX_BYTES, set_max_depth, set_max_message_bytes
    from cassette.store.config import limits_for, load_settings

    wanted_size = getattr(args, "max_message_bytes", None)
    wanted_depth = getattr(args, "max_depth", None)
    if wanted_depth is not None and wanted_depth < 1:
        raise UsageError(f"--max-depth must be at least 1, not {wanted_depth}")
    size, depth = limits_for(load_settings(), max_message_bytes=wanted_size, max_depth=wanted_depth)
    if depth is not None:
        set_max_depth(depth)
    chosen = DEFAULT_MAX_BYTES if size is None else size
    set_max_message_bytes(chosen)
    return chosen


def repeat_options(parser: argparse.ArgumentParser) -> None:
    """``--allow-repeats``: a used-up request gets its last answer again."""
    parser.add_argument(
        "--allow-repeats",
        action="store_true",
        default=None,
        help="answer a request whose recordings are all played with its last answer "
        "again, for any method (a retry, a tool called twice but recorded once), counted "
        "in the end-of-run line; also allow-repeats = true in [tool.cassette]",
    )


def allow_repeats(args: argparse.Namespace) -> bool:
    """``--allow-repeats``, else the project's ``allow-repeats`` (a boolean)."""
    if args.allow_repeats:
        return True
    from cassette.store.config import load_settings, setting_error

    value = load_settings().get("allow-repeats", False)
    if not isinstance(value, bool):
        raise setting_error(None, "tool.cassette", "allow-repeats", "must be true or false")
    return value


def volatile_options(parser: argparse.ArgumentParser) -> None:
    """``--keep-volatile``: a re-recording keeps answers that changed only in volatile values."""
    parser.add_argument(
        "--keep-volatile",
        action="store_true",
        default=None,
        help="recording again (--overwrite, --mode all), keep an answer's old line when the "
        "new one differs only in values verify treats as volatile (timestamps and UUIDs in "
        "text, _meta, cache hints) or [tool.cassette.verify] ignores; also keep-volatile = "
        "true in [tool.cassette]",
    )


def keep_volatile(args: argparse.Namespace) -> Ignores | None:
    """What a re-recording leaves out when it compares answers (``--keep-volatile``, else
    the project's ``keep-volatile``): the project's ``[tool.cassette.verify]`` ignores
    beside verify's own volatile rules; ``None`` when neither asks."""
    from cassette.store.config import load_settings, setting_error

    settings = load_settings()
    wanted = args.keep_volatile
    if not wanted:
        wanted = settings.get("keep-volatile", False)
        if not isinstance(wanted, bool):
            raise setting_error(None, "tool.cassette", "keep-volatile", "must be true or false")
    if not wanted:
        return None
    from cassette.client.snapshots import project_ignores

    return project_ignores(settings)


def ignore_options(parser: argparse.ArgumentParser) -> None:
    """``--ignore-param POINTER`` (repeatable): params a replay never matches on."""
    parser.add_argument(
        "--ignore-param",
        action="append",
        default=[],
        metavar="POINTER",
        help="never match on the request's value at this JSON Pointer, e.g. "
        "/params/arguments/timestamp (repeatable; with [tool.cassette] ignore-params)",
    )


def ignore_params(args: argparse.Namespace) -> tuple[str, ...]:
    """The project's ``ignore-params`` and the command line's, each checked."""
    from cassette.core.replay.matching import check_ignore_pointer
    from cassette.store.config import ignore_params_for, load_settings

    pointers = ignore_params_for(load_settings(), args.ignore_param)
    for pointer in pointers:
        check_ignore_pointer(pointer)
    return pointers


def fault_options(parser: argparse.ArgumentParser) -> None:
    """``--faults FILE``: a fault plan laid over what answers (docs/faults.md)."""
    parser.add_argument(
        "--faults",
        metavar="FILE",
        help="inject the faults FILE (TOML or JSON) plans: delays, timeouts, errors, "
        "malformed frames, disconnects, exits; the cassette is not changed (docs/faults.md)",
    )


def fault_policy(policy: Any, path: str | None) -> Any:
    """``policy`` (a ``DeliveryPolicy``) with the plan in ``path``, each injected fault told
    on stderr; unchanged without one."""
    if path is None:
        return policy
    import attrs

    from cassette.store.faults import load_fault_plan

    plan = load_fault_plan(path)
    return attrs.evolve(policy, faults=plan, on_fault=lambda text: err(f"fault: {text}"))


def listen_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--host`` and ``--port``."""
    parser.add_argument(
        "--host", default="127.0.0.1", help=f"address {what} listens on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=0,
        help=f"port {what} listens on (default 0: a free one)",
    )


def listening_given(args: argparse.Namespace) -> str | None:
    """The listening option given (``--host``, ``--port``), if any: a command that will
    listen on nothing refuses it rather than ignore it (``--allow-origin`` is checked by
    ``allowed_origins``)."""
    if args.port != 0:
        return f"--port {args.port}"
    if args.host != "127.0.0.1":
        return f"--host {args.host}"
    return None


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


#: The ``dest`` of each option ``redaction_options`` adds, as a command's help groups them.
REDACTION_DESTS: Final = ("no_redact", "redact_pattern", "redact_path", "redact_env", "redact_pii")


def redaction_options(parser: Any) -> None:
    """``--no-redact`` and the ``--redact-*`` rules, for every command that writes what a
    live server said (``record``, ``variant``)."""
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="write secrets as they are (warned about); redaction is on by default",
    )
    parser.add_argument(
        "--redact-pattern",
        type=regular_expression,
        action="append",
        default=[],
        metavar="REGEX",
        help="also redact what this regular expression matches (repeatable)",
    )
    parser.add_argument(
        "--redact-path",
        action="append",
        default=[],
        metavar="POINTER",
        help="also redact the value at this JSON Pointer in every message (repeatable)",
    )
    parser.add_argument(
        "--redact-env",
        action="append",
        default=[],
        metavar="NAME",
        help="also redact the value of this environment variable wherever it appears",
    )
    parser.add_argument(
        "--redact-pii",
        action="store_true",
        help="also redact e-mail addresses and phone numbers, with placeholders of the same "
        "shape (redacted-1@example.invalid, +15550100001); also: pii = true in "
        "[tool.cassette.redact]",
    )

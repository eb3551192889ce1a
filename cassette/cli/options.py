"""The option groups commands share (limits, repeats, volatile values, ignored params,
faults, listening, origins, redaction) and what each turns into."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from cassette.cli.output import err
from cassette.cli.values import byte_size, port_number, regular_expression
from cassette.errors import UsageError
from cassette.registry import ALIASES

if TYPE_CHECKING:
    from cassette.core.words.volatile import Ignores

__all__ = [
    "FRONT_ALIASES",
    "REDACTION_DESTS",
    "allow_repeats",
    "allowed_origins",
    "apply_limits",
    "fault_options",
    "fault_policy",
    "front_name",
    "ignore_options",
    "ignore_params",
    "keep_volatile",
    "limit_options",
    "listen_options",
    "listening_given",
    "origin_options",
    "redaction_options",
    "repeat_options",
    "volatile_options",
]

#: Short names a person may give for a transport (the registry's one table).
FRONT_ALIASES: Final = ALIASES


def front_name(name: str | None, default: str) -> str:
    """A transport's registered name, from what a person typed (``http`` included)."""
    chosen = name or default
    return FRONT_ALIASES.get(chosen, chosen)


def limit_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--max-message-bytes`` and ``--max-depth``."""
    parser.add_argument(
        "--max-message-bytes",
        type=byte_size,
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

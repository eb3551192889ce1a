"""``cassette mock MANIFEST``: serve a manifest as an MCP server; ``--validate``: check it.

Served over stdio, stdout is the protocol: the banner, warnings and misses go to stderr.
The session ends when the client leaves (stdio) or on Ctrl-C / SIGTERM (a network front);
the exit code is then 1 if any request had no answer in the manifest, else 0.
``--validate`` (``cassette.tools.mock``) prints its report on stdout and exits 1 when the
manifest has errors (warnings alone: 0). A manifest that cannot be read, or that has
errors when served, exits 3.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassette.cli.configs import client_config, print_config, serving_on
from cassette.cli.exits import EXIT_MISSES
from cassette.cli.options import allowed_origins, apply_limits, listening_given
from cassette.cli.output import err
from cassette.cli.running import run_async
from cassette.errors import UsageError

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    from cassette.mock.manifest import load_manifest

    manifest = load_manifest(args.manifest)
    if args.validate:
        from cassette.tools.mock import validate

        return validate(args.manifest, manifest, args.format)
    return _serve(args, manifest)


def _behaviour(args: argparse.Namespace) -> list[str]:
    """The options given that change what the mock does, for its client configuration."""
    out: list[str] = []
    if args.faults is not None:
        out += ["--faults", str(Path(args.faults).resolve())]
    if args.max_message_bytes is not None:
        out += ["--max-message-bytes", str(args.max_message_bytes)]
    if args.max_depth is not None:
        out += ["--max-depth", str(args.max_depth)]
    return out


def _serve(args: argparse.Namespace, manifest: dict[str, object]) -> int:
    from cassette.core.wire.limits import DEFAULT_MAX_BYTES
    from cassette.mock.serve import MockOptions, check_front, serve_mock
    from cassette.mock.server import MockServer
    from cassette.runtime.conversation import DeliveryPolicy, ReplayResult
    from cassette.tools.distill import counts
    from cassette.transport import ServeOptions

    max_message_bytes = apply_limits(args)
    plan = None
    if args.faults is not None:
        from cassette.store.faults import load_fault_plan

        plan = load_fault_plan(args.faults)
    check_front(args.front)  # before the banner: a front it cannot serve is a usage error
    origins = allowed_origins(args.allow_origin, served=args.front != "stdio")
    given = listening_given(args) if args.front == "stdio" else None
    if given:
        raise UsageError(f"{given}: the stdio front listens on nothing (try --front http)")
    server = MockServer(manifest, source=args.manifest)
    for warning in server.warnings:
        err(f"warning: {args.manifest}#{warning.pointer}: {warning.message}")
    path = Path(args.manifest).resolve()
    if not args.quiet:
        found = counts(manifest)
        err(
            f"mocking {path} ({found['tools']} tools, {found['resources']} resources, "
            f"{found['resourceTemplates']} resource templates, {found['prompts']} prompts; "
            f"serving on {args.front})"
        )
        if args.front == "stdio":
            print_config(client_config(path, "mock", _behaviour(args)))
    code: int | None = None

    def finished(result: ReplayResult) -> None:
        nonlocal code
        if result.summary:
            err(result.summary)
        code = EXIT_MISSES if result.misses else 0

    options = MockOptions(
        front=args.front,
        listen=ServeOptions(
            host=args.host,
            port=args.port,
            on_ready=serving_on(path, quiet=args.quiet),
            allowed_origins=origins,
        ),
        policy=DeliveryPolicy(
            on_miss=lambda text: err(f"miss: {text}"),
            max_message_bytes=max_message_bytes or DEFAULT_MAX_BYTES,
            faults=plan,
            on_fault=lambda text: err(f"fault: {text}"),
        ),
        on_finish=finished,
    )

    async def go() -> int:
        await serve_mock(server, options)
        return code or 0

    return run_async(go, on_signal=lambda: code)

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

from cassette.cli.common import (
    EXIT_MISSES,
    allowed_origins,
    apply_limits,
    client_config,
    err,
    print_config,
    run_async,
    serving_on,
)

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    from cassette.mock.manifest import load_manifest

    manifest = load_manifest(args.manifest)
    if args.validate:
        from cassette.tools.mock import validate

        return validate(args.manifest, manifest, args.format)
    return _serve(args, manifest)


def _serve(args: argparse.Namespace, manifest: dict[str, object]) -> int:
    from cassette.mock.serve import check_front, serve_mock
    from cassette.mock.server import MockServer
    from cassette.runtime.conversation import ReplayResult
    from cassette.tools.distill import counts

    max_message_bytes = apply_limits(args)
    check_front(args.front)  # before the banner: a front it cannot serve is a usage error
    origins = allowed_origins(args.allow_origin, served=args.front != "stdio")
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
            print_config(client_config(path, "mock"))
    outcome: list[int] = []

    def finished(result: ReplayResult) -> None:
        if result.summary:
            err(result.summary)
        outcome[:] = [EXIT_MISSES if result.misses else 0]

    async def go() -> int:
        await serve_mock(
            server,
            front=args.front,
            host=args.host,
            port=args.port,
            on_ready=serving_on(path, quiet=args.quiet),
            on_miss=lambda text: err(f"miss: {text}"),
            on_finish=finished,
            max_message_bytes=max_message_bytes,
            allowed_origins=origins,
        )
        return outcome[0] if outcome else 0

    return run_async(go, outcome)

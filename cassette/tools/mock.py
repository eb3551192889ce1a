"""``cassette mock MANIFEST``: serve a manifest as an MCP server; ``--validate``: check it.

Served over stdio, stdout is the protocol: the banner, warnings and misses go to stderr.
The session ends when the client leaves (stdio) or on Ctrl-C / SIGTERM (HTTP); the exit
code is then 1 if any request had no answer in the manifest, else 0. ``--validate`` prints
its report on stdout and exits 1 when the manifest has errors (warnings alone: 0). A
manifest that cannot be read, or that has errors when served, exits 3.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cassette.mock.manifest import load_manifest
from cassette.mock.validate import ManifestFinding, validate_manifest
from cassette.tools._common import emit

__all__ = ["main", "render"]


def render(source: str, findings: list[ManifestFinding], fmt: str) -> str:
    """The ``--validate`` report: one line per finding, each at its JSON Pointer."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if fmt == "json":
        data = {
            "manifest": source,
            "valid": errors == 0,
            "errors": errors,
            "warnings": warnings,
            "findings": [f.as_data() for f in findings],
        }
        return json.dumps(data, indent=2)
    lines = [f"{source}#{f.pointer}: {f.severity}: [{f.code}] {f.message}" for f in findings]
    if errors:
        lines.append(f"{source}: {len(findings)} finding(s) ({errors} errors, {warnings} warnings)")
    else:
        lines.append(
            f"{source}: manifest is valid" + (f" ({warnings} warnings)" if warnings else "")
        )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    manifest = load_manifest(args.manifest)
    if args.validate:
        findings = validate_manifest(manifest)
        emit(render(args.manifest, findings, args.format))
        return 1 if any(f.severity == "error" for f in findings) else 0
    return _serve(args, manifest)


def _serve(args: argparse.Namespace, manifest: dict[str, Any]) -> int:
    from cassette.cli import (
        EXIT_MISSES,
        _apply_limits,
        _client_config,
        _err,
        _print_config,
        _run_async,
        _serving_on,
    )
    from cassette.mock.serve import check_front, serve_mock
    from cassette.mock.server import MockServer
    from cassette.runtime.session import ReplayResult
    from cassette.tools.distill import counts

    max_message_bytes = _apply_limits(args)
    check_front(args.front)  # before the banner: a front it cannot serve is a usage error
    server = MockServer(manifest, source=args.manifest)
    for warning in server.warnings:
        _err(f"warning: {args.manifest}#{warning.pointer}: {warning.message}")
    path = Path(args.manifest).resolve()
    if not args.quiet:
        found = counts(manifest)
        _err(
            f"mocking {path} ({found['tools']} tools, {found['resources']} resources, "
            f"{found['resourceTemplates']} resource templates, {found['prompts']} prompts; "
            f"serving on {args.front})"
        )
        if args.front == "stdio":
            _print_config(_client_config(path, "mock"))
    outcome: list[int] = []

    def finished(result: ReplayResult) -> None:
        if result.summary:
            _err(result.summary)
        outcome[:] = [EXIT_MISSES if result.misses else 0]

    async def go() -> int:
        await serve_mock(
            server,
            front=args.front,
            host=args.host,
            port=args.port,
            on_ready=_serving_on(path, quiet=args.quiet),
            on_miss=lambda text: _err(f"miss: {text}"),
            on_finish=finished,
            max_message_bytes=max_message_bytes,
        )
        return outcome[0] if outcome else 0

    return _run_async(go, outcome)

"""``cassette mock --validate MANIFEST``: check a manifest and report what is wrong.

The report goes to stdout, one line per finding at its JSON Pointer (or JSON with
``--format json``); exit 1 when the manifest has errors (warnings alone: 0). Serving a
manifest is ``cassette.cli.mock`` (the command) over ``cassette.mock.serve_mock``.
"""

from __future__ import annotations

import json
from typing import Any

from cassette.mock.validate import ManifestFinding, validate_manifest
from cassette.tools._common import emit

__all__ = ["render", "validate"]


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


def validate(source: str, manifest: dict[str, Any], fmt: str) -> int:
    """Print the ``--validate`` report of ``manifest``; the exit code."""
    findings = validate_manifest(manifest)
    emit(render(source, findings, fmt))
    return 1 if any(f.severity == "error" for f in findings) else 0

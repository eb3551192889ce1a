"""Mock servers from manifests: what ``cassette distill --as-mock`` writes and
``cassette mock`` serves.

A manifest is an editable JSON or TOML file listing a server's tools (with the recorded
answer to each distinct call), resources, resource templates and prompts; docs/mock.md
describes it. The pieces, each usable on its own:

* ``load_manifest(path)`` / ``write_manifest(manifest, path)``: the file, JSON or TOML by
  its suffix (``cassette.mock.manifest``);
* ``validate_manifest(manifest)``: findings, each at a JSON Pointer (``cassette.mock.validate``);
* ``MockServer(manifest)``: the sans-IO server; ``answer(message)`` gives the reply to a
  JSON-RPC message, in-process (``cassette.mock.server``);
* ``serve_mock(manifest, MockOptions(front="http"))``: the server on a front
  (``cassette.mock.serve``).

``cassette.tools.distill.distill_cassette(tape)`` makes a manifest from a cassette.
Names are imported on first use, so validating a manifest does not load the fronts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette._lazy import lazy_exports

if TYPE_CHECKING:
    from cassette.mock.manifest import (
        MANIFEST_FORMAT,
        dumps_manifest,
        load_manifest,
        loads_manifest,
        write_manifest,
    )
    from cassette.mock.serve import MockOptions, serve_mock
    from cassette.mock.server import MockServer
    from cassette.mock.template import render
    from cassette.mock.validate import ManifestFinding, validate_manifest

_LAZY: dict[str, str] = {
    "MANIFEST_FORMAT": "cassette.mock.manifest",
    "dumps_manifest": "cassette.mock.manifest",
    "load_manifest": "cassette.mock.manifest",
    "loads_manifest": "cassette.mock.manifest",
    "write_manifest": "cassette.mock.manifest",
    "MockOptions": "cassette.mock.serve",
    "serve_mock": "cassette.mock.serve",
    "MockServer": "cassette.mock.server",
    "render": "cassette.mock.template",
    "ManifestFinding": "cassette.mock.validate",
    "validate_manifest": "cassette.mock.validate",
}


__all__ = [
    "MANIFEST_FORMAT",
    "ManifestFinding",
    "MockOptions",
    "MockServer",
    "dumps_manifest",
    "load_manifest",
    "loads_manifest",
    "render",
    "serve_mock",
    "validate_manifest",
    "write_manifest",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)

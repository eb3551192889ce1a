"""The toolbox: lint, diff, redact, show and distill read cassettes; check and verify talk
to servers; mock serves a manifest distilled from a cassette.

Each module offers a plain library function (``lint_cassette``, ``diff_cassettes``,
``redact_cassette``, ``scan_cassette``, ``timeline``, ``render_html``, ``misses_against``,
``check_server``, ``verify_cassette``, ``distill_cassette``; for ``mock``,
``cassette.mock``: ``load_manifest``, ``write_manifest``, ``validate_manifest``,
``MockServer``, ``serve_mock``) and a ``main(args)`` that its command
(``cassette.cli.tools``) is a thin wrapper over. Nothing here imports the command line.
"""

from __future__ import annotations

__all__: list[str] = []

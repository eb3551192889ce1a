"""The command line, a thin layer over the public API: one module per command family.

``main`` (``cassette.cli.main``) holds the table of commands and turns errors into exit
codes; ``record`` and ``replay`` read their options once into a frozen value and hand it
to the runtime; ``modes`` decides the record mode; ``tools`` and ``mock`` hold the
toolbox's commands; ``common`` what they all share.
"""

from __future__ import annotations

from cassette.cli.main import main

__all__ = ["main"]

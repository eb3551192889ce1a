"""MkDocs hook: links from a page to files outside ``docs/`` point at the repository.

The pages link to ``../SECURITY.md``, ``../examples/...`` and ``../benchmarks/README.md``
so that they work where most people read them, on the repository's web view. The site
holds only ``docs/``, so MkDocs would call those links broken. Here each one is checked
to exist in the checkout (a missing one is a warning, which fails ``mkdocs build
--strict``) and rewritten to its address in the repository.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

REPOSITORY = "https://github.com/cassette-mcp/cassette-mcp/blob/main/"
ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")
log = logging.getLogger("mkdocs.plugins.cassette")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Rewrite ``](../PATH)`` links that leave ``docs/``; warn on a missing target."""
    page_dir = (ROOT / "docs" / page.file.src_path).parent

    def repoint(match: re.Match[str]) -> str:
        target = (page_dir / match.group(1)).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            log.warning("%s links to %s, which does not exist", page.file.src_path, match.group(1))
            return match.group(0)
        if target.is_relative_to(ROOT / "docs"):
            return match.group(0)
        return f"]({REPOSITORY}{target.relative_to(ROOT).as_posix()}{match.group(2) or ''})"

    return LINK.sub(repoint, markdown)

"""Every documentation page can be found: the README and the site's home page link each
page of docs/, and the site's navigation holds each one."""

from __future__ import annotations

import re

import pytest

from tests.helpers.support import ROOT

PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")


@pytest.mark.parametrize("page", PAGES)
def test_the_readme_and_the_home_page_link_every_page(page: str) -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    home = (ROOT / "docs" / "index.md").read_text("utf-8")
    navigation = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert f"](docs/{page}" in readme, f"README.md does not link docs/{page}"
    assert re.search(rf"\]\({re.escape(page)}[)#]", home), f"docs/index.md does not link {page}"
    assert f": {page}" in navigation, f"mkdocs.yml's nav does not hold {page}"

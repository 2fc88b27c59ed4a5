"""The landing page introduces and links every chapter of the table of contents."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_landing_page_links_every_chapter_of_the_toc():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    intro = (ROOT / (toc["root"] + ".md")).read_text()
    links = set(re.findall(r"\]\(([\w.-]+)\)", intro))
    for entry in toc["chapters"]:
        stem = Path(entry["file"]).name
        target = next(p.name for p in (ROOT / "book").glob(stem + ".*") if p.suffix in (".ipynb", ".md"))
        assert target in links, f"the landing page does not link {target}"
    for link in links:
        assert (ROOT / "book" / link).is_file(), f"the landing page links {link}, which is not in book/"


def test_landing_page_promises_no_chapter_that_exists_already():
    intro = (ROOT / "book" / "intro.md").read_text()
    assert not re.search(r"chapters? of (its|their) own next|come[s]? next", intro)

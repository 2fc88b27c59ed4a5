"""Where the book is and where its builds go, and what ``_toc.yml`` says the book holds."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build"
STAGE = BUILD / "stage"
HTML = BUILD / "html"
#: Where the test suite's fast build goes (never over the published book in ``HTML``).
TEST_OUT = BUILD / "test"


def toc_files(root: Path = ROOT) -> list[str]:
    """Every document named in ``_toc.yml`` (without suffix), in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                found.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts", []) or []:
                walk(part.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return found


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks of the book: the ``_toc.yml`` entries that are ``.ipynb`` files."""
    out = []
    for entry in toc_files(root):
        path = root / f"{entry}.ipynb"
        if path.exists():
            out.append(path)
        elif not any((root / f"{entry}{s}").exists() for s in (".md", ".rst")):
            raise FileNotFoundError(f"_toc.yml names {entry!r} but no .ipynb/.md file exists")
    return out

"""The book's BibTeX file as plain text, for the JupyterLab edition (``tools/lab.py``), which runs
no Sphinx: the citation each key reads as, and the bibliography page."""

from __future__ import annotations

import re
from pathlib import Path


def _bib_fields(body: str) -> dict[str, str]:
    """``field → value`` of one BibTeX entry's body, braces and TeX accents removed."""
    fields = {}
    for match in re.finditer(r"(\w+)\s*=\s*(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}|\d+)", body):
        value = match.group(2)
        value = value[1:-1] if value.startswith("{") else value
        value = re.sub(r"\\['`^\"~]\{?\\?(\w)\}?", r"\1", value)  # {\'e} -> e (close enough for a reading list)
        fields[match.group(1).lower()] = re.sub(r"\s+", " ", value.replace("{", "").replace("}", "")).strip()
    return fields


def _bib_entries(path: Path) -> list[tuple[str, dict[str, str], list[str]]]:
    """``(key, fields, authors as "Given Surname")`` for every entry of a BibTeX file."""
    text = path.read_text() if path.exists() else ""
    entries = []
    for match in re.finditer(r"@\w+\{([^,\s]+),(.*?)\n\}", text, flags=re.S):
        fields = _bib_fields(match.group(2))
        names = [n.strip() for n in fields.get("author", match.group(1)).split(" and ")]
        names = [" ".join(reversed([p.strip() for p in n.split(",", 1)])) if "," in n else n for n in names]
        entries.append((match.group(1), fields, names))
    return entries


def bibliography(path: Path) -> dict[str, str]:
    """``key → "Author et al. (year)"`` for every entry of a BibTeX file (as the site cites)."""
    out = {}
    for key, fields, names in _bib_entries(path):
        surname = [n.split()[-1] for n in names]
        who = surname[0] if len(surname) == 1 else (
            f"{surname[0]} and {surname[1]}" if len(surname) == 2 else f"{surname[0]} et al.")
        out[key] = f"{who} ({fields.get('year', 'n.d.')})"
    return out


def bibliography_markdown(path: Path) -> str:
    """The bibliography page of the edition: every entry of ``path`` as one line, sorted by author
    (the site's ``{bibliography}`` directive needs Sphinx, which JupyterLab does not run)."""
    lines = []
    for key, f, names in _bib_entries(path):
        authors = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        venue = f.get("journal") or f.get("booktitle") or f.get("howpublished") or f.get("publisher", "")
        extra = ", ".join(x for x in (f"vol. {f['volume']}" if "volume" in f else "",
                                      f"pp. {f['pages'].replace('--', '–')}" if "pages" in f else "") if x)
        entry = f"{authors} ({f.get('year', 'n.d.')}). *{f.get('title', key)}*."
        entry += f" {venue}" + (f", {extra}" if extra else "") + "." if venue else ""
        lines.append(((names[0].split()[-1].lower(), f.get("year", "")), f"- {entry}"))
    return "# Bibliography\n\n" + "\n".join(line for _, line in sorted(lines)) + "\n"

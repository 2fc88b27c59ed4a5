"""`make lab`: the book in JupyterLab, reading like the site.

JupyterLab renders the chapters' MyST with the jupyterlab-myst extension (admonitions, ``prf:``
blocks, exercises with their solutions folded). Two things of the site it cannot do, so this
script writes a *JupyterLab edition* of the book into ``_build/lab/`` and opens JupyterLab there:

* ``{glue:text}`name:fmt``` (MyST-NB's glue) becomes ``{eval}`glued("name", "fmt")```, an
  inline expression jupyterlab-myst evaluates in the kernel when the cell runs (Run All): the
  number appears where the site shows it (``dpadmm_lite._book.glued``). A number glued by a
  cell *below* its text is not in the kernel yet when the text renders; for those the edition
  carries the value ``make book`` computed (``site=``), taken from its executed notebook when
  that build was in full mode (the edition's) and the chapter's code has not changed since;
* ``{cite}`key``` becomes the author–year text the site shows ("[Huang et al., 2019]"), from
  ``book/references.bib``;
* a reference to a block of another chapter (``{prf:ref}`privacy-def-dp```) becomes a link to
  that chapter's notebook (jupyterlab-myst resolves references within one notebook only).

The edition runs in full mode, as the site does, and reads the sweeps that ``make book`` cached
in ``_build/cache/full`` (``$DPADMM_CACHE`` if set), so Run All after ``make book`` recomputes
none of them. Edit the chapters in ``book/``: the edition is written anew from them on every
``make lab``.
JupyterLab starts with ``--allow-root`` when run as root (containers), on localhost only.

    python tools/lab.py            # write the edition and start JupyterLab (what `make lab` runs)
    python tools/lab.py --no-open  # only write the edition
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
EDITION = BUILD / "lab"

#: ``{glue:text}`key``` / ``{glue}`key:fmt``` / ``{glue:any}`key``` (not the cross-document form path::key).
GLUE_ROLE = re.compile(r"\{glue(?::text|:any|:md)?\}`([^`:]+?)(?::([^`]*))?`")
CITE_ROLE = re.compile(r"\{cite(?::p|:t|:ps|:ts)?\}`([^`]+)`")
#: ``{prf:ref}`label```, ``{ref}`label``` and ``{ref}`text <label>```.
REF_ROLE = re.compile(r"\{(prf:ref|ref|numref)\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`]+))`")
#: A labelled block: ```{prf:theorem} Title`` / ```{exercise}`` … ``:label: name``; or ``(name)=``.
LABELLED = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*(.*?)\n((?::[\w-]+:.*\n)*)", re.M)
#: The line added to a chapter's preamble so that its inline expressions can call ``glued``.
PREAMBLE_LINE = "from dpadmm_lite._book import glued  # JupyterLab edition: {eval} roles show glued numbers"


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


def chapter_title(nb: dict, fallback: str) -> str:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            match = re.search(r"^# (.+)$", "".join(cell["source"]), flags=re.M)
            if match:
                return match.group(1).strip()
    return fallback


def label_index(notebooks: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """``label → (notebook file, readable name)`` for every labelled block and target of the book."""
    index = {}
    for name, nb in notebooks.items():
        chapter = chapter_title(nb, name)
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for match in LABELLED.finditer(text):
                kind, title, options = match.group(2), match.group(3).strip(), match.group(4)
                label = re.search(r":label:\s*(\S+)", options)
                if label:
                    kind = kind.split(":")[-1]
                    what = f"{kind} “{title}”" if title and kind != "solution" else kind
                    index[label.group(1)] = (name, f"{what} in “{chapter}”")
            for match in re.finditer(r"^\((\S+?)\)=\s*\n#+\s*(.+)$", text, flags=re.M):
                index[match.group(1)] = (name, f"“{match.group(2).strip()}” in “{chapter}”")
    return index


def lab_markdown(source: str, cites: dict[str, str], labels: dict[str, tuple[str, str]] | None = None,
                 here: str = "", site: dict[str, str] | None = None) -> str:
    """One markdown cell of the edition: glue roles as inline expressions, citations as text, and
    references to another chapter as links to it (jupyterlab-myst resolves a notebook's own).
    ``site``: glued name → the text/plain ``make book`` glued, the fallback of a number glued
    further down (:func:`site_glue`)."""

    def glue(match):
        name, fmt = match.group(1), match.group(2) or ""
        args = [json.dumps(name)] + ([json.dumps(fmt)] if fmt else [])
        if site and name in site:
            args.append(f"site={json.dumps(site[name], ensure_ascii=False)}")
        return "{eval}`glued(%s)`" % ", ".join(args)

    def cite(match):  # as the site's author-year style shows it: [Balle et al., 2020, Canonne et al., 2020]
        keys = [k.strip() for k in match.group(1).split(",")]
        return "[" + ", ".join(sorted(re.sub(r" \((.+)\)$", r", \1", cites.get(k, k)) for k in keys)) + "]"

    def ref(match):
        text, label = (match.group(2), match.group(3)) if match.group(3) else (None, match.group(4))
        where = (labels or {}).get(label.strip())
        if where is None or where[0] == here:
            return match.group(0)
        return f"[{text or where[1]}]({where[0]})"

    return REF_ROLE.sub(ref, CITE_ROLE.sub(cite, GLUE_ROLE.sub(glue, source)))


def lab_notebook(nb: dict, cites: dict[str, str], *, fast: bool | None = None,
                 labels: dict[str, tuple[str, str]] | None = None, here: str = "",
                 stop_after_live: bool = False, site: dict[str, str] | None = None) -> dict:
    """The JupyterLab edition of one notebook (``fast``: also set ``FAST`` in its parameters cell;
    ``stop_after_live``: end it with its last live panel, for tests and benchmarks)."""
    nb = json.loads(json.dumps(nb))
    if stop_after_live:
        live = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
                and re.search(r"\bwidgets\.live\(", "".join(c["source"]))]
        if live:
            nb["cells"] = nb["cells"][: live[-1] + 1]
    preamble_done = False
    for cell in nb["cells"]:
        source = "".join(cell.get("source", []))
        if cell["cell_type"] == "markdown":
            new = lab_markdown(source, cites, labels, here, site)
        elif cell["cell_type"] == "code" and not preamble_done:
            new = source.rstrip("\n") + "\n" + PREAMBLE_LINE + "\n"
            preamble_done = True
        elif cell["cell_type"] == "code" and fast is not None and "parameters" in cell.get("metadata", {}).get("tags", []):
            new = re.sub(r"^FAST\s*=.*$", f"FAST = {fast}", source, flags=re.M)
        else:
            continue
        cell["source"] = new.splitlines(keepends=True)
    return nb


def _code(nb: dict) -> list[str]:
    """The code a chapter runs, without the cell papermill injects."""
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
            and "injected-parameters" not in c.get("metadata", {}).get("tags", [])]


def site_glue(source: dict, executed: Path) -> dict[str, str]:
    """Glued name → text/plain in ``executed``, the chapter as ``make book`` ran it; empty when
    that file is missing or its code differs from ``source`` (the chapter changed since)."""
    try:
        ran = json.loads(executed.read_text())
    except (OSError, ValueError):
        return {}
    if _code(ran) != _code(source):
        return {}
    values = {}
    for cell in ran["cells"]:
        for output in cell.get("outputs", []):
            name = ((output.get("metadata") or {}).get("scrapbook") or {}).get("name")
            text = (output.get("data") or {}).get("text/plain")
            if name and text is not None:
                values[name] = "".join(text) if isinstance(text, list) else text
    return values


def _full_build() -> Path | None:
    """The executed chapters of the last ``make book``, if it ran in full mode (else None)."""
    try:
        status = json.loads((BUILD / "last-build.json").read_text())
    except (OSError, ValueError):
        return None
    return BUILD / "stage" / "book" if status.get("mode") == "full" else None


def write_edition(target: Path = EDITION, *, fast: bool | None = None, stop_after_live: bool = False) -> list[Path]:
    """Copy ``book/`` to ``target/book`` with every notebook turned into its JupyterLab edition."""
    book = target / "book"
    if book.exists():
        shutil.rmtree(book)
    shutil.copytree(ROOT / "book", book, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    cites = bibliography(ROOT / "book" / "references.bib")
    paths = sorted(book.rglob("*.ipynb"))
    sources = {path.relative_to(book).as_posix(): json.loads(path.read_text()) for path in paths}
    labels = label_index(sources)
    for page in book.rglob("*.md"):  # the bibliography: a list, as the site's directive renders it
        if "```{bibliography}" in page.read_text():
            page.write_text(bibliography_markdown(ROOT / "book" / "references.bib"))
    executed = _full_build() if not fast else None  # the site's numbers fit the full edition only
    written = []
    for path in paths:
        here = path.relative_to(book).as_posix()
        site = site_glue(sources[here], executed / here) if executed is not None else None
        nb = lab_notebook(sources[here], cites, fast=fast, labels=labels, here=here, stop_after_live=stop_after_live,
                          site=site)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    (target / "README.md").write_text(
        "# The JupyterLab edition of the book\n\nWritten by `make lab` from `book/` (glued numbers as inline "
        "expressions, citations as text). Edit the chapters in `book/`: this folder is written anew.\n")
    return written


#: JupyterLab plugins switched off in the edition: the news toast (asks to fetch a feed from another
#: host) and the per-cell toolbar (JupyterLab 4.6 throws on its overlap check for cells that
#: jupyterlab-myst renders: "Cannot read properties of undefined (reading 'node')").
DISABLED_PLUGINS = ("@jupyterlab/apputils-extension:announcements", "@jupyterlab/cell-toolbar-extension:plugin")


def lab_environment(target: Path = EDITION) -> dict[str, str]:
    """The environment JupyterLab runs in: the edition's page config first on the config path."""
    config = target / "config"
    page = config / "labconfig" / "page_config.json"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(json.dumps({"disabledExtensions": {name: True for name in DISABLED_PLUGINS}}, indent=1) + "\n")
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in (str(config), env.get("JUPYTER_CONFIG_PATH", "")) if p)
    return env


def lab_command(root_dir: Path, *, port: int | None = None, token: str | None = None, open_browser: bool = True) -> list[str]:
    """The ``jupyter lab`` command: localhost only, no news or update checks, root allowed."""
    cmd = [str(Path(sys.executable).parent / "jupyter"), "lab", f"--ServerApp.root_dir={root_dir}",
           "--ServerApp.ip=127.0.0.1", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    if port is not None:
        cmd.append(f"--ServerApp.port={port}")
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if not open_browser:
        cmd.append("--no-browser")
    return cmd


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-open", action="store_true", help="write the edition, do not start JupyterLab")
    args = parser.parse_args(argv)
    written = write_edition(EDITION)
    print(f"JupyterLab edition of {len(written)} chapters in {EDITION / 'book'} (edit the chapters in book/)")
    if args.no_open:
        return 0
    env = lab_environment()
    env.setdefault("DPADMM_CACHE", str(BUILD / "cache" / "full"))  # make book's sweeps
    return subprocess.call(lab_command(EDITION / "book"), cwd=EDITION, env=env)


if __name__ == "__main__":
    sys.exit(main())

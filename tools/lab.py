"""`make lab`: the book in JupyterLab, reading like the site.

JupyterLab renders the chapters' MyST with the jupyterlab-myst extension (admonitions, ``prf:``
blocks, exercises with their solutions folded). Two things of the site it cannot do, so this
script writes a *JupyterLab edition* of the book into ``_build/lab/`` and opens JupyterLab there:

* ``{glue:text}`name:fmt``` (MyST-NB's glue) becomes ``{eval}`glued("name", "fmt")```, an
  inline expression jupyterlab-myst evaluates in the kernel when the cell runs (Run All): the
  number appears where the site shows it (``dpadmm_book._book.glued``). A number glued by a
  cell *below* its text is not in the kernel yet when the text renders; for those the edition
  carries the value ``make book`` computed (``site=``), taken from its executed notebook when
  that build was in full mode (the edition's) and the chapter's code has not changed since;
* ``{cite}`key``` becomes the author–year text the site shows ("[Huang et al., 2019]"), from
  ``book/references.bib``;
* a reference to a block of another chapter (``{prf:ref}`privacy-def-dp```) becomes a link to
  that chapter's notebook, one to a block of the same chapter its name in plain text
  (jupyterlab-myst resolves references within one notebook only, and logs "Cross reference
  target was not found" for a target in a cell it has not rendered yet);
* a chapter opens on its title: the title cell comes first, the setup cell after it folded, and
  the notebook carries the kernel's name and language as the kernel reports them (JupyterLab
  rewrites them on opening and would mark the chapter modified);
* the Markdown pages (introduction, instructor notes, bibliography) get the same treatment and
  open rendered.

JupyterLab runs with settings of the edition (:func:`lab_environment`): every cell of a notebook
attached to the page (``windowingMode: none``). jupyterlab-myst evaluates a markdown cell's
inline expressions when the cell *runs*, reading them from the cell as last rendered; in
JupyterLab's default windowing a cell off screen is not rendered yet, so Run All sent no
expression for it and its numbers stayed raw ``glued("…")`` code.

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

from references import bibliography, bibliography_markdown  # noqa: F401  (lab.bibliography, as before)

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
EDITION = BUILD / "lab"

#: ``{glue:text}`key``` / ``{glue}`key:fmt``` / ``{glue:any}`key``` (not the cross-document form path::key).
GLUE_ROLE = re.compile(r"\{glue(?::text|:any|:md)?\}`([^`:]+?)(?::([^`]*))?`")
CITE_ROLE = re.compile(r"\{cite(?::p|:t|:ps|:ts)?\}`([^`]+)`")
#: ``{prf:ref}`label```, ``{ref}`label``` and ``{ref}`text <label>```.
REF_ROLE = re.compile(r"\{(prf:ref|ref|numref)\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`]+))`")
#: ``{doc}`/book/admm``` and ``{doc}`text </book/admm>``` (a page of the book).
DOC_ROLE = re.compile(r"\{doc\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`]+))`")
#: A labelled block: ```{prf:theorem} Title`` / ```{exercise}`` … ``:label: name``; or ``(name)=``.
LABELLED = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*(.*?)\n((?::[\w-]+:.*\n)*)", re.M)
#: The line added to a chapter's preamble so that its inline expressions can call ``glued``.
PREAMBLE_LINE = "from dpadmm_book._book import glued  # JupyterLab edition: {eval} roles show glued numbers"


def chapter_title(nb: dict, fallback: str) -> str:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            match = re.search(r"^# (.+)$", "".join(cell["source"]), flags=re.M)
            if match:
                return match.group(1).strip()
    return fallback


def label_index(notebooks: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """``label → (notebook file, readable name)`` for every labelled block and target of the book."""
    return {label: (name, f"{what} in “{chapter}”") for label, (name, what, chapter) in _labels(notebooks).items()}


def _labels(notebooks: dict[str, dict]) -> dict[str, tuple[str, str, str]]:
    """``label → (notebook file, what it is, chapter title)``: ``what`` reads "theorem “Title”",
    "exercise 2" (numbered in its chapter, as jupyterlab-myst numbers them) or "“Section title”"."""
    index = {}
    for name, nb in notebooks.items():
        chapter = chapter_title(nb, name)
        exercises = 0
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for match in LABELLED.finditer(text):
                kind, title, options = match.group(2), match.group(3).strip(), match.group(4)
                kind = kind.split(":")[-1]
                exercises += kind == "exercise"
                label = re.search(r":label:\s*(\S+)", options)
                if label:
                    if kind == "exercise":
                        what = f"exercise {exercises}" + (f" “{title}”" if title else "")
                    else:
                        what = f"{kind} “{title}”" if title and kind != "solution" else kind
                    index[label.group(1)] = (name, what, chapter)
            for match in re.finditer(r"^\((\S+?)\)=\s*\n#+\s*(.+)$", text, flags=re.M):
                index[match.group(1)] = (name, f"“{match.group(2).strip()}”", chapter)
    return index


def lab_markdown(source: str, cites: dict[str, str], labels: dict[str, tuple[str, str]] | None = None,
                 here: str = "", site: dict[str, str] | None = None, docs: dict[str, tuple[str, str]] | None = None) -> str:
    """One markdown cell of the edition: glue roles as inline expressions, citations as text,
    references to another chapter as links to it and to the same chapter as text (jupyterlab-myst
    resolves a notebook's own, but logs an error for a target it has not rendered yet).
    ``site``: glued name → the text/plain ``make book`` glued, the fallback of a number glued
    further down (:func:`site_glue`); ``docs``: ``"book/admm"`` → (file, title) for ``{doc}`` roles."""

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
        if where is None:  # not a label of the book: jupyterlab-myst may know it (an equation)
            return match.group(0)
        if where[0] == here:  # the same chapter: its name, as text (see the module docstring)
            return text or re.sub(r" in “[^”]*”$", "", where[1])
        return f"[{text or where[1]}]({where[0]})"

    def doc(match):
        text, target = (match.group(1), match.group(2)) if match.group(2) else (None, match.group(3))
        where = (docs or {}).get(target.strip().strip("/"))
        return match.group(0) if where is None else f"[{text or where[1]}]({where[0]})"

    return DOC_ROLE.sub(doc, REF_ROLE.sub(ref, CITE_ROLE.sub(cite, GLUE_ROLE.sub(glue, source))))


def lab_notebook(nb: dict, cites: dict[str, str], *, fast: bool | None = None,
                 labels: dict[str, tuple[str, str]] | None = None, here: str = "",
                 stop_after_live: bool = False, site: dict[str, str] | None = None,
                 docs: dict[str, tuple[str, str]] | None = None) -> dict:
    """The JupyterLab edition of one notebook (``fast``: also set ``FAST`` in its parameters cell;
    ``stop_after_live``: end it with its last live panel, for tests and benchmarks)."""
    nb = json.loads(json.dumps(nb))
    if stop_after_live:
        live = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
                and re.search(r"\bwidgets\.live\(", "".join(c["source"]))]
        if live:
            nb["cells"] = nb["cells"][: live[-1] + 1]
    nb["cells"] = title_first(nb["cells"])
    nb.setdefault("metadata", {}).update(kernel_metadata())
    preamble_done = False
    for cell in nb["cells"]:
        source = "".join(cell.get("source", []))
        if cell["cell_type"] == "markdown":
            new = lab_markdown(source, cites, labels, here, site, docs)
        elif cell["cell_type"] == "code" and not preamble_done:
            new = source.rstrip("\n") + "\n" + PREAMBLE_LINE + "\n"
            preamble_done = True
            cell.setdefault("metadata", {}).setdefault("jupyter", {})["source_hidden"] = True  # folded (the site removes it)
        elif cell["cell_type"] == "code" and fast is not None and "parameters" in cell.get("metadata", {}).get("tags", []):
            new = re.sub(r"^FAST\s*=.*$", f"FAST = {fast}", source, flags=re.M)
        else:
            continue
        cell["source"] = new.splitlines(keepends=True)
    return nb


def title_first(cells: list[dict]) -> list[dict]:
    """``cells`` with the chapter's title cell (the first markdown cell with a ``# `` heading) moved
    to the top, above the setup and parameters cells, so that the chapter opens on its title.

    Only markdown moves: the code runs in the same order, and jupyterlab-myst sends a cell's inline
    expressions to the kernel after the code Run All queued, so they find the setup done."""
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and re.search(r"^# \S", "".join(cell["source"]), flags=re.M):
            return [cell] + cells[:i] + cells[i + 1:]
    return list(cells)


def kernel_metadata() -> dict:
    """The ``kernelspec`` and ``language_info`` of the python3 kernel, as JupyterLab writes them into
    a notebook when the kernel starts (a notebook that carries others is marked modified at once)."""
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"kernelspec": {"name": "python3", "display_name": spec.display_name, "language": spec.language},
            "language_info": json.loads(json.dumps(IPythonKernel.language_info))}


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
    pages = sorted(book.rglob("*.md"))
    docs = {f"book/{path.relative_to(book).with_suffix('').as_posix()}": (
        path.relative_to(book).as_posix(), chapter_title(sources[path.relative_to(book).as_posix()], path.stem))
        for path in paths}
    for page in pages:
        match = re.search(r"^# (.+)$", page.read_text(), flags=re.M)
        docs[f"book/{page.relative_to(book).with_suffix('').as_posix()}"] = (
            page.relative_to(book).as_posix(), match.group(1).strip() if match else page.stem)
    for page in pages:  # the pages open rendered (lab_environment): their roles as the chapters' are
        text = page.read_text()
        if "```{bibliography}" in text:  # a list, as the site's directive renders it
            text = bibliography_markdown(ROOT / "book" / "references.bib")
        text = re.sub(r"^```\{include\} _instructor_chapters\.md\n```\n", _instructor_part, text, flags=re.M)
        page.write_text(lab_markdown(text, cites, labels, page.relative_to(book).as_posix(), docs=docs))
    executed = _full_build() if not fast else None  # the site's numbers fit the full edition only
    written = []
    for path in paths:
        here = path.relative_to(book).as_posix()
        site = site_glue(sources[here], executed / here) if executed is not None else None
        nb = lab_notebook(sources[here], cites, fast=fast, labels=labels, here=here, stop_after_live=stop_after_live,
                          site=site, docs=docs)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    (target / "README.md").write_text(
        "# The JupyterLab edition of the book\n\nWritten by `make lab` from `book/` (glued numbers as inline "
        "expressions, citations as text). Edit the chapters in `book/`: this folder is written anew.\n")
    return written


def _instructor_part(_match) -> str:
    """The part of the instructor page ``make book`` generates from the chapters (without the
    mistakes the checks recognise: listing them runs every check, too slow for every ``make lab``)."""
    from bookbuild.instructor import instructor_notes

    return instructor_notes(ROOT, with_mistakes=False) + "\n"


#: JupyterLab plugins switched off in the edition: the news toast (asks to fetch a feed from another
#: host) and the per-cell toolbar (JupyterLab 4.6 throws on its overlap check for cells that
#: jupyterlab-myst renders: "Cannot read properties of undefined (reading 'node')").
DISABLED_PLUGINS = ("@jupyterlab/apputils-extension:announcements", "@jupyterlab/cell-toolbar-extension:plugin")


#: Default settings of the edition (a reader's own settings still win):
#: * every cell attached to the page, none left for later ("windowingMode": JupyterLab's default
#:   renders a cell off screen only when the page is idle or it scrolls into view; jupyterlab-myst
#:   evaluates a markdown cell's inline expressions when it runs, from the cell as last rendered,
#:   so under Run All a cell not rendered yet kept its glued numbers as raw code for good);
#: * Markdown pages (introduction, bibliography, instructor notes) open rendered, not as source.
SETTINGS = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}},
}


def _app_settings(target: Path) -> Path:
    """The edition's application settings directory: ``overrides.json`` with :data:`SETTINGS` on top
    of the overrides of the installed JupyterLab (if it has any)."""
    from jupyterlab.commands import get_app_dir

    installed = Path(get_app_dir()) / "settings"
    settings = target / "app-settings"
    if settings.exists():
        shutil.rmtree(settings)
    if installed.is_dir():
        shutil.copytree(installed, settings)
    settings.mkdir(parents=True, exist_ok=True)
    try:
        overrides = json.loads((settings / "overrides.json").read_text())
    except (OSError, ValueError):
        overrides = {}
    for plugin, values in SETTINGS.items():
        overrides.setdefault(plugin, {}).update(values)
    (settings / "overrides.json").write_text(json.dumps(overrides, indent=1) + "\n")
    return settings


#: Lab extensions the edition leaves out: JupyterLite's in-browser kernel, which the `lite` extra installs
#: into the same environment for the site's Lite edition; in a JupyterLab with a server it fails to load
#: ("Shared module @jupyterlite/server doesn't exist in shared scope default"). Disabling it in the page
#: config does not stop JupyterLab from loading its code, so the edition's extension path omits it.
LEFT_OUT_EXTENSIONS = ("@jupyterlite",)


def _lab_extensions(target: Path) -> Path:
    """A folder of links to every installed lab extension but :data:`LEFT_OUT_EXTENSIONS` (the first
    installation of a name wins, as on JupyterLab's own search path)."""
    from jupyter_core.paths import jupyter_path

    folder = target / "labextensions"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for root in map(Path, jupyter_path("labextensions")):
        for package in sorted(root.glob("*/package.json")) + sorted(root.glob("@*/*/package.json")):
            name = package.parent.relative_to(root)
            if name.parts[0] in LEFT_OUT_EXTENSIONS or (folder / name).exists():
                continue
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(package.parent, target_is_directory=True)
    return folder


def lab_environment(target: Path = EDITION) -> dict[str, str]:
    """The environment JupyterLab runs in: the edition's configuration first on the config path
    (its page config, and its application settings directory with :data:`SETTINGS`)."""
    config = target / "config"
    page = config / "labconfig" / "page_config.json"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(json.dumps({"disabledExtensions": {name: True for name in DISABLED_PLUGINS}}, indent=1) + "\n")
    (config / "jupyter_lab_config.json").write_text(json.dumps({"LabApp": {
        "app_settings_dir": str(_app_settings(target)), "labextensions_path": [str(_lab_extensions(target))]}},
        indent=1) + "\n")
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
    env = lab_environment(EDITION)
    env.setdefault("DPADMM_CACHE", str(BUILD / "cache" / "full"))  # make book's sweeps
    return subprocess.call(lab_command(EDITION / "book"), cwd=EDITION, env=env)


if __name__ == "__main__":
    sys.exit(main())

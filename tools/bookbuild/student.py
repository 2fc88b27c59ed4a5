"""The student edition: the book without its solutions, as a site and as notebooks to hand out.

``make student`` (``tools/build_student.py``) writes:

* ``_build/student/html`` — the same pages as ``make book`` with every solution *removed* (not
  folded, see :mod:`.solutions`). The instructor page is left out. Its download buttons give the
  executed notebooks, stripped the same way.
* ``_build/student/notebooks`` — the chapters as notebooks to hand out (e.g. on a JupyterHub),
  stripped the same way, without outputs, in the JupyterLab edition of ``tools/lab.py`` (glued
  numbers as inline expressions) and with ``FAST = True``.

The student edition is built from an **executed staging copy** of the book (``_build/stage``, what
:mod:`.book` executes with papermill): nothing is executed twice. When that copy is missing, from
another mode, or older than the chapters and the library, the book is built first.

    python tools/build_student.py               # what `make student` runs (full mode)
    python tools/build_student.py --mode fast   # from the test build's staging copy
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import book, lite, live
from .instructor import INSTRUCTOR_DOC, INSTRUCTOR_PART
from .myst import cell_source, cell_tags
from .site import build_site
from .solutions import Solution, strip_markdown, strip_notebook
from .stage import CELL_TIMEOUT
from .toc import BUILD, ROOT, STAGE, toc_files, toc_notebooks

#: Where ``make student`` writes: ``stage`` (stripped executed sources), ``html``, ``notebooks``.
STUDENT = BUILD / "student"
STUDENT_HTML = STUDENT / "html"
STUDENT_NOTEBOOKS = STUDENT / "notebooks"


@dataclass
class StudentBuild:
    mode: str
    html: Path = STUDENT_HTML
    notebooks: Path = STUDENT_NOTEBOOKS
    ok: bool = False
    log: str = ""
    seconds: float = 0.0
    executed: bool = False
    solutions: list[Solution] = field(default_factory=list)


def stale_reasons(stage: Path, mode: str, root: Path = ROOT) -> list[str]:
    """Why ``stage`` is not a fresh executed copy of the book in ``mode`` (empty: reuse it)."""
    reasons = []
    record = stage.parent / "last-build.json"  # written by book.build next to its stage
    if not record.exists():
        return [f"no build record ({record})"]
    last = json.loads(record.read_text())
    if last.get("mode") != mode or not last.get("ok"):
        reasons.append(f"the last build was {last.get('mode')!r} mode, ok={last.get('ok')}; asked for {mode!r}")
    for name in ["_toc.yml", "_config.yml"] + [f"{doc}.md" for doc in toc_files(root)
                                                 if (root / f"{doc}.md").exists()]:
        staged = stage / name
        if not staged.exists() or staged.read_text() != (root / name).read_text():
            reasons.append(f"{name} changed since the book was built")
    library = max(p.stat().st_mtime for package in ("dpadmm_lite", "dpadmm_book") for p in (root / package).rglob("*.py"))
    for source in toc_notebooks(root):
        staged = stage / source.relative_to(root)
        if not staged.exists():
            reasons.append(f"{staged} is missing")
            continue
        nb = json.loads(staged.read_text())
        fast = nb.get("metadata", {}).get("papermill", {}).get("parameters", {}).get("FAST")
        if fast is not (mode == "fast"):
            reasons.append(f"{staged.name} was executed with FAST={fast}")
        ran = [(c["cell_type"], cell_source(c)) for c in nb["cells"] if "injected-parameters" not in cell_tags(c)]
        now = [(c["cell_type"], cell_source(c)) for c in json.loads(source.read_text())["cells"]]
        if ran != now:
            reasons.append(f"{source.name} changed since it was executed")
        if staged.stat().st_mtime < library:
            reasons.append(f"the library changed since {source.name} was executed")
    return reasons


def make_student_stage(source: Path, target: Path) -> list[Solution]:
    """Copy an executed staging copy to ``target`` without solutions and without the instructor page."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=lambda d, names: ["_build"] if Path(d) == source else [])
    toc_path = target / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())

    def drop(entries):
        kept = []
        for entry in entries or []:
            if entry.get("file") == INSTRUCTOR_DOC:
                continue
            for key in ("sections", "chapters"):
                if key in entry:
                    entry[key] = drop(entry[key])
            kept.append(entry)
        return kept

    toc["chapters"] = drop(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        part["chapters"] = drop(part.get("chapters"))
    toc_path.write_text("# The student edition's table of contents (tools/build_student.py)\n"
                        + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))
    for name in (f"{INSTRUCTOR_DOC}.md", INSTRUCTOR_PART):
        (target / name).unlink(missing_ok=True)
    config_path = target / "_config.yml"
    config = config_path.read_text()
    config = re.sub(r"^title:\s*(.+)$",
                    lambda m: "title: " + json.dumps(yaml.safe_load(m.group(1)) + " — student edition", ensure_ascii=False),
                    config, count=1, flags=re.M)
    config_path.write_text(config)
    solutions: list[Solution] = []
    for path in sorted((target / "book").rglob("*")):
        doc = path.relative_to(target).with_suffix("").as_posix()
        if path.suffix == ".ipynb":
            nb, removed = strip_notebook(json.loads(path.read_text()), doc)
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
        elif path.suffix == ".md":
            text, removed = strip_markdown(path.read_text(), doc)
            path.write_text(text)
        else:
            continue
        solutions += removed
    return solutions


def write_student_notebooks(root: Path = ROOT, target: Path = STUDENT_NOTEBOOKS) -> list[Path]:
    """The chapters to hand out: stripped, without outputs, JupyterLab edition, ``FAST = True``."""
    import lab  # tools/lab.py: the JupyterLab edition (glued numbers as inline expressions)

    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root / "book", target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (target / "instructor.md").unlink(missing_ok=True)
    cites = lab.bibliography(root / "book" / "references.bib")
    written = []
    for path in sorted(target.rglob("*")):
        if path.suffix == ".ipynb":
            nb, _ = strip_notebook(json.loads(path.read_text()), path.stem)
            for cell in nb["cells"]:
                if cell["cell_type"] == "code":
                    cell["outputs"], cell["execution_count"] = [], None
            path.write_text(json.dumps(lab.lab_notebook(nb, cites, fast=True), indent=1, ensure_ascii=False) + "\n")
            written.append(path)
        elif path.suffix == ".md":
            path.write_text(strip_markdown(path.read_text(), path.stem)[0])
    (target / "README.md").write_text(
        "# The student edition of the chapters\n\nWritten by `make student` (tools/build_student.py) from `book/`: "
        "no solutions, no outputs, `FAST = True` (small grids; set it to False for the published runs). "
        "Needs the `dpadmm_lite` library of the same checkout (`pip install -e .`). Do not edit: it is written "
        "anew.\n")
    return written


def build(mode: str = "full", *, source: Path | None = None, out: Path = STUDENT,
          reuse: bool | None = None) -> StudentBuild:
    """Build the student edition from an executed staging copy into ``out``/{stage, html, notebooks}.

    ``source`` defaults to ``_build/stage`` (what ``make book`` executed). ``reuse=None`` reuses it
    when :func:`stale_reasons` finds nothing and builds the book first otherwise; ``reuse=True``
    trusts it (the test suite, right after its own build, into ``_build/test/student``).
    """
    if mode not in CELL_TIMEOUT:
        raise ValueError(f"mode must be one of {sorted(CELL_TIMEOUT)}, got {mode!r}")
    start = time.perf_counter()
    result = StudentBuild(mode, html=Path(out) / "html", notebooks=Path(out) / "notebooks")
    source = STAGE if source is None else Path(source)
    reasons = [] if reuse else stale_reasons(source, mode)
    if reuse is False or reasons:
        print("executing the book first: " + ("; ".join(reasons[:5]) or "asked to"), flush=True)
        built = book.build(mode)
        result.executed = True
        if not built.ok:
            result.log = "the book did not build:\n" + built.site_log[-8000:] + "\n".join(
                f"{n.path}: {n.error}" for n in built.notebooks if not n.ok)
            result.seconds = time.perf_counter() - start
            return result
        source = built.stage
    result.solutions = make_student_stage(source, Path(out) / "stage")
    result.ok, result.log = build_site(mode, Path(out) / "stage", result.html)
    if result.ok:  # the Lite edition without solutions, in the student site's lite/
        try:
            lite.build(result.html, "student")
        except (lite.LiteBuildError, live.LiveBuildError, subprocess.CalledProcessError) as err:
            result.ok, result.log = False, result.log + f"\nthe student Lite edition was not built: {err}"
    if result.ok:
        write_student_notebooks(ROOT, result.notebooks)
    result.seconds = time.perf_counter() - start
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(CELL_TIMEOUT), default="full")
    parser.add_argument("--execute", action="store_true", help="execute the book even if _build/stage is fresh")
    args = parser.parse_args(argv)
    result = build(args.mode, reuse=False if args.execute else None)
    if not result.ok:
        print(result.log[-20000:])
    print(f"{'built' if result.ok else 'FAILED'}: student edition, {len(result.solutions)} solutions removed, "
          f"{result.seconds:.0f} s" + (f" → {result.html} and {result.notebooks}" if result.ok else ""))
    return 0 if result.ok else 1

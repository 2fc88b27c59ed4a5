"""A rebuild with nothing changed executes nothing; a change to anything a notebook reads executes it again."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from build_notebooks import notebook as _notebook

from bookbuild import book, lite, reuse, stage


CHAPTER = """import json, os, pathlib
pathlib.Path('{runs}').open('a').write('chapter\\n')
record = {{'id': 'chapter.claim', 'chapter': 'chapter', 'value': {value}}}
pathlib.Path(os.environ['DPADMM_RESULTS_DIR'], 'chapter.claim.json').write_text(json.dumps(record))
"""
TABLE = """import os, pathlib
pathlib.Path('{runs}').open('a').write('table\\n')
print(sorted(os.listdir(os.environ['DPADMM_RESULTS_DIR'])))
"""


@pytest.fixture
def tiny_book(tmp_path, monkeypatch):
    """A book of two notebooks: a chapter that writes a claim record, and a table (stage 1) that reads it."""
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    runs = tmp_path / "runs.txt"
    chapter, table = root / "book" / "chapter.ipynb", root / "book" / "table.ipynb"
    chapter.write_text(_notebook(CHAPTER.format(runs=runs, value=1)))
    table.write_text(_notebook(TABLE.format(runs=runs), execution_stage=1))
    monkeypatch.setattr(book, "ROOT", root)
    monkeypatch.setattr(stage, "ROOT", root)
    monkeypatch.setattr(book, "toc_notebooks", lambda: [chapter, table])
    monkeypatch.setattr(book, "stage_sources", lambda target: (target / "book").mkdir(parents=True, exist_ok=True))
    monkeypatch.setattr(book, "build_site", lambda mode, staged, html, **options: (True, ""))
    monkeypatch.setattr(book, "_lite_edition", lambda side: {})  # the live panels' files and the Lite edition
    monkeypatch.delenv("DPADMM_RESULTS_DIR", raising=False)

    def build(**kwargs):
        before = runs.read_text().split() if runs.exists() else []
        result = book.build("fast", jobs=1, out=tmp_path / "out", **kwargs)
        assert result.ok, [n.error for n in result.notebooks]
        now = runs.read_text().split()
        return result, now[len(before):]

    return chapter, table, tmp_path / "out", build


def test_a_rebuild_with_nothing_changed_executes_nothing_and_keeps_the_claim_records(tiny_book):
    chapter, table, out, build = tiny_book
    first, executed = build()
    assert executed == ["chapter", "table"] and not any(n.reused for n in first.notebooks)
    second, executed = build()
    assert executed == [] and all(n.reused for n in second.notebooks)
    # the results folder is emptied when a build starts: the reused chapter's record is put back
    assert json.loads((out / "results" / "chapter.claim.json").read_text())["value"] == 1
    assert (out / "stage" / "book" / "table.ipynb").read_bytes() == (out / "executed" / "fast" / "table" /
                                                                      "executed.ipynb").read_bytes()
    # a reused notebook keeps the seconds its execution took, for the next build's schedule
    assert [n.seconds for n in second.notebooks] == pytest.approx([n.seconds for n in first.notebooks], abs=0.1)


def test_a_changed_chapter_executes_again_and_so_does_the_table_that_reads_its_record(tiny_book):
    chapter, table, out, build = tiny_book
    build()
    chapter.write_text(_notebook(CHAPTER.format(runs=out.parent / "runs.txt", value=2)))
    result, executed = build()
    assert executed == ["chapter", "table"]
    assert json.loads((out / "results" / "chapter.claim.json").read_text())["value"] == 2
    _, executed = build(fresh=True)
    assert executed == ["chapter", "table"]


def test_the_key_covers_the_notebook_the_mode_the_library_and_the_records(tmp_path):
    root = tmp_path / "root"
    (root / "dpadmm_lite").mkdir(parents=True)
    (root / "book").mkdir()
    module, notebook, results = root / "dpadmm_lite" / "m.py", root / "book" / "n.ipynb", tmp_path / "results"
    module.write_text("x = 1\n")
    notebook.write_text("{}")
    results.mkdir()
    key = reuse.fingerprint(notebook, "fast", results, root=root)
    assert reuse.fingerprint(notebook, "fast", results, root=root) == key
    assert reuse.fingerprint(notebook, "full", results, root=root) != key
    (root / "dpadmm_lite" / "__pycache__").mkdir()
    (root / "dpadmm_lite" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"cache")
    assert reuse.fingerprint(notebook, "fast", results, root=root) == key  # caches are not inputs
    module.write_text("x = 2\n")
    assert reuse.fingerprint(notebook, "fast", results, root=root) != key
    module.write_text("x = 1\n")
    (root / "book" / "references.bib").write_text("@book{a}")
    assert reuse.fingerprint(notebook, "fast", results, root=root) != key
    (root / "book" / "references.bib").unlink()
    (results / "a.json").write_text("{}")
    assert reuse.fingerprint(notebook, "fast", results, root=root) != key
    assert reuse.fingerprint(notebook, "fast", None, root=root) == reuse.fingerprint(notebook, "fast", None, root=root)


def test_a_failed_notebook_is_not_kept(tiny_book):
    chapter, table, out, build = tiny_book
    chapter.write_text(_notebook("raise RuntimeError('broken')"))
    result = book.build("fast", jobs=1, out=out)
    assert not result.ok
    assert not (out / "executed" / "fast" / "chapter").exists()


def test_a_relative_out_folder_still_collects_the_claim_records(tiny_book, tmp_path, monkeypatch):
    """The kernels run in the book's folder: a relative ``--out`` must not send the records there."""
    chapter, table, out, build = tiny_book
    monkeypatch.chdir(tmp_path)
    result = book.build("fast", jobs=1, out=Path("relative-out"))
    assert result.ok, [n.error for n in result.notebooks]
    assert (tmp_path / "relative-out" / "results" / "chapter.claim.json").exists()
    assert not (chapter.parent / "relative-out").exists()


def test_the_kernels_keep_their_bytecode_in_the_build_folder_and_the_environment_is_restored(tiny_book, monkeypatch):
    """Where PYTHONDONTWRITEBYTECODE is set every kernel compiled every module anew: the build lets its processes
    keep their bytecode, in <out>/pycache (never beside the sources), and gives the caller its environment back."""
    chapter, table, out, build = tiny_book
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    dont_write = sys.dont_write_bytecode
    build()
    assert any((out / "pycache").rglob("*.pyc"))  # the kernels' imports, compiled once and kept
    assert not list(chapter.parent.rglob("*.pyc"))
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in os.environ
    assert sys.dont_write_bytecode == dont_write


def test_the_live_files_and_the_lite_edition_built_beside_the_site_are_moved_into_it(tiny_book, monkeypatch):
    chapter, table, out, build = tiny_book
    sides = []

    def lite_edition(side):  # what live.install and lite.build write, in miniature
        sides.append(side)
        for part in book.SIDE_PARTS:
            (side / part).mkdir(parents=True, exist_ok=True)
            (side / part / "made-beside").write_text(part.as_posix())
        return {"download": 63_100_000}

    def build_site(mode, staged, html, **options):
        assert options == {"live_files": False}  # the site leaves them to the build
        (html / "_static" / "live").mkdir(parents=True)
        (html / "_static" / "live" / "worker.js").write_text("the site's own")  # Sphinx copies it from site_static
        (html / "chapter.html").write_text('<p>Open in JupyterLite (<span class="dpadmm-lite-size">?</span>)</p>')
        return True, ""

    monkeypatch.setattr(book, "_lite_edition", lite_edition)
    monkeypatch.setattr(book, "build_site", build_site)
    build()
    html = out / "html"
    assert sides == [out / ".html.side"]
    assert [(html / part / "made-beside").read_text() for part in book.SIDE_PARTS] == ["_static/live", "lite"]
    assert (html / "_static" / "live" / "worker.js").read_text() == "the site's own"
    assert '<span class="dpadmm-lite-size">63 MB</span>' in (html / "chapter.html").read_text()
    assert not sides[0].exists()


def test_a_failed_lite_edition_fails_the_site(tiny_book, monkeypatch):
    chapter, table, out, build = tiny_book

    def broken(side):
        raise lite.LiteBuildError("jupyter lite build failed: (planted)")

    monkeypatch.setattr(book, "_lite_edition", broken)
    monkeypatch.setattr(book, "build_site", lambda mode, staged, html, **options: (html.mkdir(parents=True), (True, ""))[1])
    result = book.build("fast", jobs=1, out=out)
    assert not result.ok and "(planted)" in result.site_log
    assert not (out / "html").exists()

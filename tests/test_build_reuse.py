"""A rebuild with nothing changed executes nothing; a change to anything a notebook reads executes it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from build_notebooks import notebook as _notebook

from bookbuild import book, reuse, stage


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
    monkeypatch.setattr(book, "build_site", lambda mode, staged, html: (True, ""))
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

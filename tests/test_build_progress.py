"""`make book` shows its progress: chapters running, cells done, elapsed time and an estimate."""

from __future__ import annotations

import json
import queue

import build_book
from bookbuild import stage
from bookbuild import progress as progress_module
from bookbuild.progress import MEASURED, Progress, previous_seconds
from bookbuild.toc import ROOT, toc_notebooks

PATHS = ["book/arena.ipynb", "book/admm.ipynb", "book/xu2020.ipynb"]


def _lines(progress_kwargs, events):
    printed = []
    progress = Progress(PATHS, print_fn=lambda text, flush=True: printed.append(text), **progress_kwargs)
    for event in events:
        progress.update(*event)
    return progress, printed


def test_progress_names_running_chapters_their_cells_and_what_is_done():
    progress, printed = _lines(dict(expected={}, jobs=2, every=0.0), [
        ("book/arena.ipynb", "start"), ("book/admm.ipynb", "start"),
        ("book/arena.ipynb", "cell", 3, 40), ("book/admm.ipynb", "end", True)])
    assert "running arena (cell 3/40), admm" in printed[2]
    assert printed[3] == "finished admm in 0:00"
    assert "1/3 done · running arena (cell 3/40)" in printed[4]
    assert "admm" not in printed[4].split("running")[1]


def test_estimate_comes_from_the_last_build_and_is_shared_among_the_workers():
    expected = {"book/arena.ipynb": 600.0, "book/admm.ipynb": 60.0, "book/xu2020.ipynb": 120.0}
    progress, _ = _lines(dict(expected=expected, jobs=2), [])
    assert progress.seconds_left(progress._start) == (600 + 60 + 120) / 2
    assert "about 6 min left" in progress.line(progress._start)
    progress.update("book/arena.ipynb", "start")
    progress._chapters["book/arena.ipynb"].started -= 500  # arena has run 500 of its 600 s
    assert abs(progress.seconds_left(progress._start) - (100 + 60 + 120) / 2) < 1


def test_without_a_previous_build_the_estimate_follows_the_cells_run():
    progress, _ = _lines(dict(expected={}, jobs=1), [])
    assert progress.seconds_left(progress._start) is None and "estimating" in progress.line()
    for path in PATHS:
        progress.update(path, "start")
        progress._chapters[path].started -= 10
        progress.update(path, "cell", 1, 5)  # 10 s for a fifth: about 40 s to go each
    assert abs(progress.seconds_left(progress._start) - 3 * 40) < 1


def test_previous_seconds_reads_the_same_mode_only(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "MEASURED", tmp_path / "no-such-file.json")
    (tmp_path / "last-build.json").write_text(json.dumps({"mode": "full", "notebooks": [
        {"path": "book/arena.ipynb", "ok": True, "seconds": 652.0},
        {"path": "book/admm.ipynb", "ok": False, "seconds": 3.0}]}))
    assert previous_seconds(tmp_path, "full") == {"book/arena.ipynb": 652.0}
    assert previous_seconds(tmp_path, "fast") == {} and previous_seconds(tmp_path / "none", "full") == {}


def test_a_first_build_schedules_by_the_committed_measurements(tmp_path, monkeypatch):
    """A fresh clone has no last build: without the committed times it ran the chapters in book
    order and the longest (huang2019, 332 s) started third."""
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"full": {"book/huang2019.ipynb": 332.4, "book/admm.ipynb": 12.5}}))
    monkeypatch.setattr(progress_module, "MEASURED", measured)
    assert previous_seconds(tmp_path / "none", "full") == {"book/huang2019.ipynb": 332.4, "book/admm.ipynb": 12.5}
    (tmp_path / "last-build.json").write_text(json.dumps({"mode": "full", "notebooks": [
        {"path": "book/admm.ipynb", "ok": True, "seconds": 20.0}]}))
    assert previous_seconds(tmp_path, "full") == {"book/huang2019.ipynb": 332.4, "book/admm.ipynb": 20.0}
    assert previous_seconds(tmp_path, "fast") == {}


def test_the_committed_measurements_cover_every_notebook():
    committed = json.loads(MEASURED.read_text())
    notebooks = {nb.relative_to(ROOT).as_posix() for nb in toc_notebooks()}
    for mode in ("fast", "full"):
        assert set(committed[mode]) == notebooks, mode
        assert all(seconds > 0 for seconds in committed[mode].values())


def test_a_notebook_run_reports_each_cell_and_keeps_kernel_messages_out_of_the_terminal(tmp_path, monkeypatch,
                                                                                        capfd):
    nb = {"cells": [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]}, "source": "FAST = True",
                     "outputs": [], "execution_count": None},
                    {"cell_type": "code", "id": "w", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": "import sys\nprint('kernel noise', file=sys.__stderr__)\nx = 1"}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    source = tmp_path / "tiny.ipynb"
    source.write_text(json.dumps(nb))
    monkeypatch.setattr(stage, "ROOT", tmp_path)
    reports = queue.Queue()
    log = tmp_path / "logs" / "tiny.log"
    run = build_book.execute_notebook(source, tmp_path / "out.ipynb", "fast", reports, log)
    assert run.ok, run.error
    events = []
    while not reports.empty():
        events.append(reports.get())
    assert events[0] == ("tiny.ipynb", "start") and events[-1] == ("tiny.ipynb", "end", True)
    cells = [e[2:] for e in events if e[1] == "cell"]
    assert cells[-1] == (3, 3) and [c[0] for c in cells] == sorted(c[0] for c in cells)  # parameters, injected, code
    assert "kernel noise" in log.read_text()
    assert "kernel noise" not in capfd.readouterr().err

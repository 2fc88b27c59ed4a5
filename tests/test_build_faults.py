"""Faults during a build (issue 38, part 4): a build killed by a signal and run again finishes
with the same site as an uninterrupted one; a damaged kept execution or sweep cache file is
detected, reported and recomputed.

The kill tests run the real build (:func:`bookbuild.book.build`: staging, papermill with real
kernels, the reuse layer, the results folder, the site swap) on a book of two small notebooks,
in a subprocess of its own process group, and kill that group with SIGKILL (what a cancelled CI
job or a terminal's kill does) at four points: after staging, in the middle of a notebook, while
a kept execution is being stored, and in the middle of writing the site. Jupyter Book itself is
replaced by a small writer that turns every staged notebook's outputs into one page: a real site
build of the whole book takes minutes, and what is tested here is that the build's own files
(stage, results, kept executions, the site folder) are whole after a kill. Each rebuilt site is
compared byte for byte with the one an uninterrupted build writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from build_notebooks import notebook as _notebook

from bookbuild import reuse

from dpadmm_book import sweep

TOOLS = Path(__file__).resolve().parents[1] / "tools"


# The chapter writes its claim record, then (when told to) kills the build in the middle of its run:
# the build's process alone (kill -9 of its pid), so its worker must go with it.
CHAPTER = """import json, os, pathlib, signal, time
pathlib.Path(os.environ['RUNS_LOG']).open('a').write('chapter\\n')
record = {'id': 'chapter.claim', 'chapter': 'chapter', 'value': 41 + 1}
pathlib.Path(os.environ['DPADMM_RESULTS_DIR'], 'chapter.claim.json').write_text(json.dumps(record))
print('the answer is', record['value'])
if os.environ.get('KILL_AT') == 'mid-notebook':
    pathlib.Path(os.environ['RUNS_LOG'] + '.worker').write_text(str(os.getppid()))
    os.kill(int(os.environ['BUILD_PID']), signal.SIGKILL)
    time.sleep(10)
"""
TABLE = """import json, os, pathlib
pathlib.Path(os.environ['RUNS_LOG']).open('a').write('table\\n')
folder = pathlib.Path(os.environ['DPADMM_RESULTS_DIR'])
print({p.name: json.loads(p.read_text())['value'] for p in sorted(folder.glob('*.json'))})
"""

# The build as `make book` runs it, with the book's two notebooks, a stand-in for Jupyter Book, and
# a kill at the point named on the command line (the whole process group, as a terminal's or CI's).
DRIVER = """
import json, os, shutil, signal, sys
from pathlib import Path
sys.path.insert(0, {tools!r})
from bookbuild import book, reuse, stage

root, out, kill_at = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
os.environ["BUILD_PID"] = str(os.getpid())
os.environ["KILL_AT"] = kill_at
notebooks = [root / "book" / "chapter.ipynb", root / "book" / "table.ipynb"]


def die():
    sys.stdout.flush()
    os.killpg(os.getpgid(0), signal.SIGKILL)


def stage_sources(target):
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root / "book", target / "book")
    if kill_at == "after-staging":
        die()


def build_site(mode, staged, html, **options):
    if html.exists():
        shutil.rmtree(html)
    html.mkdir(parents=True)
    for i, notebook in enumerate(sorted((staged / "book").glob("*.ipynb"))):
        cells = json.loads(notebook.read_text())["cells"]
        text = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
        (html / (notebook.stem + ".html")).write_text("<pre>" + text + "</pre>")
        if kill_at == "mid-site" and i == 0:
            die()
    return True, ""


original_write = reuse.write_atomic


def write_atomic(path, data):
    if kill_at == "mid-store" and Path(path).name == "meta.json" and Path(path).parent.name == "chapter":
        die()  # the chapter's executed copy is kept, its meta.json not yet
    original_write(path, data)


book.ROOT = stage.ROOT = root
book.toc_notebooks = lambda: notebooks
book.stage_sources = stage_sources
book.build_site = build_site
book._lite_edition = lambda side: dict()  # the live panels' files and the Lite edition are test_lite.py's
reuse.write_atomic = write_atomic
result = book.build("fast", jobs=1, out=out)
sys.exit(0 if result.ok else 1)
"""


@pytest.fixture(scope="module")
def tiny_book(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults") / "root"
    (root / "book").mkdir(parents=True)
    (root / "book" / "chapter.ipynb").write_text(_notebook(CHAPTER))
    (root / "book" / "table.ipynb").write_text(_notebook(TABLE, execution_stage=1))
    driver = root.parent / "driver.py"
    driver.write_text(DRIVER.format(tools=str(TOOLS)))
    return root, driver


def _build(tiny_book, out: Path, kill_at: str = "none") -> tuple[subprocess.CompletedProcess, list[str]]:
    root, driver = tiny_book
    runs = out.parent / f"{out.name}.runs"
    before = runs.read_text().split() if runs.exists() else []
    env = {**os.environ, "RUNS_LOG": str(runs)}
    env.pop("DPADMM_RESULTS_DIR", None)
    # output to a file, not a pipe: a kernel the kill orphaned (it lives in a session of its own
    # and exits when it sees its parent gone) must not hold the test until it does
    log = out.parent / f"{out.name}.{kill_at}.log"
    with open(log, "w") as sink:
        code = subprocess.run([sys.executable, str(driver), str(root), str(out), kill_at], stdout=sink,
                              stderr=subprocess.STDOUT, env=env, timeout=600, start_new_session=True).returncode
    executed = runs.read_text().split() if runs.exists() else []
    return subprocess.CompletedProcess([], code, log.read_text(), ""), executed[len(before):]


def _gone(pid: int, seconds: float = 10.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie nobody reaped yet) within ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return True
        if "\nState:\tZ" in state:
            return True
        time.sleep(0.1)
    return False


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _outputs(notebook: Path) -> list:
    """A staged notebook's cells and outputs (not papermill's timing metadata)."""
    return [(c["source"], c.get("outputs")) for c in json.loads(notebook.read_text())["cells"]]


@pytest.fixture(scope="module")
def reference(tiny_book, tmp_path_factory):
    """What an uninterrupted build writes."""
    out = tmp_path_factory.mktemp("reference") / "out"
    done, executed = _build(tiny_book, out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert executed == ["chapter", "table"]
    assert (out / "html" / "chapter.html").read_text() == "<pre>the answer is 42\n</pre>"
    return out


@pytest.mark.parametrize("kill_at, executed_when_killed, executed_again", [
    ("after-staging", [], ["chapter", "table"]),
    ("mid-notebook", ["chapter"], ["chapter", "table"]),
    ("mid-store", ["chapter"], ["chapter", "table"]),  # the chapter's kept copy has no meta.json: not reused
    ("mid-site", ["chapter", "table"], []),  # both kept whole before the site: reused
])
def test_a_build_killed_and_run_again_gives_the_same_site(tiny_book, reference, tmp_path, kill_at,
                                                        executed_when_killed, executed_again):
    out = tmp_path / "out"
    killed, executed = _build(tiny_book, out, kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stdout[-3000:] + killed.stderr[-3000:]
    assert executed == executed_when_killed
    assert not (out / "html").exists()  # never half a site
    if kill_at == "mid-notebook":  # the build's process alone was killed: its notebook's worker went with it
        worker = int(Path(f"{out.parent / out.name}.runs.worker").read_text())
        assert _gone(worker), f"the worker {worker} of the killed build is still running"
    if kill_at == "mid-site":
        assert _tree(out / ".html.partial") == {"chapter.html": _tree(reference / "html")["chapter.html"]}
    again, executed = _build(tiny_book, out)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert executed == executed_again
    assert _tree(out / "html") == _tree(reference / "html")
    assert _tree(out / "results") == _tree(reference / "results")
    for name in ("chapter", "table"):
        assert _outputs(out / "stage" / "book" / f"{name}.ipynb") == _outputs(reference / "stage" / "book" /
                                                                              f"{name}.ipynb")
    assert not (out / ".html.partial").exists() and json.loads((out / "last-build.json").read_text())["ok"]
    if kill_at == "mid-store":  # and once more: the entry the kill left is whole now, nothing executes
        third, executed = _build(tiny_book, out)
        assert third.returncode == 0 and executed == [] and _tree(out / "html") == _tree(reference / "html")


# ---------------------------------------------------------------------- damaged kept executions
@pytest.fixture
def kept(tmp_path):
    """A kept execution of a chapter with one claim record (the reuse layer alone: no kernel)."""
    source = tmp_path / "book" / "chapter.ipynb"
    source.parent.mkdir()
    source.write_text("{}")
    target, results = tmp_path / "stage" / "chapter.ipynb", tmp_path / "results"
    target.parent.mkdir()
    results.mkdir()
    target.write_text(json.dumps({"cells": [{"outputs": ["x" * 1000]}]}))
    (results / "chapter.claim.json").write_text(json.dumps({"chapter": "chapter", "value": 42}))
    (results / "other.claim.json").write_text(json.dumps({"chapter": "other", "value": 1}))
    out = tmp_path / "out"
    reuse.store(out, "fast", source, "key", target, results, 3.0)
    entry = reuse.cache_dir(out, "fast") / "chapter"
    assert sorted(p.name for p in entry.rglob("*") if p.is_file()) == ["chapter.claim.json", "executed.ipynb",
                                                                       "meta.json"]
    return out, source, target, results, entry


def test_a_whole_kept_execution_is_restored(kept):
    out, source, target, results, entry = kept
    expected = target.read_bytes()
    target.unlink()
    shutil.rmtree(results)
    results.mkdir()
    assert reuse.restore(out, "fast", source, "key", target, results) == 3.0
    assert target.read_bytes() == expected
    assert json.loads((results / "chapter.claim.json").read_text())["value"] == 42
    assert not (results / "other.claim.json").exists()
    assert reuse.restore(out, "fast", source, "another key", target, results) is None and entry.exists()


@pytest.mark.parametrize("damage", ["truncated notebook", "truncated record", "missing record", "garbage meta",
                                    "half-written meta", "meta of an older build"])
def test_a_damaged_kept_execution_is_reported_deleted_and_executed_again(kept, capsys, damage):
    out, source, target, results, entry = kept
    notebook, record, meta = entry / "executed.ipynb", entry / "records" / "chapter.claim.json", entry / "meta.json"
    if damage == "truncated notebook":
        notebook.write_bytes(notebook.read_bytes()[:100])
    elif damage == "truncated record":
        record.write_bytes(record.read_bytes()[:10])
    elif damage == "missing record":
        record.unlink()
    elif damage == "garbage meta":
        meta.write_bytes(b"\x00\x01not json")
    elif damage == "half-written meta":
        meta.write_bytes(meta.read_bytes()[:20])
    else:
        meta.write_text(json.dumps({"key": "key", "seconds": 3.0}))  # no digests: cannot be checked
    target.unlink()
    assert reuse.restore(out, "fast", source, "key", target, results) is None
    assert "kept execution of chapter.ipynb is damaged" in capsys.readouterr().out
    assert not entry.exists() and not target.exists()


def test_a_store_interrupted_before_its_meta_is_never_reused(kept, monkeypatch):
    out, source, target, results, entry = kept
    real = reuse.write_atomic

    def interrupted(path, data):
        if Path(path).name == "meta.json":
            raise KeyboardInterrupt  # Ctrl-C between the files and the meta
        real(path, data)

    monkeypatch.setattr(reuse, "write_atomic", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reuse.store(out, "fast", source, "key", target, results, 3.0)
    assert (entry / "executed.ipynb").exists() and not (entry / "meta.json").exists()
    assert reuse.restore(out, "fast", source, "key", target, results) is None


def test_write_atomic_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "last-build.json"
    reuse.write_atomic(path, "old")

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        reuse.write_atomic(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["last-build.json"]


# ---------------------------------------------------------------------- damaged sweep cache files
def _counted(log: Path, offset: float = 0.0):
    def task(epsilon, seed):
        with open(log, "a") as file:
            file.write("run\n")
        return {"gap": 1 / epsilon + offset, "seed_seen": seed}
    return task


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_truncated_parquet_file_named_by_its_own_digest_is_detected_reported_and_recomputed(cache, tmp_path):
    """The digest in the name matches the truncated bytes (a writer that hashed what it had):
    the digest check passes, the Parquet parse must not."""
    log = tmp_path / "calls"
    task = _counted(log)
    grid = {"epsilon": [0.5, 2.0]}
    first = sweep.grid(task, grid, name="t", progress=False)
    (path,) = cache.glob("*.parquet")
    data = path.read_bytes()[: len(path.read_bytes()) // 2]
    stem = path.name.rsplit(".", 2)[0]
    path.unlink()
    damaged = cache / f"{stem}.{hashlib.sha256(data).hexdigest()[:sweep.DIGEST_LENGTH]}.parquet"
    damaged.write_bytes(data)
    with pytest.warns(sweep.CacheWarning, match=r"rejected: it does not parse as Parquet"):
        again = sweep.grid(task, grid, name="t", progress=False)
    assert _calls(log) == 4
    pd.testing.assert_frame_equal(first, again)
    assert not damaged.exists() and len(list(cache.glob("*.parquet"))) == 1


def test_a_truncated_current_file_is_recomputed_not_replaced_by_a_stale_entry(cache, tmp_path):
    """The folder holds an intact file of an older version of the sweep (another key: other
    numbers) and a truncated one of the current key: the result is recomputed, never the stale one."""
    log = tmp_path / "calls"
    grid = {"epsilon": [0.5, 2.0]}
    stale = _counted(log, offset=100.0)
    sweep.grid(stale, grid, name="t", progress=False)  # an older version of the sweep, kept (used by this process)
    current = _counted(log)
    fresh = sweep.grid(current, grid, name="t", progress=False)
    files = sorted(cache.glob("*.parquet"))
    assert len(files) == 2
    key = sweep.cache_key(current, grid, name="t")
    (mine,) = [p for p in files if key[:sweep.KEY_LENGTH] in p.name]
    mine.write_bytes(mine.read_bytes()[:-50])
    calls = _calls(log)
    with pytest.warns(sweep.CacheWarning, match="rejected"):
        again = sweep.grid(current, grid, name="t", progress=False)
    assert _calls(log) == calls + 2
    pd.testing.assert_frame_equal(fresh, again)
    assert (again["gap"] < 100).all()


SWEEP_DRIVER = """
import os, signal, sys
from dpadmm_book import sweep

def task(epsilon, seed):
    with open({log!r}, "a") as file:
        file.write("run\\n")
    return {{"gap": 1 / epsilon}}

if sys.argv[1] == "kill":  # killed between writing the temporary file and renaming it into place
    sweep.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
print(sweep.grid(task, {{"epsilon": [0.5, 2.0]}}, name="killed", progress=False)["gap"].tolist())
"""


def test_a_sweep_killed_while_writing_its_cache_file_is_recomputed(cache, tmp_path):
    log = tmp_path / "calls"
    script = SWEEP_DRIVER.format(log=str(log))
    env = {**os.environ, "DPADMM_CACHE": str(cache)}
    killed = subprocess.run([sys.executable, "-c", script, "kill"], capture_output=True, text=True, env=env,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL and _calls(log) == 2
    assert not list(cache.glob("*.parquet")) and len(list(cache.glob(".*.tmp"))) == 1  # whole, never read
    again = subprocess.run([sys.executable, "-c", script, "run"], capture_output=True, text=True, env=env,
                           timeout=300)
    assert again.returncode == 0 and "CacheWarning" not in again.stderr, again.stderr[-3000:]
    assert again.stdout.strip().splitlines()[-1] == "[2.0, 0.5]" and _calls(log) == 4
    assert len(list(cache.glob("*.parquet"))) == 1

"""Build the book: execute every notebook with papermill, then run Jupyter Book on the result.

One execution engine for the tests and the published site: the notebooks listed in
``_toc.yml`` are executed by papermill (``FAST=True`` for the test suite, ``FAST=False`` for the
published book) into a staging copy of the book, and Jupyter Book builds the site from that
copy with execution switched off and warnings as errors. The site's JavaScript (Vega, MathJax)
is copied from Python packages into ``site_static/vendor`` of the staging copy (served as
``_static/vendor``), so the site needs no other host.

    python tools/build_book.py --mode full                      # what `make book` runs: _build/html
    python tools/build_book.py --mode fast --out _build/test    # what the test suite runs

A build writes ``<out>/stage`` (executed sources) and ``<out>/html`` (the site, with its JupyterLite
edition in ``<out>/html/lite``, :mod:`.lite`); ``out`` is
``_build`` by default. The test suite builds into ``_build/test`` so that ``make test`` never
overwrites the full book ``make book`` built in ``_build/html``.

**A build killed at any point** (Ctrl-C, a CI job cancelled, ``kill``) and run again finishes
with the same site as an uninterrupted build. The staging copy and the results folder are made
afresh by every build; a kept execution is reused only when it is whole (:mod:`.reuse`: files
written atomically, ``meta.json`` last, digests checked); a cached sweep only when its file is
whole (:mod:`dpadmm_book.sweep`). The site is built into ``<out>/.html.partial`` and swapped into
``<out>/html`` when complete, so a build killed mid-site leaves the previous site (or none),
never half of one; ``last-build.json`` is written atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing.managers import SyncManager
from dataclasses import dataclass, field
from pathlib import Path

from . import lite, live, reuse
from .progress import Progress, previous_seconds
from .site import build_site
from .stage import CELL_TIMEOUT, NotebookRun, execute_notebook, execution_stage, results_dir, stage_sources
from .toc import BUILD, HTML, ROOT, STAGE, toc_notebooks


@dataclass
class BuildResult:
    mode: str
    notebooks: list[NotebookRun] = field(default_factory=list)
    site_ok: bool = False
    site_log: str = ""
    seconds: float = 0.0
    stage: Path = STAGE  # executed sources of this build
    html: Path = HTML    # the site this build wrote

    @property
    def ok(self) -> bool:
        return self.site_ok and all(n.ok for n in self.notebooks)


def build(mode: str, *, jobs: int = 2, out: Path | None = None, fresh: bool = False) -> BuildResult:
    """Execute every notebook of the TOC with papermill in ``mode`` and build ``<out>/html``.

    ``out`` defaults to ``_build`` (the published book, ``_build/html``); the test suite passes
    ``TEST_OUT``. A notebook whose inputs did not change since it last executed successfully in
    this ``out`` and ``mode`` is not executed again: its kept execution is reused
    (:mod:`.reuse`); ``fresh=True`` executes every notebook.
    """
    if mode not in CELL_TIMEOUT:
        raise ValueError(f"mode must be one of {sorted(CELL_TIMEOUT)}, got {mode!r}")
    out = Path(out).resolve() if out is not None else BUILD  # the kernels run in book/: no relative paths
    with _bytecode_kept(out / "pycache"):
        return _build(mode, jobs, out, fresh)


def _build(mode: str, jobs: int, out: Path, fresh: bool) -> BuildResult:
    os.environ.setdefault("DPADMM_CACHE", str(BUILD / "cache" / mode))
    results = results_dir(out)
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    previous_results = os.environ.get("DPADMM_RESULTS_DIR")
    os.environ["DPADMM_RESULTS_DIR"] = str(results)  # inherited by the workers and their kernels
    start = time.perf_counter()
    result = BuildResult(mode, stage=out / "stage", html=out / "html")
    notebooks = toc_notebooks()
    stages = [execution_stage(nb) for nb in notebooks]
    stage_sources(result.stage)
    targets = [result.stage / nb.relative_to(ROOT) for nb in notebooks]
    paths = [nb.relative_to(ROOT).as_posix() for nb in notebooks]
    logs = [out / "logs" / f"{nb.stem}.log" for nb in notebooks]
    for log in logs:
        log.unlink(missing_ok=True)
    expected = previous_seconds(out, mode)
    runs: dict[int, NotebookRun] = {}
    manager = SyncManager()
    manager.start(_die_with_parent)
    reports = manager.Queue()
    progress = Progress(paths, expected, jobs)
    print(f"executing {len(notebooks)} notebooks ({mode} mode, {jobs} at a time); the kernels' messages go to "
          f"{out / 'logs'}", flush=True)
    reader = progress.follow(reports)
    side = ThreadPoolExecutor(max_workers=1)  # the live panels' files and the Lite edition (_lite_edition)
    lite_job = None
    try:
        with ProcessPoolExecutor(max_workers=max(1, jobs), initializer=_die_with_parent) as pool:
            for stage in sorted(set(stages)):
                if stage == max(stages):  # the last notebooks leave a core free: build them there, beside
                    lite_job = side.submit(_lite_edition, _side_of(result.html))
                # the longest notebooks first (by the last build's times), so none starts last and runs alone
                batch = sorted((i for i, s in enumerate(stages) if s == stage),
                               key=lambda i: -expected.get(paths[i], 0.0))
                # a later stage reads the claim records of the earlier ones: they are its inputs too
                keys = {i: reuse.fingerprint(notebooks[i], mode, results if stage > 0 else None) for i in batch}
                for i in batch if not fresh else ():
                    seconds = reuse.restore(out, mode, notebooks[i], keys[i], targets[i], results)
                    if seconds is not None:
                        runs[i] = NotebookRun(paths[i], True, seconds, reused=True)
                        reports.put((paths[i], "reused"))
                todo = [i for i in batch if i not in runs]
                done = pool.map(execute_notebook, [notebooks[i] for i in todo], [targets[i] for i in todo],
                                [mode] * len(todo), [reports] * len(todo), [logs[i] for i in todo])
                for i, run in zip(todo, done):
                    runs[i] = run
                    if run.ok:
                        reuse.store(out, mode, notebooks[i], keys[i], targets[i], results, run.seconds)
    finally:
        reports.put(None)
        reader.join(timeout=5)
        manager.shutdown()
        side.shutdown(wait=False)  # a failed build does not wait for it here (the site is not built)
        if previous_results is None:
            os.environ.pop("DPADMM_RESULTS_DIR", None)
        else:
            os.environ["DPADMM_RESULTS_DIR"] = previous_results
    result.notebooks = [runs[i] for i in range(len(notebooks))]
    for run, log in zip(result.notebooks, logs):
        took = f"reused: executed in {run.seconds:.1f} s before" if run.reused else f"{run.seconds:.1f} s"
        print(f"[{'ok' if run.ok else 'FAILED'}] {run.path} ({took}) {run.error}", flush=True)
        if not run.ok and log.exists():
            print(f"  the kernel's messages: {log}", flush=True)
    if all(n.ok for n in result.notebooks):
        result.site_ok, result.site_log = _build_site_whole(mode, result.stage, result.html, lite_job)
    else:
        result.site_log = "site not built: a notebook failed"
    result.seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    reuse.write_atomic(out / "last-build.json", json.dumps({
        "mode": mode, "ok": result.ok, "seconds": round(result.seconds, 1),
        "notebooks": [n.__dict__ for n in result.notebooks],
    }, indent=1))
    return result


def _die_with_parent() -> None:
    """In a worker of the build (a notebook's executor, the progress queue's manager): be killed
    when the build process dies (Linux ``PR_SET_PDEATHSIG``), so that a build killed alone
    (``kill -9`` of its process) leaves no worker writing into the folders of the next build.
    A notebook's kernel exits by itself when its worker is gone (ipykernel's parent poller)."""
    with contextlib.suppress(Exception):  # elsewhere: a killed build's workers finish their notebook
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


@contextlib.contextmanager
def _bytecode_kept(prefix: Path):
    """Inside the block, the processes the build starts (its workers, the notebooks' kernels, Jupyter Book)
    keep the bytecode they compile, in ``prefix`` (``PYTHONPYCACHEPREFIX``: nothing is written beside the
    sources); a prefix the user set is kept. Restored on the way out.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine's default) every process would compile every module
    it imports anew, and the imports of a chapter's first cell would pay that again in each of the nine kernels,
    Jupyter Book and the JupyterLite build; kept bytecode lets all of them share one compilation.
    """
    saved = {name: os.environ.get(name) for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    saved_flags = sys.dont_write_bytecode, sys.pycache_prefix
    prefix.mkdir(parents=True, exist_ok=True)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(prefix))
    # the workers are forked from this process: its flags are theirs
    sys.dont_write_bytecode, sys.pycache_prefix = False, os.environ["PYTHONPYCACHEPREFIX"]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sys.dont_write_bytecode, sys.pycache_prefix = saved_flags


def _side_of(html: Path) -> Path:
    """Where :func:`_lite_edition` builds for the site ``html``: ``.<html>.side`` beside it."""
    return html.with_name(f".{html.name}.side")


#: What :func:`_lite_edition` builds, as paths inside a site.
SIDE_PARTS = (Path("_static") / "live", Path(lite.LITE))


def _lite_edition(side: Path) -> dict:
    """The "Run live" panels' files (:func:`live.install`) and the JupyterLite edition (:func:`lite.build`) in
    the folder ``side`` (emptied first), to be moved into the site (:data:`SIDE_PARTS`).

    Both read the sources and the library, never an execution, so the build makes them on the core
    that its last notebooks and Jupyter Book (one process each) leave free, instead of after them."""
    shutil.rmtree(side, ignore_errors=True)
    side.mkdir(parents=True)
    live.install(side)
    return lite.build(side, "book")


def _build_site_whole(mode: str, stage: Path, html: Path, lite_job: Future) -> tuple[bool, str]:
    """:func:`build_site` into ``<html>.partial`` beside ``html``, with what ``lite_job`` built
    (:func:`_lite_edition`), then swapped into place: a build killed on the way leaves the previous
    site, never half of one."""
    partial = html.with_name(f".{html.name}.partial")
    previous = html.with_name(f".{html.name}.previous")
    for leftover in (partial, previous):  # a killed build's
        shutil.rmtree(leftover, ignore_errors=True)
    side = _side_of(html)
    ok, log = build_site(mode, stage, partial, live_files=False)
    built = {}
    if ok and partial.exists():  # the live panels' files and the JupyterLite edition, into the site before the swap
        try:
            built = lite_job.result()
        except (lite.LiteBuildError, live.LiveBuildError, subprocess.CalledProcessError) as err:
            ok, log = False, log + f"\nthe live panels' files or the Lite edition were not built: {err}"
    if ok and partial.exists():
        for part in SIDE_PARTS:  # entry by entry: the site's own _static/live (live.js, worker.js) stays
            if (side / part).exists():
                (partial / part).mkdir(parents=True, exist_ok=True)
                for entry in (side / part).iterdir():
                    target = partial / part / entry.name
                    if target.is_dir():
                        shutil.rmtree(target)
                    os.replace(entry, target)
        if "download" in built:
            lite.label_pages(partial, built["download"])
    if lite_job.done():  # else still writing (the site failed first): the next build empties it
        shutil.rmtree(side, ignore_errors=True)
    if not ok or not partial.exists():
        shutil.rmtree(partial, ignore_errors=True)
        return ok, log
    with contextlib.suppress(FileNotFoundError):
        os.replace(html, previous)  # two renames: killed between them, there is no html (and no half one)
    os.replace(partial, html)
    shutil.rmtree(previous, ignore_errors=True)
    return ok, log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(CELL_TIMEOUT), default="full")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--out", type=Path, default=BUILD, help="build into OUT/stage and OUT/html (default _build)")
    parser.add_argument("--fresh", action="store_true", help="execute every notebook (reuse no kept execution)")
    args = parser.parse_args(argv)
    result = build(args.mode, jobs=args.jobs, out=args.out, fresh=args.fresh)
    if not result.site_ok:
        print(result.site_log[-20000:])
    print(f"{'built' if result.ok else 'FAILED'}: {len(result.notebooks)} notebooks, {result.seconds:.0f} s"
          + (f" → {result.html}" if result.ok else ""))
    return 0 if result.ok else 1

"""What `make book` shows while it runs: which chapters are running, how far along, the time.

Each notebook runs in a worker process under papermill with the engine of this module, which
reports every finished cell on a queue; the build's main process reads the queue and prints one
line when a chapter starts or finishes and at most every ``every`` seconds in between::

    [ 3:05 | about N min left] 4/11 done · running arena (cell 23/61), huang2019 (cell 40/52)

The estimate comes from the previous build of the same mode (``<out>/last-build.json``: seconds
per notebook); for a notebook without one, from the share of its cells already run. The kernels'
own warnings go to ``<out>/logs/<chapter>.log`` instead of the terminal.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from papermill.engines import NBClientEngine, papermill_engines

#: The papermill engine name of :class:`ProgressEngine`.
ENGINE = "dpadmm-progress"


class ProgressEngine(NBClientEngine):
    """papermill's nbclient engine, reporting ``(notebook, "cell", done, total)`` on ``progress``."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, progress=None, progress_name="", **kwargs):
        if progress is not None:
            code = [i for i, c in enumerate(nb_man.nb.cells) if c.cell_type == "code"]
            finish = nb_man.cell_complete

            def cell_complete(cell, cell_index=None, **kw):
                finish(cell, cell_index=cell_index, **kw)
                progress.put((progress_name, "cell", sum(1 for i in code if i <= (cell_index or 0)), len(code)))

            nb_man.cell_complete = cell_complete
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)


papermill_engines.register(ENGINE, ProgressEngine)


#: Seconds per notebook and mode measured by a build of a fresh clone on an idle 2-core machine
#: (benchmarks/book_build.py; the fast ones from CI's test build): the first build's schedule and
#: estimate, before ``last-build.json`` exists.
MEASURED = Path(__file__).with_name("expected-seconds.json")


def previous_seconds(out: Path, mode: str) -> dict[str, float]:
    """Seconds per notebook of the last build into ``out`` in the same mode; for a notebook that
    build does not list (or with no build yet), the seconds in :data:`MEASURED`."""
    try:
        measured = {path: float(s) for path, s in json.loads(MEASURED.read_text()).get(mode, {}).items()}
    except (OSError, ValueError):
        measured = {}
    try:
        last = json.loads((Path(out) / "last-build.json").read_text())
    except (OSError, ValueError):
        return measured
    if last.get("mode") != mode:
        return measured
    return {**measured, **{n["path"]: float(n["seconds"]) for n in last.get("notebooks", []) if n.get("ok")}}


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


@dataclass
class _Chapter:
    expected: float | None
    started: float | None = None
    finished: float | None = None
    cells: tuple[int, int] = (0, 0)


@dataclass
class Progress:
    """Reads the workers' reports and prints the build's progress (see the module docstring)."""

    paths: list[str]
    expected: dict[str, float]
    jobs: int
    every: float = 15.0
    print_fn: callable = print
    queue: object = None
    _chapters: dict[str, _Chapter] = field(default_factory=dict)
    _start: float = field(default_factory=time.perf_counter)
    _last_line: float = 0.0

    def __post_init__(self):
        self._chapters = {p: _Chapter(self.expected.get(p)) for p in self.paths}

    def name(self, path: str) -> str:
        return Path(path).stem

    def seconds_left(self, now: float) -> float | None:
        """Work left (seconds of one worker) divided among the workers; ``None`` without a basis."""
        known = [c.expected for c in self._chapters.values() if c.expected]
        typical = sum(known) / len(known) if known else None
        left = 0.0
        for c in self._chapters.values():
            if c.finished is not None:
                continue
            ran = now - c.started if c.started is not None else 0.0
            done, total = c.cells
            if c.expected:
                left += max(c.expected - ran, 0.0)
            elif c.started is not None and total and done:
                left += ran * (total - done) / done
            elif typical is not None:
                left += typical
            else:
                return None
        return left / max(1, min(self.jobs, sum(c.finished is None for c in self._chapters.values()) or 1))

    def line(self, now: float | None = None) -> str:
        now = time.perf_counter() if now is None else now
        elapsed = now - self._start
        left = self.seconds_left(now)
        estimate = f"about {max(1, round(left / 60))} min left" if left is not None else "estimating"
        done = sum(c.finished is not None for c in self._chapters.values())
        running = [f"{self.name(p)} (cell {c.cells[0]}/{c.cells[1]})" if c.cells[1] else self.name(p)
                   for p, c in self._chapters.items() if c.started is not None and c.finished is None]
        text = f"[{_clock(elapsed):>5} | {estimate}] {done}/{len(self._chapters)} done"
        return text + (" · running " + ", ".join(running) if running else "")

    def update(self, path: str, kind: str, *values) -> None:
        chapter = self._chapters[path]
        now = time.perf_counter()
        if kind == "start":
            chapter.started = now
        elif kind == "cell":
            chapter.cells = (int(values[0]), int(values[1]))
            if now - self._last_line < self.every:
                return
        elif kind == "reused":  # nothing it reads changed since it last executed (bookbuild.reuse)
            chapter.started = chapter.finished = now
            self.print_fn(f"reused {self.name(path)}: nothing it reads changed since it last executed", flush=True)
        elif kind == "end":
            chapter.finished = now
            ok = values[0] if values else True
            self.print_fn(f"{'finished' if ok else 'FAILED'} {self.name(path)} in {_clock(now - (chapter.started or now))}",
                          flush=True)
        self._last_line = now
        self.print_fn(self.line(now), flush=True)

    def follow(self, reports) -> threading.Thread:
        """Read ``reports`` (a queue of ``(path, kind, *values)``) in a thread until ``None``."""

        def run():
            while True:
                try:
                    item = reports.get(timeout=self.every)
                except queue.Empty:
                    self.print_fn(self.line(), flush=True)
                    continue
                if item is None:
                    return
                self.update(*item)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

"""Timing helper shared by the benchmark scripts (run them with `make bench`)."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def best_time(f: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls of ``f`` in seconds, after one warm-up call."""
    f()  # warm caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def median_ms(f: Callable[[], object], repeat: int = 7) -> tuple[float, float]:
    """Median wall time and median CPU time (this process) of ``repeat`` calls of ``f``, in ms,
    after one warm-up call.

    On a shared machine the wall time includes waiting for a core; the CPU time is what a
    single-threaded call costs alone — the better guide to an idle machine.
    """
    f()  # warm caches: imports, calibration caches, reference optima
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)

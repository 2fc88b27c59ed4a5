"""Timing helper shared by the benchmark scripts (run them with `make bench`)."""

from __future__ import annotations

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

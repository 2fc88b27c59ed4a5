"""How the process's C library keeps freed memory: glibc's malloc thresholds, set once.

A leaf module (it imports nothing of the library) so that a Dask worker (:func:`dpadmm_book.sweep.prepare_worker`)
and the network algorithms' shared products (:func:`dpadmm_lite.algorithms.zhang2017_perturbation.share_products`) set
the same thresholds without importing each other.
"""

from __future__ import annotations

import sys

#: glibc ``mallopt`` parameters and the values set: the ceilings glibc's own dynamic thresholds
#: reach on 64-bit Linux (an mmap threshold of 32 MiB, trimming above twice that).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 64 * 2**20
_DONE: list[bool] = []


def keep_freed_memory() -> bool:
    """Set glibc's mmap threshold to :data:`MMAP_THRESHOLD` and its trim threshold to
    :data:`TRIM_THRESHOLD` for the whole process (once): freed numpy buffers of up to 64 MiB per
    malloc arena are reused instead of unmapped and faulted in afresh. Returns whether they were
    set (``False`` off glibc, where nothing changes)."""
    if not _DONE:
        done = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                mallopt = ctypes.CDLL(None).mallopt  # the process's C library
                mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            except (OSError, AttributeError):  # pragma: no cover - a libc without mallopt
                pass
            else:
                done = (mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                        and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
        _DONE.append(done)
    return _DONE[0]

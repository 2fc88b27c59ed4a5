"""One BLAS thread while an algorithm runs: the one place every algorithm module takes it from.

An iteration is a chain of small, memory-bound products (``X x``, ``rᵀX``, ``A x``, batched agent
products); OpenBLAS threads only add wake-up latency between them, and on a busy 2-core machine
they stall between the products. The controller of the loaded BLAS libraries is made once and
reused: ``threadpool_limits(...)`` scans every library at each call, a cost of the order of a small
live re-run.
"""

from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread", "one_blas_thread"]

_CONTROLLER: list = []  # made at the first run


def single_blas_thread():
    """Context manager: BLAS limited to one thread inside the ``with`` block."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def one_blas_thread(function):
    """Decorator: run ``function`` inside :func:`single_blas_thread`."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with single_blas_thread():
            return function(*args, **kwargs)

    return wrapper

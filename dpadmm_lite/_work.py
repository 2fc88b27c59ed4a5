"""Counted work: the data products, factorizations and solves an algorithm does, counted as it does them.

:func:`counting` opens a count (:func:`dpadmm_lite.run` opens one around every run and stores it in
``Trace.work``), :func:`count_work` adds to every open count, :func:`paused` counts nothing (evaluation,
reference solves). The products with the training data count themselves where they are made
(:mod:`dpadmm_lite.problems`' methods and agents, the algorithms' stacked products); see the module notes
of :mod:`dpadmm_lite.problems` for what is counted. Every name here is importable from there too.
"""

from __future__ import annotations

import contextlib
import contextvars

#: What :func:`counting` counts: rows read by products with the data (``data_passes`` = rows / n in a
#: trace), factorizations (or inversions) of d × d matrices, and linear solves with them.
WORK_KINDS = ("rows", "factorizations", "solves")
_COUNTERS: contextvars.ContextVar[tuple] = contextvars.ContextVar("dpadmm_work", default=())


@contextlib.contextmanager
def counting():
    """Count the data products, factorizations and solves done inside the block (in this thread):
    yields a dict ``{"rows", "factorizations", "solves"}`` of integers, filled as the work happens.
    Nested blocks each count everything done inside them."""
    counts = dict.fromkeys(WORK_KINDS, 0)
    token = _COUNTERS.set(_COUNTERS.get() + (counts,))
    try:
        yield counts
    finally:
        _COUNTERS.reset(token)


@contextlib.contextmanager
def paused():
    """Count nothing inside the block (evaluation, reference solves: not an algorithm's work)."""
    token = _COUNTERS.set(())
    try:
        yield
    finally:
        _COUNTERS.reset(token)


def count_work(rows: int = 0, factorizations: int = 0, solves: int = 0) -> None:
    """Add work to every open :func:`counting` block (nothing when none is open).

    Parameters
    ----------
    rows : int, default 0
        Rows of the training data read by a product.
    factorizations : int, default 0
        Factorizations of d × d matrices.
    solves : int, default 0
        Solves with d × d matrices.
    """
    for counts in _COUNTERS.get():
        counts["rows"] += int(rows)
        counts["factorizations"] += int(factorizations)
        counts["solves"] += int(solves)


def work_summary(counts, n: int) -> dict:
    """A run's counts as ``Trace.work``: ``data_passes`` (rows read / n: one product with every
    record's row is one pass), ``factorizations`` and ``solves``.

    Parameters
    ----------
    counts : mapping
        The counts of a :func:`counting` block: ``rows``, ``factorizations``, ``solves``.
    n : int
        Number of training records.

    Returns
    -------
    dict
        ``data_passes`` (float), ``factorizations`` and ``solves`` (int).
    """
    return {"data_passes": counts["rows"] / n, "factorizations": int(counts["factorizations"]),
            "solves": int(counts["solves"])}

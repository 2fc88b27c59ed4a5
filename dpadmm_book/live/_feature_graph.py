"""The public feature graphs of the fused-lasso chapters (Xu et al. 2020, Liu et al. 2022), shipped as data.

Both chapters build ``A = [W; I]`` from the feature graph that :func:`dpadmm_lite.problems.feature_graph`
estimates (scikit-learn's graphical lasso) on a *public* sample: 2,000 Adult training rows set aside by
:func:`dpadmm_lite.datasets.public_split` (seed 2020 for Xu, 2022 for Liu), never the rows a private run
trains on. The browser of the site's live panels has no scikit-learn, so the graphs ship with the library
as edge lists (``dpadmm_lite/data/feature_graphs.npz``); ``tests/test_live_xu_liu.py`` recomputes them from
the public split and checks they are the shipped ones. Rebuild the file with
``python -m dpadmm_book.live._feature_graph`` (needs scikit-learn).
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import numpy as np

#: The public sample of each chapter: rows set aside from Adult's training set, and the seed that picks them.
PUBLIC_ROWS = 2_000
PUBLIC_SEEDS = {"xu2020": 2020, "liu2022": 2022}
FILE = "data/feature_graphs.npz"


def _incidence(edges: np.ndarray, d: int) -> np.ndarray:
    """``(E, d)`` with rows ``e_i − e_j`` (the form of :func:`dpadmm_lite.problems.feature_graph`)."""
    W = np.zeros((len(edges), d))
    rows = np.arange(len(edges))
    W[rows, edges[:, 0]] = 1.0
    W[rows, edges[:, 1]] = -1.0
    return W


@functools.lru_cache(maxsize=2)
def _shipped(chapter: str) -> tuple[np.ndarray, int]:
    with resources.files("dpadmm_lite").joinpath(FILE).open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        return z[f"{chapter}_edges"].astype(np.intp), int(z[f"{chapter}_d"])


def public_feature_graph(chapter: str) -> np.ndarray:
    """The chapter's public feature graph W (incidence form, ``(E, d)``), from the shipped edge list."""
    if chapter not in PUBLIC_SEEDS:
        raise ValueError(f"chapter must be one of {sorted(PUBLIC_SEEDS)}, got {chapter!r}")
    edges, d = _shipped(chapter)
    return _incidence(edges, d)


def recompute(chapter: str) -> np.ndarray:
    """The chapter's feature graph estimated afresh from its public sample (needs scikit-learn)."""
    from dpadmm_lite import datasets, problems

    X_train, y_train, _, _ = datasets.load_adult()
    X_public, _, _ = datasets.public_split(X_train, y_train, public_rows=PUBLIC_ROWS, seed=PUBLIC_SEEDS[chapter])
    return problems.feature_graph(X_public)


def _edges(W: np.ndarray) -> np.ndarray:
    """The edge list (i, j) of an incidence matrix whose rows are ``e_i − e_j``."""
    return np.stack([np.argmax(W == 1.0, axis=1), np.argmax(W == -1.0, axis=1)], axis=1).astype(np.uint8)


def write(path: Path | None = None) -> Path:
    """Write every chapter's recomputed graph as an edge list (uint8 pairs) and its feature count."""
    path = Path(path or Path(__file__).resolve().parents[1] / FILE)
    arrays = {}
    for chapter in PUBLIC_SEEDS:
        W = recompute(chapter)
        edges = _edges(W)
        if not np.array_equal(_incidence(edges.astype(np.intp), W.shape[1]), W):
            raise RuntimeError(f"the {chapter} graph is not an incidence matrix of edges e_i − e_j")
        arrays[f"{chapter}_edges"], arrays[f"{chapter}_d"] = edges, np.int64(W.shape[1])
    np.savez_compressed(path, **arrays)
    return path


if __name__ == "__main__":
    print(write())


def fused_lasso_problem(chapter: str, rows: int, lam: float):
    """The live problem of ``chapter``'s panel: a seeded random ``rows`` of the Adult training rows left
    once the public sample is set aside, and the graph-guided fused lasso with ``A = [W; I]``, W the
    shipped feature graph of that public sample (no training row enters the graph)."""
    from dpadmm_lite import datasets, problems

    X_train, y_train, X_test, y_test = datasets.load_adult()
    _, X, y = datasets.public_split(X_train, y_train, public_rows=PUBLIC_ROWS, seed=PUBLIC_SEEDS[chapter])
    keep = np.random.default_rng(0).choice(len(y), rows, replace=False)
    return problems.graph_guided_fused_lasso(X[keep], y[keep], lam=lam, W=public_feature_graph(chapter),
                                             X_test=X_test, y_test=y_test)

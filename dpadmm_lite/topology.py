"""Communication graphs for distributed ADMM: star, ring, grid, complete, Erdős–Rényi, small world.

A :class:`Topology` is an undirected simple graph on ``N`` agents held as a symmetric 0/1
sparse adjacency matrix, so that a neighbour sum over all agents is one product,
``topology.adjacency @ W`` for stacked local variables ``W`` of shape ``(N, d)``, and the graph
Laplacian ``L = D − A`` gives ``(L @ W)[i] = Σ_{j ∈ N_i} (W[i] − W[j])``, the disagreement term
of the network ADMM of Zhang & Zhu (2017).

    >>> from dpadmm_lite import topology
    >>> g = topology.make("ring", 6)
    >>> g.degrees.tolist()
    [2, 2, 2, 2, 2, 2]

Random graphs (Erdős–Rényi, small world) are drawn from ``numpy.random.default_rng(seed)`` and
redrawn until connected, a bounded number of times; consensus over a disconnected graph cannot
reach one model, so every distributed algorithm calls :meth:`Topology.check_connected`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from . import _validate as check

if TYPE_CHECKING:  # pandas only for draw_frame(), imported there (a live re-run needs none)
    import pandas as pd

__all__ = ["Topology", "make", "NAMES", "LABELS", "label", "from_adjacency"]

#: The topology names :func:`make` understands.
NAMES = ("star", "ring", "grid", "complete", "erdos_renyi", "small_world")

#: The book's name of each topology of :data:`NAMES` (what drop-downs, legends and tables show).
LABELS = {"star": "star", "ring": "ring", "grid": "grid", "complete": "complete",
          "erdos_renyi": "Erdős–Rényi", "small_world": "small world"}

#: How many times a random topology is redrawn before giving up on connectivity.
MAX_TRIES = 100


@dataclass(frozen=True, eq=False)
class Topology:
    """An undirected connected-or-not simple graph on ``n_agents`` agents.

    Parameters
    ----------
    name : str
        ``"ring"``, ``"star"``, …, or ``"custom"``.
    adjacency : scipy.sparse.csr_matrix
        ``(N, N)`` symmetric CSR matrix (float64) of 0/1 with zero diagonal.
    layout : numpy.ndarray
        ``(N, 2)`` positions for drawing.
    params : dict, default {}
        The options the graph was built with (``p``, ``k``, ``beta``, ``seed``, …).
    """

    name: str
    adjacency: scipy.sparse.csr_matrix
    layout: np.ndarray
    params: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The book's name of the graph (``"small world"`` for ``"small_world"``; a custom one keeps its name)."""
        return LABELS.get(self.name, self.name)

    @property
    def n_agents(self) -> int:
        """Number of agents ``N``."""
        return self.adjacency.shape[0]

    @cached_property
    def degrees(self) -> np.ndarray:
        """Number of neighbours of each agent, ``(N,)`` int."""
        return np.asarray(self.adjacency.sum(axis=1)).ravel().astype(int)

    @cached_property
    def laplacian(self) -> scipy.sparse.csr_matrix:
        """Graph Laplacian ``L = D − A`` (CSR): ``(L @ W)[i] = Σ_{j∈N_i} (W[i] − W[j])``."""
        return (scipy.sparse.diags(self.degrees.astype(float)) - self.adjacency).tocsr()

    @cached_property
    def edges(self) -> np.ndarray:
        """Every edge once, as ``(E, 2)`` int pairs ``(i, j)`` with ``i < j``, sorted."""
        upper = scipy.sparse.triu(self.adjacency, k=1).tocoo()
        e = np.column_stack([upper.row, upper.col]).astype(int)
        return e[np.lexsort((e[:, 1], e[:, 0]))]

    @property
    def n_edges(self) -> int:
        """Number of edges ``E``."""
        return len(self.edges)

    @cached_property
    def n_components(self) -> int:
        """Number of connected components (``scipy.sparse.csgraph``)."""
        return int(scipy.sparse.csgraph.connected_components(self.adjacency, directed=False)[0])

    @property
    def is_connected(self) -> bool:
        """Whether every agent can reach every other one."""
        return self.n_components == 1

    def check_connected(self) -> "Topology":
        """Return ``self`` if connected, else raise a ``ValueError`` saying why it matters."""
        if not self.is_connected:
            raise ValueError(
                f"topology {self.name!r} with {self.n_agents} agents is disconnected "
                f"({self.n_components} components): consensus ADMM needs a connected graph; "
                "pick another topology or a denser one")
        return self

    @cached_property
    def transition_matrix(self) -> scipy.sparse.csr_matrix:
        """Random-walk transition matrix ``D⁻¹A`` (row i: move to a uniform neighbour of i)."""
        inv = np.divide(1.0, self.degrees, out=np.zeros(self.n_agents), where=self.degrees > 0)
        return (scipy.sparse.diags(inv) @ self.adjacency).tocsr()

    @cached_property
    def laplacian_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of ``L`` in increasing order (dense; fine for the book's N ≤ a few hundred)."""
        return np.linalg.eigvalsh(self.laplacian.toarray())

    @property
    def algebraic_connectivity(self) -> float:
        """Second-smallest Laplacian eigenvalue λ₂ (> 0 iff connected); larger = faster consensus."""
        return float(self.laplacian_eigenvalues[1])

    def neighbors(self, i: int) -> np.ndarray:
        """Indices of the neighbours of agent ``i``."""
        i = check.count("i", i, minimum=0)
        if i >= self.n_agents:
            raise ValueError(f"i must be in [0, {self.n_agents - 1}], got {i}")
        a = self.adjacency
        return a.indices[a.indptr[i]:a.indptr[i + 1]].copy()

    def draw_frame(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Tidy frames for plotting.

        Returns
        -------
        nodes
            One row per agent: ``agent``, ``x``, ``y``, ``degree``.
        edges
            One row per edge: ``source``, ``target``, ``x``, ``y`` (source position), ``x2``,
            ``y2`` (target position) — ready for an Altair ``mark_rule``.
        """
        import pandas as pd  # lazily: a live re-run in the browser needs no pandas

        xy = self.layout
        nodes = pd.DataFrame({"agent": np.arange(self.n_agents), "x": xy[:, 0], "y": xy[:, 1],
                              "degree": self.degrees})
        s, t = self.edges[:, 0], self.edges[:, 1]
        edges = pd.DataFrame({"source": s, "target": t, "x": xy[s, 0], "y": xy[s, 1],
                              "x2": xy[t, 0], "y2": xy[t, 1]})
        return nodes, edges

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return (f"Topology({self.name!r}, n_agents={self.n_agents}, edges={self.n_edges}, "
                f"connected={self.is_connected}{', ' + extra if extra else ''})")


def label(name: str) -> str:
    """The book's name of topology ``name`` of :data:`NAMES` (``"erdos_renyi"`` → ``"Erdős–Rényi"``).

    Parameters
    ----------
    name : str
        One of :data:`NAMES`.

    Returns
    -------
    str
        The book's name.
    """
    check.choice("name", name, NAMES)
    return LABELS[name]


# ---------------------------------------------------------------------- construction
def from_adjacency(adjacency, *, name: str = "custom", layout=None, params=None) -> Topology:
    """A :class:`Topology` from any symmetric 0/1 adjacency matrix (dense or sparse).

    Raises ``ValueError`` if the matrix is not square, not symmetric, not 0/1, or has
    self-loops. ``layout`` defaults to a circle.

    Parameters
    ----------
    adjacency : array_like or scipy.sparse matrix
        A square symmetric matrix of 0 and 1 with a zero diagonal, at least 2 × 2.
    name : str, default "custom"
        The graph's name.
    layout : array_like of float, optional
        ``(N, 2)`` finite positions for drawing; ``None``: a circle.
    params : dict, optional
        The options the graph was built with.

    Returns
    -------
    Topology
        The graph.
    """
    if not scipy.sparse.issparse(adjacency):
        adjacency = check.real_array("adjacency", adjacency)
        if adjacency.ndim != 2:
            raise ValueError(f"adjacency must be a square matrix, got shape {adjacency.shape}")
    A = scipy.sparse.csr_matrix(adjacency, dtype=float)
    n = A.shape[0]
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"adjacency must be a square matrix, got shape {A.shape}")
    if n < 2:
        raise ValueError(f"adjacency must have at least 2 agents (n_agents >= 2), got {n}")
    A.eliminate_zeros()
    if A.nnz and not np.all(A.data == 1.0):
        raise ValueError("adjacency must hold only 0 and 1")
    if A.diagonal().any():
        raise ValueError("adjacency must have a zero diagonal (no self-loops)")
    if (A != A.T).nnz:
        raise ValueError("adjacency must be symmetric (the graph is undirected)")
    A.sort_indices()
    layout = _circle(n) if layout is None else check.finite_array("layout", layout, ndim=2)
    if layout.shape != (n, 2):
        raise ValueError(f"layout must have shape ({n}, 2), got {layout.shape}")
    return Topology(name, A, layout, dict(params or {}))


def make(name: str, n_agents: int, seed: int = 0, **options) -> Topology:
    """Build a named topology on ``n_agents`` agents.

    Parameters
    ----------
    name : str
        One of :data:`NAMES`:

        ``"star"``
            agent 0 is the hub (the aggregator of Huang et al.), linked to every other agent;
        ``"ring"``
            ``i ~ i ± 1 (mod N)``;
        ``"grid"``
            a 2-D lattice filled row by row, ``cols = ⌈√N⌉`` columns (option ``cols``); the last
            row may be partial;
        ``"complete"``
            every pair linked (the graph of Cyffers et al.'s network-DP bound);
        ``"erdos_renyi"``
            each pair linked independently with probability ``p`` (option; default
            ``min(1, 2 ln N / N)``, twice the connectivity threshold), redrawn until connected;
        ``"small_world"``
            Watts–Strogatz: a ring lattice where each agent links to its ``k`` nearest agents
            (option ``k``, even, default 4), each lattice edge rewired with probability ``beta``
            (option, default 0.1) to a uniformly chosen new neighbour; redrawn until connected.
    n_agents : int
        Number of agents ``N``, a whole number ≥ 2.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` (random topologies only; the others ignore it).

    Raises
    ------
    ValueError
        For an unknown name or option, ``n_agents < 2``, ``p`` outside ``(0, 1]``, ``k`` not an
        even number in ``[2, N − 1]``, ``beta`` outside ``[0, 1]``, or when no connected random
        graph was drawn in :data:`MAX_TRIES` tries.

    Returns
    -------
    Topology
        The graph, its adjacency a symmetric 0/1 CSR matrix.

    Examples
    --------
    >>> from dpadmm_lite import topology
    >>> g = topology.make("star", 5)
    >>> g.degrees.tolist(), g.n_edges
    ([4, 1, 1, 1, 1], 4)
    >>> topology.make("erdos_renyi", 8, seed=1).n_components
    1
    """
    check.choice("name", name, NAMES)
    n = check.count("n_agents", n_agents, minimum=2)
    seed = check.count("seed", seed, minimum=0)
    dense = name in ("complete", "erdos_renyi", "small_world")  # n × n pairs or adjacency
    per_agent = 32.0 * n if dense else 128.0
    check.fits_in_memory("n_agents", n_agents, per_agent * n, what=f"a {name!r} topology on {n:,} agents",
                         limit=math.isqrt(check.MEMORY_BUDGET // 32) if dense else check.MEMORY_BUDGET // 128)
    allowed = {"grid": {"cols"}, "erdos_renyi": {"p"}, "small_world": {"k", "beta"}}.get(name, set())
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"topology {name!r} takes options {sorted(allowed) or 'none'}, got {sorted(unknown)}")
    return _BUILDERS[name](n, seed, **options)


def _from_edges(name, n, rows, cols, layout, params) -> Topology:
    rows, cols = np.asarray(rows, int), np.asarray(cols, int)
    data = np.ones(2 * len(rows))
    A = scipy.sparse.csr_matrix((data, (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    A.sort_indices()
    return Topology(name, A, layout, params)


def _circle(n: int) -> np.ndarray:
    angle = 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(angle), np.sin(angle)])


def _star(n, seed):
    leaves = np.arange(1, n)
    layout = np.vstack([[0.0, 0.0], _circle(n - 1)])
    return _from_edges("star", n, np.zeros(n - 1, int), leaves, layout, {})


def _ring(n, seed):
    i = np.arange(n) if n > 2 else np.array([0])
    return _from_edges("ring", n, i, (i + 1) % n, _circle(n), {})


def _grid(n, seed, cols=None):
    cols = math.ceil(math.sqrt(n)) if cols is None else check.count("cols", cols)
    if cols > n:
        raise ValueError(f"cols must be in [1, n_agents={n}], got {cols}")
    k = np.arange(n)
    right = k[(k % cols < cols - 1) & (k + 1 < n)]
    down = k[k + cols < n]
    layout = np.column_stack([k % cols, -(k // cols)]).astype(float)
    return _from_edges("grid", n, np.r_[right, down], np.r_[right + 1, down + cols], layout, {"cols": cols})


def _complete(n, seed):
    i, j = np.triu_indices(n, k=1)
    return _from_edges("complete", n, i, j, _circle(n), {})


def _erdos_renyi(n, seed, p=None):
    p = min(1.0, 2 * math.log(n) / n) if p is None else p
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)) or not (0 < p <= 1):
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    p = float(p)
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, k=1)
    for attempt in range(1, MAX_TRIES + 1):
        keep = rng.random(len(iu)) < p  # each pair independently with probability p
        g = _from_edges("erdos_renyi", n, iu[keep], ju[keep], _circle(n),
                        {"p": p, "seed": seed, "draws": attempt})
        if g.is_connected:
            return g
    raise ValueError(f"topology 'erdos_renyi' with n_agents={n}, p={p:g} is disconnected in all {MAX_TRIES} "
                     f"draws; raise p above the connectivity threshold ln(N)/N ≈ {math.log(n) / n:.3g}")


def _small_world(n, seed, k=None, beta=0.1):
    if k is None:
        k = max(2, min(4, (n - 1) // 2 * 2))
    k = check.count("k", k, minimum=2)
    if k % 2 or k > max(2, n - 1):
        raise ValueError(f"k must be an even number in [2, n_agents−1={n - 1}], got {k}")
    beta = check.nonnegative("beta", beta)
    if beta > 1:
        raise ValueError(f"beta must be in [0, 1], got {beta!r}")
    rng = np.random.default_rng(seed)
    if n <= 3:  # the lattice is already complete: nothing to rewire
        return _from_edges("small_world", n, *_complete(n, 0).edges.T, _circle(n), {"k": k, "beta": beta, "seed": seed})
    base = np.arange(n)
    for attempt in range(1, MAX_TRIES + 1):
        adj = np.zeros((n, n), bool)
        for j in range(1, k // 2 + 1):  # ring lattice: i ~ i + j, j = 1 … k/2
            adj[base, (base + j) % n] = adj[(base + j) % n, base] = True
        # Watts–Strogatz rewiring, layer by layer as in the original model: edge (u, u+j) keeps u
        # and moves its other end to a uniform agent that is neither u nor already linked to u.
        for j in range(1, k // 2 + 1):
            for u in np.flatnonzero(rng.random(n) < beta):  # construction only, not an update
                v = (u + j) % n
                free = np.flatnonzero(~adj[u])
                free = free[free != u]
                if not adj[u, v] or len(free) == 0:
                    continue
                w = rng.choice(free)
                adj[u, v] = adj[v, u] = False
                adj[u, w] = adj[w, u] = True
        i, jj = np.nonzero(np.triu(adj, k=1))
        g = _from_edges("small_world", n, i, jj, _circle(n), {"k": k, "beta": beta, "seed": seed, "draws": attempt})
        if g.is_connected:
            return g
    raise ValueError(f"topology 'small_world' with n_agents={n}, k={k}, beta={beta:g} is disconnected in all "  # pragma: no cover
                     f"{MAX_TRIES} draws; lower beta or raise k")


_BUILDERS = {"star": _star, "ring": _ring, "grid": _grid, "complete": _complete,
             "erdos_renyi": _erdos_renyi, "small_world": _small_world}

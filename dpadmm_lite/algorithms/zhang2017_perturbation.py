"""Dual and primal variable perturbation over any connected network (Zhang & Zhu 2017, Algorithms 2 and 3).

The non-private algorithm is :func:`dpadmm_lite.algorithms.zhang2017.admm_graph` (Algorithm 1): every
node p minimises its augmented Lagrangian (9) exactly, broadcasts ``f_p(t+1)`` to its neighbours
and updates its dual ``λ_p``. Zhang & Zhu make it private in two ways:

* **DVP** (dual variable perturbation, Alg. 2): before the update, node p perturbs its dual,
  ``μ_p(t+1) = λ_p(t) + (C^R/(2B_p)) ε_p(t+1)`` (14), and releases the *exact* minimiser of the
  perturbed Lagrangian (13), which carries an extra ridge ``Φ/2‖f‖²`` when the data are too few.
  This is objective perturbation (Chaudhuri et al. 2011): the randomness of the release comes
  from the noise inside the objective, and the proof needs the exact minimiser.
* **PVP** (primal variable perturbation, Alg. 3): node p minimises (18) and broadcasts
  ``V_p(t+1) = f_p(t+1) + ε_p(t+1)`` (19) — output perturbation; the duals move with the noisy
  broadcasts (20). The last iteration is one DVP step (21)–(23), whose exact minimiser is the
  output.

The noise ε_p has the ℓ2-Laplace density ``∝ exp(−ζ‖ε‖)`` (:func:`dpadmm_lite.mechanisms.l2_laplace`).
Both algorithms run all nodes as one stacked array, with one sparse product for the neighbour
sums and one batched exact solve (:class:`~dpadmm_lite.algorithms.zhang2017.LocalSolver`) per
iteration; without noise (``epsilon=math.inf``) each is ``admm_graph`` exactly.

Book notation (paper → book): regulariser weight ρ → λ (``problem.lam``), ADMM penalty η → ρ,
``C^R/B_p`` → ``w_p/m_p`` with ``w_p = N m_p/n`` (1 for equal sizes), ``B_p`` → ``m_p``,
``N_p`` → the degree ``D_p``, the per-iteration privacy ``α_p(t)`` keeps its name.

Privacy, as the library accounts it
----------------------------------
Each broadcast is pure ``α_p(t)``-DP with respect to one record of node p's data (the paper's
"dynamic" differential privacy, Definition 1); node p's data enter the run only through node p's
broadcasts (everything else is post-processing), so the ledger records node p's T releases for
the most exposed node. ``epsilon`` is the end-to-end budget (``calibration="accountant"``): the
per-iteration α_p(t) (constant, or shaped by ``alpha_schedule``) is scaled until the unified
accountant gives (ε, δ) for the T pure-DP releases. ``calibration="paper"``: ``epsilon`` *is*
α_p(t) per iteration, the noise follows the paper's formulas, and ``trace.privacy`` says what that
noise truly spends end to end (``trace.privacy_paper`` the paper's per-iteration claim composed).

Where this module reads the paper (each is said again in the docstrings):

* **DVP's ζ.** Algorithm 2 prints ``ζ_p(t) = α̂_p``, the proof of Theorem 1 selects ``α̂_p/2``,
  Appendix E uses ``α_p(t)/4``. The proof's is the one that certifies α (the noise that explains a
  release moves by at most 2 when one record is replaced); it is the default, the others are
  ``zeta_rule="algorithm"``/``"appendix"`` and the ledger records what they truly spend.
* **PVP's hidden state.** Appendix B's sensitivity ``2C^R/(ρB_p)`` holds ``f_p(t)`` fixed, but
  node p never releases ``f_p(t)``: under D and D′ the same broadcasts can come from different
  hidden states. :func:`dpadmm_lite.accounting.zhang2017_pvp_hidden_sensitivity` bounds the
  sensitivity with the hidden state tracked (it stays below the paper's, so the paper's noise is
  safe); the final DVP step, whose objective contains ``f_p(t_s)``, gets the extra sensitivity
  ``(m_p/w_p) ρ D_p E`` — the paper's analysis of that step misses it.
* **Eq. (18) vs the text.** The displayed (18) centres the penalty at
  ``½(f_p(t) + V_j(t) − ε_p(t))``, the text says it is (9) — with the neighbours' broadcasts,
  ``½(f_p(t) + V_j(t))``. Default: the text's (``neighbour_term="text"``); ``"eq18"`` the display.
* **Alg. 3's box broadcasts f_p(t+1)**; the text, Fig. 1 and the proof broadcast ``V_p(t+1)``:
  we broadcast V (broadcasting f would void the guarantee).

Reference: T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed
classification learning", IEEE TIFS 12(1), 2017 (``papers/zhang2017_…``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import hashlib
import math
import threading
import warnings
from numbers import Integral
from typing import Mapping, Sequence

import numpy as np

from .. import _memory
from .. import _validate as check
from .._constraints import Interval, Options
from .. import accounting, mechanisms
from .. import topology as topologies
from ..privacy import PrivacyEvent, PrivacyGuarantee
from ..problems import Problem
from ..registry import register
from ..trace import Trace
from ._blas import one_blas_thread, single_blas_thread
from .zhang2017 import GRAPH_AGENTS, LocalData, LocalSolver, Network, Record, finish, network, solved_loss

__all__ = ["dvp_graph", "pvp_graph", "run_many", "shared_products", "share_products", "CALIBRATIONS", "NEIGHBOUR_TERMS"]

#: ``"accountant"``: ε is the end-to-end budget; ``"paper"``: ε is α_p(t) per iteration.
CALIBRATIONS = ("accountant", "paper")

#: Where PVP's penalty (18) is centred: the text's ``½(f_p + V_j)`` or the display's ``½(f_p + V_j − ε_p)``.
NEIGHBOUR_TERMS = ("text", "eq18")

_TUNING = {"rho": (0.003, 0.01, 0.03, 0.1, 0.3)}


# ====================================================================== shared set-up
def _check_problem(problem: Problem, name: str) -> None:
    if problem.loss != "logistic":
        raise ValueError(f"problem.loss must be 'logistic' for {name!r}: the noise is calibrated to the bound "
                         f"|ℒ'| ≤ 1 (Zhang & Zhu, Assumption 1), and the {problem.loss!r} loss has none")
    if problem.regularizer != "l2":
        raise ValueError(f"problem.regularizer must be 'l2' for {name!r}: DVP (and PVP's final DVP step) is objective "
                         "perturbation, which needs a twice-differentiable, strongly convex objective (Assumption 2)")
    problem.check_feature_bound(name)


def _schedule(alpha_schedule, T: int, N: int) -> np.ndarray:
    """The shape of α_p(t) as a (T, N) array (default: constant 1)."""
    if alpha_schedule is None:
        return np.ones((T, N))
    a = np.asarray(alpha_schedule, dtype=float)
    if a.ndim == 1 and a.shape == (T,):
        a = np.repeat(a[:, None], N, axis=1)
    if a.shape != (T, N) or np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha_schedule must hold positive numbers of shape ({T},) or ({T}, {N}) (iterations × "
                         f"nodes), got {alpha_schedule!r}")
    return a


def _alphas(epsilon, delta, calibration, shape) -> np.ndarray:
    """α_p(t) (T, N): the schedule scaled to the end-to-end budget, or ε per iteration (paper)."""
    if math.isinf(epsilon):
        return np.full(shape.shape, np.inf)
    if calibration == "paper":
        return epsilon * shape
    # one factor for all nodes: the largest that keeps every node's schedule within the budget
    columns = np.unique(shape, axis=1)
    scale = min(float(accounting.zhang2017_alpha_for_budget(epsilon, delta, shape.shape[0], schedule=col)[0] / col[0])
                for col in columns.T)
    return shape * scale


def _ledger(spent, zeta, notes, delta) -> list[PrivacyEvent]:
    """The releases of the most exposed node: per iteration pure ε₀ = spent[t, p] with rate ζ[t, p].

    An ℓ2-Laplace event with noise ζ and sensitivity ``spent/ζ`` is pure ``spent``-DP, which is
    what the unified accountant uses; consecutive equal releases are one event with a count. Nodes
    with the same releases (same degree and size) are accounted once.
    """
    def events_of(p):
        events: list[PrivacyEvent] = []
        for t in range(spent.shape[0]):
            e0, z = float(spent[t, p]), float(zeta[t, p])
            last = events[-1] if events else None
            if last is not None and last.noise == z and last.sensitivity == e0 / z and last.note == notes[t]:
                events[-1] = PrivacyEvent("laplace_l2", e0 / z, z, count=last.count + 1, note=notes[t])
            else:
                events.append(PrivacyEvent("laplace_l2", e0 / z, z, note=notes[t]))
        return events

    _, first = np.unique(spent, axis=1, return_index=True)  # the accountant reads ε₀ = ζ·Δ = spent only
    candidates = [events_of(int(p)) for p in first]
    return max(candidates, key=lambda events: accounting.ledger_epsilon(events, delta))


def _paper_claim(alphas, calibration) -> PrivacyGuarantee:
    """Theorems 1–2 as the paper states them: α_p(t)-DP per iteration; composed by basic composition."""
    per = np.unique(np.round(alphas, 12))
    what = f"α_p(t) = {per[0]:.4g}" if len(per) == 1 else f"α_p(t) from {per.min():.4g} to {per.max():.4g}"
    how = "calibrated by the unified accountant to the end-to-end budget" if calibration == "accountant" else \
        "as given (calibration='paper')"
    return PrivacyGuarantee(accounting.zhang2017_total_epsilon(alphas), 0.0,
                            "Zhang & Zhu 2017, Thms 1–2 (dynamic DP), basic composition over T iterations",
                            f"every broadcast of every node is pure {what}-DP ({how}); the paper states no end-to-end "
                            "guarantee: summed over the iterations")


def _dvp_plan(problem, net: Network, alphas, rho, *, rule, sensitivity):
    """ζ (T, N), Φ (T, N) and the pure ε each DVP update spends (T, N), for per-iteration α (T, N)."""
    m, w, D = net.data.sizes, net.data.weights, net.degrees
    c1 = problem.per_example_smoothness
    common = dict(local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, loss_weight=w, c1=c1)
    zeta, phi = accounting.zhang2017_dvp_zeta(alphas, sensitivity=sensitivity, rule=rule, **common)
    zeta, phi = np.asarray(zeta, float), np.asarray(phi, float)
    if rule != "proof":  # the printed rules assume |ℒ'|‖x‖ ≤ 1; scale them to the problem's public bound
        zeta = zeta * 2.0 / sensitivity
    spent = np.asarray(accounting.zhang2017_dvp_spent(zeta, sensitivity=sensitivity, extra=phi, **common), float)
    return zeta, phi, spent


def _run_checks(problem, name, epsilon, delta, rho, iterations, seed, calibration, inner_tol, max_inner):
    _check_problem(problem, name)
    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    rho = check.scale("rho", rho)
    T = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    check.choice("calibration", calibration, CALIBRATIONS)
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner)
    return epsilon, delta, rho, T, seed, inner_tol, max_inner


def _warn_inexact(name: str, record: Record, inner_tol: float) -> tuple[str, str | None]:
    """RuntimeWarning, the ledger note's text and the reason the run is not covered, when some
    local solve stopped at max_inner.

    DVP releases minimisers of a perturbed objective: a point short of the certified tolerance is
    not one, the density argument says nothing about it, and there is no output noise to account
    its error against. PVP's broadcasts add noise, but the distance measured on this dataset says
    nothing about the neighbouring one (whose solve may stop farther off). Neither has a sound ε,
    so the run's privacy is not covered (ε = ∞) — never the exact-solve budget.
    """
    if record.converged:
        return "", None
    text = (f"the local solves of {name!r} stopped at max_inner before the gradient norm reached inner_tol = "
            f"{inner_tol:g} (largest certified distance to the exact minimiser {record.residual.max():.2e}); the "
            "privacy argument assumes the exact minimiser, so no guarantee covers the run (privacy: not covered, "
            "ε = ∞): raise max_inner")
    warnings.warn(text, RuntimeWarning, stacklevel=3)
    reason = (f"a local solve stopped at max_inner before inner_tol = {inner_tol:g}: the released models are not the "
              "certified minimisers the privacy argument needs")
    return " — INEXACT local solves: " + text, reason


# ====================================================================== many runs, one product per data pass
#: Runs on the same data from which one multi-column product is cheaper than single ones.
SHARE_FROM = 5


class _SharedProducts:
    """Runs on several threads that take turns, and share their passes over the data.

    A graph run's cost is its sparse products with the agents' data (``LocalData.margins`` and
    ``rmatvec``: ~45 % of a DVP or PVP run on Adult); one product with K columns reads the
    matrix once (scipy's ``csr_matvecs``) but pays a fixed cost per non-zero, so a pair of
    products (margins and gradient) costs 0.55×, 1.0×, 1.8×, 2.7×, 3.3× less than K single ones
    at K = 2, 4, 8, 16, 48 (Adult, 20 agents, 40,000 rows; ``benchmarks/shared_products.py``):
    fewer than :data:`SHARE_FROM` runs on the same data take their single products. The member
    runs hold a baton in turn, so exactly one computes at a time (one core, whatever the number
    of threads); a run that needs a product posts it and passes the baton on, and when every
    member is waiting for one, the last to arrive computes all of them, one multi-column product
    per data matrix and kind. Each column of a multi-column CSR product is the single product
    bit for bit (the same sums in the same order), and the runs share no other state, so every
    run gives exactly the trace it gives alone, in any company.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._members: dict[int, threading.Event] = {}  # thread → the event that hands it the baton
        self._baton: int | None = None
        self._ready: list[int] = []  # members waiting for the baton, in order
        self._requests: dict[int, tuple] = {}
        self._results: dict[int, np.ndarray] = {}
        self._keys: dict[int, tuple] = {}  # id(LocalData) → (its data's digest, the LocalData)
        self.products = 0  # sparse products computed (each one pass over a data matrix)
        self.columns = 0  # products the runs asked for (columns of those products)

    # ------------------------------------------------------------------ membership and the baton
    def _pass_baton(self) -> None:
        """Give the baton to the next ready member (lock held); when every member waits for a
        product, compute them all first. One wake-up per hand-over, no thundering herd."""
        self._baton = None
        if not self._ready and self._requests and len(self._requests) == len(self._members):
            waiting = list(self._requests)
            self._compute()
            self._ready.extend(waiting)
        if self._ready:
            self._baton = self._ready.pop(0)
            self._members[self._baton].set()

    def _wait_for_baton(self, me: int, event: threading.Event) -> None:
        event.wait()
        event.clear()

    @contextlib.contextmanager
    def member(self):
        me, event = threading.get_ident(), threading.Event()
        with self._lock:
            self._members[me] = event
            if self._baton is None and not self._ready:
                self._baton = me
            else:
                self._ready.append(me)
                event.clear()
            mine = self._baton == me
        if not mine:
            self._wait_for_baton(me, event)
        try:
            yield
        finally:
            with self._lock:
                del self._members[me]
                self._requests.pop(me, None)
                self._pass_baton()

    def product(self, data: LocalData, kind: str, vector: np.ndarray) -> np.ndarray:
        """``data.margins(vector)`` or ``data.rmatvec(vector)``, computed with the other members' products."""
        me = threading.get_ident()
        with self._lock:
            event = self._members[me]
            self._requests[me] = (self._key(data), kind, data, vector)
            self._pass_baton()
            mine = self._baton == me
            if mine:
                event.clear()
        if not mine:
            self._wait_for_baton(me, event)
        result = self._results.pop(me)
        if isinstance(result, BaseException):
            raise result
        return result

    def _key(self, data: LocalData) -> tuple:
        """Data with equal matrices share products (DVP's and PVP's problems differ only in λ)."""
        cached = self._keys.get(id(data))
        if cached is None or cached[1] is not data:
            block = data.block
            digest = None
            if block is not None:
                h = hashlib.sha256()
                for part in (block.indptr, block.indices, block.data):
                    h.update(np.ascontiguousarray(part).view(np.uint8))
                digest = (block.shape, h.hexdigest())
            cached = ((digest, id(data)) if digest is None else digest, data)
            self._keys[id(data)] = cached
        return cached[0]

    def _compute(self) -> None:
        """Every posted product: one multi-column sparse product per (data, kind)."""
        groups: dict[tuple, list] = {}
        for thread, (key, kind, data, vector) in self._requests.items():
            groups.setdefault((key, kind), []).append((thread, data, vector))
        self._requests = {}
        for (_, kind), members in groups.items():
            try:
                self._compute_group(kind, members)
            except Exception as exc:  # every waiting run raises it, none waits forever
                for thread, _, _ in members:
                    self._results[thread] = exc

    def _compute_group(self, kind: str, members: list) -> None:
        data = members[0][1]
        self.columns += len(members)
        if data.block is None or len(members) < SHARE_FROM:
            for thread, member_data, vector in members:
                self._results[thread] = getattr(LocalData, kind)(member_data, vector)
                self.products += 1
            return
        matrix = data.block if kind == "margins" else data._block_t
        columns = np.empty((matrix.shape[1], len(members)))
        for k, (_, _, vector) in enumerate(members):
            columns[:, k] = np.ravel(vector)
        out = np.ascontiguousarray((matrix @ columns).T)  # (K, rows): row k is member k's product
        self.products += 1
        shape = data.agents.mask.shape if kind == "margins" else (data.n_agents, -1)
        for k, (thread, _, _) in enumerate(members):
            self._results[thread] = out[k].reshape(shape)


class _SharedData(LocalData):
    """A run's view of :class:`LocalData` whose two products go through a :class:`_SharedProducts`."""

    def margins(self, F) -> np.ndarray:
        return self._shared.product(self, "margins", F)

    def rmatvec(self, R) -> np.ndarray:
        return self._shared.product(self, "rmatvec", R)


_SHARING: list[_SharedProducts] = []  # the active sharing, if any (shared_products)
_MEMBER = threading.local()  # the sharing the current thread's run is a member of


@contextlib.contextmanager
def shared_products():
    """Inside the block, DVP and PVP runs on concurrent threads take turns and share their data products.

    Meant for :func:`dpadmm_lite.algorithms.zhang2017.parallel_runs` with many threads: the threads
    of a sweep become members that compute one at a time (one core), and runs on the same data
    (same records, same deal to the agents: e.g. several ε, topologies or both algorithms at one
    seed) read the data matrix once per product for all of them. Every run's trace equals the
    run alone (``tests/test_network.py``); with one thread nothing changes.

    >>> with shared_products(), graph.parallel_runs(24):  # doctest: +SKIP
    ...     frame = book.sweep.grid(task, {"epsilon": [1.0, 2.0, 4.0, 8.0]}, seeds=range(3), name="runs")
    """
    if _SHARING:
        yield _SHARING[-1]
        return
    _keep_freed_memory()
    _SHARING.append(_SharedProducts())
    try:
        yield _SHARING[-1]
    finally:
        _SHARING.pop()


def _keep_freed_memory() -> None:
    """Members allocate on many threads, each with its own malloc arena, whose freed heaps glibc unmaps at
    once: every product's arrays would be fresh pages, faulted in anew. The thresholds of a Dask worker (:func:`dpadmm_lite._memory.keep_freed_memory`)
    keep them (process-wide)."""
    _memory.keep_freed_memory()


def share_products(enabled: bool = True) -> None:
    """Turn :func:`shared_products` on (or off) for the rest of the process (e.g. a notebook's sweeps).

    Parameters
    ----------
    enabled : bool, default True
        Whether runs on the same data share their products from now on.
    """
    if enabled and not _SHARING:
        _keep_freed_memory()
        _SHARING.append(_SharedProducts())
    elif not enabled:
        _SHARING.clear()


def _sharing_products(function):
    """Decorator: when :func:`shared_products` is active, run ``function`` as a member of it."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if not _SHARING:
            return function(*args, **kwargs)
        shared = _SHARING[-1]
        with shared.member():
            _MEMBER.shared = shared
            try:
                return function(*args, **kwargs)
            finally:
                _MEMBER.shared = None

    return wrapper


def _network(problem, **kwargs) -> Network:
    """:func:`~dpadmm_lite.algorithms.zhang2017.network`, with the data seen through the thread's sharing."""
    net = network(problem, **kwargs)
    shared = getattr(_MEMBER, "shared", None)
    if shared is None:
        return net
    base = net.data
    if base.block is not None:  # fill the base's caches once, so that every view shares them
        base._block_t, base._X32, base._full  # noqa: B018
    view = object.__new__(_SharedData)
    view.__dict__.update(base.__dict__)
    view._shared = shared
    return Network(net.graph, net.owner, view)


def run_many(runs: Sequence[Mapping], problems: Sequence[Problem] | Problem, *, threads: int | None = None) -> list[Trace]:
    """Run several DVP/PVP runs together, sharing their passes over the data; the same traces as one by one.

    Parameters
    ----------
    runs
        One mapping per run: ``algorithm`` (``"dvp_graph"`` or ``"pvp_graph"``) and the keyword
        arguments of that function (``epsilon``, ``seed``, ``topology``, …).
    problems
        The problem of every run (one for all, or one per run).
    threads
        Runs in flight at once (default: all). They take turns on one core (:func:`shared_products`);
        more in flight means more columns per data product.

    Returns
    -------
    list of Trace
        Each run's trace, in order: equal to ``dvp_graph(problem, **run)`` (or ``pvp_graph``) alone,
        except its ``wall_time``.
    """
    runs = [dict(r) for r in runs]
    if isinstance(problems, Problem):
        problems = [problems] * len(runs)
    if len(problems) != len(runs):
        raise ValueError(f"problems must be one Problem or one per run ({len(runs)}), got {len(problems)}")
    functions = {"dvp_graph": dvp_graph, "pvp_graph": pvp_graph}
    for r in runs:
        if r.get("algorithm") not in functions:
            raise ValueError(f"runs: every run needs algorithm 'dvp_graph' or 'pvp_graph', got {r.get('algorithm')!r}")
    if not runs:
        return []
    threads = len(runs) if threads is None else check.count("threads", threads)

    def one(i):
        options = dict(runs[i])
        return functions[options.pop("algorithm")](problems[i], **options)

    with single_blas_thread(), shared_products(), concurrent.futures.ThreadPoolExecutor(min(threads, len(runs))) as pool:
        return list(pool.map(one, range(len(runs))))


# ====================================================================== Algorithm 2
#: The ranges of the options of Zhang & Zhu's private runs beyond the shared ones (inner_tol:
#: registry.SHARED_CONSTRAINTS); the registry checks them, tests/test_bad_input.py reads them.
_CONSTRAINTS = {
    "n_agents": GRAPH_AGENTS,
    "calibration": Options(CALIBRATIONS),
    "zeta_rule": Options(accounting.ZHANG2017_DVP_RULES),
    "min_local_size": Interval(Integral, 1, "n_samples"),
    "max_inner": Interval(Integral, 1, None),
}


@register("dvp_graph", paper="zhang2017", private=True, setting="graph",
          description="ADMM over a network with dual variable perturbation (objective perturbation of each exact "
                      "local update, ℓ2-Laplace noise; Zhang & Zhu 2017, Alg. 2)",
          tasks=("logistic-l2",), tuning=_TUNING, constraints=_CONSTRAINTS)
@one_blas_thread
@_sharing_products
def dvp_graph(problem: Problem, *, epsilon: float, delta: float = 1e-5, rho: float = 0.1, iterations: int = 100,
              seed: int = 0, topology: str | topologies.Topology = "ring", n_agents: int | None = None,
              sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
              calibration: str = "accountant", alpha_schedule: np.ndarray | None = None, zeta_rule: str = "proof",
              min_local_size: int = 1, inner_tol: float = 1e-9, max_inner: int = 100) -> Trace:
    """Dual variable perturbation over a network: Zhang & Zhu (2017), Algorithm 2, eqs. (13)–(16).

    Parameters
    ----------
    problem : Problem
        ℓ2-regularised logistic regression (``problem.lam`` = the paper's ρ) with rows of norm
        ≤ ``problem.feature_bound`` (|ℒ'| ≤ 1, |ℒ''| ≤ ¼: the public bounds of Assumptions 1, 3).
    epsilon : float
        End-to-end budget of the run (default ``calibration``); with ``calibration="paper"``,
        ``epsilon`` is the per-iteration α_p(t) of the paper (δ then only enters
        ``trace.privacy``). ``math.inf``: no noise — exactly ``admm_graph``.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 0.1
        ADMM penalty (the paper's η; the paper does not give its value).
    iterations : int, default 100
        T; the seed draws the deal of the records, random topologies and the noise.
    seed : int, default 0
        T; the seed draws the deal of the records, random topologies and the noise.
    topology : str or Topology, default "ring"
        The network and who holds what (:func:`~dpadmm_lite.algorithms.zhang2017.network`); the
        paper's ``C^R ≤ B_p`` becomes ``min_local_size`` if wanted.
    n_agents : int or None, default None
        The network and who holds what (:func:`~dpadmm_lite.algorithms.zhang2017.network`); the
        paper's ``C^R ≤ B_p`` becomes ``min_local_size`` if wanted.
    sizes : str, sequence of int or None, default None
        The network and who holds what (:func:`~dpadmm_lite.algorithms.zhang2017.network`); the
        paper's ``C^R ≤ B_p`` becomes ``min_local_size`` if wanted.
    owner : ndarray or None, default None
        The network and who holds what (:func:`~dpadmm_lite.algorithms.zhang2017.network`); the
        paper's ``C^R ≤ B_p`` becomes ``min_local_size`` if wanted.
    calibration : str, default "accountant"
        ``"accountant"`` (ε, δ end to end) or ``"paper"`` (ε = α_p(t) per iteration).
    alpha_schedule : ndarray or None, default None
        Shape of α_p(t): ``(T,)`` or ``(T, N)`` positive numbers (default constant). Scaled to the
        budget, or multiplied by ``epsilon`` under ``calibration="paper"``.
    zeta_rule : str, default "proof"
        ``"proof"`` (ζ = α̂/Δ, default), ``"algorithm"`` (ζ = α̂ as printed) or ``"appendix"`` (ζ = α/4);
        only with ``calibration="paper"`` (the accountant needs the rule that certifies α).
    min_local_size : int, default 1
        The network and who holds what (:func:`~dpadmm_lite.algorithms.zhang2017.network`); the
        paper's ``C^R ≤ B_p`` becomes ``min_local_size`` if wanted.
    inner_tol : float, default 1e-9
        The local solves stop when every gradient max-norm is ≤ ``inner_tol``; stopping at
        ``max_inner`` instead raises a RuntimeWarning, is noted in the ledger, and leaves the run
        *not covered* (``privacy.covered`` False, ε = ∞): the proof needs the minimiser.
    max_inner : int, default 100
        The local solves stop when every gradient max-norm is ≤ ``inner_tol``; stopping at
        ``max_inner`` instead raises a RuntimeWarning, is noted in the ledger, and leaves the run
        *not covered* (``privacy.covered`` False, ε = ∞): the proof needs the minimiser.

    Returns
    -------
    Trace
        Iterates: the network average of the broadcasts ``f̄(t)``; metrics of
        :func:`~dpadmm_lite.algorithms.zhang2017.finish` (empirical loss per node and averaged, test
        error, distances between neighbours, ``noise_norm`` = mean ``‖ε_p(t)‖`` as drawn).
        ``noise``: ``alpha`` (T, N) per-iteration privacy, ``zeta``, ``extra_penalty`` (Φ),
        ``jacobian`` (ᾱ), ``spent`` (pure ε of each update, = α under the proof's rule),
        ``sensitivity`` (Δ = 2c of the noise).

    Notes
    -----
    Every iteration, every node p at once (rows of stacked arrays)::

        μ_p(t+1) = λ_p(t) + (w_p/(2m_p)) ε_p(t+1),    density(ε_p) ∝ exp(−ζ_p(t)‖ε‖)           (14)
        f_p(t+1) = argmin_f w_p h_p(f) + λ/2‖f‖² + 2μ_p(t+1)ᵀf + Φ_p/2‖f‖²
                           + ρ Σ_{j∈N_p} ‖f − ½(f_p(t) + f_j(t))‖²                             (13), (15)
        broadcast f_p(t+1);   λ_p(t+1) = λ_p(t) + (ρ/2) Σ_{j∈N_p} (f_p(t+1) − f_j(t+1))          (16)

    **Privacy of one update** (proof of Theorem 1). Given everything node p has received, the
    released ``f = f_p(t+1)`` determines the noise through the optimality condition of (13):
    ``ε = −(m_p/w_p)[w_p∇h_p(f) + (λ + Φ + 2ρD_p)f + 2λ_p − ρ(D_p f_p(t) + Σ_j f_j(t))]``, a
    bijection. Replacing one record changes that ε by at most ``Δ = 2c`` (``c`` =
    ``problem.lipschitz``), so the noise densities differ by ``e^{ζΔ}``, and the Jacobian of the
    bijection by ``e^ᾱ``, ``ᾱ = 2 ln(1 + c₁w_p/(m_p(λ + Φ + 2ρD_p)))`` (c₁ =
    ``problem.per_example_smoothness``). Hence ``α = ζΔ + ᾱ``; the Φ branch of Algorithm 2
    keeps ``ᾱ ≤ α/2`` when the data are too few. The argument needs the *exact* minimiser,
    which the solver certifies to ``inner_tol``; a solve short of it has no sound ε (no output
    noise could absorb its error), so the run is reported as not covered rather than at the budget.

    References
    ----------
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dvp_graph", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    epsilon, delta, rho, T, seed, inner_tol, max_inner = _run_checks(
        problem, "dvp_graph", epsilon, delta, rho, iterations, seed, calibration, inner_tol, max_inner)
    check.choice("zeta_rule", zeta_rule, accounting.ZHANG2017_DVP_RULES)
    if calibration == "accountant" and zeta_rule != "proof":
        raise ValueError(f"zeta_rule must be 'proof' with calibration='accountant' (the rule that certifies α), got "
                         f"{zeta_rule!r}; use calibration='paper' to run the paper's other rules")
    net = _network(problem, topology=topology, n_agents=n_agents, sizes=sizes, owner=owner, seed=seed,
                  min_local_size=min_local_size)
    N, d = net.n_agents, problem.d
    Adj, Lap, D = net.graph.adjacency, net.graph.laplacian, net.degrees
    m, w = net.data.sizes, net.data.weights
    private = not math.isinf(epsilon)

    # privacy plan: α_p(t), then ζ_p(t) and Φ_p(t) of Algorithm 2
    alphas = _alphas(epsilon, delta, calibration, _schedule(alpha_schedule, T, N))
    sensitivity = 2.0 * problem.lipschitz  # Appendix A: one replaced record moves ε by ≤ 2|ℒ'|‖x‖
    zeta, phi, spent = _dvp_plan(problem, net, alphas, rho, rule=zeta_rule, sensitivity=sensitivity)

    solve = LocalSolver(net.data, problem.lam, "l2", 2.0 * rho * D, inner_tol=inner_tol, max_inner=max_inner)
    rng = np.random.default_rng(seed)
    record = Record(T, N, d)
    F = np.zeros((N, d))  # f_p(0) = 0, λ_p(0) = 0
    Lam = np.zeros((N, d))
    for t in range(T):
        Mu, drawn = Lam, 0.0
        if private:  # (14): μ_p(t+1) = λ_p(t) + (C^R/(2B_p)) ε_p(t+1)
            E = mechanisms.l2_laplace(rng, zeta[t], (N, d))
            Mu = Lam + (w / (2.0 * m))[:, None] * E
            drawn = float(np.linalg.norm(E, axis=1).mean())
        b = 2.0 * Mu - rho * (D[:, None] * F + Adj @ F)  # (13): 2μ_p + the ρ-term's linear part
        extra = phi[t] if private and np.any(phi[t]) else None  # (13): Φ/2‖f‖²
        sol = solve(b, extra=extra)  # (15): the exact minimiser, warm-started at f_p(t)
        F = sol.F
        Lam = Lam + 0.5 * rho * (Lap @ F)  # broadcast f_p(t+1); (16)
        record.store(t, F, solved_loss(net.data, sol), sol, drawn)

    inexact, uncovered = _warn_inexact("dvp_graph", record, inner_tol)
    ledger, paper = [], None
    if private:
        note = (f"DVP broadcast f_p(t+1) of the most exposed node: objective perturbation, pure ε₀ = ζΔ + ᾱ "
                f"(Δ = {sensitivity:g}, Jacobian ᾱ), zeta_rule={zeta_rule!r}{inexact}")
        ledger = _ledger(spent, zeta, [note] * T, delta)
        paper = _paper_claim(alphas, calibration)
    jac = accounting.zhang2017_dvp_jacobian(local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, extra=phi,
                                            loss_weight=w, c1=problem.per_example_smoothness)
    noise = {} if not private else {
        "alpha": alphas, "zeta": zeta, "extra_penalty": phi, "jacobian": np.asarray(jac, float), "spent": spent,
        "sensitivity": sensitivity, "zeta_rule": zeta_rule, "calibration": calibration,
        "solve_residual": float(record.residual.max())}
    return finish(problem, "dvp_graph", net, record, rho=rho, noise=noise, ledger=ledger, delta=delta,
                  privacy_paper=paper, not_covered=uncovered if private else None,
                  params={"inner_tol": inner_tol, "max_inner": max_inner, "calibration": calibration,
                          "zeta_rule": zeta_rule, "hessians": solve.hessian_refreshes, "passes": solve.passes,
                          "local_models": F.copy()})


# ====================================================================== Algorithm 3
@register("pvp_graph", paper="zhang2017", private=True, setting="graph",
          description="ADMM over a network with primal variable perturbation (noisy broadcasts, ℓ2-Laplace noise, "
                      "a final DVP step; Zhang & Zhu 2017, Alg. 3)",
          tasks=("logistic-l2",), tuning=_TUNING,
          constraints={**_CONSTRAINTS, "neighbour_term": Options(NEIGHBOUR_TERMS)})
@one_blas_thread
@_sharing_products
def pvp_graph(problem: Problem, *, epsilon: float, delta: float = 1e-5, rho: float = 0.1, iterations: int = 100,
              seed: int = 0, topology: str | topologies.Topology = "ring", n_agents: int | None = None,
              sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
              calibration: str = "accountant", alpha_schedule: np.ndarray | None = None, neighbour_term: str = "text",
              zeta_rule: str = "proof", min_local_size: int = 1, inner_tol: float = 1e-9,
              max_inner: int = 100) -> Trace:
    """Primal variable perturbation over a network: Zhang & Zhu (2017), Algorithm 3, eqs. (18)–(23).

    Parameters
    ----------
    problem : Problem
        As in :func:`dvp_graph`.
    epsilon : float
        As in :func:`dvp_graph`.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 0.1
        As in :func:`dvp_graph`.
    iterations : int, default 100
        As in :func:`dvp_graph`.
    seed : int, default 0
        As in :func:`dvp_graph`.
    topology : str or Topology, default "ring"
        As in :func:`dvp_graph`.
    n_agents : int or None, default None
        As in :func:`dvp_graph`.
    sizes : str, sequence of int or None, default None
        As in :func:`dvp_graph`.
    owner : ndarray or None, default None
        As in :func:`dvp_graph`.
    calibration : str, default "accountant"
        As in :func:`dvp_graph`.
    alpha_schedule : ndarray or None, default None
        As in :func:`dvp_graph`.
    neighbour_term : str, default "text"
        ``"text"`` (default): (18) centred at ``½(f_p(t) + V_j(t))`` — the text's "(9)" with the
        neighbours' broadcasts; ``"eq18"``: at ``½(f_p(t) + V_j(t) − ε_p(t))`` as displayed.
    zeta_rule : str, default "proof"
        The final DVP step's rule under ``calibration="paper"`` (see :func:`dvp_graph`).
    min_local_size : int, default 1
        As in :func:`dvp_graph`.
    inner_tol : float, default 1e-9
        As in :func:`dvp_graph`.
    max_inner : int, default 100
        As in :func:`dvp_graph`.

    Returns
    -------
    Trace
        Iterates: the network average of the broadcasts (``V`` for t < T, the final ``f`` at T).
        ``noise``: ``alpha`` (T, N), ``zeta`` (T, N; the last row is the DVP step's),
        ``sensitivity`` (T, N: the ℓ2-sensitivity of each broadcast V, and the final step's in
        units of its noise), ``spent``, ``extra_penalty`` (final step), ``jacobian``.

    Notes
    -----
    Iterations t = 0 … T−2, every node p at once (``F`` holds the *unreleased* f_p, ``V`` the
    broadcasts)::

        f_p(t+1) = argmin_f w_p h_p(f) + λ/2‖f‖² + 2λ_p(t)ᵀf + ρ Σ_{j∈N_p} ‖f − ½(f_p(t) + V_j(t))‖²   (18)
        V_p(t+1) = f_p(t+1) + ε_p(t+1),   density(ε_p) ∝ exp(−ζ_p(t)‖ε‖);  broadcast V_p(t+1)        (19)
        λ_p(t+1) = λ_p(t) + (ρ/2) Σ_{j∈N_p} (V_p(t+1) − V_j(t+1))                                   (20)

    and the last iteration is one DVP step (21)–(23) from the latest ``f_p``, ``λ_p`` and the
    neighbours' broadcasts, whose exact minimiser is the output (so T iterations in all, and
    ``epsilon=math.inf`` is ``admm_graph`` with T iterations exactly).

    **Privacy.** Under ``calibration="paper"`` the noise is the paper's, ``ζ = λm_pα/(2w_p c)``
    (Appendix B's sensitivity ``2w_pc/(λm_p)``), and the final step's by ``zeta_rule`` with
    ``Δ = 2c``. Appendix B holds the unreleased ``f_p(t)`` fixed; the ledger records the
    sensitivity with the hidden state tracked
    (:func:`~dpadmm_lite.accounting.zhang2017_pvp_hidden_sensitivity`: smaller than the paper's
    for the broadcasts, larger for the final step, whose objective contains the hidden
    ``f_p(t_s)``). Under the default calibration the per-iteration α is the budget's, and every
    step's ζ meets it for that sensitivity. The solver's certified distance to the exact
    minimiser is part of the sensitivity (twice ``inner_tol·√d/(λ + 2ρD_p)``); a run whose solves
    miss ``inner_tol`` has no certified distance for the neighbouring dataset, warns, and reports
    its privacy as not covered (ε = ∞).

    References
    ----------
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("pvp_graph", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    epsilon, delta, rho, T, seed, inner_tol, max_inner = _run_checks(
        problem, "pvp_graph", epsilon, delta, rho, iterations, seed, calibration, inner_tol, max_inner)
    check.choice("neighbour_term", neighbour_term, NEIGHBOUR_TERMS)
    check.choice("zeta_rule", zeta_rule, accounting.ZHANG2017_DVP_RULES)
    if calibration == "accountant" and zeta_rule != "proof":
        raise ValueError(f"zeta_rule must be 'proof' with calibration='accountant' (the rule that certifies α), got "
                         f"{zeta_rule!r}; use calibration='paper' to run the paper's other rules")
    net = _network(problem, topology=topology, n_agents=n_agents, sizes=sizes, owner=owner, seed=seed,
                  min_local_size=min_local_size)
    N, d = net.n_agents, problem.d
    Adj, Lap, D = net.graph.adjacency, net.graph.laplacian, net.degrees
    m, w, c = net.data.sizes, net.data.weights, problem.lipschitz
    private = not math.isinf(epsilon)

    # privacy plan: α_p(t); sensitivities of the broadcasts with the hidden state tracked (book) …
    alphas = _alphas(epsilon, delta, calibration, _schedule(alpha_schedule, T, N))
    residual = inner_tol * math.sqrt(d) / (problem.lam + 2.0 * rho * D)  # certified ‖f − argmin‖ at inner_tol
    hidden = np.asarray(accounting.zhang2017_pvp_hidden_sensitivity(
        max(T - 1, 1), local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, loss_weight=w, lipschitz=c,
        form=neighbour_term, residual=residual), float).reshape(max(T - 1, 1), N)[:T - 1]
    planned_final = 2.0 * c + (m / w) * rho * D * (hidden[-1] if T > 1 else 0.0)  # final DVP step (ε units)
    # … and the noise: the paper's formulas, or the budget's α for those sensitivities
    if calibration == "paper":
        zeta_v = np.empty((0, N)) if T == 1 else np.asarray(accounting.zhang2017_pvp_zeta(
            alphas[:T - 1], local_size=m, lam=problem.lam, loss_weight=w), float).reshape(T - 1, N) / c
        zeta_f, phi_f, _ = _dvp_plan(problem, net, alphas[T - 1:], rho, rule=zeta_rule, sensitivity=2.0 * c)
    else:
        zeta_v = alphas[:T - 1] / hidden  # every broadcast spends exactly α_p(t)
        zeta_f, phi_f = (np.asarray(v, float) for v in accounting.zhang2017_dvp_zeta(
            alphas[T - 1:], local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, loss_weight=w,
            c1=problem.per_example_smoothness, sensitivity=planned_final))

    solve = LocalSolver(net.data, problem.lam, "l2", 2.0 * rho * D, inner_tol=inner_tol, max_inner=max_inner)
    rng = np.random.default_rng(seed)
    record = Record(T, N, d)
    F = np.zeros((N, d))  # f_p(0) = V_p(0) = 0, λ_p(0) = 0
    V, E = F, None
    Lam = np.zeros((N, d))
    for t in range(T - 1):
        b = 2.0 * Lam - rho * (D[:, None] * F + Adj @ V)  # (18): 2λ_p + the ρ-term's linear part …
        if private and neighbour_term == "eq18" and E is not None:
            b = b + rho * D[:, None] * E  # … centred at ½(f_p(t) + V_j(t) − ε_p(t)) as displayed
        sol = solve(b)  # (18): the exact minimiser, warm-started at f_p(t)
        F = sol.F
        V, drawn, loss = F, 0.0, None
        if private:  # (19): V_p(t+1) = f_p(t+1) + ε_p(t+1)
            E = mechanisms.l2_laplace(rng, zeta_v[t], (N, d))
            V = F + E
            drawn = float(np.linalg.norm(E, axis=1).mean())
            loss = net.data.loss(net.data.margins(V))
        Lam = Lam + 0.5 * rho * (Lap @ V)  # broadcast V_p(t+1); (20)
        record.store(t, V, solved_loss(net.data, sol) if loss is None else loss, sol, drawn)

    # the final iteration t_s: one DVP step (21)–(23) from f_p(t_s), λ_p(t_s) and the neighbours' V_j(t_s)
    Mu, drawn = Lam, 0.0
    if private:  # (21)
        E_final = mechanisms.l2_laplace(rng, zeta_f[0], (N, d))
        Mu = Lam + (w / (2.0 * m))[:, None] * E_final
        drawn = float(np.linalg.norm(E_final, axis=1).mean())
    b = 2.0 * Mu - rho * (D[:, None] * F + Adj @ V)
    extra = phi_f[0] if private and np.any(phi_f[0]) else None
    sol = solve(b, extra=extra)  # (22)
    F = sol.F  # the output; (23) would update λ_p once more
    record.store(T - 1, F, solved_loss(net.data, sol), sol, drawn)

    inexact, uncovered = _warn_inexact("pvp_graph", record, inner_tol)
    ledger, paper, noise = [], None, {}
    if private:
        # the broadcasts: ℓ2-Laplace with the tracked sensitivity, planned from public numbers and the certified
        # tolerance (a solve that missed it makes the run not covered instead: see _warn_inexact)
        sens_v = hidden
        final_sensitivity = planned_final  # ε moves by 2c + (m/w)ρD·E
        spent_f = np.asarray(accounting.zhang2017_dvp_spent(
            zeta_f, local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, extra=phi_f, loss_weight=w,
            c1=problem.per_example_smoothness, sensitivity=final_sensitivity), float)
        spent = np.vstack([zeta_v * sens_v, spent_f])
        zeta = np.vstack([zeta_v, zeta_f])
        notes = [f"PVP broadcast V_p(t+1) = f_p(t+1) + ε_p(t+1) of the most exposed node (ℓ2-Laplace; sensitivity "
                 f"with the unreleased f_p(t) tracked, neighbour_term={neighbour_term!r}){inexact}"] * (T - 1)
        notes.append(f"PVP final DVP step of the most exposed node: objective perturbation with the hidden f_p(t_s) in "
                     f"the objective, pure ε₀ = ζΔ + ᾱ, zeta_rule={zeta_rule!r}{inexact}")
        ledger = _ledger(spent, zeta, notes, delta)
        paper = _paper_claim(alphas, calibration)
        jac = accounting.zhang2017_dvp_jacobian(local_size=m, lam=problem.lam, rho=rho, n_neighbors=D, extra=phi_f,
                                                loss_weight=w, c1=problem.per_example_smoothness)
        noise = {"alpha": alphas, "zeta": zeta, "sensitivity": np.vstack([sens_v, final_sensitivity[None, :]]),
                 "spent": spent, "extra_penalty": phi_f[0], "jacobian": np.asarray(jac, float).reshape(-1),
                 "paper_sensitivity": np.asarray(accounting.zhang2017_pvp_sensitivity(
                     local_size=m, lam=problem.lam, loss_weight=w), float) * c,
                 "neighbour_term": neighbour_term, "zeta_rule": zeta_rule, "calibration": calibration,
                 "solve_residual": float(record.residual.max())}
    return finish(problem, "pvp_graph", net, record, rho=rho, noise=noise, ledger=ledger, delta=delta,
                  privacy_paper=paper, not_covered=uncovered if private else None,
                  params={"inner_tol": inner_tol, "max_inner": max_inner, "calibration": calibration,
                          "neighbour_term": neighbour_term, "zeta_rule": zeta_rule,
                          "hessians": solve.hessian_refreshes, "passes": solve.passes, "local_models": F.copy()})

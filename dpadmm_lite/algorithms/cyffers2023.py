"""Private ADMM as a noisy fixed-point iteration (Cyffers, Bellet & Basu 2023), and its DP-SGD baseline.

The problem is ``min_x (1/n) Σ_i ℓ(x; a_i, b_i) + λ r(x)`` (a :class:`~dpadmm_lite.problems.Problem`
with the squared or logistic loss and ``r = ‖·‖₁`` or ``½‖·‖²``), written as the consensus problem
of the paper's Sec. 5.1: one block ``x_i`` per record (a *user* holding one record), one shared
``z``, constraints ``x_i = z``. ADMM is the Douglas–Rachford / Lions–Mercier fixed-point
iteration on the stacked variable ``u = (u_1, …, u_n)`` (eqs. 5–7), and privacy is Gaussian noise
added to each block's update (Algorithm 1, "noisy Krasnosel'skii–Mann")::

    z_{k+1}   = prox_{(γ/n) λ r}( mean_i u_{k,i} )                               (5)
    x_{k+1,i} = prox_{(γ/n) ℓ_i}( 2 z_{k+1} − u_{k,i} )                           (6)
    u_{k+1,i} = u_{k,i} + 2θ ( Clip(x_{k+1,i} − z_{k+1}, C) + ½ σ ξ_{k+1,i} ),   ξ ~ N(0, I)   (7)

and only the ``z_k`` are released. Notation: θ ∈ (0, 1] is the paper's relaxation step λ (the
book's λ is the regularisation weight, the paper's κ in App. E); ξ is the paper's η (the book's η
is a step size); γ > 0 is the paper's γ — the inverse ADMM penalty, ``γ = 1/ρ`` unless given.

=============================  =====================================================  ==========
name                           what                                                    paper
=============================  =====================================================  ==========
``admm_consensus``             consensus ADMM, every user every round (ε = ∞ only)     (5)–(7)
``private_admm``               centralized private ADMM                               Alg. 2, 6
``admm_federated``             the same with Poisson user sampling (ε = ∞ only)        Alg. 3
``private_admm_federated``     federated private ADMM, users sampled at rate q         Alg. 3
``admm_walk``                  one user per step along a random walk (ε = ∞ only)      Alg. 4
``private_admm_walk``          fully decentralized private ADMM (random walk)          Alg. 4
``prox_sgd``                   proximal SGD with the same user sampling (ε = ∞ only)   Prop. 1
``dp_prox_sgd``                proximal DP-SGD, the baseline of the experiment         App. E
=============================  =====================================================  ==========

Each private algorithm with ``epsilon=math.inf`` draws no noise and gives exactly the iterates of
its non-private twin (the same code with σ = 0; user sampling and the walk use their own random
stream, so they do not depend on whether noise is drawn).

Vectorised: users are the first axis of the stacked ``u`` (shape ``(n, p)``), a round updates all
its users in one pass, and the engine also runs many independent runs at once (a leading axis of
runs: ε values × seeds × hyper-parameters), each with its own random streams, so that a batch
gives the same iterates as the runs one by one (:func:`run_many`, :func:`released_models`). A batch
is split into fixed groups of runs (about :data:`_GROUP_PAIRS` (run, user) pairs per round, so that
a round's work arrays stay in a core's cache) that :data:`THREADS` threads share (numpy releases
the GIL while it draws and computes); the groups do not depend on the number of threads, and so
neither do the results, bit for bit. A round of a group makes one pass per line of (6)–(7) in work
arrays reused by every round, and each run's noise is drawn straight into its rows and scaled in
place (:class:`_Noise`: the numbers :func:`dpadmm_lite.mechanisms.gaussian` would give; an audit that
intercepts the mechanism sees one call per run and chunk of rounds).

Reference: E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
centralized and federated learning", ICML 2023 (``papers/cyffers2023_noisy_fixed_point_private_admm.txt``).

Choices where the paper is inconsistent or silent (each is said again where it matters):

* **Units of γ.** The per-record prox step is ``γ/n`` and the z-step ``prox_{(γ/n)λr}``: the
  Douglas–Rachford pair with parameter γ for the normalised objective ``(1/n)Σℓ_i + λr``. This is
  App. E's text (``prox_{γ/2n (a·x − b)²}``) and what Theorem 2's ``1/n²`` needs (App. C.2 writes
  the data term as ``(1/n)Σf``). Algorithm 2 prints ``prox_{γ f_i}`` and ``prox_{γ r}`` — the same
  algorithm with γ renamed γ/n, but then Theorem 2 would read ``8αKL²γ²/σ²``. Algorithm 6 prints
  ``(aaᵀ + (2n/γ)I)`` with ``S_{γκ}``: taken literally that pair solves the Lasso with κ
  multiplied by 2n. We use the pair that solves the stated problem.
* **z_k vs z_{k+1}.** Algorithm 6 uses ``z_k`` in the x-step right after computing ``z_{k+1}``;
  we use ``z_{k+1}`` (eq. 6, Algorithm 2).
* **The server of Algorithm 3** updates ``ẑ = z_k + (1/n)Σ Δu_i``; when r ≠ 0, ``z_k`` is already
  thresholded, so the update must start from the running mean ``ū_k`` (``z = prox(ū)``): we keep
  ``ū``.
* **Clipping** (App. E, Remark 6): ``Clip(x − z, C)``. Replacing one record moves the clipped
  difference by at most ``min(2C, 2Lγ/n)`` (clipping is a projection; an L-Lipschitz loss moves
  ``x_i`` by at most ``2Lγ/n``), so one u-block moves by ``Δ = 2θ·min(2C, 2Lγ/n)`` against noise
  ``θσ``. The squared loss has no L: it needs ``clip``.
* **User sampling** is Poisson (each user independently with probability q), drawn as Geometric(q)
  gaps between participations along the (round, user) trials (:class:`_Schedule`; about qKn draws
  instead of Kn uniforms), and the walk moves to a uniform neighbour on the topology (on the complete graph: a uniform *other* user; the proof
  of Theorem 4 lets the walk stay with probability 1/n — immaterial for n in the hundreds).

Privacy (``calibration="accountant"``, the default): ``epsilon``, ``delta`` are the end-to-end
budget for replace-one neighbours (one user's record replaced), and the ledger is calibrated to
meet it, for every number of users n and every sampling rate q:

* centralized: ``K`` Gaussian releases of the u-update (every user, every round), sensitivity Δ;
* federated: each participation of the most exposed user is one Gaussian release, sensitivity Δ,
  noise θσ, *without* amplification by sampling; the participation schedule does not depend on
  the data, so it is drawn first (as the walk's path) and the ledger counts the rounds the most
  exposed user takes part in. This is the guarantee against the server, who sees every message,
  and so against anyone who sees only the ``z_k``. Why no amplification: see
  :func:`private_admm_federated`;
* walk: the local model (any user, or an eavesdropper, sees every ``z``): each visit of the most
  visited user is one Gaussian release with sensitivity Δ; the walk's path does not depend on the
  data, so its visit counts are drawn first. The walk needs n ≥ 2 users.

Why the rounds compose although each user keeps a private state ``u_i`` that holds its own
earlier noise (the same argument in the three modes): give the observer every message ``Δu_i``
and the schedule (who takes part when). Then ``u_i``, the sum of user i's own messages, and
``z_k`` are functions of what was released, and conditional on it the next message of user i is
``2θ·Clip(x_i − z_k, C) + θσξ`` with ``x_i`` computed from that known state and the record:
replacing the record moves its mean by at most Δ = 2θ·min(2C, 2Lγ/n) whatever the state
(clipping is a projection, the prox bound holds at every point), while the other users' messages
are the same functions of the released past in both worlds. So the messages are an adaptive
composition of Gaussian mechanisms (Δ, θσ), one per participation, and the ``z_k`` are
post-processing. The hidden own noise does not enlarge the sensitivity: given the messages it
is not hidden.

``calibration="paper"`` keeps the paper's statement instead: σ such that Theorem 2 (centralized),
Theorem 3 central (federated) or Theorem 4 (walk on the complete graph; the local bound of
Theorem 3 on other graphs) gives ε with the paper's conversion ``ε + ln(1/δ)/(α − 1)``. Every trace
reports both: ``privacy`` (the unified accountant on what was drawn) and ``privacy_paper``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Mapping, Sequence

import numpy as np
from scipy.special import expit

from .. import _constraints
from .. import _validate as check
from .._constraints import SCALE, Interval, Options
from .. import mechanisms
from .. import topology as _topology
from ..privacy import PrivacyEvent, PrivacyGuarantee
from ..problems import Problem, soft_threshold
from ..registry import check_finite, register
from ..trace import Trace, from_iterates

__all__ = ["admm_consensus", "private_admm", "admm_federated", "private_admm_federated", "admm_walk",
           "private_admm_walk", "prox_sgd", "dp_prox_sgd", "run_many", "released_models", "noise_scale", "MODES",
           "CALIBRATIONS", "SGD_NEIGHBOURS", "THREADS", "PAPER"]

#: The three trust models of the paper (Sec. 5.2–5.4).
MODES = ("centralized", "federated", "walk")
#: How σ is chosen for a finite ε: the book's unified accountant (default) or the paper's theorems.
CALIBRATIONS = ("accountant", "paper")
PAPER = "cyffers2023"

_TASKS = ("lasso", "logistic-l1", "logistic-l2")
# Candidate values for a fair comparison (the arena): γ = 1/ρ of the order of n; the chapter's tuning on the
# paper's Lasso picks small relaxations and clipping thresholds at small budgets.
_ADMM_TUNING = {"rho": (1e-4, 3e-4, 1e-3, 3e-3), "relaxation": (0.1, 0.25, 0.5), "clip": (0.001, 0.003, 0.01, 0.03)}
_WALK_TUNING = {**_ADMM_TUNING, "iterations": (1000, 10_000)}  # a walk step updates one user: more steps
#: How DP-SGD's replace-one guarantee is accounted: the exact replace-one pair of the Poisson-subsampled
#: Gaussian (default), or the looser add/remove analysis with sensitivity 2C (sound, more noise for the same ε).
SGD_NEIGHBOURS = ("replace_one", "add_remove")
_SGD_TUNING = {"step": (0.03, 0.1, 0.3, 1.0), "clip": (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)}
#: The relaxation θ of the fixed-point iteration z ← (1 − θ)z + θ·T(z) (the paper's λ).
_RELAXATION = Interval(Real, 1e-12, 1, note="the paper's λ; below 1e-12 a record's sensitivity underflows to 0")
# The ranges of the options of each run beyond the shared ones (sampling_rate: registry.SHARED_CONSTRAINTS):
# the registry checks them, tests/test_bad_input.py reads them; run_many checks the same in _plan.
_ADMM_CONSTRAINTS = {"gamma": [SCALE, None], "relaxation": _RELAXATION, "clip": [SCALE, None]}
_PRIVATE_ADMM_CONSTRAINTS = {**_ADMM_CONSTRAINTS, "calibration": Options(CALIBRATIONS)}
_WALK_CONSTRAINTS = {**_ADMM_CONSTRAINTS, "graph_seed": Interval(Integral, 0, None)}
_PRIVATE_WALK_CONSTRAINTS = {**_PRIVATE_ADMM_CONSTRAINTS, "graph_seed": Interval(Integral, 0, None)}
_SGD_CONSTRAINTS = {"step": [SCALE, None], "clip": [SCALE, None]}
_PRIVATE_SGD_CONSTRAINTS = {**_SGD_CONSTRAINTS, "neighbours": Options(SGD_NEIGHBOURS),
                            "calibration": Options(["accountant"], note="the paper states no theorem for its "
                                                   "DP-SGD baseline: Prop. 1 only recovers the algorithm")}
_CHUNK_ELEMENTS = 1 << 22  # noise drawn per chunk of rounds (bounds memory)
#: Threads a batch of runs is split over by default (both cores of the book's machine; one per run at most).
THREADS = min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
_GAP_BLOCK = 1 << 14  # geometric gaps of the participation schedule drawn per call
#: Pairs (run, user) a group of runs updates per round, about: a batch is split into groups of runs this big, so
#: that a round's work arrays stay near a core (p = 64: 512 kB each); threads take the groups one after another.
#: Smaller groups pay numpy's per-call cost more often, larger ones leave the cache.
_GROUP_PAIRS = 1 << 10
#: The same for proximal DP-SGD, whose round is a handful of passes over its pairs and many operations on
#: (runs × p) arrays: small groups leave a round's time to numpy's per-call cost and the GIL, so that a second
#: thread does not help; larger groups let it. The groups do not change the numbers.
_SGD_GROUP_PAIRS = 1 << 12


# ====================================================================== the data, per record
@dataclass(frozen=True)
class _Records:
    """What the updates read from a problem: one record per user, as stacked arrays."""

    X: np.ndarray  # (n, p) features a_i
    y: np.ndarray  # (n,) labels b_i
    sq_norms: np.ndarray  # (n,) ‖a_i‖²
    loss: str
    regularizer: str
    lam: float

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]


def _records(problem, algorithm: str) -> _Records:
    if problem.loss not in ("squared", "logistic") or problem.regularizer not in ("l1", "l2"):
        raise ValueError(f"problem: {algorithm!r} solves the Lasso and ℓ1/ℓ2-regularised logistic regression "
                         f"(regularizer 'l1' or 'l2'); got loss={problem.loss!r}, regularizer={problem.regularizer!r}")
    X = np.ascontiguousarray(problem.X, dtype=float)
    return _Records(X, np.asarray(problem.y, float), np.einsum("ij,ij->i", X, X), problem.loss, problem.regularizer,
                    float(problem.lam))


def _rowdot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise inner products ``(A * B).sum(-1)`` (same rounding whatever the number of rows)."""
    return np.einsum("...j,...j->...", A, B)


def _prox_coefficient(records: _Records, users, aw: np.ndarray, step: np.ndarray) -> np.ndarray:
    """c with ``prox_{s ℓ_i}(w) = w + c·a_i``, from ``a_i·w`` alone (vectorised over users).

    Squared loss ``ℓ_i = ½(a·x − b)²``: ``c = (b − a·w)/(1/s + ‖a‖²)`` — App. E's
    ``(aaᵀ + (n/γ)I)⁻¹(ab + (n/γ)w)`` by Sherman–Morrison, with ``s = γ/n``. Logistic loss: the
    margin ``t = a·x`` solves ``t + s‖a‖² ℓ'(t) = a·w`` (monotone, solved by safeguarded Newton), and
    ``c = −s ℓ'(t)``.
    """
    return _coefficient(records.loss, aw, records.y[users], records.sq_norms[users], step)


def _coefficient(loss: str, aw, b, a2, step, denominator=None):
    """:func:`_prox_coefficient` from the pairs' labels ``b``, ``‖a‖²`` and steps (``denominator``: the
    squared loss's ``1/s + ‖a‖²`` when already computed; the same numbers)."""
    if loss == "squared":
        return (b - aw) / (1.0 / step + a2 if denominator is None else denominator)
    return -step * _logistic_slope(_logistic_prox_margin(aw, b, step * a2), b)


def _logistic_slope(t, b):
    """ℓ'(t) of ``ℓ(t) = log(1 + exp(−b t))``: ``−b σ(−b t)``."""
    return -b * expit(-b * t)


def _logistic_prox_margin(aw, b, h, iterations: int = 100):
    """Solve ``φ(t) = t − aw + h ℓ'(t) = 0`` for every entry (``h = s‖a‖² ≥ 0``).

    ``φ' = 1 + hℓ'' ∈ [1, 1 + h/4]`` and ``|ℓ'| ≤ 1``, so the root lies in ``[aw − h, aw + h]``;
    Newton steps that leave the shrinking bracket are replaced by bisection.
    """
    lo, hi = aw - h, aw + h
    t = aw.copy()
    tolerance = 1e-14 * (1.0 + np.abs(aw))
    for _ in range(iterations):
        phi = t - aw + h * _logistic_slope(t, b)
        if np.all(np.abs(phi) <= tolerance):
            break
        lo = np.where(phi < 0, t, lo)
        hi = np.where(phi > 0, t, hi)
        sig = expit(b * t)
        newton = t - phi / (1.0 + h * sig * (1.0 - sig))
        t = np.where((newton >= lo) & (newton <= hi), newton, 0.5 * (lo + hi))
    return t


def _expit(x: float) -> float:
    """``expit`` of one float: ``1/(1 + e^{−x})``, scipy's formula (the same double, checked on 10⁶ draws)."""
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:  # e^{−x} beyond the doubles: scipy's expit gives 0 there too
        return 0.0


def _walk_coefficient(loss: str, aw: float, b: float, a2: float, step: float) -> float:
    """:func:`_coefficient` of one pair, on Python floats: the same operations in the same order (so the
    same doubles), without numpy's per-call cost on size-1 arrays (the walk solves one prox per step,
    thousands of them in a live re-run)."""
    if loss == "squared":
        return (b - aw) / (1.0 / step + a2)
    h = step * a2
    lo, hi = aw - h, aw + h
    t = aw
    tolerance = 1e-14 * (1.0 + abs(aw))
    for _ in range(100):  # _logistic_prox_margin, one entry
        phi = t - aw + h * (-b * _expit(-b * t))
        if abs(phi) <= tolerance:
            break
        if phi < 0:
            lo = t
        if phi > 0:
            hi = t
        sig = _expit(b * t)
        newton = t - phi / (1.0 + h * sig * (1.0 - sig))
        t = newton if lo <= newton <= hi else 0.5 * (lo + hi)
    return -step * (-b * _expit(-b * t))


def _prox_regularizer(records: _Records, v: np.ndarray, step) -> np.ndarray:
    """``prox_{step·λ r}(v)``: soft-thresholding (ℓ1) or shrinkage (ℓ2); ``step`` broadcasts per run."""
    if records.regularizer == "l1":
        return soft_threshold(v, step * records.lam)
    return v / (1.0 + step * records.lam)


# ====================================================================== the ADMM engine
@dataclass
class _Settings:
    """Per-run parameters of a batch of runs (arrays of shape (B,))."""

    gamma: np.ndarray
    theta: np.ndarray
    clip: np.ndarray  # inf: no clipping
    sigma: np.ndarray  # std of ξ before the ½·2θ = θ factor; 0: no noise

    @property
    def runs(self) -> int:
        return len(self.gamma)


def _streams(seeds: Sequence[int]):
    """Two generators per run from ``default_rng(seed)``: (who takes part, noise)."""
    pairs = [np.random.default_rng(s).spawn(2) for s in seeds]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _chunk_noise(noise_rngs, scale: np.ndarray, rows_of_run: list, shape_of_run: list, total: int, p: int):
    """The noise of a chunk of rounds: each run's draws from its own stream, in one call per run.

    ``rows_of_run[b]`` are the rows (of the chunk's ``(total, p)`` layout) that run b's draw fills,
    in the order of its stream; ``shape_of_run[b]`` the shape of that draw. Every draw goes through
    :func:`dpadmm_lite.mechanisms.gaussian` with the run's noise scale (θσ for ADMM, σ for DP-SGD),
    and a run that draws in one call ``(r, …, p)`` fills exactly what r calls of its rounds would.
    Returns ``None`` when no run is noisy.
    """
    noisy = [b for b in range(len(scale)) if scale[b] > 0 and np.prod(shape_of_run[b]) > 0]
    if not noisy:
        return None
    if len(scale) == 1:  # one run: its draw is the chunk, in order
        return mechanisms.gaussian(noise_rngs[0], scale[0], shape_of_run[0]).reshape(total, p)
    out = np.empty((total, p)) if len(noisy) == len(scale) else np.zeros((total, p))  # every row drawn, or zeros
    for b in noisy:  # a loop over the runs of a batch, not over users
        out[rows_of_run[b]] = mechanisms.gaussian(noise_rngs[b], scale[b], shape_of_run[b]).reshape(-1, p)
    return out


def _clip_factor(norms: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """``min(1, C/‖v‖)`` per row: ``Clip(v, C) = factor · v`` (as :func:`mechanisms.clip`; tested)."""
    return np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))


class _Round:
    """The (run, user) pairs of one round, sorted by run then user, and their per-run segments."""

    def __init__(self, runs: np.ndarray, users: np.ndarray, B: int, n: int):
        self.runs, self.users = runs, users
        # bincount takes intp: the schedules' int64 positions do not cast 'safely' on 32-bit WebAssembly
        self.counts = np.bincount(runs.astype(np.intp, copy=False), minlength=B)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)])
        self.flat = runs * n + users  # row of the pair in the (B·n, p) stack of u-blocks

    def sum(self, values: np.ndarray, B: int) -> np.ndarray:
        """Sum the pairs' rows per run: shape (B, …), each run's rows added one after the other."""
        out = np.zeros((B,) + values.shape[1:])
        taking = np.flatnonzero(self.counts)
        if taking.size:
            out[taking] = np.add.reduceat(values, self.starts[taking], axis=0)
        return out


def _admm_block_update(records: _Records, U, Z, users, runs, s: _Settings, noise):
    """Lines (6)–(7) for a list of (run, user) pairs: returns ``(Δu, ‖x − z‖)`` per pair.

    ``U``: the pairs' u-blocks ``(m, p)``; ``Z``: their run's ``z_{k+1}`` ``(m, p)``; ``noise``:
    the drawn ``θσξ`` ``(m, p)`` or ``None`` (σ = 0). One pass over the pairs per line, no loop.
    """
    step = s.gamma[runs] / records.n  # per-record prox step γ/n
    E = U - Z
    W = Z - E  # the prox point 2z_{k+1} − u_{k,i}
    a = records.X[users]
    c = _prox_coefficient(records, users, _rowdot(a, W), step)  # (6) x = prox_{(γ/n)ℓ_i}(W) = W + c·a_i
    D = a  # a fresh gathered copy: scaled in place
    D *= c[:, None]
    D -= E  # x − z_{k+1} = W + c·a_i − z_{k+1}
    norms = np.sqrt(_rowdot(D, D))
    theta = s.theta[runs]
    D *= (2.0 * theta * _clip_factor(norms, s.clip[runs]))[:, None]  # (7) 2θ Clip(x − z, C) …
    if noise is not None:
        D += noise  # … + 2θ · ½σξ (drawn with standard deviation θσ)
    return D, norms


def _walk_step(records: _Records, U, Ubar, Z, i: int, s: _Settings, noise, history, k: int):
    """One step of Algorithm 4 for a single run, on vectors: user i updates (6)–(7), then (5).

    The same arithmetic as :func:`_admm_block_update` for one pair; ``U`` and ``Ubar`` are updated
    in place and the new ``Z`` (shape (1, p)) is returned.
    """
    n = records.n
    a, u, z = records.X[i], U[i], Z[0]
    w = 2.0 * z - u  # the prox point 2z − u_i
    c = _walk_coefficient(records.loss, float(a @ w), float(records.y[i]), float(records.sq_norms[i]),
                          float(s.gamma[0]) / n)  # (6) x = w + c·a_i
    D = w - z + c * a  # x − z
    norm = math.sqrt(D @ D)
    du = (2.0 * s.theta[0] * min(1.0, s.clip[0] / norm if norm > 0 else 1.0)) * D  # (7) 2θ Clip(x − z, C)
    if noise is not None:
        du += noise[0]  # + 2θ · ½σξ
    U[i] = u + du
    Ubar += du / n  # (1/n) Δu_i into the running mean ū
    Z = _prox_regularizer(records, Ubar, s.gamma[:1, None] / n)  # (5)
    history.store(k, Z, np.array([norm]), s.clip, None, 1)
    return Z


class _History:
    """What a batch of runs records per round: z (optional), consensus violation, clipped share."""

    def __init__(self, K: int, B: int, p: int, keep_iterates: bool):
        self.z = np.empty((K, B, p)) if keep_iterates else None
        self.violation = np.empty((K, B))
        self.clipped = np.empty((K, B))
        self.final = np.zeros((B, p))
        self.participations = None  # (B, n) rounds each user took part in (user sampling only)

    @classmethod
    def merge(cls, parts: list["_History"]) -> "_History":
        """The history of a batch from those of its groups of runs (in run order)."""
        out = cls.__new__(cls)
        out.z = None if parts[0].z is None else np.concatenate([h.z for h in parts], axis=1)
        out.violation = np.concatenate([h.violation for h in parts], axis=1)
        out.clipped = np.concatenate([h.clipped for h in parts], axis=1)
        out.final = np.concatenate([h.final for h in parts], axis=0)
        out.participations = None if parts[0].participations is None else \
            np.concatenate([h.participations for h in parts], axis=0)
        return out

    def count(self, runs: np.ndarray, users: np.ndarray, B: int, n: int):
        """Add one participation for every (run, user) pair (Poisson-sampled rounds)."""
        if self.participations is None:
            self.participations = np.zeros((B, n), dtype=np.int64)
        pairs = (runs * n + users).astype(np.intp, copy=False)
        self.participations += np.bincount(pairs, minlength=B * n).reshape(B, n)

    def store(self, k: int, Z: np.ndarray, norms: np.ndarray, clip: np.ndarray, pairs: _Round | None, B: int):
        """Round k's z, and per run the RMS of ‖x_i − z‖ and the share of clipped users among those
        that took part (``pairs=None``: one user per run, in run order)."""
        self.final = Z
        if self.z is None:  # a sweep that keeps only the released model skips the curves
            return
        self.z[k] = Z
        if pairs is None:
            self.violation[k], self.clipped[k] = norms, norms > clip
            return
        sums = pairs.sum(np.column_stack([norms**2, norms > clip[pairs.runs]]), B)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.violation[k] = np.sqrt(sums[:, 0] / pairs.counts)
            self.clipped[k] = sums[:, 1] / pairs.counts


def _chunk(B: int, per_round: int, width: int, K: int) -> int:
    """Rounds whose participation masks (or noise) are drawn at once, within a memory bound."""
    return int(max(1, min(K, _CHUNK_ELEMENTS // max(1, B * per_round * width))))


class _Schedule:
    """Poisson sampling of one run: who takes part in which round, drawn from the run's sampling stream.

    Each user takes part in each round independently with probability q. Read the (round, user)
    pairs in order — round 0's users 0 … n−1, then round 1's, … — as one sequence of Bernoulli(q)
    trials: the gaps between consecutive participations are i.i.d. Geometric(q), so the stream
    draws about ``qKn`` geometric gaps instead of ``Kn`` uniforms, and position t is user ``t mod n``
    of round ``t // n``. Gaps are drawn in blocks of :data:`_GAP_BLOCK` and kept until used, so the
    schedule depends on the stream only — not on how the rounds are chunked or batched.
    """

    def __init__(self, rng: np.random.Generator, q: float, n: int):
        self.rng, self.q, self.n = rng, float(q), n
        self.pending = np.empty(0, dtype=np.int64)  # drawn positions not yet handed out
        self.last = -1  # the last position drawn

    def take(self, end: int) -> np.ndarray:
        """The next participations before flat position ``end`` (ascending)."""
        parts = [self.pending]
        while self.last < end:  # a loop over blocks of gaps (rarely more than one per chunk)
            positions = self.last + np.cumsum(self.rng.geometric(self.q, _GAP_BLOCK))
            self.last = int(positions[-1])
            parts.append(positions)
        drawn = np.concatenate(parts) if len(parts) > 1 else parts[0]
        cut = int(np.searchsorted(drawn, end))
        self.pending = drawn[cut:]
        return drawn[:cut].astype(np.intp, copy=False)  # indices: intp (int32 on 32-bit WebAssembly)


class _Pairs:
    """The (run, user) pairs of a chunk of rounds for a group of runs, round-major (then run, then user).

    ``counts[j, b]`` pairs of run b take part in round j; round j's pairs are rows
    ``bounds[j] … bounds[j + 1] − 1`` and, within them, run b's block starts at ``within[j, b]``: each
    (round, run) block is contiguous, so a run's noise for a round is drawn straight into its block.
    """

    def __init__(self, runs: np.ndarray, users: np.ndarray, counts: np.ndarray):
        self.runs, self.users, self.counts = runs, users, counts
        self.bounds = np.concatenate([[0], np.cumsum(counts.sum(axis=1))])
        self.within = np.cumsum(counts, axis=1) - counts
        self.taking = counts > 0

    def sum(self, j: int, values: np.ndarray, B: int) -> np.ndarray:
        """Round j's rows of ``values`` summed per run, shape (B, …): each run's rows one after the other."""
        out = np.zeros((B,) + values.shape[1:])
        taking = self.taking[j]
        if taking.all():
            out[:] = np.add.reduceat(values, self.within[j], axis=0)
        elif taking.any():
            out[taking] = np.add.reduceat(values, self.within[j][taking], axis=0)
        return out

    def round(self, j: int, B: int, n: int) -> _Round:
        """Round j's pairs as a :class:`_Round` (for the per-round diagnostics)."""
        lo, hi = self.bounds[j], self.bounds[j + 1]
        return _Round(self.runs[lo:hi], self.users[lo:hi], B, n)


def _sampled_pairs(schedules, k0: int, rounds: int, n: int) -> _Pairs:
    """Poisson sampling for rounds ``k0 … k0 + rounds − 1`` of a group of runs (each from its schedule)."""
    B = len(schedules)
    taken = [sch.take((k0 + rounds) * n) for sch in schedules]
    flat = np.concatenate(taken) - k0 * n  # run-major: run 0's (round, user) in order, then run 1's, …
    kk = flat // n
    runs = np.repeat(np.arange(B), [len(t) for t in taken])
    # round-major, a round's pairs staying in (run, user) order: a stable sort by round (a radix sort on 16 bits)
    order = np.argsort(kk.astype(np.int16) if rounds <= np.iinfo(np.int16).max else kk, kind="stable")
    counts = np.bincount((kk * B + runs).astype(np.intp, copy=False), minlength=rounds * B).reshape(rounds, B)
    return _Pairs(runs[order], (flat - kk * n)[order], counts)


def _all_pairs(rounds: int, B: int, n: int) -> _Pairs:
    """Every user of every run in every round (centralized)."""
    return _Pairs(np.tile(np.repeat(np.arange(B), n), rounds), np.tile(np.arange(n), rounds * B),
                  np.full((rounds, B), n, dtype=np.intp))  # intp: int32 on 32-bit WebAssembly


class _Work:
    """The work arrays of a round, ``(m, p)`` each, allocated once and reused by every round (grown when
    a round has more pairs): the update writes into them with ``out=``, no temporaries of that size."""

    def __init__(self, p: int):
        self.p, self.arrays = p, {}

    def __call__(self, name: str, m: int) -> np.ndarray:
        # (rows are gathered into them with ``take(…, mode="clip")``: the indices are in range by construction,
        # and "clip" skips take's bounds check, which costs more than the copy)
        a = self.arrays.get(name)
        if a is None or a.shape[0] < m:
            a = self.arrays[name] = np.empty((m + m // 4 + 1, self.p))
        return a[:m]


def _intercepted() -> bool:
    """Whether an audit sees the draws (:func:`dpadmm_lite.audit.intercept_noise` wraps mechanisms.gaussian)."""
    return getattr(mechanisms.gaussian, "__wrapped__", None) is not None


class _Noise:
    """The noise of a chunk of rounds of a group of runs, handed out one round at a time.

    Run b's noise is its own stream read in the order of its pairs, (round, user), with scale
    ``scale[b]`` (θσ for ADMM). Each (round, run) block is drawn straight into the round's work array
    and scaled in place (``standard_normal(out=…)``; the same numbers as
    :func:`dpadmm_lite.mechanisms.gaussian`, which draws then scales in place, and as one draw for the
    whole chunk: a stream gives the same numbers however its draws are split). While an audit
    intercepts the draws, each run instead draws its chunk in one call of ``mechanisms.gaussian`` of
    shape ``shapes[b]`` (the calls the audit sees and may edit) and the blocks are copied from it.
    """

    def __init__(self, rngs, scale: np.ndarray, pairs: _Pairs, shapes: list):
        counts = pairs.counts
        self.rngs, self.scale, self.counts = rngs, scale, counts
        self.noisy = [b for b in range(len(scale)) if scale[b] > 0 and counts[:, b].any()]
        self.partial = 0 < len(self.noisy) < len(scale)  # some runs add no noise: their rows are zeros
        self.drawn = None
        if self.noisy and _intercepted():
            self.drawn = {b: mechanisms.gaussian(rngs[b], scale[b], shapes[b]).reshape(-1, shapes[b][-1])
                          for b in self.noisy}
            self.start = np.cumsum(counts, axis=0) - counts  # run b's first row of round j in its draw

    def fill(self, j: int, out: np.ndarray, within: np.ndarray) -> bool:
        """Round j's noise into ``out`` (the round's rows; run b's block at ``within[b]``); False if none."""
        if not self.noisy:
            return False
        if self.partial:
            out.fill(0.0)
        for b in self.noisy:  # a loop over the runs of a group (a few), not over users
            c = self.counts[j, b]
            if not c:
                continue
            block = out[within[b]:within[b] + c]
            if self.drawn is None:
                self.rngs[b].standard_normal(out=block)
                block *= self.scale[b]
            else:
                block[...] = self.drawn[b][self.start[j, b]:self.start[j, b] + c]
        return True


@functools.lru_cache(maxsize=1024)
def _most_participations(seed: int, n: int, rounds: int, sampling_rate: float) -> int:
    """Rounds the most exposed user takes part in, over ``rounds`` Poisson-sampled rounds of a run.

    Replays the run's sampling stream (:func:`_streams`) exactly as the run draws it
    (:class:`_Schedule`), so the count is known before the run (the schedule does not depend on
    the data); :func:`_execute` checks it against the run.
    """
    positions = _Schedule(_streams([seed])[0][0], sampling_rate, n).take(rounds * n)
    return int(np.bincount((positions % n).astype(np.intp, copy=False), minlength=n).max())


def _admm_engine(records: _Records, s: _Settings, *, mode: str, iterations: int, seeds, sampling_rate=None,
                 paths=None, keep_iterates: bool = True) -> _History:
    """Run B private ADMM runs at once (one per entry of the settings) in the given mode.

    ``sampling_rate`` (B,) for ``"federated"``; ``paths`` (B, K) of visited users for ``"walk"``.
    Each run draws from its own two streams (:func:`_streams`), so the batch reproduces the runs
    one by one. A round makes one pass per line of (6)–(7) over its pairs, in work arrays reused by
    every round (:class:`_Work`), with each run's noise drawn straight into its rows (:class:`_Noise`).
    """
    if mode == "walk":
        return _walk_engine(records, s, iterations=iterations, seeds=seeds, paths=paths, keep_iterates=keep_iterates)
    B, n, p, K = s.runs, records.n, records.p, iterations
    sample_rngs, noise_rngs = _streams(seeds)
    federated = mode == "federated"
    schedules = [_Schedule(rng, q, n) for rng, q in zip(sample_rngs, sampling_rate)] if federated else None
    scale = s.theta * s.sigma  # the noise added to a u-block: 2θ · ½σξ
    U = np.zeros((B * n, p))  # u_0 = 0: the u-blocks of all runs, run-major (row b·n + i)
    Ubar = np.zeros((B, p))  # the running mean of the u_i (the server's state)
    z_step = (s.gamma / n)[:, None]
    Z = _prox_regularizer(records, Ubar, z_step)
    history = _History(K, B, p, keep_iterates)
    work = _Work(p)
    squared = records.loss == "squared"
    per_round = int(np.max(sampling_rate) * n) + 1 if federated else n
    chunk = _chunk(B, per_round, p, K)
    for k0 in range(0, K, chunk):
        rounds = min(chunk, K - k0)
        if federated:  # Alg. 3: a Poisson sample of users per run and round
            pairs = _sampled_pairs(schedules, k0, rounds, n)
            history.count(pairs.runs, pairs.users, B, n)
            shapes = [(int(t), p) for t in pairs.counts.sum(axis=0)]
        else:  # Alg. 2: every user, every round; the round's pairs are the rows of U in order
            pairs = _all_pairs(rounds, B, n)
            shapes = [(rounds, n, p)] * B
        noise = _Noise(noise_rngs, scale, pairs, shapes)
        users, runs = pairs.users, pairs.runs
        flat = runs * n + users  # the pair's row of U
        labels, a2, step = records.y[users], records.sq_norms[users], s.gamma[runs] / n  # per-record prox step γ/n
        denominator = 1.0 / step + a2 if squared else None
        two_theta, clip = 2.0 * s.theta[runs], s.clip[runs]
        for j in range(rounds):
            lo, hi = pairs.bounds[j], pairs.bounds[j + 1]
            m = int(hi - lo)
            rows = slice(lo, hi)
            if m:
                Ur = U if not federated else U.take(flat[rows], axis=0, out=work("u", m), mode="clip")  # the pairs' u_i
                A = records.X.take(users[rows], axis=0, out=work("a", m), mode="clip")  # a_i
                W = Z.take(runs[rows], axis=0, out=work("w", m), mode="clip")  # z_{k+1} of the pair's run
                D = np.subtract(W, Ur, out=work("d", m))  # z − u_i
                W += D  # the prox point 2z_{k+1} − u_{k,i}
                c = _coefficient(records.loss, _rowdot(A, W), labels[rows], a2[rows], step[rows],
                                 None if denominator is None else denominator[rows])
                A *= c[:, None]  # (6) x = prox_{(γ/n)ℓ_i}(2z − u_i) = 2z − u_i + c·a_i
                D += A  # x − z_{k+1} = (z − u_i) + c·a_i
                norms = np.sqrt(_rowdot(D, D))
                D *= (two_theta[rows] * _clip_factor(norms, clip[rows]))[:, None]  # (7) 2θ Clip(x − z, C) …
                N = work("n", m)
                if noise.fill(j, N, pairs.within[j]):
                    D += N  # … + 2θ · ½σξ (drawn with standard deviation θσ)
                Ur += D  # (7) u_{k+1,i}
                if federated:
                    U[flat[rows]] = Ur  # back into the blocks that took part
                Ubar += pairs.sum(j, D, B) / n  # the server adds (1/n) Σ Δu_i to the running mean ū
            else:
                norms = np.empty(0)
            Z = _prox_regularizer(records, Ubar, z_step)  # (5) z_{k+1} = prox_{(γ/n)λr}(ū)
            history.store(k0 + j, Z, norms, s.clip, pairs.round(j, B, n) if history.z is not None else None, B)
    return history


def _walk_engine(records: _Records, s: _Settings, *, iterations: int, seeds, paths, keep_iterates: bool) -> _History:
    """Algorithm 4 for B runs: at each step one user per run (its walk's) runs (6)–(7), then (5)."""
    B, n, p, K = s.runs, records.n, records.p, iterations
    _, noise_rngs = _streams(seeds)
    scale = s.theta * s.sigma  # the noise added to a u-block: 2θ · ½σξ
    U = np.zeros((B * n, p))  # u_0 = 0: the u-blocks of all runs, run-major (row b·n + i)
    Ubar = np.zeros((B, p))  # the running mean of the u_i
    z_step = (s.gamma / n)[:, None]
    Z = _prox_regularizer(records, Ubar, z_step)
    history = _History(K, B, p, keep_iterates)
    chunk = _chunk(B, 1, p, K)
    runs_once = np.arange(B)
    for k0 in range(0, K, chunk):
        rounds = min(chunk, K - k0)
        layout = np.arange(rounds * B).reshape(rounds, B)  # the chunk's noise: (step, run)
        noise = _chunk_noise(noise_rngs, scale, [layout[:, b] for b in range(B)], [(rounds, 1, p)] * B, rounds * B, p)
        for j in range(rounds):
            round_noise = None if noise is None else noise[j * B:(j + 1) * B]
            if B == 1:  # one walk: the same lines on single vectors (less overhead per step)
                Z = _walk_step(records, U, Ubar, Z, int(paths[0, k0 + j]), s, round_noise, history, k0 + j)
                continue
            users = paths[:, k0 + j]  # Alg. 4: the user holding the model, one per run
            flat = runs_once * n + users
            U_pairs = U[flat]
            dU, norms = _admm_block_update(records, U_pairs, Z, users, runs_once, s, round_noise)
            U[flat] = U_pairs + dU  # (7) for the visited block
            Ubar += dU / n  # (1/n) Δu_i into the running mean ū
            Z = _prox_regularizer(records, Ubar, z_step)  # (5)
            history.store(k0 + j, Z, norms, s.clip, None, B)
    return history


# ====================================================================== DP-SGD, the baseline
def _prox_sgd_engine(records: _Records, *, step, clip, sigma, sampling_rate, iterations: int, seeds,
                     keep_iterates: bool = True) -> _History:
    """Proximal (DP-)SGD for B runs: ``z ← prox_{ηλr}(z − η (Σ_{i∈S} Clip(∇ℓ_i(z), C) + σξ)/(qn))``.

    Users are Poisson-sampled at rate q (the same scheme and stream as federated ADMM); the sum of
    clipped per-example gradients is normalised by the expected batch size ``qn``. The server's noise,
    one vector per run and round, is drawn per chunk of rounds into one array reused by every chunk.
    """
    B, n, p, K = len(step), records.n, records.p, iterations
    sample_rngs, noise_rngs = _streams(seeds)
    schedules = [_Schedule(rng, q, n) for rng, q in zip(sample_rngs, sampling_rate)]
    Z = np.zeros((B, p))
    history = _History(K, B, p, keep_iterates)
    work = _Work(p)
    row_norms = np.sqrt(records.sq_norms)
    chunk = _chunk(B, 1, p, K)  # the noise of a chunk: runs × rounds × p
    noisy = [b for b in range(B) if sigma[b] > 0]
    buffer = np.zeros((B, chunk, p)) if noisy else None  # zeros stay zeros for runs without noise
    for k0 in range(0, K, chunk):
        rounds = min(chunk, K - k0)
        pairs = _sampled_pairs(schedules, k0, rounds, n)
        users, runs = pairs.users, pairs.runs
        labels, norms_of_rows, clips = records.y[users], row_norms[users], clip[runs]
        noise = None
        if noisy:
            noise = buffer[:, :rounds]
            drawn = {b: mechanisms.gaussian(noise_rngs[b], sigma[b], (rounds, p)) for b in noisy} \
                if _intercepted() else None  # an audit sees each run's chunk in one call
            for b in noisy:  # a loop over the runs of a group
                if drawn is None:
                    noise_rngs[b].standard_normal(out=noise[b])
                    noise[b] *= sigma[b]
                else:
                    noise[b] = drawn[b]
        for j in range(rounds):
            lo, hi = pairs.bounds[j], pairs.bounds[j + 1]
            rows = slice(lo, hi)
            m = int(hi - lo)
            A = records.X.take(users[rows], axis=0, out=work("a", m), mode="clip")  # a_i
            margin = _rowdot(A, Z.take(runs[rows], axis=0, out=work("z", m), mode="clip"))  # a_i·z of the pair's run
            b_labels = labels[rows]
            slope = margin - b_labels if records.loss == "squared" else _logistic_slope(margin, b_labels)
            norms = np.abs(slope) * norms_of_rows[rows]  # ‖∇ℓ_i(z)‖ = |ℓ'|·‖a_i‖
            A *= (slope * _clip_factor(norms, clips[rows]))[:, None]  # Clip(∇ℓ_i(z), C)
            G = pairs.sum(j, A, B)  # Σ_{i∈S} Clip(∇ℓ_i(z), C)
            if noise is not None:
                G += noise[:, j]  # + σξ
            g = G / (sampling_rate * n)[:, None]  # the noisy gradient g̃
            Z = _prox_regularizer(records, Z - step[:, None] * g, step[:, None])  # z ← prox_{ηλr}(z − η g̃)
            history.store(k0 + j, Z, norms, clip, pairs.round(j, B, n) if history.z is not None else None, B)
    return history


# ====================================================================== privacy
def _difference_bound(problem, gamma: float, clip: float) -> float:
    """Bound on ‖Clip(x_i − z) − Clip(x_i' − z)‖ when user i's record is replaced: ``min(2C, 2Lγ/n)``."""
    L = problem.lipschitz
    return min(2.0 * clip, 2.0 * L * gamma / problem.n if math.isfinite(L) else math.inf)


@functools.lru_cache(maxsize=256)
def _noise_multiplier(epsilon: float, delta: float, count: int, sampling_rate: float,
                      neighbours: str = "add_remove") -> float:
    """σ/Δ that meets (ε, δ) for ``count`` Gaussian releases at ``sampling_rate`` (unified accountant);
    for ``neighbours="replace_one"`` Δ is the per-record bound C (a replaced record moves the release by 2C)."""
    from ..accounting import calibrate_ledger

    return calibrate_ledger([PrivacyEvent("gaussian", 1.0, 1.0, count=count, sampling_rate=sampling_rate,
                                          neighbours=neighbours)], epsilon, delta)


def _admm_ledger(mode, *, sensitivity, noise, iterations, visits) -> list[PrivacyEvent]:
    if mode == "centralized":
        return [PrivacyEvent("gaussian", sensitivity, noise, count=iterations,
                             note="u-update of every user, every round (replace-one)")]
    if mode == "federated":
        return [PrivacyEvent("gaussian", sensitivity, noise, count=visits,
                             note="u-update at each participation of the most exposed user (the server's view, no "
                                  "amplification by sampling)")]
    return [PrivacyEvent("gaussian", sensitivity, noise, count=visits,
                         note="u-update at each visit of the most visited user (local model)")]


def _paper_epsilon(mode, sigma, *, delta, problem, gamma, bound, iterations, sampling_rate, visits, complete):
    """What the paper's theorem claims for noise σ, and which theorem (with the clipped ``Lγ``)."""
    from .. import accounting as acc

    n = problem.n
    step_bound = bound / 2  # the "Lγ/n" of Thm 2 and the "Lγ" of Thms 3–4 (per-record step), or C when clipped
    if mode == "centralized":  # Thm 2 with per-record step γ/n: lipschitz·γ/n = step_bound
        eps = acc.cyffers2023_centralized_epsilon(delta, iterations=iterations, lipschitz=step_bound * n / gamma,
                                                   gamma=gamma, sigma=sigma, n=n)
        return eps, "Cyffers et al. 2023, Thm 2", "(α, 8αKL²γ²/(σ²n²))-RDP, record-level, centralized"
    if mode == "federated":  # Thm 3 central; γ of Alg. 3 = per-record step
        m = max(1, round(sampling_rate * n))
        eps = acc.cyffers2023_federated_central_epsilon(delta, iterations=iterations, lipschitz=step_bound, gamma=1.0,
                                                         sigma=sigma, n=n, m=m)
        return (eps, "Cyffers et al. 2023, Thm 3 (central)",
                f"(α, 16αKL²γ²/(σ²n²))-RDP with m = {m} users per round, where Lemma C.1 applies")
    if complete:
        eps = acc.cyffers2023_network_epsilon(delta, participations=visits, lipschitz=step_bound, gamma=1.0,
                                               sigma=sigma, n=n)
        return (eps, "Cyffers et al. 2023, Thm 4 (network DP)",
                f"(α, 8αK_iL²γ² ln n/(σ²n))-network RDP on the complete graph, K_i = {visits} visits")
    eps = acc.cyffers2023_federated_local_epsilon(delta, participations=visits, lipschitz=step_bound, gamma=1.0,
                                                  sigma=sigma)
    return (eps, "Cyffers et al. 2023, Thm 3 (local)",
            f"(α, 8αK_iL²γ²/σ²)-RDP against any observer of the messages, K_i = {visits} visits "
            "(Thm 4 is proved for the complete graph only)")


def _paper_sigma(epsilon, **kwargs) -> float:
    """The σ at which the paper's theorem (see :func:`_paper_epsilon`) gives ε: bisection on log σ."""
    f = lambda log_sigma: _paper_epsilon(sigma=math.exp(log_sigma), **kwargs)[0] - epsilon  # decreasing
    lo, hi = -5.0, 5.0
    while f(lo) <= 0:
        lo -= 5.0
    while f(hi) > 0:
        hi += 5.0
        if hi > 200:  # pragma: no cover
            raise ValueError(f"epsilon: no noise level meets ε = {epsilon:g} under the paper's theorem")
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return math.exp(hi)


# ====================================================================== options and runs
def _gamma(rho, gamma) -> float:
    return 1.0 / check.scale("rho", rho) if gamma is None else check.scale("gamma", gamma)


def _clip(problem, clip, algorithm: str, *, private: bool, needed: bool) -> float:
    if clip is None:
        if private and needed:
            raise ValueError(f"clip must be given for private {algorithm!r} here: the {problem.loss} loss has no "
                             "Lipschitz constant, so only clipping bounds what one record can move")
        return math.inf
    return check.scale("clip", clip)


def _topology_for(topology, n: int, graph_seed: int):
    if isinstance(topology, _topology.Topology):
        if topology.n_agents != n:
            raise ValueError(f"topology must have one node per user ({n}), got {topology.n_agents} nodes")
        return topology.check_connected()
    check.choice("topology", topology, _topology.NAMES)
    if topology == "complete":
        return None  # uniform other user: no adjacency needed
    return _cached_topology(topology, n, graph_seed).check_connected()


@functools.lru_cache(maxsize=16)
def _cached_topology(name, n, graph_seed):
    return _topology.make(name, n, seed=graph_seed)


def _walk_paths(graph, n: int, iterations: int, seeds) -> np.ndarray:
    """The users visited at steps 1 … K of each run (drawn from the runs' sampling streams).

    The model starts at a uniformly chosen user and moves to a uniform neighbour: with ``u`` uniform
    on [0, 1), the ``⌊u·deg⌋``-th neighbour in increasing order (on the complete graph, ``graph`` is
    ``None``: the ``⌊u·(n−1)⌋``-th other user — the same choice as on ``topology.make("complete", n)``).
    """
    sample_rngs, _ = _streams(seeds)
    paths = np.empty((len(seeds), iterations), dtype=np.intp)  # indices: intp (int32 on 32-bit WebAssembly)
    for b, rng in enumerate(sample_rngs):
        current = int(rng.integers(n))
        u = rng.random(iterations)
        if graph is None:
            offset = np.floor(u * (n - 1)).astype(np.int64)
        else:
            indptr, indices, degree = graph.adjacency.indptr, graph.adjacency.indices, graph.degrees
        for k in range(iterations):  # a loop over the steps of the walk (one user per step)
            paths[b, k] = current
            if graph is None:
                current = int(offset[k] + (offset[k] >= current))
            else:
                current = int(indices[indptr[current] + int(u[k] * degree[current])])
    return paths


@dataclass
class _Plan:
    """Everything decided before a batch of runs starts: settings, noise, privacy, per run."""

    name: str
    mode: str | None  # ADMM mode, or None for prox SGD
    settings: list[dict]
    sigma: np.ndarray
    ledgers: list[list[PrivacyEvent]]
    paper: list[PrivacyGuarantee | None]
    extra: list[dict]


def _plan(name, problem, runs: Sequence[Mapping], *, delta, iterations) -> tuple[_Plan, np.ndarray | None]:
    """Check every run's options, choose its σ and write its ledger (the part shared by all entry points)."""
    info = _ALGORITHMS[name]
    mode, private = info["mode"], info["private"]
    delta = check.delta(delta)
    iterations = check.count("iterations", iterations)
    records_n = problem.n
    settings, sigmas, ledgers, papers, extras, paths = [], [], [], [], [], []
    for options in runs:
        o = dict(options)
        epsilon = check.epsilon(o.pop("epsilon", math.inf))
        seed = check.count("seed", o.pop("seed", 0), minimum=0)
        rho = o.pop("rho", 1.0)
        calibration = o.pop("calibration", "accountant") if private else "accountant"
        check.choice("calibration", calibration, CALIBRATIONS)
        if not private and not math.isinf(epsilon):
            raise ValueError(f"epsilon must be math.inf for the non-private {name!r} (its private twin is "
                             f"{info['twin']!r}), got {epsilon!r}")
        sampling_rate = check.sampling_rate(o.pop("sampling_rate", 0.1)) \
            if mode in ("federated", None) else 1.0
        if mode is None:
            step = o.pop("step", None)
            step = 1.0 / problem.public_smoothness if step is None else check.scale("step", step)
            clip = _clip(problem, o.pop("clip", None), name, private=private,
                         needed=not math.isfinite(problem.lipschitz))
            if calibration == "paper":
                raise ValueError("calibration must be 'accountant' for DP-SGD: the paper states no theorem for its "
                                 "baseline (Prop. 1 only recovers the algorithm)")
            neighbours = check.choice("neighbours", o.pop("neighbours", "replace_one"), SGD_NEIGHBOURS) \
                if private else "replace_one"
            setting = dict(step=step, clip=clip, sampling_rate=sampling_rate, neighbours=neighbours)
            bound = 2.0 * (clip if math.isfinite(clip) else problem.lipschitz)  # replace-one, gradient sum
            if private and not math.isfinite(clip):
                problem.check_feature_bound(name)  # the bound is the public L = feature_bound
        else:
            gamma = _gamma(rho, o.pop("gamma", None))
            theta = o.pop("relaxation", 0.5)
            theta = _constraints.check("relaxation", theta, _RELAXATION)
            clip = _clip(problem, o.pop("clip", None), name, private=private,
                         needed=not math.isfinite(problem.lipschitz))
            setting = dict(gamma=gamma, relaxation=theta, clip=clip, sampling_rate=sampling_rate)
            bound = _difference_bound(problem, gamma, clip)
            if private and bound < 2.0 * clip:
                problem.check_feature_bound(name)  # the bound uses the public L = feature_bound, not the clip
            if mode == "walk":
                if records_n < 2:
                    raise ValueError(f"problem: {name!r} passes the model from one user to another and needs at least "
                                     f"2 users (records), got n = {records_n}; one user is 'private_admm' / "
                                     "'admm_consensus'")
                graph = _topology_for(o.pop("topology", "complete"), records_n,
                                      check.count("graph_seed", o.pop("graph_seed", 0), minimum=0))
                setting["topology"] = "complete" if graph is None else graph.name
                path = _walk_paths(graph, records_n, iterations, [seed])[0]
                paths.append(path)
                setting["visits"] = int(np.bincount(path.astype(np.intp, copy=False), minlength=records_n).max())
        if o:
            raise ValueError(f"{name!r} got unknown options {sorted(o)}")
        setting.update(epsilon=epsilon, seed=seed, calibration=calibration)
        sigma, ledger, paper, extra = 0.0, [], None, {}
        if private and not math.isinf(epsilon):
            if mode is None:  # replace-one: the per-record bound C (the pair's ±C); add/remove: 2C
                sensitivity = bound / 2 if setting["neighbours"] == "replace_one" else bound
                scale, count = 1.0, iterations
            else:
                theta = setting["relaxation"]
                sensitivity, scale = 2.0 * theta * bound, theta  # noise on u is θσ
                count = setting.get("visits", iterations)
            q = sampling_rate if mode in ("federated", None) else 1.0
            if mode == "federated":  # no amplification: each participation of the most exposed user counts in full
                most = _most_participations(seed, records_n, iterations, sampling_rate)
                extra["participations_of_most_exposed_user"] = most
                count = max(most, 1)  # nobody took part: nothing released, one release recorded (pessimistic)
            paper_args = dict(delta=delta, problem=problem, gamma=setting.get("gamma"), bound=bound,
                              iterations=iterations, sampling_rate=q, visits=setting.get("visits"),
                              complete=setting.get("topology") == "complete")
            if calibration == "accountant":
                sigma = _noise_multiplier(epsilon, delta, count, q if mode is None else 1.0,
                                          setting["neighbours"] if mode is None else "add_remove") * sensitivity / scale
            else:
                sigma = _paper_sigma(epsilon, mode=mode, **paper_args)
            if mode is None:
                exact = setting["neighbours"] == "replace_one"
                ledger = [PrivacyEvent(
                    "gaussian", sensitivity, sigma, count=iterations, sampling_rate=q, neighbours=setting["neighbours"],
                    note="sum of clipped gradients of the Poisson-sampled users (replace-one: "
                         + ("the exact pair, per-record bound C)" if exact else "recorded as add/remove with 2C)"))]
            else:
                ledger = _admm_ledger(mode, sensitivity=sensitivity, noise=scale * sigma, iterations=iterations,
                                      visits=count)
                eps_paper, source, statement = _paper_epsilon(mode, sigma, **paper_args)
                paper = PrivacyGuarantee(eps_paper, delta, source, statement)
            extra.update(sensitivity=sensitivity, noise_multiplier=scale * sigma / sensitivity)
        settings.append(setting)
        sigmas.append(sigma)
        ledgers.append(ledger)
        papers.append(paper)
        extras.append(extra)
    plan = _Plan(name, mode, settings, np.asarray(sigmas, float), ledgers, papers, extras)
    return plan, (np.stack(paths) if paths else None)


def _thread_count(threads, groups: int, mode) -> int:
    """Threads for a batch split into ``groups`` groups of runs: ``threads`` (default :data:`THREADS`), at most one
    per group; one for the walk (a single walk runs on vectors) and while an audit intercepts the draws (it logs
    them in order)."""
    threads = THREADS if threads is None else check.count("threads", threads)
    if mode == "walk" or _intercepted():
        return 1
    return max(1, min(threads, groups))


def _groups(plan: _Plan, n: int) -> list[np.ndarray]:
    """The batch's runs in groups of consecutive runs, each updating at most about :data:`_GROUP_PAIRS` pairs per
    round (:data:`_SGD_GROUP_PAIRS` for DP-SGD), in an even number of groups of equal size (Figure 1's 70 ADMM
    runs: 8 groups of 8–9 runs, where groups of 10 left one thread a group more than the other); from the plan
    alone: the groups do not depend on the number of threads. The walk in one group."""
    B = len(plan.settings)
    if plan.mode == "walk":
        return [np.arange(B)]
    per_run = max(1.0, max(s["sampling_rate"] for s in plan.settings) * n)  # 1.0 when everyone takes part
    size = max(1, int((_GROUP_PAIRS if plan.mode is not None else _SGD_GROUP_PAIRS) // per_run))
    count = -(-B // size)
    count += count % 2 if count < B else 0  # an even number of equal groups: two threads finish together
    return np.array_split(np.arange(B), count)


def _execute(plan: _Plan, problem, paths, *, iterations, keep_iterates, threads=None) -> _History:
    """Run the plan's batch: independent runs, split over threads (numpy releases the GIL while it
    draws and computes), each run from its own streams — the result does not depend on ``threads``."""
    records = _records(problem, plan.name)
    column = lambda key: np.array([s[key] for s in plan.settings], dtype=float)
    seeds = [s["seed"] for s in plan.settings]

    def engine(runs: np.ndarray) -> _History:
        pick = lambda key: column(key)[runs]  # noqa: E731
        group = [seeds[b] for b in runs]
        if plan.mode is None:
            return _prox_sgd_engine(records, step=pick("step"), clip=pick("clip"), sigma=plan.sigma[runs],
                                    sampling_rate=pick("sampling_rate"), iterations=iterations, seeds=group,
                                    keep_iterates=keep_iterates)
        settings = _Settings(pick("gamma"), pick("relaxation"), pick("clip"), plan.sigma[runs])
        return _admm_engine(records, settings, mode=plan.mode, iterations=iterations, seeds=group,
                            sampling_rate=pick("sampling_rate"), paths=None if paths is None else paths[runs],
                            keep_iterates=keep_iterates)

    groups = _groups(plan, records.n)
    T = _thread_count(threads, len(groups), plan.mode)
    if T == 1:
        parts = [engine(group) for group in groups]
    else:  # the groups shared by T threads (numpy releases the GIL while it draws and computes)
        with concurrent.futures.ThreadPoolExecutor(T) as pool:
            parts = list(pool.map(engine, groups))
    history = parts[0] if len(parts) == 1 else _History.merge(parts)
    if plan.mode is None:
        return history
    if plan.mode == "federated":  # the ledger counted the schedule before the run: it must be the run's
        planned = np.array([e.get("participations_of_most_exposed_user", -1) for e in plan.extra])
        drawn = history.participations.max(axis=1)
        if np.any((planned >= 0) & (planned != drawn)):  # a broken invariant, not bad input
            raise RuntimeError(f"the ledger counted {planned} participations of the most exposed user, the run drew "
                               f"{drawn}: the ledger does not describe this run")
    return history


def _test_objective(problem, Z) -> np.ndarray | None:
    """The objective on the test split, ``F_test(z) = mean test loss + λ r(z)`` (Fig. 1's "test objective")."""
    if problem.X_test is None:
        return None
    return problem.data_loss(Z, problem.X_test, problem.y_test) + problem.lam * problem.regularizer_value(Z)


def run_many(name: str, problem, runs: Sequence[Mapping], *, delta: float = 1e-5, iterations: int = 100,
             threads: int | None = None, record_every: int = 1) -> list[Trace]:
    """Run algorithm ``name`` of this module once per entry of ``runs``, all at once.

    Parameters
    ----------
    name
        One of the algorithms of this module (``"private_admm_federated"``, ``"dp_prox_sgd"``, …).
    problem
        The problem every run solves.
    runs
        One mapping per run: ``epsilon``, ``seed``, ``rho`` and the algorithm's options
        (``gamma``, ``relaxation``, ``clip``, ``sampling_rate``, ``step``, …).
    delta, iterations
        Shared by every run.
    threads
        Threads the runs are split over (default :data:`THREADS`); the traces do not depend on it.
    record_every
        k ≥ 1: the traces record the iterates k, 2k, … and the last one (default every one); the
        runs are the same, only fewer iterates are scored.

    Returns
    -------
    list of Trace
        The traces :func:`dpadmm_lite.run` returns for each run, in order, with the same
        iterates (each run has its own random streams).
    """
    record_every = check.count("record_every", record_every)
    record_every = min(record_every, check.count("iterations", iterations))  # beyond T: the last iterate only
    plan, paths = _plan(name, problem, runs, delta=delta, iterations=iterations)
    history = _execute(plan, problem, paths, iterations=iterations, keep_iterates=True, threads=threads)
    keep = np.unique(np.append(np.arange(record_every - 1, iterations, record_every), iterations - 1))
    traces = [_trace(plan, problem, history, b, delta=delta, keep=keep) for b in range(len(plan.settings))]
    for trace, options in zip(traces, runs):  # no NaN model under a finite ε (registry.NonFiniteModel)
        check_finite(name, trace, {**options, "delta": delta, "iterations": iterations})
    return traces


def released_models(name: str, problem, runs: Sequence[Mapping], *, delta: float = 1e-5,
                    iterations: int = 100, threads: int | None = None) -> tuple[np.ndarray, list[dict]]:
    """Like :func:`run_many`, but keep only each run's released model ``z_K`` (fast sweeps).

    Parameters
    ----------
    name : str
        One of the algorithms of this module.
    problem : Problem
        The problem every run solves.
    runs : sequence of mapping
        One mapping per run: ``epsilon``, ``seed``, ``rho`` and the algorithm's parameters.
    delta : float, default 1e-5
        δ in [1e-100, 1), shared by every run.
    iterations : int, default 100
        K ≥ 1, shared by every run.
    threads : int or None, default None
        Threads the runs are split over (default :data:`THREADS`); the models do not depend on it.

    Returns
    -------
    models : (len(runs), p) array
        The released ``z_K`` of every run (the same as ``run_many(...)[b].model``).
    info : list of dict
        Per run: its settings, ``sigma``, ``epsilon_unified`` (the unified accountant's ε of its
        ledger) and ``epsilon_paper`` (the paper's claim; ``nan`` for DP-SGD).
    """
    plan, paths = _plan(name, problem, runs, delta=delta, iterations=iterations)
    history = _execute(plan, problem, paths, iterations=iterations, keep_iterates=False, threads=threads)
    info = []
    for b, setting in enumerate(plan.settings):
        ledger = plan.ledgers[b]
        info.append({**setting, "sigma": float(plan.sigma[b]),
                     "epsilon_unified": _cached_ledger_epsilon(tuple(ledger), delta) if ledger else math.inf,
                     "epsilon_paper": plan.paper[b].epsilon if plan.paper[b] is not None else math.nan})
    return history.final.copy(), info


@functools.lru_cache(maxsize=512)
def _cached_ledger_epsilon(ledger: tuple, delta: float) -> float:
    from ..accounting import ledger_epsilon

    return ledger_epsilon(list(ledger), delta)


def _trace(plan: _Plan, problem, history: _History, b: int, *, delta, keep: np.ndarray) -> Trace:
    setting = plan.settings[b]
    Z = history.z[keep, b]  # the recorded rounds (every one by default)
    metrics = {"clipped_fraction": history.clipped[keep, b]}
    violation = history.violation[keep, b]
    if plan.mode is None:  # DP-SGD has no local variables: record the RMS per-example gradient norm instead
        metrics["gradient_norm"], violation = violation, None
    test_objective = _test_objective(problem, Z)
    if test_objective is not None:
        metrics["test_objective"] = test_objective
    noise = {"sigma": float(plan.sigma[b]), **plan.extra[b]}
    if plan.mode == "walk":
        noise["visits_of_most_visited_user"] = setting["visits"]
    params = {k: v for k, v in setting.items() if k not in ("epsilon", "seed")}
    return from_iterates(problem, plan.name, Z, consensus_violation=violation, noise=noise,
                         ledger=plan.ledgers[b], delta=delta, privacy_paper=plan.paper[b], metrics=metrics,
                         params=params)


def noise_scale(name: str, problem, *, epsilon: float, delta: float, iterations: int, seed: int = 0,
                **options) -> tuple[float, list[PrivacyEvent], PrivacyGuarantee | None]:
    """σ, the ledger and the paper's statement a run of ``name`` would use, without running it.

    Same arguments as :func:`dpadmm_lite.run` (``rho`` may be among ``options``). For the walk the
    ledger counts the visits of the path drawn from ``seed``.

    Parameters
    ----------
    name : str
        One of the algorithms of this module.
    problem : Problem
        The problem the run would solve.
    epsilon : float
        End-to-end ε in (0, 1e4], or ``math.inf`` (σ = 0).
    delta : float
        δ in [1e-100, 1).
    iterations : int
        K ≥ 1 rounds (walk steps).
    seed : int, default 0
        A whole number ≥ 0; the walk's path and the federated schedule are drawn from it.
    """
    plan, _ = _plan(name, problem, [dict(epsilon=epsilon, seed=seed, **options)], delta=delta, iterations=iterations)
    return float(plan.sigma[0]), plan.ledgers[0], plan.paper[0]


def _single(name: str, problem, run: Mapping, *, delta: float, iterations: int, record_every: int) -> Trace:
    """One run of ``name``: its settings ``run`` (``epsilon``, ``seed``, ``rho`` and its parameters) as a batch of one."""
    return run_many(name, problem, [run], delta=delta, iterations=iterations, record_every=record_every)[0]


# ====================================================================== registered algorithms
_ALGORITHMS = {
    "admm_consensus": dict(mode="centralized", private=False, twin="private_admm"),
    "private_admm": dict(mode="centralized", private=True, twin="admm_consensus"),
    "admm_federated": dict(mode="federated", private=False, twin="private_admm_federated"),
    "private_admm_federated": dict(mode="federated", private=True, twin="admm_federated"),
    "admm_walk": dict(mode="walk", private=False, twin="private_admm_walk"),
    "private_admm_walk": dict(mode="walk", private=True, twin="admm_walk"),
    "prox_sgd": dict(mode=None, private=False, twin="dp_prox_sgd"),
    "dp_prox_sgd": dict(mode=None, private=True, twin="prox_sgd"),
}


@register("admm_consensus", paper=PAPER, private=False, setting="centralized", tasks=_TASKS, tuning=_ADMM_TUNING,
          constraints=_ADMM_CONSTRAINTS,
          description="Consensus ADMM as a Douglas–Rachford fixed-point iteration, one block per record (Cyffers et al. "
                      "2023, eqs. 5–7 without noise)")
def admm_consensus(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
                   iterations: int = 100, seed: int = 0, gamma: float | None = None, relaxation: float = 0.5,
                   clip: float | None = None, record_every: int = 1) -> Trace:
    """Consensus ADMM, every user every round, no noise: the non-private twin of :func:`private_admm`.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row).
    epsilon : float, default math.inf
        Must be ``math.inf`` (no noise; the private twin is :func:`private_admm`).
    delta : float, default 1e-5
        In [1e-100, 1); no privacy is spent, it only labels the trace.
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 (no randomness is drawn without noise or sampling).
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter: per-record prox step ``γ/n``, z-step
        ``prox_{(γ/n)λr}``. None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``. None: no clipping.
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The released ``z_k`` of each recorded round, the model ``z_K``, the consensus violation
        (RMS of ``‖x_i − z‖``) and ``metrics["clipped_fraction"]``; ``privacy`` is ε = ∞.

    Notes
    -----
    Eqs. (5)–(7) of the paper with σ = 0: ``z = prox_{(γ/n)λr}(ū)``,
    ``x_i = prox_{(γ/n)ℓ_i}(2z − u_i)``, ``u_i += 2θ Clip(x_i − z, C)`` (module docstring).

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, eqs. (5)–(7).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_consensus", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    return _single("admm_consensus", problem, dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma,
                                                   relaxation=relaxation, clip=clip),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("private_admm", paper=PAPER, private=True, setting="centralized", tasks=_TASKS, tuning=_ADMM_TUNING,
          constraints=_PRIVATE_ADMM_CONSTRAINTS,
          description="Centralized private ADMM: Gaussian noise on every user's u-update, only z released (Cyffers et "
                      "al. 2023, Alg. 2 / Alg. 6, Thm 2)")
def private_admm(problem: Problem, *, epsilon: float, delta: float, rho: float = 1.0, iterations: int = 100,
                 seed: int = 0, gamma: float | None = None, relaxation: float = 0.5, clip: float | None = None,
                 calibration: str = "accountant", record_every: int = 1) -> Trace:
    """Centralized private ADMM (Algorithm 2; Algorithm 6 for the Lasso), record-level DP.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row). Without
        ``clip`` the rows must lie within ``problem.feature_bound`` (the public L).
    epsilon : float
        End-to-end budget ε in (0, 1e4] for replace-one neighbours, or ``math.inf`` (no noise:
        the iterates of :func:`admm_consensus`).
    delta : float
        δ in [1e-100, 1).
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 seeding the noise.
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter: per-record prox step ``γ/n``, z-step
        ``prox_{(γ/n)λr}``. None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``; required on the squared loss (no
        Lipschitz constant). None: no clipping.
    calibration : {"accountant", "paper"}, default "accountant"
        ``"accountant"``: σ such that the unified accountant meets (ε, δ) end to end;
        ``"paper"``: σ from Theorem 2.
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The released ``z_k``, the model ``z_K``, ``noise`` (σ, sensitivity, noise multiplier),
        the ``ledger``, ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 2).

    Notes
    -----
    Every round: (5) ``z = prox_{(γ/n)λr}(ū)``; (6) every user's ``x_i = prox_{(γ/n)ℓ_i}(2z − u_i)``
    (closed form by Sherman–Morrison for the squared loss); (7)
    ``u_i += 2θ(Clip(x_i − z, C) + ½σξ_i)``. Only ``z_K`` is released (the trace's curves are the
    ``z_k``, each a post-processing of the noisy ``u``). The ledger: K Gaussian releases of one
    user's u-block, sensitivity ``2θ·min(2C, 2Lγ/n)``, noise ``θσ`` — for every n ≥ 1: given the
    released u-updates a user's state is known, and from any state one update moves by at most
    that much (the argument in :func:`private_admm_federated`, with q = 1).

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Algorithms 2 and 6, Theorem 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _single("private_admm", problem, dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma,
                                                 relaxation=relaxation, clip=clip, calibration=calibration),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("admm_federated", paper=PAPER, private=False, setting="federated", tasks=_TASKS, tuning=_ADMM_TUNING,
          constraints=_ADMM_CONSTRAINTS,
          description="Federated consensus ADMM: each round a Poisson sample of users updates (Cyffers et al. 2023, "
                      "Alg. 3 without noise)")
def admm_federated(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
                   iterations: int = 100, seed: int = 0, gamma: float | None = None, relaxation: float = 0.5,
                   clip: float | None = None, sampling_rate: float = 0.1, record_every: int = 1) -> Trace:
    """Federated consensus ADMM with Poisson user sampling, no noise: the twin of :func:`private_admm_federated`.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row).
    epsilon : float, default math.inf
        Must be ``math.inf`` (no noise; the private twin is :func:`private_admm_federated`).
    delta : float, default 1e-5
        In [1e-100, 1); no privacy is spent, it only labels the trace.
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 seeding who takes part in which round.
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter (per-record prox step ``γ/n``). None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``. None: no clipping.
    sampling_rate : float, default 0.1
        q in [1e-9, 1]: each user takes part in each round with probability q.
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The ``z_k`` of each recorded round and the model ``z_K``; ``privacy`` is ε = ∞.

    Notes
    -----
    Algorithm 3 of the paper with σ = 0: the sampled users run (6)–(7) from the broadcast z and
    the server adds ``(1/n)ΣΔu_i`` to its running mean ``ū``, then ``z = prox_{(γ/n)λr}(ū)``.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Algorithm 3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_federated", problem, iterations=10, seed=0, sampling_rate=0.5)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    return _single("admm_federated", problem, dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma,
                                                   relaxation=relaxation, clip=clip, sampling_rate=sampling_rate),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("private_admm_federated", paper=PAPER, private=True, setting="federated", tasks=_TASKS,
          constraints=_PRIVATE_ADMM_CONSTRAINTS,
          tuning={**_ADMM_TUNING, "sampling_rate": (0.1,)},
          description="Federated private ADMM with Poisson user sampling: each user's own noise, every "
                      "participation counted (Cyffers et al. 2023, Alg. 3)")
def private_admm_federated(problem: Problem, *, epsilon: float, delta: float, rho: float = 1.0, iterations: int = 100,
                           seed: int = 0, gamma: float | None = None, relaxation: float = 0.5,
                           clip: float | None = None, sampling_rate: float = 0.1, calibration: str = "accountant",
                           record_every: int = 1) -> Trace:
    """Federated private ADMM (Algorithm 3), user-level DP, users Poisson-sampled at rate q.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row). Without
        ``clip`` the rows must lie within ``problem.feature_bound`` (the public L).
    epsilon : float
        End-to-end budget ε in (0, 1e4] for replace-one neighbours, or ``math.inf`` (no noise:
        the iterates of :func:`admm_federated`).
    delta : float
        δ in [1e-100, 1).
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 seeding who takes part (one stream) and the noise (another).
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter (per-record prox step ``γ/n``). None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``; required on the squared loss.
        None: no clipping.
    sampling_rate : float, default 0.1
        q in [1e-9, 1]: each user takes part in each round with probability q (0.1: the paper's
        experiment).
    calibration : {"accountant", "paper"}, default "accountant"
        ``"accountant"``: σ such that the unified accountant meets (ε, δ) end to end;
        ``"paper"``: σ from Theorem 3 (central).
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The released ``z_k``, the model ``z_K``, ``noise`` (σ and
        ``participations_of_most_exposed_user``), the ``ledger``, ``privacy`` and
        ``privacy_paper`` (Theorem 3).

    Notes
    -----
    Each round every user joins independently with probability ``sampling_rate`` (q); the joining
    users run (6)–(7) locally from the broadcast z, add their own noise θσξ_i and send ``Δu_i``;
    the server adds ``(1/n)ΣΔu_i`` to its running mean ``ū`` and broadcasts
    ``z = prox_{(γ/n)λr}(ū)``. With q = 1 the iterates are exactly those of :func:`private_admm`
    (same seed).

    The ledger: one Gaussian release per participation of the most exposed user, sensitivity
    ``Δ = 2θ·min(2C, 2Lγ/n)`` (``4θC`` when clipped), noise θσ, no amplification by sampling;
    ``trace.noise["participations_of_most_exposed_user"]`` is that count (the schedule is drawn
    from the seed before the run; it does not depend on the data). It holds for every n ≥ 1 and
    q ∈ (0, 1], against the server (who sees every ``Δu_i``) and a fortiori against anyone who
    sees only the ``z_k``.

    Proof sketch. Reveal the schedule and every message. User i's state ``u_i`` is the sum of
    its own messages, so conditional on the released past its next message is a Gaussian with
    noise θσ whose mean moves by at most Δ when its record is replaced, for every state
    (clipping is a projection; the prox bound of the paper's eq. 25); the other users' messages
    do not depend on that record. Adaptive composition over the ``J_i ≤ J_max`` participations
    (of μ-GDP mechanisms, Dong, Roth & Su 2022) gives the ledger, and the ``z_k`` are
    post-processing.

    Why not the Poisson-subsampled Gaussian (the amplified ε of Theorem 3): a user's noise is
    there only when it takes part, unlike DP-SGD's server noise
    (:func:`dp_prox_sgd`), so it cannot hide *whether* it took part — with n = 1 the aggregate is
    0 or the user's message; one round at the σ of the amplified ε = 1 is (2.90, 10⁻⁵)-DP at
    q = 0.1 (1.57 for n = 2, 1.10 for n = 3). The other participants' noise does hide it within a
    round, but it stays in their ``u_j``, and their later clipped corrections
    ``Clip(x_j − z, C)`` with ``x_j − z ≈ z − u_j`` point along it: later rounds re-release part
    of the noise that masked the target, so conditional on the past the others' messages depend
    on the target's record and the subsampling argument does not apply. We know of no proof for
    the central model with this state, so only the user's own noise is counted.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Algorithm 3, Theorem 3.
    J. Dong, A. Roth, W. J. Su, "Gaussian differential privacy", JRSS B, 2022.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("private_admm_federated", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.noise["participations_of_most_exposed_user"] <= 10
    (True, True)
    """
    return _single("private_admm_federated", problem,
                   dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma, relaxation=relaxation, clip=clip,
                        sampling_rate=sampling_rate, calibration=calibration),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("admm_walk", paper=PAPER, private=False, setting="random walk", tasks=_TASKS, tuning=_WALK_TUNING,
          constraints=_WALK_CONSTRAINTS,
          description="Decentralized consensus ADMM along a random walk: one user updates per step (Cyffers et al. "
                      "2023, Alg. 4 without noise)")
def admm_walk(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
              iterations: int = 100, seed: int = 0, gamma: float | None = None, relaxation: float = 0.5,
              clip: float | None = None, topology: str | _topology.Topology = "complete", graph_seed: int = 0,
              record_every: int = 1) -> Trace:
    """Consensus ADMM along a random walk, one user per step, no noise: the twin of :func:`private_admm_walk`.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression with at least 2 records; one user per
        record.
    epsilon : float, default math.inf
        Must be ``math.inf`` (no noise; the private twin is :func:`private_admm_walk`).
    delta : float, default 1e-5
        In [1e-100, 1); no privacy is spent, it only labels the trace.
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 walk steps.
    seed : int, default 0
        A whole number ≥ 0 seeding the walk's path.
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter (per-record prox step ``γ/n``). None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``. None: no clipping.
    topology : str or Topology, default "complete"
        The graph the model walks on: a name of :data:`dpadmm_lite.topology.NAMES` or a connected
        :class:`~dpadmm_lite.topology.Topology` with one node per record.
    graph_seed : int, default 0
        A whole number ≥ 0 seeding a random graph (``"erdos_renyi"``, ``"small_world"``).
    record_every : int, default 1
        k ≥ 1: the trace records the steps k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The ``z_k`` of each recorded step and the model ``z_K``; ``privacy`` is ε = ∞.

    Notes
    -----
    Algorithm 4 of the paper with σ = 0: the user holding the model runs (6)–(7), updates
    ``ū += Δu_i/n`` and ``z = prox_{(γ/n)λr}(ū)``, and sends ``z`` to a uniform neighbour.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Algorithm 4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_walk", problem, iterations=10, seed=0, topology="ring")
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    return _single("admm_walk", problem, dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma,
                                              relaxation=relaxation, clip=clip, topology=topology,
                                              graph_seed=graph_seed),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("private_admm_walk", paper=PAPER, private=True, setting="random walk", tasks=_TASKS, tuning=_WALK_TUNING,
          constraints=_PRIVATE_WALK_CONSTRAINTS,
          description="Fully decentralized private ADMM: the model walks from user to user (Cyffers et al. 2023, "
                      "Alg. 4, Thm 4 on the complete graph)")
def private_admm_walk(problem: Problem, *, epsilon: float, delta: float, rho: float = 1.0, iterations: int = 100,
                      seed: int = 0, gamma: float | None = None, relaxation: float = 0.5, clip: float | None = None,
                      topology: str | _topology.Topology = "complete", graph_seed: int = 0,
                      calibration: str = "accountant", record_every: int = 1) -> Trace:
    """Fully decentralized private ADMM (Algorithm 4): ``iterations`` is the number of walk steps.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression with at least 2 records (n = 1 is
        refused: the model cannot move to another user); one user per record. Without ``clip``
        the rows must lie within ``problem.feature_bound`` (the public L).
    epsilon : float
        End-to-end budget ε in (0, 1e4] for replace-one neighbours, or ``math.inf`` (no noise:
        the iterates of :func:`admm_walk`).
    delta : float
        δ in [1e-100, 1).
    rho : float, default 1.0
        ADMM penalty ρ in [1e-12, 1e12]; sets γ = 1/ρ when ``gamma`` is not given.
    iterations : int, default 100
        K ≥ 1 walk steps.
    seed : int, default 0
        A whole number ≥ 0 seeding the walk's path (one stream) and the noise (another).
    gamma : float or None, default None
        γ in [1e-12, 1e12], the prox parameter (per-record prox step ``γ/n``). None: ``1/rho``.
    relaxation : float, default 0.5
        θ ∈ (0, 1], the paper's relaxation step λ (0.5: plain ADMM).
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of ``x − z``; required on the squared loss.
        None: no clipping.
    topology : str or Topology, default "complete"
        The graph the model walks on: a name of :data:`dpadmm_lite.topology.NAMES` or a connected
        :class:`~dpadmm_lite.topology.Topology` with one node per record.
    graph_seed : int, default 0
        A whole number ≥ 0 seeding a random graph (``"erdos_renyi"``, ``"small_world"``).
    calibration : {"accountant", "paper"}, default "accountant"
        ``"accountant"``: σ such that the unified accountant meets (ε, δ) end to end;
        ``"paper"``: σ from Theorem 4 on the complete graph, Theorem 3's local bound on others.
    record_every : int, default 1
        k ≥ 1: the trace records the steps k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The released ``z_k``, the model ``z_K``, ``noise`` (σ and
        ``visits_of_most_visited_user``), the ``ledger``, ``privacy`` and ``privacy_paper``.

    Notes
    -----
    The model ``z`` starts at a uniformly chosen user; at each step the user holding it runs
    (6)–(7) with its own record, updates ``ū += Δu_i/n`` and ``z = prox_{(γ/n)λr}(ū)``, and sends
    ``z`` to a uniformly chosen neighbour on ``topology``. The ledger is the local guarantee (each
    visit of the most visited user; the path does not depend on the data, so it is drawn first),
    sound for every n ≥ 2 by the argument of :func:`private_admm_federated` (reveal ``ū`` after
    each step: it gives the visited user's update, so every state is a function of what was
    released, and ``z`` is post-processing). ``privacy_paper`` is Theorem 4 (network DP) on the
    complete graph — the only graph it is proved for — and Theorem 3's local bound on any other.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Algorithm 4, Theorems 3 and 4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.noise["visits_of_most_visited_user"] <= 10
    (True, True)
    """
    return _single("private_admm_walk", problem,
                   dict(epsilon=epsilon, seed=seed, rho=rho, gamma=gamma, relaxation=relaxation, clip=clip,
                        topology=topology, graph_seed=graph_seed, calibration=calibration),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("prox_sgd", paper=PAPER, private=False, setting="federated", tasks=_TASKS, tuning=_SGD_TUNING,
          constraints=_SGD_CONSTRAINTS,
          description="Proximal SGD over Poisson-sampled users (the baseline of Cyffers et al. 2023, App. E, without "
                      "noise)")
def prox_sgd(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
             iterations: int = 100, seed: int = 0, step: float | None = None, clip: float | None = None,
             sampling_rate: float = 0.1, record_every: int = 1) -> Trace:
    """Proximal SGD over Poisson-sampled users, no noise: the non-private twin of :func:`dp_prox_sgd`.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row).
    epsilon : float, default math.inf
        Must be ``math.inf`` (no noise; the private twin is :func:`dp_prox_sgd`).
    delta : float, default 1e-5
        In [1e-100, 1); no privacy is spent, it only labels the trace.
    rho : float, default 1.0
        In [1e-12, 1e12]; checked but not used (SGD has no penalty).
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 seeding who takes part in which round.
    step : float or None, default None
        η in [1e-12, 1e12]. None: ``1/problem.public_smoothness``.
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of each per-example gradient. None: no clipping.
    sampling_rate : float, default 0.1
        q in [1e-9, 1]: each user takes part in each round with probability q.
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The ``z_k`` of each recorded round and the model ``z_K``;
        ``metrics["gradient_norm"]`` is the RMS per-example gradient norm; ``privacy`` is ε = ∞.

    Notes
    -----
    ``z ← prox_{ηλr}(z − η g)``, ``g = Σ_{i∈S} Clip(∇ℓ_i(z), C)/(qn)``, S a Poisson sample at rate q.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Proposition 1 and Appendix E.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("prox_sgd", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    return _single("prox_sgd", problem, dict(epsilon=epsilon, seed=seed, rho=rho, step=step, clip=clip,
                                             sampling_rate=sampling_rate),
                   delta=delta, iterations=iterations, record_every=record_every)


@register("dp_prox_sgd", paper=PAPER, private=True, setting="federated", tasks=_TASKS,
          constraints=_PRIVATE_SGD_CONSTRAINTS,
          tuning={**_SGD_TUNING, "sampling_rate": (0.1,)},
          description="Proximal DP-SGD with Poisson user sampling: the noisy fixed-point iteration of Prop. 1 (baseline "
                      "of Cyffers et al. 2023, App. E)")
def dp_prox_sgd(problem: Problem, *, epsilon: float, delta: float, rho: float = 1.0, iterations: int = 100,
                seed: int = 0, step: float | None = None, clip: float | None = None, sampling_rate: float = 0.1,
                neighbours: str = "replace_one", calibration: str = "accountant", record_every: int = 1) -> Trace:
    """Proximal DP-SGD, the baseline of the paper's experiment, with the same user sampling.

    Parameters
    ----------
    problem : Problem
        The Lasso or ℓ1/ℓ2-regularised logistic regression; one user per record (row). Without
        ``clip`` the rows must lie within ``problem.feature_bound`` (the public L).
    epsilon : float
        End-to-end budget ε in (0, 1e4] for replace-one neighbours, or ``math.inf`` (no noise:
        the iterates of :func:`prox_sgd`).
    delta : float
        δ in [1e-100, 1).
    rho : float, default 1.0
        In [1e-12, 1e12]; checked but not used (SGD has no penalty).
    iterations : int, default 100
        K ≥ 1 rounds.
    seed : int, default 0
        A whole number ≥ 0 seeding who takes part (one stream) and the noise (another).
    step : float or None, default None
        η in [1e-12, 1e12]. None: ``1/problem.public_smoothness``.
    clip : float or None, default None
        C in [1e-12, 1e12], clipping threshold of each per-example gradient; required on the
        squared loss. None: no clipping (the bound is the public L).
    sampling_rate : float, default 0.1
        q in [1e-9, 1]: each user takes part in each round with probability q.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        How the replace-one guarantee is accounted (:data:`SGD_NEIGHBOURS`).
    calibration : {"accountant"}, default "accountant"
        Only ``"accountant"``: the paper states no theorem for its baseline, so ``"paper"`` is
        refused (ValueError).
    record_every : int, default 1
        k ≥ 1: the trace records the rounds k, 2k, … and the last; the run is the same.

    Returns
    -------
    Trace
        The released ``z_k``, the model ``z_K``, ``noise`` (σ, sensitivity, noise multiplier),
        the ``ledger`` and ``privacy``; ``metrics["gradient_norm"]`` is the RMS per-example
        gradient norm.

    Notes
    -----
    ``z ← prox_{ηλr}(z − η g̃)``, ``g̃ = (Σ_{i∈S} Clip(∇ℓ_i(z), C) + σξ)/(qn)``, S a Poisson sample
    at rate q. As a noisy fixed-point iteration (Prop. 1): Algorithm 1 with the operator
    ``R = I − (2/β)∇f``, step ``λ_k = ηβ/2``, error ``e_k`` = the sampling error of the gradient
    and noise ``(β/2)·σ/(qn)``, followed by the prox of the regulariser.

    The ledger: K Poisson-subsampled Gaussian releases of the clipped sum, noise σ. The paper's
    neighbours are replace-one (one record replaced, Sec. 2), and by default
    (``neighbours="replace_one"``) each release is the exact replace-one pair
    ``q·N(+C, σ²) + (1 − q)·N(0, σ²)`` against ``q·N(−C, σ²) + (1 − q)·N(0, σ²)``, sensitivity C
    per record; ``"add_remove"`` records the same releases as add/remove with sensitivity 2C
    (sound, looser: more noise for the same ε). This is the subsampled Gaussian mechanism
    exactly, for every n ≥ 1: the server draws σξ every round whoever takes part (even nobody),
    so the noise that hides whether a user took part is always there, and the gradients are taken
    at z, a function of the past releases (no user keeps a state) — unlike
    :func:`private_admm_federated`, whose users add their own noise.

    References
    ----------
    E. Cyffers, A. Bellet, D. Basu, "From noisy fixed-point iterations to private ADMM for
    centralized and federated learning", ICML 2023, Proposition 1 and Appendix E.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_prox_sgd", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _single("dp_prox_sgd", problem,
                   dict(epsilon=epsilon, seed=seed, rho=rho, step=step, clip=clip, sampling_rate=sampling_rate,
                        neighbours=neighbours, calibration=calibration),
                   delta=delta, iterations=iterations, record_every=record_every)

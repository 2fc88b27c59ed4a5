"""What the privacy-bug tests need to know about each private algorithm — the ONE place to say it.

The tests ``tests/test_privacy_noise.py`` (noise drawn = noise claimed),
``tests/test_privacy_sensitivity.py`` (sensitivity claimed ≥ measured) and
``tests/test_privacy_audit.py`` (empirical privacy audit) loop over ``dl.algorithm_names().private``
and take everything algorithm-specific from :data:`ENTRIES` below (problems and base options come
from ``tests/algorithm_cases.py``). A registered private algorithm without an entry makes
``test_every_private_algorithm_has_a_harness_entry`` fail, naming this file.

How the tests see the noise (no code of the algorithm is read)
-------------------------------------------------------------
Every draw goes through :mod:`dpadmm_lite.mechanisms`; :func:`dpadmm_lite.audit.intercept_noise`
sees each call (the k-th call of a run, its σ or ζ, the values) and can replace what the
algorithm receives. A *site* names one release's noise inside a run: ``(call, index)`` = the
call number (from 0, Gaussian and ℓ2-Laplace calls counted together, in the order the run makes
them) and a numpy index into the array that call returns.

* **Noise test.** Run twice with the same seed; the second time the site of the *last*
  iteration's release is switched off (zeros). Everything before that draw is bit-for-bit the
  same run (same state), so ``trace.model`` moves only by what that noise did to the release:
  ``recovered = (model_on − model_off) / gain``. Over many seeds the recovered noise must have the
  σ (or ζ) of the ledger event that accounts for that release (chi-square and Kolmogorov–Smirnov
  tests with fixed seeds), and be a fixed multiple of the intercepted draw.
* **Sensitivity test.** Every draw is switched off. Record ``record`` of the dataset D is set to an
  adversarial anchor (at the public ``feature_bound``, misclassified along the model's direction);
  D′ replaces it by one of many candidates (both labels, directions along/against/across the
  model). For the release of step k, the D′ run is *coupled* to the D run for the steps before k
  (the tests inject at those sites the shift that makes D′'s releases equal to D's), so both are
  in the same state; the test then solves for the noise vector ``c`` that, injected at the site
  of step k, makes D′'s released model equal D's. ``‖c‖/σ_draw`` (Gaussian) or ``ζ_draw‖c‖``
  (ℓ2-Laplace) is the privacy-relevant size of the change of that release; it must not exceed the
  ledger's ``Δ/σ`` (or ``ζΔ``), and its largest value must reach ``min_ratio`` of it where the
  paper's lemma is tight. Runs with fewer iterations must be prefixes of longer ones when the
  noise is off (the test checks the objective series); if not, use ``steps=1``.
* **Adversarial states** (``margin > 0``). A lemma bounds the change of a release at *every* state,
  and for the logistic loss its 2c₁ is approached only where the record is misclassified at a large
  margin (``|ℓ′| → 1``): the run's own states, near w = 0, have ``|ℓ′| ≈ ½`` and show half of Δ at
  most. So the D run also receives, at the site of every measured step, a fixed noise vector that
  moves its model to ``feature_bound·‖x‖ ≈ margin`` along a direction u (any state the noise can
  produce must be covered); the anchor is misclassified at margin ≈ −8 and nearly perpendicular to u,
  its mirror image about u is among the candidates, and both orientations (±u) are tried, every
  candidate at every step. The change measured is the noise D′ needs *beyond* D's to equal D's release.

The entry format
----------------
::

    ENTRIES["my_algorithm"] = Entry(
        releases=(Release(
            event="broadcast",                 # substring of the PrivacyEvent.note of the ledger events
                                               # that account for this release
            site=lambda k: (k - 1, (0,)),      # iteration k's noise: call k−1, row 0 (agent 0)
            gain=lambda tr: 1 / tr.params["n_agents"],  # d trace.model / d (this release's noise) at the
                                               # last iteration (the paper's post-processing: here a mean)
            # recover=f(problem, trace_on, trace_off) -> noise, instead of gain, for a non-linear release
        ),),
        options={},                            # noise test: options over algorithm_cases.CASES[name]
                                               # (may hold "epsilon"/"delta"; defaults 1.0 / 1e-5)
        problem=None,                          # noise test: problem factory () -> Problem (default: the case's)
        sensitivity=(Sensitivity(options={...}, steps=3, min_ratio=0.45),),
        audit=Audit(problem=tiny_logistic, options={"iterations": 1}),
    )

``Sensitivity(problem=None, options={}, steps=3, min_ratio=0.0, record=0, labels=None, release=0,
margin=0.0)``:
``problem`` a factory (default: the case's), ``options`` over the case's, ``steps`` releases measured
(each from the same state), ``min_ratio`` the measured/claimed ratio the worst candidate must
reach, ``labels`` the candidate labels (default ±1 logistic, ±feature_bound squared), ``release``
the index in ``releases`` whose site is used, ``margin`` the adversarial state (0: the run's own).
Every private algorithm needs one setting with ``min_ratio ≥ 0.95`` (clipped gradients, or the
logistic loss with ``margin=MARGIN``; ``test_every_private_algorithm_reaches_the_ledgers_sensitivity``).
The replaced record must belong to the agent whose noise the site addresses (give
``owner=round_robin(n, N)`` so that record 0 is agent 0's).

``Audit(problem=None, options={}, epsilon=2.0, delta=1e-3, runs=200_000, teeth=False, method="auto",
canary=None)``:
the empirical audit of :func:`dpadmm_lite.audit.audit_algorithm` on ``problem()`` with a canary record
(:func:`dpadmm_lite.audit.canary_neighbours`), or on ``dl.audit.canary_pair(canary)``. Choose a
setting whose released model is affine in the noise (one iteration, one agent) so that the audit is
vectorised over ``runs``; otherwise it falls back to one library run per run (give ``runs`` ≈ 300
and ``method="runs"``). ``teeth=True``: the same audit
with every draw halved must exceed the reported ε — only where the canary reaches enough of the
release's sensitivity (clipped gradients; the logistic canaries the model meets at a large margin).

Helpers for entries: :func:`tiny_logistic`, :func:`round_robin`, :func:`star_site`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import dpadmm_lite as dl
from algorithm_cases import CASES, logistic_problem
from dpadmm_lite import audit as dl_audit
from dpadmm_lite import datasets, problems

HARNESS = "tests/privacy_harness.py"


# ====================================================================== the entry format
@dataclass(frozen=True)
class Release:
    """One kind of noisy release (one kind of ledger event); see the module docstring."""

    event: str
    site: Callable[[int], tuple[int, Any]]
    gain: Callable[[Any], float] | None = None
    recover: Callable[[Any, Any, Any], np.ndarray] | None = None


@dataclass(frozen=True)
class Sensitivity:
    """A setting in which the sensitivity test measures the change of a release."""

    problem: Callable[[], Any] | None = None
    options: dict = field(default_factory=dict)
    steps: int = 3
    min_ratio: float = 0.0
    record: int = 0
    labels: tuple | None = None
    release: int = 0
    margin: float = 0.0


@dataclass(frozen=True)
class Audit:
    """A tiny setting for the empirical privacy audit (:func:`dpadmm_lite.audit.audit_algorithm`)."""

    problem: Callable[[], Any] | None = None
    options: dict = field(default_factory=dict)
    epsilon: float = 2.0
    delta: float = 1e-3
    runs: int = 200_000
    teeth: bool = False
    method: str = "auto"
    canary: str | None = None

    def neighbours(self):
        """(D, D′): ``dl.audit.canary_pair(canary)``, or the canary record of ``problem()``."""
        if self.canary is not None:
            return dl_audit.canary_pair(self.canary)
        return dl_audit.canary_neighbours(self.problem())


@dataclass(frozen=True)
class Entry:
    """Everything the privacy-bug tests need to know about one private algorithm."""

    releases: tuple[Release, ...]
    options: dict = field(default_factory=dict)
    problem: Callable[[], Any] | None = None
    sensitivity: tuple[Sensitivity, ...] = ()
    audit: Audit | None = None


# ====================================================================== helpers for entries
def tiny_logistic(n: int = 24, d: int = 2, *, lam: float = 1e-2, seed: int = 0):
    """A tiny logistic-ℓ2 problem (rows of norm ≤ 1): for audits and DVP's noise test."""
    X, y, _ = datasets.make_classification(n, d, seed=seed)
    return problems.logistic(X, y, lam, "l2")


def squared_l2(n: int = 40, d: int = 4, *, lam: float = 1e-2, seed: int = 0):
    """Ridge regression on unit-norm rows (squared loss, ℓ2 prox): for clipped algorithms."""
    X, y, _ = datasets.make_lasso(n, d, seed=seed, support=min(d, 8))
    return problems.Problem(X, y, lam, "squared", "l2", name="ridge")


def round_robin(n: int, n_agents: int) -> np.ndarray:
    """``owner[j] = j mod N``: equal sizes, and record 0 belongs to agent 0."""
    return np.arange(n) % n_agents


def star_site(k: int):
    """Star algorithms draw once per iteration for all agents: iteration k is call k−1; row 0 = agent 0."""
    return (k - 1, (0,))


def star_block_site(k: int):
    """DP-ADMM in the star draws the noise of a block of iterations in one call (``star._NOISE_BLOCK``
    numbers: a whole run of the harness's small problems): iteration k is row k−1 of call 0; agent 0."""
    return (0, (k - 1, 0))


def _xu_site(k: int):
    """Xu et al.: one call draws P₀ … P_T (T+1, d); P₀ perturbs u₀'s gradient, which is the same
    quantity ∇f(x₀) as step 1's, so step 1's release is rows 0 and 1 together."""
    return (0, ([0, 1],)) if k == 1 else (0, (k,))


def _dvp_dual_noise(problem, on, off):
    """ξ of DVP's last local update, from its optimality conditions (one agent: γ = 0, w^T = w_1^T).

    ``∇f(w) + (λ + Φ)w − ξ/m + ρ(w − w^{T−1}) = 0`` at the released ``w``, with the same
    ``w^{T−1}`` in both runs, so ``ξ = m[∇f(w_on) − ∇f(w_off) + (ρ + λ + Φ)(w_on − w_off)]``.
    """
    extra = float(np.ravel(on.noise["extra_penalty"])[0])
    strong = on.params["rho"] + problem.lam + extra
    return problem.n * (problem.gradient(on.model) - problem.gradient(off.model) + strong * (on.model - off.model))


def _dvp_problem():
    # Few records, so that Φ > 0 at the noise test's ε and the extra penalty is exercised.
    return tiny_logistic(n=24, d=6, seed=1)


def _audit_ridge():
    return squared_l2(n=20, d=2)


def _rich_logistic():
    """The case's logistic data with a tiny λ: the noise-off iterates grow fast, so the margins of the
    later steps are large — the regime where the logistic lemmas' 2c is approached."""
    base = logistic_problem(1.0)
    return problems.logistic(base.X, base.y, 1e-4, "l2", X_test=base.X_test, y_test=base.y_test)


_STAR_SENS = dict(rho=0.5, n_agents=4, owner=round_robin(240, 4))
#: feature_bound·‖x‖ of the adversarial state of a ``margin=`` setting: the anchor sits at margin ≈ −8 and
#: cos θ = 8/400 from perpendicular to the model, so its mirror image's gradient differs from its own by
#: 2c₁ sin θ |ℓ′| ≈ 0.9998 · 2c₁ — the lemmas' bound, approached as it must be at some state.
MARGIN = 400.0
_XU = Release("gradient", _xu_site, gain=lambda tr: -tr.params["eta"] / tr.params["gamma"])
_XU_SENS = (
    # large steps and a tiny λ: margins grow, the measured change exceeds half the lemma's 2c/n
    Sensitivity(problem=_rich_logistic, options={"rho": 0.02, "eta": 20.0, "iterations": 6}, steps=6,
                min_ratio=0.53),
    # clipped squared loss: the lemma's 2C/n is reached (opposite gradients, both clipped)
    Sensitivity(problem=squared_l2, options={"clip": 0.1, "iterations": 2}, steps=2, min_ratio=0.98,
                labels=(-10.0, 10.0)),
    # the logistic loss at an adversarial state (margin 400): step 2's gradient release moves by 2c/n
    Sensitivity(options={"iterations": 2}, steps=2, margin=MARGIN, min_ratio=0.95),
)
_MEAN_OF_AGENTS = lambda tr: 1.0 / tr.params["n_agents"]  # noqa: E731  w^k = mean_i w̃_i^k − mean_i γ_i/ρ

def _liu_sadmm_noise(problem, on, off):
    """u_{T−1} of DP-SADMM's last step (Liu et al., Alg. 2): x_T moves by −(η_T/γ)Q_ν⁻¹u and the released
    average x̄_T by w_T times that (w_T = 1/T, or 2/(T + 1) for the strongly convex weighted average)."""
    from dpadmm_lite import smoothing

    p, T = on.params, on.iterations
    if p["convexity"] == "strong":
        eta = min(2 * p["gamma"] * smoothing.operator_norm(problem.d, p["nu"]) / (p["mu"] * T), p["eta"])
        weight = 2.0 / (T + 1)
    else:
        eta, weight = p["eta"] / math.sqrt(T), 1.0 / T
    shift = smoothing.smoothing_matrix(problem.d, p["nu"]) @ (np.asarray(on.model) - np.asarray(off.model))
    return -shift * p["gamma"] / (eta * weight)


def _liu_vradmm_noise(problem, on, off):
    """DP-VRADMM (Liu et al., Alg. 1) with one inner step per epoch, general convex: the last epoch's
    noise (inner u or snapshot p̂, both inside G) moves x̃^S = x_1^S by −(η/γ)Q_ν⁻¹·noise and the released
    mean of the S snapshots by 1/S of that."""
    from dpadmm_lite import smoothing

    p, S = on.params, on.iterations
    assert p["inner"] == 1 and p["convexity"] == "general", "the DP-VRADMM noise test needs inner=1, general convex"
    shift = smoothing.smoothing_matrix(problem.d, p["nu"]) @ (np.asarray(on.model) - np.asarray(off.model))
    return -shift * S * p["gamma"] / p["eta"]


def _chen_lee_gain(trace):
    """d model / d u_{T−1} of ssADMM: −1/(1/η + ρ), divided by the iterates averaged for the "tail" output."""
    p, T = trace.params, trace.iterations
    gain = -1.0 / (1.0 / p["eta"] + p["rho"])
    return gain if p["output"] == "last" else gain / (T - T // 2)


_LIU_AUDIT = {"rho": 1.0, "iterations": 1, "batch_size": 24}  # q = 1: the canary is in every batch


def _graph_dual_noise(problem, on, off):
    """ε of node 0's last DVP update in ``dvp_graph`` (and ``pvp_graph``'s final DVP step), from the
    optimality condition of Zhang & Zhu's (13) at the released local models. With
    ``owner=round_robin(n, N)`` node 0 holds records 0, N, 2N, …; everything but the noise is the same
    in both runs, so ``ε = −(m/w)[w(∇h(f_on) − ∇h(f_off)) + (λ + Φ + 2ρD₀)(f_on − f_off)]``."""
    N = on.params["n_agents"]
    owner = round_robin(problem.n, N)
    node = problem.with_data(problem.X[owner == 0], problem.y[owner == 0])
    m, w = node.n, N * node.n / problem.n
    phi = float(np.asarray(on.noise["extra_penalty"]).reshape(-1, N)[-1, 0])
    strong = problem.lam + phi + 2 * on.params["rho"] * on.params["graph"].degrees[0]
    f_on, f_off = on.params["local_models"][0], off.params["local_models"][0]
    return -(m / w) * (w * (node.gradient(f_on) - node.gradient(f_off)) + strong * (f_on - f_off))


_GRAPH = {"n_agents": 2, "topology": "ring", "owner": round_robin(240, 2)}



def _cyffers_ridge_noise(problem, on, off):
    """Cyffers et al. (cyffers2023.py) on ridge: ``z = ū/(1 + (γ/n)λ)`` and one user's drawn θσξ moves
    ū by 1/n of itself, so the noise is ``(z_on − z_off)(n + γλ)`` (the prox of ridge is linear)."""
    return (np.asarray(on.model, float) - np.asarray(off.model, float)) * (problem.n + on.params["gamma"] * problem.lam)


def _cyffers_sgd_noise(problem, on, off):
    """DP-SGD of cyffers2023.py on ridge: ``z_K = (z_{K−1} − η(G + σξ)/(qn))/(1 + ηλ)``."""
    p = on.params
    factor = -p["step"] / (p["sampling_rate"] * problem.n * (1 + p["step"] * problem.lam))
    return (np.asarray(on.model, float) - np.asarray(off.model, float)) / factor


_CYFFERS = {"rho": 1 / 40, "relaxation": 0.5, "clip": 0.1}  # ridge (squared_l2, n = 40): γ = 40
_CYFFERS_ROW = lambda k: (0, (k - 1, 0))  # noqa: E731  one call draws rounds × users × d: round k, user 0
_CYFFERS_FED_ROW = lambda k: (0, ((k - 1) * 40,))  # noqa: E731  q = 1: rows (round, user), user 0 of round k
_CYFFERS_WALK_FIRST = int(__import__("dpadmm_lite.algorithms.cyffers2023", fromlist=["_walk_paths"])
                          ._walk_paths(None, 40, 1, [0])[0, 0])  # the walk's first user at seed 0

# ====================================================================== the entries
ENTRIES: dict[str, Entry] = {
    # Xu et al. 2020 (xu2020.py): x_T = x_{T−1} − (η/γ)(∇f + P_T + …)
    "dp_admm": Entry(
        releases=(_XU,),
        sensitivity=_XU_SENS,
        # one step on a clipped squared loss: x₁ is affine in P₀, P₁ and the clipped gradients are the lemma's
        audit=Audit(_audit_ridge, {"rho": 1.0, "iterations": 1, "clip": 0.1}, runs=1_000_000, teeth=True),
    ),
    "dp_acc_admm": Entry(
        releases=(_XU,),
        sensitivity=_XU_SENS,
        audit=Audit(_audit_ridge, {"rho": 1.0, "iterations": 1, "clip": 0.1}, runs=200_000),
    ),
    # Huang et al. 2019 (huang2019.py): the aggregator averages the agents' noisy broadcasts
    "pvp_star": Entry(
        releases=(Release("PVP", star_site, gain=_MEAN_OF_AGENTS),),
        # the exact minimiser moves by ‖Δ∇‖/(m(ρ + λ + curvature)): well inside 2c₁/(m(ρ + λ))
        sensitivity=(Sensitivity(options=_STAR_SENS, steps=3, min_ratio=0.4),
                     # from a state far out, where every record is saturated (no curvature) and the anchor
                     # misclassified: the minimiser moves by the whole 2c₁/(m_i Λ)
                     Sensitivity(options={**_STAR_SENS, "iterations": 2}, steps=2, margin=MARGIN, min_ratio=0.95)),
        # a canary the minimiser meets at margin −7, nearly perpendicular (dl.audit.canary_pair): reach 0.99
        audit=Audit(canary="logistic-far-optimum",
                    options={"rho": dl_audit.FAR_OPTIMUM_RHO, "iterations": 1, "n_agents": 1}, teeth=True),
    ),
    "dp_admm_star": Entry(
        releases=(Release("DP-ADMM", star_block_site, gain=_MEAN_OF_AGENTS),),
        sensitivity=(
            # the paper's step sizes do not depend on T (runs of different lengths are prefixes); a large
            # per-iteration ε gives large steps η_i^k, a tiny λ lets the margins grow
            Sensitivity(problem=_rich_logistic, options={**_STAR_SENS, "rho": 0.01, "calibration": "paper",
                                                         "epsilon": 100.0, "iterations": 6}, steps=6, min_ratio=0.505),
            Sensitivity(options=_STAR_SENS, steps=1, min_ratio=0.49),  # the default calibration, first release
            # step 2 from an adversarial w̃_0^1 (the paper's calibration: step sizes independent of T)
            Sensitivity(options={**_STAR_SENS, "calibration": "paper", "iterations": 2}, steps=2, margin=MARGIN,
                        min_ratio=0.95),
        ),
        # a canary every release after the first meets at a margin of 10³ (dl.audit.canary_pair): reach 0.83
        audit=Audit(canary="logistic-far-step",
                    options={"rho": 5e-5, "iterations": 3, "n_agents": 1, "c_w": 1e7}, teeth=True),
    ),
    "dp_sgd_star": Entry(
        # agent i sends w^{k−1} − η(g̃_i + …); the aggregator averages: d w^k / d ξ_i = −η/N
        releases=(Release("DP-SGD", star_site, gain=lambda tr: -tr.params["learning_rate"] / tr.params["n_agents"]),),
        sensitivity=(
            Sensitivity(options=_STAR_SENS, steps=3, min_ratio=0.49),
            # clip below every per-example gradient at w = 0 (|ℓ'| = ½): the lemma's 2C/m is reached
            Sensitivity(options={**_STAR_SENS, "clip": 0.3}, steps=2, min_ratio=0.98),
            # unclipped (C = c₁): at an adversarial w^1 the per-example gradients differ by nearly 2c₁
            Sensitivity(options={**_STAR_SENS, "iterations": 2}, steps=2, margin=MARGIN, min_ratio=0.95),
        ),
        audit=Audit(tiny_logistic, {"iterations": 1, "n_agents": 1, "clip": 0.3}, runs=1_000_000, teeth=True),
    ),
    # Zhang & Zhu 2017 in the star (huang2019.py): objective perturbation of the local update; one agent
    "dvp_star": Entry(
        releases=(Release("DVP", lambda k: (k - 1, (0,)), recover=_dvp_dual_noise),),
        options={"n_agents": 1, "iterations": 3, "epsilon": 0.05},
        problem=_dvp_problem,
        # the measured shift is the linear term's ‖∇ℓ_j − ∇ℓ_j'‖ (≤ 2c₁); the ledger's ζΔ = α also pays
        # for the Jacobian term, so the ratio stays near α̂/(2α); a small ρ gives margins where the
        # shift exceeds c₁ (a ledger claiming Δ = c₁ fails)
        sensitivity=(Sensitivity(options={"rho": 0.02, "n_agents": 1, "iterations": 1, "calibration": "paper"},
                                 steps=1, min_ratio=0.45),
                     # ρ = 1: c/(mΛ) = 0.001, so α̂ = 0.998α (Φ = 0); with the dual noise putting the minimiser
                     # far out, the linear term's shift ‖∇ℓ_j − ∇ℓ_j′‖ reaches 2c₁: ζ‖shift‖ = 0.997α
                     Sensitivity(options={"rho": 1.0, "n_agents": 1, "iterations": 1, "calibration": "paper"},
                                 steps=1, margin=MARGIN, min_ratio=0.95)),
        # the local update is non-linear in the dual noise: one library run per audit run
        audit=Audit(tiny_logistic, {"rho": 0.5, "iterations": 1, "n_agents": 1}, runs=200, method="runs"),
    ),
    # Zhang & Zhu 2017 over a network (zhang2017_perturbation.py): one ℓ2-Laplace call per iteration for all nodes
    # (iteration k is call k−1, row 0 = node 0); the released f_p is an exact minimiser, recovered by (13)
    "dvp_graph": Entry(
        releases=(Release("DVP broadcast", lambda k: (k - 1, (0,)), recover=_graph_dual_noise),),
        options={**_GRAPH, "iterations": 3},
        sensitivity=(Sensitivity(options={**_GRAPH, "rho": 0.02, "iterations": 1, "calibration": "paper"}, steps=1,
                                 min_ratio=0.25),
                     # as dvp_star: ρ = 1 makes α̂ ≈ α, and node 0's dual noise a state where |ℓ′| → 1
                     Sensitivity(options={**_GRAPH, "rho": 1.0, "iterations": 1, "calibration": "paper"}, steps=1,
                                 margin=MARGIN, min_ratio=0.95)),
        audit=Audit(tiny_logistic, {"rho": 0.5, "iterations": 1, "n_agents": 2, "topology": "ring"}, runs=300),
    ),
    # PVP's last iteration is one DVP step (the released output); its broadcasts V_p = f_p + ε_p feed
    # that step non-linearly, so the noise and sensitivity of the broadcasts are checked in
    # tests/test_network.py (radius law of the drawn ε_p, one-step and hidden-state sensitivity)
    "pvp_graph": Entry(
        releases=(Release("final DVP step", lambda k: (k - 1, (0,)), recover=_graph_dual_noise),),
        options={**_GRAPH, "iterations": 3},
        sensitivity=(Sensitivity(options={**_GRAPH, "rho": 0.02, "iterations": 1, "calibration": "paper"}, steps=1,
                                 min_ratio=0.25),
                     # as dvp_star: ρ = 1 makes α̂ ≈ α, and node 0's dual noise a state where |ℓ′| → 1
                     Sensitivity(options={**_GRAPH, "rho": 1.0, "iterations": 1, "calibration": "paper"}, steps=1,
                                 margin=MARGIN, min_ratio=0.95)),
        audit=Audit(tiny_logistic, {"rho": 0.5, "iterations": 1, "n_agents": 2, "topology": "ring"}, runs=300),
    ),
    # Liu et al. 2022 (liu2022.py): one call draws u_0 … u_{T−1} (T, d); DP-VRADMM draws U (S, m, d),
    # then the snapshot noise P (S, d). The smoothed step makes the gain a matrix: recover by Q_ν.
    "dp_sadmm": Entry(
        releases=(Release("minibatch gradient", lambda k: (0, (k - 1,)), recover=_liu_sadmm_noise),),
        # q = 1 (b = n): the replaced record is in every batch; the ledger's 2c/b is then exact
        sensitivity=(Sensitivity(problem=_rich_logistic, options={"batch_size": 240, "rho": 0.02, "eta": 2.0,
                                                                  "iterations": 6}, steps=6, min_ratio=0.49),
                     # clipped squared loss: opposite clipped gradients reach the ledger's 2C/b
                     Sensitivity(problem=squared_l2, options={"clip": 0.1, "batch_size": 40, "iterations": 2}, steps=2,
                                 min_ratio=0.98, labels=(-10.0, 10.0)),
                     # the logistic loss at an adversarial x_1: step 2's minibatch gradient moves by 2c/b
                     Sensitivity(options={"batch_size": 240, "iterations": 2}, steps=2, margin=MARGIN,
                                 min_ratio=0.95)),
        audit=Audit(tiny_logistic, _LIU_AUDIT, runs=300),
    ),
    # Chen & Lee 2020 (chen2020.py): one call draws u_0 … u_{T−1} (T, d); x_T moves by −u/(1/η + ρ), the
    # released model is x_T ("last") or the average of the last T − ⌊T/2⌋ iterates ("tail")
    "ssadmm": Entry(
        releases=(Release("ssADMM", lambda k: (0, (k - 1,)), gain=_chen_lee_gain),),
        options={"output": "last"},
        sensitivity=(Sensitivity(options={"batch_size": 240, "iterations": 2, "output": "last"}, steps=2,
                                 margin=MARGIN, min_ratio=0.95),
                     Sensitivity(problem=squared_l2, options={"clip": 0.1, "batch_size": 40, "iterations": 2,
                                                              "output": "last"}, steps=2, min_ratio=0.98,
                                 labels=(-10.0, 10.0))),
        audit=Audit(tiny_logistic, {**_LIU_AUDIT, "output": "last"}, runs=300),
    ),
    "dp_vradmm": Entry(
        releases=(Release("SVRG gradient", lambda k: (0, (k - 1, 0)), recover=_liu_vradmm_noise),
                  Release("snapshot", lambda k: (1, (k - 1,)), recover=_liu_vradmm_noise)),
        options={"inner": 1},
        # epoch 1 from x̃⁰ = 0: the SVRG difference vanishes (x₀ = x̃⁰), the snapshot gradient changes by
        # (ℓ'ⱼ(0)aⱼ − ℓ'ⱼ′(0)aⱼ′)/n with |ℓ'(0)| = ½: half the ledger's 2c/n at most
        sensitivity=(Sensitivity(options={"inner": 1, "batch_size": 240, "iterations": 1}, steps=1, min_ratio=0.45,
                                 release=1),
                     # epoch 2's snapshot gradient, from an adversarial x̃^1: the ledger's 2c/n is reached
                     Sensitivity(options={"inner": 1, "batch_size": 240, "iterations": 2}, steps=2, margin=MARGIN,
                                 min_ratio=0.95, release=1)),
        audit=Audit(tiny_logistic, {**_LIU_AUDIT, "inner": 1}, runs=300),
    ),
    # Cyffers et al. 2023 (cyffers2023.py): each run draws its noise in one call per chunk of rounds (here
    # one call), scaled by θσ; on ridge the released z is linear in each user's noise.
    "private_admm": Entry(
        releases=(Release("u-update", _CYFFERS_ROW, recover=_cyffers_ridge_noise),),
        options={**_CYFFERS, "iterations": 3}, problem=squared_l2,
        # opposite records, both clipped: one u-block moves by 2θ·2C, the ledger's Δ
        sensitivity=(Sensitivity(problem=squared_l2, options={**_CYFFERS, "iterations": 3}, steps=3, min_ratio=0.98,
                                 labels=(-10.0, 10.0)),),
        audit=Audit(lambda: squared_l2(n=24, d=2), {**_CYFFERS, "rho": 1 / 24, "iterations": 1}, runs=300),
    ),
    "private_admm_federated": Entry(
        # q = 1 so that user 0 takes part in every round (the sampled rounds are the same code path)
        releases=(Release("u-update", _CYFFERS_FED_ROW, recover=_cyffers_ridge_noise),),
        options={**_CYFFERS, "iterations": 3, "sampling_rate": 1.0}, problem=squared_l2,
        sensitivity=(Sensitivity(problem=squared_l2, options={**_CYFFERS, "iterations": 3, "sampling_rate": 1.0},
                                 steps=3, min_ratio=0.98, labels=(-10.0, 10.0)),),
        # q = 0.5 over 5 rounds (the canary, record 0, first takes part in round 5 at seed 0): each participation
        # is a full Gaussian release in the ledger (no amplification by sampling), which the audit must not beat
        audit=Audit(lambda: squared_l2(n=24, d=2), {**_CYFFERS, "rho": 1 / 24, "iterations": 5, "sampling_rate": 0.5},
                    runs=300),
    ),
    "private_admm_walk": Entry(
        # one step: the ledger counts the visits of the most visited user, which must not change with the seed
        releases=(Release("u-update", _CYFFERS_ROW, recover=_cyffers_ridge_noise),),
        options={**_CYFFERS, "iterations": 1}, problem=squared_l2,
        # step 1 only: the replaced record must be the user the walk visits (its first user at seed 0)
        sensitivity=(Sensitivity(problem=squared_l2, options={**_CYFFERS, "iterations": 1}, steps=1, min_ratio=0.98,
                                 labels=(-10.0, 10.0), record=_CYFFERS_WALK_FIRST),),
        # 18 steps: at seed 0 the walk reaches the canary (record 0) at step 18
        audit=Audit(lambda: squared_l2(n=24, d=2), {**_CYFFERS, "rho": 1 / 24, "iterations": 18}, runs=300),
    ),
    "dp_prox_sgd": Entry(
        releases=(Release("clipped gradients", lambda k: (0, (k - 1,)), recover=_cyffers_sgd_noise),),
        options={"clip": 0.1, "step": 0.5, "sampling_rate": 0.5, "iterations": 3}, problem=squared_l2,
        # q = 1: the replaced record is in every sum; opposite clipped gradients reach 2C, the move the ledger's
        # replace-one event (per-record bound C) allows
        sensitivity=(Sensitivity(problem=squared_l2, options={"clip": 0.1, "step": 0.5, "sampling_rate": 1.0,
                                                              "iterations": 3}, steps=3, min_ratio=0.98,
                                 labels=(-10.0, 10.0)),),
        # q = 0.5: the audit's canary is replaced (replace-one, as the ledger's exact Poisson pair declares), and the
        # sampled releases are audited against that tighter ε (not only the unsampled q = 1 case); 5 rounds: at
        # seed 0 the canary, record 0, first takes part in round 5
        audit=Audit(lambda: squared_l2(n=24, d=2), {"clip": 0.1, "step": 0.5, "sampling_rate": 0.5, "iterations": 5},
                    runs=300),
    ),
}


# ====================================================================== what the tests call
def entry(name: str) -> Entry:
    """The harness entry of ``name``, or an assertion saying where to add one."""
    assert name in ENTRIES, (
        f"private algorithm {name!r} is registered but has no entry in {HARNESS}::ENTRIES; add one (the entry "
        f"format is documented at the top of that file) so that the noise, sensitivity and audit tests cover it")
    return ENTRIES[name]


def _case(name: str):
    assert name in CASES, (f"algorithm {name!r} has no entry in tests/algorithm_cases.py::CASES; add one "
                           f"(a small problem and options), then an entry in {HARNESS}")
    return CASES[name]


def setting(name: str, options: dict | None = None, problem: Callable | None = None):
    """``(problem, options, epsilon, delta)`` for ``name``: the case's, with the given overrides."""
    case = _case(name)
    opts = {**case.options, **(options or {})}
    epsilon = opts.pop("epsilon", 1.0)
    delta = opts.pop("delta", 1e-5)
    return (problem() if problem is not None else case.problem(1.0)), opts, epsilon, delta


def run(name: str, problem, options: dict, *, epsilon: float, delta: float, seed: int = 0, edit=None):
    """One run of ``name`` with every draw intercepted (and edited by ``edit``): ``(trace, draws)``."""
    with dl_audit.intercept_noise(edit) as draws:
        trace = dl.run(name, problem, epsilon=epsilon, delta=delta, seed=seed, **options)
    return trace, draws


def ledger_event(trace, release: Release, k: int):
    """The ledger event that accounts for iteration k's release (one event per iteration, or one in all)."""
    events = [e for e in trace.ledger if release.event in e.note]
    assert events, (f"{trace.algorithm}: no ledger event's note contains {release.event!r} "
                    f"(notes: {[e.note for e in trace.ledger]}); fix the entry's `event` in {HARNESS}")
    if len(events) == 1:
        return events[0]
    assert len(events) == trace.iterations, (
        f"{trace.algorithm}: {len(events)} ledger events match {release.event!r} for {trace.iterations} iterations; "
        f"say which one accounts for iteration k in {HARNESS}")
    return events[k - 1]


def _zero_at(site, *, everything: bool = False, inject=()):
    """An edit: switch off the draw at ``site`` (or every draw), then inject ``[(site, vector), …]``."""

    def edit(i, draw):
        value = np.zeros_like(draw.raw) if everything else draw.raw.copy()
        if site is not None and site[0] == i:
            value[site[1]] = 0.0
        for (call, index), vector in inject:
            if call == i:
                value[index] = vector
        return value

    return edit


@dataclass
class Recovered:
    """One release's noise recovered from a pair of runs (same seed, that noise on and off)."""

    noise: np.ndarray  # what reached the release, in the release's units
    drawn: np.ndarray  # what the mechanism drew at the site
    asked: np.ndarray  # the σ or ζ the algorithm asked the mechanism for at the site
    event: Any  # the ledger event that accounts for the release
    mechanism: str


def recover(name: str, release: Release, seed: int) -> Recovered:
    """Recover the noise of the last iteration's ``release`` in the noise-test setting of ``name``."""
    e = entry(name)
    problem, options, epsilon, delta = setting(name, e.options, e.problem)
    on, draws = run(name, problem, options, epsilon=epsilon, delta=delta, seed=seed)
    T = on.iterations
    call, index = release.site(T)
    assert 0 <= call < len(draws), (f"{name}: site {release.site(T)} of iteration {T} names call {call}, but the run "
                                    f"made {len(draws)} draws through dpadmm_lite.mechanisms; fix the entry in {HARNESS}")
    off, _ = run(name, problem, options, epsilon=epsilon, delta=delta, seed=seed, edit=_zero_at((call, index)))
    if release.recover is not None:
        noise = np.asarray(release.recover(problem, on, off), dtype=float)
    else:
        noise = (np.asarray(on.model, float) - np.asarray(off.model, float)) / release.gain(on)
    draw = draws[call]
    return Recovered(noise, np.asarray(draw.value[index], float), _scale_at(draw, index),
                     ledger_event(on, release, T), draw.mechanism)


def _scale_at(draw, index):
    """The σ or ζ the algorithm asked for at ``index`` (one value per drawn vector)."""
    full = np.broadcast_to(draw.noise[..., None], draw.raw.shape)
    return np.unique(np.asarray(full[index], float))


# ====================================================================== the sensitivity measurement
@dataclass
class Shift:
    """The measured change of one release between D and D′ from the same state."""

    step: int
    candidate: tuple  # (record features, label) of D′
    shift: np.ndarray  # the injected noise that makes D′'s release equal D's (draw units)
    ratio: float  # measured / claimed (privacy-relevant size; ≤ 1 when the ledger is right)
    claimed: float  # Δ/σ or ζΔ of the ledger event
    measured: float  # ‖c‖/σ_draw or ζ_draw‖c‖


def _candidates(problem, u, labels, rng):
    """Replacement records at the public bound: along, against and across the model direction ``u``
    (the anchor lies along −u), both labels."""
    d, B = problem.d, problem.feature_bound
    basis = rng.standard_normal((2, d))
    perp = basis - np.outer(basis @ u, u)
    perp /= np.linalg.norm(perp, axis=1, keepdims=True)
    dirs = [u, -u, perp[1], np.eye(d)[0]]
    for theta in np.deg2rad([90, 100, 120, 150]):
        for v in (perp[0], -perp[0]):
            dirs.append(math.cos(theta) * u + math.sin(theta) * v)
    return [(B * a / np.linalg.norm(a), float(b)) for a in dirs for b in labels]


def measure_sensitivity(name: str, spec: Sensitivity, *, seed: int = 0, top: int = 2) -> list[Shift]:
    """Measure the change of the releases of steps 1 … ``spec.steps`` over many candidate records.

    ``spec.margin == 0``: from the run's own (noise-off) states. Every candidate is measured at step 1;
    the ``top`` largest go on to the later steps (coupled to the same state). ``spec.margin > 0``: from
    an adversarial state (:func:`_adversarial_state`), both orientations of the anchor, every candidate
    at every step. Returns every measurement.
    """
    e = entry(name)
    release = e.releases[spec.release]
    base, options, epsilon, delta = setting(name, spec.options, spec.problem)
    labels = spec.labels or ((-1.0, 1.0) if base.loss == "logistic" else (-base.feature_bound, base.feature_bound))
    if spec.margin > 0:
        assert base.loss == "logistic", f"{name}: margin= probes the logistic loss's large margins; fix {HARNESS}"
        state, u = _adversarial_state(name, release, base, options, epsilon, delta, spec, seed)
        return [shift for orientation in (1.0, -1.0)
                for shift in _measure(name, release, base, options, epsilon, delta, spec, seed, labels, state,
                                      orientation * u, every_step=True, top=top, final=None)]
    pilot, _ = run(name, base, {**options, "iterations": spec.steps}, epsilon=epsilon, delta=delta, seed=seed,
                   edit=_zero_at(None, everything=True))
    u = np.ravel(pilot.model).astype(float)
    u = u / np.linalg.norm(u) if np.linalg.norm(u) > 0 else np.eye(base.d)[0]
    return _measure(name, release, base, options, epsilon, delta, spec, seed, labels, None, u, every_step=False,
                    top=top, final=pilot.model)


def _adversarial_state(name, release, base, options, epsilon, delta, spec, seed):
    """The noise that puts the run where the logistic loss saturates: ``(vector, u)``.

    The lemmas bound the change of a release *at every state*, and for the logistic loss the bound
    2c₁ on ``‖∇ℓ_j − ∇ℓ_j′‖`` is approached only where both versions of the record are misclassified
    at a large margin (``|ℓ′| → 1``) and nearly perpendicular to the model; the run's own states, near
    w = 0, have ``|ℓ′| ≈ ½``. Any state the noise can produce must be covered, so the D run receives,
    at the site of every measured step, the vector ``κ·ŝ`` (draw units, ŝ a fixed unit vector) whose
    first step moves the released model by ``spec.margin / feature_bound`` along ``u``.
    """
    call, index = release.site(1)
    off = _zero_at(None, everything=True)
    one = {**options, "iterations": 1}
    x0 = np.ravel(run(name, base, one, epsilon=epsilon, delta=delta, seed=seed, edit=off)[0].model).astype(float)
    direction = np.zeros(base.d)
    direction[: min(3, base.d)] = 1.0  # a fixed direction with several non-zero coordinates
    direction /= np.linalg.norm(direction)
    probe = 1.0
    x1 = np.ravel(run(name, base, one, epsilon=epsilon, delta=delta, seed=seed,
                      edit=_zero_at(None, everything=True, inject=[((call, index), probe * direction)]))[0].model)
    moved = (np.asarray(x1, float) - x0) / probe
    assert np.linalg.norm(moved) > 0, f"{name}: the noise at the site of step 1 does not move the model; fix {HARNESS}"
    kappa = spec.margin / (base.feature_bound * np.linalg.norm(moved))
    return kappa * direction, moved / np.linalg.norm(moved)


def _measure(name, release, base, options, epsilon, delta, spec, seed, labels, state, u, *, every_step, top, final):
    """Anchor the record at the state ``u``, then measure each candidate's change of each release.

    ``state`` (draw units, or ``None``) is the noise the D run receives at the site of every step; the
    measured change of a D′ release is the noise it needs beyond that to equal D's release."""
    K = spec.steps
    off_all = _zero_at(None, everything=True)
    B = base.feature_bound
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((2, base.d))
    perp = basis - np.outer(basis @ u, u)
    perp /= np.linalg.norm(perp, axis=1, keepdims=True)
    X, y = np.array(base.X, float), np.array(base.y, float)
    y[spec.record] = max(labels)
    mirrors = []
    if state is None:
        X[spec.record] = -B * u  # misclassified along the model: a large gradient
    else:  # misclassified at margin ≈ −8 (|ℓ′| ≈ 1), nearly perpendicular to the state; its mirror image about u
        cos = min(0.5, 8.0 * B / spec.margin)
        sin = math.sqrt(1 - cos**2)
        X[spec.record] = -B * (cos * u + sin * perp[0])
        mirrors = [(-B * (cos * u - sin * perp[0]), max(labels)), (-B * (cos * u - sin * perp[1]), max(labels))]
    D = base.with_data(X, y)

    def edit(k, inject=()):
        injected = [] if state is None else [(release.site(t), state) for t in range(1, k + 1)]
        return _zero_at(None, everything=True, inject=[*injected, *inject]) if injected or inject else off_all

    targets, claims = {}, {}
    for k in range(1, K + 1):
        trace, draws = run(name, D, {**options, "iterations": k}, epsilon=epsilon, delta=delta, seed=seed,
                           edit=edit(k))
        targets[k] = trace
        call, index = release.site(k)
        scale = _scale_at(draws[call], index)
        assert scale.size == 1, f"{name}: the site of step {k} mixes noise scales {scale}; fix the entry in {HARNESS}"
        event = ledger_event(trace, release, k)
        # the claimed change of the release under the event's own neighbouring relation: a replace-one event
        # records the per-record bound C, and replacing the record moves the release by up to 2C
        moved = event.sensitivity * (2.0 if getattr(event, "neighbours", "add_remove") == "replace_one" else 1.0)
        if event.mechanism == "gaussian":
            claims[k] = (moved / event.noise, float(scale[0]))
        else:
            claims[k] = (moved * event.noise, float(scale[0]))
        if k > 1:  # runs with fewer iterations are prefixes of longer ones (noise off, or the same noise)
            np.testing.assert_allclose(
                trace.objective[: k - 1], targets[k - 1].objective, rtol=1e-10, atol=1e-13,
                err_msg=f"{name}: noise-off runs of {k - 1} and {k} iterations differ before step {k}, so the "
                        f"sensitivity test cannot couple them; use steps=1 for this setting in {HARNESS}")
    mechanism = event.mechanism
    start = np.zeros(base.d) if state is None else state

    def size(c, k):
        _, draw_scale = claims[k]
        return float(np.linalg.norm(c) / draw_scale if mechanism == "gaussian" else draw_scale * np.linalg.norm(c))

    def solve(Dp, k, couplings):
        """The vector c injected at step k's site that makes D′'s released model equal D's."""
        call, index = release.site(k)
        sites = [(release.site(t), couplings[t - 1]) for t in range(1, k)]
        claimed, draw_scale = claims[k]
        unit = claimed * draw_scale if mechanism == "gaussian" else claimed / draw_scale  # Δ in draw units

        def model(c):
            edit = _zero_at(None, everything=True, inject=[*sites, ((call, index), c)])
            tr, _ = run(name, Dp, {**options, "iterations": k}, epsilon=epsilon, delta=delta, seed=seed, edit=edit)
            return tr, np.ravel(tr.model).astype(float)

        target = np.ravel(targets[k].model).astype(float)
        d = base.d
        c = start.copy()
        _, m = model(c)
        J = jacobians.get(k)
        for attempt in range(2):
            if J is None:  # forward differences; kept for the next candidates (exact for linear releases)
                h = 1e-3 * unit
                J = jacobians[k] = np.column_stack([(model(c + h * np.eye(d)[j])[1] - m) / h for j in range(d)])
            for _ in range(12):  # Broyden's method: one step when the release enters linearly
                step = np.linalg.lstsq(J, target - m, rcond=None)[0]
                c = c + step
                m_old, (_, m) = m, model(c)
                if np.linalg.norm(step) <= 1e-9 * unit:
                    break
                J = J + np.outer((m - m_old) - J @ step, step) / (step @ step)
            jacobians[k] = J
            if np.linalg.norm(m - target) <= 1e-9 * (1.0 + np.abs(target).max()):
                break
            J = None  # the cached Jacobian is too far off here: recompute at the current point
        np.testing.assert_allclose(
            m, target, rtol=1e-8, atol=1e-10 * (1.0 + np.abs(target).max()),
            err_msg=f"{name}: no noise at the site of step {k} makes D′'s released model equal D's — the noise does "
                    f"not reach that release the way {HARNESS} says (site), or the release is not invertible")
        return c

    jacobians: dict[int, np.ndarray] = {}
    cands = _candidates(base, u, labels, rng) + mirrors
    out: list[Shift] = []
    first = []
    for a, b in cands:
        Xp, yp = X.copy(), y.copy()
        Xp[spec.record], yp[spec.record] = a, b
        Dp = base.with_data(Xp, yp)
        c = solve(Dp, 1, [])
        r = size(c - start, 1) / claims[1][0]
        out.append(Shift(1, (a, b), c - start, r, claims[1][0], size(c - start, 1)))
        first.append((r, Dp, c, (a, b)))
    if every_step:
        chosen = range(len(cands))
    else:
        # later steps for the `top` candidates of step 1 and the `top` whose per-example gradient differs
        # most from the anchor's at the pilot's final model (where the states are richest)
        grads = np.array([D.with_data(a[None, :], np.array([b])).per_example_gradients(final)[0]
                          for (a, b) in cands]) if base.loss in ("logistic", "squared") else np.zeros((len(cands), 1))
        anchor_grad = D.per_example_gradients(final, [spec.record])[0] if grads.shape[1] > 1 else 0.0
        by_gradient = np.argsort(-np.linalg.norm(grads - anchor_grad, axis=1))[:top]
        by_step_one = np.argsort([-t[0] for t in first])[:top]
        chosen = list(dict.fromkeys([*by_step_one.tolist(), *by_gradient.tolist()]))
    for _, Dp, c1, cand in [first[i] for i in chosen]:
        couplings = [c1]
        for k in range(2, K + 1):
            c = solve(Dp, k, couplings)
            couplings.append(c)
            out.append(Shift(k, cand, c - start, size(c - start, k) / claims[k][0], claims[k][0],
                             size(c - start, k)))
    return out


# ---------------------------------------------------------------- the tuner (dl.tune)
#: The tuner runs registered algorithms with their own calibration, at a per-run ε it chooses, and composes
#: their ledgers. Its privacy rests on each run's (covered above, per algorithm) and on its composition, checked
#: by ``tests/test_tuning.py::test_the_tuner_spends_what_it_reports_for_every_private_algorithm`` with these
#: settings: two candidates of the algorithm's case (the same options; the tuner draws each run's seed).
TUNER_CANDIDATES = ({}, {})


def tune(name: str, *, method: str, seed: int = 0, epsilon: float = 1.0, delta: float = 1e-5, refit: bool = False):
    """``dl.tune`` over :data:`TUNER_CANDIDATES` on ``name``'s case, every draw intercepted: ``(result, draws)``.
    The validation rows are the case problem's held-out split (the case problems keep no other)."""
    problem, options, _, _ = setting(name)
    validation = (problem.X_test, problem.y_test)  # the case's held-out rows score; the tuned problem has no test split
    problem = problems.Problem(problem.X, problem.y, problem.lam, problem.loss, problem.regularizer, problem.A,
                               None, None, problem.name, problem.feature_bound, problem.data_dependence)
    kwargs = {} if method == "fixed" else {"mean_repetitions": 2.5}
    with dl_audit.intercept_noise() as draws:
        result = dl.tune(name, problem, list(TUNER_CANDIDATES), epsilon=epsilon, delta=delta, validation=validation,
                         method=method, seed=seed, refit=refit, **kwargs, **options)
    return result, draws

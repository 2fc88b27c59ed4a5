"""A stochastic, gradient-perturbed ADMM for ``x = y`` (the baseline of Liu et al.'s Fig. 4).

Liu et al. (2022) compare DP-SADMM and DP-VRADMM on their "Lasso" problem (ℓ1-regularised
logistic regression, ``min (1/n)Σ f_i(x) + λ‖y‖₁ s.t. x = y``) against "DP-ADMM [15]": the
ssADMM of C. Chen and J. Lee, "Rényi differentially private ADMM for non-smooth regularized
optimization" (ACM CODASPY 2020, arXiv 1909.08180). What is known of that method from its
abstract and from Liu et al. (Sec. II and Table I): a *stochastic* ADMM for the constraint
``x = y`` with gradient perturbation, sub-problems with closed-form solutions, and privacy
amplification by sampling under Rényi DP. The full text of the paper was not available to the
book; its step-size schedule, output rule and clipping are therefore this module's choices,
named below, not the paper's.

For t = 0 … T − 1, with ``B_t`` a Poisson sample of expected size b (rate ``q = b/n``)::

    g_t     = (1/b) Σ_{i∈B_t} clip(∇f_i(x_t)) + u_t,      u_t ~ N(0, σ²I)
    x_{t+1} = argmin_x ⟨g_t, x⟩ + (ρ/2)‖x − y_t + w_t‖² + (1/(2η))‖x − x_t‖²
            = (x_t/η + ρ(y_t − w_t) − g_t) / (1/η + ρ)                        # closed form
    y_{t+1} = prox_{r/ρ}(x_{t+1} + w_t)                                         # soft-thresholding
    w_{t+1} = w_t + x_{t+1} − y_{t+1}

(``w`` the scaled dual), ``x₀ = y₀ = w₀ = 0``: the linearised ("inexact") stochastic ADMM of
Ouyang et al. (2013) with the ``x = y`` splitting and a constant step η. **Output** after t steps:
the average of the iterates ``x_{⌊t/2⌋+1} … x_t`` (the second half of the run, a standard output
of constant-step stochastic methods; ``output="last"`` releases ``x_t``). Without noise and with
``q = 1`` this is linearised ADMM, which converges to the minimiser for ``η ≤ 1/L``.

**Privacy.** Each step releases one Poisson-subsampled Gaussian sum; everything else is
post-processing. One record's term has norm ≤ ``c`` (``c`` = ``problem.lipschitz`` from the public
feature bound for the logistic loss, or the clipping norm): the ledger records T events
``PrivacyEvent("gaussian", c/b, σ, sampling_rate=q, neighbours="replace_one")``, and the default
calibration scales σ so that the unified accountant certifies exactly the end-to-end (ε, δ) —
the same accounting as DP-SADMM's (:mod:`dpadmm_lite.algorithms.liu2022`), so the two are
compared at the same (ε, δ) meaning the same thing. (Chen & Lee analyse sampling without
replacement with the subsampled-RDP bound of Wang et al. 2019; the book's accountant analyses
Poisson sampling, so the minibatches here are Poisson samples.)

=============  ===================================================  =========================
name           what                                                 paper
=============  ===================================================  =========================
``ssadmm``     noisy minibatch gradient, constant step, tail average  Chen & Lee 2020 (ssADMM)
``sladmm``     the same without noise                               ssADMM with σ = 0
=============  ===================================================  =========================

A private run with ``epsilon=math.inf`` is bit for bit its non-private twin: minibatches and noise
come from two streams spawned from ``numpy.random.default_rng(seed)``, and σ = 0 draws nothing.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from .. import _validate as check
from .._constraints import SCALE, Interval, Options
from .. import mechanisms
from ..problems import Problem
from ..registry import register
from ..trace import PrivacyEvent, Trace, from_iterates
from ._blas import single_blas_thread
from .liu2022 import REALISED_EVALUATIONS, _poisson_batch

__all__ = ["ssadmm", "sladmm", "noise_scale", "OUTPUTS"]

#: What a run releases after t steps: the average of its second half, or the last iterate.
OUTPUTS = ("tail", "last")

_TASKS = ("logistic-l1",)  # Liu et al.'s "Lasso" (x = y, ℓ1); the arena's tasks are left to the arena
_TUNING = {"rho": (0.01, 0.1)}
# The ranges of the options (the registry checks them, tests/test_bad_input.py reads them).
_CONSTRAINTS = {"batch_size": [Interval(Integral, 1, "n"), None], "eta": [SCALE, None], "clip": [SCALE, None],
                "output": Options(OUTPUTS)}


def _settings(problem, *, rho, batch_size, eta, clip, output, private):
    """Checked settings: (b, q, η, c, clip, output); every error names its parameter."""
    if problem.regularizer not in ("l1", "l2"):
        raise ValueError(f"problem must have the constraint x = y (an 'l1' or 'l2' regulariser): ssADMM splits "
                         f"min f(x) + r(y) s.t. x = y, got a problem with regulariser {problem.regularizer!r}")
    rho = check.positive("rho", rho)
    n = problem.n
    if batch_size is None:
        batch_size = min(50, n)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must be a whole number in [1, n = {n}], got {batch_size!r}")
    batch_size = int(batch_size)
    g = float(problem.per_example_smoothness)  # public: feature_bound²/4 (logistic) or feature_bound² (squared)
    if eta is None:
        eta = 1.0 / (2.0 * g)
    else:
        eta = check.positive("eta", eta)
    if clip is not None:
        clip = check.positive("clip", clip)
    check.choice("output", output, OUTPUTS)
    c = float(problem.lipschitz)
    if clip is not None:
        c = min(c, clip)
    if private:
        if not math.isfinite(c):
            raise ValueError(f"clip must be given for a private ssADMM run on the {problem.loss!r} loss: its "
                             "per-example gradients are unbounded, so they must be clipped to a norm clip > 0")
        if clip is None or c < clip:  # c is the public feature-bound constant: the rows must be within it
            problem.check_feature_bound("ssadmm")
    return batch_size, batch_size / n, eta, c, clip


def noise_scale(problem, *, epsilon: float, delta: float, iterations: int, batch_size: int | None = None,
                clip: float | None = None):
    """σ of the gradient noise and the run's ledger, calibrated to the end-to-end (ε, δ).

    ``iterations`` noisy minibatch sums, Poisson rate ``q = b/n``, per-record bound ``c/b``
    (replace-one neighbours, the exact pair of Poisson sampling), scaled by the unified
    accountant (:func:`dpadmm_lite.accounting.calibrate_ledger`) so that it spends (ε, δ).
    ``epsilon = math.inf``: σ = 0 and an empty ledger.

    Parameters
    ----------
    problem : Problem
        The problem (its ``n`` and public per-example gradient bound ``c = problem.lipschitz``).
    epsilon : float
        End-to-end ε in (0, 1e4], or ``math.inf`` (σ = 0, empty ledger).
    delta : float
        δ in [1e-100, 1).
    iterations : int
        T ≥ 1 noisy minibatch sums.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (q = b/n); None: ``min(50, n)``.
    clip : float or None, default None
        Per-example gradient clipping norm; replaces c (required on the squared loss).
    """
    from .liu2022 import _calibrated_scale

    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    iterations = check.count("iterations", iterations)
    b, q, _, c, _ = _settings(problem, rho=1.0, batch_size=batch_size, eta=None, clip=clip, output="tail",
                              private=math.isfinite(epsilon))
    if math.isinf(epsilon):
        return 0.0, []
    sens = c / b

    def ledger_at(sigma):
        return [PrivacyEvent("gaussian", sens, sigma, count=iterations, sampling_rate=q, neighbours="replace_one",
                             note="ssADMM: noisy minibatch gradient; Poisson sampling q = b/n, exact replace-one "
                                  "pair (per-record bound C = c/b)")]

    sigma = _calibrated_scale(tuple(ledger_at(sens)), epsilon, delta) * sens
    return float(sigma), ledger_at(sigma)


def _iterate(problem, *, rho, iterations, sigma, seed, batch_size, q, eta, clip, output, record_every):
    """The T steps; returns (released models (K, d), per-example gradients evaluated so far (K,): the drawn
    batch sizes, not private; steps (K,), noise)."""
    X, y, n, d = problem.X, problem.y, problem.n, problem.d
    T = iterations
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    U = mechanisms.gaussian(noise_rng, sigma, (T, d))  # u_t ~ N(0, σ²I), t = 0 … T−1
    norms = np.sqrt((X**2).sum(axis=1)) if clip is not None else None
    xs, counts = np.empty((T, d)), np.empty(T)
    x, z, w = np.zeros(d), np.zeros(d), np.zeros(d)  # x₀ = y₀ = w₀ = 0: data-independent
    denominator = 1.0 / eta + rho
    for t in range(T):
        idx = _poisson_batch(batch_rng, n, q)  # B_t: Poisson, rate q
        X_B = X[idx]
        slopes = problem._dloss_of_margin(X_B @ x, y[idx])  # ∇f_i(x) = ℓ'(a_iᵀx) a_i
        if clip is not None:  # per-example clipping: ‖∇f_i‖ = |ℓ'|·‖a_i‖
            size = np.abs(slopes) * norms[idx]
            slopes = slopes * np.minimum(1.0, clip / np.where(size > 0, size, 1.0))
        g = slopes @ X_B / batch_size + U[t]  # g_t = (1/b) Σ_{B_t} clip(∇f_i(x_t)) + u_t
        x = (x / eta + rho * (z - w) - g) / denominator  # x-step, closed form
        z = problem.prox_g(x + w, 1.0 / rho)  # y-step: prox of r/ρ (soft-thresholding for ℓ1)
        w = w + x - z  # scaled dual
        xs[t], counts[t] = x, len(idx)
    keep = np.unique(np.append(np.arange(record_every - 1, T, record_every), T - 1))  # after steps k, 2k, …, T
    steps = keep + 1
    if output == "last":
        released = xs[keep]
    else:  # the average of x_{⌊t/2⌋+1} … x_t after t steps: prefix sums, one subtraction
        prefix = np.vstack([np.zeros(d), np.cumsum(xs, axis=0)])
        first = steps // 2
        released = (prefix[steps] - prefix[first]) / (steps - first)[:, None]
    return released, np.cumsum(counts)[keep], steps.astype(float), U


def _run(problem, *, epsilon, delta, rho, iterations, seed, batch_size, eta, clip, output, record_every,
         private) -> Trace:
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    seed = check.count("seed", seed, minimum=0)
    try:
        iterations = check.count("iterations", iterations)
    except ValueError:
        raise ValueError(f"iterations (the number of steps T) must be a whole number >= 1, got {iterations!r}") from None
    record_every = min(check.count("record_every", record_every), iterations)  # beyond T: the last iterate only
    b, q, eta, c, clip = _settings(problem, rho=rho, batch_size=batch_size, eta=eta, clip=clip, output=output,
                                   private=private and math.isfinite(epsilon))
    sigma, ledger = noise_scale(problem, epsilon=epsilon, delta=delta, iterations=iterations, batch_size=b,
                                clip=clip) if private else (0.0, [])
    with single_blas_thread():
        released, realised, steps, _ = _iterate(problem, rho=rho, iterations=iterations, sigma=sigma, seed=seed,
                                                batch_size=b, q=q, eta=eta, clip=clip, output=output,
                                                record_every=record_every)
        evaluations = b * steps  # expected: b per step (what the release may report; module doc)
        noise = {"sigma": sigma, "batch_size": b, "sampling_rate": q}
        if ledger:
            noise.update(sensitivity=ledger[0].sensitivity, noise_multiplier=ledger[0].noise_multiplier,
                         releases=iterations, calibration="accountant")
        return from_iterates(
            problem, "", released, noise=noise, ledger=ledger, delta=delta,
            metrics={"gradient_evaluations": evaluations, "passes": evaluations / problem.n, "steps": steps,
                     REALISED_EVALUATIONS: realised},
            params={"rho": rho, "batch_size": b, "eta": eta, "clip": clip, "output": output, "record_every": record_every,
                    "lipschitz": c})




@register("ssadmm", paper="chen2020", private=True, setting="centralized", tasks=_TASKS, tuning=_TUNING,
          constraints=_CONSTRAINTS,
          description="ssADMM: stochastic linearised ADMM for x = y with a noisy minibatch gradient and "
                      "amplification by sampling (Chen & Lee 2020; Liu et al.'s DP-ADMM baseline)")
def ssadmm(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
           batch_size: int | None = None, eta: float | None = None, clip: float | None = None, output: str = "tail",
           record_every: int = 1) -> Trace:
    """ssADMM (Chen & Lee 2020, as the book reconstructs it; module doc): noisy minibatch gradient, x = y.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with the splitting ``x = y`` (regulariser
        ``"l1"`` or ``"l2"``); logistic loss, or the squared loss with ``clip``.
    epsilon : float
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0.
    iterations : int
        The number of steps T (each touches an expected b records).
    seed : int
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    eta : float or None, default None
        Constant step η > 0; default ``1/(2g)``, g the public per-example smoothness.
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    output : str, default "tail"
        ``"tail"`` (default: the average of the second half of the iterates) or ``"last"``.
    record_every : int, default 1
        Evaluate the released model after steps k, 2k, …, T only (default 1: every step).

    Returns
    -------
    Trace
        Per recorded step the objective, gap and test accuracy of the released model,
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far, b·t),
        ``metrics["passes"]`` (the same over n, q·t) and ``metrics["steps"]``; ``noise`` (σ, b, q,
        the sensitivity), the ``ledger`` and ``privacy`` (unified accountant). A diagnostic that
        no ε covers: ``metrics["realised_gradient_evaluations (not private)"]``, the gradients
        actually evaluated (the drawn batch sizes |B_t| summed): publishing every |B_t| weakens
        the amplification by sampling that the ε counts on.

    References
    ----------
    C. Chen, J. Lee, "Rényi differentially private ADMM for non-smooth regularized optimization",
    ACM CODASPY 2020, arXiv 1909.08180 (as described by Liu et al. 2022, Sec. II and Table I).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("ssadmm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _run(problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed,
                batch_size=batch_size, eta=eta, clip=clip, output=output, record_every=record_every, private=True)


@register("sladmm", paper="chen2020", private=False, setting="centralized", tasks=_TASKS, tuning=_TUNING,
          constraints=_CONSTRAINTS,
          description="Stochastic linearised ADMM for x = y (ssADMM without noise; Ouyang et al. 2013)")
def sladmm(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0, iterations: int = 100,
           seed: int = 0, batch_size: int | None = None, eta: float | None = None, clip: float | None = None,
           output: str = "tail", record_every: int = 1) -> Trace:
    """Stochastic linearised ADMM (ssADMM with σ = 0): the non-private twin of :func:`ssadmm`.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with the splitting ``x = y`` (regulariser
        ``"l1"`` or ``"l2"``); logistic loss, or the squared loss with ``clip``.
    epsilon : float, default math.inf
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0.
    iterations : int, default 100
        The number of steps T (each touches an expected b records).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    eta : float or None, default None
        Constant step η > 0; default ``1/(2g)``, g the public per-example smoothness.
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    output : str, default "tail"
        ``"tail"`` (default: the average of the second half of the iterates) or ``"last"``.
    record_every : int, default 1
        Evaluate the released model after steps k, 2k, …, T only (default 1: every step).

    Returns
    -------
    Trace
        Per recorded step the objective, gap and test accuracy of the released model,
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far, b·t),
        ``metrics["passes"]`` (the same over n, q·t) and ``metrics["steps"]``; ``noise`` (σ, b, q,
        the sensitivity), the ``ledger`` and ``privacy`` (unified accountant). A diagnostic that
        no ε covers: ``metrics["realised_gradient_evaluations (not private)"]``, the gradients
        actually evaluated (the drawn batch sizes |B_t| summed): publishing every |B_t| weakens
        the amplification by sampling that the ε counts on.

    Notes
    -----
    Exactly the code of :func:`ssadmm` with no noise; ``epsilon`` must be ``math.inf``.

    References
    ----------
    C. Chen, J. Lee, "Rényi differentially private ADMM for non-smooth regularized optimization",
    ACM CODASPY 2020, arXiv 1909.08180 (as described by Liu et al. 2022, Sec. II and Table I).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("sladmm", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private 'sladmm', got {epsilon!r}; run 'ssadmm' "
                         "for a private run")
    return _run(problem, epsilon=math.inf, delta=delta, rho=rho, iterations=iterations, seed=seed,
                batch_size=batch_size, eta=eta, clip=clip, output=output, record_every=record_every, private=False)

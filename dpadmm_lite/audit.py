"""Trust every ε: intercept the noise an algorithm draws, and audit its privacy empirically.

The book prints an ε for every run. This module lets a reader (and the test suite) check those
numbers from the outside, without reading the algorithms' code:

* :func:`intercept_noise` — a context manager that sees every draw an algorithm makes through
  :mod:`dpadmm_lite.mechanisms` (which mechanism, the σ or ζ asked for, the values) and may
  replace what the algorithm receives: switch one draw off, inject a chosen vector, or scale all
  of them (:func:`scaled_noise` — "the same algorithm with deliberately halved noise").
* :func:`epsilon_lower_bound` — the statistics of an empirical privacy audit (Jagielski, Ullman &
  Oprea 2020; Nasr, Song, Thakurta, Papernot & Carlini 2021): from the outputs of many runs on two
  neighbouring datasets, a threshold test that tries to tell them apart, and Clopper–Pearson
  confidence bounds on its two error rates. Any (ε, δ)-DP algorithm forces
  ``FPR + e^ε·FNR ≥ 1 − δ`` (and the same with the roles swapped), so the error rates measured
  give a *lower* bound on the true ε, valid with the stated confidence.
* :func:`audit_gaussian_mechanism` (vectorised over runs) and :func:`audit_algorithm` (any
  registered algorithm on a tiny problem with a canary record, :func:`canary_neighbours`).

An audit can only ever show that ε is *at least* some value. If that lower bound exceeds the ε
the library reports, the report is wrong — a privacy bug. If it stays below, the report survived
an attack; with deliberately weakened noise the same attack must fail the report, which shows
that the audit has teeth.

Examples
--------
>>> from dpadmm_lite import audit
>>> result = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=200_000, seed=0)
>>> result.epsilon_lower <= result.epsilon_reported
True
>>> halved = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=200_000, seed=0, noise_factor=0.5)
>>> halved.epsilon_lower > halved.epsilon_reported
True
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
from scipy import stats

from . import _validate as check
from . import mechanisms

__all__ = ["Draw", "intercept_noise", "scaled_noise", "clopper_pearson", "epsilon_lower_bound", "AuditResult",
           "audit_gaussian_mechanism", "canary_neighbours", "audit_algorithm", "tiny_problem", "STANDARD_AUDITS",
           "standard_audits"]

_ORIGINAL = {"gaussian": mechanisms.gaussian, "laplace_l2": mechanisms.l2_laplace}
_ATTRIBUTE = {"gaussian": "gaussian", "laplace_l2": "l2_laplace"}


# ====================================================================== seeing (and editing) every draw
@dataclass
class Draw:
    """One call to a noise mechanism during a run.

    Attributes
    ----------
    mechanism
        ``"gaussian"`` or ``"laplace_l2"`` (the names of :class:`~dpadmm_lite.privacy.PrivacyEvent`).
    noise
        The scale the algorithm asked for, one value per drawn vector (shape ``value.shape[:-1]``):
        σ for Gaussian noise, the rate ζ for ℓ2-Laplace noise.
    raw
        What the mechanism drew.
    value
        What the algorithm received (``raw`` unless an edit replaced it).
    """

    mechanism: str
    noise: np.ndarray
    raw: np.ndarray
    value: np.ndarray


_LAYERS: list = []  # active (edit, log) pairs, outermost first
_INSTALLED: list = []  # (module, attribute, original) patched while any layer is active


def _patched(mechanism: str):
    original = _ORIGINAL[mechanism]

    def patched(rng, scale, shape):
        value = original(rng, scale, shape)
        per_vector = np.broadcast_to(np.asarray(scale, dtype=float), value.shape[:-1]).copy()
        for edit, log in list(_LAYERS):
            draw = Draw(mechanism, per_vector, value, value)
            if edit is not None:
                new = edit(len(log), draw)
                if new is not None:
                    new = np.asarray(new, dtype=float)
                    if new.shape != value.shape:
                        raise ValueError(f"edit must return an array of shape {value.shape}, got {new.shape}")
                    draw.value = new
            log.append(draw)
            value = draw.value
        return value

    patched.__wrapped__ = original
    return patched


def _install() -> None:
    patches = {m: _patched(m) for m in _ORIGINAL}
    for module in [m for name, m in list(sys.modules.items()) if m and name.split(".")[0] == __package__]:
        for mechanism, original in _ORIGINAL.items():
            for attribute in {_ATTRIBUTE[mechanism], original.__name__}:
                if getattr(module, attribute, None) is original:
                    _INSTALLED.append((module, attribute, original))
                    setattr(module, attribute, patches[mechanism])


def _uninstall() -> None:
    while _INSTALLED:
        module, attribute, original = _INSTALLED.pop()
        setattr(module, attribute, original)


@contextlib.contextmanager
def intercept_noise(edit: Callable[[int, Draw], np.ndarray | None] | None = None) -> Iterator[list[Draw]]:
    """See — and optionally replace — every draw of :mod:`dpadmm_lite.mechanisms` inside the block.

    Parameters
    ----------
    edit
        ``edit(i, draw) -> array or None``, called for the ``i``-th draw of the block (counting
        Gaussian and ℓ2-Laplace calls together, from 0). Return the array the algorithm should
        receive instead of ``draw.raw`` (same shape), or ``None`` to keep the draw. The real
        mechanism is always called first, so the random stream is consumed exactly as without
        the edit: everything before an edited draw is bit-for-bit the unedited run.

    Yields
    ------
    list of Draw
        Filled as the algorithm draws.

    Notes
    -----
    Patches ``dpadmm_lite.mechanisms.gaussian`` / ``l2_laplace`` (and any module of the package
    that imported them by name) for the duration of the block; blocks nest (an outer block's
    edit is applied first, and an inner block sees its result as ``raw``); not thread-safe.
    """
    log: list[Draw] = []
    layer = (edit, log)
    if not _LAYERS:
        _install()
    _LAYERS.append(layer)
    try:
        yield log
    finally:
        _LAYERS.remove(layer)
        if not _LAYERS:
            _uninstall()


def scaled_noise(factor: float):
    """Every draw inside the block multiplied by ``factor`` (0.5: "deliberately halved noise").

    The algorithm still believes (and reports) its own σ; only the noise it adds changes. Used to
    show that an audit or a test has teeth.
    """
    factor = check.nonnegative("factor", factor)
    return intercept_noise(lambda i, draw: draw.raw * factor)


# ====================================================================== the statistics of an audit
def clopper_pearson(successes, trials, confidence: float = 0.95):
    """Two-sided Clopper–Pearson interval for a binomial proportion (vectorised).

    Returns ``(lower, upper)``; each side holds with probability ``1 − (1 − confidence)/2``.
    """
    confidence = check.open_unit("confidence", confidence)
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    a = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lower, upper


def _epsilon_from_rates(fpr_hi, fnr_hi, delta):
    """ε implied by upper bounds on the two error rates of one test: (ε, δ)-DP forces
    ``FPR + e^ε FNR ≥ 1 − δ`` and ``FNR + e^ε FPR ≥ 1 − δ``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1 - delta - fpr_hi, 0.0) / fnr_hi)
        two = np.log(np.maximum(1 - delta - fnr_hi, 0.0) / fpr_hi)
    return np.nan_to_num(np.maximum(one, two), nan=0.0, neginf=0.0, posinf=np.inf)


def epsilon_lower_bound(scores, scores_prime, delta: float, *, confidence: float = 0.95, seed: int = 0) -> dict:
    """Lower bound on ε from runs on two neighbouring datasets (threshold test + Clopper–Pearson).

    The adversary guesses "D′" when a run's score exceeds a threshold t. The runs of each side are
    split at random in two halves: the first half picks t (the threshold whose Clopper–Pearson
    bound on ε is largest there, among 4,001 quantiles of the scores), the second half,
    untouched by that choice, measures the error rates with Clopper–Pearson bounds at the given
    joint ``confidence`` (each bound at ``1 − (1 − confidence)/2``). One test, one bound: no
    multiple-comparison correction is needed.

    Parameters
    ----------
    scores, scores_prime
        One number per run on D and on D′ (higher means "more like D′").
    delta
        The δ of the guarantee being audited.

    Returns
    -------
    dict
        ``epsilon`` (the lower bound, ≥ 0), ``threshold``, ``fpr``/``fnr`` (measured on the
        second half), ``fpr_upper``/``fnr_upper``, ``runs`` (per side).
    """
    delta = check.open_unit("delta", delta)
    confidence = check.open_unit("confidence", confidence)
    s0 = np.asarray(scores, dtype=float).ravel()
    s1 = np.asarray(scores_prime, dtype=float).ravel()
    rng = np.random.default_rng(seed)
    s0, s1 = rng.permutation(s0), rng.permutation(s1)
    h0, h1 = len(s0) // 2, len(s1) // 2
    pick0, pick1, eval0, eval1 = s0[:h0], s1[:h1], s0[h0:], s1[h1:]

    # 1) choose the threshold on the first halves: the one whose Clopper–Pearson bound is largest
    #    there (so the choice favours thresholds with enough errors to be measured)
    pooled = np.concatenate([pick0, pick1])
    grid = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, 4001)))
    fp = len(pick0) - np.searchsorted(np.sort(pick0), grid, side="right")  # D runs above t
    fn = np.searchsorted(np.sort(pick1), grid, side="right")  # D′ runs at or below t
    _, fp_hi = clopper_pearson(fp, len(pick0), confidence)
    _, fn_hi = clopper_pearson(fn, len(pick1), confidence)
    t = float(grid[int(np.argmax(_epsilon_from_rates(fp_hi, fn_hi, delta)))])

    # 2) measure it on the second halves
    fp2 = int(np.sum(eval0 > t))
    fn2 = int(np.sum(eval1 <= t))
    _, fpr_hi = clopper_pearson(fp2, len(eval0), confidence)
    _, fnr_hi = clopper_pearson(fn2, len(eval1), confidence)
    eps = float(max(0.0, _epsilon_from_rates(fpr_hi, fnr_hi, delta)))
    return {"epsilon": eps, "threshold": t, "fpr": fp2 / len(eval0), "fnr": fn2 / len(eval1),
            "fpr_upper": float(fpr_hi), "fnr_upper": float(fnr_hi), "runs": min(len(s0), len(s1))}


@dataclass(frozen=True)
class AuditResult:
    """The outcome of one audit: what the library reports, and what an attack proves at least.

    ``passed`` is ``epsilon_lower ≤ epsilon_reported``: the report survived the attack.
    """

    name: str
    epsilon_reported: float
    epsilon_lower: float
    delta: float
    runs: int
    confidence: float
    noise_factor: float = 1.0
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.epsilon_lower <= self.epsilon_reported

    def __str__(self) -> str:
        weakened = "" if self.noise_factor == 1 else f", noise × {self.noise_factor:g} (deliberately weakened)"
        verdict = "the report survives" if self.passed else "THE REPORT IS WRONG"
        return (f"{self.name}: reported ε = {self.epsilon_reported:.3g}, audited ε ≥ {self.epsilon_lower:.3g} "
                f"({100 * self.confidence:.0f} % confidence, {self.runs} runs per dataset, δ = {self.delta:g}"
                f"{weakened}) — {verdict}")


# ====================================================================== audits
def audit_gaussian_mechanism(*, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0,
                             runs: int = 200_000, seed: int = 0, noise_factor: float = 1.0,
                             confidence: float = 0.95) -> AuditResult:
    """Audit the Gaussian mechanism calibrated by the library's accountant (vectorised over runs).

    σ is :func:`dpadmm_lite.accounting.calibrate_noise` × Δ for one release at (ε, δ); the
    released value is ``q(D) + N(0, σ²)`` with ``q(D) = 0``, ``q(D′) = Δ`` (a worst-case pair),
    drawn through :func:`dpadmm_lite.mechanisms.gaussian` — ``runs`` draws per dataset at once.
    ``noise_factor`` scales the noise actually added (0.5 halves it) while the report stays ε.
    """
    from . import accounting

    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    sensitivity = check.positive("sensitivity", sensitivity)
    runs = check.count("runs", runs, minimum=4)
    noise_factor = check.positive("noise_factor", noise_factor)
    sigma = accounting.calibrate_noise(epsilon, delta, steps=1) * sensitivity
    reported = accounting.gaussian_epsilon(sigma / sensitivity, 1, delta)
    rng = np.random.default_rng(seed)
    with scaled_noise(noise_factor):
        noise = mechanisms.gaussian(rng, sigma, (2, runs, 1))[..., 0]
    released_d, released_prime = 0.0 + noise[0], sensitivity + noise[1]
    bound = epsilon_lower_bound(released_d, released_prime, delta, confidence=confidence, seed=seed)
    return AuditResult("Gaussian mechanism", reported, bound["epsilon"], delta, runs, confidence, noise_factor,
                       {**bound, "sigma": sigma})


def canary_neighbours(problem, *, record: int = 0, direction=None, labels=None):
    """Two neighbouring problems that differ in one *canary* record (replace-one).

    Record ``record`` becomes ``(B·u, b)`` in D and ``(B·u, b′)`` in D′, with ``B`` the public
    ``problem.feature_bound``, ``u`` a unit ``direction`` (default: the first coordinate axis) and
    the labels ``(b, b′)`` (default ``(+1, −1)`` for the logistic loss, ``(+B, −B)`` for the squared
    loss): the two versions of the record pull the model in opposite directions as hard as the
    public bounds allow.
    """
    X = np.array(problem.X, dtype=float)
    y = np.array(problem.y, dtype=float)
    d = problem.d
    u = np.eye(d)[0] if direction is None else np.asarray(direction, dtype=float)
    u = u / np.linalg.norm(u)
    if labels is None:
        labels = (1.0, -1.0) if problem.loss == "logistic" else (problem.feature_bound, -problem.feature_bound)
    X[record] = problem.feature_bound * u
    y_d, y_prime = y.copy(), y.copy()
    y_d[record], y_prime[record] = labels
    return problem.with_data(X, y_d), problem.with_data(X, y_prime)


_AFFINE_CACHE: dict = {}  # (name, id(problem), seed, settings) → (problem, result): audits at several noise factors


def _affine_release(name: str, problem, seed: int, common: dict, *, checks: int = 3):
    key = (name, id(problem), seed, repr(sorted(common.items())))
    cached = _AFFINE_CACHE.get(key)
    if cached is not None and cached[0] is problem:
        return cached[1]
    result = _read_affine_release(name, problem, seed, common, checks=checks)
    if len(_AFFINE_CACHE) > 32:
        _AFFINE_CACHE.clear()
    _AFFINE_CACHE[key] = (problem, result)
    return result


def _read_affine_release(name: str, problem, seed: int, common: dict, *, checks: int = 3):
    """The released model as an affine function of the run's draws, read off the library's own runs.

    Returns ``(draws, offset, matrix)`` with ``model = offset + matrix @ concat(draw values)`` —
    ``offset`` from a run with every draw switched off, each column from a run with one coordinate of
    one draw set to its σ (or 1/ζ) — or ``None`` when ``checks`` ordinary runs (seeds ``seed + 10⁶ …``)
    do not satisfy it to 1e-9 (the release is not affine in the noise: audit by runs instead).
    """
    from .registry import run

    with intercept_noise() as draws:
        run(name, problem, seed=seed, **common)
    if not draws:
        return None
    shapes = [d.raw.shape for d in draws]
    sizes = [int(np.prod(shape)) for shape in shapes]
    units = [np.broadcast_to((d.noise if d.mechanism == "gaussian" else 1.0 / d.noise)[..., None], d.raw.shape).ravel()
             for d in draws]

    def model_with(flat):
        parts = np.split(flat, np.cumsum(sizes)[:-1])
        with intercept_noise(lambda i, draw: parts[i].reshape(shapes[i])):
            return np.ravel(run(name, problem, seed=seed, **common).model).astype(float)

    total = sum(sizes)
    unit = np.concatenate(units)
    offset = model_with(np.zeros(total))
    columns = []
    for j in range(total):
        flat = np.zeros(total)
        flat[j] = unit[j] if unit[j] > 0 else 1.0
        columns.append((model_with(flat) - offset) / flat[j])
    matrix = np.column_stack(columns)
    for c in range(checks):  # ordinary runs must be reproduced exactly
        with intercept_noise() as seen:
            model = np.ravel(run(name, problem, seed=seed + 10**6 + c, **common).model)
        if [d.raw.shape for d in seen] != shapes:
            return None
        flat = np.concatenate([np.ravel(d.value) for d in seen])
        predicted = offset + matrix @ flat
        if not np.allclose(model, predicted, rtol=1e-9, atol=1e-9 * (1 + np.abs(model).max())):
            return None
    return draws, offset, matrix


def audit_algorithm(name: str, problem, problem_prime, *, epsilon: float, delta: float, runs: int = 1000,
                    seed: int = 0, noise_factor: float = 1.0, confidence: float = 0.95, method: str = "auto",
                    **options) -> AuditResult:
    """Audit a registered private algorithm: ``runs`` runs on each of two neighbouring problems.

    The adversary sees the released model only; its score is the released model projected on the
    direction in which the canary moves the model (read from one run of each side with every draw
    switched off), so it learns nothing from the runs it is judged on.

    Two ways to get the runs (``method``):

    * ``"affine"`` — vectorised over runs. When the released model is an affine function of the
      noise (one linearised step, an averaging aggregator, a linear prox), a few runs of the
      library's own algorithm read that function off (:func:`_affine_release`: one run with the
      noise off, one per noise coordinate), ordinary runs with fresh seeds check that it reproduces
      them to 1e-9, and then ``runs`` fresh draws of the same mechanisms at the σ (or ζ) the
      algorithm asked for are pushed through it at once. The models are exactly those the
      algorithm would release for those draws.
    * ``"runs"`` — any algorithm: ``runs`` calls of :func:`dpadmm_lite.run` per side (seeds
      ``seed, seed + 1, …``); scores and bounds are vectorised.
    * ``"auto"`` (default) — ``"affine"`` when the check passes, else ``"runs"``.

    ``noise_factor`` scales every draw (:func:`scaled_noise`) while the algorithm keeps reporting
    the ε of its own noise. The reported ε is the algorithm's ``trace.privacy.epsilon``.
    """
    from .registry import run

    runs = check.count("runs", runs, minimum=4)
    noise_factor = check.positive("noise_factor", noise_factor)
    check.choice("method", method, ("auto", "affine", "runs"))
    common = dict(epsilon=epsilon, delta=delta, **options)
    with intercept_noise(lambda i, draw: np.zeros_like(draw.raw)):
        clean = np.ravel(run(name, problem, seed=seed, **common).model)
        clean_prime = np.ravel(run(name, problem_prime, seed=seed, **common).model)
    reported = float(run(name, problem, seed=seed, **common).privacy.epsilon)
    direction = clean_prime - clean
    norm = np.linalg.norm(direction)
    if not norm > 0:
        raise ValueError(f"the canary does not move the model of {name!r}: choose another record or direction")
    direction /= norm

    maps = None
    if method in ("auto", "affine"):
        maps = [_affine_release(name, p, seed, common) for p in (problem, problem_prime)]
        if any(m is None for m in maps):
            if method == "affine":
                raise ValueError(f"the model released by {name!r} is not affine in its noise here; use method='runs'")
            maps = None
    rng = np.random.default_rng(seed)
    if maps is not None:
        used = "affine"
        scores = np.empty((2, runs))
        for side, (draws, offset, matrix) in enumerate(maps):
            fresh = []
            for d in draws:  # the same mechanisms at the scales the algorithm asked for, all runs at once
                per_vector = np.broadcast_to(d.noise, d.raw.shape[:-1])
                draw = mechanisms.gaussian if d.mechanism == "gaussian" else mechanisms.l2_laplace
                fresh.append(noise_factor * draw(rng, per_vector, (runs, *d.raw.shape)).reshape(runs, -1))
            models = offset + np.concatenate(fresh, axis=1) @ matrix.T  # (runs, d): every run at once
            scores[side] = (models - clean) @ direction
    else:
        used = "runs"
        models = np.empty((2, runs, direction.size))
        with scaled_noise(noise_factor):
            for side, p in enumerate((problem, problem_prime)):
                for r in range(runs):
                    models[side, r] = np.ravel(run(name, p, seed=seed + r, **common).model)
        scores = (models - clean) @ direction  # (2, runs), all runs at once
    bound = epsilon_lower_bound(scores[0], scores[1], delta, confidence=confidence, seed=seed)
    return AuditResult(name, reported, bound["epsilon"], delta, runs, confidence, noise_factor,
                       {**bound, "separation": float(norm), "method": used})


# ====================================================================== the book's standard audits
def tiny_problem(loss: str = "logistic"):
    """A tiny problem whose record 0 becomes the canary: logistic-ℓ2 (24 × 2) or ridge regression (20 × 2)."""
    from . import datasets, problems

    check.choice("loss", loss, ("logistic", "squared"))
    if loss == "logistic":
        X, y, _ = datasets.make_classification(24, 2, seed=0)
        return problems.logistic(X, y, 1e-2, "l2")
    X, y, _ = datasets.make_lasso(20, 2, seed=0, support=2)
    return problems.Problem(X, y, 1e-2, "squared", "l2", name="ridge")


#: The audits the privacy chapter and ``scripts/audit.py`` run: (algorithm, loss of the tiny problem,
#: options). One iteration and one agent, so that the released model is affine in the noise and the
#: audit is vectorised over runs; DP-ADMM and DP-SGD on clipped gradients, where the canary can use
#: the whole sensitivity (the audit is then nearly tight), the star algorithms on the logistic loss.
STANDARD_AUDITS = (
    ("dp_admm", "squared", {"rho": 1.0, "iterations": 1, "clip": 0.1}),
    ("dp_sgd_star", "logistic", {"iterations": 1, "n_agents": 1, "clip": 0.3}),
    ("dp_admm_star", "logistic", {"rho": 0.5, "iterations": 1, "n_agents": 1}),
    ("pvp_star", "logistic", {"rho": 0.5, "iterations": 1, "n_agents": 1}),
)


def standard_audits(*, epsilon: float = 2.0, delta: float = 1e-3, runs: int = 1_000_000,
                    noise_factors=(1.0, 0.5), seed: int = 0, verbose: bool = True) -> list[AuditResult]:
    """Audit the Gaussian mechanism and every algorithm of :data:`STANDARD_AUDITS` at each noise factor.

    Every run reports (ε, δ) = (``epsilon``, ``delta``); ``noise_factors`` (default: as calibrated, then
    halved) scale the noise actually added. Prints each result when ``verbose``.
    """
    canaries = {name: canary_neighbours(tiny_problem(loss)) for name, loss, _ in STANDARD_AUDITS}
    results = []
    for factor in noise_factors:
        result = audit_gaussian_mechanism(epsilon=epsilon, delta=delta, runs=runs, seed=seed, noise_factor=factor)
        results.append(result)
        if verbose:
            print(result)
        for name, _, options in STANDARD_AUDITS:
            D, D_prime = canaries[name]
            result = audit_algorithm(name, D, D_prime, epsilon=epsilon, delta=delta, runs=runs, seed=seed,
                                     noise_factor=factor, method="affine", **options)
            results.append(result)
            if verbose:
                print(result)
    return results

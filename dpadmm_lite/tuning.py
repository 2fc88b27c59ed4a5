"""Private hyper-parameter tuning with one end-to-end ε: :func:`tune` (``dl.tune``).

Comparing candidate settings by training with each on the private records leaks: the setting
published, and the model trained with it, depend on every candidate run. :func:`tune` runs the
whole selection and reports one :class:`~dpadmm_lite.privacy.PrivacyGuarantee` that covers the
candidate runs, the selection and the published run, at the (ε, δ) the caller asked for::

    result = dl.tune("dp_admm", problem, [{"rho": 0.1}, {"rho": 1.0}, {"rho": 10.0}],
                     epsilon=1.0, delta=1e-5, validation=(X_val, y_val), iterations=50)
    result.chosen, result.trace.model, result.score, result.privacy

Two procedures (``method``):

``"random_stopping"`` (default)
    Papernot & Steinke (2022), Theorem 2 (:func:`dpadmm_lite.accounting.selection_rdp`): draw the
    number of runs K from the truncated negative binomial ``D_{η,γ}`` with the requested
    ``mean_repetitions`` (η = 1: Liu & Talwar's geometric), run K times a setting drawn uniformly
    from ``candidates``, publish the run with the best validation score. Its cost does not grow
    with the number of candidates, only (logarithmically) with the mean number of runs.
``"fixed"``
    Every candidate once; the candidate runs are composed by the unified accountant (exact, any
    selection rule). Cheap for a few candidates, linear in their number.

``refit=True`` adds a fresh run with the chosen setting (another release, composed).

**Calibrated like every run.** ``epsilon`` is the budget of the *whole* tuning. The tuner finds
the per-run budget ε₀ such that the total meets (ε, δ): it reads each candidate's noise shape
(its unit-scale ledger, without training: the run is stopped at its call to the accountant),
predicts the ledger every run will record at ε₀, searches ε₀ against the total (secant search of
:mod:`dpadmm_lite.accounting._search`), then runs. The guarantee it returns is computed from the
ledgers the runs actually recorded (and, for random stopping, the predicted ledgers of the
settings that were not drawn); the run refuses to report a total above the budget.

Candidates are scored on a **validation split** (``validation=(X_val, y_val)``), never on the
test split of ``problem``; the validation records are not protected by the guarantee (the
setting of both papers), the training records are. A validation row found among the training or
the test rows is refused (:func:`disjoint` drops them), and a custom ``score`` sees the model and
the validation rows only.

**What is released.** The guarantee covers the chosen setting, its run and its validation score
(:meth:`TuningResult.released`), nothing else: under random stopping the number of runs K and
the other runs' scores are not covered (publishing them costs far more than ε), and no run's seed
is. They are kept apart, named as not private, in :meth:`TuningResult.diagnostics`. Without a
``seed`` the draws come from fresh OS entropy; a caller's seed reproduces every noise draw, so the
guarantee then holds only while that seed stays secret (``privacy.assumes`` says so).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from . import _validate as check
from . import accounting, registry
from .privacy import SECRET_SEED, PrivacyEvent, PrivacyGuarantee
from .trace import Trace

__all__ = ["METHODS", "TuningDiagnostics", "TuningResult", "disjoint", "tune", "validation_score"]

#: The selection procedures of :func:`tune`.
METHODS = ("random_stopping", "fixed")
#: Non-zero shapes η of the number of runs below this size are refused (η = 0 is the logarithmic law).
MIN_ABS_ETA = 1e-6
#: The smallest finite budget of a whole tuning.
MIN_EPSILON = 1e-2
#: Arguments a candidate may not set: the tuner owns them.
_RESERVED = ("epsilon", "delta", "seed", "problem")


#: What a :class:`TuningResult`'s guarantee covers, by attribute (:meth:`TuningResult.released`).
RELEASED = ("algorithm", "chosen", "chosen_index", "trace", "score", "privacy", "run_epsilon", "method", "eta",
            "mean_repetitions", "gamma")
#: What every diagnostic object says of itself.
NOT_PRIVATE = ("NOT PRIVATE: read from every candidate run, outside the guarantee. Under random stopping the "
               "number of runs and the other runs' scores are not covered by the tuning's ε (publishing them "
               "costs far more); no run's seed is covered under any method.")


@dataclass(frozen=True)
class TuningDiagnostics:
    """What the tuning saw beside its release: for the tuner's user, **not to be published**.

    Parameters
    ----------
    runs : tuple of dict
        Every candidate run in order: ``{"candidate", "seed", "score", "epsilon"}`` (the ε the
        run spent alone under the unified accountant).
    scores : tuple of float
        Per candidate, the best validation score of its runs (``nan`` when never drawn).
    repetitions : int
        The number of candidate runs K (random stopping: the K drawn).
    seconds : dict
        ``{"runs": …, "accounting": …, "total": …}``: wall-clock time (it grows with K).
    note : str, default NOT_PRIVATE
        :data:`NOT_PRIVATE`.
    """

    runs: tuple[dict, ...]
    scores: tuple[float, ...]
    repetitions: int
    seconds: dict
    note: str = NOT_PRIVATE


@dataclass(frozen=True)
class TuningResult:
    """What :func:`tune` returns: the release its guarantee covers, and the diagnostics apart.

    Parameters
    ----------
    algorithm : str
        The registered algorithm tuned.
    chosen : dict
        The setting published (a dict of keyword arguments).
    chosen_index : int
        Its index in ``candidates``.
    trace : Trace
        Its published run: the best candidate run, or with ``refit=True`` a fresh run with it
        (its ``params["seed"]`` is None: no seed is released).
    score : float
        The published run's validation score (lower is better).
    privacy : PrivacyGuarantee
        The guarantee of everything: candidate runs, selection and published run, at the δ asked.
    run_epsilon : float
        ε₀, the budget every single run was calibrated to (set by ε, δ and the candidates' noise
        shapes alone).
    method : {"random_stopping", "fixed"}
        The procedure.
    eta, mean_repetitions, gamma : float, optional
        For random stopping the shape η, mean and γ of ``D_{η,γ}``; ``None`` for ``"fixed"``.
    _diagnostics : TuningDiagnostics, optional
        What :meth:`diagnostics` returns (internal: set by :func:`tune`).

    Notes
    -----
    :meth:`diagnostics` holds the rest (every run's score and seed, K, the times), not private.
    """

    algorithm: str
    chosen: dict
    chosen_index: int
    trace: Trace
    score: float
    privacy: PrivacyGuarantee
    run_epsilon: float
    method: str
    eta: float | None = None
    mean_repetitions: float | None = None
    gamma: float | None = None
    _diagnostics: TuningDiagnostics | None = field(default=None, repr=False, compare=False)

    def released(self) -> dict:
        """What the guarantee covers, by name (:data:`RELEASED`; the trace's own released part)."""
        out = {name: getattr(self, name) for name in RELEASED}
        out["trace"] = self.trace.released()
        return out

    def diagnostics(self) -> TuningDiagnostics:
        """Every run's score and seed, the number of runs and the times: **not private** (:data:`NOT_PRIVATE`)."""
        return self._diagnostics

    def summary(self) -> str:
        """One line of the release: what was chosen, how, and the privacy of the whole tuning."""
        how = (f"random stopping (η = {self.eta:g}, mean {self.mean_repetitions:.3g} runs)"
               if self.method == "random_stopping" else "every candidate once")
        assumes = f" ({self.privacy.assumes})" if self.privacy.assumes else ""
        return (f"{self.algorithm}: chose {self.chosen} by {how}, validation score {self.score:.4g}; every run at "
                f"ε₀ = {self.run_epsilon:.4g}; whole tuning {self.privacy}{assumes}")


class _Probe(Exception):
    """Raised by the stand-in accountant to stop a run at its calibration (it has read no data yet)."""

    def __init__(self, unit):
        super().__init__("probe")
        self.unit = unit


def _unit_ledger(algorithm: str, problem, options: dict, delta: float) -> tuple[PrivacyEvent, ...]:
    """The unit-scale ledger the run of ``options`` hands to :func:`accounting.calibrate_ledger`.

    The run is started and stopped at that call (before it trains), so this costs a few
    milliseconds. Every algorithm calibrating with ``calibration="accountant"`` makes that call.
    """
    from .accounting import _zhang2017

    def stand_in(events, epsilon, delta, **kwargs):
        raise _Probe(tuple(events))

    # an algorithm may memoise its calibration (functools.lru_cache): during the probe it calls the function itself
    cached = [(module, name, value) for module in _algorithm_modules() for name, value in vars(module).items()
              if hasattr(value, "cache_info") and hasattr(value, "__wrapped__")]
    saved = accounting.calibrate_ledger, _zhang2017.calibrate_ledger
    accounting.calibrate_ledger = _zhang2017.calibrate_ledger = stand_in
    for module, name, value in cached:
        setattr(module, name, value.__wrapped__)
    try:
        registry.run(algorithm, problem, epsilon=1.0, delta=delta, seed=0, **options)
    except _Probe as probe:
        return probe.unit
    finally:
        accounting.calibrate_ledger, _zhang2017.calibrate_ledger = saved
        for module, name, value in cached:
            setattr(module, name, value)
    raise ValueError(f"algorithm {algorithm!r} with {options} does not calibrate its noise with the unified "
                     "accountant (calibration='accountant'), so the tuner cannot meet a total budget with it")


def _algorithm_modules():
    import sys

    return [m for name, m in list(sys.modules.items()) if name.startswith(f"{__package__}.algorithms.") and m]


def _scaled(unit: tuple[PrivacyEvent, ...], epsilon: float, delta: float) -> tuple[PrivacyEvent, ...]:
    """The ledger a run with unit ledger ``unit`` records at (ε, δ): the accountant's own scaling."""
    s = accounting.calibrate_ledger(unit, epsilon, delta)
    return tuple(e.scaled(s) for e in unit)


def validation_score(problem, model, X_val, y_val):
    """The default score of a model on the validation rows, lower is better: the error rate for a
    classifier (logistic loss), the objective (mean loss + λ·regulariser) otherwise. Vectorised: a
    stack of models (shape ``(runs, d)``) gives one score per model, a single model a float.

    Parameters
    ----------
    problem : Problem
        The problem whose loss and λ define the score.
    model : array_like of float
        One model ``(d,)`` or a stack ``(runs, d)``.
    X_val : array_like of float
        Validation records, shape ``(n_val, d)``.
    y_val : array_like of float
        Validation labels, shape ``(n_val,)``.

    Returns
    -------
    float or numpy.ndarray
        The score (a float for one model, one per model for a stack).
    """
    model = np.asarray(model, float)
    if problem.loss == "logistic":
        out = 1.0 - problem.accuracy(model, X_val, y_val)
    else:
        out = problem.data_loss(model, X_val, y_val) + problem.lam * problem.regularizer_value(model)
    return float(out) if model.ndim == 1 else np.asarray(out, float)


def _row_keys(X) -> np.ndarray:
    """One key per row: its values rounded to single precision (−0 folded into 0), as bytes — equal for a
    row and its float32 round trip, in any order of the rows."""
    rows = np.ascontiguousarray(np.asarray(X, np.float32) + np.float32(0.0))
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def _found_in(X_val, X) -> np.ndarray:
    """Which rows of ``X_val`` equal (in single precision) some row of ``X``."""
    return np.isin(_row_keys(X_val), _row_keys(X))


def disjoint(problem, X_val, y_val) -> tuple[np.ndarray, np.ndarray]:
    """The validation rows that are neither training nor test rows of ``problem`` (compared as
    :func:`tune` does: row by row in single precision, in any order).

    Data with repeated feature vectors (one-hot columns) can hold a held-out record equal to a
    training one; the tuner refuses such a validation split, since a record in both would be read by
    the selection outside the guarantee. Dropping the rows this finds makes it acceptable.

    Parameters
    ----------
    problem : Problem
        The training problem (its training and test rows).
    X_val : array_like of float
        Validation records, shape ``(n_val, d)``, finite.
    y_val : array_like of float
        Validation labels, shape ``(n_val,)``, finite.

    Returns
    -------
    X_val, y_val : numpy.ndarray
        The validation rows found in neither the training nor the test rows, in their order.

    Examples
    --------
    >>> from dpadmm_lite import problems, tuning
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)) / 2
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> p = problems.logistic(X[:40], y[:40], 0.01)
    >>> X_val, y_val = np.vstack([X[:5], X[40:]]), np.concatenate([y[:5], y[40:]])  # 5 training rows
    >>> kept, _ = tuning.disjoint(p, X_val, y_val)
    >>> len(X_val), len(kept)
    (25, 20)
    """
    X_val = check.finite_array("validation X", X_val, ndim=2)
    y_val = check.finite_array("validation y", y_val, ndim=1)
    keep = ~_found_in(X_val, problem.X)
    if problem.X_test is not None:
        keep &= ~_found_in(X_val, problem.X_test)
    return X_val[keep], y_val[keep]


def _validation(problem, validation) -> tuple[np.ndarray, np.ndarray]:
    try:
        X_val, y_val = validation
    except (TypeError, ValueError):
        raise TypeError("validation must be a pair (X_val, y_val) of held-out rows, not the training or test "
                        f"split, got {type(validation).__name__}") from None
    X_val = check.finite_array("validation X", X_val, ndim=2)
    y_val = check.finite_array("validation y", y_val, ndim=1)
    if X_val.shape[1] != problem.d or len(y_val) != len(X_val) or not len(y_val):
        raise ValueError(f"validation must hold rows of the problem's {problem.d} features and one label each, "
                         f"got X of shape {X_val.shape} and y of shape {y_val.shape}")
    if problem.loss == "logistic" and not np.isin(y_val, (-1.0, 1.0)).all():
        raise ValueError(f"validation y must hold the problem's labels -1 and +1, got {np.unique(y_val)[:6]!r}")
    for split, rows in (("training", problem.X), ("test", problem.X_test)):
        if rows is None:
            continue
        found = _found_in(X_val, rows)
        if found.any():
            what = ("the problem's test split: tune on held-out validation rows and use the test split once, for "
                    "the chosen setting" if split == "test" else "the training rows, which the guarantee protects")
            raise ValueError(f"validation must not hold rows of {what}: {int(found.sum())} of its {len(found)} rows "
                             f"equal a {split} row (compared in single precision, in any order); "
                             "dpadmm_lite.tuning.disjoint(problem, X_val, y_val) drops them")
    return X_val, y_val


def _candidates(candidates) -> list[dict]:
    if isinstance(candidates, (str, bytes, Mapping)) or not isinstance(candidates, Sequence):
        raise TypeError("candidates must be a list of settings (dicts of keyword arguments, e.g. "
                        f"[{{'rho': 0.1}}, {{'rho': 1.0}}]), got {type(candidates).__name__}")
    if not candidates:
        raise ValueError("candidates must hold at least one setting (a dict of keyword arguments), got none")
    out = []
    for i, c in enumerate(candidates):
        if not isinstance(c, Mapping):
            raise TypeError(f"candidates[{i}] must be a dict of keyword arguments, got {c!r}")
        taken = sorted(set(c) & set(_RESERVED))
        if taken:
            raise ValueError(f"candidates[{i}] = {dict(c)!r} sets {taken}: the tuner sets epsilon, delta and seed "
                             "itself (the budget is the whole tuning's)")
        out.append(dict(c))
    return out


def _rdp(ledger) -> np.ndarray:
    return accounting.ledger_rdp(list(ledger))


def _total(method: str, ledgers: Sequence[tuple], finals: Sequence[tuple] | None, delta: float, *,
           eta: float | None, gamma: float | None, settings: Sequence[tuple] | None = None) -> tuple[float, str]:
    """ε at δ of the tuning whose runs recorded ``ledgers`` (fixed: each candidate's run; random stopping:
    ``settings`` holds one ledger per candidate setting, the worst is charged) and, with ``finals``, a final
    run whose ledger is one of ``finals`` (the chosen setting's: the worst is charged)."""
    if method == "fixed":
        finals = list(dict.fromkeys(finals)) if finals else []
        if len(finals) <= 1:  # one possible final ledger: the unified accountant composes everything exactly
            events = [e for ledger in ledgers for e in ledger] + (list(finals[0]) if finals else [])
            return accounting.ledger_epsilon(events, delta), "composition by the unified accountant"
        # the final run's ledger depends on the choice: RDP composes adaptively (largest final curve)
        curve = np.sum([_rdp(ledger) for ledger in ledgers], axis=0) + np.max([_rdp(f) for f in finals], axis=0)
        return accounting.rdp_to_epsilon(accounting.ORDERS, curve, delta), "Rényi DP composition (the final run's ledger depends on the choice)"
    curves = np.array([_rdp(ledger) for ledger in dict.fromkeys(settings)])
    final = None if not finals else np.max([_rdp(f) for f in dict.fromkeys(finals)], axis=0)
    return (accounting.selection_epsilon(curves, delta, eta=eta, gamma=gamma, final_rdp=final),
            "random stopping, Papernot & Steinke 2022 Thm 2")


def _floor(method: str, delta: float, *, eta: float | None, gamma: float | None, rdp_finals: bool) -> float:
    """The total ε a tuning reports however much noise its runs add (runs that spend nothing): random
    stopping's own cost, or the Rényi-DP conversion's at δ when the final run's ledger depends on the choice
    (:func:`_total`); 0 for the exact composition."""
    zeros = np.zeros(accounting.ORDERS.shape)
    if method == "random_stopping":
        return accounting.selection_epsilon(zeros, delta, eta=eta, gamma=gamma, final_rdp=zeros if rdp_finals else None)
    return accounting.rdp_to_epsilon(accounting.ORDERS, zeros, delta) if rdp_finals else 0.0


def tune(algorithm: str, problem, candidates: Sequence[Mapping[str, Any]], *, epsilon: float, delta: float,
         validation, method: str = "random_stopping", eta: float = 1.0, mean_repetitions: float | None = None,
         refit: bool = False, score: Callable | None = None, seed: int | None = None, **options) -> TuningResult:
    """Choose a setting of ``algorithm`` among ``candidates`` privately, at one end-to-end (ε, δ).

    Parameters
    ----------
    algorithm : str
        A registered private algorithm (:func:`dpadmm_lite.algorithm_names`) that calibrates with the
        unified accountant.
    problem : Problem
        The training problem (:mod:`dpadmm_lite.problems`): the records the guarantee protects.
    candidates : sequence of dict
        The settings to choose from: a non-empty list of dicts of keyword arguments of
        :func:`dpadmm_lite.run` (``rho``, ``iterations``, ``clip`` …; not ε, δ or seed).
    epsilon, delta : float
        The budget of the whole tuning (candidates, selection, published run). ε ∈
        [:data:`MIN_EPSILON`, 1e4] or ``math.inf`` (no noise, nothing is private); under random
        stopping ε must also exceed the selection's own cost (the ε of candidates that spend
        nothing, which grows with δ⁻¹ and the mean number of runs). δ ∈ (0, 1/n), small enough
        that a single run still has an ε₀ > 0.
    validation : tuple of array_like
        ``(X_val, y_val)``: held-out rows that score the candidates. Refused when a row equals a
        training or test row (in single precision, any order: :func:`disjoint` drops them) or a
        label is not one of the problem's (±1 for logistic regression).
    method : {"random_stopping", "fixed"}, default "random_stopping"
        ``"random_stopping"`` or ``"fixed"`` (:data:`METHODS`; see the module's docstring).
    eta : float, default 1.0
        Random stopping: the shape η ∈ (−1, 1e3] (0, or |η| ≥ 1e-6) of ``D_{η,γ}``. Not used by
        ``"fixed"``.
    mean_repetitions : float, optional
        Random stopping: the expected number of runs, in (1, 1e4] (default: the number of
        candidates, or 2 for a single one); the law's mass beyond
        :data:`~dpadmm_lite.accounting._selection.SAMPLER_LIMIT` runs must be below δ/1000. Not
        used by ``"fixed"``.
    refit : bool, default False
        Publish a fresh run with the chosen setting (composed) instead of the best candidate run.
    score : callable, optional
        ``score(model, X_val, y_val) -> float``, lower is better: it sees the model and the
        validation rows only. Default: :func:`validation_score` of the problem's loss (error rate,
        or the objective). Must be finite.
    seed : int, optional
        None (default): every draw (K, the settings drawn, each run's noise) from fresh OS entropy.
        A whole number seeds them all (``numpy.random.default_rng(seed)``), reproducibly — and then
        the guarantee holds only while the seed stays secret (``privacy.assumes``).
    **options
        Keyword arguments shared by every run (``iterations=50``, ``n_agents=10`` …).

    Returns
    -------
    TuningResult
        The release (:meth:`TuningResult.released`) and, apart, its diagnostics (not private).

    Examples
    --------
    >>> from dpadmm_lite import problems, tuning
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    >>> y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, 1.0, -1.0)
    >>> p = problems.logistic(X[:200], y[:200], 0.01)
    >>> result = tuning.tune("dp_admm", p, [{"rho": 0.5}, {"rho": 2.0}], epsilon=1.0, delta=1e-5,
    ...                      validation=(X[200:], y[200:]), iterations=10, seed=0)
    >>> result.chosen in ({"rho": 0.5}, {"rho": 2.0}), result.privacy.epsilon <= 1.0
    (True, True)
    """
    started = time.perf_counter()
    info = registry.info(algorithm)
    if not info.private:
        raise ValueError(f"algorithm must be a private algorithm (one of {list(registry.algorithm_names().private)}), "
                         f"got {algorithm!r}: a non-private one has no ε to tune within")
    from .problems import Problem

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpadmm_lite.problems.Problem, got {type(problem).__name__}")
    settings = _candidates(candidates)
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    method = check.choice("method", method, METHODS)
    if math.isfinite(epsilon) and epsilon < MIN_EPSILON:
        raise ValueError(f"epsilon must be in [{MIN_EPSILON:g}, 1e4] or math.inf for a tuning (below it every run "
                         f"is pure noise and the calibration leaves floating point), got {epsilon!r}")
    seeded = seed is not None
    seed = check.count("seed", seed, minimum=0) if seeded else None
    if not isinstance(refit, (bool, np.bool_)):
        raise TypeError(f"refit must be True or False, got {refit!r}")
    taken = sorted(set(options) & set(_RESERVED))
    if taken:
        raise ValueError(f"options {taken} are the tuner's own arguments (epsilon, delta, seed)")
    if delta >= 1.0 / problem.n:
        raise ValueError(f"delta must be below 1/n = {1 / problem.n:.3g} for a tuning on {problem.n} records (at δ ≥ 1/n "
                         f"publishing one record at random is (0, δ)-DP, and the per-run budget vanishes), got {delta!r}")
    X_val, y_val = _validation(problem, validation)
    if score is not None and not callable(score):
        raise TypeError(f"score must be a function score(model, X_val, y_val) -> float, got {score!r}")
    gamma = None
    if method == "random_stopping":
        eta, _ = accounting._selection._eta_gamma(eta, 0.5)
        if 0 < abs(eta) < MIN_ABS_ETA:  # γ of a mean, searched down to e^-700, would divide by an underflow
            raise ValueError(f"eta must be 0 or a number in (-1, 1000] with |eta| ≥ {MIN_ABS_ETA:g}, got {eta!r}")
        if mean_repetitions is None:
            mean_repetitions = float(max(len(settings), 2))
        gamma = accounting.truncated_negative_binomial_gamma(eta, mean_repetitions)
        mean_repetitions = float(mean_repetitions)
        tail = accounting.repetitions_tail(eta, gamma)
        if tail > delta / 1000:
            raise ValueError(f"mean_repetitions must leave less than δ/1000 of the number of runs' law beyond "
                             f"{accounting._selection.SAMPLER_LIMIT:,} runs (where the sampler stops), got "
                             f"{mean_repetitions:g}: with eta = {eta:g} up to {tail:.2g} lies there; take a smaller "
                             "mean_repetitions or a larger eta")
    elif mean_repetitions is not None:
        raise ValueError("mean_repetitions applies to method='random_stopping' only; method='fixed' runs every "
                         "candidate once")
    else:
        eta = None
    rng = np.random.default_rng(seed)  # None: fresh OS entropy
    runs_seconds = accounting_seconds = 0.0

    # 1. each candidate's noise shape (unit ledger), read without training
    t0 = time.perf_counter()
    units = []
    for i, setting in enumerate(settings):
        try:
            units.append(_unit_ledger(algorithm, problem, {**options, **setting}, delta))
        except Exception as exc:
            raise type(exc)(f"candidates[{i}] = {setting!r} failed: {exc}") if isinstance(exc, (ValueError, TypeError)) \
                else RuntimeError(f"candidates[{i}] = {setting!r} failed: {type(exc).__name__}: {exc}") from exc
    runs_seconds += time.perf_counter() - t0
    shapes = list(dict.fromkeys(units))
    floor = _floor(method, delta, eta=eta, gamma=gamma,
                   rdp_finals=refit if method == "random_stopping" else refit and len(shapes) > 1)
    if math.isfinite(epsilon) and epsilon <= floor * (1 + 1e-2):
        how = (f"random stopping with eta = {eta:g}, mean_repetitions = {mean_repetitions:g}"
               if method == "random_stopping" else "a final run whose noise shape depends on the choice")
        raise ValueError(f"epsilon must exceed {floor * (1 + 1e-2):.4g} for {how} at delta = {delta:g}: the "
                         f"accounting alone costs ε = {floor:.4g} however much noise the runs add, got {epsilon!r}")

    # 2. the draws (data-independent: K, the setting of each run, the seeds)
    if method == "random_stopping":
        K = accounting.sample_repetitions(eta, gamma, rng)
        drawn = [int(j) for j in rng.integers(0, len(settings), size=K)]
    else:
        K = len(settings)
        drawn = list(range(K))
    run_seeds = [int(s) for s in rng.integers(0, 2 ** 31 - 1, size=len(drawn) + 1)]

    # 3. the per-run budget ε₀ whose total meets (ε, δ)
    t0 = time.perf_counter()
    if math.isinf(epsilon):
        run_eps = math.inf
    elif len(shapes) == 1 and method == "fixed":
        # every run has one noise shape: K (+1) copies of it are one ledger, calibrated by the accountant itself
        unit = list(shapes[0]) * (len(drawn) + refit)
        scale = accounting.calibrate_ledger(unit, epsilon * (1 - 1e-4), delta)
        run_eps = accounting.ledger_epsilon([e.scaled(scale) for e in shapes[0]], delta)
    elif len(shapes) == 1:
        # random stopping with one noise shape: search its scale against the selection's RDP (no PLD per step)
        from .accounting._search import _search_scale

        def selection_at(x: float) -> float:
            curve = _rdp(tuple(e.scaled(math.exp(x)) for e in shapes[0]))
            return accounting.selection_epsilon(curve, delta, eta=eta, gamma=gamma, final_rdp=curve if refit else None)

        x = _search_scale(selection_at, epsilon * (1 - 1e-4), 0.0, tol=1e-3, floor=-200.0)
        run_eps = accounting.ledger_epsilon([e.scaled(math.exp(x)) for e in shapes[0]], delta)
    else:
        def predicted(eps0: float) -> float:
            ledgers = [_scaled(u, eps0, delta) for u in units]
            finals = ledgers if refit else None
            if method == "fixed":
                return _total(method, ledgers, finals, delta, eta=eta, gamma=gamma)[0]
            return _total(method, [], finals, delta, eta=eta, gamma=gamma, settings=ledgers)[0]

        target = epsilon * (1 - 1e-4)

        def spent(x: float) -> float:
            return predicted(min(math.exp(-x), check.MAX_EPSILON))

        from .accounting._search import _search_scale
        x = _search_scale(spent, target, -math.log(epsilon), tol=2e-3)
        run_eps = math.exp(-x)
    if math.isfinite(run_eps):  # the search may land a rounding above a run's ceiling on ε: less is as safe
        run_eps = min(run_eps, check.MAX_EPSILON)
    accounting_seconds += time.perf_counter() - t0
    if not run_eps > 0:
        raise ValueError(f"delta must leave a privacy loss to spend per run, got {delta!r}: at that δ each run's ε₀ "
                         f"is {run_eps:g}; take a δ well below 1/n = {1 / problem.n:.2g}")

    # 4. the runs (and the published one); step 3 again with the recorded ledgers if they overspend
    for attempt in range(3):
        t0 = time.perf_counter()
        traces = []
        for i, j in enumerate(drawn):
            try:
                traces.append(registry.run(algorithm, problem, epsilon=run_eps, delta=delta, seed=run_seeds[i],
                                           **{**options, **settings[j]}))
            except Exception as exc:
                raise RuntimeError(f"candidates[{j}] = {settings[j]!r} failed: {type(exc).__name__}: {exc}") from exc
        models = np.array([np.asarray(t.model, float) for t in traces])
        scores_run = []
        every = validation_score(problem, models, X_val, y_val) if score is None else None  # one pass
        for i, (j, model) in enumerate(zip(drawn, models)):
            value = every[i] if every is not None else score(model.copy(), X_val, y_val)
            if isinstance(value, np.ndarray) and value.size == 1:
                value = value.item()
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or \
                    not math.isfinite(value):
                raise ValueError(f"the validation score of candidates[{j}] = {settings[j]!r} must be a finite "
                                 f"number, got {value!r} (a diverged run? give it a smaller step or more noise-"
                                 "robust setting, or a score that maps failure to a large finite value)")
            scores_run.append(float(value))
        best_run = int(np.argmin(scores_run))  # first of the ties
        chosen_index = drawn[best_run]
        published = traces[best_run]
        if refit:
            try:
                published = registry.run(algorithm, problem, epsilon=run_eps, delta=delta, seed=run_seeds[-1],
                                         **{**options, **settings[chosen_index]})
            except Exception as exc:
                raise RuntimeError(f"candidates[{chosen_index}] = {settings[chosen_index]!r} failed in the "
                                   f"final run: {type(exc).__name__}: {exc}") from exc
        runs_seconds += time.perf_counter() - t0

        t0 = time.perf_counter()
        all_traces = traces + ([published] if refit else [])
        if math.isinf(run_eps):
            guarantee = PrivacyGuarantee(math.inf, delta, "no noise: not private")
            accounting_seconds += time.perf_counter() - t0
            break
        recorded = [tuple(t.ledger) for t in traces]
        predicted_ledgers = [_scaled(u, run_eps, delta) for u in units]
        # a run must record no more than its setting's predicted ledger: the settings not drawn, and the
        # final run's possible settings, are charged by their predictions
        checks = list(zip(drawn, recorded)) + ([(chosen_index, tuple(published.ledger))] if refit else [])
        for j, ledger in checks:
            have, want = _rdp(ledger), _rdp(predicted_ledgers[j])
            if np.any(have > want * (1 + 1e-6) + 1e-12):
                raise RuntimeError(f"candidates[{j}] = {settings[j]!r} recorded more privacy loss than its noise "
                                   "shape predicted; the tuner cannot account for the settings it did not run")
        finals = list(dict.fromkeys(predicted_ledgers)) if refit else None  # the final run may be any setting's
        if method == "fixed":
            total, source = _total(method, recorded, finals, delta, eta=eta, gamma=gamma)
        else:
            total, source = _total(method, [], finals, delta, eta=eta, gamma=gamma, settings=predicted_ledgers)
        accounting_seconds += time.perf_counter() - t0
        if total <= epsilon * (1 + 1e-9):
            how = (f"every one of {len(settings)} candidate settings once" if method == "fixed" else
                   f"random stopping over {len(settings)} candidate settings (η = {eta:g}, mean {mean_repetitions:g} runs)")
            statement = (f"{how}, each run calibrated to ε₀ = {run_eps:.4g} at δ = {delta:.1e}"
                         + (", and a final run" if refit else "") + f"; the whole tuning: ε = {total:.4g}")
            guarantee = PrivacyGuarantee(float(total), delta, f"tuner: {source}", statement)
            break
        run_eps *= (epsilon / total) * (1 - 1e-3)  # the recorded ledgers overspend: less per run, and again
    else:
        raise RuntimeError(f"tune could not meet epsilon = {epsilon:g}: the runs' recorded ledgers spend more "
                           "than their noise shapes predicted")
    for t in all_traces:
        if not t.privacy.covered:
            guarantee = guarantee.not_covered(t.privacy.reason)
            break

    if seeded and guarantee.covered and math.isfinite(guarantee.epsilon):
        guarantee = replace(guarantee, assumes=SECRET_SEED)
    scores = [math.nan] * len(settings)
    for j, value in zip(drawn, scores_run):
        scores[j] = value if math.isnan(scores[j]) else min(scores[j], value)
    runs = tuple({"candidate": j, "seed": run_seeds[i], "score": scores_run[i],
                  "epsilon": float(traces[i].privacy.epsilon)} for i, j in enumerate(drawn))
    if refit:
        published_score = (float(validation_score(problem, np.asarray(published.model, float), X_val, y_val))
                           if score is None else float(score(np.asarray(published.model, float).copy(), X_val, y_val)))
    else:
        published_score = scores_run[best_run]
    published = replace(published, params={**published.params, "seed": None}, privacy=guarantee)
    seconds = {"runs": runs_seconds, "accounting": accounting_seconds, "total": time.perf_counter() - started}
    return TuningResult(algorithm, dict(settings[chosen_index]), chosen_index, published, published_score, guarantee,
                        float(run_eps), method, eta, mean_repetitions, gamma,
                        TuningDiagnostics(runs, tuple(scores), len(drawn), seconds))

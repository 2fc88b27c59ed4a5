"""scikit-learn estimators around the library's private algorithms: :class:`LogisticRegression` and :class:`Lasso`.

A practitioner's door to :func:`dpadmm_lite.run`: ``fit(X, y, groups=None)`` builds the problem
(:func:`dpadmm_lite.problems.logistic` or :func:`~dpadmm_lite.problems.lasso`), runs one registered
private algorithm and keeps what the guarantee covers apart from the diagnostics:

* ``coef_``, ``intercept_`` (and ``classes_``): the released model;
* ``privacy_`` (the end-to-end guarantee), ``ledger_`` (every noisy release) and ``released_``
  (:meth:`dpadmm_lite.trace.Trace.released`: model, ledger, guarantees, settings without the seed);
* ``diagnostics_``: the run's curves on the training rows, its realised noise, time and work. **Not
  private**: computed from the training rows without noise.

``save(path)`` writes a privacy receipt, one JSON document (no pickle) that :func:`load` reads back
into an estimator that predicts identically and refuses a silent refit.

This module needs scikit-learn (the ``[sklearn]`` extra); ``import dpadmm_lite`` does not load it.

Safe defaults
-------------
* ``epsilon`` must be given (``fit`` refuses ``None``): a non-private fit is ``epsilon=math.inf``,
  asked for explicitly.
* ``feature_bound`` is a public bound on one row's norm and every row is clipped to it before the fit
  (``clip_rows=True``): ``x ↦ x · min(1, feature_bound/‖x‖)`` reads one row at a time and no
  statistic of the data set, so it changes no sensitivity. With ``clip_rows=False`` a private
  algorithm refuses rows beyond the bound.
* ``random_state=None`` draws the noise from fresh OS entropy and keeps no seed; an int seeds the run
  reproducibly, and the guarantee then assumes the seed stays secret (``privacy_.assumes``).

The intercept
-------------
``fit_intercept=True`` appends a constant column ``c = feature_bound`` to the clipped rows and
declares the problem's public bound ``√2 · feature_bound`` (``‖[x, c]‖² ≤ feature_bound² + c²``), so
the intercept is counted in every sensitivity. The coefficient ``b`` of that column gives
``intercept_ = c · b``; the features keep their scale, so ``alpha`` weighs ``coef_`` exactly as the
library's λ weighs the model. Unlike scikit-learn's solvers the intercept is penalised too, as
``alpha · r(intercept_ / c)`` (a private algorithm's steps and noise treat every coordinate alike):
with ``c`` the largest row norm the intercept is penalised like a feature of the largest scale.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import numbers
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import __version__
from . import _constraints
from . import mechanisms as _mechanisms
from . import problems as _problems
from . import registry
from .privacy import PrivacyEvent, PrivacyGuarantee
from .trace import DIAGNOSTICS, RELEASED

__all__ = ["LogisticRegression", "Lasso", "load", "RECEIPT_FORMAT", "DEFAULT_ALGORITHMS"]

#: The ``format`` field of a privacy receipt (:meth:`LogisticRegression.save`); :func:`load` reads this one only.
RECEIPT_FORMAT = "dpadmm-lite privacy receipt 1"

#: The default algorithm of each setting, by task: centralized without ``groups``, over a star with
#: ``groups``, over a network when ``options`` names a ``topology``. ``None``: no registered private
#: algorithm solves that task in that setting.
DEFAULT_ALGORITHMS = {
    "logistic-l2": {"centralized": "dp_admm", "star": "dp_admm_star", "graph": "dvp_graph"},
    "logistic-l1": {"centralized": "dp_admm", "star": "dp_admm_star", "graph": None},
    "lasso": {"centralized": "dp_admm", "star": None, "graph": None},
}

#: Options the estimator sets itself: the agents come from ``groups``, the seed from ``random_state``.
_RESERVED_OPTIONS = ("owner", "seed", "epsilon", "delta", "rho", "iterations", "problem")

#: The ranges of the estimators' parameters, checked by ``fit`` before any noise is drawn (ε, δ, ρ and
#: the iterations as every algorithm declares them: :data:`dpadmm_lite.registry.SHARED_CONSTRAINTS`).
PARAMETER_CONSTRAINTS = {
    "epsilon": registry.SHARED_CONSTRAINTS["epsilon"],
    "delta": [registry.SHARED_CONSTRAINTS["delta"], None],
    "alpha": _constraints.Interval(Real, 0, None, closed="neither", note="the weight of the penalty"),
    "feature_bound": _constraints.SCALE,
    "rho": registry.SHARED_CONSTRAINTS["rho"],
    "iterations": registry.SHARED_CONSTRAINTS["iterations"],
    "random_state": [None, _constraints.Interval(Integral, 0, None, note="the seed of the run's noise")],
    "fit_intercept": _constraints.Boolean(),
    "clip_rows": _constraints.Boolean(),
    "penalty": _constraints.Options(["l2", "l1"]),
}


class _PrivateLinearModel(BaseEstimator):
    """What both estimators share: the checks, the run, the released/diagnostic split, the receipt.

    Parameters
    ----------
    epsilon : float or None, default None
        End-to-end ε of the fit, in (0, 1e4], or ``math.inf`` for a non-private fit; must be given.
    delta : float or None, default None
        End-to-end δ, in [1e-100, 1); must be given when ``epsilon`` is finite.
    alpha : float, default 0.01
        The weight λ of the penalty, > 0.
    fit_intercept : bool, default True
        Whether to fit an intercept (counted in the public norm bound).
    feature_bound : float, default 1.0
        The public bound on one row's norm ‖x‖.
    clip_rows : bool, default True
        Clip every row to ``feature_bound`` before the fit.
    algorithm : str or None, default None
        A registered algorithm that solves the task; ``None``: the setting's default.
    rho : float, default 0.1
        The ADMM penalty ρ.
    iterations : int, default 100
        The algorithm's iterations.
    options : dict or None, default None
        Further options of the algorithm (``topology``, ``clip``, ``n_agents``, …).
    random_state : int or None, default None
        ``None``: fresh secret randomness; an int ≥ 0: a reproducible run whose seed must stay secret.
    """

    _task_kind = ""  # "logistic" or "lasso"

    def __init__(self, *, epsilon=None, delta=None, alpha=0.01, fit_intercept=True, feature_bound=1.0,
                 clip_rows=True, algorithm=None, rho=0.1, iterations=100, options=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.feature_bound = feature_bound
        self.clip_rows = clip_rows
        self.algorithm = algorithm
        self.rho = rho
        self.iterations = iterations
        self.options = options
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _task(self) -> str:
        return "lasso" if self._task_kind == "lasso" else f"logistic-{getattr(self, 'penalty', 'l2')}"

    def _checked_parameters(self) -> dict:
        """Every parameter checked against :data:`PARAMETER_CONSTRAINTS` (ValueError naming it), converted."""
        name = type(self).__name__
        if self.epsilon is None:
            raise ValueError(f"epsilon must be given to {name}: the end-to-end privacy budget of the fit, a number in "
                             "(0, 1e4] (e.g. epsilon=1.0, with delta=1e-5), or epsilon=math.inf for a non-private "
                             "fit, asked for explicitly")
        params = self.get_params()
        out = {key: _constraints.check(key, params[key], spec) for key, spec in PARAMETER_CONSTRAINTS.items()
               if key in params}
        if math.isfinite(out["epsilon"]) and out["delta"] is None:
            raise ValueError(f"delta must be given to {name} with a finite epsilon: a number in [1e-100, 1), e.g. "
                             "delta=1e-5 (below 1/n for n training rows)")
        if self.options is not None and not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict of the algorithm's options or None, got {self.options!r}")
        options = dict(self.options or {})
        reserved = sorted(set(options) & set(_RESERVED_OPTIONS))
        if reserved:
            raise ValueError(f"options must not hold {reserved}: pass the agents as fit(X, y, groups=...), the seed "
                             f"as random_state and ε, δ, ρ, the iterations as the estimator's own parameters")
        out["options"] = options
        out["algorithm"] = self._algorithm(out["epsilon"], options, grouped=False)
        return out

    def _algorithm(self, epsilon: float, options: dict, *, grouped: bool) -> str:
        """The registered algorithm to run, checked against the task and ε (ValueError naming ``algorithm``)."""
        task = self._task()
        if self.algorithm is None:
            setting = "graph" if "topology" in options else "star" if grouped else "centralized"
            name = DEFAULT_ALGORITHMS[task][setting]
            if name is None:
                solving = sorted(a for a in registry.algorithm_names().private
                                 if task in registry.info(a).tasks and registry.info(a).setting == setting)
                raise ValueError(f"algorithm: no registered private algorithm solves {task!r} in the {setting} setting "
                                 f"with agents given by groups ({solving or 'none'}); fit without groups or topology, "
                                 f"or name one with algorithm=")
            return name
        if not isinstance(self.algorithm, str):
            raise ValueError(f"algorithm must be a registered algorithm's name or None, got {self.algorithm!r}")
        info = registry.info(self.algorithm)
        if task not in info.tasks:
            solving = sorted(a for a in registry.algorithm_names().private if task in registry.info(a).tasks)
            raise ValueError(f"algorithm {self.algorithm!r} does not solve {task!r}; the private algorithms that do are "
                             f"{solving}")
        if not info.private and math.isfinite(epsilon):
            raise ValueError(f"algorithm {self.algorithm!r} is not private, so epsilon must be math.inf, got {epsilon!r}; "
                             f"for a private fit name a private algorithm")
        return self.algorithm

    def _owner(self, groups, n: int, algorithm: str):
        """``groups`` as agent indices 0 … K−1, or None; refused for an algorithm that takes no agents."""
        if groups is None:
            return None
        groups = np.asarray(groups)
        if groups.ndim != 1 or groups.shape[0] != n:
            raise ValueError(f"groups must name one agent per row of X ({n}), got shape {groups.shape}")
        import inspect

        if "owner" not in inspect.signature(registry.info(algorithm).function).parameters:
            raise ValueError(f"groups: algorithm {algorithm!r} ({registry.info(algorithm).setting}) does not take the "
                             "rows' agents; use a star or graph algorithm, or fit without groups")
        _, owner = np.unique(groups, return_inverse=True)
        return owner.reshape(-1)

    # ------------------------------------------------------------------ the design
    def _design(self, X, feature_bound: float, clip_rows: bool, fit_intercept: bool):
        """The rows the algorithm sees (clipped, with the constant column) and the problem's public bound."""
        X = np.asarray(X, dtype=float)
        if clip_rows:
            X = _mechanisms.clip(X, feature_bound)  # rows inside the ball stay bit for bit as they are
        if not fit_intercept:
            return X, feature_bound
        return np.column_stack([X, np.full(X.shape[0], feature_bound)]), math.sqrt(2.0) * feature_bound

    def _fit(self, X, y_signed, groups, refit: bool):
        if getattr(self, "receipt_", None) is not None and not refit:
            raise ValueError(f"refit: this {type(self).__name__} was loaded from a privacy receipt; fitting it again "
                             "spends a new privacy budget and replaces the receipt's model. Call fit(X, y, refit=True) "
                             "to do so, or fit sklearn.base.clone(estimator)")
        p = self._checked_parameters()
        algorithm = p["algorithm"]
        if groups is not None and self.algorithm is None:
            algorithm = self._algorithm(p["epsilon"], p["options"], grouped=True)
        owner = self._owner(groups, X.shape[0], algorithm)
        design, bound = self._design(X, p["feature_bound"], p["clip_rows"], p["fit_intercept"])
        problem = self._problem(design, y_signed, p["alpha"], bound)
        options = dict(p["options"])
        if owner is not None:
            options["owner"] = owner
            if registry.info(algorithm).setting == "graph" and isinstance(options.get("topology", "ring"), str):
                options.setdefault("n_agents", int(owner.max()) + 1)  # a named topology is built on the groups
        if self._task_kind == "lasso" and "clip" in _signature(algorithm) and "clip" not in options:
            # the squared loss has unbounded per-example gradients: a public clipping norm, the gradient of a
            # record of norm feature_bound at residual 1
            options["clip"] = p["feature_bound"]
        delta = p["delta"] if p["delta"] is not None else 1e-5  # no noise at ε = ∞: δ is not read
        trace = registry.run(algorithm, problem, epsilon=p["epsilon"], delta=delta, rho=p["rho"],
                             iterations=p["iterations"], seed=p["random_state"], **options)
        model = np.asarray(trace.model, dtype=float)
        if p["fit_intercept"]:
            coef, intercept = model[:-1], float(model[-1] * p["feature_bound"])
        else:
            coef, intercept = model, 0.0
        self._set_model(coef, intercept)
        self.algorithm_ = algorithm
        self.privacy_ = trace.privacy
        self.ledger_ = list(trace.ledger)
        self.released_ = trace.released()
        self.diagnostics_ = {name: getattr(trace, name) for name in DIAGNOSTICS}
        self.n_iter_ = trace.iterations
        self.receipt_ = None
        return self

    # ------------------------------------------------------------------ the receipt
    def save(self, path) -> Path:
        """Write the privacy receipt: one JSON document with the model, the guarantee and the settings (no pickle).

        Parameters
        ----------
        path : str or os.PathLike
            Where to write it (a ``.json`` file).

        Returns
        -------
        pathlib.Path
            The file written.

        Notes
        -----
        The document holds ``format`` (:data:`RECEIPT_FORMAT`), the library version, the estimator and its
        parameters, the model (``coef``, ``intercept``, ``classes``, ``n_features_in``), the end-to-end
        guarantee, the paper's, the ledger and the run's settings without the seed (the ``released`` part:
        what the guarantee covers), and under ``diagnostics`` only the names of the fields that are not
        private: the receipt is meant to be published, and the diagnostics were computed from the training
        rows without noise. An infinite ε is written as the string ``"inf"`` (JSON has no infinity).
        """
        check_is_fitted(self)
        path = Path(path)
        released = dict(self.released_)
        document = {
            "format": RECEIPT_FORMAT,
            "library": "dpadmm-lite",
            "version": __version__,
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "estimator": type(self).__name__,
            "parameters": _jsonable(self.get_params()),
            "model": _jsonable(self._model_fields()),
            "released": {
                "fields": list(RELEASED),
                "algorithm": self.algorithm_,
                "model": _jsonable(released["model"]),
                "privacy": _jsonable(dataclasses.asdict(self.privacy_)),
                "privacy_paper": _jsonable(dataclasses.asdict(released["privacy_paper"])),
                "ledger": [_jsonable(dataclasses.asdict(event)) for event in self.ledger_],
                "params": _jsonable(released["params"]),
            },
            "diagnostics": {"fields": list(DIAGNOSTICS), "saved": False,
                            "note": "not private: computed from the training rows without noise; not in a receipt"},
        }
        path.write_text(json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False) + "\n")
        return path


def _signature(algorithm: str) -> set:
    import inspect

    return set(inspect.signature(registry.info(algorithm).function).parameters)


class LogisticRegression(ClassifierMixin, _PrivateLinearModel):
    """Differentially private logistic regression for two classes, fitted by a registered private algorithm.

    The objective is the library's ``(1/n) Σ log(1 + exp(−b a·w)) + alpha · r(w)``, ``r = ½‖w‖²``
    (``penalty="l2"``) or ``‖w‖₁``: scikit-learn's ``SGDClassifier(loss="log_loss", alpha=alpha)``,
    and its ``LogisticRegression(C=1/(alpha·n))`` up to the penalised intercept (module notes).

    Parameters
    ----------
    epsilon : float or None, default None
        End-to-end ε of the fit, in (0, 1e4], or ``math.inf`` for a non-private fit. Must be given:
        ``fit`` refuses ``None`` (no silent ε = ∞).
    delta : float or None, default None
        End-to-end δ, in [1e-100, 1); must be given with a finite ``epsilon`` (not read at ε = ∞).
    penalty : {"l2", "l1"}, default "l2"
        ``½‖w‖²`` or ``‖w‖₁``.
    alpha : float, default 0.01
        λ, the weight of the penalty, > 0.
    fit_intercept : bool, default True
        Fit an intercept through a constant column counted in the public norm bound (module notes).
    feature_bound : float, default 1.0
        The public bound on one row's norm ‖x‖₂, in [1e-12, 1e12]; the algorithms' sensitivities use it.
    clip_rows : bool, default True
        Clip each row to ``feature_bound`` (data-independent); ``False``: a private algorithm refuses
        rows beyond it.
    algorithm : str or None, default None
        A registered algorithm that solves the task (``dl.algorithm_table()``); ``None``: ``"dp_admm"``
        (centralized), ``"dp_admm_star"`` with ``groups``, ``"dvp_graph"`` when ``options`` has a
        ``topology`` (:data:`DEFAULT_ALGORITHMS`). A non-private one needs ``epsilon=math.inf``.
    rho : float, default 0.1
        The ADMM penalty ρ, in [1e-12, 1e12] (0.1: the smaller value of DP-ADMM's tuning grid, and Huang et
        al.'s choice; on Adult it lifts the default fit above the majority class, which ρ = 1 does not reach
        in 100 iterations).
    iterations : int, default 100
        The algorithm's iterations, ≥ 1.
    options : dict or None, default None
        Further options of the algorithm, by name (``{"topology": "ring"}``, ``{"clip": 0.3}``,
        ``{"n_agents": 10}``); not the agents (``fit(groups=...)``) nor the seed (``random_state``).
    random_state : int or None, default None
        ``None``: the noise comes from fresh OS entropy and no seed is kept; an int ≥ 0: a reproducible
        run whose guarantee assumes the seed stays secret (``privacy_.assumes``).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two labels, sorted; ``classes_[1]`` is the positive class (+1 of the library's problem).
    coef_ : numpy.ndarray of shape (1, n_features)
        The released weights.
    intercept_ : numpy.ndarray of shape (1,)
        The released intercept (0 without ``fit_intercept``).
    privacy_ : PrivacyGuarantee
        The end-to-end guarantee of the fit under the book's accountant.
    ledger_ : list of PrivacyEvent
        Every noisy release of the fit.
    released_ : dict
        What the guarantee covers (:meth:`dpadmm_lite.trace.Trace.released`).
    diagnostics_ : dict
        **Not private**: the run's curves on the training rows, realised noise, time and work.
    algorithm_ : str
        The algorithm that ran.
    n_iter_ : int
        Its iterations.

    Examples
    --------
    >>> import math
    >>> from dpadmm_lite.estimators import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)) / 2
    >>> y = np.where(X @ np.array([2.0, -1.0, 0.5]) > 0, "yes", "no")
    >>> model = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.coef_.shape
    (['no', 'yes'], (1, 3))
    >>> bool(model.score(X, y) > 0.8), round(model.privacy_.epsilon, 1) <= 1.0
    (True, True)
    >>> LogisticRegression(epsilon=math.inf).fit(X, y).privacy_.epsilon  # asked for: not private
    inf
    """

    _task_kind = "logistic"

    def __init__(self, *, epsilon=None, delta=None, penalty="l2", alpha=0.01, fit_intercept=True, feature_bound=1.0,
                 clip_rows=True, algorithm=None, rho=0.1, iterations=100, options=None, random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, alpha=alpha, fit_intercept=fit_intercept,
                         feature_bound=feature_bound, clip_rows=clip_rows, algorithm=algorithm, rho=rho,
                         iterations=iterations, options=options, random_state=random_state)
        self.penalty = penalty

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        return tags

    def _problem(self, X, y, alpha, bound):
        penalty = _constraints.check("penalty", self.penalty, PARAMETER_CONSTRAINTS["penalty"])
        return _problems.logistic(X, y, alpha, penalty, feature_bound=bound)

    def fit(self, X, y, groups=None, *, refit=False):
        """Fit the model privately (every parameter is checked before any noise is drawn).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The training rows, finite.
        y : array_like of shape (n_samples,)
            Two classes, any labels (``classes_`` sorts them).
        groups : array_like of shape (n_samples,), optional
            The agent (hospital, device) holding each row, any labels: a star algorithm by default, or the
            graph algorithm of ``options["topology"]``.
        refit : bool, default False
            Allow fitting an estimator loaded from a receipt (:func:`load`), which would replace its model.

        Returns
        -------
        LogisticRegression
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=1)
        check_classification_targets(y)
        classes, signed = np.unique(y, return_inverse=True)
        if len(classes) != 2:
            raise ValueError(f"Only binary classification is supported: y must hold exactly two classes for "
                             f"{type(self).__name__}, got "
                             f"{len(classes)} class{'es' if len(classes) != 1 else ''}: {classes[:5].tolist()}")
        self.classes_ = classes
        return self._fit(X, np.where(signed.reshape(-1) == 1, 1.0, -1.0), groups, refit)

    def _set_model(self, coef, intercept):
        self.coef_ = np.asarray(coef, dtype=float).reshape(1, -1)
        self.intercept_ = np.array([intercept], dtype=float)

    def _model_fields(self) -> dict:
        return {"coef": self.coef_, "intercept": self.intercept_, "classes": self.classes_,
                "n_features_in": self.n_features_in_}

    def decision_function(self, X):
        """The margin ``X @ coef_.T + intercept_``: positive for ``classes_[1]``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The margins.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """The class of each row: ``classes_[1]`` where the margin is ≥ 0.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The rows to classify.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) >= 0).astype(int)]

    def predict_proba(self, X):
        """The logistic model's probabilities of ``classes_[0]`` and ``classes_[1]``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            One row of two probabilities per row of ``X``.
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """The logarithms of :meth:`predict_proba`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        numpy.ndarray of shape (n_samples, 2)
            ``log P(classes_[0])``, ``log P(classes_[1])``.
        """
        z = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])


class Lasso(RegressorMixin, _PrivateLinearModel):
    """Differentially private Lasso, fitted by a registered private algorithm.

    The objective is :func:`dpadmm_lite.problems.lasso`'s ``(1/2n)‖Xw − y‖² + alpha‖w‖₁``, which is
    scikit-learn's ``Lasso(alpha=alpha)`` objective (up to the penalised intercept: module notes);
    ``alpha`` is the library's λ.

    Parameters
    ----------
    epsilon : float or None, default None
        End-to-end ε of the fit, in (0, 1e4], or ``math.inf`` for a non-private fit. Must be given:
        ``fit`` refuses ``None`` (no silent ε = ∞).
    delta : float or None, default None
        End-to-end δ, in [1e-100, 1); must be given with a finite ``epsilon`` (not read at ε = ∞).
    alpha : float, default 0.01
        λ, the weight of ‖w‖₁, > 0.
    fit_intercept : bool, default True
        Fit an intercept through a constant column counted in the public norm bound (module notes).
    feature_bound : float, default 1.0
        The public bound on one row's norm ‖x‖₂, in [1e-12, 1e12]; the algorithms' sensitivities use it.
    clip_rows : bool, default True
        Clip each row to ``feature_bound`` (data-independent); ``False``: a private algorithm refuses
        rows beyond it.
    algorithm : str or None, default None
        A registered algorithm that solves the Lasso; ``None``: ``"dp_admm"`` (centralized). No
        registered private algorithm solves it over a star or a network of agents.
    rho : float, default 0.1
        The ADMM penalty ρ, in [1e-12, 1e12] (0.1: the smaller value of DP-ADMM's tuning grid).
    iterations : int, default 100
        The algorithm's iterations, ≥ 1.
    options : dict or None, default None
        Further options of the algorithm. The squared loss's per-example gradients are unbounded, so an
        algorithm with a ``clip`` option clips them; without ``options["clip"]`` the clipping norm is
        ``feature_bound`` (public: the gradient of a row of that norm at residual 1).
    random_state : int or None, default None
        ``None``: fresh OS entropy and no seed kept; an int ≥ 0: a reproducible run whose guarantee
        assumes the seed stays secret.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
        The released weights.
    intercept_ : float
        The released intercept (0 without ``fit_intercept``).
    privacy_ : PrivacyGuarantee
        The end-to-end guarantee of the fit.
    ledger_ : list of PrivacyEvent
        Every noisy release of the fit.
    released_ : dict
        What the guarantee covers.
    diagnostics_ : dict
        **Not private**: the run's curves on the training rows, realised noise, time and work.
    algorithm_ : str
        The algorithm that ran.
    n_iter_ : int
        Its iterations.

    Examples
    --------
    >>> from dpadmm_lite.estimators import Lasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)) / 4  # rows inside the public bound 1: clipping leaves them as they are
    >>> y = X @ np.array([1.0, 0.0, -1.0])
    >>> model = Lasso(epsilon=float("inf"), alpha=0.01, iterations=1000).fit(X, y)  # asked for: not private
    >>> np.round(model.coef_, 2).tolist()  # scikit-learn's Lasso(alpha=0.01): 0.83, 0, -0.83
    [0.84, -0.0, -0.83]
    """

    _task_kind = "lasso"

    def fit(self, X, y, groups=None, *, refit=False):
        """Fit the model privately (every parameter is checked before any noise is drawn).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The training rows, finite.
        y : array_like of shape (n_samples,)
            The targets, finite.
        groups : array_like of shape (n_samples,), optional
            The agent holding each row (for an ``algorithm`` that takes agents).
        refit : bool, default False
            Allow fitting an estimator loaded from a receipt (:func:`load`), which would replace its model.

        Returns
        -------
        Lasso
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=1)
        return self._fit(X, np.asarray(y, dtype=float), groups, refit)

    def _problem(self, X, y, alpha, bound):
        return _problems.lasso(X, y, alpha, feature_bound=bound)

    def _set_model(self, coef, intercept):
        self.coef_ = np.asarray(coef, dtype=float).copy()
        self.intercept_ = float(intercept)

    def _model_fields(self) -> dict:
        return {"coef": self.coef_, "intercept": self.intercept_, "n_features_in": self.n_features_in_}

    def predict(self, X):
        """``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            The predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_


_ESTIMATORS = {"LogisticRegression": LogisticRegression, "Lasso": Lasso}


def load(path):
    """Read a privacy receipt written by ``save`` into an estimator that predicts as the saved one.

    Parameters
    ----------
    path : str or os.PathLike
        The receipt (JSON, :data:`RECEIPT_FORMAT`).

    Returns
    -------
    LogisticRegression or Lasso
        The estimator, fitted: its model, ``privacy_``, ``ledger_`` and ``released_`` as saved
        (``diagnostics_`` is None: a receipt holds no diagnostics), ``receipt_`` the document. Fitting it
        again raises unless asked for with ``fit(..., refit=True)``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dpadmm_lite.estimators import LogisticRegression, load
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(200, 2)) / 2
    >>> y = (X[:, 0] > 0).astype(int)
    >>> model = LogisticRegression(epsilon=2.0, delta=1e-5).fit(X, y)
    >>> path = model.save(pathlib.Path(tempfile.mkdtemp()) / "receipt.json")
    >>> again = load(path)
    >>> bool(np.array_equal(again.predict(X), model.predict(X))), again.privacy_ == model.privacy_
    (True, True)
    """
    document = json.loads(Path(path).read_text())
    if not isinstance(document, dict) or document.get("format") != RECEIPT_FORMAT:
        raise ValueError(f"path must be a privacy receipt ({RECEIPT_FORMAT!r}), got format "
                         f"{document.get('format') if isinstance(document, dict) else type(document).__name__!r}")
    kind = _ESTIMATORS.get(document.get("estimator"))
    if kind is None:
        raise ValueError(f"path: the receipt's estimator must be one of {sorted(_ESTIMATORS)}, got "
                         f"{document.get('estimator')!r}")
    params = {k: _from_json(v) for k, v in document["parameters"].items()}
    estimator = kind(**params)
    model = document["model"]
    if kind is LogisticRegression:
        estimator.classes_ = np.asarray(model["classes"])
    estimator._set_model(np.asarray(model["coef"], dtype=float).reshape(-1), float(np.ravel(model["intercept"])[0]))
    estimator.n_features_in_ = int(model["n_features_in"])
    released = document["released"]
    estimator.algorithm_ = released["algorithm"]
    estimator.privacy_ = PrivacyGuarantee(**{k: _from_json(v) for k, v in released["privacy"].items()})
    estimator.ledger_ = [PrivacyEvent(**{k: _from_json(v) for k, v in event.items()}) for event in released["ledger"]]
    estimator.released_ = {
        "algorithm": released["algorithm"],
        "model": np.asarray(released["model"], dtype=float),
        "ledger": list(estimator.ledger_),
        "privacy": estimator.privacy_,
        "privacy_paper": PrivacyGuarantee(**{k: _from_json(v) for k, v in released["privacy_paper"].items()}),
        "params": released["params"],
    }
    estimator.diagnostics_ = None
    estimator.n_iter_ = int(released["params"].get("iterations", 0) or 0)
    estimator.receipt_ = document
    return estimator


def _jsonable(value):
    """``value`` as JSON data: arrays as lists, numpy scalars as numbers, ±∞ and NaN as strings, other
    objects by their ``str`` (a topology, a callable: named, not serialised)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    return str(value)


def _from_json(value):
    """The inverse of :func:`_jsonable` for the numbers it wrote as strings ("inf", "-inf", "nan")."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return value

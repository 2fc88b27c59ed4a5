"""The one result type every algorithm returns.

Every algorithm in :mod:`dpadmm_lite.algorithms` returns a :class:`Trace`. A trace holds the
per-iteration curves the chapters plot, the released model, the noise that was actually used,
and the privacy spent, twice: as the paper states it (:attr:`Trace.privacy_paper`) and under
the book's one accountant applied to the run's :attr:`Trace.ledger` (:attr:`Trace.privacy`).
The privacy records themselves live in :mod:`dpadmm_lite.privacy` (re-exported here).

A trace is two things: the **release** its guarantee covers (:data:`RELEASED`, returned by
:meth:`Trace.released`: the model, the ledger, the guarantees and the settings, without the seed)
and **diagnostics** that are not private (:data:`DIAGNOSTICS`): curves computed on the training
rows along the run, the realised noise and solver details, times and counted work. Publish the
first; the second is for the person who ran it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .accounting import ledger_guarantee
from .problems import paused
from .privacy import MECHANISMS, NO_PRIVACY, PrivacyEvent, PrivacyGuarantee  # noqa: F401  (re-exported)

if TYPE_CHECKING:  # pandas only for to_frame(), imported there (a live re-run needs none)
    import pandas as pd


#: The fields of a :class:`Trace` its guarantee covers (:meth:`Trace.released`; ``params`` without the seed).
RELEASED = ("algorithm", "model", "ledger", "privacy", "privacy_paper", "params")
#: The fields that are diagnostics, not covered by the guarantee: computed on the training rows along the run
#: (objective, gap, consensus, the iterates' test accuracy), the realised noise and solver details, the
#: algorithm's further series, the time and the counted work (which can depend on the data).
DIAGNOSTICS = ("objective", "objective_gap", "test_accuracy", "consensus_violation", "noise", "metrics", "wall_time",
               "work")


@dataclass
class Trace:
    """What one run of any algorithm returns.

    All per-iteration arrays have one entry per iteration ``k = 1 … T`` (value after the
    k-th iteration). Arrays that do not apply to an algorithm are ``None``.

    Parameters
    ----------
    algorithm : str
        Registered name of the algorithm (see :func:`dpadmm_lite.algorithm_names`).
    objective, objective_gap : numpy.ndarray
        Training objective ``F(x_k)`` of the model the algorithm would release at step k, and
        ``F(x_k) − F(x*)`` against the problem's high-precision reference optimum.
    model : numpy.ndarray
        The released model (what an adversary sees at the end).
    test_accuracy : numpy.ndarray, optional
        Test accuracy (classification) per iteration, where the problem has a test split.
    consensus_violation : numpy.ndarray, optional
        Distributed runs: ``sqrt(mean_i ‖x_i − z‖²)`` between local and consensus variables.
    noise : dict, default {}
        The noise actually used, e.g. ``{"sigma": 0.3}`` or per-iteration arrays.
    ledger : list of PrivacyEvent, default []
        Every noisy release, for the unified accountant.
    privacy_paper, privacy : PrivacyGuarantee, default NO_PRIVACY
        The guarantee as the paper states it, and under the unified accountant. ``privacy`` is
        *not covered* (``privacy.covered`` False, ε = ∞, ``privacy.reason`` says why) when
        something the run used reads the private data outside the ledger: a problem whose graph
        was estimated from the training rows (``problem.data_dependence``), or an option that
        reads them (Huang's ``c_w="optimum"``, an objective-perturbation solve that stopped short).
    wall_time : float, default 0.0
        Seconds spent inside the algorithm (set by :func:`dpadmm_lite.run`).
    params : dict, default {}
        The settings of the run (ε, δ, ρ, iterations, seed and options), with every step size,
        penalty, clipping bound and constraint matrix it used. Together with ``noise`` and
        ``ledger`` these are what must not depend on one record (``tests/test_record_swap.py``).
    metrics : dict of str to numpy.ndarray, default {}
        Further per-iteration series an algorithm defines (``"augmented_objective"``,
        ``"test_error"``, …).
    work : dict of str to float, default {}
        The run's counted work (set by :func:`dpadmm_lite.run`, see
        :func:`dpadmm_lite.problems.counting`): ``data_passes`` (rows read by products with the
        training data, over n: one product with every record is one pass), ``factorizations``
        and ``solves`` (of d × d matrices, per agent). Deterministic: the same for the same run on
        any machine at any load. Empty when nothing the algorithm did went through the counted
        products (an algorithm that multiplies by the data itself counts only what it routes
        through them).
    """

    algorithm: str
    objective: np.ndarray
    objective_gap: np.ndarray
    model: np.ndarray
    test_accuracy: np.ndarray | None = None
    consensus_violation: np.ndarray | None = None
    noise: dict[str, Any] = field(default_factory=dict)
    ledger: list[PrivacyEvent] = field(default_factory=list)
    privacy_paper: PrivacyGuarantee = NO_PRIVACY
    privacy: PrivacyGuarantee = NO_PRIVACY
    wall_time: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    work: dict[str, float] = field(default_factory=dict)

    @property
    def iterations(self) -> int:
        return len(self.objective)

    def series(self) -> dict[str, np.ndarray]:
        """Every per-iteration series of the run, by name."""
        out = {"objective": self.objective, "objective_gap": self.objective_gap}
        if self.test_accuracy is not None:
            out["test_accuracy"] = self.test_accuracy
        if self.consensus_violation is not None:
            out["consensus_violation"] = self.consensus_violation
        out.update(self.metrics)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Tidy long frame: one row per (iteration, metric), for Altair charts."""
        import pandas as pd  # lazily: a live re-run in the browser needs no pandas

        frames = [
            pd.DataFrame({"iteration": np.arange(1, len(v) + 1), "metric": k, "value": np.asarray(v, float)})
            for k, v in self.series().items()
        ]
        df = pd.concat(frames, ignore_index=True)
        df["algorithm"] = self.algorithm
        return df

    def released(self) -> dict[str, Any]:
        """What the guarantee covers (:data:`RELEASED`), by name: publish this, not the trace.

        ``params`` comes without its seed (a caller's seed reproduces the noise: ``privacy.assumes``).
        """
        out = {name: getattr(self, name) for name in RELEASED}
        out["model"] = np.array(self.model, copy=True)
        out["ledger"] = list(self.ledger)
        out["params"] = {k: v for k, v in self.params.items() if k != "seed"}
        return out

    def summary(self) -> str:
        """One line: what ran (the algorithm's book's name) and the privacy it spent, then the diagnostics
        (how well it did on the training rows, how fast), named as not private."""
        from .labels import readable

        parts = [f"{readable(self.algorithm)}: {self.iterations} iterations", f"privacy {self.privacy}"]
        if self.privacy_paper is not self.privacy and self.privacy_paper is not NO_PRIVACY:
            parts.append(f"paper: {self.privacy_paper}")
        diagnostics = f"not private: final objective gap {self.objective_gap[-1]:.3g}"
        if self.test_accuracy is not None:
            diagnostics += f", test accuracy {self.test_accuracy[-1]:.3f}"
        parts.append(f"{diagnostics}, {1000 * self.wall_time:.0f} ms")
        return "; ".join(parts)

    def _repr_pretty_(self, p, cycle):  # IPython shows the summary, not a wall of arrays
        p.text(f"Trace({self.summary()})")


def from_iterates(
    problem,
    algorithm: str,
    iterates,
    *,
    model=None,
    consensus_violation=None,
    noise: dict | None = None,
    ledger=(),
    delta: float | None = None,
    privacy_paper: PrivacyGuarantee | None = None,
    metrics: dict | None = None,
    params: dict | None = None,
    not_covered: str | None = None,
) -> Trace:
    """Evaluate stacked iterates into a :class:`Trace` in one vectorised pass.

    Parameters
    ----------
    problem : Problem
        The :class:`~dpadmm_lite.problems.Problem` being solved.
    algorithm : str
        Registered name of the algorithm.
    iterates : array_like of float
        Array ``(T, d)``: the model the algorithm would release after each iteration.
    model : array_like of float, optional
        The released model; defaults to the last iterate.
    consensus_violation : array_like of float, optional
        Distributed runs: the disagreement of local and consensus variables per iteration.
    noise : dict, optional
        The noise actually used (stored as :attr:`Trace.noise`).
    ledger : iterable of PrivacyEvent, default ()
        The run's noisy releases; when the ledger is non-empty, ``privacy`` is the unified
        accountant's (ε, δ) for it at ``delta``.
    delta : float, optional
        δ of the accountant's guarantee; required with a non-empty ledger.
    privacy_paper : PrivacyGuarantee, optional
        The guarantee as the paper states it (defaults to the accountant's when not given).
    metrics : dict of str to array_like, optional
        Further per-iteration series (stored as float arrays).
    params : dict, optional
        The settings of the run (stored as :attr:`Trace.params`).
    not_covered : str, optional
        Why no guarantee covers this run although it drew noise (an option that read the private
        data); ``privacy`` is then :meth:`~dpadmm_lite.privacy.PrivacyGuarantee.not_covered`. A
        problem with a non-empty ``data_dependence`` voids the guarantee of every noisy run too.

    Returns
    -------
    Trace
        The run, scored at every iterate.
    """
    with paused():  # scoring the iterates is measurement, not the algorithm's work
        return _from_iterates(problem, algorithm, iterates, model=model, consensus_violation=consensus_violation,
                              noise=noise, ledger=ledger, delta=delta, privacy_paper=privacy_paper, metrics=metrics,
                              params=params, not_covered=not_covered)


def _from_iterates(problem, algorithm, iterates, *, model, consensus_violation, noise, ledger, delta, privacy_paper,
                   metrics, params, not_covered) -> Trace:
    iterates = np.asarray(iterates, dtype=float)
    if iterates.ndim != 2 or iterates.shape[1] != problem.d:
        raise ValueError(f"iterates must have shape (T, {problem.d}), got {iterates.shape}")
    objective = problem.objective(iterates)
    gap = objective - problem.reference_optimum().value
    ledger = list(ledger)
    if ledger:
        if delta is None:
            raise ValueError("delta must be given with a non-empty ledger")
        privacy = ledger_guarantee(ledger, delta)
        for reason in (getattr(problem, "data_dependence", ""), not_covered):
            if reason:
                privacy = privacy.not_covered(reason)
    else:
        privacy = NO_PRIVACY
    return Trace(
        algorithm=algorithm,
        objective=objective,
        objective_gap=gap,
        model=iterates[-1].copy() if model is None else np.asarray(model),
        test_accuracy=problem.accuracy(iterates),
        consensus_violation=None if consensus_violation is None else np.asarray(consensus_violation, float),
        noise=dict(noise or {}),
        ledger=ledger,
        privacy_paper=privacy if privacy_paper is None else privacy_paper,
        privacy=privacy,
        params=dict(params or {}),
        metrics={k: np.asarray(v, float) for k, v in (metrics or {}).items()},
    )

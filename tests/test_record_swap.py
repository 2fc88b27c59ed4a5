"""Record swap: nothing privacy-relevant that a private run uses may depend on one record.

For every private algorithm in the registry — registered now or later — and every option path
(every problem kind of its ``tasks``, with and without ``clip``, every ``calibration``, and the
options that read the data or change what is certified), one training record is replaced by an
extreme one, and the two runs must agree on every step size, penalty, clipping bound, constraint
matrix, noise scale and ledger entry they expose (``trace.params``, ``trace.noise``,
``trace.ledger``). The only other outcomes allowed are that a run **refuses** (a ``ValueError``
naming what is wrong) or that its trace says that **no guarantee covers it**
(``trace.privacy.covered`` False, ε = ∞, with a reason) — never a covered run whose privacy-relevant
numbers followed the swapped record.

Two replacements: a record at the declared bound (``‖a‖ = feature_bound``, label flipped), which
every run must accept, and one of norm 50, which runs without clipping must refuse. On main before
this test, ``dp_admm``/``dp_acc_admm`` with ``clip`` moved η from 4 to 0.38 (γ from 5 to 1.38) for
the norm-50 record, and the fused lasso's default graph, estimated from the training rows, changed
A (and γ) with the same ledger: both fail here.

Every noise/params entry is compared except the few declared in :data:`DIAGNOSTICS` — measured
quantities that describe the run and enter no update, step or ledger (each with the reason). A new
key that follows the data fails the test until it is either made public or declared here.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse

import dpadmm_lite as dl
from dpadmm_lite import datasets, problems, registry
from dpadmm_lite.algorithms import liu2022 as stochastic

# ---------------------------------------------------------------------- what is compared
#: Trace entries that are measured on the data but enter no update, step, noise or ledger: the
#: test does not compare them. Everything else in ``trace.noise`` and ``trace.params`` must not move.
DIAGNOSTICS = {
    "solve_error": "measured distance of the inner solve to the exact minimiser; the ledger uses the certified "
                   "bound (noise['solve_bound']) and a solve that misses it makes the run not covered",
    "solve_residual": "the same for the network algorithms",
    "hessians": "how often the local solver refreshed its Hessians (cost)",
    "passes": "passes over the data the local solver made (cost)",
    "local_models": "the agents' final local models: released values, not settings",
    "node_loss": "per-agent loss curves (evaluation)",
    "node_disagreement": "per-agent distances to the neighbours (evaluation)",
    "node_test_error": "per-agent test error (evaluation)",
}

#: Per algorithm: base options (small) and option axes beyond tasks/clip/calibration. ``clip`` and
#: ``calibration`` axes are read from the signature, or given here (``None`` in the clip axis: without
#: clipping).
@dataclass(frozen=True)
class Entry:
    base: dict
    axes: dict = field(default_factory=dict)


_STAR = {"rho": 0.5, "iterations": 6, "n_agents": 4}
_GRAPH = {"rho": 0.5, "iterations": 5, "n_agents": 4, "topology": "ring"}
#: The default (public) step, or one the caller gives: small enough for Lemma 5 on the norm-50 record too.
_ETA = {"eta": (None, 0.02)}

ENTRIES = {
    "dp_admm": Entry({"rho": 1.0, "iterations": 10}, {**_ETA, "clip": (None, 0.5)}),
    "dp_acc_admm": Entry({"rho": 1.0, "iterations": 10}, {**_ETA, "clip": (None, 0.5)}),
    "dp_sadmm": Entry({"rho": 1.0, "iterations": 15, "batch_size": 20}, {**_ETA, "clip": (None, 0.5)}),
    "ssadmm": Entry({"rho": 1.0, "iterations": 15, "batch_size": 20}, {**_ETA, "clip": (None, 0.5)}),
    "dp_vradmm": Entry({"rho": 1.0, "iterations": 2, "batch_size": 20},
                       {**_ETA, "clip": (None, 0.5), "private_snapshot": (True, False)}),
    "pvp_star": Entry(_STAR, {"max_inner": (50, 1)}),
    "dvp_star": Entry(_STAR, {"max_inner": (50, 1)}),
    "dp_admm_star": Entry(_STAR, {"c_w": (None, "optimum")}),
    "dp_sgd_star": Entry(_STAR, {"clip": (None, 0.5)}),
    "dvp_graph": Entry(_GRAPH, {"max_inner": (100, 1)}),
    "pvp_graph": Entry(_GRAPH, {"max_inner": (100, 1)}),
    # Cyffers et al. 2023 (cyffers2023.py): clip and calibration, as the other families
    "private_admm": Entry({"rho": 1 / 400, "iterations": 8, "relaxation": 0.5},
                          {"clip": (None, 0.1), "calibration": ("accountant", "paper")}),
    "private_admm_federated": Entry({"rho": 1 / 400, "iterations": 8, "sampling_rate": 0.2},
                                    {"clip": (None, 0.1), "calibration": ("accountant", "paper")}),
    "private_admm_walk": Entry({"rho": 1 / 400, "iterations": 30},
                               {"clip": (None, 0.1), "calibration": ("accountant", "paper")}),
    "dp_prox_sgd": Entry({"iterations": 8, "step": 0.5, "sampling_rate": 0.2},
                         {"clip": (None, 0.3), "calibration": ("accountant", "paper"),
                          "neighbours": ("replace_one", "add_remove")}),
}

EPSILON, DELTA = 1.0, 1e-5


# ---------------------------------------------------------------------- data: the problem kinds and the swaps
_CLASSIFICATION = datasets.make_classification(100, 8, seed=3)  # rows of norm ≤ 1, labels ±1
_LASSO = datasets.make_lasso(100, 8, seed=0)
_N = 60  # training rows; the rest is the test split
#: A public sample of the same kind (other rows, other seed): the public graph is estimated there.
_PUBLIC = datasets.make_classification(200, 8, seed=99)[0]
_W_PUBLIC = problems.feature_graph(_PUBLIC)


def _logistic(penalty):
    return lambda X, y: problems.logistic(X, y, 1e-2, penalty, X_test=_CLASSIFICATION[0][_N:],
                                          y_test=_CLASSIFICATION[1][_N:])


#: Every problem kind of :data:`dpadmm_lite.registry.TASKS`, built from (X, y) the way a chapter
#: would build it — so a swapped record goes through the same constructor (and its graph estimate).
BUILDERS = {
    "logistic-l2": {"logistic-l2": _logistic("l2")},
    "logistic-l1": {"logistic-l1": _logistic("l1")},
    "lasso": {"lasso": lambda X, y: problems.lasso(X, y, 1e-2)},
    "fused": {
        "fused, public W": lambda X, y: problems.graph_guided_fused_lasso(X, y, 1e-2, W=_W_PUBLIC),
        "fused, graph from public_features": lambda X, y: problems.graph_guided_fused_lasso(
            X, y, 1e-2, public_features=_PUBLIC),
        "fused, graph from the training rows": lambda X, y: problems.graph_guided_fused_lasso(X, y, 1e-2),
        "fused + ridge, public W": lambda X, y: stochastic.graph_guided_logistic(X, y, 1e-2, 1e-2, W=_W_PUBLIC),
        "fused + ridge, graph from the training rows": lambda X, y: stochastic.graph_guided_logistic(
            X, y, 1e-2, 1e-2),
    },
}


def _data(kind):
    X, y = (_LASSO if kind == "lasso" else _CLASSIFICATION)[:2]
    return X[:_N].copy(), y[:_N].copy()


def _swapped(kind, scale):
    """The training data with record 0 replaced by an extreme one: norm ``scale`` (×feature_bound 1),
    along a direction that couples two features, label flipped (Lasso: a far-off response)."""
    X, y = _data(kind)
    X[0] = 0.0
    X[0, :2] = scale / math.sqrt(2.0)
    y[0] = 50.0 if kind == "lasso" else -y[0]
    return X, y


SWAPS = {"at the bound": 1.0, "norm 50": 50.0}


@functools.lru_cache(maxsize=None)
def _problem(task, variant, swap):
    kind = "lasso" if task == "lasso" else "logistic"
    X, y = _data(kind) if swap is None else _swapped(kind, SWAPS[swap])
    return BUILDERS[task][variant](X, y)


# ---------------------------------------------------------------------- option paths
def _accepts(function, option) -> bool | None:
    """Whether ``function`` takes ``option`` by name; None when it takes ``**options`` (undecidable)."""
    parameters = inspect.signature(function).parameters
    if option in parameters:
        return True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return False


def _axes(name) -> dict:
    """Every option axis of ``name``: clip (with and without), every calibration, and its declared extras."""
    info = registry.info(name)
    entry = ENTRIES[name]
    axes = dict(entry.axes)
    for option in ("clip", "calibration"):
        accepted = _accepts(info.function, option)
        if accepted is None:
            assert option in axes, (f"{name!r} takes **options: declare its {option!r} axis in "
                                    f"tests/test_record_swap.py::ENTRIES")
        elif accepted and option == "calibration" and option not in axes:
            axes[option] = tuple(sys.modules[info.function.__module__].CALIBRATIONS)
        elif accepted and option == "clip":
            assert option in axes and None in axes[option] and any(v is not None for v in axes[option]), (
                f"{name!r} takes clip: its axis in ENTRIES must hold None and a clipping norm")
    return axes


def _paths(name):
    """(task, variant, options) for every problem kind × every combination of the option axes."""
    axes = _axes(name)
    keys = sorted(axes)
    for task in registry.info(name).tasks:
        for variant in BUILDERS[task]:
            for values in itertools.product(*(axes[k] for k in keys)):
                options = {k: v for k, v in zip(keys, values) if v is not None}
                yield task, variant, options


def _run(name, problem, options):
    """The trace, or the ValueError of a refusal (any other exception is a failure of the test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # stopped-early solves warn; what counts is the trace
        try:
            return dl.run(name, problem, epsilon=EPSILON, delta=DELTA, seed=0, **ENTRIES[name].base, **options)
        except ValueError as refusal:
            return refusal


# ---------------------------------------------------------------------- comparing two runs
def _same(a, b) -> bool:
    """Exact equality of two recorded values (numbers, arrays, sparse matrices, dicts, lists, topologies)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if scipy.sparse.issparse(a) or scipy.sparse.issparse(b):
        return scipy.sparse.issparse(a) and scipy.sparse.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    if hasattr(a, "edges") and hasattr(a, "n_agents"):  # a Topology: the same graph
        return type(a) is type(b) and a.name == b.name and _same(a.edges, b.edges)
    if isinstance(a, (list, tuple)) and any(isinstance(v, (dict, list, tuple, str)) for v in a):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))


def _differences(a, b) -> list[str]:
    """The privacy-relevant entries on which two traces disagree."""
    out = []
    for where in ("noise", "params"):
        x, y = getattr(a, where), getattr(b, where)
        for key in sorted(set(x) | set(y)):
            if key in DIAGNOSTICS:
                continue
            if key not in x or key not in y or not _same(x[key], y[key]):
                show = lambda v: repr(v)[:60]  # noqa: E731
                out.append(f"{where}[{key!r}]: {show(x.get(key))} → {show(y.get(key))}")
    release = lambda e: (e.mechanism, e.sensitivity, e.noise, e.count, e.sampling_rate)  # noqa: E731
    if [release(e) for e in a.ledger] != [release(e) for e in b.ledger]:
        out.append(f"ledger: {[release(e) for e in a.ledger]} → {[release(e) for e in b.ledger]}")
    if a.privacy.covered and b.privacy.covered and a.privacy.epsilon != b.privacy.epsilon:
        out.append(f"privacy.epsilon: {a.privacy.epsilon} → {b.privacy.epsilon}")
    return out


def _outcome(name, task, variant, options, swap):
    """'refused', 'not covered' or 'same'; an AssertionError naming what moved otherwise."""
    base = _run(name, _problem(task, variant, None), options)
    other = _run(name, _problem(task, variant, swap), options)
    if isinstance(base, ValueError) or isinstance(other, ValueError):
        return "refused"
    for trace in (base, other):
        if not trace.privacy.covered:
            assert trace.privacy.reason and math.isinf(trace.privacy.epsilon)
    if not (base.privacy.covered and other.privacy.covered):
        return "not covered"
    moved = _differences(base, other)
    assert not moved, (f"{name} on {variant} with {options}, record swapped ({swap}): a covered run used "
                       "privacy-relevant numbers that follow the record:\n  " + "\n  ".join(moved))
    return "same"


PRIVATE = tuple(dl.algorithm_names().private)


def test_every_private_algorithm_has_a_record_swap_entry():
    missing = sorted(set(PRIVATE) - set(ENTRIES))
    assert not missing, (f"private algorithms {missing} have no entry in tests/test_record_swap.py::ENTRIES: add "
                         "their small options and option axes so that the record-swap test covers them")
    for name in PRIVATE:
        unknown = set(registry.info(name).tasks) - set(BUILDERS)
        assert not unknown, f"{name!r} declares tasks {sorted(unknown)} with no problem builder here"
        assert list(_paths(name))


@pytest.mark.parametrize("name", PRIVATE)
def test_one_swapped_record_changes_nothing_a_covered_run_uses(name):
    outcomes = {}
    for task, variant, options in _paths(name):
        for swap in SWAPS:
            outcomes[task, variant, tuple(sorted(options.items(), key=str)), swap] = _outcome(
                name, task, variant, options, swap)
    # not vacuous: on every problem kind some option path ran covered on both datasets and was compared
    for task in registry.info(name).tasks:
        compared = [o for (t, _, _, swap), o in outcomes.items() if t == task and swap == "at the bound"]
        assert "same" in compared, f"{name} on {task}: no option path was compared (all {set(compared)})"
    # a graph read from the training rows is never covered, whatever else the run does
    for (task, variant, _, swap), outcome in outcomes.items():
        if "training rows" in variant:
            assert outcome in ("refused", "not covered"), (variant, outcome)


def test_the_swaps_reach_what_main_leaked():
    """The extreme records do move what the old code read from the data, so the test above can fail."""
    # the data-read smoothness (the old default step of a clipped run) and the training-rows graph move …
    base, wide = _problem("logistic-l2", "logistic-l2", None), _problem("logistic-l2", "logistic-l2", "norm 50")
    assert 1 / max(base.public_smoothness, base.smoothness) == pytest.approx(4.0)
    assert 1 / max(wide.public_smoothness, wide.smoothness) < 0.5
    rows = "fused, graph from the training rows"
    for swap in SWAPS:
        assert not np.array_equal(_problem("fused", rows, None).A, _problem("fused", rows, swap).A)
    # … and the public graphs do not
    for variant in ("fused, public W", "fused, graph from public_features"):
        assert np.array_equal(_problem("fused", variant, None).A, _problem("fused", variant, "norm 50").A)


@pytest.mark.parametrize("name", ["dp_admm", "dp_acc_admm"])
def test_a_clipped_run_reads_no_step_from_the_data(name):
    """Issue 24, item 1: with clip the default step came from L_f of the rows (η 4 → 0.38 for one record)."""
    options = {"clip": 0.5}
    base = _run(name, _problem("logistic-l2", "logistic-l2", None), options)
    assert base.params["eta"] == 4.0 and base.params["gamma"] == 5.0 and base.privacy.covered
    refused = _run(name, _problem("logistic-l2", "logistic-l2", "norm 50"), options)
    assert isinstance(refused, ValueError) and "eta must be given" in str(refused)
    given = [_run(name, _problem("logistic-l2", "logistic-l2", s), {**options, "eta": 0.02}) for s in (None, "norm 50")]
    assert not _differences(*given) and given[0].params["eta"] == 0.02 and given[0].privacy.covered


def test_a_graph_from_the_training_rows_is_marked_and_not_covered():
    """Issue 24, item 3: the default fused graph reads the rows; the problem says so, and no run is covered."""
    rows = _problem("fused", "fused, graph from the training rows", None)
    assert rows.data_dependence == problems.GRAPH_FROM_TRAINING_ROWS
    assert rows.with_data(rows.X, rows.y).data_dependence == rows.data_dependence
    for variant in ("fused, public W", "fused, graph from public_features"):
        assert _problem("fused", variant, None).data_dependence == ""
    for name in ("dp_admm", "dp_acc_admm", "dp_sadmm", "dp_vradmm"):
        trace = _run(name, rows, {})
        assert not trace.privacy.covered and math.isinf(trace.privacy.epsilon)
        assert "training rows" in trace.privacy.reason and "NOT COVERED" in str(trace.privacy)
        public = _run(name, _problem("fused", "fused, public W", None), {})
        assert public.privacy.covered and public.privacy.epsilon <= EPSILON
    # without noise nothing is claimed, so nothing is voided
    assert dl.run("admm_linearized", rows, iterations=3).privacy is dl.trace.NO_PRIVACY


@pytest.mark.parametrize("name", ["dvp_star", "dvp_graph"])
def test_dvp_short_of_its_tolerance_never_reports_the_exact_solve_budget(name):
    """Issue 24, item 4: max_inner = 1 left the models 0.19 from the minimisers at the full budget."""
    problem = _problem("logistic-l2", "logistic-l2", None)
    with pytest.warns(RuntimeWarning, match="max_inner"):
        short = dl.run(name, problem, epsilon=EPSILON, delta=DELTA, seed=0, max_inner=1, **ENTRIES[name].base)
    assert not short.privacy.covered and math.isinf(short.privacy.epsilon) and "max_inner" in short.privacy.reason
    exact = dl.run(name, problem, epsilon=EPSILON, delta=DELTA, seed=0, **ENTRIES[name].base)
    assert exact.privacy.covered and 0.97 * EPSILON <= exact.privacy.epsilon <= EPSILON


def test_a_guarantee_that_is_not_covered_never_carries_a_finite_epsilon():
    covered = dl.PrivacyGuarantee(0.8, 1e-5, "unified accountant: PLD")
    voided = covered.not_covered("c_w reads the data")
    assert covered.covered and not voided.covered and math.isinf(voided.epsilon) and voided.delta == 1e-5
    assert "ε = 0.8" in voided.statement and str(voided).endswith("NOT COVERED: c_w reads the data")
    assert voided.not_covered("a solve stopped early").reason == "c_w reads the data; a solve stopped early"
    with pytest.raises(ValueError, match="epsilon must be ∞"):
        dl.PrivacyGuarantee(0.8, 1e-5, "x", covered=False, reason="r")
    with pytest.raises(ValueError, match="reason"):
        dl.PrivacyGuarantee(math.inf, 1e-5, "x", covered=False)
    with pytest.raises(ValueError, match="reason"):
        covered.not_covered("")
    with pytest.raises(TypeError, match="covered"):
        dl.PrivacyGuarantee(0.8, 1e-5, "x", covered="no")

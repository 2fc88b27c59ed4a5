"""Zhang & Zhu (2017)'s live panel: DVP or PVP on a network that splits Adult (book/zhang2017.ipynb)."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dpadmm_lite import datasets, problems, topology
from dpadmm_lite.registry import run
from ._common import (agents_control, budget, epsilon_control, first_then_every_fifth, integer, iterations_control,
                      one_of, real, run_line, topology_control)

#: λ of Zhang & Zhu (2017), Sec. V, in the book's scale (the paper's regulariser weight over its C^R): DVP
#: 10^-2.5/1750, PVP 10^-1/146; the non-private reference runs on DVP's problem (book/zhang2017.ipynb).
ZHANG2017_LAM = {"dvp_graph": 10 ** -2.5 / 1750, "pvp_graph": 0.1 / 146, "admm_graph": 10 ** -2.5 / 1750}
_NAMES = {"DVP": "dvp_graph", "PVP": "pvp_graph", "non-private": "admm_graph"}


@functools.lru_cache(maxsize=8)
def zhang2017_problem(lam: float, rows: int = 8_000) -> problems.Problem:
    """ℓ2-logistic regression on the first ``rows`` records of Adult, with its reference optimum
    (book/zhang2017.ipynb: the chapter's experiments and its live panel, which uses 8,000 rows)."""
    X_train, y_train, X_test, y_test = datasets.load_adult()
    problem = problems.logistic(X_train[:rows], y_train[:rows], lam, "l2", X_test=X_test, y_test=y_test)
    problem.reference_optimum()
    return problem


#: The panel's non-private reference curves, shipped as data (``dpadmm_lite/data/zhang2017_reference.npz``):
#: the non-private ADMM does not depend on ε, δ or the private algorithm, and its first T iterations are
#: the same whatever the run's length, so one run of ``REFERENCE["iterations"]`` per λ, topology and number
#: of nodes gives the curve of every panel setting; a move of the topology, the nodes or T then re-runs
#: the private algorithm alone (in the browser that halves the redraw). The table holds exactly what
#: :func:`reference_curve` computes (``tests/test_live_zhang.py`` re-runs a sample of it); settings outside
#: it (other rows, ρ or seed, the JupyterLab panel's λ) run the reference live. Rebuild the file with
#: ``python -m dpadmm_book.live.zhang2017``.
REFERENCE_FILE = "data/zhang2017_reference.npz"
REFERENCE = {"rows": 8_000, "rho": 0.1, "seed": 0, "iterations": 100, "agents": (2, 40),
             "lams": tuple(sorted({ZHANG2017_LAM["dvp_graph"], ZHANG2017_LAM["pvp_graph"]}))}


def reference_curve(lam: float, topology_name: str, n_agents: int, iterations: int = REFERENCE["iterations"],
                    rows: int = REFERENCE["rows"], rho: float = REFERENCE["rho"], seed: int = REFERENCE["seed"]):
    """The non-private ADMM on the panel's graph: test error and empirical loss at iterations 1 … T."""
    trace = _reference(zhang2017_problem(float(lam), rows), rho=rho, iterations=iterations, topology=topology_name,
                       n_agents=n_agents, seed=seed)
    return np.asarray(trace.metrics["test_error"]), np.asarray(trace.metrics["empirical_loss"])


@functools.lru_cache(maxsize=1)
def _shipped_references() -> dict[str, np.ndarray]:
    with resources.files("dpadmm_lite").joinpath(REFERENCE_FILE).open("rb") as fh, \
            np.load(fh, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def shipped_reference(lam: float, topology_name: str, n_agents: int, iterations: int, rows: int, rho: float,
                      seed: int):
    """``reference_curve(…)`` read from the shipped table, or None when the setting is not in it."""
    lo, hi = REFERENCE["agents"]
    if (rows, rho, seed) != (REFERENCE["rows"], REFERENCE["rho"], REFERENCE["seed"]) or lam not in REFERENCE["lams"] \
            or not (lo <= n_agents <= hi and 1 <= iterations <= REFERENCE["iterations"]):
        return None
    table = _shipped_references()
    i, j = REFERENCE["lams"].index(lam), list(table["topologies"]).index(topology_name)
    correct = table["correct"][i, j, n_agents - lo, :iterations]
    return 1.0 - correct / float(table["n_test"]), table["loss"][i, j, n_agents - lo, :iterations].copy()


def write_references(path: Path | None = None) -> Path:
    """Compute the reference table (every λ, topology and number of nodes, ``REFERENCE["iterations"]``
    iterations: about a minute) and write it: the test error as counts of correctly classified test
    records (``1 − correct/n_test`` gives back the run's float exactly; checked), the loss as floats."""
    from tqdm.auto import tqdm

    path = Path(path or Path(__file__).resolve().parents[1] / REFERENCE_FILE)
    lo, hi = REFERENCE["agents"]
    shape = (len(REFERENCE["lams"]), len(topology.NAMES), hi - lo + 1, REFERENCE["iterations"])
    correct, loss = np.zeros(shape, dtype=np.uint16), np.zeros(shape)
    n_test = len(datasets.load_adult()[3])
    grid = [(i, j, n) for i in range(shape[0]) for j in range(shape[1]) for n in range(lo, hi + 1)]
    for i, j, n in tqdm(grid, desc="Zhang & Zhu reference runs"):
        error, loss[i, j, n - lo] = reference_curve(REFERENCE["lams"][i], topology.NAMES[j], n)
        correct[i, j, n - lo] = np.rint((1.0 - error) * n_test)
        if not np.array_equal(1.0 - correct[i, j, n - lo] / float(n_test), error):
            raise RuntimeError("a test error is not 1 − count/n_test: the table would not give it back exactly")
        _reference.cache_clear()
    np.savez_compressed(path, correct=correct, loss=loss, n_test=np.int64(n_test),
                        topologies=np.array(topology.NAMES), lams=np.array(REFERENCE["lams"]))
    return path


@functools.lru_cache(maxsize=32)
def _reference(problem: problems.Problem, **settings) -> Any:
    """The non-private run next to the private one, kept: it does not depend on ε, δ or the algorithm,
    so a move of those re-runs the private algorithm alone (as the chapter's panel does)."""
    return run("admm_graph", problem, **settings)


#: The panel's first draw (book/zhang2017.ipynb, Explore): the static chart's ε, network and ρ, on the panel's
#: 8,000 records dealt to 4 nodes — 2,000 records a node, as many as each of the static chart's 20 nodes holds
#: (40,000 records) — for 60 iterations. The noise a node adds is set by its own records: at 20 nodes of 400
#: records DVP and PVP stay at the majority class (test error 0.239–0.263 over seeds 0–2 at ε = 4, T = 30 or 60, against 0.243),
#: here DVP ends at 0.223 (seed 0) against the non-private 0.201.
DEFAULTS = {"epsilon": 4.0, "algorithm": "DVP", "topology_name": "ring", "n_agents": 4, "iterations": 60}


def zhang2017_network(algorithm: str = "DVP", epsilon: float = 4.0, topology_name: str = "ring",
                      n_agents: int = 4, iterations: int = 60, rho: float = 0.1, delta: float = 1e-5,
                      lam: float | None = None, calibration: str = "accountant", rows: int = 8_000,
                      seed: int = 0, reference: bool = True, keep_trace: bool = False) -> dict[str, Any]:
    """DVP or PVP (Zhang & Zhu 2017) on a network of ``n_agents`` nodes that split Adult, next to
    the non-private ADMM on the same graph (book/zhang2017.ipynb, Explore): the test error of the
    network's average model along the run, as the rows of the chapter's chart "Adult, 20 nodes, …".
    The chapter's runs for that chart and its JupyterLab panel call this function; the site's
    "Run live" re-runs it in the browser.

    Parameters
    ----------
    algorithm : str
        "DVP", "PVP" or "non-private".
    epsilon : float
        End-to-end ε in [0.01, 10] (with ``calibration="paper"``: the paper's α per iteration).
    topology_name : str
        One of :data:`dpadmm_lite.topology.NAMES`.
    n_agents : int
        Nodes in [2, 40].
    iterations : int
        In [1, 200].
    rho, delta : float
        ADMM penalty in [1e-3, 1e2]; δ in [1e-8, 1e-2].
    lam : float or None
        λ in [1e-8, 1]; ``None``: the paper's λ for ``algorithm`` (:data:`ZHANG2017_LAM`).
    calibration : str
        "accountant" (ε end to end) or "paper".
    rows : int
        Adult's first ``rows`` training records, in [1000, 40000].
    seed : int
        ≥ 0.
    reference : bool
        Also run the non-private ADMM on the same graph (its rows are "non-private"); ``False``:
        the private run alone.
    keep_trace : bool
        Also return the run's :class:`~dpadmm_lite.trace.Trace` as ``trace`` (for Python callers:
        the chapter's sweeps read its other metrics; not JSON, so not for the browser).

    Returns
    -------
    dict
        ``rows`` (iteration, test error, empirical loss, lo = hi = test error, algorithm, epsilon,
        topology), ``title`` (the setting, as the chart's title names it), ``summary`` (one short line: the
        private run's final test accuracy beside the non-private run's and the majority class's, the privacy
        spent), ``node_loss``
        and ``node_disagreement`` (per node, at the last iteration); ``trace`` with ``keep_trace``.
    """
    one_of("algorithm", algorithm, _NAMES)
    one_of("topology_name", topology_name, topology.NAMES)
    one_of("calibration", calibration, ("accountant", "paper"))
    for flag, value in (("reference", reference), ("keep_trace", keep_trace)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, got {value!r}")
    epsilon, rho, delta = budget(epsilon), real("rho", rho, 1e-3, 1e2), real("delta", delta, 1e-8, 1e-2)
    name = _NAMES[algorithm]
    lam = ZHANG2017_LAM[name] if lam is None else real("lam", lam, 1e-8, 1.0)
    iterations = integer("iterations", iterations, 1, 200)
    problem = zhang2017_problem(float(lam), integer("rows", rows, 1000, 40_000))
    settings = dict(rho=rho, iterations=iterations, topology=topology_name,
                    n_agents=integer("n_agents", n_agents, 2, 40), seed=integer("seed", seed, 0, 2 ** 32 - 1))
    shipped = shipped_reference(float(lam), topology_name, settings["n_agents"], iterations, problem.n, rho,
                                settings["seed"]) if reference and name != "admm_graph" else None
    runs = {"non-private": _reference(problem, **settings)} if name == "admm_graph" or (reference and shipped is None) \
        else {}
    if name != "admm_graph":
        runs[algorithm] = run(name, problem, epsilon=epsilon, delta=delta, calibration=calibration, **settings)
    curves = {} if shipped is None else {"non-private": shipped}
    curves.update({label: (trace.metrics["test_error"], trace.metrics["empirical_loss"]) for label, trace in runs.items()})
    out = []
    for label, (error, loss) in curves.items():
        out += [{"iteration": int(k), "test error": float(error[k - 1]), "empirical loss": float(loss[k - 1]),
                 "lo": float(error[k - 1]), "hi": float(error[k - 1]), "algorithm": label,
                 "epsilon": epsilon, "topology": topology_name} for k in first_then_every_fifth(iterations)]
    last = runs[algorithm] if algorithm in runs else runs["non-private"]
    summary = run_line(last, name=algorithm, metric="accuracy")
    majority = float(max(np.mean(problem.y_test > 0), np.mean(problem.y_test < 0)))  # the trivial model's accuracy
    beside = [f"non-private {1.0 - float(curves['non-private'][0][iterations - 1]):.3f}"] \
        if algorithm != "non-private" and "non-private" in curves else []
    summary = summary.replace(";", f" ({', '.join(beside + [f'majority class {majority:.3f}'])});", 1)
    result = {"rows": out, "summary": summary,
              "title": f"Adult, {settings['n_agents']} nodes, ρ = {rho:g}, δ = {delta:g}",
              "node_loss": [float(v) for v in np.asarray(last.params["node_loss"][-1])],
              "node_disagreement": [float(v) for v in np.asarray(last.params["node_disagreement"][-1])]}
    if keep_trace:
        result["trace"] = last
    return result


PANELS = {
    "zhang2017": {
        "page": "book/zhang2017",
        "chart": "Adult, 20 nodes, ρ = 0.1, δ = 1e-05",
        "function": "zhang2017_network",
        "controls": [
            # ε sets the private algorithms' noise; the non-private one adds none, so there it has no effect
            {**epsilon_control(DEFAULTS["epsilon"]),
             "idle": {"when": {"algorithm": ["non-private"]}, "why": "the non-private run adds no noise"}},
            {"name": "algorithm", "label": "algorithm", "kind": "select", "value": DEFAULTS["algorithm"],
             "options": [[a, a] for a in _NAMES]},
            topology_control(DEFAULTS["topology_name"]), agents_control(DEFAULTS["n_agents"], 40),
            iterations_control(DEFAULTS["iterations"], REFERENCE["iterations"]),
        ],
    },
}


if __name__ == "__main__":
    print(write_references())

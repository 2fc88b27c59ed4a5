"""Chart builders for traces (convergence curves) and for network topologies.

Every builder returns a small Altair chart with tooltips, labelled in the book's notation:
iterations ``k``, model ``x_k``, optimum ``x*``, objective ``F``, agents ``i = 1 … N``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from dpadmm_lite.labels import readable_all
from ._typeset import axis_title, typeset

__all__ = ["convergence", "objective_gap", "accuracy", "consensus", "topology_chart", "traces_frame"]

#: Axis titles of the per-iteration metrics, in the book's notation.
METRIC_TITLES = {
    "objective": "objective F(xₖ)",
    "objective_gap": "objective gap F(xₖ) − F(x*)",
    "test_accuracy": "test accuracy",
    "consensus_violation": "consensus violation √(mean ‖xᵢ − x̄‖²)",
}

X_TITLES = {"iteration": "iteration k", "time": "time (s)"}


def _labelled(traces) -> list[tuple[str, object]]:
    """(label, trace) pairs from one trace, a sequence of traces, or a mapping label → trace."""
    if isinstance(traces, Mapping):
        return [(str(k), v) for k, v in traces.items()]
    if hasattr(traces, "objective"):  # a single Trace
        traces = [traces]
    if not isinstance(traces, Sequence) or not traces:
        raise ValueError("traces must be a Trace, a non-empty list of Traces or a dict label → Trace")
    names = readable_all(t.algorithm for t in traces)  # the book's names: "DP-AccADMM", not dp_acc_admm
    labels, seen = [], {}
    for name in names:  # repeated algorithm names become "name (2)", "name (3)"
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if names.count(name) == 1 else f"{name} ({seen[name]})")
    return list(zip(labels, traces))


def traces_frame(traces, metric: str = "objective_gap") -> pd.DataFrame:
    """Tidy frame of one metric of several traces: ``run, iteration, time, value``.

    ``time`` spreads each run's wall time evenly over its iterations (``k · wall_time / T``).
    """
    frames = []
    for label, trace in _labelled(traces):
        series = trace.series()
        if metric not in series:
            raise ValueError(f"metric must be one of {sorted(series)} for run {label!r}, got {metric!r}")
        values = np.asarray(series[metric], dtype=float)
        k = np.arange(1, len(values) + 1)
        frames.append(pd.DataFrame({
            "run": label, "algorithm": trace.algorithm, "iteration": k,
            "time": k * (trace.wall_time / max(len(values), 1)), "value": values,
        }))
    return pd.concat(frames, ignore_index=True)


def convergence(traces, metric: str = "objective_gap", *, log_y: bool = True, x: str = "iteration",
                title: str | None = None, width: int = 380, height: int = 220) -> alt.Chart:
    """One line per run: ``metric`` against the iteration (or time), coloured by run.

    Parameters
    ----------
    traces
        A :class:`~dpadmm_lite.trace.Trace`, a list of them (labelled by the algorithm's book's
        name, repeats numbered) or a dict ``label → Trace`` (e.g. ``{"ρ = 0.1": t1, "ρ = 1": t2}``).
    metric
        A per-iteration series of the traces: ``"objective_gap"``, ``"objective"``,
        ``"test_accuracy"``, ``"consensus_violation"`` or a name in ``Trace.metrics``.
    log_y
        Log scale for the metric. Points that are not positive (a gap that reached the
        reference optimum to rounding) cannot be drawn on it and are left out.
    x
        ``"iteration"`` or ``"time"`` (seconds, each run's wall time spread evenly).
    """
    if x not in X_TITLES:
        raise ValueError(f"x must be one of {sorted(X_TITLES)}, got {x!r}")
    frame = traces_frame(traces, metric)
    frame = frame[np.isfinite(frame["value"])]
    if log_y:
        frame = frame[frame["value"] > 0]
    y_title = METRIC_TITLES.get(metric) or axis_title(metric)
    chart = alt.Chart(frame, width=width, height=height).mark_line().encode(
        x=alt.X(f"{x}:Q", title=X_TITLES[x]),
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log") if log_y else alt.Scale(zero=False)),
        color=alt.Color("run:N", title="run"),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("iteration:Q", title="k"),
                 alt.Tooltip("time:Q", title="time (s)", format=".3g"),
                 alt.Tooltip("value:Q", title=y_title, format=".4g")],
    )
    return chart.properties(title=typeset(title) if isinstance(title, str) else title) if title else chart


def objective_gap(traces, *, log_y: bool = True, **kwargs) -> alt.Chart:
    """Objective gap ``F(xₖ) − F(x*)`` against the iteration, log scale."""
    return convergence(traces, "objective_gap", log_y=log_y, **kwargs)


def accuracy(traces, **kwargs) -> alt.Chart:
    """Test accuracy against the iteration (linear scale)."""
    return convergence(traces, "test_accuracy", log_y=False, **kwargs)


def consensus(traces, *, log_y: bool = True, **kwargs) -> alt.Chart:
    """Consensus violation ``√(mean_i ‖xᵢ − x̄‖²)`` of distributed runs, log scale."""
    return convergence(traces, "consensus_violation", log_y=log_y, **kwargs)


def topology_chart(topology, *, values=None, value_title: str = "value", title: str | None = None,
                   size: int = 220) -> alt.LayerChart:
    """Draw a network: agents at ``topology.layout``, one segment per edge.

    Parameters
    ----------
    topology
        A :class:`dpadmm_lite.topology.Topology` (uses ``layout``, ``edges``, ``degrees``).
    values
        Optional number per agent (e.g. its distance to consensus) shown as the node colour.
    """
    layout = np.asarray(topology.layout, dtype=float)
    edges = np.asarray(topology.edges, dtype=int).reshape(-1, 2)
    n = layout.shape[0]
    nodes = pd.DataFrame({"agent": np.arange(n), "x": layout[:, 0], "y": layout[:, 1],
                          "degree": np.asarray(topology.degrees).ravel().astype(int)})
    if values is not None:
        values = np.asarray(values, dtype=float)
        if values.shape != (n,):
            raise ValueError(f"values must have one entry per agent ({n}), got shape {values.shape}")
        nodes[value_title] = values
    segments = pd.DataFrame({"i": edges[:, 0], "j": edges[:, 1],
                             "x": layout[edges[:, 0], 0], "y": layout[edges[:, 0], 1],
                             "x2": layout[edges[:, 1], 0], "y2": layout[edges[:, 1], 1]})
    pad = 0.08 * max(np.ptp(layout[:, 0]), np.ptp(layout[:, 1]), 1e-9)
    xs = alt.Scale(domain=[float(layout[:, 0].min() - pad), float(layout[:, 0].max() + pad)])
    ys = alt.Scale(domain=[float(layout[:, 1].min() - pad), float(layout[:, 1].max() + pad)])
    no_axis = alt.Axis(title=None, labels=False, ticks=False, domain=False, grid=False)
    line = alt.Chart(segments).mark_rule(color="#999999", strokeWidth=1.2).encode(
        x=alt.X("x:Q", scale=xs, axis=no_axis), y=alt.Y("y:Q", scale=ys, axis=no_axis), x2="x2:Q", y2="y2:Q",
        tooltip=[alt.Tooltip("i:Q", title="agent i"), alt.Tooltip("j:Q", title="agent j")],
    )
    tooltip = [alt.Tooltip("agent:Q", title="agent i"), alt.Tooltip("degree:Q", title="degree |Nᵢ|")]
    color = alt.value("#0072B2")
    if values is not None:
        tooltip.append(alt.Tooltip(f"{value_title}:Q", format=".3g"))
        color = alt.Color(f"{value_title}:Q", scale=alt.Scale(scheme="viridis"))
    dots = alt.Chart(nodes).mark_circle(size=max(30, 2400 // max(n, 1)), opacity=1.0, stroke="white").encode(
        x=alt.X("x:Q", scale=xs, axis=no_axis), y=alt.Y("y:Q", scale=ys, axis=no_axis), color=color, tooltip=tooltip,
    )
    chart = alt.layer(line, dots).properties(width=size, height=size)
    if isinstance(title, (list, tuple)):
        title = [typeset(t) for t in title]
    return chart.properties(title=typeset(title) if isinstance(title, str) else title) if title else chart

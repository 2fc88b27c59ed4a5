"""The forest plot of a record's comparisons (:func:`evidence_chart`)."""

from __future__ import annotations

from ._prose import evidence
from ._stats import NOT_TESTABLE

#: Colour of each comparison status in the forest plot (and of each verdict on the page).
STATUS_COLOURS = {"holds": "#1b7837", "does not hold": "#b2182b", "inconclusive": "#b35806", "trivial": "#999999"}


def evidence_chart(entry: dict, *, width: int = 220, label_width: int = 160):
    """A forest plot of a record's comparisons: one row each, the effect in the claimed
    direction with its 95 % interval, a line at zero (a factor's bound, a paper's range as a
    band), coloured by outcome, trivial ones grey. Differences and factors get separate panels
    (their scales differ)."""
    import altair as alt

    ev = evidence(entry)
    ev = ev.assign(effect_text=ev["text"], order=range(len(ev)))[
        ["comparison", "compares", "kind", "effect", "low", "high", "bound_low", "bound_high", "status", "effect_text",
         "order"]]  # what the chart draws (no infinite margin: Vega reads JSON)
    colour = alt.Color("status:N", title="comparison",
                       scale=alt.Scale(domain=list(STATUS_COLOURS), range=list(STATUS_COLOURS.values())),
                       legend=alt.Legend(orient="bottom", direction="horizontal", columns=2))
    y = alt.Y("comparison:N", sort=alt.EncodingSortField("order"), title=None,
              axis=alt.Axis(labelLimit=label_width, grid=False))
    tooltip = [alt.Tooltip("comparison:N"), alt.Tooltip("compares:N"), alt.Tooltip("effect_text:N", title="effect"),
               alt.Tooltip("status:N", title="outcome")]
    panels = []
    for kind, frame in ev.groupby("kind", sort=False):
        if kind == "difference":
            title, scale = "difference in the claimed direction (95 % CI)", alt.Scale(zero=True, nice=True)
        else:
            values = frame[["low", "high", "bound_low", "bound_high"]].to_numpy()
            if values.max() / values.min() > 10:  # factors over more than a decade: log scale
                title, scale = "factor (95 % CI, log scale)", alt.Scale(type="log", nice=False, padding=12)
            else:
                title, scale = "factor (95 % CI)", alt.Scale(zero=False, nice=True)
        x = lambda field: alt.X(f"{field}:Q", title=title, scale=scale)  # noqa: E731 (one title on every layer)
        base = alt.Chart(frame)
        layers = []
        ranged = frame[frame.bound_high > frame.bound_low]
        if len(ranged):  # a claimed range (the paper's), as a band on its rows
            layers.append(alt.Chart(ranged).mark_rect(color="#9ecae1", opacity=0.45)
                          .encode(x=x("bound_low"), x2="bound_high:Q", y=y))
        if kind == "difference":  # zero: one line across the panel
            layers.append(alt.Chart(frame.head(1)).mark_rule(color="#333333", strokeDash=[4, 3])
                          .encode(x=x("bound_low")))
        elif len(ranged) < len(frame):  # each factor's bound, on its own row
            layers.append(alt.Chart(frame[frame.bound_high == frame.bound_low])
                          .mark_tick(color="#333333", thickness=2, size=18).encode(x=x("bound_low"), y=y))
        layers.append(base.mark_rule(strokeWidth=2).encode(x=x("low"), x2="high:Q", y=y, color=colour,
                                                           tooltip=tooltip))
        layers.append(base.mark_point(filled=True, size=60, opacity=1).encode(x=x("effect"), y=y, color=colour,
                                                                               tooltip=tooltip))
        panels.append(alt.layer(*layers).properties(width=width, height=22 * len(frame) + 8))
    chart = panels[0] if len(panels) == 1 else alt.vconcat(*panels).resolve_scale(x="independent")
    if entry.get("verdict") == NOT_TESTABLE:  # the comparisons are shown, but say nothing about the claim
        chart = chart.properties(title=alt.TitleParams("A precondition failed: these comparisons decide nothing",
                                                       anchor="start", fontSize=12))
    return chart

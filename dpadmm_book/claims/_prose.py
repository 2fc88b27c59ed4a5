"""The sentences a page shows of a record: each comparison's effect in the book's one orientation
(:func:`evidence`), the verdict with its counts and deciding comparison (:func:`describe`), and the checks
that a chapter quotes the very words and numbers of the table (:func:`check_quote`, :func:`quote_problems`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ._format import _count, _decimals, _fmt, _g
from ._preconditions import _failed
from ._records import _find, load
from ._stats import Comparison, _margin


def _oriented(cmp: Comparison, c: Mapping) -> tuple[float, float, float]:
    """A difference turned so that positive is the claimed direction (``rhs − lhs`` for ``<``)."""
    if cmp.kind == "ratio" or cmp.op == ">":
        return c["estimate"], c["low"], c["high"]
    return -c["estimate"], -c["high"], -c["low"]


def _side_names(cmp: Comparison, labels: Mapping) -> tuple[str, str]:
    if cmp.names is not None:
        return cmp.names
    name = lambda key: labels.get(key, key) if isinstance(key, str) else _g(key)  # noqa: E731
    return name(cmp.lhs), name(cmp.rhs)


def _bound_text(cmp: Comparison) -> str:
    if cmp.op == "within":
        return f"within {_g(cmp.bound[0])}–{_g(cmp.bound[1])}×"
    return f"{'above' if cmp.op == '>' else 'below'} {_g(cmp.bound[0])}×"


def _effect_text(cmp: Comparison, c: Mapping, labels: Mapping | None = None, unit: str = "") -> str:
    """The effect in the one orientation of the book: "A better than B by x unit (95 % CI …)",
    positive when the data point the claimed way; a factor as "A ÷ B = f× unit (95 % CI …),
    claimed above b×"."""
    a, b = _side_names(cmp, labels or {})
    est, low, high = _oriented(cmp, c)
    unit = f" {unit}" if unit else ""
    if cmp.kind == "ratio":
        d = max(1, min(_decimals(low, high, est), 3))
        return (f"{a} ÷ {b} = {_fmt(est, d)}×{unit} (95 % CI {_fmt(low, d)}–{_fmt(high, d)}×), "
                f"claimed {_bound_text(cmp)}")
    d = _decimals(low, high, est)
    return (f"{a} better than {b} by {_fmt(est, d, True)}{unit} "
            f"(95 % CI {_fmt(low, d, True)} to {_fmt(high, d, True)})")


def _difference_text(cmp: Comparison, labels: Mapping) -> str:
    name = lambda key: labels.get(key, key) if isinstance(key, str) else f"{key:g}"  # noqa: E731
    if cmp.kind == "ratio":
        return f"{name(cmp.lhs)} ÷ {name(cmp.rhs)}, claimed {_bound_text(cmp)}"
    first, second = (cmp.lhs, cmp.rhs) if cmp.op == ">" else (cmp.rhs, cmp.lhs)
    return f"{name(first)} − {name(second)}, claimed > 0"


def evidence(entry: dict):
    """One row per comparison of a record: the comparison, what is compared, the effect in the
    claimed direction with its interval (for a difference: positive = as claimed; for a ratio: the
    factor), its outcome and whether it is trivial.

    Returns
    -------
    pandas.DataFrame
        Columns ``comparison, compares, kind, effect, low, high, bound_low, bound_high, outcome,
        trivial, status, text, at_trivial, margin, at, toward`` (``status``: the outcome, or
        ``"trivial"``; ``text``: the effect and its interval in words, exactly as :func:`describe`
        gives it to the chapter; ``at_trivial``: the sides no better than the trivial model;
        ``at``: the comparison's place in the statement's range; ``toward``: whether the estimate
        points the claimed way).
    """
    import pandas as pd

    columns = ["comparison", "compares", "kind", "effect", "low", "high", "bound_low", "bound_high", "outcome",
               "trivial", "status", "text", "at_trivial", "margin", "at", "toward"]
    labels, unit = entry["labels"], entry["unit"]
    rows = []
    for name, spec in entry["tests"].items():
        cmp, c = Comparison.from_dict(spec), entry["comparisons"][name]
        est, low, high = _oriented(cmp, c)
        bound = cmp.bound if cmp.kind == "ratio" else (0.0, 0.0)
        sides = [labels.get(k, k) for k, at in zip(cmp.keys(), c["at_trivial"]) if at]
        margin = _margin(cmp, c["estimate"], c["low"], c["high"])
        rows.append({"comparison": name, "compares": _difference_text(cmp, labels), "kind": cmp.kind,
                     "effect": est, "low": low, "high": high, "bound_low": bound[0], "bound_high": bound[1],
                     "outcome": c["outcome"], "trivial": bool(c["trivial"]),
                     "status": "trivial" if c["trivial"] else c["outcome"],
                     "text": _effect_text(cmp, c, labels, unit), "at_trivial": ", ".join(sides), "margin": margin,
                     "at": cmp.at, "toward": bool(margin > 0)})
    return pd.DataFrame(rows, columns=columns)


#: How the table words a statement over a range that the data split (stated on the page).
SPLIT_RULE = ("Where a paper's statement covers a range (of ε, say) and the data split it, the outcome names "
              "where it holds and where it reverses: a value of the range counts as holding when every "
              "comparison at it holds, as reversing when any comparison at it does not hold, and otherwise as "
              "inconclusive; comparisons at the trivial model decide nothing.")


def _split(entry: Mapping, ev) -> str:
    """Where a statement over a range holds and where it reverses (empty unless the data split it)."""
    over = entry["over"]
    if ev.empty or ev["at"].isna().any():
        return ""
    where = {"holds": [], "reverses": [], "inconclusive": []}
    for at, group in ev[~ev.trivial].groupby("at", sort=True):
        if (group.outcome == "does not hold").any():
            where["reverses"].append(at)
        elif (group.outcome == "holds").all():
            where["holds"].append(at)
        else:
            where["inconclusive"].append(at)
    if not (where["holds"] and where["reverses"]):
        return ""
    name = f"{over} = " if over else ""
    return "; ".join(f"{word} at {name}{', '.join(_g(v) for v in values)}"
                     for word, values in where.items() if values)


def _tally(ev) -> str:
    n = len(ev)
    counts = ev["status"].value_counts()
    parts = [f"{int(counts.get('holds', 0))} of {_count(n, 'comparison')} "
             f"{'holds' if n == 1 else 'hold'}"]
    for status, word in (("does not hold", "reverse"), ("inconclusive", "inconclusive"),
                         ("trivial", "at the trivial model")):
        k = int(counts.get(status, 0))
        if k:
            parts.append(f"{k} {word}{'s' if status == 'does not hold' and k == 1 else ''}")
    return ", ".join(parts)


def _pick(ev, verdict: str):
    """The comparison that decides a row's verdict: the one most against the claim, the weakest
    of those that hold, or the closest of the inconclusive ones."""
    if verdict == "does not hold here":
        pick = ev[(ev.status == "does not hold")]
    elif verdict == "holds":
        pick = ev
    else:
        pick = ev[ev.status == "inconclusive"] if (ev.status == "inconclusive").any() else ev
    return pick.loc[pick["margin"].idxmin()] if verdict != "at the trivial model" else ev.iloc[0]


def _headline(entry: dict, verdict: str) -> tuple[str, str]:
    """The comparison a row shows (the one that decides the verdict) and its effect, and a count
    of the outcomes."""
    ev = evidence(entry)
    row = _pick(ev, verdict)
    effect = f"{row['comparison']}: {row['text']}"
    if entry.get("paper_value"):
        effect += f"; paper: {entry['paper_value']}"
    return effect, _tally(ev)


def describe(claim_id: str, records=None) -> dict:
    """Everything a chapter says about a recorded claim, as strings ready for ``glue`` — the very
    strings the reproducibility table shows, so that a chapter and the table cannot disagree.

    Returns
    -------
    dict
        ``verdict``; ``counts`` ("7 of 11 comparisons hold, 4 inconclusive"); ``toward`` ("8 of 8
        point the claimed way"); ``effects`` (comparison name → "A better than B by x unit (95 %
        CI …)"); ``effect`` (the deciding comparison, as the table's row shows it); ``split``
        (where a statement over a range holds and reverses, else ""); ``failed_preconditions``
        (name → reason); ``preconditions`` (name → reason, every one); ``question``, ``unit``,
        ``sided``, ``design``.
    """
    entry = _find(claim_id, records)
    ev = evidence(entry)
    pre = entry["preconditions"]
    effect, counts = _headline(entry, entry["verdict"])
    return {"verdict": entry["verdict"], "counts": counts,
            "toward": f"{int(ev.toward.sum())} of {len(ev)} point the claimed way",
            "effects": dict(zip(ev.comparison, ev.text)), "effect": effect, "split": _split(entry, ev),
            "failed_preconditions": _failed(pre), "preconditions": {name: c["reason"] for name, c in pre.items()},
            "question": entry["question"], "unit": entry["unit"], "sided": entry["sided"], "design": entry["design"]}


def check_quote(claim_id: str, comparison: str, value: float, records=None, *, decimals: int | None = None) -> float:
    """Check a number a chapter shows about a comparison against the record, in the book's one
    orientation (positive = the data point the claimed way; a factor for a ratio), and return the
    record's value. ``decimals``: how the chapter rounded it (default: agree to 1 %). Raises
    ``ValueError`` on a flipped sign or another number — a chapter that disagrees with its table."""
    entry = _find(claim_id, records)
    if comparison not in entry["tests"]:
        raise KeyError(f"claim {claim_id!r} has no comparison {comparison!r}")
    est, _, _ = _oriented(Comparison.from_dict(entry["tests"][comparison]), entry["comparisons"][comparison])
    value = float(value)
    if est != 0 and value != 0 and math.copysign(1, est) != math.copysign(1, value):
        raise ValueError(f"{claim_id}, {comparison!r}: the chapter shows {value:+g} but the record's effect in the "
                         f"claimed direction is {est:+g} (a flipped sign)")
    tol = 0.5 * 10.0 ** -decimals + 1e-12 if decimals is not None else 0.01 * abs(est) + 1e-12
    if abs(value - est) > tol:
        raise ValueError(f"{claim_id}, {comparison!r}: the chapter shows {value:g} but the record gives {est:g}")
    return est


def quote_problems(texts: Mapping[str, str], records=None) -> list[str]:
    """Effects a chapter quotes that the table does not show: every part of a text (between "; ")
    that reads as an effect — "A better than B by x … (95 % CI …)" or "A ÷ B = f× … (95 % CI …)" —
    must contain, word for word, an effect of some record (as :func:`describe` and the table give
    it). A sign flipped between chapter and table, or a number typed by hand, is reported as
    ``"name: quoted"``. ``texts``: name → text (a chapter's glued strings)."""
    records = load() if records is None else records
    if isinstance(records, Mapping):
        records = list(records.values())
    known = [text for e in records for text in evidence(e)["text"]]
    found = []
    for name, text in texts.items():
        for part in str(text).split("; "):
            quoted = part.split(": ")[-1].strip()
            if "(95 % CI" in quoted and (" better than " in quoted or " ÷ " in quoted) \
                    and not any(k in quoted for k in known):
                found.append(f"{name}: {quoted}")
    return found

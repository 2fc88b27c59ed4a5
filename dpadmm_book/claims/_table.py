"""The tables: a chapter's comparisons (:func:`comparison_table`) and the reproducibility table of every
claim the book must test or a chapter recorded (:func:`table`, :data:`EXPECTED`)."""

from __future__ import annotations

from collections.abc import Mapping

from ._preconditions import _failed
from ._prose import describe
from ._records import _QUESTIONS, MIN_SEEDS, _question, load, problems

#: What the reproducibility table says of an expected claim that no executed chapter recorded.
NOT_TESTED = "not yet tested"
#: The claims of the five papers (A–E) that the book must test, by id → (paper, claim). The
#: reproducibility table lists each of them, with the chapter's record when one exists and as
#: :data:`NOT_TESTED` otherwise, and every further claim a chapter recorded.
EXPECTED: dict[str, tuple[str, str]] = {
    "xu2020.threshold": (
        "Xu et al. 2020", "DP-AccADMM is worse than DP-ADMM at small ε and better above a threshold ε"),
    "huang2019.agents": ("Huang et al. 2019", "accuracy falls as the number of agents grows"),
    "huang2019.dp_admm_beats_baselines": ("Huang et al. 2019", "DP-ADMM beats PVP, DVP and DP-SGD"),
    "huang2019.eps_delta_utility": ("Huang et al. 2019", "larger ε and δ give better utility"),
    "huang2019.cost": (
        "Huang et al. 2019", "DP-ADMM is much cheaper per iteration than exact-update ADMM (Table II)"),
    "cyffers2023.admm_beats_dpsgd_high_privacy": (
        "Cyffers et al. 2023", "private ADMM beats DP-SGD in the high-privacy regime (Lasso, test objective)"),
    "liu2022.smoothing_helps": ("Liu et al. 2022", "Laplacian smoothing with ν = 2, 3 beats ν = 0"),
    "liu2022.vradmm_beats_sadmm": ("Liu et al. 2022", "DP-VRADMM beats DP-SADMM"),
    "liu2022.beats_dp_admm": ("Liu et al. 2022", "DP-SADMM and DP-VRADMM beat DP-ADMM on the Lasso"),
    "zhang2017.dvp_loss_varies_less": ("Zhang & Zhu 2017", "DVP's empirical loss varies less than PVP's"),
    "zhang2017.accuracy_improves_with_alpha": (
        "Zhang & Zhu 2017", "accuracy improves as the privacy parameter α grows"),
    "zhang2017.dvp_vs_pvp": (
        "Zhang & Zhu 2017", "DVP trades privacy for accuracy better than PVP (the paper also states the reverse)"),
    "zhang2017.topology_consensus_speed": (
        "Zhang & Zhu 2017", "the topology changes the speed of consensus (the book's own question, not the paper's)"),
}
_PAPER_ORDER = ("xu2020", "huang2019", "cyffers2023", "liu2022", "zhang2017")


def comparison_table(comparisons: Mapping[str, Mapping], *, caption: str, digits: int = 4):
    """The comparisons of :func:`evaluate` as a chapter shows them (:func:`dpadmm_book.viz.table`): one row per
    comparison with its estimate, the interval's ends, its outcome and whether both sides are at the trivial model
    ("yes" / "no", not True / False), under ``caption``."""
    import pandas as pd

    from ..viz import table

    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError("comparisons must be the non-empty first result of evaluate()")
    frame = pd.DataFrame([{"comparison": name, "estimate": float(c["estimate"]), "low": float(c["low"]),
                           "high": float(c["high"]), "outcome": c["outcome"],
                           "at the trivial model": "yes" if c["trivial"] else "no"} for name, c in comparisons.items()])
    return table(frame, caption=caption, digits=digits)


def _paper_rank(claim_id: str) -> int:
    prefix = claim_id.split(".", 1)[0]
    return _PAPER_ORDER.index(prefix) if prefix in _PAPER_ORDER else len(_PAPER_ORDER)


def _preconditions_text(entry: Mapping) -> str:
    pre = entry["preconditions"]
    if not pre:
        return ""
    failed = _failed(pre)
    if failed:
        return "failed: " + "; ".join(f"{name} ({reason})" for name, reason in failed.items())
    return f"all {len(pre)} met" if len(pre) > 1 else "met"


def table(records: list[dict] | None = None, expected: dict[str, tuple[str, str]] | None = None, *,
          min_seeds: int = MIN_SEEDS):
    """The reproducibility table: one row per claim, built from the records, never typed.

    Every id of ``expected`` (default :data:`EXPECTED`) gets a row, with verdict
    :data:`NOT_TESTED` when no chapter recorded it; every other record (a claim a chapter found)
    gets a row too. The verdict shown is recomputed from the record; a record with
    :func:`problems` (at ``min_seeds``) is shown as ``"inconsistent record"`` (and fails the
    test suite).

    Returns
    -------
    pandas.DataFrame
        Indexed by claim id, columns ``paper, claim, chapter, where, verdict, effect, tally,
        toward, split, preconditions, failed, design, unit, sided, question, seeds, note, listed``
        (``effect``: the deciding comparison with its 95 % interval, as :func:`describe` words it;
        ``tally``: the comparisons' outcomes; ``toward``: how many point the claimed way;
        ``split``: where a statement over a range holds and reverses; ``preconditions``: "met", or
        the failed ones with their reasons; ``question``: "paper" or "book"), papers in book order.
    """
    import pandas as pd

    records = load() if records is None else records
    expected = EXPECTED if expected is None else expected
    by_id = {e["id"]: e for e in records}
    rows = []
    columns = ["id", "paper", "claim", "chapter", "where", "verdict", "effect", "tally", "toward", "split",
               "preconditions", "failed", "design", "unit", "sided", "question", "seeds", "note", "listed"]
    for claim_id in sorted(set(expected) | set(by_id), key=lambda i: (_paper_rank(i), i not in expected, i)):
        entry = by_id.get(claim_id)
        paper, claim = expected.get(claim_id, (None, None))
        row = {"id": claim_id, "paper": paper, "claim": claim, "chapter": claim_id.split(".", 1)[0], "where": "",
               "verdict": NOT_TESTED, "effect": "", "tally": "", "toward": "", "split": "", "preconditions": "",
               "failed": {}, "design": "", "unit": "", "sided": "", "question": _question(claim_id),
               "seeds": 0, "note": "", "listed": claim_id in expected}
        if entry is not None:
            bad = problems(entry, min_seeds=min_seeds)
            row.update(paper=entry.get("paper", paper), claim=entry.get("claim", claim),
                       chapter=entry.get("chapter", ""), where=entry.get("where", ""), note=entry.get("note", ""),
                       question=entry["question"] if entry.get("question") in _QUESTIONS else row["question"])
            if bad:
                row.update(verdict="inconsistent record", note="; ".join(bad))
            else:
                d = describe(claim_id, [entry])
                row.update(verdict=entry["verdict"], effect=d["effect"], tally=d["counts"], toward=d["toward"],
                           split=d["split"], preconditions=_preconditions_text(entry),
                           failed=d["failed_preconditions"], design=d["design"], unit=d["unit"],
                           sided=d["sided"], seeds=len(entry["seeds"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns).set_index("id")

"""Paper claims and the book's verdicts on them, recorded by the chapters that test them.

A chapter that tests a claim of its paper records it once, from its executed run::

    dl.claims.record(
        "huang2019.agents", chapter="huang2019", paper="Huang et al. 2019",
        claim="accuracy falls as the number of agents grows",
        where="Sec. 'More agents, less accuracy'",
        measured={"acc_10_agents": 0.83, "acc_100_agents": 0.81},
        tests={"10 agents beat 100": ("acc_10_agents", ">", "acc_100_agents")},
    )

The verdict is never typed by hand: it follows from the measured numbers and the comparisons
(``"holds"`` when every comparison is true, ``"does not hold here"`` when none is, ``"holds
partly"`` otherwise). Each record is written as JSON to :func:`results_dir` (one file per claim),
where the reproducibility table reads it; the test suite recomputes every verdict from the stored
numbers. A chapter quotes ``record(...)``'s return value (the verdict) with ``glue``.

:data:`EXPECTED` lists the claims of the five papers that the book must test; :func:`table`
turns the records into the reproducibility table (an expected claim with no record shows as
:data:`NOT_TESTED`), and :func:`problems` says what is wrong with a stored record.
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from pathlib import Path

__all__ = ["VERDICTS", "NOT_TESTED", "EXPECTED", "record", "verdict_of", "load", "results_dir", "problems", "table"]

VERDICTS = ("holds", "holds partly", "does not hold here")
#: What the reproducibility table says of an expected claim that no executed chapter recorded.
NOT_TESTED = "not yet tested"

#: The claims of the five papers that SPEC asks the book to test (papers A–E), by id →
#: (paper, claim). The reproducibility table lists each of them, with the chapter's record when
#: one exists and as :data:`NOT_TESTED` otherwise, and every further claim a chapter recorded.
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
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def results_dir() -> Path:
    """Where claim records go: ``$DPADMM_RESULTS_DIR`` (the book build sets it to its own
    folder, so the test build and the published build never mix), else a user cache folder."""
    env = os.environ.get("DPADMM_RESULTS_DIR")
    path = Path(env) if env else Path.home() / ".cache" / "dpadmm-book" / "results"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _value(measured: dict, term):
    if isinstance(term, str):
        if term not in measured:
            raise ValueError(f"tests: {term!r} is not a key of measured ({sorted(measured)})")
        return float(measured[term])
    return float(term)


def verdict_of(measured: dict, tests: dict) -> str:
    """The verdict that ``tests`` (name → (lhs, op, rhs), a side a key of ``measured`` or a
    number) give on ``measured``."""
    if not tests:
        raise ValueError("tests must hold at least one comparison")
    outcomes = []
    for name, spec in tests.items():
        if not (isinstance(spec, (tuple, list)) and len(spec) == 3 and spec[1] in _OPS):
            raise ValueError(f"tests[{name!r}] must be (lhs, op, rhs) with op in {sorted(_OPS)}, got {spec!r}")
        lhs, op, rhs = spec
        outcomes.append(_OPS[op](_value(measured, lhs), _value(measured, rhs)))
    if all(outcomes):
        return "holds"
    return "does not hold here" if not any(outcomes) else "holds partly"


def record(claim_id: str, *, chapter: str, paper: str, claim: str, where: str, measured: dict,
           tests: dict, note: str = "") -> str:
    """Record the book's test of one paper claim and return its verdict (see module doc).

    Parameters
    ----------
    claim_id
        Stable id, ``"<chapter>.<short-name>"`` (letters, digits, ``._-``).
    chapter, paper, claim, where
        The chapter's file name (``"huang2019"``), the paper, the claim in words, and where in
        the chapter it is tested.
    measured
        Named numbers from the chapter's own run (finite floats).
    tests
        name → ``(lhs, op, rhs)``, op one of ``> >= < <=``; each side a key of ``measured`` or
        a number.
    note
        What the reader should know beyond the verdict (settings, caveats).
    """
    if not re.fullmatch(r"[A-Za-z0-9._-]+", claim_id or ""):
        raise ValueError(f"claim_id must be letters, digits and ._- only, got {claim_id!r}")
    measured = {str(k): float(v) for k, v in measured.items()}
    bad = [k for k, v in measured.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"measured must hold finite numbers; not finite: {bad}")
    verdict = verdict_of(measured, tests)
    entry = {"id": claim_id, "chapter": chapter, "paper": paper, "claim": claim, "where": where,
             "measured": measured, "tests": {k: list(v) for k, v in tests.items()}, "verdict": verdict,
             "note": note}
    path = results_dir() / f"{claim_id}.json"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry, indent=1, ensure_ascii=False))
    tmp.replace(path)  # a reader never sees half a record
    return verdict


def load(directory: Path | None = None) -> list[dict]:
    """Every claim record in ``directory`` (default :func:`results_dir`), sorted by id."""
    directory = results_dir() if directory is None else Path(directory)
    entries = []
    for path in sorted(directory.glob("*.json")):
        try:
            entry = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"claim record {path} is not valid JSON ({exc}); re-run the chapter that wrote it") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ValueError(f"claim record {path} has no id; re-run the chapter that wrote it")
        entries.append(entry)
    return sorted(entries, key=lambda e: e["id"])


def problems(entry: dict) -> list[str]:
    """What is wrong with a stored record (empty when nothing): missing fields, numbers that are
    not finite, or a verdict that its own measured numbers and comparisons do not give."""
    missing = [k for k in ("id", "chapter", "paper", "claim", "where", "measured", "tests", "verdict") if k not in entry]
    if missing:
        return [f"missing fields {missing}"]
    found = []
    if entry["verdict"] not in VERDICTS:
        found.append(f"verdict {entry['verdict']!r} is not one of {VERDICTS}")
    try:
        measured = {str(k): float(v) for k, v in entry["measured"].items()}
        if not all(math.isfinite(v) for v in measured.values()):
            found.append("measured holds a number that is not finite")
        computed = verdict_of(measured, {k: tuple(v) for k, v in entry["tests"].items()})
    except (AttributeError, TypeError, ValueError) as exc:
        return found + [f"its comparisons cannot be evaluated: {exc}"]
    if computed != entry["verdict"]:
        found.append(f"it says {entry['verdict']!r} but its measured numbers give {computed!r}")
    return found


def _paper_rank(claim_id: str) -> int:
    prefix = claim_id.split(".", 1)[0]
    return _PAPER_ORDER.index(prefix) if prefix in _PAPER_ORDER else len(_PAPER_ORDER)


def _number(value: float) -> str:
    return f"{value:.4g}"


def table(records: list[dict] | None = None, expected: dict[str, tuple[str, str]] | None = None):
    """The reproducibility table: one row per claim, built from the records, never typed.

    Every id of ``expected`` (default :data:`EXPECTED`) gets a row, with verdict
    :data:`NOT_TESTED` when no chapter recorded it; every other record (a claim a chapter found)
    gets a row too. The verdict shown is recomputed from the record's numbers; a record whose
    stored verdict disagrees is shown as ``"inconsistent record"`` (and fails the test suite).

    Returns
    -------
    pandas.DataFrame
        Indexed by claim id, columns ``paper, claim, chapter, where, measured, tests, verdict,
        note, listed`` (``listed``: the claim is one of ``expected``), papers in book order.
    """
    import pandas as pd

    records = load() if records is None else records
    expected = EXPECTED if expected is None else expected
    by_id = {e["id"]: e for e in records}
    rows = []
    for claim_id in sorted(set(expected) | set(by_id), key=lambda i: (_paper_rank(i), i not in expected, i)):
        entry = by_id.get(claim_id)
        paper, claim = expected.get(claim_id, (None, None))
        if entry is None:
            rows.append({"id": claim_id, "paper": paper, "claim": claim, "chapter": "", "where": "", "measured": "",
                         "tests": "", "verdict": NOT_TESTED, "note": "", "listed": True})
            continue
        bad = problems(entry)
        measured = entry.get("measured", {})
        tests = entry.get("tests", {})
        rows.append({
            "id": claim_id, "paper": entry.get("paper", paper), "claim": entry.get("claim", claim),
            "chapter": entry.get("chapter", ""), "where": entry.get("where", ""),
            "measured": "; ".join(f"{k} = {_number(float(v))}" for k, v in measured.items()),
            "tests": "; ".join(f"{name}: {' '.join(str(t) for t in spec)}" for name, spec in tests.items()),
            "verdict": "inconsistent record" if bad else entry["verdict"],
            "note": "; ".join(bad) if bad else entry.get("note", ""),
            "listed": claim_id in expected,
        })
    columns = ["id", "paper", "claim", "chapter", "where", "measured", "tests", "verdict", "note", "listed"]
    return pd.DataFrame(rows, columns=columns).set_index("id")

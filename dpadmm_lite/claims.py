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
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from pathlib import Path

__all__ = ["VERDICTS", "record", "verdict_of", "load", "results_dir"]

VERDICTS = ("holds", "holds partly", "does not hold here")
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
    (results_dir() / f"{claim_id}.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False))
    return verdict


def load(directory: Path | None = None) -> list[dict]:
    """Every claim record in ``directory`` (default :func:`results_dir`), sorted by id."""
    directory = results_dir() if directory is None else Path(directory)
    return sorted((json.loads(p.read_text()) for p in directory.glob("*.json")), key=lambda e: e["id"])

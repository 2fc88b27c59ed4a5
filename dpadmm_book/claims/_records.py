"""The claim records on disk: where they go (:func:`results_dir`), writing one from a chapter's run
(:func:`record`, :func:`samples_from`), reading them back (:func:`load`), and checking that a stored
record's own numbers give its intervals and verdict (:func:`problems`)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ._preconditions import _failed, check_preconditions
from ._stats import CONFIDENCE, NOT_TESTABLE, VERDICTS, Comparison, _check_samples, _check_trivial, evaluate

#: Fewest paired seeds a record may hold (the fast build); the published build asks for
#: :data:`MIN_SEEDS_FULL` (``problems(entry, min_seeds=MIN_SEEDS_FULL)``).
MIN_SEEDS, MIN_SEEDS_FULL = 3, 10
#: The form of record :func:`record` writes and :func:`load` reads: per-seed samples, their
#: comparisons and preconditions, and the question, unit and sides of the statement.
FORMAT = 3
#: The ids that ask the book's own question (not a paper's claim): an expected claim that no chapter
#: has recorded yet goes in the book's section of the table, as its record (``question="book"``) will.
BOOK_QUESTIONS = frozenset({"zhang2017.topology_consensus_speed", "cyffers2023.admm_vs_dpsgd_tuned_at_each_budget"})
_QUESTIONS = ("paper", "book")
_SIDED = ("one", "two")
#: A sample key that reads like a variable name (``admm_eps0``): the record must give it a label.
_INTERNAL_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9.]+)+")


def results_dir() -> Path:
    """Where claim records go: ``$DPADMM_RESULTS_DIR`` (the book build sets it to its own
    folder, so the test build and the published build never mix), else a user cache folder."""
    env = os.environ.get("DPADMM_RESULTS_DIR")
    path = Path(env) if env else Path.home() / ".cache" / "dpadmm-book" / "results"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _labels(labels: Mapping | None, keys) -> dict[str, str]:
    labels = dict(labels or {})
    unknown = sorted(set(labels) - set(keys))
    if unknown:
        raise ValueError(f"labels names keys that are not samples: {unknown}")
    bad = {k: v for k, v in labels.items() if not isinstance(v, str) or not v.strip()}
    if bad:
        raise ValueError(f"labels must be non-empty strings, got {bad}")
    out = {key: labels.get(key, key) for key in keys}
    internal = sorted(k for k, v in out.items() if _INTERNAL_KEY.fullmatch(v))
    if internal:
        raise ValueError(f"samples keys {internal} read like variable names: give each a label a reader "
                         f"understands, e.g. labels={{{internal[0]!r}: 'ADMM test objective, ε = 0.1'}}")
    return out


def _paper_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return f"{float(value[0]):g}–{float(value[1]):g}"
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f"{float(value):g}"
    raise TypeError(f"paper_value must be a string, a number or a (low, high) pair, got {value!r}")


def _write(entry: dict) -> None:
    path = results_dir() / f"{entry['id']}.json"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry, indent=1, ensure_ascii=False))
    tmp.replace(path)  # a reader never sees half a record


def record(claim_id: str, *, chapter: str, paper: str, claim: str, where: str, tests: Mapping,
           seeds: Sequence[int], samples: Mapping, labels: Mapping | None = None,
           trivial: Mapping | None = None, better: str | Mapping | None = None, paper_value=None,
           note: str = "", preconditions: Mapping | None = None,
           question: str = "paper", unit: str = "", sided: str = "one", design: str = "",
           over: str = "") -> str:
    """Record the book's test of one paper claim and return its verdict (see module doc).

    Parameters
    ----------
    claim_id
        Stable id, ``"<chapter>.<short-name>"`` (letters, digits, ``._-``).
    chapter, paper, claim, where
        The chapter's file name (``"huang2019"``), the paper, the claim in words, and where in
        the chapter it is tested.
    tests
        name (a sentence a reader understands) → :func:`compare` / :func:`ratio`; a
        ``(lhs, op, rhs)`` triple is read as :func:`compare`.
    seeds
        The seeds of the runs, at least :data:`MIN_SEEDS` (the published build:
        :data:`MIN_SEEDS_FULL`); position ``i`` of every sample is the run with ``seeds[i]``.
    samples
        key → one number per seed. Keys are shown on the page: make them readable, or give
        ``labels``.
    labels
        key → the words the page shows for it (default: the key itself; required for a key that
        reads like a variable name, such as ``admm_eps0``).
    trivial, better
        key → the trivial model's value of that quantity, and which way it improves
        (``"lower"``/``"higher"``, or a dict per key); see :func:`evaluate`.
    paper_value
        What the paper reports for a claim about a magnitude (``"9.7–12.9× (Table II)"``, a
        number or a ``(low, high)`` pair), shown next to ours.
    note
        What the reader should know beyond the verdict (settings, caveats).
    preconditions
        name → :func:`learns` / :func:`given`. If any fails, the verdict is :data:`NOT_TESTABLE`
        and the record keeps each failed precondition with its reason; the comparisons are still
        computed and shown, but decide nothing.
    question
        ``"paper"`` (a paper's claim) or ``"book"`` (the book's own question: a table section of
        its own, not counted among the papers' claims).
    unit
        The unit of every effect of this record ("test-accuracy points", "× fewer data passes").
    sided
        ``"one"`` or ``"two"``, as the paper words the statement.
    design
        One line summarising the test design; the full design is prose in the chapter at ``where``.
    over
        What ``at`` of the comparisons measures ("ε"), for a statement over a range: the table
        then says where it holds and where it reverses.
    """
    if not re.fullmatch(r"[A-Za-z0-9._-]+", claim_id or ""):
        raise ValueError(f"claim_id must be letters, digits and ._- only, got {claim_id!r}")
    for name, value in (("chapter", chapter), ("paper", paper), ("claim", claim), ("where", where)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    meta = _meta(question, unit, sided, design, over)
    if seeds is None or isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise ValueError(f"seeds must be the list of the runs' seeds, got {seeds!r}")
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in seeds):
        raise TypeError(f"seeds must be integers, got {list(seeds)!r}")
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds) or len(seeds) < MIN_SEEDS:
        raise ValueError(f"seeds must hold at least {MIN_SEEDS} distinct seeds, got {seeds}")
    arrays = _check_samples(samples, len(seeds))
    names = _labels(labels, arrays)
    trivial_values, direction = _check_trivial(trivial, better, arrays)
    specs = {name: Comparison.from_dict(spec) for name, spec in (tests or {}).items()}
    comparisons, verdict = evaluate(arrays, specs, trivial=trivial_values, better=direction)
    checked = check_preconditions(preconditions, arrays, names)
    verdict = NOT_TESTABLE if _failed(checked) else verdict
    entry = {"id": claim_id, "format": FORMAT, "chapter": chapter, "paper": paper, "claim": claim, "where": where,
             "confidence": CONFIDENCE, "seeds": seeds, "samples": {k: v.tolist() for k, v in arrays.items()},
             "labels": names, "trivial": trivial_values, "better": direction,
             "tests": {k: v.to_dict() for k, v in specs.items()}, "paper_value": _paper_value(paper_value),
             "comparisons": comparisons, "preconditions": checked, **meta, "verdict": verdict, "note": note}
    _write(entry)
    return verdict


def _meta(question, unit, sided, design, over) -> dict:
    if question not in _QUESTIONS:
        raise ValueError(f"question must be 'paper' (a paper's claim) or 'book' (the book's own), got {question!r}")
    if sided not in _SIDED:
        raise ValueError(f"sided must be 'one' or 'two' (as the paper words the statement), got {sided!r}")
    for name, value in (("unit", unit), ("design", design), ("over", over)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {value!r}")
    return {"question": question, "unit": unit.strip(), "sided": sided, "design": design.strip(),
            "over": over.strip()}


def samples_from(frame, value: str, by: str | Sequence[str], label: str, seed: str = "seed"):
    """Per-seed samples for :func:`record` from a tidy frame with one row per run.

    ``label`` is a format string over the ``by`` columns (``"{method} test error, ε = {epsilon:g}"``).
    Every group must hold the same seeds, once each. Returns ``(seeds, samples)``.
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = sorted({value, seed, *by} - set(frame.columns))
    if missing:
        raise ValueError(f"samples_from: columns {missing} are not in the frame ({list(frame.columns)})")
    if frame.duplicated(subset=[seed, *by]).any():
        raise ValueError(f"samples_from: several rows per ({seed}, {', '.join(by)}); aggregate each run to one "
                         f"row of {value!r} first")
    wide = frame.pivot(index=seed, columns=by, values=value).sort_index()
    holes = wide.isna()
    if holes.any().any():
        where_missing = {str(col): [int(s) for s in wide.index[holes[col]]] for col in wide.columns[holes.any()]}
        raise ValueError(f"samples_from: every group must hold the same seeds; missing {where_missing}")
    samples = {}
    for col in wide.columns:
        fields = dict(zip(by, col if isinstance(col, tuple) else (col,)))
        name = label.format(**fields)
        if name in samples:
            raise ValueError(f"samples_from: label {label!r} gives {name!r} to two groups")
        samples[name] = wide[col].to_numpy(dtype=float).tolist()
    return [int(s) for s in wide.index], samples


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
        if entry.get("format") != FORMAT:
            raise ValueError(f"claim record {path} is {_form(entry)}; re-run the chapter that wrote it")
        entries.append(entry)
    return sorted(entries, key=lambda e: e["id"])


def _form(entry: Mapping) -> str:
    """Why a record is not of the form the book reads (a sentence for an error message)."""
    found = f"of format {entry['format']!r}" if "format" in entry else "of no format"
    return f"{found}, not {FORMAT} (per-seed samples with their comparisons and preconditions)"


_STORED = ("estimate", "low", "high")
_FIELDS = ("id", "format", "chapter", "paper", "claim", "where", "confidence", "seeds", "samples", "labels", "trivial",
           "better", "tests", "paper_value", "comparisons", "preconditions", "question", "unit", "sided", "design",
           "over", "verdict", "note")


def problems(entry: dict, *, min_seeds: int = MIN_SEEDS) -> list[str]:
    """What is wrong with a stored record (empty when nothing).

    A record not of the form :data:`FORMAT`, missing fields, too few seeds (fewer than
    ``min_seeds``; the published build passes :data:`MIN_SEEDS_FULL`), samples that are not one
    finite number per seed, a key shown as a variable name, and above all stored intervals or a
    verdict that the record's own samples do not give (a typed verdict, or numbers edited after the
    run).
    """
    if entry.get("format") != FORMAT:
        return [f"it is {_form(entry)}"]
    missing = [k for k in _FIELDS if k not in entry]
    if missing:
        return [f"missing fields {missing}"]
    found = []
    if entry["question"] not in _QUESTIONS:
        found.append(f"question {entry['question']!r} is not one of {_QUESTIONS}")
    if entry["verdict"] not in VERDICTS:
        found.append(f"verdict {entry['verdict']!r} is not one of {VERDICTS}")
    if entry["confidence"] != CONFIDENCE:
        found.append(f"confidence {entry['confidence']!r} is not the book's {CONFIDENCE}")
    seeds = entry["seeds"]
    if not isinstance(seeds, list) or len(set(map(str, seeds))) != len(seeds) or len(seeds) < min_seeds:
        found.append(f"it holds {len(seeds) if isinstance(seeds, list) else seeds!r} distinct seeds; "
                     f"at least {min_seeds} are needed")
    try:
        arrays = _check_samples(entry["samples"], len(seeds) if isinstance(seeds, list) else None)
        unlabelled = sorted(set(arrays) - set(entry["labels"]))
        if unlabelled:
            found.append(f"samples {unlabelled} have no label")
        _labels(entry["labels"], arrays)
        computed, verdict = evaluate(arrays, entry["tests"], trivial=entry["trivial"], better=entry["better"])
        stored_pre = entry["preconditions"]
        checked = check_preconditions(stored_pre, arrays, entry["labels"])
    except (AttributeError, TypeError, ValueError) as exc:
        return found + [f"its comparisons cannot be evaluated: {exc}"]
    for name, c in checked.items():
        if bool(stored_pre[name].get("ok")) != c["ok"]:
            found.append(f"precondition {name!r} is stored as {'met' if stored_pre[name].get('ok') else 'failed'} "
                         f"but its samples say {'met' if c['ok'] else 'failed'}")
    if _failed(checked):
        verdict = NOT_TESTABLE
    stored = entry["comparisons"]
    if not isinstance(stored, Mapping) or set(stored) != set(computed):
        found.append(f"its stored comparisons {sorted(stored) if isinstance(stored, Mapping) else stored!r} "
                     f"are not its tests {sorted(computed)}")
    else:
        for name, c in computed.items():
            s = stored[name]
            try:
                same = (all(math.isclose(float(s[k]), c[k], rel_tol=1e-9, abs_tol=1e-12) for k in _STORED)
                        and s["outcome"] == c["outcome"] and bool(s["trivial"]) == c["trivial"])
            except (KeyError, TypeError, ValueError):
                same = False
            if not same:
                found.append(f"comparison {name!r} is stored as {_describe(s)} but its samples give {_describe(c)}")
    if entry["verdict"] != verdict:
        found.append(f"it says {entry['verdict']!r} but its samples give {verdict!r}")
    return found


def _describe(c) -> str:
    try:
        return (f"{c['outcome']}{' (trivial)' if c['trivial'] else ''}, "
                f"{c['estimate']:.6g} [{c['low']:.6g}, {c['high']:.6g}]")
    except (KeyError, TypeError, ValueError):
        return repr(c)


def _question(claim_id: str) -> str:
    """The question an expected claim asks before a chapter has recorded it."""
    return "book" if claim_id in BOOK_QUESTIONS else "paper"


def _find(claim_id: str, records) -> dict:
    records = load() if records is None else records
    if isinstance(records, Mapping):
        records = list(records.values())
    for entry in records:
        if entry.get("id") == claim_id:
            return entry
    raise KeyError(f"no record of claim {claim_id!r}: run the chapter that records it first")

"""Paper claims and the book's verdicts on them, decided by paired confidence intervals.

A chapter that tests a claim of its paper records it once, from its executed run, with one number
per seed for every quantity the claim compares (the runs of a record share one list of seeds and
are paired by it)::

    book.claims.record(
        "huang2019.dp_admm_beats_baselines", chapter="huang2019", paper="Huang et al. 2019",
        claim="DP-ADMM beats DP-SGD", where="Sec. 'All methods against ε'",
        seeds=[0, 1, 2],
        samples={"DP-ADMM test error, ε = 0.3": [0.236, 0.238, 0.235],
                 "DP-SGD test error, ε = 0.3": [0.2432, 0.2432, 0.2432]},
        tests={"ε = 0.3: DP-ADMM beats DP-SGD":
               book.claims.compare("DP-ADMM test error, ε = 0.3", "<", "DP-SGD test error, ε = 0.3")},
        trivial={"DP-SGD test error, ε = 0.3": 0.2432, "DP-ADMM test error, ε = 0.3": 0.2432},
        better="lower",
    )

Each comparison is decided by a 95 % Student-t interval (:data:`CONFIDENCE`) on the mean of its
paired per-seed differences (:func:`compare`), or on the mean log-ratio for a claim about a factor
(:func:`ratio`): an interval entirely on the claimed side → the comparison **holds**, entirely on
the other side → it **does not hold**, straddling → **inconclusive**. A comparison whose sides are
both no better than the trivial model (``trivial``: the zero model's objective, the majority
class's error) is **trivial** and decides nothing. The claim's verdict (:func:`verdict_rule`):

* **does not hold here** — some non-trivial comparison does not hold;
* **holds** — every comparison holds, and none is trivial;
* **at the trivial model** — every comparison is trivial;
* **inconclusive** — anything else (no comparison against the claim, but not all for it);
* **not testable at this setting** (:data:`NOT_TESTABLE`) — a precondition failed (:func:`learns`,
  :func:`given`): some method does not learn in the noise-free limit at the setting it runs, or was
  not run long enough. Its comparisons are still computed and shown, but decide nothing.

One orientation everywhere: ``compare(lhs, op, rhs)`` reads "lhs is better than rhs" (``"<"`` when
lower is better), and every effect — in a chapter (:func:`describe`) and in the table alike — is
"lhs better than rhs by x <unit>", positive when the data point the claimed way.

Verdicts are never typed: :func:`record` computes them, stores the numbers they follow from and
returns the verdict (a chapter quotes it with ``glue``); :func:`problems` recomputes them from a
stored record. A record of means only (``measured={key: mean}``, ``tests={name: (lhs, op,
rhs)}``, strict comparisons of means) is read and written too; having no interval, the table
shows it as :data:`NO_INTERVAL` and counts it as inconclusive.

:data:`EXPECTED` lists the claims of the five papers the book must test; :func:`table` turns the
records into the reproducibility table (an expected claim with no record shows as
:data:`NOT_TESTED`), :func:`evidence` into one row per comparison, and :func:`evidence_chart`
into a forest plot (each comparison's estimate with its interval).
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CONFIDENCE", "MIN_SEEDS", "MIN_SEEDS_FULL", "VERDICTS", "OUTCOMES", "NO_INTERVAL", "NOT_TESTED",
           "NOT_TESTABLE", "EXPECTED", "BOOK_QUESTIONS", "Comparison", "compare", "ratio", "paired_interval",
           "evaluate", "comparison_table", "verdict_rule", "Precondition", "learns", "given", "check_preconditions", "record",
           "samples_from", "verdict_of", "load", "results_dir", "problems", "evidence", "describe", "check_quote",
           "quote_problems",
           "table", "evidence_chart", "SPLIT_RULE"]

#: Coverage of every interval the claims are decided by (two-sided).
CONFIDENCE = 0.95
#: Fewest paired seeds a record may hold (the fast build); the published build asks for
#: :data:`MIN_SEEDS_FULL` (``problems(entry, min_seeds=MIN_SEEDS_FULL)``).
MIN_SEEDS, MIN_SEEDS_FULL = 3, 10
#: The verdict of a claim whose preconditions fail (:func:`learns`, :func:`given`): its comparisons
#: are computed and shown but decide nothing.
NOT_TESTABLE = "not testable at this setting"
#: A claim's verdicts, decided by its comparisons' intervals (:func:`verdict_rule`) and its
#: preconditions.
VERDICTS = ("holds", "does not hold here", "inconclusive", "at the trivial model", NOT_TESTABLE)
#: A comparison's outcomes (a trivial comparison keeps its outcome but decides nothing).
OUTCOMES = ("holds", "does not hold", "inconclusive")
#: What the table says of a record of means only: no interval, so it counts as inconclusive; its
#: verdict by strict comparisons of means (one of :data:`OLD_VERDICTS`) is shown beside it.
NO_INTERVAL = "no interval"
OLD_VERDICTS = ("holds", "holds partly", "does not hold here")
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
#: Records that ask the book's own question (not a paper's claim) even when written before
#: ``question=`` existed: shown in a section of their own and not counted among the papers' claims.
BOOK_QUESTIONS = frozenset({"zhang2017.topology_consensus_speed", "cyffers2023.admm_vs_dpsgd_tuned_at_each_budget"})
_QUESTIONS = ("paper", "book")
_SIDED = ("one", "two")
_PAPER_ORDER = ("xu2020", "huang2019", "cyffers2023", "liu2022", "zhang2017")
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_BETTER = ("lower", "higher")
#: A sample key that reads like a variable name (``admm_eps0``): the record must give it a label.
_INTERNAL_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9.]+)+")


def results_dir() -> Path:
    """Where claim records go: ``$DPADMM_RESULTS_DIR`` (the book build sets it to its own
    folder, so the test build and the published build never mix), else a user cache folder."""
    env = os.environ.get("DPADMM_RESULTS_DIR")
    path = Path(env) if env else Path.home() / ".cache" / "dpadmm-book" / "results"
    path.mkdir(parents=True, exist_ok=True)
    return path


# ----------------------------------------------------------------------------- comparisons
@dataclass(frozen=True)
class Comparison:
    """One comparison of a claim; build it with :func:`compare` or :func:`ratio`.

    ``kind`` is ``"difference"`` (``lhs op rhs``, ``rhs`` a sample key or a number) or ``"ratio"``
    (``lhs / rhs op bound``: ``op`` ``">"``/``"<"`` with ``bound = (b, b)``, or ``"within"`` with
    ``bound = (low, high)``). ``names`` (optional) are the short words for the two sides in an
    effect ("DP-ADMM better than DP-SGD by …"; default: the samples' labels); ``at`` (optional) is
    the comparison's place along the range a statement covers (its ε, say), so that a split claim
    says where it holds and where it reverses.
    """

    kind: str
    lhs: str
    op: str
    rhs: str | float
    bound: tuple[float, float] | None = None
    names: tuple[str, str] | None = None
    at: float | None = None

    def keys(self) -> list[str]:
        """The sample keys this comparison reads."""
        return [self.lhs] + ([self.rhs] if isinstance(self.rhs, str) else [])

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "lhs": self.lhs, "op": self.op, "rhs": self.rhs}
        if self.bound is not None:
            out["bound"] = list(self.bound)
        if self.names is not None:
            out["names"] = list(self.names)
        if self.at is not None:
            out["at"] = self.at
        return out

    @classmethod
    def from_dict(cls, spec) -> Comparison:
        """A comparison from its stored form (or from a ``(lhs, op, rhs)`` triple: :func:`compare`)."""
        if isinstance(spec, Comparison):
            return spec
        if isinstance(spec, (tuple, list)) and len(spec) == 3:
            return compare(*spec)
        if not isinstance(spec, Mapping) or spec.get("kind") not in ("difference", "ratio"):
            raise ValueError(f"a comparison must be compare(...), ratio(...) or (lhs, op, rhs), got {spec!r}")
        extra = {"names": spec.get("names"), "at": spec.get("at")}
        if spec["kind"] == "difference":
            return compare(spec["lhs"], spec["op"], spec["rhs"], **extra)
        bound = spec.get("bound")
        if not (isinstance(bound, (list, tuple)) and len(bound) == 2):
            raise ValueError(f"a ratio comparison needs bound = [low, high], got {spec!r}")
        if spec["op"] == "within":
            return ratio(spec["lhs"], spec["rhs"], within=tuple(bound), **extra)
        if spec["op"] in (">", "<"):
            return ratio(spec["lhs"], spec["rhs"], **{"above" if spec["op"] == ">" else "below": bound[0]}, **extra)
        raise ValueError(f"a ratio comparison's op must be '>', '<' or 'within', got {spec['op']!r}")


def _key(name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a sample key (a non-empty string), got {value!r}")
    return value


def _names_at(names, at) -> tuple[tuple[str, str] | None, float | None]:
    if names is not None:
        if (isinstance(names, (str, bytes)) or not isinstance(names, Sequence) or len(names) != 2
                or not all(isinstance(n, str) and n.strip() for n in names)):
            raise ValueError(f"names must be two non-empty strings (lhs, rhs), got {names!r}")
        names = (str(names[0]), str(names[1]))
    if at is not None:
        if isinstance(at, bool) or not isinstance(at, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(at)):
            raise ValueError(f"at must be a finite number (the comparison's place in the range), got {at!r}")
        at = float(at)
    return names, at


def compare(lhs: str, op: str, rhs: str | float, *, names: Sequence[str] | None = None,
            at: float | None = None) -> Comparison:
    """The claim "``lhs`` is better than ``rhs``" between two paired samples (or a sample and a
    number): ``op`` is ``"<"`` when lower is better, ``">"`` when higher is.

    Decided by the 95 % t-interval of the mean per-seed difference ``lhs − rhs`` (one-sample
    against ``rhs`` when it is a number). The effect is shown as "lhs better than rhs by x",
    positive when the data point the claimed way. ``names``: short words for the two sides in
    that sentence (default: the samples' labels); ``at``: the comparison's place along the range
    the statement covers (e.g. its ε).

    >>> compare("DP-ADMM test error", "<", "DP-SGD test error").to_dict()["op"]
    '<'
    """
    _key("lhs", lhs)
    if op not in (">", "<"):
        raise ValueError(f"op must be '>' or '<' (an interval decides strictness), got {op!r}")
    if isinstance(rhs, bool) or not isinstance(rhs, (str, int, float, np.integer, np.floating)):
        raise TypeError(f"rhs must be a sample key or a number, got {rhs!r}")
    if isinstance(rhs, str):
        _key("rhs", rhs)
    else:
        rhs = float(rhs)
        if not math.isfinite(rhs):
            raise ValueError(f"rhs must be a finite number, got {rhs!r}")
    names, at = _names_at(names, at)
    return Comparison("difference", lhs, op, rhs, None, names, at)


def ratio(lhs: str, rhs: str, *, above: float | None = None, below: float | None = None,
          within: tuple[float, float] | None = None, names: Sequence[str] | None = None,
          at: float | None = None) -> Comparison:
    """A claim about the factor ``lhs / rhs`` of two paired positive samples (counts, times, gaps).

    Exactly one of ``above`` (the factor is larger than it: "at least 5× cheaper" is
    ``ratio(exact_passes, dp_passes, above=5)``, one-sided), ``below``, or ``within`` (a ``(low,
    high)`` range: holds when the interval lies inside it, does not hold when it misses it — a
    two-sided test; a paper's own number is better shown beside a one-sided bound, see
    ``paper_value`` of :func:`record`). Decided by the 95 % t-interval of the mean per-seed
    ``log(lhs / rhs)``, reported as a factor (the geometric mean of the per-seed ratios).
    """
    _key("lhs", lhs)
    _key("rhs", rhs)
    names, at = _names_at(names, at)
    given_ = [name for name, v in (("above", above), ("below", below), ("within", within)) if v is not None]
    if len(given_) != 1:
        raise ValueError(f"give exactly one of above=, below=, within=; got {given_ or 'none'}")
    if within is not None:
        if not (isinstance(within, (tuple, list)) and len(within) == 2):
            raise ValueError(f"within must be a (low, high) pair, got {within!r}")
        low, high = float(within[0]), float(within[1])
        if not (0 < low < high < math.inf):
            raise ValueError(f"within must satisfy 0 < low < high < inf, got {within!r}")
        return Comparison("ratio", lhs, "within", rhs, (low, high), names, at)
    value = float(above if above is not None else below)
    if not (0 < value < math.inf):
        raise ValueError(f"{given_[0]} must be a positive finite factor, got {value!r}")
    return Comparison("ratio", lhs, ">" if above is not None else "<", rhs, (value, value), names, at)


def paired_interval(lhs, rhs=0.0, *, log: bool = False, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean of the paired differences ``lhs − rhs`` and its two-sided Student-t interval.

    ``rhs`` is an array of the same length (paired by position) or a number. With ``log=True``
    the differences are ``log lhs − log rhs`` and the three numbers are returned as factors
    (``exp``): the geometric mean ratio and its interval. With ``n`` pairs the interval is
    ``mean ± t_{(1+confidence)/2, n−1} · sd / √n`` (``sd`` with ``n − 1`` in the denominator).
    """
    a = np.asarray(lhs, dtype=float)
    b = np.broadcast_to(np.asarray(rhs, dtype=float), a.shape)
    if a.ndim != 1 or a.size < 2:
        raise ValueError(f"lhs must be a 1-D sample of at least 2 values, got shape {a.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if log:
        if np.any(a <= 0) or np.any(b <= 0):
            raise ValueError("a ratio needs positive samples on both sides")
        d = np.log(a) - np.log(b)
    else:
        d = a - b
    if not np.all(np.isfinite(d)):
        raise ValueError("the samples must be finite")
    from scipy import stats

    n = d.size
    mean = float(d.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * d.std(ddof=1) / math.sqrt(n))
    out = (mean, mean - half, mean + half)
    return tuple(math.exp(v) for v in out) if log else out


def _outcome(low: float, high: float, lo_bound: float, hi_bound: float, op: str) -> str:
    """Holds / does not hold / inconclusive for an interval [low, high] against the bound(s)."""
    if op == ">":
        return "holds" if low > lo_bound else "does not hold" if high < lo_bound else "inconclusive"
    if op == "<":
        return "holds" if high < hi_bound else "does not hold" if low > hi_bound else "inconclusive"
    # within: inside the range, or missing it altogether
    return "holds" if lo_bound <= low and high <= hi_bound else "does not hold" if high < lo_bound or low > hi_bound \
        else "inconclusive"


def _margin(cmp: Comparison, estimate: float, low: float, high: float) -> float:
    """How far a comparison is on the claimed side, in half-widths of its interval (above 1: it
    holds; below −1: it does not).
    Ranks comparisons for a row's headline (the weakest one, or the one most against)."""
    if cmp.kind == "ratio":
        estimate, low, high = (math.log(v) for v in (estimate, low, high))
        lo_b, hi_b = (math.log(v) for v in cmp.bound)
    else:
        lo_b = hi_b = 0.0
    se = (high - low) / 2
    if cmp.op == "within":
        gap = min(estimate - lo_b, hi_b - estimate)
    else:
        gap = (estimate - lo_b) if cmp.op == ">" else (hi_b - estimate)
    if se > 0:
        return gap / se
    return math.copysign(math.inf, gap) if gap else 0.0


def _at_trivial(values: np.ndarray, trivial: float, better: str) -> bool:
    """A sample is at the trivial model when its interval does not show it better than the
    trivial value (within noise of it, or worse)."""
    _, low, high = paired_interval(values, trivial)
    return not (high < 0 if better == "lower" else low > 0)


def _check_samples(samples: Mapping, n_seeds: int | None) -> dict[str, np.ndarray]:
    if not isinstance(samples, Mapping) or not samples:
        raise ValueError("samples must be a non-empty dict key → per-seed values")
    out = {}
    for key, values in samples.items():
        _key("samples key", key)
        arr = np.asarray(values, dtype=float)
        if arr.ndim != 1 or (n_seeds is not None and arr.size != n_seeds):
            raise ValueError(f"samples[{key!r}] must hold one value per seed ({n_seeds}), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"samples[{key!r}] must hold finite numbers, got {arr.tolist()}")
        out[key] = arr
    return out


def _check_trivial(trivial: Mapping | None, better, keys) -> tuple[dict[str, float], dict[str, str]]:
    trivial = dict(trivial or {})
    unknown = sorted(set(trivial) - set(keys))
    if unknown:
        raise ValueError(f"trivial names keys that are not samples: {unknown}")
    values = {}
    for key, value in trivial.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(value)):
            raise ValueError(f"trivial[{key!r}] must be a finite number (the trivial model's value), got {value!r}")
        values[key] = float(value)
    if not values:
        return {}, {}
    if isinstance(better, str):
        better = {key: better for key in values}
    if not isinstance(better, Mapping):
        raise ValueError("better must be 'lower' or 'higher' (or a dict key → that) when trivial is given, "
                         f"got {better!r}")
    missing = sorted(set(values) - set(better))
    wrong = {k: v for k, v in better.items() if v not in _BETTER}
    if missing or wrong:
        raise ValueError(f"better must say 'lower' or 'higher' for every trivial key; missing {missing}, "
                         f"invalid {wrong}")
    return values, {key: better[key] for key in values}


def evaluate(samples: Mapping, tests: Mapping, *, trivial: Mapping | None = None,
             better: str | Mapping | None = None) -> tuple[dict[str, dict], str]:
    """Decide each comparison of ``tests`` on ``samples`` and the claim's verdict.

    Parameters
    ----------
    samples
        key → per-seed values (paired by position; every sample the same length ≥ 2).
    tests
        name → :func:`compare` / :func:`ratio` (or a ``(lhs, op, rhs)`` triple for :func:`compare`).
    trivial
        key → the trivial model's value of that quantity (zero model's objective, majority-class
        error or accuracy).
    better
        ``"lower"`` or ``"higher"``: which way the trivial keys improve (one word for all, or a
        dict per key); required with ``trivial``.

    Returns
    -------
    comparisons, verdict
        name → ``{"estimate", "low", "high", "outcome", "trivial", "at_trivial"}``
        (``estimate`` the mean difference ``lhs − rhs``, or the factor ``lhs / rhs`` for a ratio;
        ``at_trivial`` per side), and :func:`verdict_rule` on them.
    """
    arrays = _check_samples(samples, None)
    sizes = {a.size for a in arrays.values()}
    if len(sizes) != 1 or min(sizes) < 2:
        raise ValueError(f"every sample must hold the same number (≥ 2) of per-seed values, got sizes "
                         f"{sorted(sizes)}")
    trivial_values, direction = _check_trivial(trivial, better, arrays)
    if not isinstance(tests, Mapping) or not tests:
        raise ValueError("tests must hold at least one comparison")
    at_trivial = {k: _at_trivial(arrays[k], v, direction[k]) for k, v in trivial_values.items()}
    out = {}
    for name, spec in tests.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"a test's name must be a non-empty string, got {name!r}")
        cmp = Comparison.from_dict(spec)
        for key in cmp.keys():
            if key not in arrays:
                raise ValueError(f"tests[{name!r}]: {key!r} is not a key of samples ({sorted(arrays)})")
        rhs = arrays[cmp.rhs] if isinstance(cmp.rhs, str) else cmp.rhs
        estimate, low, high = paired_interval(arrays[cmp.lhs], rhs, log=cmp.kind == "ratio")
        lo_b, hi_b = cmp.bound if cmp.kind == "ratio" else (0.0, 0.0)
        sides = [at_trivial.get(k) for k in cmp.keys()]
        out[name] = {
            "estimate": estimate, "low": low, "high": high,
            "outcome": _outcome(low, high, lo_b, hi_b, cmp.op),
            # trivial: every side has a trivial value and none is shown better than it
            "trivial": all(s is True for s in sides),
            "at_trivial": sides,
        }
    return out, verdict_rule(out)


def comparison_table(comparisons: Mapping[str, Mapping], *, caption: str, digits: int = 4):
    """The comparisons of :func:`evaluate` as a chapter shows them (:func:`dpadmm_book.viz.table`): one row per
    comparison with its estimate, the interval's ends, its outcome and whether both sides are at the trivial model
    ("yes" / "no", not True / False), under ``caption``."""
    import pandas as pd

    from .viz import table

    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError("comparisons must be the non-empty first result of evaluate()")
    frame = pd.DataFrame([{"comparison": name, "estimate": float(c["estimate"]), "low": float(c["low"]),
                           "high": float(c["high"]), "outcome": c["outcome"],
                           "at the trivial model": "yes" if c["trivial"] else "no"} for name, c in comparisons.items()])
    return table(frame, caption=caption, digits=digits)


def verdict_rule(comparisons: Mapping[str, Mapping]) -> str:
    """A claim's verdict from its comparisons (``outcome`` and ``trivial`` of each).

    A claim is the conjunction of its comparisons, and a trivial comparison decides nothing:

    * ``"does not hold here"`` if some non-trivial comparison does not hold;
    * else ``"holds"`` if every comparison holds and none is trivial;
    * else ``"at the trivial model"`` if every comparison is trivial;
    * else ``"inconclusive"``.

    Requiring each of k comparisons at 95 % to call a claim "holds" keeps the chance of calling a
    false claim "holds" at most 2.5 % (an intersection–union test); a single reversed comparison
    among many can be chance (2.5 % each when the true difference is zero), which is why the
    table shows every comparison.
    """
    if not comparisons:
        raise ValueError("a claim needs at least one comparison")
    decided = [c for c in comparisons.values() if not c["trivial"]]
    if any(c["outcome"] == "does not hold" for c in decided):
        return "does not hold here"
    if len(decided) == len(comparisons) and all(c["outcome"] == "holds" for c in decided):
        return "holds"
    if not decided:
        return "at the trivial model"
    return "inconclusive"


# ----------------------------------------------------------------------------- records of means only
def _value(measured: dict, term):
    if isinstance(term, str):
        if term not in measured:
            raise ValueError(f"tests: {term!r} is not a key of measured ({sorted(measured)})")
        return float(measured[term])
    return float(term)


def verdict_of(measured: dict, tests: dict) -> str:
    """The verdict of a record of means only (no interval): ``tests`` (name → (lhs, op, rhs), a
    side a key of ``measured`` or a number) as strict comparisons of means — ``"holds"`` when all
    are true, ``"does not hold here"`` when none is, ``"holds partly"`` otherwise. A record with
    per-seed samples is decided by :func:`evaluate`."""
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


# ----------------------------------------------------------------------------- preconditions
@dataclass(frozen=True)
class Precondition:
    """What must hold for a comparison to say anything about a paper's claim; build it with
    :func:`learns` (decided from the record's samples) or :func:`given` (checked by the chapter)."""

    kind: str
    ok: bool | None = None
    reason: str = ""
    key: str | None = None
    trivial: float | None = None
    better: str | None = None

    def to_dict(self) -> dict:
        if self.kind == "given":
            return {"kind": "given", "ok": bool(self.ok), "reason": self.reason}
        return {"kind": "learns", "key": self.key, "trivial": self.trivial, "better": self.better}

    @classmethod
    def from_dict(cls, spec) -> Precondition:
        if isinstance(spec, Precondition):
            return spec
        if not isinstance(spec, Mapping) or spec.get("kind") not in ("learns", "given"):
            raise ValueError(f"a precondition must be learns(...) or given(...), got {spec!r}")
        if spec["kind"] == "given":
            return given(spec.get("ok"), spec.get("reason"))
        return learns(spec.get("key"), trivial=spec.get("trivial"), better=spec.get("better"))


def learns(key: str, *, trivial: float, better: str) -> Precondition:
    """The precondition "this method learns in the noise-free limit at the setting it runs".

    ``samples[key]`` of the record must hold the per-seed metric of the method's noise-free run
    (ε = ∞, same setting, same iterations); it must beat ``trivial`` (the majority class's error,
    the zero model's objective) by the book's 95 % interval on the side ``better`` (``"lower"`` or
    ``"higher"``): the interval of ``samples[key] − trivial`` lies entirely on that side.
    """
    _key("key", key)
    if isinstance(trivial, bool) or not isinstance(trivial, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(trivial)):
        raise ValueError(f"trivial must be a finite number (the trivial model's value), got {trivial!r}")
    if better not in _BETTER:
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    return Precondition("learns", key=key, trivial=float(trivial), better=better)


def given(ok: bool, reason: str) -> Precondition:
    """A precondition the chapter checked itself, e.g. ``given(change < 1e-3, f"DP-ADMM converged
    noise-free: relative objective change over the last 10 % of iterations {change:.1g} < 1e-3")``;
    ``reason`` is shown on the page (why it holds or why it fails)."""
    if not isinstance(ok, (bool, np.bool_)):
        raise TypeError(f"ok must be a bool (whether the precondition holds), got {ok!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty sentence saying why, got {reason!r}")
    return Precondition("given", ok=bool(ok), reason=reason.strip())


def _g(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def check_preconditions(preconditions: Mapping | None, samples: Mapping,
                        labels: Mapping | None = None) -> dict[str, dict]:
    """Decide each precondition on the record's samples: name → its stored form with ``ok`` and
    ``reason`` (why it holds or fails, in words)."""
    if preconditions is None:
        return {}
    if not isinstance(preconditions, Mapping):
        raise ValueError(f"preconditions must be a dict name → learns(...)/given(...), got {preconditions!r}")
    labels = labels or {}
    out = {}
    for name, spec in preconditions.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a precondition's name must be a non-empty string, got {name!r}")
        pre = Precondition.from_dict(spec)
        if pre.kind == "given":
            out[name] = pre.to_dict()
            continue
        if pre.key not in samples:
            raise ValueError(f"preconditions[{name!r}]: {pre.key!r} is not a key of samples ({sorted(samples)})")
        values = np.asarray(samples[pre.key], dtype=float)
        mean, low, high = paired_interval(values, pre.trivial)
        ok = bool(high < 0) if pre.better == "lower" else bool(low > 0)
        word = "below" if pre.better == "lower" else "above"
        d = _decimals(low, high, mean + pre.trivial) + 1
        shown = (f"{labels.get(pre.key, pre.key)}: {_fmt(mean + pre.trivial, d)} "
                 f"(95 % CI {_fmt(low + pre.trivial, d)} to {_fmt(high + pre.trivial, d)})")
        reason = (f"{shown}, {'' if ok else 'not '}{word} the trivial model's {_g(pre.trivial)}"
                  + ("" if ok else " by the interval"))
        out[name] = {**pre.to_dict(), "ok": ok, "reason": reason}
    return out


def _failed(checked: Mapping) -> dict[str, str]:
    return {name: c["reason"] for name, c in checked.items() if not c["ok"]}


# ----------------------------------------------------------------------------- recording
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
           seeds: Sequence[int] | None = None, samples: Mapping | None = None, labels: Mapping | None = None,
           trivial: Mapping | None = None, better: str | Mapping | None = None, paper_value=None,
           note: str = "", measured: Mapping | None = None, preconditions: Mapping | None = None,
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
    measured
        A record of means only (key → mean, ``tests`` triples compared strictly), which no
        interval decides; give ``samples`` and ``seeds`` instead.
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
    if (measured is None) == (samples is None):
        raise ValueError("give samples= (one value per seed, with seeds=) or, for a record of means only, measured=; not both")
    meta = _meta(question, unit, sided, design, over)
    if measured is not None:
        if preconditions:
            raise ValueError("preconditions need per-seed samples (samples=, seeds=), not the old measured= form")
        return _record_old(claim_id, chapter, paper, claim, where, measured, tests, note)
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
    entry = {"id": claim_id, "format": 3, "chapter": chapter, "paper": paper, "claim": claim, "where": where,
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


def _record_old(claim_id, chapter, paper, claim, where, measured, tests, note) -> str:
    measured = {str(k): float(v) for k, v in measured.items()}
    bad = [k for k, v in measured.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"measured must hold finite numbers; not finite: {bad}")
    verdict = verdict_of(measured, tests)
    _write({"id": claim_id, "chapter": chapter, "paper": paper, "claim": claim, "where": where,
            "measured": measured, "tests": {k: list(v) for k, v in tests.items()}, "verdict": verdict, "note": note})
    return verdict


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


# ----------------------------------------------------------------------------- reading
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


def _is_old(entry: dict) -> bool:
    return "measured" in entry and "samples" not in entry


def _problems_old(entry: dict) -> list[str]:
    found = []
    if entry["verdict"] not in OLD_VERDICTS:
        found.append(f"verdict {entry['verdict']!r} is not one of {OLD_VERDICTS}")
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


_STORED = ("estimate", "low", "high")


def problems(entry: dict, *, min_seeds: int = MIN_SEEDS) -> list[str]:
    """What is wrong with a stored record (empty when nothing).

    Missing fields, too few seeds (fewer than ``min_seeds``; the published build passes
    :data:`MIN_SEEDS_FULL`), samples that are not one finite number per seed, a key shown as a
    variable name, and above all stored intervals or a verdict that the record's own samples do
    not give (a typed verdict, or numbers edited after the run). A record of means only is checked
    by its own rule (:func:`verdict_of`).
    """
    base = ("id", "chapter", "paper", "claim", "where", "tests", "verdict")
    fields = base + (("measured",) if _is_old(entry) else
                     ("format", "seeds", "samples", "labels", "trivial", "better", "comparisons", "confidence"))
    missing = [k for k in fields if k not in entry]
    if missing:
        return [f"missing fields {missing}"]
    if _is_old(entry):
        return _problems_old(entry)
    found = []
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
        stored_pre = entry.get("preconditions") or {}
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


# ----------------------------------------------------------------------------- the table
def _paper_rank(claim_id: str) -> int:
    prefix = claim_id.split(".", 1)[0]
    return _PAPER_ORDER.index(prefix) if prefix in _PAPER_ORDER else len(_PAPER_ORDER)


def _decimals(low: float, high: float, value: float) -> int:
    """Decimals that show an interval's width to two significant digits (at most 6)."""
    width = abs(high - low)
    scale = width if width > 0 else abs(value)
    if scale == 0 or not math.isfinite(scale):
        return 2
    return int(min(6, max(0, 1 - math.floor(math.log10(scale)))))


def _fmt(value: float, decimals: int, sign: bool = False) -> str:
    text = f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"
    return text.replace("-", "−")


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


def _question(entry: Mapping) -> str:
    return entry.get("question") or ("book" if entry.get("id") in BOOK_QUESTIONS else "paper")


def evidence(entry: dict):
    """One row per comparison of a record (empty for a record of means only): the comparison,
    what is compared, the effect in the claimed direction with its interval (for a difference:
    positive = as claimed; for a ratio: the factor), its outcome and whether it is trivial.

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
    if _is_old(entry) or not entry.get("comparisons"):
        return pd.DataFrame(columns=columns)
    labels = entry.get("labels", {})
    unit = entry.get("unit", "")
    rows = []
    for name, spec in entry["tests"].items():
        cmp, c = Comparison.from_dict(spec), entry["comparisons"][name]
        est, low, high = _oriented(cmp, c)
        bound = cmp.bound if cmp.kind == "ratio" else (0.0, 0.0)
        sides = [labels.get(k, k) for k, at in zip(cmp.keys(), c.get("at_trivial", [])) if at]
        margin = _margin(cmp, c["estimate"], c["low"], c["high"])
        rows.append({"comparison": name, "compares": _difference_text(cmp, labels), "kind": cmp.kind,
                     "effect": est, "low": low, "high": high, "bound_low": bound[0], "bound_high": bound[1],
                     "outcome": c["outcome"], "trivial": bool(c["trivial"]),
                     "status": "trivial" if c["trivial"] else c["outcome"],
                     "text": _effect_text(cmp, c, labels, unit), "at_trivial": ", ".join(sides), "margin": margin,
                     "at": cmp.at, "toward": bool(margin > 0)})
    return pd.DataFrame(rows, columns=columns)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


#: How the table words a statement over a range that the data split (stated on the page).
SPLIT_RULE = ("Where a paper's statement covers a range (of ε, say) and the data split it, the outcome names "
              "where it holds and where it reverses: a value of the range counts as holding when every "
              "comparison at it holds, as reversing when any comparison at it does not hold, and otherwise as "
              "inconclusive; comparisons at the trivial model decide nothing.")


def _split(entry: Mapping, ev) -> str:
    """Where a statement over a range holds and where it reverses (empty unless the data split it)."""
    over = entry.get("over", "")
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


def _find(claim_id: str, records) -> dict:
    records = load() if records is None else records
    if isinstance(records, Mapping):
        records = list(records.values())
    for entry in records:
        if entry.get("id") == claim_id:
            return entry
    raise KeyError(f"no record of claim {claim_id!r}: run the chapter that records it first")


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
    if _is_old(entry):
        return {"verdict": NO_INTERVAL, "counts": f"{_count(len(entry['tests']), 'comparison')} of means",
                "toward": "", "effects": {}, "effect": "", "split": "", "failed_preconditions": {},
                "preconditions": {}, "question": _question(entry), "unit": "", "sided": "", "design": ""}
    ev = evidence(entry)
    pre = entry.get("preconditions") or {}
    effect, counts = _headline(entry, entry["verdict"])
    return {"verdict": entry["verdict"], "counts": counts,
            "toward": f"{int(ev.toward.sum())} of {len(ev)} point the claimed way",
            "effects": dict(zip(ev.comparison, ev.text)), "effect": effect, "split": _split(entry, ev),
            "failed_preconditions": _failed(pre) if pre else {},
            "preconditions": {name: c["reason"] for name, c in pre.items()},
            "question": _question(entry), "unit": entry.get("unit", ""), "sided": entry.get("sided", "one"),
            "design": entry.get("design", "")}


def check_quote(claim_id: str, comparison: str, value: float, records=None, *, decimals: int | None = None) -> float:
    """Check a number a chapter shows about a comparison against the record, in the book's one
    orientation (positive = the data point the claimed way; a factor for a ratio), and return the
    record's value. ``decimals``: how the chapter rounded it (default: agree to 1 %). Raises
    ``ValueError`` on a flipped sign or another number — a chapter that disagrees with its table."""
    entry = _find(claim_id, records)
    if _is_old(entry) or comparison not in entry.get("tests", {}):
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
    known = [text for e in records if not _is_old(e) and e.get("comparisons") for text in evidence(e)["text"]]
    found = []
    for name, text in texts.items():
        for part in str(text).split("; "):
            quoted = part.split(": ")[-1].strip()
            if "(95 % CI" in quoted and (" better than " in quoted or " ÷ " in quoted) \
                    and not any(k in quoted for k in known):
                found.append(f"{name}: {quoted}")
    return found


def _preconditions_text(entry: Mapping) -> str:
    pre = entry.get("preconditions") or {}
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
    test suite), one of means only as :data:`NO_INTERVAL`.

    Returns
    -------
    pandas.DataFrame
        Indexed by claim id, columns ``paper, claim, chapter, where, verdict, effect, tally,
        toward, split, preconditions, failed, design, unit, sided, question, seeds, note, listed,
        old_verdict`` (``effect``: the deciding comparison with its 95 % interval, as
        :func:`describe` words it; ``tally``: the comparisons' outcomes; ``toward``: how many point
        the claimed way; ``split``: where a statement over a range holds and reverses;
        ``preconditions``: "met", or the failed ones with their reasons; ``question``: "paper" or
        "book"; ``old_verdict``: the verdict by means of a record of means only), papers in book order.
    """
    import pandas as pd

    records = load() if records is None else records
    expected = EXPECTED if expected is None else expected
    by_id = {e["id"]: e for e in records}
    rows = []
    columns = ["id", "paper", "claim", "chapter", "where", "verdict", "effect", "tally", "toward", "split",
               "preconditions", "failed", "design", "unit", "sided", "question", "seeds", "note", "listed",
               "old_verdict"]
    for claim_id in sorted(set(expected) | set(by_id), key=lambda i: (_paper_rank(i), i not in expected, i)):
        entry = by_id.get(claim_id)
        paper, claim = expected.get(claim_id, (None, None))
        row = {"id": claim_id, "paper": paper, "claim": claim, "chapter": claim_id.split(".", 1)[0], "where": "",
               "verdict": NOT_TESTED, "effect": "", "tally": "", "toward": "", "split": "", "preconditions": "",
               "failed": {}, "design": "", "unit": "", "sided": "", "question": _question({"id": claim_id}),
               "seeds": 0, "note": "", "listed": claim_id in expected, "old_verdict": ""}
        if entry is not None:
            bad = problems(entry, min_seeds=min_seeds)
            row.update(paper=entry.get("paper", paper), claim=entry.get("claim", claim),
                       chapter=entry.get("chapter", ""), where=entry.get("where", ""), note=entry.get("note", ""),
                       question=_question(entry))
            if bad:
                row.update(verdict="inconsistent record", note="; ".join(bad))
            elif _is_old(entry):
                row.update(verdict=NO_INTERVAL, old_verdict=entry["verdict"],
                           tally=f"{_count(len(entry['tests']), 'comparison')} of means, no per-seed numbers")
            else:
                d = describe(claim_id, [entry])
                row.update(verdict=entry["verdict"], effect=d["effect"], tally=d["counts"], toward=d["toward"],
                           split=d["split"], preconditions=_preconditions_text(entry),
                           failed=d["failed_preconditions"], design=d["design"], unit=d["unit"],
                           sided=d["sided"], seeds=len(entry["seeds"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns).set_index("id")


# ----------------------------------------------------------------------------- the forest plot
#: Colour of each comparison status in the forest plot (and of each verdict on the page).
STATUS_COLOURS = {"holds": "#1b7837", "does not hold": "#b2182b", "inconclusive": "#b35806", "trivial": "#999999"}


def evidence_chart(entry: dict, *, width: int = 220, label_width: int = 160):
    """A forest plot of a record's comparisons: one row each, the effect in the claimed
    direction with its 95 % interval, a line at zero (a factor's bound, a paper's range as a
    band), coloured by outcome, trivial ones grey. ``None`` for a record of means only (no
    interval). Differences and factors get separate panels (their scales differ)."""
    import altair as alt

    ev = evidence(entry)
    if ev.empty:
        return None
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

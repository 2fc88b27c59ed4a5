"""The statistics a verdict follows from: paired Student-t intervals, each comparison's outcome, and the
rule that makes a claim's verdict of its comparisons (:func:`evaluate`, :func:`verdict_rule`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Coverage of every interval the claims are decided by (two-sided).
CONFIDENCE = 0.95
#: The verdict of a claim whose preconditions fail (:func:`learns`, :func:`given`): its comparisons
#: are computed and shown but decide nothing.
NOT_TESTABLE = "not testable at this setting"
#: A claim's verdicts, decided by its comparisons' intervals (:func:`verdict_rule`) and its
#: preconditions.
VERDICTS = ("holds", "does not hold here", "inconclusive", "at the trivial model", NOT_TESTABLE)
#: A comparison's outcomes (a trivial comparison keeps its outcome but decides nothing).
OUTCOMES = ("holds", "does not hold", "inconclusive")
_BETTER = ("lower", "higher")


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


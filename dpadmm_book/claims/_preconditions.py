"""What must hold before a comparison says anything about a paper's claim: each method learns in the
noise-free limit at the setting it runs (:func:`learns`), and whatever the chapter checked itself
(:func:`given`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._format import _decimals, _fmt, _g
from ._stats import _BETTER, _key, paired_interval


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

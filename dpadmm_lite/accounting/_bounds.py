"""A ledger grouped for the accountant, and every sound bound on its ε (exact μ-GDP, PLD, RDP,
pure-DP summation) by name."""

from __future__ import annotations

import math

import numpy as np

from ..privacy import PrivacyEvent
from . import _pld
from ._gdp import _gdp_epsilon
from ._rdp import ORDERS, _Composition, _eps_per_order, _rdp_to_epsilon


#: Below this noise multiplier z = σ/Δ a Gaussian release's ε at any δ < 1/2 exceeds 1e299 (≈ 1/(2z²)),
#: and 1/z² leaves floating point: the ledger's ε is reported as ∞ (sound: never smaller than the truth).
GAUSSIAN_Z_FLOOR = 1e-150
#: Sampling rates below this are accounted as this rate: ε only grows with q (the pair at q is the pair at
#: q' > q mixed with the same N(0, σ²), and the hockey-stick divergence is jointly convex), so this is
#: sound, and it keeps the PLD's grid and the RDP's logarithms inside floating point (q = 1e-310 is
#: subnormal and 1/q overflows).
SAMPLING_RATE_FLOOR = 1e-300
#: A pure release with ε₀ = ζΔ above this overflows exp(ε₀); such releases are composed by plain summation.
PURE_EPSILON_CAP = 700.0


def _check_events(events) -> list[PrivacyEvent]:
    try:
        events = list(events)
    except TypeError:
        raise TypeError(f"events must be a list (any iterable) of PrivacyEvent records, got {events!r}") from None
    for e in events:
        if not isinstance(e, PrivacyEvent):
            raise ValueError(f"events must be PrivacyEvent records, got {type(e).__name__}")
    return events


def _composition(events: list[PrivacyEvent]) -> _Composition:
    return _reduce(events)[0]


def _reduce(events: list[PrivacyEvent]) -> tuple[_Composition, _pld.Releases]:
    """Group a ledger: the RDP groups (exact keys) and the PLD releases (≤ 128 distinct pieces a kind).

    A replace-one release (sensitivity = the per-record bound C) on the full data is a release
    with sensitivity 2C; sampled, it keeps its own group (the replace-one pair, never merged
    with add/remove releases).
    """
    comp = _Composition()
    for e in events:
        replace_one = e.neighbours == "replace_one"
        if e.mechanism == "gaussian":
            z = e.noise / e.sensitivity
            if e.sampling_rate == 1.0:
                comp.full_inv_z2 += e.count * (4.0 if replace_one else 1.0) / (z * z)
            else:
                group = comp.replaced if replace_one else comp.sampled
                key = (z, e.sampling_rate)
                group[key] = group.get(key, 0) + e.count
        else:  # laplace_l2: pure ε₀ = ζΔ per release (ζ·2C when a record is replaced on the full data)
            e0 = e.noise * e.sensitivity
            if replace_one and e.sampling_rate == 1.0:
                key, group = (2.0 * e0, 1.0), comp.laplace
            else:
                key, group = (e0, e.sampling_rate), comp.laplace_replaced if replace_one else comp.laplace
            group[key] = group.get(key, 0) + e.count
    return comp, _pld.group(comp.full_inv_z2, comp.sampled, comp.laplace, replaced=comp.replaced,
                            pure_replaced=comp.laplace_replaced)


def _scaled(comp: _Composition, releases: _pld.Releases, s: float) -> tuple[_Composition, _pld.Releases]:
    """The same ledger with every noise ``s`` times larger (σ·s, ζ/s)."""
    out = _Composition()
    out.full_inv_z2 = comp.full_inv_z2 / (s * s)
    out.sampled = {(z * s, q): c for (z, q), c in comp.sampled.items()}
    out.laplace = {(e0 / s, q): c for (e0, q), c in comp.laplace.items()}
    out.replaced = {(z * s, q): c for (z, q), c in comp.replaced.items()}
    out.laplace_replaced = {(e0 / s, q): c for (e0, q), c in comp.laplace_replaced.items()}
    return out, releases.scaled(s)


#: Names of the bounds, as ``PrivacyGuarantee.source`` reports the one that won.
GDP, PLD, RDP, PURE, FULL_BATCH = (
    "exact Gaussian composition (μ-GDP)",
    "privacy loss distribution (PLD)",
    "Rényi DP (RDP)",
    "pure-DP basic composition",
    "μ-GDP of the same noise without sampling",
)
_INT_ORDERS = ORDERS[ORDERS >= 2]
_INT_ORDERS.setflags(write=False)
_SMALL_INT, _LARGE_INT = _INT_ORDERS[_INT_ORDERS <= 64], _INT_ORDERS[_INT_ORDERS > 64]
#: A sparser set for ledgers of many distinct releases (their RDP is a side bound and a window estimate)
_FEW_INT = np.array([2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64], dtype=float)


def _hint_values(orders: np.ndarray, r: np.ndarray, delta: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return r + math.log(1.0 / (_pld._TAIL_SHARE * delta)) / (orders - 1)


def _int_curve(comp: _Composition, delta: float, small: np.ndarray = _SMALL_INT) -> tuple[np.ndarray, np.ndarray]:
    """The RDP curve at the integer orders ≤ 64 (``small``), and at the ladder above only when the
    window hint's or the ε's best order is ≥ 48 (skipping orders costs tightness, never soundness)."""
    r = comp.rdp(small)
    best = max(int(np.nanargmin(_hint_values(small, r, delta))), int(np.argmin(_eps_per_order(small, r, delta))))
    if small[best] < 48:
        return small, r
    return np.concatenate([small, _LARGE_INT]), np.concatenate([r, comp.rdp(_LARGE_INT)])


def _window_hint(comp: _Composition, delta: float, curve: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """Where the composed privacy loss ends: the Chernoff (classical RDP) bound at the PLD's tail share."""
    orders, r = _int_curve(comp, delta) if curve is None else curve
    return float(np.nanmin(_hint_values(orders, r, delta)))


def _grouped_composition(releases: _pld.Releases) -> _Composition:
    """The RDP groups of a ledger as the PLD grouped them (pessimistic: sound, a little looser, and
    at most 128 distinct groups of a kind to evaluate)."""
    out = _Composition()
    out.full_inv_z2 = releases.gaussian_mu2
    for target, items in ((out.sampled, releases.sampled), (out.laplace, releases.pure),
                          (out.replaced, releases.replaced), (out.laplace_replaced, releases.pure_replaced)):
        for a, q, c in items:
            target[(a, q)] = target.get((a, q), 0) + c
    return out


def _bounds(comp: _Composition, releases: _pld.Releases, delta: float, *, refine_rdp: bool = False,
            points: int = _pld.POINTS) -> dict[str, float]:
    """Every sound bound on the ledger's ε at δ the accountant has, by name (see :func:`ledger_bounds`)."""
    if releases.only_gaussian:  # full-batch Gaussians only: the truth
        return {GDP: _gdp_epsilon(math.sqrt(releases.gaussian_mu2), delta)}
    bounds: dict[str, float] = {}
    # a ledger of many distinct releases: its RDP curve from the PLD's (pessimistic) groups
    if releases.grouped:
        orders, r = _int_curve(_grouped_composition(releases), delta, _FEW_INT)
    else:
        orders, r = _int_curve(comp, delta)
    value = _pld.epsilon(releases, delta, upper=_window_hint(comp, delta, (orders, r)), points=points)
    if value is not None:
        bounds[PLD] = value
    if value is None or refine_rdp:
        bounds[RDP] = comp.epsilon(delta)
    else:  # integer orders only: sound, a little looser, and ~10x cheaper
        bounds[RDP] = _rdp_to_epsilon(orders, r, delta)
    if not comp.laplace and not comp.laplace_replaced:
        # sampled Gaussians are dominated by the same Gaussians on the full data (a replace-one
        # release with per-record bound C by a Gaussian with sensitivity 2C)
        mu2 = (comp.full_inv_z2 + sum(c / (z * z) for (z, _), c in comp.sampled.items())
               + sum(4.0 * c / (z * z) for (z, _), c in comp.replaced.items()))
        bounds[FULL_BATCH] = _gdp_epsilon(math.sqrt(mu2), delta)
    elif not comp.sampled and not comp.replaced and comp.full_inv_z2 == 0:  # pure DP only: plain summation
        bounds[PURE] = (sum(c * (e0 if q == 1.0 else math.log1p(q * math.expm1(e0)))
                            for (e0, q), c in comp.laplace.items())
                        + sum(c * _pld.replace_pure_epsilon(e0, q) for (e0, q), c in comp.laplace_replaced.items()))
    return bounds

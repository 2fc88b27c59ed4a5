"""A ledger grouped for the accountant, and every sound bound on its ε (exact μ-GDP, PLD, RDP,
pure-DP summation) by name."""

from __future__ import annotations

import math

import numpy as np

from ..privacy import PrivacyEvent
from . import _pld
from ._gdp import _gdp_epsilon
from ._rdp import ORDERS, _Composition, _rdp_to_epsilon


def _check_events(events) -> list[PrivacyEvent]:
    events = list(events)
    for e in events:
        if not isinstance(e, PrivacyEvent):
            raise ValueError(f"events must be PrivacyEvent records, got {type(e).__name__}")
    return events


def _composition(events: list[PrivacyEvent]) -> _Composition:
    return _reduce(events)[0]


def _reduce(events: list[PrivacyEvent]) -> tuple[_Composition, _pld.Releases]:
    """Group a ledger: the RDP groups (exact keys) and the PLD releases (≤ 64 distinct pieces)."""
    comp = _Composition()
    for e in events:
        if e.mechanism == "gaussian":
            z = e.noise / e.sensitivity
            if e.sampling_rate == 1.0:
                comp.full_inv_z2 += e.count / (z * z)
            else:
                key = (z, e.sampling_rate)
                comp.sampled[key] = comp.sampled.get(key, 0) + e.count
        else:  # laplace_l2: pure ε₀ = ζΔ per release
            key = (e.noise * e.sensitivity, e.sampling_rate)
            comp.laplace[key] = comp.laplace.get(key, 0) + e.count
    return comp, _pld.group(comp.full_inv_z2, comp.sampled, comp.laplace)


def _scaled(comp: _Composition, releases: _pld.Releases, s: float) -> tuple[_Composition, _pld.Releases]:
    """The same ledger with every noise ``s`` times larger (σ·s, ζ/s)."""
    out = _Composition()
    out.full_inv_z2 = comp.full_inv_z2 / (s * s)
    out.sampled = {(z * s, q): c for (z, q), c in comp.sampled.items()}
    out.laplace = {(e0 / s, q): c for (e0, q), c in comp.laplace.items()}
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


def _window_hint(comp: _Composition, delta: float, rdp: np.ndarray | None = None) -> float:
    """Where the composed privacy loss ends: the Chernoff (classical RDP) bound at the PLD's tail share."""
    r = comp.rdp(_INT_ORDERS) if rdp is None else rdp
    with np.errstate(invalid="ignore"):
        values = r + math.log(1.0 / (_pld._TAIL_SHARE * delta)) / (_INT_ORDERS - 1)
    return float(np.nanmin(values))


def _bounds(comp: _Composition, releases: _pld.Releases, delta: float, *, refine_rdp: bool = False,
            points: int = _pld.POINTS) -> dict[str, float]:
    """Every sound bound on the ledger's ε at δ the accountant has, by name (see :func:`ledger_bounds`)."""
    if not releases.sampled and not releases.pure:  # full-batch Gaussians only: the truth
        return {GDP: _gdp_epsilon(math.sqrt(releases.gaussian_mu2), delta)}
    bounds: dict[str, float] = {}
    r = comp.rdp(_INT_ORDERS)
    value = _pld.epsilon(releases, delta, upper=_window_hint(comp, delta, r), points=points)
    if value is not None:
        bounds[PLD] = value
    if value is None or refine_rdp:
        bounds[RDP] = comp.epsilon(delta)
    else:  # integer orders only: sound, a little looser, and ~10x cheaper
        bounds[RDP] = _rdp_to_epsilon(_INT_ORDERS, r, delta)
    if not comp.laplace:  # sampled Gaussians are dominated by the same Gaussians on the full data
        mu2 = comp.full_inv_z2 + sum(c / (z * z) for (z, _), c in comp.sampled.items())
        bounds[FULL_BATCH] = _gdp_epsilon(math.sqrt(mu2), delta)
    elif not comp.sampled and comp.full_inv_z2 == 0:  # pure DP only: plain summation
        bounds[PURE] = sum(c * (e0 if q == 1.0 else math.log1p(q * math.expm1(e0)))
                           for (e0, q), c in comp.laplace.items())
    return bounds

"""The privacy records: one kind of noisy release (:class:`PrivacyEvent`) and an (ε, δ) statement.

This module is the one home of the records that the algorithms write, the accountant reads
(:mod:`dpadmm_lite.accounting`) and a :class:`~dpadmm_lite.trace.Trace` carries, so that those
modules depend on it and not on each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import _validate as check

__all__ = ["MECHANISMS", "PrivacyEvent", "PrivacyGuarantee", "NO_PRIVACY"]

#: The noise families the accountant understands.
MECHANISMS = ("gaussian", "laplace_l2")


@dataclass(frozen=True)
class PrivacyEvent:
    """One kind of noisy release, repeated ``count`` times.

    Parameters
    ----------
    mechanism
        ``"gaussian"`` (noise ``N(0, noise² I)``) or ``"laplace_l2"`` (density
        ``∝ exp(-noise · ‖x‖₂)``, the ℓ2-Laplace noise of Zhang & Zhu, ``noise`` = ζ).
    sensitivity
        ℓ2-sensitivity of the released quantity to one record of the protected dataset.
    noise
        σ (Gaussian standard deviation) or ζ (ℓ2-Laplace rate), in the units of the release.
    count
        How many releases with exactly these parameters the run made.
    sampling_rate
        Probability that a given record takes part in one release (Poisson sampling); 1 when
        every release touches the whole dataset.
    note
        What was released, in words (``"x-update gradient"``, ``"agent broadcast"``).
    """

    mechanism: str
    sensitivity: float
    noise: float
    count: int = 1
    sampling_rate: float = 1.0
    note: str = ""

    def __post_init__(self):
        check.choice("mechanism", self.mechanism, MECHANISMS)
        check.positive("sensitivity", self.sensitivity)
        check.positive("noise", self.noise)
        check.count("count", self.count)
        check.half_open_unit("sampling_rate", self.sampling_rate)

    def scaled(self, factor: float) -> "PrivacyEvent":
        """The same release with its noise ``factor`` times larger (σ·factor, or ζ/factor).

        Calibration keeps an algorithm's noise *shape* (which release gets how much noise) and
        only scales it: :func:`dpadmm_lite.accounting.calibrate_ledger` searches this factor.
        """
        factor = check.positive("factor", factor)
        noise = self.noise * factor if self.mechanism == "gaussian" else self.noise / factor
        return replace(self, noise=noise)

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ for Gaussian events (the scale-free noise the accountant needs)."""
        if self.mechanism != "gaussian":
            raise ValueError("noise_multiplier is defined for Gaussian events only")
        return self.noise / self.sensitivity


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ) statement and where it comes from.

    ``source`` names the accountant or theorem (``"Xu et al. 2020, Thm 1"``,
    ``"unified accountant: PLD"``); ``statement`` is the guarantee in words, e.g. the paper's
    per-iteration claim when the paper gives no end-to-end number.
    """

    epsilon: float
    delta: float
    source: str
    statement: str = ""

    def __str__(self) -> str:
        eps = "∞" if math.isinf(self.epsilon) else f"{self.epsilon:.4g}"
        return f"(ε={eps}, δ={self.delta:.1e}) — {self.source}"


NO_PRIVACY = PrivacyGuarantee(math.inf, 0.0, "no noise: not private")

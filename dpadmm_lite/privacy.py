"""The privacy records: one kind of noisy release (:class:`PrivacyEvent`) and an (ε, δ) statement.

This module is the one home of the records that the algorithms write, the accountant reads
(:mod:`dpadmm_lite.accounting`) and a :class:`~dpadmm_lite.trace.Trace` carries, so that those
modules depend on it and not on each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from . import _validate as check

__all__ = ["MECHANISMS", "NEIGHBOURS", "PrivacyEvent", "PrivacyGuarantee", "NO_PRIVACY", "SECRET_SEED"]

#: The noise families the accountant understands.
MECHANISMS = ("gaussian", "laplace_l2")
#: The neighbouring relations a release's sensitivity can refer to (:attr:`PrivacyEvent.neighbours`).
NEIGHBOURS = ("add_remove", "replace_one")


@dataclass(frozen=True)
class PrivacyEvent:
    """One kind of noisy release, repeated ``count`` times.

    Parameters
    ----------
    mechanism : {"gaussian", "laplace_l2"}
        ``"gaussian"`` (noise ``N(0, noise² I)``) or ``"laplace_l2"`` (density
        ``∝ exp(-noise · ‖x‖₂)``, the ℓ2-Laplace noise of Zhang & Zhu, ``noise`` = ζ).
    sensitivity : float
        ℓ2-sensitivity of the released quantity to one record of the protected dataset.
    noise : float
        σ (Gaussian standard deviation) or ζ (ℓ2-Laplace rate), in the units of the release.
    count : int, default 1
        How many releases with exactly these parameters the run made.
    sampling_rate : float, default 1.0
        Probability that a given record takes part in one release (Poisson sampling); 1 when
        every release touches the whole dataset.
    note : str, default ""
        What was released, in words (``"x-update gradient"``, ``"agent broadcast"``).
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        Which neighbouring datasets ``sensitivity`` refers to. ``"add_remove"`` (the default):
        ``sensitivity`` bounds how far adding or removing one record moves the release, and a
        sampled release is analysed as Poisson sampling with add/remove neighbours (DP-SGD's
        convention). ``"replace_one"``: ``sensitivity`` is the per-record bound ``C`` — every
        record's contribution to the release has ℓ2-norm at most ``C``, so replacing one record
        moves the release by at most ``2C`` — and a sampled release is analysed with the exact
        replace-one pair of the Poisson-subsampled mechanism (``q·N(+C, σ²) + (1 − q)·N(0, σ²)``
        against ``q·N(−C, σ²) + (1 − q)·N(0, σ²)``), which is tighter than recording the same
        release as add/remove with sensitivity ``2C``. Unsampled, a ``"replace_one"`` release is
        a release with sensitivity ``2C``.
    """

    mechanism: str
    sensitivity: float
    noise: float
    count: int = 1
    sampling_rate: float = 1.0
    note: str = ""
    neighbours: str = "add_remove"

    def __post_init__(self):
        check.choice("mechanism", self.mechanism, MECHANISMS)
        check.choice("neighbours", self.neighbours, NEIGHBOURS)
        # stored as Python floats and an int: a Fraction, a Decimal or a numpy scalar is accounted as its float
        # (the accountant's arithmetic mixes them with floats, which a Decimal refuses)
        object.__setattr__(self, "sensitivity", check.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "noise", check.positive("noise", self.noise))
        object.__setattr__(self, "count", check.count("count", self.count))
        object.__setattr__(self, "sampling_rate", check.half_open_unit("sampling_rate", self.sampling_rate))

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
        """σ / Δ for Gaussian events (the scale-free noise the accountant needs; σ/C for
        ``neighbours="replace_one"``)."""
        if self.mechanism != "gaussian":
            raise ValueError("noise_multiplier is defined for Gaussian events only")
        return self.noise / self.sensitivity


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ) statement and where it comes from.

    Parameters
    ----------
    epsilon : float
        ε of the guarantee (``math.inf`` when nothing is guaranteed; must be ∞ when not covered).
    delta : float
        δ of the guarantee.
    source : str
        The accountant or theorem the statement comes from.
    statement : str, default ""
        The guarantee in words.
    covered : bool, default True
        False when something the run used reads the private data outside the ledger.
    reason : str, default ""
        Why the guarantee is not covered; required when ``covered`` is False.
    assumes : str, default ""
        A condition the guarantee rests on beyond the ledger (e.g. :data:`SECRET_SEED`).

    Notes
    -----
    ``source`` names the accountant or theorem (``"Xu et al. 2020, Thm 1"``,
    ``"unified accountant: PLD"``); ``statement`` is the guarantee in words, e.g. the paper's
    per-iteration claim when the paper gives no end-to-end number.

    ``assumes`` names a condition the guarantee rests on beyond the ledger: :data:`SECRET_SEED` for a
    run whose noise a caller's seed drew (whoever knows the seed can subtract the noise).

    ``covered`` is False when something the run used reads the private data outside the ledger
    (a step size or graph computed from the training rows, the paper's ``c_w = ‖w*‖``, an
    objective-perturbation solve that stopped short of its certified tolerance): no guarantee
    covers such a run, so its ε is ∞ and ``reason`` says why (:meth:`not_covered`). A guarantee
    that is not covered cannot carry a finite ε.
    """

    epsilon: float
    delta: float
    source: str
    statement: str = ""
    covered: bool = True
    reason: str = ""
    assumes: str = ""

    def __post_init__(self):
        if not isinstance(self.covered, (bool, np.bool_)):
            raise TypeError(f"covered must be True or False, got {self.covered!r}")
        if not self.covered:
            if not math.isinf(self.epsilon):
                raise ValueError(f"epsilon must be ∞ for a guarantee that is not covered (covered=False), got "
                                 f"{self.epsilon!r}: a run no guarantee covers cannot report a finite ε")
            if not self.reason:
                raise ValueError("reason must say why a guarantee is not covered (covered=False)")

    def not_covered(self, reason: str) -> "PrivacyGuarantee":
        """This guarantee voided because ``reason`` (something outside the ledger reads the private data).

        ε becomes ∞; the statement keeps what the ledger alone would have given, for reading, not
        as a guarantee. Voiding twice joins the reasons.
        """
        if not reason:
            raise ValueError("reason must say why the guarantee is not covered")
        if not self.covered:
            return replace(self, reason=f"{self.reason}; {reason}")
        ledger = "∞" if math.isinf(self.epsilon) else f"{self.epsilon:.4g}"
        statement = (f"NOT COVERED: {reason}. The ledger alone would give ε = {ledger} ({self.source}), but no "
                     "guarantee covers what the ledger does not record.")
        return replace(self, epsilon=math.inf, statement=statement, covered=False, reason=reason)

    def __str__(self) -> str:
        eps = "∞" if math.isinf(self.epsilon) else f"{self.epsilon:.4g}"
        text = f"(ε={eps}, δ={self.delta:.1e}) — {self.source}"
        return text if self.covered else f"{text} — NOT COVERED: {self.reason}"


NO_PRIVACY = PrivacyGuarantee(math.inf, 0.0, "no noise: not private")

#: What a guarantee assumes when a caller's seed drew the noise (:attr:`PrivacyGuarantee.assumes`).
SECRET_SEED = ("the seed passed to the run stays secret: it reproduces every noise draw, and with it the "
               "released model is no longer private")

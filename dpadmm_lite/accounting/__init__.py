"""Privacy accounting: one accountant for every algorithm, and each paper's own guarantee.

The book reports every run's privacy twice: as the paper states it and under the one
accountant of this module, applied to the run's ledger of noisy releases
(:class:`~dpadmm_lite.trace.PrivacyEvent`). The accountant is *sound first* — it never reports
an ε smaller than the truth — and *tight second*:

* **Gaussian releases on the full data** (sampling rate 1) compose exactly: ``k`` releases with
  noise multipliers ``z_i = σ_i/Δ_i`` are together one Gaussian mechanism with
  ``μ = √(Σ 1/z_i²)`` (μ-GDP, Dong, Roth & Su 2022), whose exact (ε, δ) curve is the analytic
  Gaussian mechanism of Balle & Wang (2018):
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``. This is the true ε, not a bound.
* **Every other ledger** (Poisson-subsampled Gaussian releases, ℓ2-Laplace releases, mixtures
  of all three) goes through its **privacy loss distribution** (PLD, :mod:`dpadmm_lite.accounting._pld`):
  each kind of release is replaced by a dominating pair of distributions — the Gaussian pair,
  the two pairs (remove and add) of the Poisson-subsampled Gaussian, its replace-one pair
  ``q·N(+C, σ²) + (1 − q)·N(0, σ²)`` against ``q·N(−C, σ²) + (1 − q)·N(0, σ²)``, binary randomized response
  with ε₀ for a pure ε₀-DP ℓ2-Laplace release (it dominates every ε₀-DP mechanism, Kairouz, Oh &
  Viswanath 2015) — discretised pessimistically (connect-the-dots, Doroshenko et al. 2022), and
  composed by one FFT with the tail mass it cannot hold counted as infinite loss. That is
  within 10⁻³ (relative; typically 10⁻⁵–10⁻⁴) of the true ε, never below it, in a few milliseconds.
* **Rényi DP** (Mironov 2017) is computed alongside, as a second sound bound and as the
  fallback where the PLD is not attempted (losses spread over more than 10⁴ nats): the RDP of
  the sampled Gaussian exactly at integer orders (Mironov, Talwar & Zhang 2019, the binomial
  expansion of ``A_α``), at fractional orders by a trapezoidal rule accurate to ~1e-16 and
  rounded up (with the convexity bound of ``(α − 1)·D_α`` as fallback; dp-accounting's
  fractional-order series over-estimates there); ℓ2-Laplace through randomized response; RDP
  curves add up and are converted with Canonne, Kamath & Steinke (2020) / Balle et al. (2020):
  ``ε = RDP(α) + log((α−1)/α) − (log δ + log α)/(α − 1)``, minimised over α.
* The accountant reports the **smallest** of the sound bounds it has (exact μ-GDP when it
  applies, PLD, RDP, pure-DP summation for pure ledgers); :class:`PrivacyGuarantee` says which
  one won (``source``) and lists the others (``statement``). Calibration (``calibrate_noise``,
  ``calibrate_ledger``) searches the noise against that same number.

Neighbouring relation. Every sensitivity is "how much one record can move the released
quantity" and is taken as given. By default (``PrivacyEvent.neighbours = "add_remove"``) the
amplification analysis of sampled events (``sampling_rate < 1``) is the one of Poisson
subsampling with add/remove-one neighbours (Mironov et al. 2019; what DP-SGD uses); pass the
sensitivity of adding or removing one record. With ``neighbours="replace_one"`` the sensitivity
is the per-record bound C (every record's contribution has norm ≤ C, so replacing one moves the
release by ≤ 2C): unsampled, that is a release with sensitivity 2C; sampled, the exact replace-one
pair above (within 0.4 % of dp-accounting's REPLACE_ONE PLD; recording it as add/remove with 2C
overstated ε by up to 7×), and for ℓ2-Laplace the tight amplification
``ε₀ + log(1 + q(e^{ε₀} − 1)) − log(1 + (1 − q)(e^{ε₀} − 1))`` with ``ε₀ = ζC``. Replace-one and
add/remove releases are grouped apart; ``gaussian_epsilon`` and ``calibrate_noise`` take the same
``neighbours=`` option.

Ledgers and agents. The accountant composes *all* events of a ledger as if they touched the
same record. When agents hold disjoint data, record the releases of the most exposed agent
only (recording everything is safe, merely pessimistic).

Public surface
--------------
``classic_gaussian_sigma``, ``gaussian_epsilon``, ``calibrate_noise``, ``gaussian_delta``,
``gdp_epsilon``, ``advanced_composition``, ``basic_composition``, ``composition_epsilons``,
``noise_for_budget``, ``gaussian_rdp``, ``sampled_gaussian_rdp``,
``laplace_rdp``, ``rdp_to_epsilon``, ``rdp_gaussian_epsilon``, ``pld_gaussian_epsilon``,
``privacy_loss_distribution``,
``ledger_rdp``, ``ledger_bounds``, ``ledger_epsilon``, ``ledger_guarantee``, ``calibrate_ledger``
(memoised: ``forget_ledgers`` empties the memo),
the cost of hyper-parameter selection ``tuning_epsilon``, ``selection_rdp``, ``selection_epsilon``,
``truncated_negative_binomial_mean``, ``truncated_negative_binomial_gamma``,
``truncated_negative_binomial_pmf``, ``sample_repetitions``, ``repetitions_tail``, ``never_tried_probability`` (``_selection``), and the papers' own statements ``xu2020_*``, ``huang2019_*``, ``cyffers2023_*``,
``liu2022_*``, ``zhang2017_*``.

Where each part lives (private modules; this package re-exports the public names)
-------------------------------------------------------------------------------------
Single releases
    ``_rdp``  Rényi DP of one (sampled) Gaussian or ℓ2-Laplace release; RDP → (ε, δ);
    ``_gdp``  the exact Gaussian (μ-GDP) curve;
    ``_pld``  privacy loss distributions: dominating pairs, discretisation, FFT composition.
Composition and calibration
    ``_gaussian``     ε of T (sampled) Gaussian releases and ``calibrate_noise``;
    ``_composition``  basic and advanced composition, and the noise each analysis needs;
    ``_search``       the calibration search shared by ``calibrate_noise`` and ``calibrate_ledger``.
The ledger
    ``_bounds``  a ledger grouped for the accountant and every sound bound on its ε;
    ``_ledger``  ``ledger_epsilon``, ``ledger_guarantee``, ``calibrate_ledger``, …
The papers' own guarantees, one module per paper
    ``_xu2020``, ``_huang2019``, ``_cyffers2023``, ``_liu2022``, ``_zhang2017`` (``_shared``: their
    common argument helpers).
"""

from ..privacy import NEIGHBOURS, PrivacyEvent, PrivacyGuarantee  # noqa: F401
from . import _pld  # noqa: F401
from ._rdp import (  # noqa: F401
    ORDERS,
    gaussian_rdp,
    sampled_gaussian_rdp,
    laplace_rdp,
    rdp_to_epsilon,
)
from ._gdp import (  # noqa: F401
    gaussian_delta,
    gdp_epsilon,
)
from ._gaussian import (  # noqa: F401
    classic_gaussian_sigma,
    gaussian_epsilon,
    rdp_gaussian_epsilon,
    pld_gaussian_epsilon,
    privacy_loss_distribution,
    calibrate_noise,
)
from ._composition import (  # noqa: F401
    basic_composition,
    advanced_composition,
    composition_epsilons,
    noise_for_budget,
)
from ._bounds import (  # noqa: F401
    GDP,
    PLD,
    RDP,
    PURE,
    FULL_BATCH,
)
from ._ledger import (  # noqa: F401
    ledger_rdp,
    ledger_bounds,
    ledger_epsilon,
    ledger_guarantee,
    calibrate_ledger,
    forget_ledgers,
)
from ._selection import (  # noqa: F401
    truncated_negative_binomial_mean,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_pmf,
    sample_repetitions,
    repetitions_tail,
    never_tried_probability,
    selection_rdp,
    selection_epsilon,
    tuning_epsilon,
)
from ._xu2020 import (  # noqa: F401
    xu2020_sigma,
    xu2020_epsilon,
)
from ._huang2019 import (  # noqa: F401
    huang2019_sigma,
    huang2019_noise_multiplier,
    huang2019_total_epsilon,
    huang2019_c0,
)
from ._cyffers2023 import (  # noqa: F401
    cyffers2023_centralized_rdp,
    cyffers2023_centralized_epsilon,
    cyffers2023_federated_local_rdp,
    cyffers2023_federated_local_epsilon,
    cyffers2023_federated_central_rdp,
    cyffers2023_federated_central_epsilon,
    cyffers2023_network_rdp,
    cyffers2023_network_epsilon,
)
from ._liu2022 import (  # noqa: F401
    liu2022_vradmm_sigma,
    liu2022_sadmm_sigma,
    liu2022_sadmm_side_conditions,
    liu2022_sadmm_conditions,
    liu2022_sadmm_epsilon,
    liu2022_vradmm_epsilon,
    liu2022_printed_epsilon,
)
from ._zhang2017 import (  # noqa: F401
    ZHANG2017_DVP_RULES,
    zhang2017_dvp_jacobian,
    zhang2017_dvp_zeta,
    zhang2017_dvp_spent,
    zhang2017_pvp_sensitivity,
    zhang2017_pvp_zeta,
    zhang2017_pvp_hidden_sensitivity,
    zhang2017_alpha_for_budget,
    zhang2017_total_epsilon,
)

__all__ = [
    "ORDERS",
    "NEIGHBOURS",
    "classic_gaussian_sigma",
    "gaussian_epsilon",
    "rdp_gaussian_epsilon",
    "pld_gaussian_epsilon",
    "privacy_loss_distribution",
    "gaussian_delta",
    "calibrate_noise",
    "gdp_epsilon",
    "basic_composition",
    "advanced_composition",
    "composition_epsilons",
    "noise_for_budget",
    "gaussian_rdp",
    "sampled_gaussian_rdp",
    "laplace_rdp",
    "rdp_to_epsilon",
    "ledger_rdp",
    "ledger_bounds",
    "ledger_epsilon",
    "ledger_guarantee",
    "calibrate_ledger",
    "truncated_negative_binomial_mean",
    "truncated_negative_binomial_gamma",
    "truncated_negative_binomial_pmf",
    "sample_repetitions",
    "repetitions_tail",
    "never_tried_probability",
    "selection_rdp",
    "selection_epsilon",
    "tuning_epsilon",
    "xu2020_sigma",
    "xu2020_epsilon",
    "huang2019_sigma",
    "huang2019_noise_multiplier",
    "huang2019_total_epsilon",
    "huang2019_c0",
    "cyffers2023_centralized_rdp",
    "cyffers2023_centralized_epsilon",
    "cyffers2023_federated_local_rdp",
    "cyffers2023_federated_local_epsilon",
    "cyffers2023_federated_central_rdp",
    "cyffers2023_federated_central_epsilon",
    "cyffers2023_network_rdp",
    "cyffers2023_network_epsilon",
    "liu2022_vradmm_sigma",
    "liu2022_sadmm_sigma",
    "liu2022_sadmm_conditions",
    "liu2022_sadmm_side_conditions",
    "liu2022_sadmm_epsilon",
    "liu2022_vradmm_epsilon",
    "liu2022_printed_epsilon",
    "zhang2017_dvp_zeta",
    "zhang2017_pvp_zeta",
    "zhang2017_pvp_sensitivity",
    "zhang2017_total_epsilon",
    "zhang2017_dvp_jacobian",
    "zhang2017_dvp_spent",
    "zhang2017_pvp_hidden_sensitivity",
    "zhang2017_alpha_for_budget",
    "GDP",
    "PLD",
    "RDP",
    "PURE",
    "FULL_BATCH",
    "ZHANG2017_DVP_RULES",
]

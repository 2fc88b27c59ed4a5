"""Trust every ε: intercept the noise an algorithm draws, and audit its privacy empirically.

The book prints an ε for every run. This module lets a reader (and the test suite) check those
numbers from the outside, without reading the algorithms' code:

* :func:`intercept_noise` — a context manager that sees every draw an algorithm makes through
  :mod:`dpadmm_lite.mechanisms` (which mechanism, the σ or ζ asked for, the values) and may
  replace what the algorithm receives: switch one draw off, inject a chosen vector, or scale all
  of them (:func:`scaled_noise` — "the same algorithm with deliberately halved noise").
  :func:`intercept_sampling` does the same for every Poisson sample (the rate it is drawn at, who
  takes part), and :func:`sampling_rates` compares that rate with the one a run's ledger records.
* :func:`epsilon_lower_bound` — the statistics of an empirical privacy audit (Jagielski, Ullman &
  Oprea 2020; Nasr, Song, Thakurta, Papernot & Carlini 2021): from the outputs of many runs on two
  neighbouring datasets, a threshold test that tries to tell them apart, and Clopper–Pearson
  confidence bounds on its two error rates. Any (ε, δ)-DP algorithm forces
  ``FPR + e^ε·FNR ≥ 1 − δ`` (and the same with the roles swapped), so the error rates measured
  give a *lower* bound on the true ε, valid with the stated confidence.
* :func:`runs_needed` / :func:`detection_power` — how many runs that test needs to catch a given
  shortfall (noise cut to a fraction of what the report assumes) with a given probability.
* :func:`audit_gaussian_mechanism` (vectorised over runs) and :func:`audit_algorithm` (any
  registered algorithm on a tiny problem with a canary record, :func:`canary_neighbours`,
  :func:`canary_pair`); :func:`standard_audits` runs the book's set, :data:`STANDARD_AUDITS`.

An audit can only ever show that ε is *at least* some value. If that lower bound exceeds the ε
the library reports, the report is wrong — a privacy bug. If it stays below, the report survived
an attack; with deliberately weakened noise the same attack must fail the report, which shows
that the audit has teeth.

What an audit can and cannot detect
-----------------------------------
It detects a report that is wrong *for its canary pair* by more than its resolution. Both limits matter:

* **Resolution.** The test must measure error rates far in a tail, and the tail is deeper the
  smaller δ: :func:`runs_needed` says how many runs catch a given shortfall. To catch noise cut to
  70 % with 90 % probability takes about 3·10⁴ runs per dataset at ε = 2, δ = 1e-3 but 10⁶ at
  ε = 1, δ = 1e-5 (where 2·10⁵ runs catch it 12 % of the time); a cut to 90 % at ε = 1, δ = 1e-5 needs
  4·10⁷. A smaller error — a sensitivity off by 5 %, a composition slightly too optimistic — is below
  the resolution of any affordable audit; the sensitivity and noise tests
  (``tests/test_privacy_sensitivity.py``, ``tests/test_privacy_noise.py``) catch those exactly.
  :func:`standard_audits` sizes itself to catch a cut to 70 %.
* **Reach.** The audit sees only what its canary moves. A canary that moves a release by a fraction r
  of the ledger's sensitivity exposes only that fraction of the privacy loss
  (``AuditResult.details["reach"]``), and then a noise cut to r goes unnoticed *however many* runs:
  the logistic loss at w = 0 has ``|ℓ'| = ½``, so a one-step audit of a gradient-based star algorithm
  can never exceed r = ½ and halved noise passes it. :func:`canary_pair` builds canaries the model meets
  at a large margin, where ``|ℓ'| → 1``; the standard audits reach 0.7 (DP-ADMM and DP-AccADMM of Xu
  et al.: the model mixes two releases), 0.83 (DP-ADMM over a star: its first step is at w = 0), 0.99
  (PVP) and 1 (DP-SGD over a star, DP-SADMM, proximal DP-SGD and the three private ADMMs of Cyffers et
  al., on clipped gradients and one record). At the 33,280 runs per dataset that catch a cut to 70 % at
  reach 1 (ε = 2, δ = 1e-3), the power model gives 0.82 to catch halved noise at reach 0.7 and above
  0.99 from reach 0.83. :data:`NOT_AUDITED` names the private algorithms no standard audit covers
  (objective perturbation, non-linear in its noise; DP-VRADMM, whose canary reaches 0.32) and what
  checks them instead. Leaks through anything but the released model, or through states the
  canary's runs never visit, are outside its view; so are events of probability below ~1/runs (a
  failure of probability δ needs ≫ 1/δ runs to be seen).
* **Sampling.** An audit whose canary takes part in every release cannot see a ledger that records a
  smaller sampling rate than the run draws at (its amplification is then too optimistic). The methods
  whose ledgers take credit for Poisson sampling — DP-SADMM, ssADMM and proximal DP-SGD — are audited at
  their book's rate (:data:`BOOK_SAMPLING_RATES`), the canary taking part in each run as often as the
  run's own sampler makes it (:func:`audit_algorithm`); a ledger whose rate is four times too small is
  then caught like noise cut to 61–69 % (ε = 2, δ = 1e-3). DP-VRADMM's recorded rate is checked against the rate drawn
  (:func:`sampling_rates`).

Examples
--------
>>> from dpadmm_lite import audit
>>> result = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=200_000, seed=0)
>>> result.epsilon_lower <= result.epsilon_reported
True
>>> halved = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=200_000, seed=0, noise_factor=0.5)
>>> halved.epsilon_lower > halved.epsilon_reported
True
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple

import numpy as np
from scipy import special, stats

from . import _validate as check
from . import mechanisms

__all__ = ["Draw", "intercept_noise", "scaled_noise", "clopper_pearson", "epsilon_lower_bound", "detection_power",
           "runs_needed", "AuditResult", "audit_gaussian_mechanism", "canary_neighbours", "audit_algorithm",
           "tiny_problem", "canary_pair", "CANARIES", "CANARY_DESCRIPTIONS", "STANDARD_AUDITS", "BOOK_SAMPLING_RATES",
           "HOLD_SEED", "Unaudited", "NOT_AUDITED", "standard_audits", "standard_runs", "Sample", "intercept_sampling",
           "SamplingRates", "sampling_rates", "TuningAudit", "audit_tuning"]

_ORIGINAL = {"gaussian": mechanisms.gaussian, "laplace_l2": mechanisms.l2_laplace}
_ATTRIBUTE = {"gaussian": "gaussian", "laplace_l2": "l2_laplace"}


# ====================================================================== seeing (and editing) every draw
@dataclass
class Draw:
    """One call to a noise mechanism during a run.

    Parameters
    ----------
    mechanism : {"gaussian", "laplace_l2"}
        The names of :class:`~dpadmm_lite.privacy.PrivacyEvent`.
    noise : numpy.ndarray
        The scale the algorithm asked for, one value per drawn vector (shape ``value.shape[:-1]``):
        σ for Gaussian noise, the rate ζ for ℓ2-Laplace noise.
    raw : numpy.ndarray
        What the mechanism drew.
    value : numpy.ndarray
        What the algorithm received (``raw`` unless an edit replaced it).
    """

    mechanism: str
    noise: np.ndarray
    raw: np.ndarray
    value: np.ndarray


_LAYERS: list = []  # active (edit, log) pairs, outermost first
_INSTALLED: list = []  # (module, attribute, original) patched while any layer is active


def _patched(mechanism: str):
    original = _ORIGINAL[mechanism]

    def patched(rng, scale, shape):
        value = original(rng, scale, shape)
        per_vector = np.broadcast_to(np.asarray(scale, dtype=float), value.shape[:-1]).copy()
        for edit, log in list(_LAYERS):
            draw = Draw(mechanism, per_vector, value, value)
            if edit is not None:
                new = edit(len(log), draw)
                if new is not None:
                    new = np.asarray(new, dtype=float)
                    if new.shape != value.shape:
                        raise ValueError(f"edit must return an array of shape {value.shape}, got {new.shape}")
                    draw.value = new
            log.append(draw)
            value = draw.value
        return value

    patched.__wrapped__ = original
    return patched


def _install() -> None:
    patches = {m: _patched(m) for m in _ORIGINAL}
    for module in [m for name, m in list(sys.modules.items()) if m and name.split(".")[0] == __package__]:
        for mechanism, original in _ORIGINAL.items():
            for attribute in {_ATTRIBUTE[mechanism], original.__name__}:
                if getattr(module, attribute, None) is original:
                    _INSTALLED.append((module, attribute, original))
                    setattr(module, attribute, patches[mechanism])


def _uninstall() -> None:
    while _INSTALLED:
        module, attribute, original = _INSTALLED.pop()
        setattr(module, attribute, original)


@contextlib.contextmanager
def intercept_noise(edit: Callable[[int, Draw], np.ndarray | None] | None = None) -> Iterator[list[Draw]]:
    """See — and optionally replace — every draw of :mod:`dpadmm_lite.mechanisms` inside the block.

    Parameters
    ----------
    edit : callable, optional
        ``edit(i, draw) -> array or None``, called for the ``i``-th draw of the block (counting
        Gaussian and ℓ2-Laplace calls together, from 0). Return the array the algorithm should
        receive instead of ``draw.raw`` (same shape), or ``None`` to keep the draw. The real
        mechanism is always called first, so the random stream is consumed exactly as without
        the edit: everything before an edited draw is bit-for-bit the unedited run.

    Yields
    ------
    list of Draw
        Filled as the algorithm draws.

    Notes
    -----
    Patches ``dpadmm_lite.mechanisms.gaussian`` / ``l2_laplace`` (and any module of the package
    that imported them by name) for the duration of the block; blocks nest (an outer block's
    edit is applied first, and an inner block sees its result as ``raw``); not thread-safe.
    """
    log: list[Draw] = []
    layer = (edit, log)
    if not _LAYERS:
        _install()
    _LAYERS.append(layer)
    try:
        yield log
    finally:
        _LAYERS.remove(layer)
        if not _LAYERS:
            _uninstall()


def scaled_noise(factor: float):
    """Every draw inside the block multiplied by ``factor`` (0.5: "deliberately halved noise").

    The algorithm still believes (and reports) its own σ; only the noise it adds changes. It shows
    that an audit or a test has teeth.

    Parameters
    ----------
    factor : float
        The factor every draw is multiplied by, in [0, ∞).

    Returns
    -------
    context manager
        The block inside which the noise is scaled (:func:`intercept_noise`).
    """
    factor = check.nonnegative("factor", factor)
    return intercept_noise(lambda i, draw: draw.raw * factor)


# ====================================================================== seeing (and editing) every Poisson sample
@dataclass
class Sample:
    """One Poisson-sampled release during a run: the rate its sample was drawn at, and who took part.

    Parameters
    ----------
    rate : float
        The probability with which the run asked the sampler to take each record (or user): the rate
        the run draws at, whatever its ledger records.
    n : int
        How many records (or users) it sampled from.
    drawn : numpy.ndarray
        Who the sampler drew (record indices).
    members : numpy.ndarray
        Who took part (``drawn`` unless an edit replaced it).
    """

    rate: float
    n: int
    drawn: np.ndarray
    members: np.ndarray


_SAMPLE_LAYERS: list = []  # active (edit, log) pairs of intercept_sampling, outermost first
_SAMPLERS_INSTALLED: list = []  # (module, attribute, original) patched while any layer is active


def _sampled(rate: float, n: int, drawn: np.ndarray) -> np.ndarray:
    """Log one sample with every active layer and apply their edits (outermost first)."""
    members = drawn
    for edit, log in list(_SAMPLE_LAYERS):
        sample = Sample(float(rate), int(n), members, members)
        if edit is not None:
            new = edit(len(log), sample)
            if new is not None:
                new = np.unique(np.asarray(new, dtype=np.intp))
                if new.size and (new[0] < 0 or new[-1] >= n):
                    raise ValueError(f"edit must return record indices in [0, {n - 1}], got {new!r}")
                sample.members = new
        log.append(sample)
        members = sample.members
    return members


def _batch_sampler(original):
    """A minibatch sampler ``(rng, n, rate) -> indices`` that every layer sees (and may edit)."""

    def patched(rng, n, rate):
        return _sampled(rate, n, original(rng, n, rate))

    patched.__wrapped__ = original
    return patched


def _schedule_sampler(original):
    """A participation schedule (the Poisson sampling of users, round after round) whose rounds every layer
    sees (and may edit): positions ``round · n + user``, handed out up to a round boundary."""

    class Sampled(original):
        def take(self, end):
            drawn = super().take(end)  # the real schedule first: its stream is consumed as without the audit
            start, self._audit_end = getattr(self, "_audit_end", 0), end
            rounds = np.arange(start // self.n, -(-end // self.n))
            cuts = np.searchsorted(drawn, np.append(rounds, rounds[-1] + 1) * self.n) if rounds.size else []
            out = [r * self.n + _sampled(self.q, self.n, drawn[lo:hi] - r * self.n)  # one sample per round
                   for r, lo, hi in zip(rounds, cuts[:-1], cuts[1:])]
            return np.concatenate(out).astype(np.intp, copy=False) if out else drawn

    Sampled.__wrapped__ = original
    return Sampled


def _install_samplers() -> None:
    from .algorithms import cyffers2023, liu2022

    originals = {liu2022._poisson_batch: _batch_sampler, cyffers2023._Schedule: _schedule_sampler}
    patches = {original: wrap(original) for original, wrap in originals.items()}
    for module in [m for name, m in list(sys.modules.items()) if m and name.split(".")[0] == __package__]:
        for attribute, value in list(vars(module).items()):
            if any(value is original for original in originals):
                _SAMPLERS_INSTALLED.append((module, attribute, value))
                setattr(module, attribute, patches[value])


def _uninstall_samplers() -> None:
    while _SAMPLERS_INSTALLED:
        module, attribute, original = _SAMPLERS_INSTALLED.pop()
        setattr(module, attribute, original)


@contextlib.contextmanager
def intercept_sampling(edit: Callable[[int, Sample], np.ndarray | None] | None = None) -> Iterator[list[Sample]]:
    """See — and optionally replace — every Poisson sample a run draws inside the block.

    The minibatches of DP-SADMM, DP-VRADMM and ssADMM (one sample per step) and the participations of
    Cyffers et al.'s federated ADMM and proximal DP-SGD (one sample per round) are drawn by two samplers;
    inside the block each sample is logged with the rate the run drew it at and who took part.

    Parameters
    ----------
    edit : callable, optional
        ``edit(i, sample) -> indices or None``, called for the ``i``-th sample of the block: the records
        that take part instead of ``sample.drawn`` (``None`` keeps the draw). The real sampler is always
        called first, so its stream is consumed exactly as without the edit.

    Yields
    ------
    list of Sample
        Filled as the run samples.

    Notes
    -----
    Patches the samplers of :mod:`dpadmm_lite.algorithms.liu2022` (``_poisson_batch``) and
    :mod:`dpadmm_lite.algorithms.cyffers2023` (``_Schedule``) wherever the package refers to them, for
    the duration of the block; blocks nest (an outer block's edit is applied first); not thread-safe.
    Federated ADMM replays its schedule before the run to count the participations its ledger charges
    (a replay the block logs too, unless it is memoised), so an edit of its samples makes the run refuse:
    its ledger would not describe the edited run.
    """
    log: list[Sample] = []
    layer = (edit, log)
    if not _SAMPLE_LAYERS:
        _install_samplers()
    _SAMPLE_LAYERS.append(layer)
    try:
        yield log
    finally:
        _SAMPLE_LAYERS.remove(layer)
        if not _SAMPLE_LAYERS:
            _uninstall_samplers()


class SamplingRates(NamedTuple):
    """The rate a run's ledger records for its Poisson-sampled releases, against the rates its samples were
    drawn at (:func:`sampling_rates`).

    Parameters
    ----------
    recorded : float
        The smallest ``sampling_rate`` of the ledger's events.
    drawn : tuple of float
        The distinct rates the run's sampler was called with.
    realised : float
        Members over (samples · records): the fraction of records that took part.
    samples : int
        Poisson samples the run drew.
    records : int
        Records (or users) each sample was drawn from.
    """

    recorded: float  # the smallest sampling_rate of the ledger's events
    drawn: tuple  # the distinct rates the run's sampler was called with
    realised: float  # members over (samples · records): the fraction of records that took part
    samples: int  # Poisson samples the run drew
    records: int  # records (or users) each sample was drawn from

    @property
    def consistent(self) -> bool:
        """The ledger's rate is the one every sample was drawn at, and the members drawn agree with it to
        within 5 binomial standard deviations."""
        if not self.samples:
            return self.recorded == 1
        q, trials = self.recorded, self.samples * self.records
        spread = 5 * math.sqrt(q * (1 - q) / trials) + 1 / trials
        return all(math.isclose(r, q, rel_tol=1e-12) for r in self.drawn) and abs(self.realised - q) <= spread


def sampling_rates(name: str, problem, *, seed: int = 0, **options) -> SamplingRates:
    """Run ``name`` once (:func:`dpadmm_lite.run`) and compare the rate its ledger records with the rates its
    Poisson samples are drawn at (:func:`intercept_sampling`): the check for a sampled method that no
    audit at its sampling rate covers (:data:`NOT_AUDITED`). A run that draws many samples (thousands of
    steps) measures the realised rate finely.

    Parameters
    ----------
    name : str
        A registered algorithm.
    problem : Problem
        The problem it runs on.
    seed : int, default 0
        The run's seed.

    Returns
    -------
    SamplingRates
        The ledger's rate against the drawn ones.
    """
    from .registry import run

    with intercept_sampling() as samples:
        trace = run(name, problem, seed=seed, **options)
    recorded = min((e.sampling_rate for e in trace.ledger), default=1.0)
    records = samples[0].n if samples else problem.n
    members = sum(len(s.members) for s in samples)
    return SamplingRates(recorded, tuple(sorted({s.rate for s in samples})),
                         members / max(1, len(samples) * records), len(samples), records)


# ====================================================================== the statistics of an audit
#: Candidate thresholds per tail (:func:`_threshold_levels`), and the confidence of the Clopper–Pearson
#: bounds that *choose* the threshold on the first half of the runs. A stricter bound than the final one
#: favours thresholds with enough errors to be measured again: a threshold picked for a lucky run of few
#: errors would meet the expected count on the second half (the winner's curse), and lose power.
_LEVELS_PER_TAIL = 200
_SELECTION_CONFIDENCE = 0.999


def _whole_numbers(name: str, value, *, minimum: float = 0) -> np.ndarray:
    """``value`` as a float array of whole numbers ``≥ minimum`` (a ValueError naming ``name`` otherwise)."""
    a = check.finite_array(name, value)
    if np.any(a != np.round(a)) or np.any(a < minimum):
        raise ValueError(f"{name} must be whole numbers >= {minimum:g}, got {value!r}")
    return a


def clopper_pearson(successes, trials, confidence: float = 0.95):
    """Two-sided Clopper–Pearson interval for a binomial proportion (vectorised).

    ``successes`` are whole numbers in ``[0, trials]``, ``trials`` whole numbers ``≥ 1`` (arrays broadcast).
    Returns ``(lower, upper)``; each side holds with probability ``1 − (1 − confidence)/2``.

    Parameters
    ----------
    successes : int or array_like of int
        Whole numbers in ``[0, trials]``.
    trials : int or array_like of int
        Whole numbers ≥ 1 (broadcast with ``successes``).
    confidence : float, default 0.95
        Joint confidence of the interval, in (0, 1).

    Returns
    -------
    lower, upper : float or numpy.ndarray
        The interval's ends; each side holds with probability ``1 − (1 − confidence)/2``.
    """
    confidence = check.open_unit("confidence", confidence)
    k = _whole_numbers("successes", successes)
    n = _whole_numbers("trials", trials, minimum=1)
    try:
        k, n = np.broadcast_arrays(k, n)
    except ValueError:
        raise ValueError(f"successes and trials must have shapes that broadcast, got {np.shape(k)} and "
                         f"{np.shape(n)}") from None
    if np.any(k > n):
        raise ValueError(f"successes must be in [0, trials], got successes = {successes!r} for trials = {trials!r}")
    a = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, special.betaincinv(k, n - k + 1, a), 0.0)
        upper = np.where(k < n, special.betaincinv(k + 1, n - k, 1 - a), 1.0)
    return lower, upper


def _upper(k, n, confidence):
    """The upper Clopper–Pearson bound of :func:`clopper_pearson` for counts ``k`` of one ``n``, unchecked
    (internal: hot loops; evaluated once per distinct count)."""
    values, where = np.unique(np.asarray(k, float), return_inverse=True)
    with np.errstate(invalid="ignore"):
        upper = np.where(values < n, special.betaincinv(values + 1, n - values, 1 - (1 - confidence) / 2), 1.0)
    return upper[where].reshape(np.shape(k))


def _epsilon_from_rates(fpr_hi, fnr_hi, delta):
    """ε implied by upper bounds on the two error rates of one test: (ε, δ)-DP forces
    ``FPR + e^ε FNR ≥ 1 − δ`` and ``FNR + e^ε FPR ≥ 1 − δ``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1 - delta - fpr_hi, 0.0) / fnr_hi)
        two = np.log(np.maximum(1 - delta - fnr_hi, 0.0) / fpr_hi)
    return np.nan_to_num(np.maximum(one, two), nan=0.0, neginf=0.0, posinf=np.inf)


def _threshold_levels(pooled: int) -> np.ndarray:
    """Probabilities at which the pooled first-half scores are cut into candidate thresholds: geometric in
    each tail, from one run's worth (``1/pooled``) to the median, so that the tails — where a strong
    test's thresholds lie — are resolved as finely as the middle."""
    tail = np.geomspace(min(1.0 / pooled, 0.5), 0.5, _LEVELS_PER_TAIL)
    return np.unique(np.concatenate([tail, 1.0 - tail]))


def _scores(name: str, value) -> np.ndarray:
    s = check.finite_array(name, value).ravel()
    if s.size < 2:
        raise ValueError(f"{name} must hold at least 2 runs (one half chooses the threshold, the other measures "
                         f"it), got {s.size}")
    return s


def epsilon_lower_bound(scores, scores_prime, delta: float, *, confidence: float = 0.95, seed: int = 0) -> dict:
    """Lower bound on ε from runs on two neighbouring datasets (threshold test + Clopper–Pearson).

    Parameters
    ----------
    scores, scores_prime : array_like of float
        One finite number per run on D and on D′ (higher means "more like D′"), at least 2 each.
        A NaN or infinite score is refused (``ValueError``): an algorithm that releases NaN must
        not pass an audit because no threshold can separate its runs.
    delta : float
        The δ of the guarantee being audited, in (0, 1).
    confidence : float, default 0.95
        Joint confidence of the Clopper–Pearson bounds, in (0, 1).
    seed : int, default 0
        Seed of the random split of each side's runs into halves.

    Returns
    -------
    dict
        ``epsilon`` (the lower bound, ≥ 0), ``threshold``, ``fpr``/``fnr`` (measured on the
        second half), ``fpr_upper``/``fnr_upper``, ``runs`` (per side).

    Notes
    -----
    The adversary guesses "D′" when a run's score exceeds a threshold t. The runs of each side are
    split at random in two halves: the first half picks t — among the pooled first-half scores cut at
    2 × 200 levels, geometric in each tail (:func:`_threshold_levels`), the one whose Clopper–Pearson
    bound on ε is largest there at the stricter confidence 0.999, so that a threshold is not chosen for
    a lucky run of few errors — and the second half, untouched by that choice, measures the error
    rates with Clopper–Pearson bounds at the given joint ``confidence`` (each bound at
    ``1 − (1 − confidence)/2``). One test, one bound: no multiple-comparison correction is needed.
    :func:`runs_needed` says how many runs this test needs to catch a given shortfall.
    """
    delta = check.open_unit("delta", delta)
    confidence = check.open_unit("confidence", confidence)
    s0 = _scores("scores", scores)
    s1 = _scores("scores_prime", scores_prime)
    rng = np.random.default_rng(seed)
    s0, s1 = rng.permutation(s0), rng.permutation(s1)
    h0, h1 = len(s0) // 2, len(s1) // 2
    pick0, pick1, eval0, eval1 = s0[:h0], s1[:h1], s0[h0:], s1[h1:]

    # 1) choose the threshold on the first halves
    pooled = np.concatenate([pick0, pick1])
    grid = np.unique(np.quantile(pooled, _threshold_levels(len(pooled))))
    fp = len(pick0) - np.searchsorted(np.sort(pick0), grid, side="right")  # D runs above t
    fn = np.searchsorted(np.sort(pick1), grid, side="right")  # D′ runs at or below t
    fp_hi = _upper(fp, len(pick0), _SELECTION_CONFIDENCE)
    fn_hi = _upper(fn, len(pick1), _SELECTION_CONFIDENCE)
    t = float(grid[int(np.argmax(_epsilon_from_rates(fp_hi, fn_hi, delta)))])

    # 2) measure it on the second halves
    fp2 = int(np.sum(eval0 > t))
    fn2 = int(np.sum(eval1 <= t))
    fpr_hi = float(_upper(fp2, len(eval0), confidence))
    fnr_hi = float(_upper(fn2, len(eval1), confidence))
    eps = float(max(0.0, _epsilon_from_rates(fpr_hi, fnr_hi, delta)))
    return {"epsilon": eps, "threshold": t, "fpr": fp2 / len(eval0), "fnr": fn2 / len(eval1),
            "fpr_upper": fpr_hi, "fnr_upper": fnr_hi, "runs": min(len(s0), len(s1))}


def _gaussian_separation(epsilon: float, delta: float) -> float:
    """μ = Δ/σ of the single Gaussian release that is exactly (ε, δ)-DP (the accountant's calibration)."""
    from . import accounting

    return 1.0 / accounting.calibrate_noise(epsilon, delta, steps=1)


@functools.lru_cache(maxsize=64)
def _separation(epsilon: float, delta: float, sampling_rate: float = 1.0) -> float:
    """μ = 2C/σ between the two versions of a replaced record's release in the one Poisson-sampled Gaussian
    release (rate q, per-record bound C, the ledger's replace-one pair) that the accountant finds (ε, δ)-DP;
    at q = 1 the Gaussian mechanism's Δ/σ."""
    from . import accounting
    from .privacy import PrivacyEvent

    if sampling_rate == 1:
        return _gaussian_separation(epsilon, delta)
    unit = PrivacyEvent("gaussian", 1.0, 1.0, sampling_rate=sampling_rate, neighbours="replace_one")
    return 2.0 / accounting.calibrate_ledger([unit], epsilon, delta, rtol=1e-4)


def _score_cdfs(mu: float, sampling_rate: float):
    """The laws of the audit's score on D and on D′ (noise units), as two cdfs.

    The canary's release is ``N(0, 1)`` on D and ``N(μ, 1)`` on D′ when it is sampled (rate q), and, when
    it is not, the release without it, ``N(μ/2, 1)`` on both sides (its two versions pull symmetrically
    from there): at q = 1 the Gaussian pair, below it the ledger's replace-one pair of Poisson sampling.
    """
    q = sampling_rate

    def cdf0(t):
        return q * stats.norm.cdf(t) + (1 - q) * stats.norm.cdf(t - mu / 2)

    def cdf1(t):
        return q * stats.norm.cdf(t - mu) + (1 - q) * stats.norm.cdf(t - mu / 2)

    return cdf0, cdf1


def detection_power(epsilon: float, delta: float, noise_factor: float, runs: int, *, reach: float = 1.0,
                    sampling_rate: float = 1.0, confidence: float = 0.95, replicates: int = 200,
                    seed: int = 0) -> float:
    """Probability that :func:`epsilon_lower_bound` proves ε wrong when the noise is cut to ``noise_factor``.

    Parameters
    ----------
    epsilon : float
        The reported ε, > 0 and finite.
    delta : float
        The reported δ, in (0, 1).
    noise_factor : float
        The factor the noise is cut to, > 0 and finite.
    runs : int
        Runs per dataset, a whole number ≥ 2.
    reach : float, default 1.0
        The fraction of the sensitivity the canary achieves, > 0 and finite.
    sampling_rate : float, default 1.0
        The Poisson sampling rate q of the one sampled release, in (0, 1].
    confidence : float, default 0.95
        Joint confidence of the Clopper–Pearson bounds, in (0, 1).
    replicates : int, default 200
        Monte Carlo draws of the first halves, a whole number ≥ 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    float
        The probability that the audit proves ε wrong.

    Notes
    -----
    The model is the audit of :func:`audit_gaussian_mechanism`, or of any algorithm whose score is
    Gaussian (Gaussian noise, a release affine in it — the standard audits): the score is
    ``N(0, 1)`` on D and ``N(μ′, 1)`` on D′ with ``μ′ = reach · μ(ε, δ) / noise_factor``, where
    ``μ(ε, δ) = Δ/σ`` of the Gaussian mechanism the accountant calibrates to (ε, δ) for one release
    (a composition of Gaussian releases reporting (ε, δ) has the same μ) and ``reach`` the fraction
    of it that the canary achieves (1: the canary moves the score by the whole sensitivity).

    ``sampling_rate`` q < 1: the audit of one Poisson-sampled release (:func:`audit_algorithm` on a
    sampled run): the canary's release is that pair in a fraction q of the runs and the release without
    it, halfway between, in the others, and μ(ε, δ) is the separation of the pair in the one sampled
    release (rate q, replace-one) that the accountant finds (ε, δ)-DP. A cut noise and a ledger whose
    rate is too small look alike here: a ledger claiming q/4 is noise cut to the ratio of the two
    calibrations (0.69 at q = 0.1 and 0.61 at q = 1/200, ε = 2, δ = 1e-3).

    Both stages of the test are modelled as :func:`epsilon_lower_bound` runs them: the threshold is
    chosen on the first halves (``replicates`` Monte Carlo draws of their error counts at the
    candidate thresholds — the same levels, cut at the model's quantiles), and for each choice the
    probability that the second halves' Clopper–Pearson bound exceeds ε is exact (binomial).
    Deterministic for a given ``seed``; its Monte Carlo error is about ``√(p(1 − p)/replicates)``.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    noise_factor = check.positive("noise_factor", noise_factor)
    runs = check.count("runs", runs, minimum=2)
    reach = check.positive("reach", reach)
    sampling_rate = check.half_open_unit("sampling_rate", sampling_rate)
    confidence = check.open_unit("confidence", confidence)
    replicates = check.count("replicates", replicates)
    mu = reach * _separation(epsilon, delta, sampling_rate) / noise_factor
    return float(_power(epsilon, delta, mu, runs, confidence, replicates, seed, sampling_rate=sampling_rate))


def _power(epsilon, delta, mu, runs, confidence, replicates, seed, quadrature=64, sampling_rate=1.0):
    """:func:`detection_power` for a score separation ``mu`` (noise units), arguments unchecked."""
    pick, held = runs // 2, runs - runs // 2
    law0, law1 = _score_cdfs(mu, sampling_rate)
    # the candidate thresholds: the model's pooled quantiles at the audit's levels (bisection on the mixture cdf)
    levels = _threshold_levels(2 * pick)
    lo, hi = np.full(levels.shape, -40.0), np.full(levels.shape, 40.0 + mu)
    for _ in range(80):
        mid = (lo + hi) / 2
        below = 0.5 * (law0(mid) + law1(mid)) < levels
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    t = np.unique((lo + hi) / 2)
    # stage 1: the first halves' error counts at every threshold, `replicates` times; the threshold chosen
    rng = np.random.default_rng(seed)
    cdf0, cdf1 = law0(t), law1(t)
    bins0 = np.diff(np.concatenate([[0.0], cdf0, [1.0]]))
    bins1 = np.diff(np.concatenate([[0.0], cdf1, [1.0]]))
    at_or_below0 = np.cumsum(rng.multinomial(pick, bins0 / bins0.sum(), size=replicates), axis=1)[:, :-1]
    at_or_below1 = np.cumsum(rng.multinomial(pick, bins1 / bins1.sum(), size=replicates), axis=1)[:, :-1]
    criterion = _epsilon_from_rates(_upper(pick - at_or_below0, pick, _SELECTION_CONFIDENCE),
                                    _upper(at_or_below1, pick, _SELECTION_CONFIDENCE), delta)
    chosen, weight = np.unique(np.argmax(criterion, axis=1), return_counts=True)
    # stage 2, exact for each chosen threshold: FP ~ Bin(held, p0), FN ~ Bin(held, p1) independent; the bound
    # exceeds ε iff U(FN) < c(FP) (U the upper Clopper–Pearson bound, increasing), i.e. FN ≤ k_max(FP)
    p0, p1 = 1.0 - cdf0[chosen], cdf1[chosen]
    q = (np.arange(quadrature) + 0.5) / quadrature  # FP at `quadrature` quantiles of its law
    fp = stats.binom.ppf(q[None, :], held, p0[:, None])
    u0 = _upper(fp, held, confidence)
    c = np.clip(np.maximum((1 - delta - u0) * math.exp(-epsilon), 1 - delta - u0 * math.exp(epsilon)), 0.0, 1.0)
    a = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        k_max = np.where(c > 0, stats.binom.ppf(a, held, c) - 1, -1)  # U(k) < c  ⟺  P(Bin(held, c) ≤ k) < a
    detect = np.where(k_max >= 0, stats.binom.cdf(k_max, held, p1[:, None]), 0.0).mean(axis=1)
    return float(weight @ detect / replicates)


def runs_needed(epsilon: float, delta: float, noise_factor: float, *, power: float = 0.9, reach: float = 1.0,
                sampling_rate: float = 1.0, confidence: float = 0.95, max_runs: int = 10**9, replicates: int = 200,
                seed: int = 0) -> int | float:
    """Runs per dataset an audit needs to prove ε wrong, with probability ``power``, when the noise is cut
    to ``noise_factor`` of what the report assumes.

    Parameters
    ----------
    epsilon : float
        The reported ε, > 0 and finite.
    delta : float
        The reported δ, in (0, 1).
    noise_factor : float
        The factor the noise is cut to, > 0 and finite.
    power : float, default 0.9
        The probability of proving ε wrong, in (0, 1).
    reach : float, default 1.0
        The fraction of the sensitivity the canary achieves, > 0 and finite.
    sampling_rate : float, default 1.0
        The Poisson sampling rate q of the one sampled release, in (0, 1].
    confidence : float, default 0.95
        Joint confidence of the Clopper–Pearson bounds, in (0, 1).
    max_runs : int, default 1000000000
        The most runs per dataset considered, a whole number ≥ 4.
    replicates : int, default 200
        Monte Carlo draws of :func:`detection_power`, a whole number ≥ 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    int or float
        Runs per dataset, or ``math.inf`` when ``max_runs`` do not suffice.

    Notes
    -----
    For the threshold test of :func:`epsilon_lower_bound` on a Gaussian score (the model of
    :func:`detection_power`: the Gaussian mechanism, or an algorithm with Gaussian noise whose
    release is affine in it, with a canary that reaches ``reach`` of the sensitivity), the smallest
    number of runs per dataset whose :func:`detection_power` is at least ``power`` — found by
    doubling, then bisection to 2 %. Returns ``math.inf`` when even ``max_runs`` do not suffice:
    always when ``noise_factor ≥ reach`` (then the report is true, and a valid audit proves it wrong
    with probability at most ``(1 − confidence)/2``). ``sampling_rate`` q < 1: the audit of one
    Poisson-sampled release (the model of :func:`detection_power`), whose canary takes part in a
    fraction q of the runs.

    The number grows quickly as the shortfall shrinks and as δ falls: the test must see the errors of
    a threshold far in a tail. At ε = 1, δ = 1e-5 (power 0.9) a cut to 50 % needs about 5·10⁴ runs, to
    70 % about 1.1·10⁶, to 90 % about 4·10⁷; at ε = 2, δ = 1e-3 a cut to 50 % needs about 3·10³ and to
    70 % about 3·10⁴. The model's power at these numbers was checked against the audit itself (300 – 400
    seeded audits of :func:`audit_gaussian_mechanism` each: 0.89 – 0.92).
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    noise_factor = check.positive("noise_factor", noise_factor)
    power = check.open_unit("power", power)
    reach = check.positive("reach", reach)
    sampling_rate = check.half_open_unit("sampling_rate", sampling_rate)
    confidence = check.open_unit("confidence", confidence)
    max_runs = check.count("max_runs", max_runs, minimum=4)
    replicates = check.count("replicates", replicates)
    return _runs_needed(epsilon, delta, noise_factor, power, reach, sampling_rate, confidence, max_runs, replicates,
                        seed)


@functools.lru_cache(maxsize=64)
def _runs_needed(epsilon, delta, noise_factor, power, reach, sampling_rate, confidence, max_runs, replicates, seed):
    """:func:`runs_needed`, arguments checked (kept: the standard audits ask for the same few)."""
    if noise_factor >= reach:
        return math.inf
    mu = reach * _separation(epsilon, delta, sampling_rate) / noise_factor

    def enough(n):
        return _power(epsilon, delta, mu, int(n), confidence, replicates, seed, sampling_rate=sampling_rate) >= power

    lo, hi = 2, 64
    while not enough(hi):
        if hi >= max_runs:
            return math.inf
        lo, hi = hi, min(4 * hi, max_runs)
    while hi - lo > max(1, 0.02 * lo):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return int(hi)


@dataclass(frozen=True)
class AuditResult:
    """The outcome of one audit: what the library reports, and what an attack proves at least.

    ``passed`` is ``epsilon_lower ≤ epsilon_reported``: the report survived the attack.

    Parameters
    ----------
    name : str
        What was audited (an algorithm's registered name, or ``"Gaussian mechanism"``).
    epsilon_reported : float
        The ε the library reports.
    epsilon_lower : float
        The lower bound on ε the attack proves.
    delta : float
        δ of the guarantee audited.
    runs : int
        Runs per dataset.
    confidence : float
        Confidence of the lower bound.
    noise_factor : float, default 1.0
        The factor every noise draw was scaled by (below 1: deliberately weakened).
    details : dict, default {}
        Further numbers of the audit (``reach``, the threshold test's rates, …).
    """

    name: str
    epsilon_reported: float
    epsilon_lower: float
    delta: float
    runs: int
    confidence: float
    noise_factor: float = 1.0
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.epsilon_lower <= self.epsilon_reported

    def __str__(self) -> str:
        weakened = "" if self.noise_factor == 1 else f", noise × {self.noise_factor:g} (deliberately weakened)"
        verdict = "the report survives" if self.passed else "THE REPORT IS WRONG"
        from .labels import readable  # the algorithm's book's name ("DP-ADMM (star)", not dp_admm_star)

        return (f"{readable(self.name)}: reported ε = {self.epsilon_reported:.3g}, audited ε ≥ {self.epsilon_lower:.3g} "
                f"({100 * self.confidence:.0f} % confidence, {self.runs} runs per dataset, δ = {self.delta:g}"
                f"{weakened}) — {verdict}")


# ====================================================================== audits
def audit_gaussian_mechanism(*, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0,
                             runs: int = 200_000, seed: int = 0, noise_factor: float = 1.0,
                             confidence: float = 0.95) -> AuditResult:
    """Audit the Gaussian mechanism calibrated by the library's accountant (vectorised over runs).

    Parameters
    ----------
    epsilon : float, default 1.0
        ε the mechanism is calibrated to, > 0 and finite.
    delta : float, default 1e-5
        δ, in (0, 1).
    sensitivity : float, default 1.0
        Δ, > 0 and finite.
    runs : int, default 200000
        Draws per dataset, a whole number ≥ 4.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    noise_factor : float, default 1.0
        The factor the added noise is scaled by, > 0 and finite.
    confidence : float, default 0.95
        Joint confidence of the Clopper–Pearson bounds, in (0, 1).

    Returns
    -------
    AuditResult
        The reported ε against the proved lower bound.

    Notes
    -----
    σ is :func:`dpadmm_lite.accounting.calibrate_noise` × Δ for one release at (ε, δ); the
    released value is ``q(D) + N(0, σ²)`` with ``q(D) = 0``, ``q(D′) = Δ`` (a worst-case pair),
    drawn through :func:`dpadmm_lite.mechanisms.gaussian` — ``runs`` draws per dataset at once.
    ``noise_factor`` scales the noise actually added (0.5 halves it) while the report stays ε.
    """
    from . import accounting

    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    sensitivity = check.positive("sensitivity", sensitivity)
    runs = check.count("runs", runs, minimum=4)
    noise_factor = check.positive("noise_factor", noise_factor)
    sigma = accounting.calibrate_noise(epsilon, delta, steps=1) * sensitivity
    reported = accounting.gaussian_epsilon(sigma / sensitivity, 1, delta)
    rng = np.random.default_rng(seed)
    with scaled_noise(noise_factor):
        noise = mechanisms.gaussian(rng, sigma, (2, runs, 1))[..., 0]
    released_d, released_prime = 0.0 + noise[0], sensitivity + noise[1]
    bound = epsilon_lower_bound(released_d, released_prime, delta, confidence=confidence, seed=seed)
    return AuditResult("Gaussian mechanism", reported, bound["epsilon"], delta, runs, confidence, noise_factor,
                       {**bound, "sigma": sigma, "reach": 1.0})


def canary_neighbours(problem, *, record: int = 0, direction=None, labels=None, direction_prime=None):
    """Two neighbouring problems that differ in one *canary* record (replace-one).

    Parameters
    ----------
    problem : Problem
        The problem whose record becomes the canary.
    record : int, default 0
        The canary's index, a whole number in ``[0, n − 1]``.
    direction : array_like of float, optional
        ``u``, a non-zero vector of length d (normalised); default the first coordinate axis.
    labels : array_like of float, optional
        The canary's two labels ``(b, b′)``, finite; default ``(+1, −1)`` (logistic) or ``(+B, −B)``.
    direction_prime : array_like of float, optional
        ``u′``, a non-zero vector of length d (normalised); default ``u``.

    Returns
    -------
    problem, problem_prime : Problem
        D and D′.

    Notes
    -----
    Record ``record`` (a whole number in ``[0, n − 1]``) becomes ``(B·u, b)`` in D and ``(B·u′, b′)``
    in D′, with ``B`` the public ``problem.feature_bound``, ``u`` a unit ``direction`` (default: the
    first coordinate axis), ``u′`` a unit ``direction_prime`` (default ``u``) and the labels ``(b, b′)``
    (default ``(+1, −1)`` for the logistic loss, ``(+B, −B)`` for the squared loss): with the defaults
    the two versions of the record pull the model in opposite directions as hard as the public bounds
    allow. (Where the model meets the canary at a large margin, two mirror images ``u, u′`` nearly
    perpendicular to the model pull further apart: see :func:`canary_pair`.)
    """
    n, d = problem.n, problem.d
    if isinstance(record, bool) or not isinstance(record, (int, np.integer)) or not 0 <= record < n:
        raise ValueError(f"record must be a whole number in [0, n − 1] = [0, {n - 1}] (the problem has n = {n} "
                         f"records), got {record!r}")

    def unit(name, value, default):
        if value is None:
            return default
        v = check.finite_array(name, value, ndim=1)
        if v.shape != (d,) or not np.linalg.norm(v) > 0:
            raise ValueError(f"{name} must be a non-zero vector of length d = {d}, got {value!r}")
        return v / np.linalg.norm(v)

    u = unit("direction", direction, np.eye(d)[0])
    u_prime = unit("direction_prime", direction_prime, u)
    if labels is None:
        labels = (1.0, -1.0) if problem.loss == "logistic" else (problem.feature_bound, -problem.feature_bound)
    labels = check.finite_array("labels", labels, ndim=1)
    if labels.shape != (2,):
        raise ValueError(f"labels must be two numbers (the canary's label in D, in D′), got {labels!r}")
    X, X_prime = np.array(problem.X, dtype=float), np.array(problem.X, dtype=float)
    y_d, y_prime = np.array(problem.y, dtype=float), np.array(problem.y, dtype=float)
    X[record], X_prime[record] = problem.feature_bound * u, problem.feature_bound * u_prime
    y_d[record], y_prime[record] = labels
    return problem.with_data(X, y_d), problem.with_data(X_prime, y_prime)


_AFFINE_CACHE: dict = {}  # (name, id(problem), seed, settings) → (problem, result): audits at several noise factors


def _affine_release(name: str, problem, seed: int, common: dict, *, checks: int = 3, hold_seed: bool = False,
                    variant=None):
    """:func:`_read_affine_release`, kept for the audits of the same setting at other noise factors; ``variant``
    names anything else that shapes the runs read (the canary's forced membership of a sampled audit)."""
    key = (name, id(problem), seed, repr(sorted(common.items())), hold_seed, variant)
    cached = _AFFINE_CACHE.get(key)
    if cached is not None and cached[0] is problem:
        return cached[1]
    result = _read_affine_release(name, problem, seed, common, checks=checks, hold_seed=hold_seed)
    if len(_AFFINE_CACHE) > 32:
        _AFFINE_CACHE.clear()
    _AFFINE_CACHE[key] = (problem, result)
    return result


def _read_affine_release(name: str, problem, seed: int, common: dict, *, checks: int = 3, hold_seed: bool = False):
    """The released model as an affine function of the run's draws, read off the library's own runs.

    Returns ``(draws, offset, matrix)`` with ``model = offset + matrix @ concat(draw values)`` —
    ``offset`` from a run with every draw switched off, each column from a run with one coordinate of
    one draw set to its σ (or 1/ζ) — or ``None`` when ``checks`` ordinary runs (seeds ``seed + 10⁶ …``)
    do not satisfy it to 1e-9 (the release is not affine in the noise: audit by runs instead).
    ``hold_seed``: the check runs keep ``seed`` — every random choice besides the noise (a random
    walk's path) stays as read — and receive fresh Gaussian values at the drawn scales instead.
    """
    from .registry import run

    with intercept_noise() as draws:
        run(name, problem, seed=seed, **common)
    if not draws:
        return None
    shapes = [d.raw.shape for d in draws]
    sizes = [int(np.prod(shape)) for shape in shapes]
    units = [np.broadcast_to((d.noise if d.mechanism == "gaussian" else 1.0 / d.noise)[..., None], d.raw.shape).ravel()
             for d in draws]

    def model_with(flat):
        parts = np.split(flat, np.cumsum(sizes)[:-1])
        with intercept_noise(lambda i, draw: parts[i].reshape(shapes[i])):
            return np.ravel(run(name, problem, seed=seed, **common).model).astype(float)

    total = sum(sizes)
    unit = np.concatenate(units)
    offset = model_with(np.zeros(total))
    columns = []
    for j in range(total):
        flat = np.zeros(total)
        flat[j] = unit[j] if unit[j] > 0 else 1.0
        columns.append((model_with(flat) - offset) / flat[j])
    matrix = np.column_stack(columns)
    fresh = np.random.default_rng(10**6 + seed)
    for c in range(checks):  # ordinary runs must be reproduced exactly
        if hold_seed:  # the same seed (path), fresh values at the drawn scales
            values = [fresh.standard_normal(shape) * np.broadcast_to(d.noise[..., None], shape)
                      for d, shape in zip(draws, shapes)]
            with intercept_noise(lambda i, draw: values[i] if i < len(values) else None) as seen:
                model = np.ravel(run(name, problem, seed=seed, **common).model)
        else:
            with intercept_noise() as seen:
                model = np.ravel(run(name, problem, seed=seed + 10**6 + c, **common).model)
        if [d.raw.shape for d in seen] != shapes:
            return None
        flat = np.concatenate([np.ravel(d.value) for d in seen])
        predicted = offset + matrix @ flat
        if not np.allclose(model, predicted, rtol=1e-9, atol=1e-9 * (1 + np.abs(model).max())):
            return None
    return draws, offset, matrix


def _canary_record(problem, problem_prime):
    """The one record in which the two problems differ, or ``None``."""
    if problem.X.shape != problem_prime.X.shape:
        return None
    differ = np.flatnonzero(np.any(problem.X != problem_prime.X, axis=1) | (problem.y != problem_prime.y))
    return int(differ[0]) if differ.size == 1 else None


def _membership(record: int, member: bool):
    """An :func:`intercept_sampling` edit: the drawn sample with ``record`` added (``member``) or removed."""
    if member:
        return lambda i, sample: np.union1d(sample.drawn, [record])
    return lambda i, sample: np.setdiff1d(sample.drawn, [record])


def _sampled_release(name: str, sides, seed: int, common: dict, record: int, *, checks: int = 3):
    """A run with one Poisson-sampled release, as an affine function of its noise for each membership of the
    canary ``record``: ``{True: [map on D, map on D′], False: [...]}`` (maps as :func:`_read_affine_release`
    returns them), or ``None`` when that does not describe the run.

    Each map is read with the canary forced into (or out of) the sample and the seed held, so that the
    other records' membership is the seed's. Then, to 1e-9: runs of the held seed with every other record
    in the sample and with none must be reproduced by the map of the canary's membership, and so must
    ``checks`` ordinary runs per side (seeds ``seed + 10⁶ …``, everything drawn afresh) and the same runs
    with the canary's membership flipped: the release depends on the sample only through the canary.
    """
    from .registry import run

    maps = {}
    for member in (True, False):
        with intercept_sampling(_membership(record, member)):
            maps[member] = [_affine_release(name, p, seed, common, hold_seed=True, variant=("canary", record, member))
                            for p in sides]
        if any(m is None for m in maps[member]):
            return None

    def reproduced(release, model, seen):
        draws, offset, matrix = release
        if [d.raw.shape for d in seen] != [d.raw.shape for d in draws]:
            return False
        predicted = offset + matrix @ np.concatenate([np.ravel(d.value) for d in seen])
        return np.allclose(model, predicted, rtol=1e-9, atol=1e-9 * (1 + np.abs(model).max()))

    for side, p in enumerate(sides):
        for member in (True, False):
            for others in (np.setdiff1d(np.arange(p.n), [record]), np.empty(0, dtype=np.intp)):
                members = np.union1d(others, [record]) if member else others
                with intercept_sampling(lambda i, sample: members), intercept_noise() as seen:
                    model = np.ravel(run(name, p, seed=seed, **common).model)
                if not reproduced(maps[member][side], model, seen):
                    return None
    for c in range(checks):
        for side, p in enumerate(sides):
            with intercept_sampling() as samples, intercept_noise() as seen:
                model = np.ravel(run(name, p, seed=seed + 10**6 + c, **common).model)
            if len(samples) != 1:
                return None
            member = bool(np.isin(record, samples[0].members))
            if not reproduced(maps[member][side], model, seen):
                return None
            with intercept_sampling(_membership(record, not member)), intercept_noise() as seen:
                model = np.ravel(run(name, p, seed=seed + 10**6 + c, **common).model)
            if not reproduced(maps[not member][side], model, seen):
                return None
    return maps


def audit_algorithm(name: str, problem, problem_prime, *, epsilon: float, delta: float, runs: int = 1000,
                    seed: int = 0, noise_factor: float = 1.0, confidence: float = 0.95, method: str = "auto",
                    hold_seed: bool = False, **options) -> AuditResult:
    """Audit a registered private algorithm: ``runs`` runs on each of two neighbouring problems.

    Parameters
    ----------
    name : str
        A registered private algorithm.
    problem, problem_prime : Problem
        The two neighbouring problems (D, D′), e.g. from :func:`canary_pair`.
    epsilon : float
        ε every run reports, as for :func:`dpadmm_lite.run`.
    delta : float
        δ every run reports, as for :func:`dpadmm_lite.run`.
    runs : int, default 1000
        Runs per dataset, a whole number ≥ 4.
    seed : int, default 0
        The seed of the first run (a whole number ≥ 0); later runs use ``seed + 1, …``.
    noise_factor : float, default 1.0
        The factor every noise draw is scaled by, > 0 and finite.
    confidence : float, default 0.95
        Joint confidence of the Clopper–Pearson bounds, in (0, 1).
    method : {"auto", "affine", "runs"}, default "auto"
        How the runs are obtained (see the Notes).
    hold_seed : bool, default False
        Affine method: keep the randomness of ``seed`` besides the noise in every run (see the Notes).

    Returns
    -------
    AuditResult
        The reported ε against the proved lower bound.

    Notes
    -----
    The adversary sees the released model only; its score is the released model projected on the
    direction in which the canary moves the model (read from one run of each side with every draw
    switched off) — for an affine release with Gaussian noise, on that direction whitened by the
    noise's covariance, the most powerful test (:func:`_likelihood_direction`; ``details["reach"]``
    says which fraction of the reported privacy loss the canary can expose at best) — so it learns
    nothing from the runs it is judged on.

    Two ways to get the runs (``method``):

    * ``"affine"`` — vectorised over runs. When the released model is an affine function of the
      noise (one linearised step, an averaging aggregator, a linear prox), a few runs of the
      library's own algorithm read that function off (:func:`_affine_release`: one run with the
      noise off, one per noise coordinate), ordinary runs with fresh seeds check that it reproduces
      them to 1e-9, and then ``runs`` fresh draws of the same mechanisms at the σ (or ζ) the
      algorithm asked for are pushed through it at once. The models are exactly those the
      algorithm would release for those draws.
    * ``"runs"`` — any algorithm: ``runs`` calls of :func:`dpadmm_lite.run` per side (seeds
      ``seed, seed + 1, …``); scores and bounds are vectorised.
    * ``"auto"`` (default) — ``"affine"`` when the check passes, else ``"runs"``.

    **Sampled runs.** When the run's ledger takes credit for Poisson sampling (an event with
    ``sampling_rate`` below 1) and the run draws its samples (:func:`intercept_sampling`), the canary
    must take part in a run only as often as the run's sampler makes it: the audit then reads, for a
    run with one sampled release, one affine map with the canary forced into the sample and one with it
    forced out (:func:`_sampled_release`, which checks that the other records' membership does not move
    the model), and each of the ``runs`` runs per side draws the canary's membership at the rate the
    run's sampler was called with — **not** at the rate the ledger records — and fresh noise for that
    map. A ledger whose rate is smaller than the rate drawn then asks for too little noise, and the
    audit sees it (``details["sampling_rate"]`` is the rate drawn). The direction and ``reach`` are the
    canary's when it takes part, the reach measured against the separation that one sampled release at
    that rate reporting (ε, δ) allows (:func:`detection_power` with ``sampling_rate``). A run that
    samples more than once is audited by runs.

    ``noise_factor`` scales every draw (:func:`scaled_noise`) while the algorithm keeps reporting
    the ε of its own noise. The reported ε is the algorithm's ``trace.privacy.epsilon``.

    ``hold_seed`` (affine method): every run keeps the randomness of ``seed`` besides the noise —
    a random walk's path — and only the noise is fresh. Valid only when the ledger takes no credit
    for that randomness (a walk's ledger counts the visits of the most visited user, not an
    amplification by the path); never for Poisson-sampled or minibatch runs, whose ledgers do (a
    ``ValueError``).
    """
    from .registry import run

    runs = check.count("runs", runs, minimum=4)
    noise_factor = check.positive("noise_factor", noise_factor)
    check.choice("method", method, ("auto", "affine", "runs"))
    common = dict(epsilon=epsilon, delta=delta, **options)
    with intercept_sampling() as samples:
        trace = run(name, problem, seed=seed, **common)
    reported = float(trace.privacy.epsilon)
    amplified = bool(samples) and any(e.sampling_rate < 1 for e in trace.ledger)
    record = _canary_record(problem, problem_prime) if amplified else None
    if amplified and hold_seed:
        raise ValueError(f"hold_seed must be False for {name!r} here: its ledger takes credit for Poisson sampling, "
                         "so every run must draw its own sample")
    # the canary in the sample (when the ledger counts on sampling), every draw switched off: how it moves the model
    with intercept_sampling(None if record is None else _membership(record, True)), \
            intercept_noise(lambda i, draw: np.zeros_like(draw.raw)):
        clean = np.ravel(run(name, problem, seed=seed, **common).model)
        clean_prime = np.ravel(run(name, problem_prime, seed=seed, **common).model)
    direction = clean_prime - clean
    norm = np.linalg.norm(direction)
    if not norm > 0:
        raise ValueError(f"the canary does not move the model of {name!r}: choose another record or direction")
    direction /= norm

    maps, reach, rate = None, None, 1.0
    if method in ("auto", "affine") and amplified:
        if record is not None and len(samples) == 1:
            maps = _sampled_release(name, (problem, problem_prime), seed, common, record)
        if maps is None and method == "affine":
            raise ValueError(f"the model released by {name!r} is not affine in its noise for each membership of the "
                             "canary here (the affine audit of a sampled run needs one sampled release, one canary "
                             "record, and a model that the other records' membership does not move); use "
                             "method='runs'")
        if maps is not None:
            rate = samples[0].rate
            direction, reach = _likelihood_direction(maps[True][0], clean_prime - clean, direction, epsilon=reported,
                                                     delta=delta, sampling_rate=rate)
    elif method in ("auto", "affine"):
        maps = [_affine_release(name, p, seed, common, hold_seed=hold_seed) for p in (problem, problem_prime)]
        if any(m is None for m in maps):
            if method == "affine":
                raise ValueError(f"the model released by {name!r} is not affine in its noise here; use method='runs'")
            maps = None
        else:
            direction, reach = _likelihood_direction(maps[0], clean_prime - clean, direction, epsilon=reported,
                                                     delta=delta)
            maps = {True: maps}  # every run's release (nothing sampled, or a ledger that counts every release)
    rng = np.random.default_rng(seed)
    if maps is not None:
        used = "affine"
        scores = np.empty((2, runs))
        for side in (0, 1):
            # the canary's membership at the rate drawn (everyone when nothing is sampled), then fresh noise
            member = rng.random(runs) < rate if rate < 1 else np.ones(runs, dtype=bool)
            models = np.empty((runs, direction.size))
            for takes_part, which in ((True, member), (False, ~member)):
                k = int(which.sum())
                if not k:
                    continue
                draws, offset, matrix = maps[takes_part][side]
                fresh = []
                for d in draws:  # the same mechanisms at the scales the algorithm asked for, all runs at once
                    per_vector = np.broadcast_to(d.noise, d.raw.shape[:-1])
                    draw = mechanisms.gaussian if d.mechanism == "gaussian" else mechanisms.l2_laplace
                    fresh.append(noise_factor * draw(rng, per_vector, (k, *d.raw.shape)).reshape(k, -1))
                models[which] = offset + np.concatenate(fresh, axis=1) @ matrix.T  # (k, d): those runs at once
            scores[side] = (models - clean) @ direction
    else:
        used = "runs"
        models = np.empty((2, runs, direction.size))
        with scaled_noise(noise_factor):
            for side, p in enumerate((problem, problem_prime)):
                for r in range(runs):
                    models[side, r] = np.ravel(run(name, p, seed=seed + r, **common).model)
        scores = (models - clean) @ direction  # (2, runs), all runs at once
    bound = epsilon_lower_bound(scores[0], scores[1], delta, confidence=confidence, seed=seed)
    details = {**bound, "separation": float(norm), "method": used, "reach": reach}
    if amplified:
        details.update(sampling_rate=samples[0].rate if len({s.rate for s in samples}) == 1 else None,
                       recorded_sampling_rate=min(e.sampling_rate for e in trace.ledger))
    return AuditResult(name, reported, bound["epsilon"], delta, runs, confidence, noise_factor, details)


def _likelihood_direction(release, shift, direction, *, epsilon, delta, sampling_rate=1.0):
    """The score direction of an affine release with Gaussian noise, and the canary's reach.

    With ``model = offset + M·ξ``, ``ξ ~ N(0, diag(σ²))``, the model is Gaussian with covariance
    ``C = M diag(σ²) Mᵀ``, and the canary shifts its mean by ``shift``; the most powerful test
    projects on ``C⁺·shift`` (Neyman–Pearson), and its score separates the two sides by
    ``μ = √(shiftᵀ C⁺ shift)`` noise units. ``reach = μ / μ(ε, δ)``, with μ(ε, δ) the separation
    that a Gaussian release reporting the algorithm's (ε, δ) allows (one sampled release at
    ``sampling_rate``: the separation of its replace-one pair): 1 when the canary exposes all
    the privacy loss the report accounts for, ½ for a canary that moves a release by half its Δ.
    Anything but Gaussian noise (ℓ2-Laplace): the given direction, reach ``None``.
    """
    draws, _, matrix = release
    if any(d.mechanism != "gaussian" for d in draws) or not math.isfinite(epsilon):
        return direction, None
    variances = np.concatenate([np.broadcast_to(d.noise[..., None], d.raw.shape).ravel() ** 2 for d in draws])
    covariance = (matrix * variances) @ matrix.T
    whitened = np.linalg.pinv(covariance, hermitian=True) @ shift
    if np.linalg.norm(covariance @ whitened - shift) > 1e-9 * np.linalg.norm(shift):
        return direction, math.inf  # the canary moves the model where no noise reaches: the raw direction shows it
    mu = float(np.sqrt(max(shift @ whitened, 0.0)))
    if not mu > 0:
        return direction, None
    return whitened / np.linalg.norm(whitened), mu / _separation(epsilon, delta, sampling_rate)


# ====================================================================== the book's standard audits
def tiny_problem(loss: str = "logistic"):
    """A tiny problem whose record 0 becomes the canary: logistic-ℓ2 (24 × 2) or ridge regression (20 × 2).

    Parameters
    ----------
    loss : {"logistic", "squared"}, default "logistic"
        Logistic-ℓ2 or ridge regression.

    Returns
    -------
    Problem
        The problem.
    """
    from . import datasets, problems

    check.choice("loss", loss, ("logistic", "squared"))
    if loss == "logistic":
        X, y, _ = datasets.make_classification(24, 2, seed=0)
        return problems.logistic(X, y, 1e-2, "l2")
    X, y, _ = datasets.make_lasso(20, 2, seed=0, support=2)
    return problems.Problem(X, y, 1e-2, "squared", "l2", name="ridge")


#: The canaries of :func:`canary_pair`.
CANARIES = ("squared", "logistic", "logistic-far-optimum", "logistic-far-step", "squared-one-record", "squared-walk",
            "squared-sampled")
#: Each canary of :data:`CANARIES` in a reader's words (the book's audit table; see :func:`canary_pair`).
CANARY_DESCRIPTIONS = {
    "squared": "ridge regression, 20 records; the canary at the norm bound, labels ±1",
    "logistic": "logistic regression, 24 records; the canary at the norm bound, labels ±1",
    "logistic-far-optimum": "logistic regression, 20,000 records holding the optimum far out; "
                            "a misclassified canary, mirrored",
    "logistic-far-step": "logistic regression, 24,000 identical records and a huge first step; "
                         "a misclassified canary, mirrored",
    "squared-one-record": "ridge regression on the canary alone, labels ±10",
    "squared-walk": "ridge regression, 2 records; the canary is the walk's first user, labels ±10",
    "squared-sampled": "ridge regression, 200 records: the canary, labels ±10, among 199 zero rows; "
                       "minibatches of expected size 1",
}
#: Records of the "squared-sampled" canary: a minibatch of expected size b = 1 among them is drawn at the rate
#: 1/200 of Liu et al.'s chapter (b = 50 of its 10,000 training rows).
_SAMPLED_RECORDS = 200
#: The labels ±10 of the one-record canaries: ten times the unit rows' norm, so that both versions'
#: residuals (and so their clipped gradients or clipped differences) point in opposite directions at
#: full clip — the whole replace-one sensitivity 2C.
_FAR_LABEL = 10.0

# "logistic-far-optimum": records at ±φ from e₁ in the (e₁, e₃) plane pull an ℓ2-minimiser along e₁ by
# σ(−a·w)·cos φ each; at w = v·e₁ that pull, x·σ(−x)/v with x = v cos φ, is largest (0.2785/v) at x = 1.2785,
# so with cos φ = 1.2785/v and strong convexity Λ = 0.2785/v² the minimiser rests at v (here 60).
_FAR_OPTIMUM = {"records": 20_000, "distance": 60.0, "canary_margin": 7.0}
#: ρ of pvp_star on that canary: Λ = ρ + λ = 0.2785/60² (λ = 1e-9).
FAR_OPTIMUM_RHO = 0.2785 / _FAR_OPTIMUM["distance"] ** 2
# "logistic-far-step": every other record is u (label +1), so the first step of a huge step size moves the
# model to w ≈ u/(2(ρ + 1/η)) ≈ 10⁴·u, where they are all classified at a margin of 10⁴ (|ℓ'| < 1e-300).
_FAR_STEP = {"records": 24_000, "canary_cos": 0.1}


def canary_pair(kind: str = "logistic"):
    """The two neighbouring problems (D, D′) of one of the book's canaries (:data:`CANARIES`).

    Parameters
    ----------
    kind : str, default "logistic"
        One of :data:`CANARIES`.

    Returns
    -------
    problem, problem_prime : Problem
        D and D′.

    Notes
    -----
    * ``"squared"``, ``"logistic"``: :func:`canary_neighbours` of :func:`tiny_problem` — record 0 at the
      public norm bound, labels ±. For a clipped loss the two versions' gradients are ±C: the whole
      sensitivity. For the logistic loss *at w = 0* (the first step of every star algorithm) ``|ℓ'| = ½``:
      the canary moves the release by half the lemma's Δ = 2c₁/…, never more.
    * ``"squared-one-record"`` — ridge regression on *one* record, the canary (labels ∓10, far beyond the
      unit rows, so that both versions are clipped in opposite directions: the whole 2C). For the methods
      whose ledger charges every user's (or record's) own noisy release — Cyffers et al.'s u-updates, the
      clipped gradient sums of DP-SGD and DP-SADMM — a release that averages n users' noise shows the
      canary's shift over √n of noise: one record is the setting where the released model is that
      release (reach 1).
    * ``"squared-walk"`` — the same on two records, the canary being the user a random walk of seed 0
      visits first (``private_admm_walk``, one step, the path held fixed: see ``hold_seed`` of
      :func:`audit_algorithm`).
    * ``"squared-sampled"`` — the canary of ``"squared-one-record"`` among 199 rows of zeros (label 0),
      whose gradients vanish at every model: a minibatch of expected size 1 is drawn at rate 1/200, and
      the release depends on the sample only through the canary's membership (the sampled audit of
      :func:`audit_algorithm` checks that), so that the canary is in the sample in 1/200 of the runs and
      shows its whole sensitivity when it is.
    * ``"logistic-far-optimum"`` — for an exact minimiser (``pvp_star``, one step, ρ =
      :data:`FAR_OPTIMUM_RHO`): 20,000 records in d = 3 (the other records at ±φ around e₁ in the (e₁, e₃)
      plane hold the minimiser 60 units out along e₁) and a canary ``−(cos θ e₁ ± sin θ e₂)`` (label +1,
      the sign of e₂ flipped in D′) with ``60 cos θ = 7``: misclassified at margin −7 in both versions
      (|ℓ'| = 0.999), nearly perpendicular to the model, mirror images of each other, so their gradients
      differ by ``2 sin θ |ℓ'| c₁ ≈ 0.99 · 2c₁``; no other record curves the loss along e₂, and the many
      records keep the canary's pull on its own margin small. The minimiser moves by 0.99 of Δ = 2c₁/(mΛ).
    * ``"logistic-far-step"`` — for a gradient step (``dp_admm_star`` with a public ``c_w = 10⁷``, ℓ1 with
      λ = 1e-10, ρ = 5e-5, one agent): 24,000 records, the others all ``u = (1, 1)/√2`` with label +1 and
      the canary ``−(cos θ u ± sin θ v)`` (v ⊥ u, cos θ = 0.1). The first step, at w = 0, moves the model to
      ≈ 10⁴ u, where every record's margin is so large that |ℓ'| is 1 (the canary) or 0 (the others) to
      double precision: from the second step on the canary moves each release by ``sin θ · Δ_k = 0.995 Δ_k``,
      and every release stays affine in the noise (the audit's exact, vectorised path).
      The first release, at w = 0, still moves by only half its Δ: with T releases the released model
      carries ``(T − ½)`` of T releases' worth of shift.
    """
    from . import problems

    check.choice("kind", kind, CANARIES)
    if kind in ("squared", "logistic"):
        return canary_neighbours(tiny_problem(kind))
    if kind in ("squared-one-record", "squared-walk"):
        n = 1 if kind == "squared-one-record" else 2
        ridge = tiny_problem("squared")
        base = ridge.with_data(ridge.X[:n], ridge.y[:n])
        record = 0 if n == 1 else _walk_first_user(n)
        return canary_neighbours(base, record=record, labels=(-_FAR_LABEL, _FAR_LABEL))
    if kind == "squared-sampled":
        ridge = tiny_problem("squared")
        X, y = np.zeros((_SAMPLED_RECORDS, ridge.d)), np.zeros(_SAMPLED_RECORDS)
        X[0] = ridge.X[0]  # replaced by the canary
        return canary_neighbours(ridge.with_data(X, y), labels=(-_FAR_LABEL, _FAR_LABEL))
    if kind == "logistic-far-optimum":
        m, v, margin = _FAR_OPTIMUM["records"], _FAR_OPTIMUM["distance"], _FAR_OPTIMUM["canary_margin"]
        cos_phi = 1.2785 / v
        X = np.zeros((m, 3))
        X[:, 0] = cos_phi
        X[:, 2] = math.sqrt(1 - cos_phi**2) * np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
        base = problems.logistic(X, np.ones(m), 1e-9, "l2")
        cos_t = margin / v
        sin_t = math.sqrt(1 - cos_t**2)
        return canary_neighbours(base, direction=[-cos_t, -sin_t, 0.0], direction_prime=[-cos_t, sin_t, 0.0],
                                 labels=(1.0, 1.0))
    m, cos_t = _FAR_STEP["records"], _FAR_STEP["canary_cos"]
    u, v = np.array([1.0, 1.0]) / math.sqrt(2), np.array([-1.0, 1.0]) / math.sqrt(2)
    base = problems.logistic(np.tile(u, (m, 1)), np.ones(m), 1e-10, "l1")
    sin_t = math.sqrt(1 - cos_t**2)
    return canary_neighbours(base, direction=-(cos_t * u + sin_t * v), direction_prime=-(cos_t * u - sin_t * v),
                             labels=(1.0, 1.0))


def _walk_first_user(n: int) -> int:
    """The user a random walk over the complete graph of ``n`` users visits first at seed 0."""
    from .algorithms.cyffers2023 import _walk_paths

    return int(_walk_paths(None, n, 1, [0])[0, 0])


_CYFFERS_AUDIT = {"rho": 1 / 24, "relaxation": 0.5, "clip": 0.1, "iterations": 1}

#: The audits the privacy chapter and ``scripts/audit.py`` run: (algorithm, canary of :func:`canary_pair`,
#: options). One agent (or one record), and releases affine in the noise, so that the audit is exact and
#: vectorised over runs. DP-ADMM, DP-AccADMM, DP-SGD, DP-SADMM, proximal DP-SGD and the three private
#: ADMMs of Cyffers et al. on clipped gradients (or clipped differences), where the canary uses the whole
#: sensitivity; PVP and DP-ADMM over a star on canaries the model meets at a large margin (|ℓ'| → 1),
#: where the logistic loss's canary reaches the lemma's Δ — for PVP in one step, for DP-ADMM from its
#: second step on (its first, at w = 0, reaches half of it: three steps expose 0.83 of the reported
#: privacy loss). The methods whose ledgers take credit for Poisson sampling run at their book's rate
#: (:data:`BOOK_SAMPLING_RATES`), the canary's membership drawn at the rate the run draws its samples
#: at (:func:`audit_algorithm`); federated ADMM's ledger takes no such credit (every participation of
#: the most exposed user is a full release), so its worst case is q = 1, where the canary takes part
#: in every round. Every private algorithm is here or in :data:`NOT_AUDITED`, with its reason.
STANDARD_AUDITS = (
    ("dp_admm", "squared", {"rho": 1.0, "iterations": 1, "clip": 0.1}),
    ("dp_acc_admm", "squared", {"rho": 1.0, "iterations": 1, "clip": 0.1}),
    ("dp_sgd_star", "logistic", {"iterations": 1, "n_agents": 1, "clip": 0.3}),
    ("dp_admm_star", "logistic-far-step", {"rho": 5e-5, "iterations": 3, "n_agents": 1, "c_w": 1e7}),
    ("pvp_star", "logistic-far-optimum", {"rho": FAR_OPTIMUM_RHO, "iterations": 1, "n_agents": 1}),
    ("dp_sadmm", "squared-sampled", {"rho": 1.0, "iterations": 1, "batch_size": 1, "clip": 0.1}),
    ("ssadmm", "squared-sampled", {"rho": 1.0, "iterations": 1, "batch_size": 1, "clip": 0.1}),
    ("private_admm", "squared-one-record", dict(_CYFFERS_AUDIT)),
    ("private_admm_federated", "squared-one-record", {**_CYFFERS_AUDIT, "sampling_rate": 1.0}),
    ("private_admm_walk", "squared-walk", dict(_CYFFERS_AUDIT)),
    ("dp_prox_sgd", "squared-one-record", {"clip": 0.1, "step": 0.5, "sampling_rate": 0.1, "iterations": 1}),
)

#: The rate at which each standard audit of a method whose ledger takes credit for Poisson sampling draws
#: the canary's membership: the rate of the book's published runs. DP-SADMM and ssADMM: minibatches of
#: b = 50 of the 10,000 training rows of Liu et al.'s chapter (here b = 1 of 200 records, the
#: ``"squared-sampled"`` canary); proximal DP-SGD: Cyffers et al.'s 10 % of users per round (App. E).
BOOK_SAMPLING_RATES = {"dp_sadmm": 50 / 10_000, "ssadmm": 50 / 10_000, "dp_prox_sgd": 0.1}

#: Standard audits whose affine map is read with the run's seed held (:func:`audit_algorithm`'s
#: ``hold_seed``): the walk's path is public randomness its ledger takes no credit for.
HOLD_SEED = frozenset({"private_admm_walk"})

class Unaudited(NamedTuple):
    """Why no standard audit covers a private algorithm, and what checks it instead (book's words).

    Parameters
    ----------
    reason : str
        Why no standard audit covers the algorithm.
    checked_by : str
        What checks it instead.
    """

    reason: str
    checked_by: str

    def __str__(self) -> str:
        return f"{self.reason}; checked instead by {self.checked_by}"


#: The private algorithms no standard audit covers: why, and what checks them instead.
NOT_AUDITED = {
    "dvp_star": Unaudited(
        "objective perturbation: the released model is an exact minimiser, non-linear in its ℓ2-Laplace noise, so "
        "every audit run is a run of the library with a local solve (the affine method does not apply), and the tens "
        "of thousands of runs that catch halved noise do not fit the test suite's time",
        "the law of its noise (the radius of the ℓ2-Laplace draws: the noise drawn is the noise claimed, and halved "
        "noise is caught there; tests/test_privacy_noise.py), its sensitivity (the measured shift stays within the "
        "ledger's Δ; tests/test_privacy_sensitivity.py), and an audit by runs that must not prove more than the "
        "reported ε (tests/test_privacy_audit.py)"),
    "dvp_graph": Unaudited(
        "objective perturbation over a network, as DVP over a star: the broadcast minimisers are non-linear in the "
        "ℓ2-Laplace noise",
        "the law of its noise and its sensitivity (tests/test_privacy_noise.py, tests/test_privacy_sensitivity.py, "
        "tests/test_network.py), and an audit by runs"),
    "pvp_graph": Unaudited(
        "its last step is a DVP step, non-linear in the noise, fed by the noisy broadcasts",
        "the radius law of the noise drawn and the sensitivity of one step and of the hidden state "
        "(tests/test_network.py, tests/test_privacy_noise.py), and an audit by runs"),
    "dp_vradmm": Unaudited(
        "its ledger charges each inner step for the worst case of the variance-reduced gradient difference, up to "
        "4C/b, which needs a canary whose clipped gradient turns around between the snapshot and the iterate; the "
        "one-epoch canary (ridge regression on one record, labels ±10) moves only the snapshot's gradient and "
        "reaches 0.32 of the reported privacy loss, below the ½ that halved noise needs, at any number of runs — "
        "and so no audit at its sampling rate could catch a rate recorded too small either",
        "the law of its noise (tests/test_privacy_noise.py), its sensitivity, the ledger's 2c/n reached from an "
        "adversarial snapshot (tests/test_privacy_sensitivity.py), and the rate its ledger records against the "
        "rate its minibatches are drawn at, which a rate four times too small fails (tests/test_liu.py)"),
}


def standard_runs(name: str, *, epsilon: float = 2.0, delta: float = 1e-3, runs: int | None = None,
                  detect: float = 0.7, power: float = 0.9) -> int:
    """Runs per dataset of the standard audit of ``name`` (:data:`STANDARD_AUDITS`, or the Gaussian mechanism).

    Parameters
    ----------
    name : str
        An algorithm of :data:`STANDARD_AUDITS`, or ``"Gaussian mechanism"``.
    epsilon : float, default 2.0
        ε the runs report.
    delta : float, default 1e-3
        δ the runs report.
    runs : int, optional
        Runs for an audit of unsampled releases, a whole number ≥ 4; ``None``: sized by ``detect``
        (which must then be below 1) and ``power``.
    detect : float, default 0.7
        The noise cut the runs catch with probability ``power``.
    power : float, default 0.9
        That probability, in (0, 1).

    Returns
    -------
    int
        Runs per dataset, at least 4.

    Notes
    -----
    ``runs`` (default ``runs_needed(epsilon, delta, detect, power=power)``: enough to catch noise cut to
    ``detect`` with probability ``power`` at reach 1) for an audit of unsampled releases; an audit at a
    sampling rate q (:data:`BOOK_SAMPLING_RATES`) takes ``runs`` times
    ``runs_needed(…, sampling_rate=q) / runs_needed(…)``, the same power for a canary that takes part in a
    fraction q of the runs.
    """
    unsampled = runs_needed(epsilon, delta, detect, power=power)
    if runs is None:
        if not math.isfinite(unsampled):
            raise ValueError(f"detect must be below 1 for the audit to size itself (a cut to {detect!r} of the noise "
                             f"is not detectable with up to 10⁹ runs at ε = {epsilon:g}, δ = {delta:g}); or give runs")
        runs = unsampled
    runs = check.count("runs", runs, minimum=4)
    rate = BOOK_SAMPLING_RATES.get(name, 1.0)
    if rate == 1 or not math.isfinite(unsampled):
        return runs
    return max(4, math.ceil(runs * runs_needed(epsilon, delta, detect, power=power, sampling_rate=rate) / unsampled))


def standard_audits(*, epsilon: float = 2.0, delta: float = 1e-3, runs: int | None = None, detect: float = 0.7,
                    power: float = 0.9, noise_factors=(1.0, 0.5), seed: int = 0,
                    verbose: bool = True) -> list[AuditResult]:
    """Audit the Gaussian mechanism and every algorithm of :data:`STANDARD_AUDITS` at each noise factor.

    Parameters
    ----------
    epsilon : float, default 2.0
        ε every run reports.
    delta : float, default 1e-3
        δ every run reports.
    runs : int, optional
        Runs per dataset; ``None``: ``runs_needed(epsilon, delta, detect, power=power)``.
    detect : float, default 0.7
        The noise cut the default ``runs`` catch with probability ``power``.
    power : float, default 0.9
        That probability.
    noise_factors : sequence of float, default (1.0, 0.5)
        The factors the noise actually added is scaled by.
    seed : int, default 0
        The audits' seed.
    verbose : bool, default True
        Print each result.

    Returns
    -------
    list of AuditResult
        One per audit and noise factor.

    Notes
    -----
    Every run reports (ε, δ) = (``epsilon``, ``delta``); ``noise_factors`` (default: as calibrated, then
    halved) scale the noise actually added. ``runs`` per dataset; default
    ``runs_needed(epsilon, delta, detect, power=power)``: enough to prove the report wrong with
    probability ``power`` when the noise is cut to ``detect`` (70 %) of what it should be, for a canary
    that reaches the whole sensitivity (``details["reach"]`` of each result says how much of it the
    canary reaches; a canary reaching r catches a cut to ``detect · r`` as surely). An audit at a
    sampling rate scales ``runs`` to the same power (:func:`standard_runs`). Prints each result when
    ``verbose``.
    """
    runs = standard_runs("Gaussian mechanism", epsilon=epsilon, delta=delta, runs=runs, detect=detect, power=power)
    if verbose:
        print(f"{runs:,} runs per dataset: enough to catch noise cut to {detect:.0%} with {power:.0%} power "
              f"(audit.runs_needed); the audits at a sampling rate as many as give them the same power")
    canaries = {name: canary_pair(kind) for name, kind, _ in STANDARD_AUDITS}
    kind_of = {name: kind for name, kind, _ in STANDARD_AUDITS}
    runs_of = {name: standard_runs(name, epsilon=epsilon, delta=delta, runs=runs, detect=detect, power=power)
               for name, _, _ in STANDARD_AUDITS}
    results = []
    for factor in noise_factors:
        result = audit_gaussian_mechanism(epsilon=epsilon, delta=delta, runs=runs, seed=seed, noise_factor=factor)
        results.append(result)
        if verbose:
            print(result)
        for name, _, options in STANDARD_AUDITS:
            D, D_prime = canaries[name]
            result = audit_algorithm(name, D, D_prime, epsilon=epsilon, delta=delta, runs=runs_of[name], seed=seed,
                                     noise_factor=factor, method="affine", hold_seed=name in HOLD_SEED, **options)
            result.details["canary"] = kind_of[name]
            results.append(result)
            if verbose:
                print(result)
    return results


class TuningAudit(NamedTuple):
    """What :func:`audit_tuning` finds: the lower bounds the canary attack proves (95 % confidence) on the
    tuning's release and on its diagnostics, against the largest ε the tunings reported.

    Parameters
    ----------
    released : dict
        :func:`epsilon_lower_bound` of the published models' projection.
    diagnostics : dict
        :func:`epsilon_lower_bound` of the sum of every run's projection (outside the guarantee).
    epsilon_reported : float
        The largest ε the tunings reported.
    runs : int
        Tunings per side.
    noise_factor : float
        The factor every noise draw was scaled by.
    """

    released: dict
    diagnostics: dict
    epsilon_reported: float
    runs: int
    noise_factor: float


def audit_tuning(runs: int, *, epsilon: float = 2.0, delta: float = 1e-3, mean_repetitions: float = 10.0,
                 eta: float = 0.0, noise_factor: float = 1.0, seed: int = 0) -> TuningAudit:
    """Audit :func:`dpadmm_lite.tune` as a reviewer attacked it: ``runs`` private tunings on each side of the
    one-record canary pair of Cyffers et al.'s private ADMM (``canary_pair("squared-one-record")``: the record
    moves every run's model by the whole sensitivity), with random stopping (``eta``, ``mean_repetitions``) at
    (``epsilon``, ``delta``) and a legitimate custom score that ranks a run by its model's projection on the
    canary's direction — the score that makes the selection most revealing.

    Parameters
    ----------
    runs : int
        Private tunings per side, a whole number ≥ 2.
    epsilon : float, default 2.0
        ε of each tuning.
    delta : float, default 1e-3
        δ of each tuning.
    mean_repetitions : float, default 10.0
        Expected number of candidate runs of random stopping.
    eta : float, default 0.0
        Shape η of random stopping's ``D_{η,γ}``.
    noise_factor : float, default 1.0
        The factor every noise draw is scaled by.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    TuningAudit
        The lower bounds on the release and on the diagnostics.

    Notes
    -----
    ``released``: :func:`epsilon_lower_bound` of the published model's projection (what the guarantee covers).
    ``diagnostics``: the same on the sum of every run's projection (``diagnostics().runs``: all K runs, their
    likelihood-ratio statistic) — outside the guarantee, and the reason it is kept apart. ``noise_factor``
    scales every noise draw (:func:`scaled_noise`) while the reported ε stays: below 1 the attack on the
    release must catch the tuner.
    """
    from . import registry
    from .tuning import tune

    runs = check.count("runs", runs, minimum=2)
    P, Q = canary_pair("squared-one-record")
    clean = [registry.run("private_admm", p, **_CYFFERS_AUDIT).model for p in (P, Q)]
    direction = (clean[1] - clean[0]) / np.linalg.norm(clean[1] - clean[0])
    options = dict(_CYFFERS_AUDIT)
    rho = options.pop("rho")
    rng = np.random.default_rng(seed)
    X_val, y_val = rng.normal(size=(4, P.d)) * 0.3, rng.normal(size=4)  # the score does not read them

    def score(model, X, y):
        return float(-(model @ direction))

    released, every_run, reported = np.empty((2, runs)), np.empty((2, runs)), 0.0
    with scaled_noise(noise_factor) if noise_factor != 1 else contextlib.nullcontext():
        for side, problem in enumerate((P, Q)):
            for i in range(runs):
                r = tune("private_admm", problem, [{"rho": rho}, {"rho": 2 * rho}], epsilon=epsilon, delta=delta,
                         validation=(X_val, y_val), eta=eta, mean_repetitions=mean_repetitions,
                         seed=int(rng.integers(2**62)), score=score, **options)
                released[side, i] = float(r.trace.model @ direction)
                every_run[side, i] = -sum(run["score"] for run in r.diagnostics().runs)
                reported = max(reported, r.privacy.epsilon)
    return TuningAudit(epsilon_lower_bound(released[0], released[1], delta, seed=seed),
                       epsilon_lower_bound(every_run[0], every_run[1], delta, seed=seed), reported, runs,
                       float(noise_factor))

"""Liu et al. (2022), DP-SADMM and DP-VRADMM: the paper's own noise and ε (Theorems 1 and 2)."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as check


def liu2022_vradmm_sigma(epsilon: float, delta: float, *, lipschitz: float, n: int, epochs: int, inner: int, c2: float = 80.0) -> float:
    """Noise σ of DP-VRADMM, Liu et al. (2022), Theorem 1: ``σ² = c₂ l² S m ln(1/δ)/(n² ε²)``.

    Parameters
    ----------
    epsilon : float
        ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    lipschitz : float
        l, the Lipschitz constant of a component, > 0 and finite.
    n : int
        Number of records, a whole number ≥ 1.
    epochs : int
        Number of epochs S, a whole number ≥ 1.
    inner : int
        Inner iterations m per epoch, a whole number ≥ 1.
    c2 : float, default 80.0
        The theorem's constant c₂, > 0 and finite.

    Returns
    -------
    float
        σ.

    Notes
    -----
    S epochs of m inner iterations, l-Lipschitz components, n samples; the theorem requires
    ``ε ≤ c₁Sm/n²``. The paper leaves the constant c₂ unspecified (Algorithm 1 calls it c₁).
    Default ``c₂ = 80``: the value that the paper's own DP-SADMM argument (Theorem 2,
    ``σ² = 20αTl²/(θεn²)`` with ``α ≈ ln(1/δ)/((1−θ)ε)``, θ = ½) gives for T = S·m noisy
    minibatch steps. The ε reported for a run comes from the unified ledger, not from c₂.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    l = check.positive("lipschitz", lipschitz)
    n = check.count("n", n)
    S = check.count("epochs", epochs)
    m = check.count("inner", inner)
    c2 = check.positive("c2", c2)
    return math.sqrt(c2 * l * l * S * m * math.log(1 / delta) / (n * n * epsilon * epsilon))


def liu2022_sadmm_sigma(epsilon: float, delta: float, *, iterations: int, n: int, lipschitz: float, theta: float = 0.5) -> float:
    """Noise σ of DP-SADMM, Liu et al. (2022), Theorem 2 (Algorithm 2, line 1).

    Parameters
    ----------
    epsilon : float
        ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of steps T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    lipschitz : float
        l, the Lipschitz constant of a record's loss, > 0 and finite.
    theta : float, default 0.5
        θ, the share of ε spent by the RDP composition, in (0, 1).

    Returns
    -------
    float
        σ.

    Notes
    -----
    ``σ² = 20αTl²/(θεn²)`` with ``α = log(1/δ)/((1 − θ)ε) + 1``, θ ∈ (0, 1). Derivation:
    Lemma 2 (subsampled Gaussian, rate ς = b/n, ``5ς²αΔ²/σ²``-RDP with Δ = 2l/b) composed over
    T steps equals θε, then the classic conversion. Valid only under the conditions of
    :func:`liu2022_sadmm_conditions`.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    l = check.positive("lipschitz", lipschitz)
    theta = check.open_unit("theta", theta)
    alpha = math.log(1 / delta) / ((1 - theta) * epsilon) + 1
    return math.sqrt(20 * alpha * T * l * l / (theta * epsilon * n * n))


def liu2022_sadmm_side_conditions(epsilon: float, delta: float, *, iterations: int, n: int, batch_size: int,
                                  theta: float = 0.5) -> dict:
    """Both side conditions of Liu et al.'s Theorem 2, evaluated (numbers, not just a verdict).

    Parameters
    ----------
    epsilon : float
        ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of steps T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    batch_size : int
        Minibatch size b, a whole number in [1, n].
    theta : float, default 0.5
        θ, in (0, 1).

    Returns
    -------
    dict
        ``alpha``, ``alpha_bound`` (the right-hand side of the first condition),
        ``variance_ratio`` (``σ²/Δ² = 5αb²T/(θεn²)``), ``first``, ``second`` (bools) and ``holds``.

    Notes
    -----
    Theorem 2 holds "if there exists θ ∈ (0, 1) such that ``α ≤ log(θεn³/(5αb³T + θεbn²))`` and
    ``5αb²T/(θεn²) ≥ 1.5``", with ``α = log(1/δ)/((1 − θ)ε) + 1``. They come from Lemma 2
    (Wang et al. 2019's subsampled-RDP bound, ``5ς²αΔ²/σ²`` for ``σ²/Δ² ≥ 1.5`` and
    ``α ≤ log(1/(ς(1 + σ²/Δ²)))``, ς = b/n, Δ = 2l/b) at the σ of the theorem.

    Since the right-hand side of the first condition is below ``log(n/b)`` and
    ``α > log(1/δ)/ε + 1`` for every θ, the theorem cannot apply when
    ``log(1/δ)/ε + 1 ≥ log(n/b)``: at the paper's δ = 5·10⁻⁴ and ε ≤ 1 that needs
    ``n/b > e^{8.6} ≈ 5,400`` at ε = 1 and ``n/b > e^{153}`` at ε = 0.05 — none of its datasets.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    b = check.count("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, n = {n}], got {b}")
    theta = check.open_unit("theta", theta)
    alpha = math.log(1 / delta) / ((1 - theta) * epsilon) + 1
    alpha_bound = math.log(theta * epsilon * n**3 / (5 * alpha * b**3 * T + theta * epsilon * b * n**2))
    ratio = 5 * alpha * b**2 * T / (theta * epsilon * n**2)  # σ²/Δ² at Theorem 2's σ
    first, second = alpha <= alpha_bound, ratio >= 1.5
    return {"alpha": alpha, "alpha_bound": alpha_bound, "variance_ratio": ratio, "first": bool(first),
            "second": bool(second), "holds": bool(first and second)}


def liu2022_sadmm_conditions(epsilon: float, delta: float, *, iterations: int, n: int, batch_size: int,
                             theta: float | None = 0.5) -> bool:
    """Whether Liu et al.'s Theorem 2 applies: ``α ≤ log(θεn³/(5αb³T + θεbn²))`` and ``5αb²T/(θεn²) ≥ 1.5``.

    ``theta=None`` asks the theorem's own question, "does some θ ∈ (0, 1) satisfy both?"
    (searched on a grid of 999 values). See :func:`liu2022_sadmm_side_conditions` for the numbers.

    Parameters
    ----------
    epsilon : float
        ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of steps T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    batch_size : int
        Minibatch size b, a whole number in [1, n].
    theta : float or None, default 0.5
        θ, in (0, 1); ``None``: whether any θ on a grid of 999 values satisfies both.

    Returns
    -------
    bool
        Whether both side conditions hold.
    """
    thetas = np.linspace(0.001, 0.999, 999) if theta is None else [theta]
    return any(liu2022_sadmm_side_conditions(epsilon, delta, iterations=iterations, n=n, batch_size=batch_size,
                                             theta=float(t))["holds"] for t in thetas)


def liu2022_sadmm_epsilon(sigma: float, delta: float, *, iterations: int, n: int, lipschitz: float,
                          theta: float | None = None) -> float:
    """Theorem 2 read backwards: the ε that Liu et al.'s DP-SADMM guarantee claims for noise σ.

    Parameters
    ----------
    sigma : float
        σ of the noise, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of steps T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    lipschitz : float
        l, the Lipschitz constant of a record's loss, > 0 and finite.
    theta : float, optional
        θ, in (0, 1); ``None`` (default): the best θ.

    Returns
    -------
    float
        The claimed ε.

    Notes
    -----
    ``σ² = 20αTl²/(θεn²)`` with ``α = log(1/δ)/((1 − θ)ε) + 1`` is, for ``K = σ²n²/(20Tl²)``, the
    quadratic ``Kθ(1 − θ)ε² − (1 − θ)ε − log(1/δ) = 0``, whose positive root is the claimed ε;
    ``theta=None`` takes the best θ ∈ (0, 1) (what the theorem allows). The claim stands only
    where :func:`liu2022_sadmm_conditions` holds.
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    l = check.positive("lipschitz", lipschitz)
    K = sigma**2 * n**2 / (20 * T * l**2)
    L = math.log(1 / delta)

    def eps(th):
        a = K * th * (1 - th)
        return ((1 - th) + math.sqrt((1 - th) ** 2 + 4 * a * L)) / (2 * a)

    if theta is not None:
        return eps(check.open_unit("theta", theta))
    # The best θ in closed form: ε(θ) → ∞ at both ends, and ∂/∂θ of the quadratic vanishes where
    # K(1 − 2θ)ε = −1; with the quadratic this gives (Kε − 1)² = 4K log(1/δ), i.e. θ = (1 + 1/(Kε))/2 ∈ (½, 1).
    return (1 + 2 * math.sqrt(K * L)) / K


def liu2022_vradmm_epsilon(sigma: float, delta: float, *, lipschitz: float, n: int, epochs: int, inner: int,
                           c2: float = 80.0) -> float:
    """Theorem 1 read backwards: ``ε = l√(c₂ S m ln(1/δ))/(nσ)`` — with the assumed constant c₂.

    The paper gives no value for c₂ (nor for c₁ of the condition ``ε ≤ c₁Sm/n²``), so this is
    the claim only up to that unknown constant; see :func:`liu2022_vradmm_sigma`.

    Parameters
    ----------
    sigma : float
        σ of the noise, > 0 and finite.
    delta : float
        δ, in (0, 1).
    lipschitz : float
        l, the Lipschitz constant of a component, > 0 and finite.
    n : int
        Number of records, a whole number ≥ 1.
    epochs : int
        Number of epochs S, a whole number ≥ 1.
    inner : int
        Inner iterations m per epoch, a whole number ≥ 1.
    c2 : float, default 80.0
        The theorem's constant c₂, > 0 and finite.

    Returns
    -------
    float
        The claimed ε.
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    l = check.positive("lipschitz", lipschitz)
    n = check.count("n", n)
    S = check.count("epochs", epochs)
    m = check.count("inner", inner)
    c2 = check.positive("c2", c2)
    return l * math.sqrt(c2 * S * m * math.log(1 / delta)) / (n * sigma)


def liu2022_printed_epsilon(sigma: float, delta: float, *, n: int, batch_size: int, epochs: int, inner: int,
                            lipschitz: float, difference_bound: float | None = None,
                            share: float | None = None) -> float:
    """A sound ε of DP-VRADMM as printed (Algorithm 1, general convex): snapshot gradient without noise.

    Every inner release of an epoch is ``G_t = v_t + p̃ + u_t`` with ``u_t ~ N(0, σ²I)`` fresh,
    ``v_t = (1/b) Σ_{i∈B_t}(∇f_i(x_t) − ∇f_i(x̃))`` a Poisson-sampled sum (rate ``q = b/n``, one
    record's term of norm ≤ ``difference_bound``) and ``p̃ = ∇f(x̃)`` the exact full gradient,
    the same in all m releases of the epoch. Replacing one record moves ``p̃`` by up to
    ``2·lipschitz/n`` whether or not the record is sampled: subsampling does not shrink that part,
    and the m releases together show ``p̃`` with noise ``σ/√m`` only — the sensitivity a ledger of
    minibatch releases alone misses.

    **The split.** Write ``u_t = u_t' + u_t''`` with independent ``u_t' ~ N(0, sσ²I)`` and
    ``u_t'' ~ N(0, (1 − s)σ²I)`` for a share ``s ∈ (0, 1)``. ``G_t`` is a function of the pair
    ``(p̃ + u_t', v_t + u_t'')``, so releasing the pair is at least as revealing: ``S·m`` Gaussian
    releases of ``p̃`` (sensitivity ``2·lipschitz/n``, noise ``√s·σ``) composed with ``S·m``
    Poisson-subsampled Gaussian releases of ``v_t`` (exact replace-one pair, per-record bound
    ``difference_bound/b``, noise ``√(1 − s)·σ``), all adaptive. Every ``s`` gives a sound bound
    on the same mechanism; the function returns the smallest over ``s`` (a bounded search after
    a grid), or the bound at the given ``share``. At ``q = 1`` and ``s = ½`` it is the exact ε
    of ``S·m`` Gaussian releases with sensitivity ``2·lipschitz/n + 2·difference_bound/b`` (the
    triangle inequality), which the tests check.

    Parameters
    ----------
    sigma : float
        σ of the fresh noise of every inner release.
    delta : float
        δ ∈ (0, 1).
    n, batch_size, epochs, inner : int
        Records n, expected minibatch size b (q = b/n), epochs S and inner steps m per epoch.
    lipschitz : float
        l, the bound on one record's gradient ‖∇f_i‖ in the snapshot ``p̃``.
    difference_bound : float, optional
        Bound on one record's SVRG term ``‖∇f_i(x) − ∇f_i(x̃)‖``; default ``lipschitz`` (true for
        the logistic loss: ℓ' of one record keeps its sign), ``2·lipschitz`` in general.
    share : float, optional
        Evaluate at this share s ∈ (0, 1) of the noise variance paying for ``p̃`` instead of
        searching the best one.

    Returns
    -------
    float
        An upper bound on the ε of all ``S·m`` releases at δ (unified accountant on the split
        ledger), never below the truth.

    Notes
    -----
    Only the general convex variant: the strongly convex one also restarts the dual from the
    exact ``p̃`` (``λ₀ = −(1/β)(Aᵀ)^†p̃``), which this split does not cover. Liu et al. (2022),
    Algorithm 1 and eq. (6).
    """
    from ..privacy import PrivacyEvent
    from ._ledger import ledger_epsilon

    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    n = check.count("n", n)
    b = check.count("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, n = {n}], got {b}")
    S = check.count("epochs", epochs)
    m = check.count("inner", inner)
    l = check.positive("lipschitz", lipschitz)
    diff = l if difference_bound is None else check.positive("difference_bound", difference_bound)
    releases = S * m

    def spent(s: float) -> float:
        return ledger_epsilon([
            PrivacyEvent("gaussian", 2.0 * l / n, math.sqrt(s) * sigma, count=releases,
                         note="snapshot gradient p̃, its share of every inner release's noise"),
            PrivacyEvent("gaussian", diff / b, math.sqrt(1.0 - s) * sigma, count=releases, sampling_rate=b / n,
                         neighbours="replace_one", note="minibatch SVRG difference v_t, the rest of the noise"),
        ], delta)

    if share is not None:
        return spent(check.open_unit("share", share))
    grid = np.linspace(0.05, 0.95, 19)
    values = [spent(float(s)) for s in grid]
    k = int(np.argmin(values))
    lo, hi = (float(grid[k - 1]) if k > 0 else 1e-4), (float(grid[k + 1]) if k < len(grid) - 1 else 1 - 1e-4)
    from scipy import optimize  # here, not at the top: a live re-run without it skips its import
    best = optimize.minimize_scalar(spent, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    return float(min(best.fun, values[k]))

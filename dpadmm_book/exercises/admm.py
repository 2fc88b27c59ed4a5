"""Checks for the exercises of the chapter "ADMM in one afternoon".

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's answer
and returns a :class:`~dpadmm_book.exercises.Feedback`: ✓ with what the answer shows, or ✗ with
the typical mistake it recognises and a hint — never raising, never printing the solution. The
expected values are computed here, with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import numpy as np

from dpadmm_lite import topology
from dpadmm_lite.problems import soft_threshold
from . import Feedback, check

__all__ = ["y_update_data", "expected_y_update", "check_y_update", "dual_update_data", "expected_dual_update",
           "check_dual_update", "expected_algebraic_connectivity", "check_algebraic_connectivity"]


# ---------------------------------------------------------------------- exercise 1: the y-update
def y_update_data():
    """``x, u, lam, rho`` of exercise 1: one Lasso y-update with A = I, B = −I, c = 0."""
    rng = np.random.default_rng(2024)
    x = np.round(rng.normal(0.0, 0.4, 6), 3)
    u = np.round(rng.normal(0.0, 0.2, 6), 3)
    return x, u, 0.05, 0.25


def expected_y_update() -> np.ndarray:
    """``argmin_y λ‖y‖₁ + ρ/2 ‖x − y + u‖² = S_{λ/ρ}(x + u)``."""
    x, u, lam, rho = y_update_data()
    return soft_threshold(x + u, lam / rho)


def check_y_update(answer) -> Feedback:
    x, u, lam, rho = y_update_data()
    v = x + u
    return check(
        "y-update of the Lasso (soft-thresholding of x + u at λ/ρ)", answer, expected_y_update(), rtol=1e-9,
        atol=1e-12,
        praise="the y-update is the proximal operator of (λ/ρ)‖·‖₁ at x + u: every coordinate moves λ/ρ towards 0 "
               "and the small ones land exactly on 0 — that is where the Lasso's zeros come from.",
        mistakes={
            "you thresholded at λ, not λ/ρ: dividing the objective λ‖y‖₁ + ρ/2‖y − v‖² by ρ puts λ/ρ in front of "
            "the ℓ1 norm": lambda e: soft_threshold(v, lam),
            "you thresholded at λρ: the penalty ρ/2 divides λ, it does not multiply it": lambda e: soft_threshold(
                v, lam * rho),
            "you thresholded x alone: the scaled dual u is part of the point v = x + u that is shrunk":
                lambda e: soft_threshold(x, lam / rho),
            "the negative coordinates lost their sign: S_τ shrinks the magnitude of each coordinate of x + u and "
            "keeps its sign": lambda e: np.maximum(np.abs(v) - lam / rho, 0.0),
            "that is hard-thresholding (small coordinates set to 0, large ones kept as they are): the ℓ1 prox also "
            "moves the large coordinates λ/ρ towards 0": lambda e: np.where(np.abs(v) > lam / rho, v, 0.0),
            "you returned x + u unchanged: the ℓ1 term still has to shrink it": lambda e: v,
        },
        hint="the objective separates over coordinates: minimise λ|yₖ| + ρ/2 (yₖ − vₖ)² with v = x + u, once "
             "for yₖ > 0, once for yₖ < 0, and see when yₖ = 0 wins.")


# ---------------------------------------------------------------------- exercise 2: the dual update
def dual_update_data():
    """``G, F, V, rho`` of exercise 2: a ring of 6 agents, local models F and duals V, (6, 3)."""
    rng = np.random.default_rng(7)
    G = topology.make("ring", 6)
    F = np.round(rng.normal(size=(6, 3)), 2)
    V = np.round(rng.normal(scale=0.1, size=(6, 3)), 2)
    return G, F, V, 0.5


def expected_dual_update() -> np.ndarray:
    """Zhang & Zhu (11) for every agent: ``v_i + (ρ/2) Σ_{j∈N_i} (x_i − x_j)``, i.e. ``V + (ρ/2) L F``."""
    G, F, V, rho = dual_update_data()
    return V + 0.5 * rho * (G.laplacian @ F)


def check_dual_update(answer) -> Feedback:
    G, F, V, rho = dual_update_data()
    L, A = G.laplacian, G.adjacency
    return check(
        "dual update (11) of every agent on the ring", answer, expected_dual_update(), rtol=1e-9, atol=1e-12,
        praise="one sparse product L·F (L the Laplacian of G) gives every agent's sum of disagreements Σⱼ (xᵢ − xⱼ) at once — the "
               "graph Laplacian is how a neighbour sum is written without a loop over agents.",
        mistakes={
            "twice the step: the update is (ρ/2)·Σⱼ (xᵢ − xⱼ), not ρ·Σⱼ (xᵢ − xⱼ)":
                lambda e: V + rho * (L @ F),
            "the sign is flipped: a dual grows in the direction of the agent's disagreement xᵢ − xⱼ":
                lambda e: V - 0.5 * rho * (L @ F),
            "you summed the neighbours' models Σⱼ xⱼ (the adjacency matrix) instead of the differences "
            "Σⱼ (xᵢ − xⱼ) (the Laplacian D − A)": lambda e: V + 0.5 * rho * (A @ F),
            "you returned only the increment: the new dual is the old one, V, plus (ρ/2)·Σⱼ (xᵢ − xⱼ)":
                lambda e: 0.5 * rho * (L @ F),
            "you only have the Dᵢ·xᵢ part of Σⱼ (xᵢ − xⱼ): the neighbours' −xⱼ terms are missing":
                lambda e: V + 0.5 * rho * (G.degrees[:, None] * F),
        },
        hint="row i of L·F is Dᵢ xᵢ minus the sum of xⱼ over the neighbours j of i, which is Σⱼ (xᵢ − xⱼ); G.laplacian is a sparse matrix, "
             "so `@` multiplies it with F (6 × 3) directly.")


# ---------------------------------------------------------------------- exercise 3: λ₂ of the grid
def expected_algebraic_connectivity(name: str = "grid", n_agents: int = 16) -> float:
    """Second-smallest eigenvalue of the Laplacian of ``topology.make(name, n_agents)``."""
    return topology.make(name, n_agents).algebraic_connectivity


def check_algebraic_connectivity(answer) -> Feedback:
    def spectrum(e):
        return np.linalg.eigvalsh(topology.make("grid", 16).laplacian.toarray())

    return check(
        "algebraic connectivity λ₂ of the 4 × 4 grid", answer, expected_algebraic_connectivity(), rtol=1e-6,
        atol=1e-9,
        praise="λ₂ > 0 certifies that the grid is connected, and its size sets how fast disagreement between "
               "agents can die out: the grid lies between the ring (small λ₂) and the complete graph (λ₂ = N).",
        mistakes={
            "that is the smallest eigenvalue, λ₁ = 0: every Laplacian has it (the constant vector, on which all "
            "agents agree), so it says nothing about the graph": lambda e: 0.0,
            "that is the largest eigenvalue of the Laplacian: λ₂ is the second-*smallest*":
                lambda e: spectrum(e)[-1],
            "that is the second-*largest* eigenvalue: np.linalg.eigvalsh sorts in ascending order":
                lambda e: spectrum(e)[-2],
            "that is λ₂ of the ring of 16 agents, not of the 4 × 4 grid": lambda e: expected_algebraic_connectivity(
                "ring", 16),
            "that is λ₂ of the complete graph of 16 agents (= N), not of the 4 × 4 grid":
                lambda e: expected_algebraic_connectivity("complete", 16),
        },
        hint="G.laplacian is sparse: turn it into a dense array, and use the eigenvalue routine for symmetric "
             "matrices, which returns the eigenvalues sorted in ascending order.")

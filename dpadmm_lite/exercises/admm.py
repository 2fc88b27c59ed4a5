"""Checks for the exercises of the chapter "ADMM in one afternoon".

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's
answer, prints ✓/✗ (or "not answered yet") and returns a bool, never raising. The expected
values are computed here, with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import numpy as np

from .. import topology
from ..problems import soft_threshold
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
    return check("y-update of the Lasso (soft-thresholding of x + u at λ/ρ)", answer, expected_y_update(),
                 rtol=1e-9, atol=1e-12)


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
    return check("dual update (11) of every agent on the ring", answer, expected_dual_update(), rtol=1e-9,
                 atol=1e-12)


# ---------------------------------------------------------------------- exercise 3: λ₂ of the grid
def expected_algebraic_connectivity(name: str = "grid", n_agents: int = 16) -> float:
    """Second-smallest eigenvalue of the Laplacian of ``topology.make(name, n_agents)``."""
    return topology.make(name, n_agents).algebraic_connectivity


def check_algebraic_connectivity(answer) -> Feedback:
    return check("algebraic connectivity λ₂ of the 4 × 4 grid", answer, expected_algebraic_connectivity(),
                 rtol=1e-6)

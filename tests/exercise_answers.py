"""The answer table of the exercise checks: for every check function, the right answer and typical wrong ones.

Format (one entry per public ``check_*`` function of ``dpadmm_book/exercises/<module>.py``)::

    ANSWERS["<module>.<check function>"] = Answers(
        reference=lambda: ...,          # the right answer, computed the way the chapter's solution does
        wrong={                         # at least two typical wrong answers
            "<words>": lambda: ...,     # <words>: a fragment the check's message must contain for this
            ...                         #   answer, i.e. the check names *this* mistake (not a generic
        },                              #   "not quite"); the lambda builds the wrong answer
        call=None,                      # optional (check, answer) -> Feedback, when the check takes more
    )                                   #   than the answer (default: check(answer))

Answers are lambdas, so importing this table costs nothing; build an answer only when it is checked.
Use the exercise's own inputs (``ex.*_data()``), never the module's ``expected_*`` for the reference:
the reference shows that the solution printed in the chapter is accepted.

Who reads it:

* ``tests/test_classroom.py``: every check function has an entry; the reference is accepted (a
  truthy :class:`~dpadmm_book.exercises.Feedback`, "✓ …"); every wrong answer is rejected with a
  message containing ``<words>`` and a hint; no message contains a line of the solution's code.
* ``tools/bookbuild/instructor.py``: the instructor page lists, per exercise, the messages the checks give
  for these wrong answers ("common mistakes the checks detect").

A chapter that adds a check module adds its entries here (``tests/test_classroom.py`` fails until it does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import dpadmm_lite as dl
from dpadmm_lite import accounting
from dpadmm_book.exercises import admm, arena, cyffers2023, huang2019, liu2022, xu2020, zhang2017


@dataclass(frozen=True)
class Answers:
    """The reference answer and the typical wrong answers of one check function."""

    reference: Callable[[], Any]
    wrong: dict[str, Callable[[], Any]]
    call: Callable[[Callable, Any], Any] | None = field(default=None)

    def run(self, check: Callable, answer):
        """The check's :class:`Feedback` on ``answer``."""
        return check(answer) if self.call is None else self.call(check, answer)


ANSWERS: dict[str, Answers] = {}


# ------------------------------------------------------------------------------------ admm
def _y_update(threshold=None, point=None, signed=True):
    x, u, lam, rho = admm.y_update_data()
    v = x + u if point is None else point
    tau = lam / rho if threshold is None else threshold
    shrunk = np.maximum(np.abs(v) - tau, 0.0)
    return np.sign(v) * shrunk if signed else shrunk


ANSWERS["admm.check_y_update"] = Answers(
    reference=lambda: _y_update(),
    wrong={
        "thresholded at λ, not λ/ρ": lambda: _y_update(threshold=admm.y_update_data()[2]),
        "thresholded x alone": lambda: _y_update(point=admm.y_update_data()[0]),
        "lost their sign": lambda: _y_update(signed=False),
        "hard-thresholding": lambda: (lambda v, t: np.where(np.abs(v) > t, v, 0.0))(
            admm.y_update_data()[0] + admm.y_update_data()[1], admm.y_update_data()[2] / admm.y_update_data()[3]),
    },
)


def _dual(scale=0.5, matrix="laplacian", keep=True):
    G, F, V, rho = admm.dual_update_data()
    M = G.laplacian if matrix == "laplacian" else G.adjacency
    return (V if keep else 0.0) + scale * rho * (M @ F)


ANSWERS["admm.check_dual_update"] = Answers(
    reference=lambda: _dual(),
    wrong={
        "twice the step": lambda: _dual(scale=1.0),
        "sign is flipped": lambda: _dual(scale=-0.5),
        "adjacency matrix": lambda: _dual(matrix="adjacency"),
        "only the increment": lambda: _dual(keep=False),
    },
)


def _grid_spectrum():
    return np.linalg.eigvalsh(dl.topology.make("grid", 16).laplacian.toarray())


ANSWERS["admm.check_algebraic_connectivity"] = Answers(
    reference=lambda: _grid_spectrum()[1],
    wrong={
        "smallest eigenvalue": lambda: _grid_spectrum()[0],
        "largest eigenvalue": lambda: _grid_spectrum()[-1],
        "of the ring of 16": lambda: np.linalg.eigvalsh(dl.topology.make("ring", 16).laplacian.toarray())[1],
    },
)

# ------------------------------------------------------------------------------------ privacy
ANSWERS["privacy.check_classic_sigma"] = Answers(
    reference=lambda: 0.1 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5,
    wrong={
        "left out the sensitivity": lambda: math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5,
        "ln(1/δ)": lambda: 0.1 * math.sqrt(2 * math.log(1 / 1e-5)) / 0.5,
        "square root is missing": lambda: 0.1 * 2 * math.log(1.25 / 1e-5) / 0.5,
        "multiplied by ε": lambda: 0.1 * math.sqrt(2 * math.log(1.25 / 1e-5)) * 0.5,
        "exact (analytic) calibration": lambda: accounting.calibrate_noise(0.5, 1e-5, 1) * 0.1,
    },
)

ANSWERS["privacy.check_mean_sensitivity"] = Answers(
    reference=lambda: 2 / 1000,
    wrong={
        "add/remove sensitivity of a sum divided by a fixed n": lambda: 1 / 1000,
        "sensitivity of the *sum*": lambda: 2.0,
        "divided by n − 1": lambda: 2 / 999,
    },
)


def _max_steps_loop():
    T = 1
    while accounting.gaussian_epsilon(10.0, T + 1, 1e-5) <= 1.0:
        T += 1
    return T


def _basic_steps():
    T = 1
    while (T + 1) * accounting.gaussian_epsilon(10.0, 1, 1e-5 / (T + 1)) <= 1.0:
        T += 1
    return T


ANSWERS["privacy.check_max_steps"] = Answers(
    reference=_max_steps_loop,
    wrong={
        "one step too many": lambda: _max_steps_loop() + 1,
        "basic composition": _basic_steps,
        "Rényi-DP bound": lambda: max(T for T in range(1, 100) if accounting.rdp_gaussian_epsilon(10.0, T, 1e-5) <= 1),
    },
)


# ------------------------------------------------------------------------------------ xu2020
def _xu_x1(*, with_dual=True, step=None, y_step=None):
    problem, rho, eta, gamma = xu2020.x_update_data()
    A = problem.constraint_matrix
    x0 = np.zeros(problem.d)
    u0 = -np.linalg.pinv(A.T) @ problem.gradient(x0) / rho if with_dual else np.zeros(A.shape[0])
    y1 = problem.prox_g(A @ x0 + u0, 1 / rho if y_step is None else y_step)
    return x0 - (eta / gamma if step is None else step) * (problem.gradient(x0) + rho * A.T @ (A @ x0 - y1 + u0))


ANSWERS["xu2020.check_x_update"] = Answers(
    reference=lambda: _xu_x1(),
    wrong={
        "plain gradient step": lambda: _xu_x1(with_dual=False),
        "the step is η, not η/γ": lambda: _xu_x1(step=xu2020.x_update_data()[2]),
        "prox of g with step ρ": lambda: _xu_x1(y_step=xu2020.x_update_data()[1]),
    },
)

ANSWERS["xu2020.check_sigma_ratio"] = Answers(
    reference=lambda: math.sqrt(9) / 2,
    wrong={
        "ratio of the *variances*": lambda: 9 / 4,
        "σ grows like √T, not like T": lambda: 9 / 2,
        "upside down": lambda: 2 / 3,
        "counted only the iterations": lambda: 3.0,
    },
)


def _xu_threshold():
    problem = xu2020.threshold_problem()
    better = []
    for epsilon in xu2020.THRESHOLD_GRID:
        final = {name: np.mean([dl.run(name, problem, epsilon=epsilon, delta=1e-3, rho=0.1, iterations=100,
                                       seed=s).objective[-1] for s in (0, 1, 2)])
                 for name in ("dp_admm", "dp_acc_admm")}
        better.append(final["dp_acc_admm"] < final["dp_admm"])
    return next(eps for i, eps in enumerate(xu2020.THRESHOLD_GRID) if all(better[i:]))


def _grid_neighbour(offset):
    grid = xu2020.THRESHOLD_GRID
    return grid[min(max(grid.index(xu2020.expected_threshold()) + offset, 0), len(grid) - 1)]


ANSWERS["xu2020.check_threshold"] = Answers(
    reference=_xu_threshold,
    wrong={
        "not one of ex.THRESHOLD_GRID": lambda: 2.0,
        "still *above* DP-ADMM's": lambda: _grid_neighbour(-1),
        "wins from a smaller ε": lambda: _grid_neighbour(+1),
    },
)


# ------------------------------------------------------------------------------------ huang2019
def _agent(grad_sign=-1.0, dual_sign=1.0, divide=True):
    W_tilde, subgrad, G, w, rho, eta = huang2019.agent_update_data()
    inv = 1.0 / eta[:, None]
    top = grad_sign * subgrad + dual_sign * G + rho * w + W_tilde * inv
    return top / (rho + inv) if divide else top


ANSWERS["huang2019.check_agent_update"] = Answers(
    reference=lambda: _agent(),
    wrong={
        "gradient term has the wrong sign": lambda: _agent(grad_sign=1.0),
        "dual term has the wrong sign": lambda: _agent(dual_sign=-1.0),
        "stopped at the numerator": lambda: _agent(divide=False),
    },
)


def _huang_sigma(factor=2.0, log_arg=1.25, curvature=True, total=False):
    v = huang2019.sigma_data()
    m = v["sizes"].sum() if total else v["sizes"]
    denominator = m * v["epsilon"] * ((v["rho"] + 1 / v["eta"]) if curvature else 1.0)
    return factor * v["lipschitz"] * np.sqrt(2 * np.log(log_arg / v["delta"])) / denominator


ANSWERS["huang2019.check_sigma"] = Answers(
    reference=lambda: _huang_sigma(),
    wrong={
        "half the expected noise": lambda: _huang_sigma(factor=1.0),
        "ln(1/δ)": lambda: _huang_sigma(log_arg=1.0),
        "ρ + 1/ηᵢᵏ is missing": lambda: _huang_sigma(curvature=False),
        "total number of records": lambda: _huang_sigma(total=True),
    },
)


def _huang_iterations():
    z = accounting.huang2019_noise_multiplier(0.1, 1e-5)
    return max(t for t in range(1, 1000) if accounting.gaussian_epsilon(z, t, 1e-5) <= 1.0)


ANSWERS["huang2019.check_max_iterations"] = Answers(
    reference=_huang_iterations,
    wrong={
        "basic composition": lambda: 10,
        "moments-accountant bound": lambda: max(t for t in range(1, 1000)
                                                if accounting.huang2019_total_epsilon(0.1, 1e-5, t) <= 1.0),
        "one iteration too many": lambda: _huang_iterations() + 1,
    },
)

# ------------------------------------------------------------------------------------ arena
ANSWERS["arena.check_choice"] = Answers(
    reference=lambda: arena.tuning_data().groupby("config")["validation_error"].mean().idxmin(),
    wrong={
        "best setting on the *test* split": lambda: arena.tuning_data().groupby("config")["test_error"].mean().idxmin(),
        "best *single* seed": lambda: arena.tuning_data().groupby("config")["validation_error"].min().idxmin(),
        "the *worst* setting": lambda: arena.tuning_data().groupby("config")["validation_error"].mean().idxmax(),
    },
)


def _arena_sigma(steps=None, sensitivity_factor=2.0):
    v = arena.noise_data()
    z = accounting.calibrate_noise(v["epsilon"], v["delta"], v["iterations"] if steps is None else steps)
    return z * sensitivity_factor * v["lipschitz"] / v["n"]


ANSWERS["arena.check_sigma"] = Answers(
    reference=lambda: _arena_sigma(),
    wrong={
        "add/remove sensitivity": lambda: _arena_sigma(sensitivity_factor=1.0),
        "noise for *one* release": lambda: _arena_sigma(steps=1),
        "noise multiplier z = σ/Δ": lambda: accounting.calibrate_noise(1.0, 1e-6, 200),
    },
)

ANSWERS["arena.check_tuning_epsilon"] = Answers(
    reference=lambda: accounting.gaussian_epsilon(arena.tuning_cost_data()["noise_multiplier"],
                                                  arena.tuning_cost_data()["candidates"]
                                                  * arena.tuning_cost_data()["iterations"],
                                                  arena.tuning_cost_data()["delta"]),
    wrong={
        "ε of *one* run": lambda: 1.0,
        "basic composition (K·ε)": lambda: 4.0,
    },
)


# ------------------------------------------------------------------------------------ cyffers2023
def _cyffers_x(inverse_step=None):
    a, b, w, step = cyffers2023.x_update_data()
    k = 1 / step if inverse_step is None else inverse_step
    return w + a * (b - a @ w) / (k + a @ a)  # Sherman–Morrison: (aaᵀ + kI)⁻¹(ab + kw)


ANSWERS["cyffers2023.check_x_update"] = Answers(
    reference=lambda: _cyffers_x(),
    wrong={
        "prox point w = 2z − uᵢ unchanged": lambda: cyffers2023.x_update_data()[2],
        "2n/γ printed in Algorithm 6": lambda: _cyffers_x(inverse_step=2 / cyffers2023.x_update_data()[3]),
        "where its inverse n/γ belongs": lambda: _cyffers_x(inverse_step=cyffers2023.x_update_data()[3]),
    },
)


def _cyffers_sensitivity(factor=2.0, clip_only=False, theta=True):
    s = cyffers2023.SENSITIVITY_SETTING
    bound = 2 * s["clip"] if clip_only else min(2 * s["clip"], 2 * s["lipschitz"] * s["gamma"] / s["n"])
    return (factor * s["relaxation"] if theta else 1.0) * bound


ANSWERS["cyffers2023.check_sensitivity"] = Answers(
    reference=lambda: _cyffers_sensitivity(),
    wrong={
        "add/remove-one sensitivity": lambda: _cyffers_sensitivity(factor=1.0),
        "left out the factor 2θ": lambda: _cyffers_sensitivity(theta=False),
        "clipping bound 2C": lambda: _cyffers_sensitivity(clip_only=True),
    },
)


def _cyffers_multiplier():
    s = cyffers2023.FEDERATED_SETTING
    return s["relaxation"] * s["sigma"] / (2 * s["relaxation"] * 2 * s["clip"])


ANSWERS["cyffers2023.check_noise_multiplier"] = Answers(
    reference=_cyffers_multiplier,
    wrong={
        "counted the other users' noise": lambda: _cyffers_multiplier() * math.sqrt(
            cyffers2023.FEDERATED_SETTING["m"]),
        "twice the expected value": lambda: 2 * _cyffers_multiplier(),
        "scaled the noise by θ but not the sensitivity": lambda: _cyffers_multiplier()
        * cyffers2023.FEDERATED_SETTING["relaxation"],
    },
)


# ------------------------------------------------------------------------------------ liu2022
def _liu_eigenvalues(d, nu):
    return 1 + 2 * nu - 2 * nu * np.cos(2 * np.pi * np.arange(d) / d)


def _liu_smooth():
    V, nu = liu2022.smoothing_data()
    return np.real(np.fft.ifft(np.fft.fft(V, axis=-1) / _liu_eigenvalues(V.shape[-1], nu), axis=-1))


ANSWERS["liu2022.check_smoothing"] = Answers(
    reference=_liu_smooth,
    wrong={
        "comes back unchanged": lambda: liu2022.smoothing_data()[0],
        "multiplied by Q(ν) instead of solving": lambda: liu2022.smoothing_data()[0]
        @ dl.smoothing.smoothing_matrix(12, liu2022.smoothing_data()[1]).T,
        "divided by the eigenvalues twice": lambda: dl.smoothing.laplacian_smooth(_liu_smooth(),
                                                                                  liu2022.smoothing_data()[1]),
    },
)


def _liu_x_step():
    x, y, u, g, rho, eta = liu2022.x_step_data()
    return np.array([(x[k] / eta + rho * (y[k] - u[k]) - g[k]) / (1 / eta + rho) for k in range(len(x))])


ANSWERS["liu2022.check_x_step"] = Answers(
    reference=_liu_x_step,
    wrong={
        "a plain gradient step": lambda: liu2022.x_step_data()[0] - liu2022.x_step_data()[5] * liu2022.x_step_data()[3],
        "added the gradient": lambda: _liu_x_step() + 2 * liu2022.x_step_data()[3] / (1 / 2.0 + 0.5),
    },
)


def _liu_variance(power=2.0):
    d, nu, sigma = liu2022.variance_data()
    return sigma**2 * np.mean(_liu_eigenvalues(d, nu) ** -power)


ANSWERS["liu2022.check_variance"] = Answers(
    reference=lambda: _liu_variance(),
    wrong={
        "σ²τ": lambda: _liu_variance(power=1.0),
        "limit (1 + 2ν)/((1 + 4ν)√(1 + 4ν))": lambda: dl.smoothing.variance_limit(*liu2022.variance_data()[1:]),
        "scaled by σ, not σ²": lambda: _liu_variance() / liu2022.variance_data()[2],
    },
)

ANSWERS["liu2022.check_sensitivity"] = Answers(
    reference=lambda: 2 * liu2022.sensitivity_data()[2] / liu2022.sensitivity_data()[1],
    wrong={
        "c/b is the change when one record is added or removed": lambda: liu2022.sensitivity_data()[2]
        / liu2022.sensitivity_data()[1],
        "sensitivity of the full-data mean": lambda: 2 * liu2022.sensitivity_data()[2] / liu2022.sensitivity_data()[0],
        "twice too much": lambda: 4 * liu2022.sensitivity_data()[2] / liu2022.sensitivity_data()[1],
    },
)


# ------------------------------------------------------------------------------------ zhang2017
def _zhang_zeta(halve=True):
    v = zhang2017.dvp_zeta_data()
    jac = 2 * np.log1p(v["c1"] / (v["sizes"] * (v["lam"] + 2 * v["rho"] * v["degrees"])))
    alpha_hat = v["alpha"] - jac
    return np.where(alpha_hat > 0, alpha_hat, v["alpha"] / 2) / (v["sensitivity"] if halve else 1.0)


ANSWERS["zhang2017.check_dvp_zeta"] = Answers(
    reference=lambda: _zhang_zeta(),
    wrong={
        "Algorithm 2 as printed": lambda: _zhang_zeta(halve=False),
        "Appendix E's ζ = α/4": lambda: np.full(4, zhang2017.dvp_zeta_data()["alpha"] / 4),
        "left out the Jacobian term": lambda: np.full(4, zhang2017.dvp_zeta_data()["alpha"] / 2),
    },
)


def _l2_laplace(radius="gamma"):
    def sample(rng, zeta, n, d):
        direction = rng.standard_normal((n, d))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        if radius == "gamma":
            r = rng.gamma(shape=d, scale=1 / zeta, size=(n, 1))
        elif radius == "exponential":
            r = rng.exponential(scale=1 / zeta, size=(n, 1))
        else:  # the rate used as the scale
            r = rng.gamma(shape=d, scale=zeta, size=(n, 1))
        return r * direction

    return sample


ANSWERS["zhang2017.check_l2_laplace_sampler"] = Answers(
    reference=lambda: _l2_laplace(),
    wrong={
        "drew it from an exponential law": lambda: _l2_laplace("exponential"),
        "ζ is a rate": lambda: _l2_laplace("scale"),
        "independent Laplace coordinates": lambda: (lambda rng, zeta, n, d: rng.laplace(scale=1 / zeta, size=(n, d))),
    },
)


def _zhang_hidden(track=True, curvature=None):
    v = zhang2017.hidden_sensitivity_data()
    mu = v["lam"] + 2 * v["rho"] * v["degree"] if curvature is None else curvature
    E, out = 0.0, []
    for _ in range(v["T"]):
        E = (2 * v["lipschitz"] / v["m"] + (v["rho"] * v["degree"] * E if track else 0.0)) / mu
        out.append(E)
    return np.array(out)


ANSWERS["zhang2017.check_hidden_sensitivity"] = Answers(
    reference=lambda: _zhang_hidden(),
    wrong={
        "held fₚ(t) fixed": lambda: _zhang_hidden(track=False),
        "paper's constant 2c/(mλ)": lambda: np.full(8, 2 / (400 * 1e-3)),
        "divided by λ alone": lambda: _zhang_hidden(curvature=zhang2017.hidden_sensitivity_data()["lam"]),
    },
)

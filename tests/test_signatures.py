"""One signature convention for every registered algorithm: ``(problem, *, epsilon, delta, …)``, every
parameter after ``problem`` keyword-only with a type hint, and no ``**options`` that would hide what an
algorithm accepts from its signature, its docstring and the bad-input tests.
"""

from __future__ import annotations

import inspect

import pytest

import dpadmm_lite as dl
from dpadmm_lite import registry


def problems_with(function) -> list[str]:
    """What keeps ``function``'s signature from the convention (empty: it follows it)."""
    parameters = list(inspect.signature(function).parameters.values())
    found = []
    if not parameters or parameters[0].name != "problem":
        found.append("the first parameter is not problem")
    for p in parameters:
        if p.kind is p.VAR_KEYWORD:
            found.append(f"**{p.name} hides the parameters it accepts")
        elif p.kind is p.VAR_POSITIONAL:
            found.append(f"*{p.name} takes positional arguments")
    for p in parameters[1:]:
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        if p.kind is not p.KEYWORD_ONLY:
            found.append(f"{p.name} is not keyword-only")
        if p.annotation is p.empty:
            found.append(f"{p.name} has no type hint")
    return found


NAMES = list(dl.algorithm_names())


def test_every_algorithm_is_checked():
    assert len(NAMES) == len(registry._REGISTRY) >= 26


@pytest.mark.parametrize("name", NAMES)
def test_the_signature_is_explicit_keyword_only_and_annotated(name):
    function = registry.info(name).function
    assert not problems_with(function), f"{name}{inspect.signature(function)}: {problems_with(function)}"
    assert inspect.signature(function).return_annotation is not inspect.Signature.empty, f"{name} has no return hint"


def test_the_check_rejects_hidden_options_and_missing_hints():
    def hidden(problem, *, epsilon: float = 1.0, **options): ...

    def positional(problem, epsilon: float = 1.0): ...

    def bare(problem, *, epsilon=1.0): ...

    def explicit(problem, *, epsilon: float = 1.0, clip: float | None = None): ...

    assert problems_with(hidden) == ["**options hides the parameters it accepts"]
    assert problems_with(positional) == ["epsilon is not keyword-only"]
    assert problems_with(bare) == ["epsilon has no type hint"]
    assert problems_with(explicit) == []


def test_an_unknown_keyword_names_the_algorithm_and_the_valid_parameters():
    problem = dl.problems.logistic([[0.5, 0.0], [0.0, -0.5]], [1.0, -1.0], 0.1)
    with pytest.raises(TypeError, match=r"private_admm got unknown parameter 'bogus'; its parameters are "
                                        r"problem, epsilon, delta, rho, iterations, seed, gamma"):
        dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=2, seed=0, bogus=1)

"""The library's reference documentation: every public callable says what its parameters are, and every
example in a docstring runs.

Public: the functions and classes a public module of :mod:`dpadmm_lite` offers (its ``__all__``, else its
names without a leading underscore; a module or package whose name starts with an underscore is not public,
but what a public package re-exports from it is). Each one whose signature takes parameters has a numpydoc
``Parameters`` section that names every one of them (``self``, ``*args`` and ``**kwargs`` aside), so a
parameter added to a signature is documented the day it is added. The examples (``>>>``) of every module of
the library run as doctests.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re

import pytest

import dpadmm_lite

#: numpydoc's section underline: a title line followed by a line of dashes.
_SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}\n", re.M)


def _modules() -> list[str]:
    return ["dpadmm_lite", *sorted(m.name for m in pkgutil.walk_packages(dpadmm_lite.__path__, "dpadmm_lite."))]


def _public_modules() -> list[str]:
    return [name for name in _modules() if not any(part.startswith("_") for part in name.split(".")[1:])]


def public_callables() -> dict[str, object]:
    """Qualified name (as the user reaches it) -> the function or class, each object once."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    for name in _public_modules():
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for attribute in names:
            obj = getattr(module, attribute, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            home = getattr(obj, "__module__", "") or ""
            if not home.startswith("dpadmm_lite"):
                continue  # a name imported from numpy, the standard library, …
            if home != name and not (hasattr(module, "__all__") and attribute in module.__all__):
                continue  # imported for the module's own use: documented where it is defined
            seen.add(id(obj))
            found[f"{name}.{attribute}"] = obj
    return found


def sections(doc: str) -> dict[str, str]:
    """numpydoc section title -> its text."""
    matches = list(_SECTION.finditer(doc))
    return {m["title"]: doc[m.end():(matches[i + 1].start() if i + 1 < len(matches) else len(doc))]
            for i, m in enumerate(matches)}


def documented_parameters(section: str) -> set[str]:
    """The names a Parameters section describes: the lines at its left margin (``name : type``, ``a, b : …``)."""
    names = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0].split(":")[0]
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def parameters_of(obj) -> list[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


CALLABLES = public_callables()


def test_the_public_surface_is_found():
    # the reader sees the check reach what is there (an empty walk would pass everything)
    # (dl.run and dl.tune are found under the name the package gives them first)
    assert {"dpadmm_lite.run", "dpadmm_lite.accounting.gaussian_epsilon", "dpadmm_lite.problems.logistic",
            "dpadmm_lite.algorithms.huang2019.dp_admm_star", "dpadmm_lite.tune"} <= set(CALLABLES)
    assert len(CALLABLES) > 150


@pytest.mark.parametrize("qualified", sorted(CALLABLES))
def test_every_public_callable_documents_its_parameters(qualified):
    obj = CALLABLES[qualified]
    wanted = parameters_of(obj)
    if not wanted:
        return
    doc = inspect.getdoc(obj) or ""
    found = sections(doc)
    assert "Parameters" in found, f"{qualified}{inspect.signature(obj)} has no numpydoc Parameters section"
    missing = [p for p in wanted if p not in documented_parameters(found["Parameters"])]
    assert not missing, f"{qualified}: the Parameters section does not describe {missing}"


def test_the_parameter_check_sees_a_missing_parameter():
    def documented(a, b):
        """Add.

        Parameters
        ----------
        a : float
            The first.
        """

    assert documented_parameters(sections(inspect.getdoc(documented))["Parameters"]) == {"a"}
    assert parameters_of(documented) == ["a", "b"]


@pytest.mark.parametrize("name", _modules())
def test_the_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, globs={"np": importlib.import_module("numpy"), "dl": dpadmm_lite}):
        if test.filename and not test.filename.startswith(str(dpadmm_lite.__path__[0])):
            continue  # a doctest of an imported name, found through the module's namespace
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (output above)"

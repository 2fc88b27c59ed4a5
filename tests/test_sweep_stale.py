"""The sweep cache never serves numbers its key did not see (issue 38, part 1).

One test per way a cached sweep went stale: a class redefined in a notebook cell or given another
class attribute, a global of a user module changed after its import (read as ``mod.X`` or through
``importlib.import_module`` + ``getattr``), a library dict mutated in place, a library function
monkeypatched (replaced, or its ``__code__`` swapped), an environment variable, the global random
generator. Each test changes the value and asserts that the result changes *and* the key does
(the sweep re-runs), or that the task runs uncached with a :class:`~dpadmm_lite.sweep.CacheWarning`.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import sweep


def _note(log):
    with open(log, "a") as file:
        file.write("run\n")


def _calls(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


def _run(task, name="stale", **kwargs):
    """(the value, the key) of a one-setting sweep, warning-free: a stale case must be keyed, not skipped."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CacheWarning)
        frame = sweep.grid(task, {"epsilon": [0.5]}, name=name, progress=False, **kwargs)
        key = sweep.cache_key(task, {"epsilon": [0.5]}, name=name, **kwargs)
    return frame["v"].item(), key


def _cell(namespace: dict, source: str) -> None:
    """Run a notebook cell: the kernel executes it in the notebook's one namespace."""
    exec(compile(textwrap.dedent(source), "<cell>", "exec"), namespace)


_MODEL_CELL = """
class Model:
    SCALE = 2.0

    def value(self, epsilon):
        return self.SCALE * epsilon
"""
_TASK_CELL = """
def task(epsilon, seed):
    with open(LOG, "a") as log:
        log.write("run\\n")
    return {"v": Model().value(epsilon)}
"""


@pytest.fixture
def notebook(tmp_path):
    namespace = {"__name__": "__main__", "LOG": str(tmp_path / "calls")}
    _cell(namespace, _MODEL_CELL)
    _cell(namespace, _TASK_CELL)
    return namespace


# ---------------------------------------------------------------------- classes
def test_a_class_redefined_in_a_notebook_cell_changes_the_key_and_the_result(cache, notebook):
    before, key = _run(notebook["task"])
    _cell(notebook, _MODEL_CELL.replace("self.SCALE * epsilon", "self.SCALE * epsilon + 1.0"))
    after, new_key = _run(notebook["task"])
    assert _calls(notebook["LOG"]) == 2 and (before, after) == (1.0, 2.0) and new_key != key
    _cell(notebook, _MODEL_CELL)  # the first definition again: the first file serves
    assert _run(notebook["task"]) == (before, key) and _calls(notebook["LOG"]) == 2


def test_a_changed_class_attribute_changes_the_key_and_the_result(cache, notebook):
    before, key = _run(notebook["task"])
    notebook["Model"].SCALE = 3.0
    after, new_key = _run(notebook["task"])
    assert _calls(notebook["LOG"]) == 2 and (before, after) == (1.0, 1.5) and new_key != key


def test_a_base_class_is_hashed_by_its_contents_too(cache, notebook):
    _cell(notebook, "class Base:\n    OFFSET = 0.0\n")
    _cell(notebook, _MODEL_CELL.replace("class Model:", "class Model(Base):").replace(
        "self.SCALE * epsilon", "self.SCALE * epsilon + self.OFFSET"))
    before, key = _run(notebook["task"])
    notebook["Base"].OFFSET = 1.0
    after, new_key = _run(notebook["task"])
    assert (before, after) == (1.0, 2.0) and new_key != key


def test_a_class_keeps_its_key_across_processes_style_rebuilds(cache, notebook):
    """By content, not identity: the same class source in a fresh namespace gives the same key."""
    _, key = _run(notebook["task"])
    fresh = {"__name__": "__main__", "LOG": notebook["LOG"]}
    _cell(fresh, _MODEL_CELL)
    _cell(fresh, _TASK_CELL)
    assert _run(fresh["task"])[1] == key and _calls(notebook["LOG"]) == 1


# ---------------------------------------------------------------------- user modules
_HELPERS = "sweep_stale_helpers"


@pytest.fixture
def helpers(tmp_path, monkeypatch):
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / f"{_HELPERS}.py").write_text("SCALE = 2.0\n\ndef scaled(x):\n    return SCALE * x\n")
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(_HELPERS, None)
    module = importlib.import_module(_HELPERS)
    yield module
    sys.modules.pop(_HELPERS, None)


def test_a_user_module_global_changed_after_import_changes_the_key(cache, helpers, tmp_path):
    log = tmp_path / "calls"

    def task(epsilon, seed):  # reads the module object: helpers.SCALE
        _note(log)
        return {"v": helpers.SCALE * epsilon}

    before, key = _run(task)
    helpers.SCALE = 4.0
    after, new_key = _run(task)
    assert (before, after) == (1.0, 2.0) and new_key != key and _calls(log) == 2


def test_a_user_module_global_read_through_importlib_and_getattr_changes_the_key(cache, helpers, tmp_path):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        _note(log)
        module = importlib.import_module("sweep_stale_helpers")
        return {"v": getattr(module, "scaled")(epsilon)}

    before, key = _run(task)
    helpers.SCALE = 4.0  # read by the module's own function, reached by name at run time
    after, new_key = _run(task)
    assert (before, after) == (1.0, 2.0) and new_key != key and _calls(log) == 2


def test_a_module_imported_inside_the_task_changes_the_key(cache, helpers, tmp_path):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        import sweep_stale_helpers

        _note(log)
        return {"v": sweep_stale_helpers.SCALE * epsilon}

    before, key = _run(task)
    helpers.SCALE = 4.0
    after, new_key = _run(task)
    assert (before, after) == (1.0, 2.0) and new_key != key


# ---------------------------------------------------------------------- the library's state
def test_a_library_dict_mutated_in_place_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    labels = dl.labels  # (the arena's settings, read by cached functions, are read-only: tests/test_arena.py)

    def task(epsilon, seed):
        _note(log)
        return {"v": float(len(labels.PARAMETER_LABELS["sampling_rate"])) * epsilon}

    before, key = _run(task)
    monkeypatch.setitem(labels.PARAMETER_LABELS, "sampling_rate", "rate q")  # in place: the same dict object
    after, new_key = _run(task)
    assert (before, after) == (0.5, 3.0) and new_key != key and _calls(log) == 2
    monkeypatch.undo()  # as imported again: the first file serves
    assert sweep.cache_key(task, {"epsilon": [0.5]}, name="stale") == key


def test_a_monkeypatched_library_function_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        _note(log)
        X, y, _ = dl.datasets.make_lasso(20, 3, seed=0)
        return {"v": float(np.abs(y).sum()) * epsilon}

    before, key = _run(task)
    original = dl.datasets.make_lasso

    def doubled(*args, **kwargs):
        X, y, w = original(*args, **kwargs)
        return X, 2 * y, w

    monkeypatch.setattr(dl.datasets, "make_lasso", doubled)
    after, new_key = _run(task)
    assert after == pytest.approx(2 * before) and new_key != key and _calls(log) == 2


def test_a_library_function_whose_code_was_swapped_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    arena = dl.arena

    def task(epsilon, seed):
        _note(log)
        return {"v": float(arena._stable_seed("a", "b") % 1000) * epsilon}

    def fake(*parts):
        return 7

    before, key = _run(task)
    monkeypatch.setattr(arena._stable_seed, "__code__", fake.__code__)  # the same function object
    after, new_key = _run(task)
    assert after == 3.5 and after != before and new_key != key and _calls(log) == 2


def test_a_library_state_changes_nothing_when_untouched():
    """Nothing of the library differs from its import-time state after ordinary use (runs, data,
    the arena's problems): the key of an untouched library is the one every process computes."""
    from dpadmm_lite import _state

    problem = dl.arena.problem("lasso", "validation", "fast")
    dl.run("dp_admm", problem, epsilon=1.0, delta=1e-5, rho=1.0, iterations=3, seed=0, clip=1.0)
    assert _state.changes() == []


# ---------------------------------------------------------------------- the environment and the global RNG
def test_a_task_that_reads_the_environment_undeclared_runs_uncached_with_a_warning(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    monkeypatch.setenv("SWEEP_STALE_SETTING", "2")

    def task(epsilon, seed):
        import os

        _note(log)
        return {"v": float(os.environ["SWEEP_STALE_SETTING"]) * epsilon}

    for run in (1, 2):
        with pytest.warns(sweep.CacheWarning, match=r"not cached: .*reads the environment.*env="):
            frame = sweep.grid(task, {"epsilon": [0.5]}, name="env", progress=False)
        assert frame["v"].item() == 1.0 and _calls(log) == run
    assert not list(cache.glob("*.parquet"))


def test_a_declared_environment_variable_is_in_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    monkeypatch.setenv("SWEEP_STALE_SETTING", "2")

    def task(epsilon, seed):
        import os

        _note(log)
        return {"v": float(os.getenv("SWEEP_STALE_SETTING")) * epsilon}

    before, key = _run(task, env=("SWEEP_STALE_SETTING",))
    assert _run(task, env=("SWEEP_STALE_SETTING",)) == (before, key) and _calls(log) == 1  # cached
    monkeypatch.setenv("SWEEP_STALE_SETTING", "4")
    after, new_key = _run(task, env=("SWEEP_STALE_SETTING",))
    assert (before, after) == (1.0, 2.0) and new_key != key and _calls(log) == 2
    with pytest.raises(ValueError, match="env must be"):
        sweep.grid(task, {"epsilon": [0.5]}, name="env", env="SWEEP_STALE_SETTING")


def _legacy_numpy(epsilon, seed):
    return {"v": float(np.random.normal()) * epsilon}


def _standard_library(epsilon, seed):
    import random

    return {"v": random.random() * epsilon}


def _imported_function(epsilon, seed):
    return {"v": float(_normal()) * epsilon}


from numpy.random import normal as _normal  # noqa: E402  (a global bound to the legacy generator)


def _imported_inside(epsilon, seed):
    import numpy.random as npr
    from numpy.random import standard_normal

    return {"v": float(npr.uniform() + standard_normal()) * epsilon}


@pytest.mark.parametrize("task", [_legacy_numpy, _standard_library, _imported_function, _imported_inside])
def test_a_task_that_draws_from_the_global_generator_runs_uncached_with_a_warning(cache, task):
    np.random.seed(0)
    with pytest.warns(sweep.CacheWarning, match="global random generator"):
        first = sweep.grid(task, {"epsilon": [0.5]}, name="rng", progress=False)
    with pytest.warns(sweep.CacheWarning, match="global random generator"):
        second = sweep.grid(task, {"epsilon": [0.5]}, name="rng", progress=False)
    assert first["v"].item() != second["v"].item()  # the state moved on: a cached result would be stale
    assert not list(cache.glob("*.parquet"))


def test_a_seeded_generator_is_not_mistaken_for_the_global_one(cache):
    def task(epsilon, seed):
        rng = np.random.default_rng(seed)
        return {"v": float(rng.normal() + rng.random()) * epsilon}

    value, key = _run(task)
    assert _run(task) == (value, key)

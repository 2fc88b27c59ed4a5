"""The sweep cache never serves numbers its key did not see (issues 38 and 45).

One test per way a cached sweep went stale: a class redefined in a notebook cell or given another
class attribute, a global of a user module changed after its import (read as ``mod.X`` or through
``importlib.import_module`` + ``getattr``), a library dict mutated in place, a library function
monkeypatched (replaced, or its ``__code__`` swapped), a library private constant rebound, a name
resolved through the builtins module, a function of an installed package monkeypatched (called by
the task or only by the library; before the library's import too), an attribute an object's
``__getstate__`` or ``__reduce__`` leaves out, a memo (an ``lru_cache``, a ``cached_property``, a
library ``lru_cache``) filled before what it reads changed, an environment variable, the global
random generator. Each test changes the value and asserts that the result changes *and* the key does
(the sweep re-runs), or that the task runs uncached with a :class:`~dpadmm_book.sweep.CacheWarning`.
"""

from __future__ import annotations

import builtins
import importlib
import math
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_book import sweep
from dpadmm_lite.accounting import _rdp
from dpadmm_lite.algorithms import huang2019 as star


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
    arena = book.arena

    def task(epsilon, seed):
        _note(log)
        return {"v": float(arena._stable_seed("a", "b") % 1000) * epsilon}

    def fake(*parts):
        return 7

    before, key = _run(task)
    monkeypatch.setattr(arena._stable_seed, "__code__", fake.__code__)  # the same function object
    after, new_key = _run(task)
    assert after == 3.5 and after != before and new_key != key and _calls(log) == 2


def test_a_library_state_changes_nothing_when_untouched(cache):
    """Nothing of the library, nor of the builtins and packages it reads, differs from what its import
    found after ordinary use (runs, data, the arena's problems, a sweep): the key of an untouched
    library is the one every process computes."""
    from dpadmm_book import _state

    problem = book.arena.problem("lasso", "validation", "fast")
    dl.run("dp_admm", problem, epsilon=1.0, delta=1e-5, rho=1.0, iterations=3, seed=0, clip=1.0)
    sweep.grid(_seeded, {"epsilon": [0.5]}, name="untouched", progress=False)
    assert _state.changes() == []
    assert _state.outside_changes(["numpy", "pandas", "pyarrow", "joblib"], sweep._hashing._user_defined) == []


def test_a_library_private_constant_rebound_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    unit = star._worst_agent_events(np.ones((1, 1)), np.ones((1, 1)), "one unit-noise release")

    def task(epsilon, seed):  # the calibrated noise scale: the ledger's, times (1 + _ROUNDING_MARGIN)
        _note(log)
        return {"v": star._calibrated_scale(unit, epsilon, 1e-5)}

    before, key = _run(task)
    monkeypatch.setattr(star, "_ROUNDING_MARGIN", 1.0)
    after, new_key = _run(task)
    assert after == pytest.approx(2 * before, rel=1e-8) and new_key != key and _calls(log) == 2
    monkeypatch.undo()
    assert sweep.cache_key(task, {"epsilon": [0.5]}, name="stale") == key


def test_a_library_lru_cache_filled_before_the_library_state_changed_is_not_served(cache, tmp_path, monkeypatch,
                                                                                    request):
    """``_rdp._refined_orders`` memoises orders read from ``ORDERS``: rebinding ``ORDERS`` changes the
    key, and the memo filled under the old orders must not give the row written under the new key."""
    log = tmp_path / "calls"
    request.addfinalizer(_rdp._refined_orders.cache_clear)  # no memo of the doubled orders outlives the test

    def task(epsilon, seed):
        _note(log)
        return {"v": float(_rdp._refined_orders(3)[0]) * epsilon}

    before, key = _run(task)
    monkeypatch.setattr(_rdp, "ORDERS", _rdp.ORDERS * 2)
    after, new_key = _run(task)
    _rdp._refined_orders.cache_clear()
    fresh = float(_rdp._refined_orders(3)[0]) * 0.5  # what a fresh kernel with these orders computes
    assert after == fresh != before and new_key != key and _calls(log) == 2


# ---------------------------------------------------------------------- builtins
_PYTHON_ROUND = builtins.round


def _round_half_up(number, ndigits=None):
    """``round`` as taught at school, ties away from zero (Python's own rounds a tie to even)."""
    return _PYTHON_ROUND(number, ndigits) if ndigits is not None else math.floor(number + 0.5)


def test_a_builtin_rebound_through_the_builtins_module_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        _note(log)
        return {"v": float(round(5 * epsilon))}  # round(2.5): 2 by Python's rule, 3 rounded half up

    before, key = _run(task)
    monkeypatch.setattr(builtins, "round", _round_half_up)
    after, new_key = _run(task)
    assert (before, after) == (2.0, 3.0) and new_key != key and _calls(log) == 2
    monkeypatch.undo()
    assert sweep.cache_key(task, {"epsilon": [0.5]}, name="stale") == key


def test_a_name_set_in_the_builtins_module_and_read_by_the_task_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    monkeypatch.setattr(builtins, "SWEEP_STALE_SCALE", 2.0, raising=False)

    def task(epsilon, seed):
        _note(log)
        return {"v": SWEEP_STALE_SCALE * epsilon}  # noqa: F821  (no global of that name: found in builtins)

    before, key = _run(task)
    monkeypatch.setattr(builtins, "SWEEP_STALE_SCALE", 4.0)
    after, new_key = _run(task)
    assert (before, after) == (1.0, 2.0) and new_key != key and _calls(log) == 2


def test_a_builtin_rebound_that_only_the_library_calls_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    X, y = np.zeros((10, 1)), np.zeros(10)

    def task(epsilon, seed):  # train_test_split holds out round(0.25 · 10) = round(2.5) rows
        _note(log)
        return {"v": len(dl.datasets.train_test_split(X, y, test_fraction=0.25)[2]) * epsilon}

    before, key = _run(task)
    monkeypatch.setattr(builtins, "round", _round_half_up)
    after, new_key = _run(task)
    assert (before, after) == (1.0, 1.5) and new_key != key and _calls(log) == 2


# ---------------------------------------------------------------------- installed packages
_NUMPY_CLIP = np.clip


def _doubled_clip(a, a_min=None, a_max=None, **kwargs):
    return _NUMPY_CLIP(a, a_min, a_max, **kwargs) * 2


def test_a_monkeypatched_numpy_function_the_task_calls_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        _note(log)
        return {"v": float(np.clip(epsilon, 0.0, 1.0))}

    before, key = _run(task)
    monkeypatch.setattr(np, "clip", _doubled_clip)
    after, new_key = _run(task)
    assert (before, after) == (0.5, 1.0) and new_key != key and _calls(log) == 2
    monkeypatch.undo()
    assert sweep.cache_key(task, {"epsilon": [0.5]}, name="stale") == key


def test_a_monkeypatched_numpy_function_that_only_the_library_calls_changes_the_key(cache, tmp_path, monkeypatch):
    log = tmp_path / "calls"

    def task(epsilon, seed):  # Huang et al.'s moments accountant clips its orders λ with np.clip
        _note(log)
        return {"v": dl.accounting.huang2019_total_epsilon(epsilon, 1e-5, 10)}

    before, key = _run(task)
    monkeypatch.setattr(np, "clip", _doubled_clip)
    after, new_key = _run(task)
    patched = dl.accounting.huang2019_total_epsilon(0.5, 1e-5, 10)
    assert after == patched != before and new_key != key and _calls(log) == 2


_FRESH_KERNEL = """
import builtins, math, sys
import numpy as np

if sys.argv[1] == "np.clip":
    clip = np.clip
    np.clip = lambda a, a_min=None, a_max=None, **kwargs: clip(a, a_min, a_max, **kwargs) * 2
elif sys.argv[1] == "round":
    python_round = builtins.round
    builtins.round = lambda x, ndigits=None: python_round(x, ndigits) if ndigits is not None else math.floor(x + 0.5)

import dpadmm_lite as dl
from dpadmm_book import sweep

def task(epsilon, seed):  # reaches np.clip and round only inside the library
    X, y = np.zeros((10, 1)), np.zeros(10)
    held_out = len(dl.datasets.train_test_split(X, y, test_fraction=0.25)[2])
    return {"v": dl.accounting.huang2019_total_epsilon(epsilon, 1e-5, 10) + held_out}

print(task(0.5, 0)["v"], sweep.cache_key(task, {"epsilon": [0.5]}, name="fresh"))
"""


def test_a_function_patched_before_the_library_is_imported_changes_the_key():
    """A kernel that patches ``np.clip`` or ``builtins.round`` before ``import dpadmm_lite`` has
    another key than a fresh kernel that does not: the library's import-time view of numpy and of
    the builtins already holds the patch, so the key sees it by where the patch was defined."""
    runs = {patch: subprocess.run([sys.executable, "-c", _FRESH_KERNEL, patch], capture_output=True, text=True,
                                  check=True, cwd=Path(__file__).parents[1]).stdout.split()
            for patch in ("none", "np.clip", "round")}
    values = {patch: float(value) for patch, (value, _) in runs.items()}
    keys = {patch: key for patch, (_, key) in runs.items()}
    assert len(set(values.values())) == 3  # each patch changes the result: a shared key would serve a wrong row
    assert len(set(keys.values())) == 3, keys


# ---------------------------------------------------------------------- state an object leaves out of its pickle
_SETTINGS_CELLS = {
    "__getstate__": """
class Settings:
    def __init__(self, name, scale):
        self.name, self.scale = name, scale

    def __getstate__(self):  # pickles its name only
        return {"name": self.name}
""",
    "__reduce__": """
class Settings:
    def __init__(self, name, scale=2.0):
        self.name, self.scale = name, scale

    def __reduce__(self):  # rebuilt from its name only
        return (Settings, (self.name,))
""",
}
_SETTINGS_TASK = """
settings = Settings("demo", 2.0)

def task(epsilon, seed):
    with open(LOG, "a") as log:
        log.write("run\\n")
    return {"v": settings.scale * epsilon}
"""


@pytest.mark.parametrize("method", list(_SETTINGS_CELLS))
def test_an_attribute_the_pickled_state_leaves_out_changes_the_key(cache, tmp_path, method):
    namespace = {"__name__": "__main__", "LOG": str(tmp_path / "calls")}
    _cell(namespace, _SETTINGS_CELLS[method] + _SETTINGS_TASK)
    before, key = _run(namespace["task"])
    namespace["settings"].scale = 4.0
    after, new_key = _run(namespace["task"])
    assert (before, after) == (1.0, 2.0) and new_key != key and _calls(namespace["LOG"]) == 2


# ---------------------------------------------------------------------- memos
_MEMO_CELL = """
import functools

SCALE = 2.0

@functools.lru_cache(maxsize=None)
def scaled(epsilon):
    return SCALE * epsilon

def task(epsilon, seed):
    with open(LOG, "a") as log:
        log.write("run\\n")
    return {"v": scaled(epsilon)}
"""


@pytest.mark.parametrize("filled_by", ["a sweep", "a cell"])
def test_an_lru_cache_memo_filled_before_its_global_changed_is_not_written_under_the_new_key(cache, tmp_path,
                                                                                           filled_by):
    notebook = {"__name__": "__main__", "LOG": str(tmp_path / "calls")}
    _cell(notebook, _MEMO_CELL)
    if filled_by == "a sweep":
        assert _run(notebook["task"])[0] == 1.0
    else:
        assert notebook["scaled"](0.5) == 1.0
    notebook["SCALE"] = 3.0
    after, key = _run(notebook["task"])
    assert after == 1.5  # what SCALE = 3 computes, not the memo of SCALE = 2
    fresh = {"__name__": "__main__", "LOG": notebook["LOG"]}
    _cell(fresh, _MEMO_CELL.replace("SCALE = 2.0", "SCALE = 3.0"))
    assert _run(fresh["task"]) == (1.5, key)  # a fresh kernel reads that row, under the same key


def test_an_lru_cache_memo_is_kept_while_what_its_helper_reads_is_unchanged(cache, tmp_path):
    notebook = {"__name__": "__main__", "LOG": str(tmp_path / "calls")}
    _cell(notebook, _MEMO_CELL)
    _run(notebook["task"])
    frame = sweep.grid(notebook["task"], {"epsilon": [0.25]}, name="another", progress=False)
    assert frame["v"].item() == 0.5 and notebook["scaled"].cache_info().currsize == 2


_PROPERTY_CELL = """
import functools

SCALE = 1.0

class Model:
    def __init__(self):
        self.factor = 2.0

    @functools.cached_property
    def scale(self):
        return self.factor * SCALE

model = Model()

def task(epsilon, seed):
    with open(LOG, "a") as log:
        log.write("run\\n")
    return {"v": model.scale * epsilon}
"""


@pytest.mark.parametrize("filled_by, change", [("a sweep", "SCALE"), ("a cell", "SCALE"), ("a sweep", "model.factor")])
def test_a_cached_property_filled_before_what_it_reads_changed_is_not_written_under_the_new_key(cache, tmp_path,
                                                                                              filled_by, change):
    notebook = {"__name__": "__main__", "LOG": str(tmp_path / "calls")}
    _cell(notebook, _PROPERTY_CELL)
    if filled_by == "a sweep":
        assert _run(notebook["task"])[0] == 1.0
    else:
        assert notebook["model"].scale == 2.0
    fresh = {"__name__": "__main__", "LOG": notebook["LOG"]}
    _cell(fresh, _PROPERTY_CELL)
    for kernel in (notebook, fresh):
        if change == "SCALE":
            kernel["SCALE"] = 2.0
        else:
            kernel["model"].factor = 4.0
    after, key = _run(notebook["task"])
    assert after == 2.0  # what the new value computes, not the value memoised under the old one
    assert _run(fresh["task"]) == (2.0, key)  # a fresh kernel reads that row, under the same key


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


def _seeded(epsilon, seed):
    rng = np.random.default_rng(seed)
    return {"v": float(rng.normal() + rng.random()) * epsilon}


def test_a_seeded_generator_is_not_mistaken_for_the_global_one(cache):
    value, key = _run(_seeded)
    assert _run(_seeded) == (value, key)

"""The library as a practitioner installs it: its wheel in a fresh virtual environment with the core
dependencies only (numpy, scipy, threadpoolctl), nothing of the book.

One wheel (``uv build``) is installed into an empty virtual environment (``uv venv``, no pip, no
site-packages of this one); a script there, in isolated mode (``python -I``: no PYTHONPATH, no user site), runs a private algorithm end to end and reports what
``import dpadmm_lite`` loaded and whether it touched the import system.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).with_name("uv")
#: What the library must not load: the book's dependencies and the heavy optional ones.
NOT_LOADED = ("pandas", "altair", "ipywidgets", "anywidget", "joblib", "pyarrow", "sklearn", "tqdm", "dpadmm_book")

SCRIPT = textwrap.dedent("""
    import json, sys
    meta_path = list(sys.meta_path)
    import numpy as np
    import dpadmm_lite as dl
    loaded = sorted(m for m in {not_loaded!r} if m in sys.modules)
    same_meta_path = list(sys.meta_path) == meta_path

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # rows inside the public bound 1
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0, 2.0]) + 0.1 * rng.normal(size=400) > 0, 1.0, -1.0)
    problem = dl.problems.logistic(X, y, lam=1e-2)
    trace = dl.run("dp_admm", problem, epsilon=1.0, delta=1e-5, rho=1.0, iterations=20)
    accuracy = float(np.mean(np.sign(X @ trace.model) == y))
    after_run = sorted(m for m in {not_loaded!r} if m in sys.modules)
    import dpadmm_book
    try:
        dpadmm_book.viz
        hint = None
    except ModuleNotFoundError as exc:
        hint = str(exc)
    print(json.dumps({{"loaded": loaded, "same_meta_path": same_meta_path, "epsilon": trace.privacy.epsilon,
                      "delta": trace.privacy.delta, "accuracy": accuracy, "d": int(trace.model.shape[0]),
                      "library": dl.__file__, "hint": hint, "modules_after_run": after_run}}))
""").format(not_loaded=NOT_LOADED)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the sources (setuptools writes build/ and *.egg-info where it builds)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("dpadmm_lite", "dpadmm_book"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([str(UV), "build", "--wheel", "--quiet", "--out-dir", str(out), str(source)], check=True,
                   capture_output=True, text=True)
    (found,) = out.glob("dpadmm_lite-*.whl")
    return found


def test_the_wheel_holds_the_library_its_data_and_its_type_marker(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {"dpadmm_lite/__init__.py", "dpadmm_lite/py.typed", "dpadmm_lite/data/adult.npz",
            "dpadmm_lite/algorithms/huang2019.py"} <= names
    assert not any(n.startswith(("tests/", "tools/", "book/", "benchmarks/")) for n in names)
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = sorted(r.split(">")[0].split("=")[0].split("<")[0].strip() for r in required if "extra ==" not in r)
    assert core == ["numpy", "scipy", "threadpoolctl"], required


def test_a_fresh_environment_with_the_core_dependencies_runs_a_private_algorithm(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(UV), "pip", "install", "--quiet", "--python", str(python), str(wheel)], check=True)
    installed = subprocess.run([str(UV), "pip", "freeze", "--python", str(python)], check=True,
                               capture_output=True, text=True).stdout.lower()
    names = sorted(line.split("==")[0].split(" @ ")[0].strip() for line in installed.splitlines() if line.strip())
    assert names == ["dpadmm-lite", "numpy", "scipy", "threadpoolctl"], names
    out = subprocess.run([str(python), "-I", "-c", SCRIPT], check=True, capture_output=True, text=True, cwd=tmp_path)
    result = json.loads(out.stdout)
    assert result["library"].startswith(str(venv)), "the installed wheel ran, not the working tree"
    assert result["loaded"] == [] and result["modules_after_run"] == []
    assert result["same_meta_path"], "import dpadmm_lite changed sys.meta_path"
    # the noise is calibrated to the budget: the accountant's ε of the run is at most the ε asked for, and close
    assert 0.99 < result["epsilon"] <= 1.0 and result["delta"] == 1e-5
    assert result["d"] == 5 and result["accuracy"] > 0.5
    # the book's instruments without their extra say what to install
    assert result["hint"] and "pip install 'dpadmm-lite[book]'" in result["hint"], result["hint"]

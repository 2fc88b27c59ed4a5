"""The pipeline cannot pass silently: every notebook runs, the site builds with -W, and the
committed sources stay clean."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import build_book

ROOT = build_book.ROOT
NOTEBOOKS = build_book.toc_notebooks()
ALL_NOTEBOOKS = sorted((ROOT / "book").rglob("*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def test_every_notebook_in_book_is_in_the_toc():
    orphans = [p.relative_to(ROOT).as_posix() for p in ALL_NOTEBOOKS if ".ipynb_checkpoints" not in p.parts and p not in NOTEBOOKS]
    assert not orphans, f"notebooks not listed in _toc.yml (they would never be executed or published): {orphans}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    dirty = [i for i, c in enumerate(_cells(path)) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_preamble_and_parameters_cell(path):
    cells = _cells(path)
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and "remove-cell" in _tags(code[0]), f"{path.name}: the first code cell must be the hidden preamble (tag remove-cell)"
    params = [c for c in code if "parameters" in _tags(c)]
    assert len(params) == 1, f"{path.name}: needs exactly one papermill `parameters` cell, found {len(params)}"
    assert "FAST" in "".join(params[0]["source"]), f"{path.name}: the parameters cell must define FAST"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_in_fast_mode(fast_build, path):
    rel = path.relative_to(ROOT).as_posix()
    runs = {r.path: r for r in fast_build.notebooks}
    assert rel in runs, f"{rel} is in _toc.yml but was not executed by the build"
    assert runs[rel].ok, f"{rel} failed under papermill:\n{runs[rel].error}"


def test_every_toc_notebook_was_run(fast_build):
    ran = {r.path for r in fast_build.notebooks}
    expected = {p.relative_to(ROOT).as_posix() for p in NOTEBOOKS}
    assert ran == expected


def test_site_builds_with_warnings_as_errors(fast_build):
    assert fast_build.site_ok, f"jupyter-book build failed (warnings are errors):\n{fast_build.site_log[-6000:]}"
    assert (fast_build.html / "index.html").exists()


def test_executed_notebooks_carry_no_widget_state(fast_build):
    for path in NOTEBOOKS:
        nb = json.loads((fast_build.stage / path.relative_to(ROOT)).read_text())
        assert "widgets" not in nb["metadata"], f"{path.name}: widget state would make MyST-NB load widget JS from a CDN"


def test_book_toolchain_is_pinned_exactly_and_below_2():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    book = project["optional-dependencies"]["book"]
    pins = {line.split("==")[0]: line.split("==")[1].split()[0] for line in book if "==" in line}
    assert pins["jupyter-book"].startswith("1."), "Jupyter Book must stay on 1.x"
    for name in ("jupyter-book", "myst-nb", "sphinx", "papermill", "sphinx-exercise", "sphinx-proof"):
        assert name in pins, f"{name} must be pinned exactly in the book extra"


def test_environment_yml_mirrors_the_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # the library's own dependencies and every extra the book needs (not the extras' references to each other)
    pins = [*project["dependencies"], *(pin for extra in ("pandas", "sklearn", "viz", "book") for pin in extras[extra])]
    pins = [pin.split(";")[0].strip() for pin in pins if not pin.startswith("dpadmm-lite[")]
    assert "numpy>=1.26" in pins and "altair==6.3.0" in pins and "jupyter-book==1.0.4.post1" in pins
    env = (ROOT / "environment.yml").read_text()
    missing = [pin for pin in pins if pin not in env]
    assert not missing, f"environment.yml does not mirror these pins: {missing}"


def test_generated_files_are_ignored():
    ignored = (ROOT / ".gitignore").read_text().split()
    for entry in ("_build/", ".venv/", "__pycache__/", ".ipynb_checkpoints/"):
        assert entry in ignored


def test_executed_notebooks_hide_run_settings_and_widget_outputs(fast_build):
    for path in NOTEBOOKS:
        nb = json.loads((fast_build.stage / path.relative_to(ROOT)).read_text())
        for cell in nb["cells"]:
            tags = cell["metadata"].get("tags", [])
            if {"parameters", "injected-parameters"} & set(tags):
                assert "remove-cell" in tags, f"{path.name}: the run settings would show on the page"
            for output in cell.get("outputs", []):
                assert build_book.WIDGET_MIME not in output.get("data", {}), f"{path.name}: a widget output would show as text"

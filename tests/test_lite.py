"""The JupyterLite edition (tools/bookbuild/lite.py): every chapter as a notebook that runs in the
reader's browser, offline, on the site's own Pyodide.

The browser test opens a chapter from its page's launch button in Chromium with every request to
another host blocked, runs the chapter's first cells (a glued number, a chart, a live panel whose
slider redraws it) and an exercise check (its hint on a wrong answer, its confirmation on the
right one). The Lite edition is the one the test build (``fast_build``) wrote into its site: no
second book build.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

import lite_session
from bookbuild import lite, lite_packages, live
from bookbuild.toc import ROOT, toc_notebooks

CHAPTER = "admm"  # the chapter the browser test runs: its exercise 1 has the check below
WRONG_Y_UPDATE = "x, u, lam, rho = ex.y_update_data()\nanswer = x + u\nex.check_y_update(answer)"
RIGHT_Y_UPDATE = ("x, u, lam, rho = ex.y_update_data()\nv = x + u\n"
                  "answer = np.sign(v) * np.maximum(np.abs(v) - lam / rho, 0.0)\nex.check_y_update(answer)")


@pytest.fixture(scope="module")
def lite_dir(site_dir) -> Path:
    path = site_dir / lite.LITE
    assert (path / "jupyter-lite.json").exists(), f"{site_dir} has no Lite edition: the book build writes it"
    return path


# ------------------------------------------------------------------ what the build writes
def test_the_kernel_runs_on_the_sites_own_pyodide_and_never_asks_pypi(lite_dir):
    settings = lite.check(lite_dir)
    assert settings["pyodideUrl"] == "./../_static/live/pyodide/pyodide.js"
    assert settings["disablePyPIFallback"] is True
    assert settings["loadPyodideOptions"]["lockFileURL"] == f"../_static/live/pyodide/{lite_packages.LITE_LOCK}"
    assert not (lite_dir / ".jupyterlite.doit.db").exists()
    assert not list(lite_dir.rglob("pyodide.asm.wasm")), "the Lite edition must reuse the site's Pyodide, not copy it"
    # a build that lost its settings (JupyterLite's task database) is refused
    broken = json.loads((lite_dir / "jupyter-lite.json").read_text())
    broken["jupyter-config-data"]["litePluginSettings"] = {}
    probe = lite_dir.parent / "lite-check-probe"
    probe.mkdir(exist_ok=True)
    (probe / "jupyter-lite.json").write_text(json.dumps(broken))
    with pytest.raises(lite.LiteBuildError, match="pyodideUrl"):
        lite.check(probe)


def test_every_package_of_the_lite_lock_is_checked_by_sha256(site_dir):
    folder = site_dir / "_static/live/pyodide"
    lock = json.loads((folder / lite_packages.LITE_LOCK).read_text())
    official = json.loads((live.NPM_DIR / "node_modules/pyodide/pyodide-lock.json").read_text())
    for name in ("ipython", "jedi", "pandas", "ssl", "micropip", "altair", "ipywidgets", "anywidget", "comm",
                 "markupsafe", "jinja2", "jsonschema", live.WHEEL_NAME):
        assert name in lock["packages"], name
    for name, entry in lock["packages"].items():
        data = (folder / entry["file_name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], name
        if name in lite_packages.PYPI_WHEELS:
            assert entry["sha256"] == lite_packages.PYPI_WHEELS[name][1], name
        elif name in official["packages"] and name not in (*live.UNUSED, live.WHEEL_NAME, "markupsafe"):
            assert entry["sha256"] == official["packages"][name]["sha256"], f"{name} is not Pyodide's official file"
    live.closure(lock, lock["packages"])  # every dependency is in the lock
    # the library's Lite wheel: its chart scripts, the Vega bundle VegaChart sends, the myst_nb stand-in
    entry = lock["packages"][live.WHEEL_NAME]
    assert entry["version"].endswith("+lite") and "myst_nb" in entry["imports"]
    assert {"altair", "anywidget", "ipywidgets", "pandas"} <= set(entry["depends"])
    with zipfile.ZipFile(folder / entry["file_name"]) as z:
        names = set(z.namelist())
        assert {"dpadmm_book/viz/js/vega-bundle.js", "dpadmm_book/viz/js/chart_widget.js", "myst_nb/__init__.py"} <= names
        assert "__dpadmmVegaLibs" in z.read("dpadmm_book/viz/js/vega-bundle.js").decode()
    # the live panels' own lock is unchanged: their button downloads no kernel package
    site_lock = json.loads((folder / "pyodide-lock.json").read_text())
    assert "ipython" not in site_lock["packages"] and "+" not in site_lock["packages"][live.WHEEL_NAME]["version"]


def test_markupsafe_is_its_pure_python_part_packed_reproducibly():
    sdist = lite_packages._pypi_files(live.CACHE, [("markupsafe", *lite_packages.MARKUPSAFE)], binary=False)["markupsafe"]
    name, data = lite_packages.markupsafe_wheel(sdist)
    assert lite_packages.markupsafe_wheel(sdist) == (name, data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
    assert "markupsafe/_native.py" in names and "markupsafe/__init__.py" in names
    assert not [n for n in names if n.endswith((".c", ".so", ".pyi"))]


def test_the_lite_notebooks_are_the_chapters_without_outputs_in_fast_mode(lite_dir):
    shipped = {p.name for p in (lite_dir / "files").glob("*.ipynb")}
    assert shipped == {p.name for p in toc_notebooks()}
    for path in sorted((lite_dir / "files").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        source = json.loads((ROOT / "book" / path.name).read_text())
        assert len(nb["cells"]) == len(source["cells"]), f"{path.name}: the book edition keeps every cell"
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert not any(c["outputs"] or c["execution_count"] for c in code), path.name
        params = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
        assert len(params) == 1 and re.search(r"^FAST = True", "".join(params[0]["source"]), re.M), path.name
        assert nb["metadata"]["kernelspec"]["name"] == "python"
        # scikit-learn, which problems.feature_graph imports inside the function: Pyodide loads what a cell
        # imports, so the chapters that build a feature graph import it in their first cell
        builds_graph = bool(re.search(r"\b(feature_graph|graph_guided_\w+)\(", "".join("".join(c["source"]) for c in code)))
        assert ("import sklearn.covariance" in "".join(code[0]["source"])) == builds_graph, path.name


def test_the_lite_markdown_holds_no_role_jupyterlab_myst_cannot_resolve(lite_dir):
    """jupyterlab-myst has no bibliography, no glue, and resolves a reference only to a target of the
    same notebook it has already rendered ("Cross reference target was not found" in the console
    otherwise): the Lite notebooks carry citations as text, references as links or names, glued
    numbers by their names (the cells that compute them show ``name = value``)."""
    for path in sorted((lite_dir / "files").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        left = re.findall(r"\{(?:cite|glue|ref|prf:ref|numref|doc)[a-z:]*\}`[^`]*`", text)
        assert not left, f"{path.name} keeps roles jupyterlab-myst cannot resolve: {left[:5]}"
    admm = "".join("".join(c["source"]) for c in json.loads((lite_dir / "files/admm.ipynb").read_text())["cells"])
    assert "[Xu et al., 2020]" in admm and "`lin_reach_01`" in admm
    xu = "".join("".join(c["source"]) for c in json.loads((lite_dir / "files/xu2020.ipynb").read_text())["cells"])
    assert "](admm.ipynb)" in xu and "](privacy.ipynb)" in xu  # another chapter's algorithm, theorem


def test_the_student_lite_edition_has_no_solution(tmp_path):
    """The student site's Lite notebooks (``lite.write_contents(..., "student")``, what its build
    ships) against the student build's leak probes; the book edition keeps every solution."""
    import test_classroom

    pages = test_classroom._solutions_by_page()
    student = {p.stem: p for p in lite.write_contents(tmp_path / "student", "student")}
    book = {p.stem: p for p in lite.write_contents(tmp_path / "book", "book")}
    checked = 0
    for doc, (removed, words) in pages.items():
        stem = Path(doc).name
        if stem not in student:
            continue  # a Markdown page: not a notebook of the Lite edition
        text = test_classroom._notebook_text(student[stem])
        full = test_classroom._notebook_text(book[stem])
        for solution, own in zip(removed, words):
            assert not [w for w in own if w in text], f"{stem}: the student Lite edition shows {solution.target!r}"
            assert all(w in full for w in own), f"{stem}: the book's Lite edition lacks the solution {solution.target!r}"
            checked += 1
    assert checked >= 3 * len(student) - 3


def test_every_chapter_page_has_a_launch_button_that_says_how_much(site_dir, lite_dir):
    manifest = json.loads((lite_dir / "dpadmm-lite.json").read_text())
    for nb in toc_notebooks():
        doc = nb.relative_to(ROOT).with_suffix("")
        page = (site_dir / f"{doc}.html").read_text()
        found = re.search(r'<a class="dpadmm-lite-launch[^"]*" href="([^"]+)"', page)
        assert found, f"{doc}.html has no launch button"
        target, _, query = found.group(1).partition("?")
        assert (site_dir / doc.parent / target).resolve() == (lite_dir / "notebooks" / "index.html").resolve()
        assert query == f"path={nb.name}" and (lite_dir / "files" / nb.name).exists()
        assert f'<span class="dpadmm-lite-size">{manifest["download"] / 1e6:.0f} MB</span>' in page
    assert "dpadmm-lite-launch" not in (site_dir / "book" / "intro.html").read_text()  # not a notebook


def test_glue_in_the_browser_shows_the_value_with_its_name(monkeypatch):
    import IPython.display

    from dpadmm_book import _book

    shown = []
    monkeypatch.setattr(IPython.display, "publish_display_data", lambda data, metadata=None: shown.append((data, metadata)))
    _book.glue("T_graph", 60, display=False)
    _book.glue("rho", 0.5)
    assert shown[0] == ({"text/plain": "T_graph = 60"}, {"scrapbook": {"name": "T_graph", "mime_prefix": ""}})
    assert shown[1][0]["text/plain"] == "0.5"
    assert json.loads(json.dumps(lite_packages.MYST_NB_SHIM.decode())) and "from dpadmm_book._book import glue" in lite_packages.MYST_NB_SHIM.decode()


def _square(x, seed):
    return {"y": x * x + seed}


def test_in_the_browser_without_pyarrow_a_sweep_runs_uncached_and_quietly(cache, monkeypatch):
    """Pyodide's file system is gone with the page and the Lite edition does not load pyarrow (a
    10.9 MB download) for a cache: there a sweep computes, writes nothing and warns nothing; with
    pyarrow (natively) it caches as always."""
    import sys
    import warnings

    from dpadmm_book import sweep

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        native = sweep.grid(_square, {"x": [1, 2]}, seeds=(0, 1), name="lite-square", progress=False)
    assert len(list(cache.glob("lite-square-*.parquet"))) == 1
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails, as in the Lite kernel
    for path in cache.glob("*.parquet"):
        path.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        browser = sweep.grid(_square, {"x": [1, 2]}, seeds=(0, 1), name="lite-square", progress=False)
    assert browser.equals(native) and list(browser["y"]) == [1, 2, 4, 5]
    assert not list(cache.glob("*.parquet")), "the browser wrote a cache it cannot read back"


# ------------------------------------------------------------------ in the browser, offline
def test_a_chapter_launched_from_its_page_runs_offline(site_dir, lite_dir, server, browser):
    visit = lite_session.LiteChapter(browser)
    try:
        page_url = f"{server}/book/{CHAPTER}.html"
        visit.page.goto(page_url, wait_until="load")
        assert not [u for u in visit.requested if "/lite/" in u or "pyodide" in u], "the page loaded the Lite edition"
        seconds = visit.launch(page_url, timeout=240)
        assert "/lite/notebooks/" in visit.page.url
        pyodide = f"{server}/_static/live/pyodide/"
        assert f"{pyodide}pyodide.asm.wasm" in visit.requested and f"{pyodide}{lite_packages.LITE_LOCK}" in visit.requested
        cells = visit.cells()
        seen = {"glued": None, "chart": None, "panel": None}
        for i, cell in enumerate(cells):
            if cell["type"] != "code":
                continue
            out = visit.run(i, timeout=240)
            assert out["error"] is None, f"cell {i} failed in the browser:\n{out['error'][-2000:]}"
            if "widgets.live(" in cell["source"]:
                out = visit.wait_output(i, chart=True)
                seen["panel"] = i
            elif re.search(r"\bglue\(", cell["source"]) and seen["glued"] is None:
                out = visit.wait_output(i, text=" = ")
                # the name a glue() of this cell gives, and its value (text the book fills in)
                names = re.findall(r"^([A-Za-z_]\w*) = \S", out["text"], re.M)
                assert names and all(re.search(rf"\b{n}\b|glue\(\s*(key|f\")", cell["source"]) for n in names), out["text"][:500]
                seen["glued"] = i
            # a cell that draws a chart (not the imports, not a helper's definition)
            if seen["chart"] is None and re.search(r"\b(dl\.viz\.|alt\.)\w+\(", cell["source"]) \
                    and not re.search(r"^(import|from|def) ", cell["source"], re.M):
                assert visit.wait_output(i, chart=True)["chart"]
                seen["chart"] = i
            if all(v is not None for v in seen.values()):
                break
        assert all(v is not None for v in seen.values()), f"the chapter's first cells showed only {seen}"
        before, after = visit.move_slider(seen["panel"])
        assert before and after != before, "moving the live panel's slider did not redraw its chart"
        exercise = next(i for i, c in enumerate(cells) if "ex.check_y_update(" in c["source"])
        wrong = visit.run(exercise, WRONG_Y_UPDATE)
        wrong = visit.wait_output(exercise, text="✗") if "✗" not in wrong["text"] else wrong
        assert "returned x + u unchanged" in wrong["text"] and "hint" in wrong["text"].lower()
        right = visit.run(exercise, RIGHT_Y_UPDATE)
        right = visit.wait_output(exercise, text="✓") if "✓" not in right["text"] else right
        assert "correct" in right["text"]
        # the student's work stays in the browser: saved, the page opened again, the answer is there
        assert visit.save_and_reopen()[exercise]["source"] == RIGHT_Y_UPDATE
        # and Run All on the page opened again (a fresh kernel) runs the whole chapter
        visit.wait_kernel(240)
        _assert_runs_clean(visit, CHAPTER)
        assert seconds < 240
    finally:
        visit.close()


#: The chapters whose Run All the suite runs in the browser besides admm (above): the reproducibility
#: table (docutils, the claim records). Every chapter: ``benchmarks/lite_run_all.py`` (each takes
#: minutes of WebAssembly; the suite cannot afford them all).
RUN_ALL = ("reproducibility",)


def _assert_runs_clean(visit: lite_session.LiteChapter, chapter: str) -> None:
    """Run All on the open chapter: no cell fails or writes to stderr (warnings, text progress bars),
    the console holds nothing but :data:`lite_session.CONSOLE_ALLOWED`, no request leaves the site."""
    ran = visit.run_all(timeout=600)
    assert len(ran) == sum(c["type"] == "code" for c in visit.cells())
    failed = [(r["index"], r["error"][-1500:]) for r in ran if r["error"]]
    assert not failed, f"{chapter}: cells failed in the browser: {failed}"
    noisy = [(r["index"], r["stderr"][-500:]) for r in ran if r["stderr"].strip()]
    assert not noisy, f"{chapter}: cells wrote to stderr: {noisy}"
    assert lite_session.unexpected_console(visit.console) == [], f"{chapter}: the console is not clean"
    assert visit.offhost == [], f"requests left the site: {visit.offhost[:5]}"


@pytest.mark.parametrize("chapter", RUN_ALL)
def test_run_all_completes_offline_with_a_clean_console(lite_dir, server, browser, chapter):
    visit = lite_session.LiteChapter(browser)
    try:
        visit.open(f"{server}/lite/notebooks/index.html?path={chapter}.ipynb", timeout=240)
        _assert_runs_clean(visit, chapter)
    finally:
        visit.close()

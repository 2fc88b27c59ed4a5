"""The "Run live" panels (issue 23): the book's library in Python/WebAssembly in the reader's browser.

In headless Chromium (Debian's package) on the built site, with every other host blocked: opening
any page fetches no WebAssembly (nothing of the live panels' Python); on a chapter with a live
panel, pressing the button loads Python in a Web Worker from the site itself, the panel marks
itself ``data-live-ready``, a moved slider re-runs the algorithm and the chart changes, and no
request leaves the machine. Without WebAssembly the panel says so and keeps the precomputed chart.

Without a browser: the build's checks (a carrier file whose sha256 is not the official lock's
fails the build; the library's wheel is reproducible and entered in the site's lock with its
sha256), the pages of the panels agree with ``_config.yml``, and a live re-run imports no pandas.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
import yaml

from browser_visit import Visit
from bookbuild import live as live_build
from dpadmm_book import live
from dpadmm_lite.registry import run

ROOT = Path(__file__).resolve().parents[1]
#: Loading Python takes 40-50 s on a loaded 2-core machine; the page itself gives up after 90 s.
READY_TIMEOUT_MS = 150_000


def _live_files(urls) -> list[str]:
    return [u for u in urls if urlparse(u).path.endswith(".wasm") or "/_static/live/pyodide/" in u]


def test_opening_any_page_downloads_no_webassembly(site_dir, server, browser):
    pages = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts
                   and p.relative_to(site_dir).parts[0] != "lite")  # the Lite app: tests/test_lite.py
    assert any(p == "book/admm.html" for p in pages)
    visit = Visit(browser)
    try:
        for page in pages:
            visit.page.goto(f"{server}/{page}", wait_until="load")
            visit.page.wait_for_timeout(300)
        assert not visit.offhost, visit.offhost
        assert not _live_files(visit.requested), _live_files(visit.requested)
        # the live page did load its (small) panel script: the check above is not vacuous
        assert any(u.endswith("/_static/live/live.js") for u in visit.requested)
    finally:
        visit.close()


def _chart_rows(page, root: str = "") -> list:
    """The rows the live chart draws (of the panel ``root`` selects, on a page with several)."""
    return page.evaluate(f"() => document.querySelector(\"{root} .dpadmm-live-chart\").__dpadmmView.data('live')")


def test_run_live_button_reruns_the_library_in_the_browser(site_dir, server, browser):
    visit = Visit(browser)
    page = visit.page
    try:
        page.goto(f"{server}/book/admm.html", wait_until="load")
        panel = page.locator(".dpadmm-live[data-live-panel='admm']")
        button = panel.locator("button.dpadmm-live-button")
        manifest = json.loads((site_dir / "_static/live/pyodide/manifest.json").read_text())
        assert f"{manifest['download'] / 1e6:.1f} MB" in button.inner_text()
        assert not _live_files(visit.requested)
        # the page's Content-Security-Policy: this site only, WebAssembly allowed
        csp = page.locator("meta[http-equiv='Content-Security-Policy']").get_attribute("content")
        assert "default-src 'self'" in csp and "'wasm-unsafe-eval'" in csp
        button.click()
        page.wait_for_selector(".dpadmm-live[data-live-ready]", timeout=READY_TIMEOUT_MS)
        # Python really ran from the site's own files: the core, the verified wheels, our wheel
        loaded = {urlparse(u).path.rsplit("/", 1)[-1] for u in _live_files(visit.requested)}
        assert {"pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"} <= loaded
        assert any(n.startswith("scipy-") for n in loaded) and any(n.startswith("dpadmm_lite-") for n in loaded)
        assert not any(n.startswith("pandas-") for n in loaded)  # lazily imported: not needed live
        before = _chart_rows(page)
        assert before and {"iteration", "metric", "value", "rho", "topology"} <= set(before[0])
        assert {r["topology"] for r in before} == {"ring"} and {r["rho"] for r in before} == {0.01}
        # the chapter's own numbers: the library in WebAssembly computes what it computes natively
        native = live.run_panel("admm", {"rho": 0.01, "topology_name": "ring", "n_agents": 10, "iterations": 100})
        # the same numbers as native CPython, to the local solvers' tolerance: their Newton inverses are single
        # precision, which the two builds round apart (numpy's einsum there, BLAS here), and each solve may stop
        # anywhere within inner_tol; at the panel's start (ρ = 0.01, 100 iterations, the static chart's setting)
        # the gaps of the last iterations (2e-5) then differ by 2e-9
        assert [r["value"] for r in before] == pytest.approx([r["value"] for r in native["rows"]], rel=1e-6, abs=1e-8)
        runs = int(panel.get_attribute("data-live-runs"))
        slider = page.locator("#dpadmm-live-rho")
        slider.evaluate("(el) => { el.value = String(Number(el.value) + 1); el.dispatchEvent(new Event('input')); }")
        page.wait_for_function(f"() => Number(document.querySelector('.dpadmm-live').dataset.liveRuns) > {runs}",
                               timeout=30_000)
        after = _chart_rows(page)
        assert {r["rho"] for r in after} == {0.1}
        assert [r["value"] for r in after] != [r["value"] for r in before]
        page.select_option("#dpadmm-live-topology_name", "complete")
        page.wait_for_function(
            "() => document.querySelector('.dpadmm-live-chart').__dpadmmView.data('live')[0].topology === 'complete'",
            timeout=30_000)
        assert page.locator(".dpadmm-live-chart svg").count() == 1
        assert not visit.offhost, visit.offhost
        assert not visit.errors, visit.errors
    finally:
        visit.close()


def test_a_chart_that_cannot_be_drawn_says_so_and_the_next_move_draws_again(server, browser):
    """A redraw that fails (here: the chart's view rejects) leaves a message, not a chart marked busy for
    good and a panel that ignores every later move."""
    visit = Visit(browser)
    page = visit.page
    try:
        page.goto(f"{server}/book/admm.html", wait_until="load")
        page.locator(".dpadmm-live[data-live-panel='admm'] button").click()
        page.wait_for_selector(".dpadmm-live[data-live-ready]", timeout=READY_TIMEOUT_MS)
        page.evaluate("""() => { const view = document.querySelector('.dpadmm-live-chart').__dpadmmView;
            window.__run = view.runAsync; view.runAsync = () => Promise.reject(new Error('drawing failed')); }""")
        move = "(el) => { el.value = String(Number(el.value) + {d}); el.dispatchEvent(new Event('input')); }"
        page.locator("#dpadmm-live-rho").evaluate(move.replace("{d}", "1"))
        page.wait_for_function("() => document.querySelector('.dpadmm-live-status').textContent"
                               ".includes('could not be drawn')", timeout=30_000)
        assert page.locator(".dpadmm-live-chart").get_attribute("aria-busy") == "false"
        runs = int(page.locator(".dpadmm-live").get_attribute("data-live-runs"))
        page.evaluate("() => { const view = document.querySelector('.dpadmm-live-chart').__dpadmmView; "
                      "view.runAsync = window.__run; }")
        page.locator("#dpadmm-live-rho").evaluate(move.replace("{d}", "-1"))
        page.wait_for_function(f"() => Number(document.querySelector('.dpadmm-live').dataset.liveRuns) > {runs}",
                               timeout=30_000)
        assert {r["rho"] for r in _chart_rows(page)} == {0.01}
        assert [e for e in visit.errors if "drawing failed" not in e] == []
    finally:
        visit.close()


def _arena_moves_with_two_workers(page, server):
    """Open the arena, start it live, wait for its second worker, pick Adult and move ε one step: the value of ε."""
    page.goto(f"{server}/book/arena.html", wait_until="load")
    page.locator(".dpadmm-live[data-live-panel='arena'] button").click()
    page.wait_for_selector(".dpadmm-live[data-live-ready]", timeout=READY_TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('.dpadmm-live').dataset.liveWorkers === '2'",
                           timeout=READY_TIMEOUT_MS)
    page.select_option("#dpadmm-live-task", "adult")
    page.wait_for_function("() => document.querySelector('.dpadmm-live').dataset.liveRuns === '2'", timeout=90_000)
    page.locator("#dpadmm-live-epsilon").evaluate(
        "(el) => { el.value = String(Number(el.value) + Number(el.step)); el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("() => document.querySelector('.dpadmm-live').dataset.liveRuns === '3'", timeout=90_000)
    return float(page.locator("#dpadmm-live-epsilon + output").inner_text())


def test_the_arenas_field_is_split_between_two_workers_and_is_the_libraries(server, browser):
    """The arena's field (fourteen runs on Adult) is shared by two Web Workers, one per core: the chart is the
    library's field at that ε as native CPython computes it in one go, and the panel says two workers made it."""
    visit = Visit(browser)
    page = visit.page
    try:
        epsilon = _arena_moves_with_two_workers(page, server)
        native = live.run_panel("arena", {"task": "adult", "epsilon": epsilon})
        assert _same_rows(_chart_rows(page), native["rows"]) and len(native["rows"]) >= 10
        assert "by two workers" in page.locator(".dpadmm-live-summary").inner_text()
        shares = json.loads(page.locator(".dpadmm-live").get_attribute("data-live-share-ms"))
        assert len(shares) == 2 and all(ms > 0 for ms in shares)
        assert float(page.locator(".dpadmm-live").get_attribute("data-live-workers-seconds")) > 0
        assert not visit.offhost and not visit.errors, (visit.offhost, visit.errors)
    finally:
        visit.close()


#: The page's second Web Worker fails every share it is given (it is asked for a panel that does not exist).
_BROKEN_HELPER = """(() => {
  const Real = window.Worker; let made = 0;
  window.Worker = function (url) {
    const worker = new Real(url); made += 1;
    if (made === 2) {
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (msg) => post(msg.type === 'share' ? { ...msg, type: 'run', panel: 'no such panel' } : msg);
    }
    return worker;
  };
})();"""


def test_when_the_second_worker_fails_the_first_runs_the_field_alone(server, browser):
    """A share that fails in the second worker: the first worker re-runs the whole field, the chart is still
    the library's, and later moves use one worker."""
    visit = Visit(browser, init_script=_BROKEN_HELPER)
    page = visit.page
    try:
        epsilon = _arena_moves_with_two_workers(page, server)
        assert page.locator(".dpadmm-live").get_attribute("data-live-workers") == "1"
        assert _same_rows(_chart_rows(page), live.run_panel("arena", {"task": "adult", "epsilon": epsilon})["rows"])
        assert "by two workers" not in page.locator(".dpadmm-live-summary").inner_text()
        assert not visit.offhost and not visit.errors, (visit.offhost, visit.errors)
    finally:
        visit.close()


def _same_rows(browser_rows: list, native_rows: list) -> bool:
    """The browser's rows are native CPython's: the same fields, equal text, numbers to a relative 1e-9 — the
    exact local solvers' stopping tolerance (``inner_tol``): the browser's products sum in another order than
    any native BLAS kernel, so each local solve may end elsewhere within it (tests/test_live_zhang.py)."""
    if len(browser_rows) != len(native_rows):
        return False
    for a, b in zip(browser_rows, native_rows):
        if set(a) != set(b):
            return False
        for key, value in b.items():
            if isinstance(value, float) and value == value:
                if a[key] != pytest.approx(value, rel=1e-9, abs=1e-300):
                    return False
            elif a[key] != value:
                return False
    return True


@pytest.mark.parametrize("name", sorted(set(live.PANELS) - {"admm"}))
def test_every_panel_runs_the_library_live_in_the_browser(name, server, browser):
    """Each chapter's panel (the ADMM chapter's has its own, longer test above): press the button,
    the first chart is native CPython's numbers at the panel's defaults; moving the first control
    to the other end of its range (or to another option) re-runs the library and the chart changes;
    nothing is requested from another host and the console stays clean."""
    panel = live.PANELS[name]
    visit = Visit(browser)
    page = visit.page
    try:
        page.goto(f"{server}/{panel['page']}.html", wait_until="load")
        root = f".dpadmm-live[data-live-panel='{name}']"  # a page may hold several panels (privacy: two)
        page.locator(f"{root} button").click()
        page.wait_for_selector(f"{root}[data-live-ready]", timeout=READY_TIMEOUT_MS)
        before = _chart_rows(page, root)
        assert before and _same_rows(before, live.run_panel(name, {})["rows"])
        chart = page.locator(f"{root} .dpadmm-live-chart")
        assert chart.get_attribute("aria-busy") == "false"
        page.evaluate("""(root) => { const chart = document.querySelector(root + ' .dpadmm-live-chart');
            window.__busySeen = []; new MutationObserver(() => window.__busySeen.push(chart.getAttribute('aria-busy')))
            .observe(chart, { attributes: true, attributeFilter: ['aria-busy'] }); }""", root)
        first = panel["controls"][0]
        field = page.locator(f"{root} #dpadmm-live-{first['name']}")
        if first["kind"] == "select":
            other = next(value for _, value in first["options"] if value != first["value"])
            field.select_option(other)
        else:
            field.evaluate("(el) => { el.value = Number(el.value) > Number(el.min) ? el.min : el.max; "
                           "el.dispatchEvent(new Event('input')); }")
        page.wait_for_function("(root) => document.querySelector(root).dataset.liveRuns === '2'", arg=root,
                               timeout=90_000)
        after = _chart_rows(page, root)
        assert after and not _same_rows(after, before)
        assert page.locator(f"{root} .dpadmm-live-chart svg").count() == 1
        # while the run was under way the chart said so, and it no longer does
        assert page.evaluate("() => window.__busySeen")[:1] == ["true"]
        page.wait_for_function("(root) => document.querySelector(root + ' .dpadmm-live-chart')"
                               ".getAttribute('aria-busy') === 'false'", arg=root)
        assert "dpadmm-live-running" not in page.locator(root).get_attribute("class")
        # every slider reaches both ends of its declared range (a log slider's grid runs through its
        # default value, and its outermost notches read as the ends)
        for c in panel["controls"]:
            if c["kind"] == "select":
                continue
            ends = []
            for end in ("max", "min"):
                page.locator(f"{root} #dpadmm-live-{c['name']}").evaluate(
                    f"(el) => {{ el.value = el.{end}; el.dispatchEvent(new Event('input')); }}")
                ends.append(float(page.locator(f"{root} #dpadmm-live-{c['name']} + output").inner_text()))
            assert ends == [pytest.approx(c["max"], rel=1e-12), pytest.approx(c["min"], rel=1e-12)], (c, ends)
        assert not visit.offhost and not visit.errors, (visit.offhost, visit.errors)
    finally:
        visit.close()


def test_without_webassembly_the_panel_says_so_and_keeps_the_precomputed_chart(site_dir, server, browser):
    visit = Visit(browser, init_script="delete window.WebAssembly;")
    try:
        visit.page.goto(f"{server}/book/admm.html", wait_until="load")
        panel = visit.page.locator(".dpadmm-live")
        assert panel.get_attribute("data-live-fallback") == "unsupported"
        assert visit.page.locator(".dpadmm-live-button").is_disabled()
        assert "cannot run the live panel" in panel.inner_text()
        assert visit.page.locator(".dpadmm-vega[data-name='Consensus ADMM: pick ρ and the network']").count() == 1
    finally:
        visit.close()


def test_loading_longer_than_the_limit_stops_and_keeps_the_precomputed_chart(site_dir, server, browser):
    visit = Visit(browser, init_script="window.DPADMM_LIVE_LOAD_LIMIT_S = 0.5;")
    try:
        visit.page.goto(f"{server}/book/admm.html", wait_until="load")
        visit.page.locator(".dpadmm-live button").click()
        visit.page.wait_for_selector(".dpadmm-live[data-live-fallback='timeout']", timeout=20_000)
        assert "took longer than 0.5 s" in visit.page.locator(".dpadmm-live-status").inner_text()
        assert visit.page.locator(".dpadmm-live[data-live-ready]").count() == 0
        assert visit.page.locator(".dpadmm-vega[data-drawn='done']").count() >= 1
    finally:
        visit.close()


# ----------------------------------------------------------------------------- without a browser
def test_the_panels_pages_are_the_pages_that_load_the_live_scripts():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    pages = config["sphinx"]["config"]["html_context"]["dpadmm_live_pages"]
    assert sorted(pages) == sorted({p["page"] for p in live.PANELS.values()})  # a page may hold two panels


def test_each_panel_finds_its_chart_on_its_page(site_dir):
    for name, panel in live.PANELS.items():
        html = (site_dir / f"{panel['page']}.html").read_text()
        assert f'data-name="{panel["chart"]}"' in html, (name, panel["chart"])
        assert "_static/live/live.js" in html


def _fake_lock_and_carrier(tmp_path, content: bytes, listed: bytes):
    lock = {"info": {"version": live_build.PYODIDE_VERSION}, "packages": {
        "pkg": {"file_name": "pkg-1.0-py3-none-any.whl", "sha256": hashlib.sha256(listed).hexdigest(),
                "depends": []}}}
    carrier = tmp_path / "carrier.whl"
    with zipfile.ZipFile(carrier, "w") as z:
        z.writestr(live_build.CARRIER["folder"] + "pkg-1.0-py3-none-any.whl", content)
    return lock, carrier


def test_a_carrier_file_that_is_not_the_official_one_fails_the_build(tmp_path):
    lock, carrier = _fake_lock_and_carrier(tmp_path, b"the official bytes", b"the official bytes")
    assert live_build.verified_packages(lock, ["pkg"], carrier) == {"pkg-1.0-py3-none-any.whl": b"the official bytes"}
    lock, carrier = _fake_lock_and_carrier(tmp_path, b"tampered bytes", b"the official bytes")
    with pytest.raises(live_build.LiveBuildError, match="sha256"):
        live_build.verified_packages(lock, ["pkg"], carrier)


def test_a_trimmed_wheel_keeps_every_other_file_and_its_record_line():
    record = "pkg/__init__.py,sha256=a,1\npkg/used/a.py,sha256=b,1\npkg/unused/big.dat,sha256=c,1\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (("pkg/__init__.py", b"init"), ("pkg/used/a.py", b"used"), ("pkg/unused/big.dat", b"x" * 999),
                           ("pkg/unused_too.py", b"a module, not the folder"), ("pkg-1.dist-info/RECORD", record.encode())):
            z.writestr(name, data)
    trimmed = live_build.trimmed_wheel(buf.getvalue(), "pkg", ["unused"])
    assert live_build.trimmed_wheel(buf.getvalue(), "pkg", ["unused"]) == trimmed  # reproducible
    with zipfile.ZipFile(io.BytesIO(trimmed)) as z:
        assert z.namelist() == ["pkg/__init__.py", "pkg/used/a.py", "pkg/unused_too.py", "pkg-1.dist-info/RECORD"]
        assert z.read("pkg/used/a.py") == b"used" and z.read("pkg/unused_too.py") == b"a module, not the folder"
        assert z.read("pkg-1.dist-info/RECORD").decode() == "pkg/__init__.py,sha256=a,1\npkg/used/a.py,sha256=b,1\n"


def test_dependencies_come_first_and_unknown_packages_fail():
    lock = {"packages": {"scipy": {"depends": ["numpy", "openblas"]}, "numpy": {"depends": []},
                         "openblas": {"depends": []}}}
    assert live_build.closure(lock, ["scipy"]) == ["numpy", "openblas", "scipy"]
    with pytest.raises(live_build.LiveBuildError, match="pandas"):
        live_build.closure(lock, ["pandas"])


def test_the_library_wheel_is_reproducible_and_in_the_sites_lock(site_dir):
    name, first, version = live_build.library_wheel()
    assert live_build.library_wheel()[1] == first
    with zipfile.ZipFile(io.BytesIO(first)) as z:
        names = set(z.namelist())
    assert "dpadmm_book/live/__init__.py" in names and f"dpadmm_lite-{version}.dist-info/RECORD" in names
    assert "dpadmm_book/live/arena_chosen.json" in names  # the arena panel's chosen settings (data)
    # every data file of the library (the panels load Adult, the feature graphs and Zhang & Zhu's reference
    # curves), with the file that states their source and licence (CC BY 4.0)
    data = {f"dpadmm_lite/{f.relative_to(ROOT / 'dpadmm_lite').as_posix()}" for f in (ROOT / "dpadmm_lite/data").iterdir()
            if f.is_file()}
    assert "dpadmm_lite/data/zhang2017_reference.npz" in data and data <= names
    lock = json.loads((site_dir / "_static/live/pyodide/pyodide-lock.json").read_text())
    entry = lock["packages"][live_build.WHEEL_NAME]
    shipped = (site_dir / "_static/live/pyodide" / entry["file_name"]).read_bytes()
    assert entry["sha256"] == hashlib.sha256(shipped).hexdigest()
    official = json.loads((live_build.NPM_DIR / "node_modules/pyodide/pyodide-lock.json").read_text())
    carrier = zipfile.ZipFile(live_build.carrier_wheel())
    for pkg, item in lock["packages"].items():
        if pkg == live_build.WHEEL_NAME:
            continue
        data = (site_dir / "_static/live/pyodide" / item["file_name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == item["sha256"], pkg
        if pkg not in live_build.UNUSED:
            assert item["sha256"] == official["packages"][pkg]["sha256"]
            continue
        # a trimmed wheel (scipy): every member is the official wheel's, byte for byte, but the unused ones
        original = carrier.read(live_build.CARRIER["folder"] + item["file_name"])
        assert hashlib.sha256(original).hexdigest() == official["packages"][pkg]["sha256"]
        with zipfile.ZipFile(io.BytesIO(original)) as z_official, zipfile.ZipFile(io.BytesIO(data)) as z_shipped:
            kept = z_shipped.namelist()
            left_out = tuple(f"{pkg}/{name}/" for name in live_build.UNUSED[pkg])
            assert not [n for n in kept if n.startswith(left_out)]
            assert {n for n in z_official.namelist() if not n.startswith(left_out)} == set(kept)
            for n in kept:
                if not n.endswith("RECORD"):
                    assert z_shipped.read(n) == z_official.read(n), n
    notices = (site_dir / "_static/live/pyodide/LICENSES.txt").read_text()
    for needed in ("Mozilla Public License", "numpy-2.0.2.dist-info/LICENSE.txt", "scipy-1.14.1.dist-info/LICENSE.txt",
                   "The OpenBLAS Project", "threadpoolctl"):
        assert needed in notices


@pytest.mark.parametrize("name", sorted(live.PANELS))
def test_a_live_rerun_imports_only_what_the_browser_has(name):
    """Pyodide's site ships numpy and scipy only: a panel's run (at its defaults) imports no pandas,
    scikit-learn, Altair or widgets, nor scipy.optimize or scipy.stats (seconds of a WebAssembly
    page's time to ready; the accountants import them where they use them)."""
    code = (f"import sys; from dpadmm_book import live; live.run_panel({name!r}, {{}}); "
            "print(sorted(m for m in ('pandas', 'sklearn', 'scipy.stats', 'scipy.optimize', 'altair', 'ipywidgets') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", sorted(live.PANELS))
def test_each_panels_controls_start_at_its_functions_defaults(name):
    """The page's first chart (the controls' values) is the function's default run, which the
    browser test compares with native CPython; the controls are the function's parameters."""
    import inspect

    panel = live.PANELS[name]
    parameters = inspect.signature(live._FUNCTIONS[name]).parameters
    for control in panel["controls"]:
        assert control["name"] in parameters, (name, control["name"])
        assert parameters[control["name"]].default == control["value"], (name, control["name"])
        if "min" in control:
            assert control["min"] <= control["value"] <= control["max"], (name, control["name"])


@pytest.mark.parametrize("panel, values, name", [
    ("zhang2017", {"algorithm": "SGD"}, "algorithm"), ("zhang2017", {"epsilon": 20.0}, "epsilon"),
    ("zhang2017", {"n_agents": 41}, "n_agents"), ("zhang2017", {"topology_name": "torus"}, "topology_name")])
def test_bad_zhang_zhu_values_name_the_parameter(panel, values, name):
    with pytest.raises(ValueError, match=name):
        live.run_panel(panel, values)


def test_the_huang_panel_is_the_chapters_set_up():
    """All of Adult, the paper's λ/n = 1e-6, ρ = 0.1; the run spends the ε asked for (accountant)."""
    from dpadmm_lite import datasets

    from dpadmm_lite import problems

    X, y, X_test, y_test = datasets.load_adult()
    problem = live.huang2019_problem("l2")
    chapter = problems.logistic(X, y, 1e-6, "l2", X_test=X_test, y_test=y_test)  # book/huang2019.ipynb, cell 3
    w = np.full(chapter.d, 0.3)
    assert problem.n == X.shape[0] == 40_000 and problem.objective(w) == pytest.approx(chapter.objective(w), rel=1e-12)
    result = live.huang2019_star(epsilon=0.5, iterations=10, n_agents=10)
    assert {r["method"] for r in result["rows"]} == {"DP-ADMM"} and max(r["iteration"] for r in result["rows"]) == 10
    assert "; ε=0.5, δ=1e-03 end to end (the paper's Thm 2 reads ε=" in result["summary"], result["summary"]
    for values, name in (({"regularizer": "l0"}, "regularizer"), ({"iterations": 101}, "iterations"),
                         ({"delta": 0.5}, "delta"), ({"calibration": "rdp"}, "calibration"),
                         ({"method": "DP-ADMM (star)"}, "method"), ({"rho": 0.0}, "rho")):
        with pytest.raises(ValueError, match=name):
            live.huang2019_star(**values)


@pytest.mark.parametrize("method, algorithm", [("DP-ADMM", "dp_admm_star"), ("DP-SGD", "dp_sgd_star")])
def test_the_huang_rows_are_the_runs_of_the_chapters_chart(method, algorithm):
    """The chapter's chart (and its claims) take DP-ADMM's and DP-SGD's runs from live.huang2019_star:
    its rows are the library's run at the chart's iterations (test error, augmented objective,
    empirical loss, the ε spent), at any ρ."""
    rows = live.huang2019_star(epsilon=0.3, delta=1e-4, regularizer="l1", iterations=12, n_agents=8, seed=3,
                               method=method, rho=0.2)["rows"]
    trace = run(algorithm, live.huang2019_problem("l1"), epsilon=0.3, delta=1e-4, rho=0.2, iterations=12, n_agents=8,
                seed=3)
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]
    for r in rows:
        k = r["iteration"] - 1
        assert (r["test error"], r["augmented objective"], r["empirical loss"]) == (
            trace.metrics["test_error"][k], trace.metrics["augmented_objective"][k], trace.metrics["empirical_loss"][k])
        assert r["method"] == method and r["ε spent"] == trace.privacy.epsilon and r["lo"] == r["hi"] == r["test error"]


def test_the_zhang_zhu_panel_is_the_chapters_set_up():
    """The panel's problem is the chapter's: ℓ2-logistic on Adult's first 8,000 rows at the paper's λ
    (DVP's for the non-private reference), and its private run spends the ε asked for."""
    from dpadmm_lite import datasets, problems

    X, y, X_test, y_test = datasets.load_adult()
    mine = live.zhang2017_problem(live.ZHANG2017_LAM["dvp_graph"])
    chapter = problems.logistic(X[:8000], y[:8000], 10 ** -2.5 / 1750, "l2", X_test=X_test, y_test=y_test)
    assert mine.n == chapter.n and np.isclose(mine.objective(np.ones(mine.d) * 0.01),
                                              chapter.objective(np.ones(chapter.d) * 0.01), rtol=1e-12)
    result = live.zhang2017_network(epsilon=2.0, iterations=10, n_agents=10)
    assert "ε=" in result["summary"] and len(result["node_loss"]) == 10
    assert {r["algorithm"] for r in result["rows"]} == {"DVP", "non-private"}
    assert max(r["iteration"] for r in result["rows"]) == 10
    alone = live.zhang2017_network(algorithm="non-private", iterations=10, n_agents=10)
    assert {r["algorithm"] for r in alone["rows"]} == {"non-private"}


def test_the_zhang_zhu_chart_runs_through_the_live_function():
    """The chapter's sweep of the chart the site redraws calls live.zhang2017_network for one run
    (``reference=False``) and reads the run's other metrics from its trace (``keep_trace=True``): that
    trace is the library's run on the chapter's problem."""
    settings = dict(rho=0.1, iterations=8, topology="small_world", n_agents=6, seed=2)
    result = live.zhang2017_network(algorithm="PVP", epsilon=0.5, calibration="paper", topology_name="small_world",
                                    n_agents=6, iterations=8, seed=2, reference=False, keep_trace=True)
    assert {r["algorithm"] for r in result["rows"]} == {"PVP"}  # no non-private run next to it
    trace = run("pvp_graph", live.zhang2017_problem(live.ZHANG2017_LAM["pvp_graph"]), epsilon=0.5, delta=1e-5,
                calibration="paper", **settings)
    for key in ("test_error", "empirical_loss", "neighbour_distance_mean"):
        assert np.array_equal(result["trace"].metrics[key], trace.metrics[key]), key
    assert [r["test error"] for r in result["rows"]] == [trace.metrics["test_error"][r["iteration"] - 1]
                                                         for r in result["rows"]]
    assert result["trace"].privacy.epsilon == trace.privacy.epsilon
    assert "trace" not in live.zhang2017_network(iterations=5, n_agents=4)  # the browser's result stays JSON
    for flag in ("reference", "keep_trace"):
        with pytest.raises(TypeError, match=flag):
            live.zhang2017_network(iterations=5, n_agents=4, **{flag: "yes"})


@pytest.mark.parametrize("values, name", [({"rho": 0.0}, "rho"), ({"topology_name": "torus"}, "topology_name"),
                                          ({"n_agents": 1}, "n_agents"), ({"iterations": 2.5}, "iterations"),
                                          ({"sigma": 1.0}, "sigma")])
def test_bad_control_values_name_the_parameter(values, name):
    with pytest.raises(ValueError, match=name):
        live.run_panel("admm", values)


@pytest.mark.parametrize("chapter, function", [("admm", "live.admm_consensus"), ("privacy", "live.accountants"),
                                               ("xu2020", "live.xu2020.xu2020_curves"),
                                               ("liu2022", "panels.liu2022.liu2022_curves"),
                                               ("cyffers2023", "live.cyffers2023_modes"), ("arena", "live.arena_field"),
                                               ("huang2019", "live.huang2019_star"),
                                               ("zhang2017", "live.zhang2017_network")])
def test_the_chapters_panel_and_static_chart_call_the_live_function(chapter, function):
    """One source of truth: the JupyterLab panel and the sweep of the static chart that the site's
    live panel redraws both call the function the browser runs (no copy of the set-up)."""
    cells = ["".join(c["source"]) for c in json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text())["cells"]
             if c["cell_type"] == "code"]
    chart = live.PANELS[chapter]["chart"]
    panel_cells = [s for s in cells if "book.widgets.live(" in s and function + "(" in s]
    sweep_cells = [s for s in cells if "book.sweep.grid(" in s and function + "(" in s]
    assert panel_cells, f"the live panel cell of {chapter} does not call {function}"
    assert sweep_cells, f"the sweep of {chapter}'s chart {chart!r} does not call {function}"


def test_the_static_grid_and_the_live_rows_agree():
    # the privacy chapter's sweep takes T = 1 … 1000 at 7 points: the grid of its static chart
    rows = live.accountants(noise_multiplier=1.0, sampling_rate=1.0, delta=1e-5, iterations=1000, points=7)["rows"]
    assert sorted({r["T"] for r in rows}) == [1, 3, 10, 32, 100, 316, 1000]
    assert {r["accountant"] for r in rows} == {"Rényi DP", "privacy loss distribution", "μ-GDP (exact)"}
    assert live.admm_consensus(rho=1.0, topology_name="complete", iterations=60)["iterations_to_gap"] is None
    result = live.admm_consensus(rho=0.001, topology_name="complete", iterations=60)
    trace = run("admm_graph", live.admm_problem(), rho=0.001, iterations=60, topology="complete", n_agents=10)
    gap = np.asarray(trace.objective_gap)  # iteration k is gap[k - 1]
    reach = result["iterations_to_gap"]  # the first k with a gap below 1e-6
    assert reach is not None and gap[reach - 1] < 1e-6 and (gap[:reach - 1] >= 1e-6).all()
    assert live.ranges("admm") == {"rho": (1e-4, 1e2), "n_agents": (2, 30), "iterations": (5, 200)}
    with pytest.raises(ValueError, match="points"):
        live.accountants(points=1)


@pytest.mark.parametrize("name", sorted(n for n, p in live.PANELS.items()
                                        if any(c["name"] == "epsilon" for c in p["controls"])))
def test_every_panel_with_an_epsilon_runs_without_noise_at_infinity(name):
    """The JupyterLab panels' "∞ (no noise)" toggle passes ε = math.inf to the live function: it runs
    without noise (and says so) instead of refusing; a NaN or a negative ε still names the parameter."""
    import math

    result = live.run_panel(name, {"epsilon": math.inf} | _fastest(name))
    assert result["rows"] and "ε=∞" in result["summary"], result["summary"][:200]
    for bad in (math.nan, -math.inf, 0.0):
        with pytest.raises(ValueError, match="epsilon"):
            live.run_panel(name, {"epsilon": bad})


def _fastest(name: str) -> dict:
    """The panel's controls at their cheapest setting: the smallest T (and N) the site allows."""
    return {c["name"]: c["min"] for c in live.PANELS[name]["controls"]
            if c["name"] in ("iterations", "n_agents") and "min" in c}

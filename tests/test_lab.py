"""The book in a real JupyterLab, driven by headless Chromium, with no network.

For every TOC notebook: JupyterLab (localhost, a free port, a token, the settings ``make lab``
ships) serves the JupyterLab edition of the book (``make lab``'s, whole chapters, in fast mode to
keep the suite short); Chromium opens the chapter with every request to another host blocked and
checks that it opens on its title, not marked modified. Then ONE Run All, and: every glued number
of the chapter shows its value (jupyterlab-myst inline expressions: none left as raw code, none
with a note or an error), every chart drew (SVG or canvas) and fits its output area, no request
left the machine and the console stayed clean (no error at all). In a chapter with live panels it
moves every slider and drop-down of each panel, checks that the chart was redrawn and changed, and
that each slider announces the value its readout shows (not log₁₀ of it). The redraw times (key
press → new SVG) are printed, not asserted: the machine is shared. The Markdown pages open
rendered. These tests never skip: no browser or no JupyterLab is a failure.
"""

from __future__ import annotations

import json
import re
import time

import pytest

import lab_session

from bookbuild.toc import toc_notebooks

NOTEBOOKS = lab_session.live_notebooks()
CHAPTERS = toc_notebooks()


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    import build_book

    # Whole chapters (every glued number of every chapter), fast mode, the sweeps the fast build cached.
    server = lab_session.LabServer(tmp_path_factory.mktemp("lab"), fast=True, cache=build_book.BUILD / "cache" / "fast",
                                   stop_after_live=False)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=lab_session.chromium_path(), args=lab_session.CHROMIUM_ARGS)
        yield b
        b.close()


def test_there_are_live_panels_to_test():
    assert NOTEBOOKS, "no TOC notebook calls book.widgets.live(: the JupyterLab test would test nothing"


def test_the_edition_turns_glue_into_inline_expressions_and_citations_into_text(tmp_path):
    import lab

    lab.write_edition(tmp_path, fast=True)
    for path in sorted((tmp_path / "book").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "{glue:text}`" not in markdown and "{cite}`" not in markdown, path.name
        code = [c for c in cells if c["cell_type"] == "code"]
        assert lab.PREAMBLE_LINE in "".join(code[0]["source"]), path.name
        params = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
        assert not params or "FAST = True" in "".join(params[0]["source"]), path.name
    cites = lab.bibliography(lab.ROOT / "book" / "references.bib")
    page = (tmp_path / "book" / "bibliography.md").read_text()  # a list, not a directive JupyterLab cannot run
    assert "{bibliography}" not in page and page.count("\n- ") == len(cites)
    assert "Zonghao Huang, Rui Hu, Yuanxiong Guo, Eric Chan-Tin and Yanmin Gong (2019)" in page
    assert lab.lab_markdown("see {cite}`huang2019` and {glue:text}`eps:.2f`.", cites) == (
        "see [Huang et al., 2019] and {eval}`glued(\"eps\", \".2f\")`.")
    assert lab.lab_markdown("{cite}`canonne2020,balle2020`", cites) == "[Balle et al., 2020, Canonne et al., 2020]"


def test_glued_formats_like_the_sites_glue_role():
    from dpadmm_book import _book

    _book.GLUED.update({"h16_x": "0.123456", "h16_s": "'ring'", "h16_n": "40000"})
    assert repr(_book.glued("h16_x", ".2f")) == "0.12" and repr(_book.glued("h16_s")) == "ring"
    assert repr(_book.glued("h16_n", ",d")) == "40,000"
    assert "run all cells once more" in repr(_book.glued("h16_missing"))


def test_a_number_glued_below_its_text_shows_the_value_make_book_computed(tmp_path):
    import lab
    from dpadmm_book import _book

    chapter = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["ε₀ = {glue:text}`h16_below:.3f` per release"]},
        {"cell_type": "code", "metadata": {}, "source": ["glue('h16_below', 0.4567, display=False)"], "outputs": []},
    ]}
    executed = json.loads(json.dumps(chapter))
    executed["cells"].insert(0, {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]},
                                 "source": ["FAST = False"], "outputs": []})
    executed["cells"][2]["outputs"] = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": "h16_below"}},
                                        "data": {"text/plain": "0.4567"}}]
    path = tmp_path / "ran.ipynb"
    path.write_text(json.dumps(executed))
    site = lab.site_glue(chapter, path)
    assert site == {"h16_below": "0.4567"}
    edition = lab.lab_notebook(chapter, {}, site=site)
    text = "".join(edition["cells"][0]["source"])
    assert text == 'ε₀ = {eval}`glued("h16_below", ".3f", site="0.4567")` per release'
    assert repr(_book.glued("h16_below", ".3f", site="0.4567")) == "0.457"  # not in the kernel yet
    _book.GLUED["h16_below"] = "0.5"
    assert repr(_book.glued("h16_below", ".3f", site="0.4567")) == "0.500"  # the kernel's own value wins
    changed = json.loads(json.dumps(chapter))
    changed["cells"][1]["source"] = ["glue('h16_below', 0.9, display=False)"]
    assert lab.site_glue(changed, path) == {}  # the chapter changed since make book: no stale numbers
    assert lab.site_glue(chapter, tmp_path / "missing.ipynb") == {}


def test_jupyterlab_starts_as_root_and_on_localhost_only():
    import lab

    cmd = lab.lab_command(lab.EDITION / "book", port=1, token="t", open_browser=False)
    assert "--ServerApp.ip=127.0.0.1" in cmd and "--no-browser" in cmd
    import os

    assert ("--allow-root" in cmd) == (os.geteuid() == 0)


def test_make_lab_reads_the_sweeps_make_book_cached(monkeypatch, tmp_path):
    import lab

    started = {}
    monkeypatch.setattr(lab, "EDITION", tmp_path)
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, cwd, env: started.update(env=env) or 0)
    monkeypatch.delenv("DPADMM_CACHE", raising=False)
    assert lab.main([]) == 0
    assert started["env"]["DPADMM_CACHE"] == str(lab.ROOT / "_build" / "cache" / "full")
    assert "FAST = False" in (tmp_path / "book" / "admm.ipynb").read_text()  # the full edition, as cached
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "mine"))
    lab.main([])
    assert started["env"]["DPADMM_CACHE"] == str(tmp_path / "mine")


def test_the_edition_opens_on_the_title_and_settles_what_jupyterlab_would_change(tmp_path):
    import lab

    lab.write_edition(tmp_path, fast=True)
    kernel = lab.kernel_metadata()
    for path in sorted((tmp_path / "book").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        first = "".join(nb["cells"][0]["source"])
        assert nb["cells"][0]["cell_type"] == "markdown" and first.startswith("# "), path.name
        preamble = next(c for c in nb["cells"] if c["cell_type"] == "code")
        assert preamble["metadata"]["jupyter"]["source_hidden"] is True, path.name
        assert nb["metadata"]["kernelspec"] == kernel["kernelspec"] and nb["metadata"]["language_info"] == kernel["language_info"]
    assert kernel["kernelspec"]["display_name"] and kernel["language_info"]["name"] == "python"
    # References: another chapter's block a link to it, the same chapter's its name as text.
    labels = {"a-thm": ("a.ipynb", "theorem “T” in “A”"), "b_ex_2": ("b.ipynb", "exercise 2 in “B”")}
    text = "by {prf:ref}`a-thm`, see {ref}`b_ex_2` and {ref}`that one <b_ex_2>`; {ref}`eq-unknown`"
    assert lab.lab_markdown(text, {}, labels, here="b.ipynb") == (
        "by [theorem “T” in “A”](a.ipynb), see exercise 2 and that one; {ref}`eq-unknown`")
    assert lab.lab_markdown("{doc}`/book/a` and {doc}`the chapter </book/a>`", {}, docs={"book/a": ("a.ipynb", "A")}) == (
        "[A](a.ipynb) and [the chapter](a.ipynb)")
    pages = {p.name: p.read_text() for p in (tmp_path / "book").glob("*.md")}
    for name, text in pages.items():  # the pages open rendered: no role or directive JupyterLab cannot run
        assert not re.search(r"\{(cite|doc|ref|prf:ref|glue)[^}]*\}`|```\{(include|bibliography)\}", text), name
    settings = json.loads((tmp_path / "app-settings" / "overrides.json").read_text()) if (tmp_path / "app-settings").exists() else {}
    assert not settings  # written by lab_environment, not write_edition
    lab.lab_environment(tmp_path)
    settings = json.loads((tmp_path / "app-settings" / "overrides.json").read_text())
    assert settings["@jupyterlab/notebook-extension:tracker"]["windowingMode"] == "none"
    assert settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["markdown"] == "Markdown Preview"
    config = json.loads((tmp_path / "config" / "jupyter_lab_config.json").read_text())
    assert config["LabApp"]["app_settings_dir"] == str(tmp_path / "app-settings")


def _glued_cells(edition: dict) -> dict[int, int]:
    """Markdown cell index → number of glued numbers (inline expressions) in it."""
    return {i: n for i, c in enumerate(edition["cells"]) if c["cell_type"] == "markdown"
            and (n := "".join(c["source"]).count("{eval}`glued("))}


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.name)
def test_chapter_in_jupyterlab(lab_server, browser, notebook, capsys):
    started = time.monotonic()
    page = lab_session.NotebookPage(lab_server, browser, notebook.name)
    edition = json.loads((lab_server.workdir / "book" / notebook.name).read_text())
    try:
        opened = page.opened()
        page.screenshot("opened")
        title = "".join(edition["cells"][0]["source"]).splitlines()[0].lstrip("# ").strip()
        assert opened["first"] == "markdown" and opened["title"] == title and not opened["scrolled"], (
            f"{notebook.name}: opens on {opened} instead of its title {title!r}")
        assert 1 in opened["folded"], f"{notebook.name}: the setup cell is not folded: {opened}"
        assert not opened["dirty"], f"{notebook.name}: marked modified as soon as it opened"
        seconds = page.run_all(timeout=900)
        # ONE Run All: every glued number of the chapter shows its value.
        expected = _glued_cells(edition)
        glued = page.wait_glued(expected)
        page.screenshot("run-all")
        missing = [c for c in glued if not c["rendered"] or c["raw"] or c["note"] or c["error"]]
        shown = sum(c["expected"] - c["raw"] - c["note"] - c["error"] for c in glued if c["rendered"])
        assert not missing, (f"{notebook.name}: after one Run All {shown} of {sum(expected.values())} glued numbers show "
                             f"their value; not: {missing[:4]}")
        drawn = page.charts()
        assert all(drawn), f"{notebook.name}: charts that did not draw: {[i for i, d in enumerate(drawn) if not d]}"
        wide = [(round(w), round(room)) for w, room in page.chart_widths() if w > room + 1]
        assert not wide, f"{notebook.name}: charts wider than their output area (drawn, room in px): {wide}"
        redraws, sliders = [], []
        panels = page.panels()
        if notebook.name in {p.name for p in NOTEBOOKS}:
            assert panels.count() >= 1, f"{notebook.name}: no live panel on the page after Run All"
        for i in range(panels.count()):
            panel = panels.nth(i)
            panel.scroll_into_view_if_needed()
            assert panel.locator(".dpadmm-vega-lab svg, .dpadmm-vega-lab canvas").count(), (
                f"{notebook.name}: panel {i} shows no chart; it says {panel.locator('.widget-html').last.inner_text()!r}")
            n_sliders = panel.locator(".widget-slider:visible .noUi-handle").count()
            assert n_sliders >= 1, f"{notebook.name}: panel {i} has no slider"
            moved = [page.move_slider(panel, k) for k in range(n_sliders)]
            assert any(r.changed for r in moved), f"{notebook.name}: panel {i}: no slider changed the chart"
            # Each slider announces the value it shows (a log slider: ε = 4, not log₁₀ 4 = 0.60), by its name.
            page.page.wait_for_timeout(200)
            for slider in page.sliders(panel):
                sliders.append(slider)
                assert slider["valuetext"] == slider["readout"] and slider["name"] == slider["label"], (
                    f"{notebook.name}: panel {i}: slider {slider['label']!r} shows {slider['readout']!r} but announces "
                    f"{slider['valuetext']!r} (name {slider['name']!r})")
            n_selects = panel.locator(".widget-dropdown select:visible").count()
            picked = [page.choose(panel, k) for k in range(n_selects)]
            if not any(r.changed for r in picked) and page.open_advanced(panel):  # a drop-down that acts here
                picked += [page.choose(panel, k) for k in range(n_selects, panel.locator(".widget-dropdown select:visible").count())]
            if panel.locator(".widget-dropdown select").count():
                assert any(r.changed for r in picked), f"{notebook.name}: panel {i}: no drop-down changed the chart"
            redraws += moved + picked
        wide = [(round(w), round(room)) for w, room in page.chart_widths() if w > room + 1]
        assert not wide, f"{notebook.name}: charts wider than their output area after the moves (drawn, room): {wide}"
        assert not page.offhost, f"{notebook.name}: requests to other hosts: {page.offhost[:5]}"
        raw = page.page.evaluate("() => [...document.querySelectorAll('.dpadmm-vega-lab svg .role-axis-title text, "
                                 ".dpadmm-vega-lab svg .role-legend-title text, .dpadmm-vega-lab svg .role-title-text text')]"
                                 ".map(t => t.textContent).filter(t => /[_^$\\\\]/.test(t))")
        assert not raw, f"{notebook.name}: chart titles show raw TeX (use book.viz.typeset): {raw[:5]}"
        assert not page.errors, f"{notebook.name}: console errors: {page.errors[:5]}"
        with capsys.disabled():
            print(f"\n[lab] {notebook.name}: Run All {seconds:.0f} s, {shown} of {sum(expected.values())} glued numbers "
                  f"shown, {len(drawn)} charts drawn, {len(page.errors)} console errors, "
                  f"{time.monotonic() - started:.0f} s in all; sliders announce "
                  + ", ".join(f"{s['name']} = {s['valuetext']}" for s in sliders))
            for r in redraws:
                compute = f"compute {r.compute_ms:.0f} ms, " if r.compute_ms is not None else ""
                print(f"[lab]   {r.control:<34} {r.ms:6.0f} ms  ({compute}page {r.kind} {r.page_ms:.0f} ms)"
                      + ("" if r.changed else "  — chart unchanged (this control has no effect here)"))
    finally:
        page.close()
        lab_server.shutdown_kernels()


def test_markdown_pages_open_rendered(lab_server, browser):
    import lab

    entries = len(lab.bibliography(lab.ROOT / "book" / "references.bib"))
    shown = lab_session.open_page(lab_server, browser, "bibliography.md")
    assert shown["rendered"] and not shown["editor"], f"bibliography.md opens as {shown}"
    assert shown["h1"] == "Bibliography" and shown["items"] == entries, shown
    intro = lab_session.open_page(lab_server, browser, "intro.md")
    assert intro["rendered"] and intro["h1"], intro
    assert not shown["errors"] and not intro["errors"], shown["errors"] + intro["errors"]

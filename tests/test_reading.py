"""The book reads as one careful author wrote it (issue 35): what a reader sees, at 1280 x 800 and on a
390 x 844 phone, in Debian's Chromium over the built site (the fast build of the test session, or the site
``$DPADMM_SITE`` names: no second build).

* No page is wider than the phone's screen.
* No rendered text holds a word of :data:`INTERNAL_WORDS` (internal documents, the history of the book,
  build plumbing, variable names), and no code cell on a page shows build plumbing (a ``glue(...)`` call, an
  ``assert`` that guards the build): such cells carry the ``remove-cell`` tag.
* The landing page names Run live and every edition.
* No cell of the verdict table draws over its neighbour on the phone.
* Chart text is at least 11 px on a desktop and 10 px on a phone.
* Each live panel's first draw (its controls' starting values, run natively through ``dpadmm_book.live``,
  the same function the site's Run live calls) shows a private method better than the chapter's trivial model.
* No control without an effect: every live control changes the run, or the panel disables it and says why
  (on the site and in JupyterLab).
* No page shows a raw pandas table: every table is ``book.viz.table``'s (number formats, a caption, no row numbers).

The library pieces these pages rely on are tested here too: chart descriptions that read the axis titles,
``book.viz.table``, and the panels' short summary lines.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from test_site import PHONE, VIEWPORT, PageVisit, _CHART_TEXT_JS, _pages, _wait_for_charts

#: Words no reader's page may show (case-sensitive where a capital marks the internal document), with why.
INTERNAL_WORDS = {
    r"\bSPEC\b": "an internal document",
    r"(?i)\bfirst edition\b": "the history of the book",
    r"(?i)\buntil the accountant had\b": "the history of the book",
    r"(?i)\bthe book's first\b": "the history of the book",
    r"(?i)\bin an earlier version\b": "the history of the book",
    r"\bgap_lo\b|\bgap_hi\b|\baccuracy_lo\b|\baccuracy_hi\b": "a variable name",
    r"\bepsilon_spent\b|\bn_claim_seeds\b|\bverdict_\w+": "a variable name",
    r"\bassert\b": "build plumbing",
    r"\bglue\(": "build plumbing",
    r"(?i)\belse the build stops\b": "build plumbing",
    r"benchmarks/redraw\.py|--full\b": "developer material",
    r"\bFAST = True\b|what the test suite runs": "developer material",
}

#: A code line that is build plumbing: a glue call, or an assert at the top of a cell.
PLUMBING_LINE = re.compile(r"^\s*(glue\(|assert\b)")

#: The prose of a page: its main text without code, math and chart internals.
_PROSE_JS = """() => {
    const root = (document.querySelector('main') || document.body).cloneNode(true);
    root.querySelectorAll('pre, code, script, style, .highlight, mjx-container, .MathJax, svg, .dpadmm-vega-spec')
        .forEach(e => e.remove());
    return root.innerText;
}"""

#: Every code cell a reader sees (its input), as text.
_CODE_CELLS_JS = """() => [...document.querySelectorAll('div.cell div.cell_input')]
    .filter(e => e.offsetParent !== null || e.closest('details'))
    .map(e => e.innerText)"""

#: The cells of the verdict table and its folds on this page: a cell whose text runs past its box (drawn
#: over its neighbour), or two cells of a row that overlap.
_VERDICT_OVERLAP_JS = """() => {
    const out = [];
    document.querySelectorAll('table.dpadmm-claims, table.dpadmm-claim-evidence').forEach((table, t) => {
        table.querySelectorAll(':scope > tbody > tr').forEach((row, r) => {
            const cells = [...row.children].filter(c => c.offsetParent !== null);
            cells.forEach((c, i) => {
                if (c.scrollWidth > c.clientWidth + 2)
                    out.push(`table ${t} row ${r} cell ${i}: text ${c.scrollWidth} px in a ${c.clientWidth} px cell: `
                             + c.innerText.slice(0, 40));
                const a = c.getBoundingClientRect();
                cells.slice(i + 1).forEach((d, j) => {
                    const b = d.getBoundingClientRect();
                    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
                    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                    if (w > 1 && h > 1) out.push(`table ${t} row ${r}: cells ${i} and ${i + j + 1} overlap`);
                });
            });
        });
    });
    return out;
}"""


# ----------------------------------------------------------------------------------------------- the site
@pytest.fixture(scope="module")
def reading(site_dir, server, browser):
    """Every page at 1280 x 800 and at 390 x 844, opened once each (charts drawn)."""
    opened = {}
    for size, viewport in (("desktop", VIEWPORT), ("phone", PHONE)):
        for rel in _pages(site_dir):
            visit = PageVisit(browser, f"{server}/{rel}", viewport)
            try:
                _wait_for_charts(visit.page)
            except Exception as exc:  # a chart that does not draw is test_site's failure; here it is reported
                visit.errors.append(f"charts did not all draw: {exc.__class__.__name__}")
            opened[size, rel] = visit
    yield opened
    for visit in opened.values():
        visit.close()


def _check(reading, check, sizes=("desktop", "phone")) -> None:
    problems = []
    for (size, rel), visit in reading.items():
        if size in sizes:
            problems += [f"{rel} ({size}): {p}" for p in check(rel, visit.page)]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:80])


def test_no_page_is_wider_than_the_phone(reading):
    def check(rel, page):
        width = page.evaluate("() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
        if width <= PHONE["width"] + 1:
            return []
        wide = page.evaluate("""(room) => [...document.querySelectorAll('main *')].filter(e => {
            const r = e.getBoundingClientRect(); return r.right > room + 1 && r.width > 0
                && !e.closest('.dpadmm-math-scroll, .dpadmm-vega-scroll, .highlight, .output, mjx-container, table');
        }).slice(0, 3).map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.') + ': '
                           + (e.innerText || '').slice(0, 50))""", PHONE["width"])
        return [f"{width} px wide: {wide}"]

    _check(reading, check, sizes=("phone",))


def test_no_rendered_text_holds_an_internal_word(reading):
    def check(rel, page):
        text = page.evaluate(_PROSE_JS)
        out = []
        for pattern, why in INTERNAL_WORDS.items():
            for m in re.finditer(pattern, text):
                out.append(f"{why}: …{text[max(0, m.start() - 40):m.end() + 40]!r}…".replace("\\n", " "))
        # a chart's name and description for screen readers read the axis titles, not column names
        labels = page.eval_on_selector_all(".dpadmm-vega[aria-label], .dpadmm-vega-description",
                                           "els => els.map(e => (e.getAttribute('aria-label') || '') + ' ' + e.textContent)")
        for label in labels:
            for pattern, why in INTERNAL_WORDS.items():
                if why == "a variable name" and re.search(pattern, label):
                    out.append(f"a chart description names {why}: {label[:100]!r}")
        return out

    _check(reading, check, sizes=("desktop",))


def test_no_code_cell_shows_build_plumbing(reading):
    def check(rel, page):
        out = []
        for cell in page.evaluate(_CODE_CELLS_JS):
            lines = [line for line in cell.splitlines() if PLUMBING_LINE.match(line)]
            if lines:
                out.append(f"a code cell shows {lines[0].strip()[:70]!r} (tag the cell remove-cell, or move it out)")
        return out

    _check(reading, check, sizes=("desktop",))


def test_the_landing_page_names_run_live_and_every_edition(reading):
    visit = reading["desktop", "book/intro.html"]
    text = visit.page.evaluate(_PROSE_JS)
    for words in ("Run live", "JupyterLab", "student edition", "sliders"):
        assert words in text, f"the landing page does not mention {words!r}"
    assert "the panel itself needs a kernel" not in text  # what the site contradicts: Run live needs none


def test_no_verdict_cell_is_drawn_over_its_neighbour_on_the_phone(reading):
    def check(rel, page):
        page.evaluate("() => document.querySelectorAll('table.dpadmm-claims details').forEach(d => d.open = true)")
        page.wait_for_timeout(100)
        return page.evaluate(_VERDICT_OVERLAP_JS)

    _check(reading, check, sizes=("phone",))


#: Tables pandas printed itself (``class="dataframe"``) or styled without ``book.viz.table`` (a Styler's ``id="T_…"``
#: without its class), and cells of a book table that read as Python's booleans.
_RAW_TABLES_JS = """() => {
    const out = [];
    const text = (t) => (t.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 60);
    document.querySelectorAll('main table.dataframe, main table[id^="T_"]:not(.dpadmm-table)')
        .forEach(t => out.push('a raw pandas table (show it with book.viz.table): ' + text(t)));
    document.querySelectorAll('main table.dpadmm-table').forEach(t => {
        if (!t.querySelector('caption')) out.push('a table without a caption: ' + text(t));
        const yesNo = [...t.querySelectorAll('td')].filter(td => /^(True|False)$/.test(td.innerText.trim()));
        if (yesNo.length) out.push(`a table with ${yesNo.length} cell(s) reading True/False: ` + text(t));
    });
    return out;
}"""


def test_no_page_shows_a_raw_pandas_table(reading):
    """Every table a chapter displays is ``book.viz.table``'s: numbers formatted, a caption, no row numbers, and words
    ("yes", "no", the outcome's name) where pandas would print True / False."""
    _check(reading, lambda rel, page: page.evaluate(_RAW_TABLES_JS), sizes=("desktop",))


@pytest.mark.parametrize("size, smallest", [("desktop", 11.0), ("phone", 10.0)])
def test_chart_text_is_readable(reading, size, smallest):
    def check(rel, page):
        # charts in folds (the verdict table's forest plots) are drawn when their fold opens: open them all
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        try:
            _wait_for_charts(page)
        except Exception as exc:
            return [f"charts did not all draw once their folds opened: {exc.__class__.__name__}"]
        return [f"chart {c['i']} ({c.get('width', 0):.0f} px): text {c['smallest']:.1f} px ({c['text']!r})"
                for c in page.evaluate(_CHART_TEXT_JS) if c["smallest"] < smallest - 0.05]

    _check(reading, check, sizes=(size,))


# ---------------------------------------------------------------------------------- the live panels' first draw
def _adult_majority_error() -> float:
    from dpadmm_lite import datasets

    y_test = datasets.load_adult()[3]
    return float(min(np.mean(y_test > 0), np.mean(y_test < 0)))


def _zero_model_gap(problem) -> float:
    """F(0) − F(x*) of a live panel's problem: the objective gap of the zero model, where every run starts."""
    return float(problem.objective(np.zeros(problem.d)) - problem.objective(problem.reference_optimum().x))


def _liu_zero_gap() -> float:
    from dpadmm_book.live import liu2022

    return _zero_model_gap(liu2022.liu2022_problem())


def _xu_zero_gap() -> float:
    from dpadmm_book.live import xu2020

    return _zero_model_gap(xu2020.xu2020_problem())


def _cyffers_zero_objective() -> float:
    """F_test(0), the zero model's test objective (book/cyffers2023.ipynb: F_ZERO, the chart's "zero model" line)."""
    from dpadmm_book.live import cyffers2023

    problem = cyffers2023.cyffers2023_problem("test")
    return float(problem.data_loss(np.zeros(problem.d), problem.X_test, problem.y_test))


#: Panels whose chapter names a trivial model (the majority class, the zero model): the rows' field (lower is
#: better), the series (field, value) of a private method, the trivial model's value, and the margin by which the
#: private method must end below it at the panel's starting values — in test-error points, or as a fraction of
#: the trivial value for an objective.
#:
#: * Cyffers et al.: DP-SGD ends below the zero model's test objective; private ADMM (federated, the options tuned at
#:   ε ≈ 1) ends above it, at every mode and ε of the panel — the chapter's finding (its users keep their noise).
#: * Liu et al.: DP-VRADMM's objective gap ends below the zero model's; its test accuracy stays at the majority
#:   class after S = 4 epochs at ν = 2 (the chapter explains why, next to the chart).
#: * Xu et al.: DP-ADMM's objective gap ends below the zero model's (the chapter's trivial model, F(0)).
#:
#: Panels with no trivial model: ``admm`` (consensus ADMM without noise: nothing private to compare), ``arena`` (every
#: algorithm at one ε; the chapter compares them with each other and the non-private optimum), and the accounting
#: panels ``privacy`` (two accountants' ε) and ``tuning`` (ε of a tuned result): they run no model.
FIRST_DRAW = {
    "zhang2017": ("test error", ("algorithm", "DVP"), _adult_majority_error, 0.01, "points"),
    "huang2019": ("test error", ("method", "DP-ADMM"), _adult_majority_error, 0.01, "points"),
    "cyffers2023": ("test_objective", ("run", "DP-SGD"), _cyffers_zero_objective, 0.1, "fraction"),
    "liu2022": ("objective_gap", ("algorithm", "DP-VRADMM"), _liu_zero_gap, 0.1, "fraction"),
    "xu2020": ("objective_gap", ("algorithm", "DP-ADMM"), _xu_zero_gap, 0.1, "fraction"),
}
#: The panels FIRST_DRAW leaves out, each for the reason given above it.
NO_TRIVIAL_MODEL = {"admm", "arena", "privacy", "tuning"}


def test_every_live_panel_is_in_first_draw_or_has_no_trivial_model():
    from dpadmm_book import live

    assert set(live.PANELS) == set(FIRST_DRAW) | NO_TRIVIAL_MODEL and not set(FIRST_DRAW) & NO_TRIVIAL_MODEL


@pytest.mark.parametrize("panel", sorted(FIRST_DRAW))
def test_each_live_panel_first_draw_beats_the_trivial_model(panel):
    from dpadmm_book import live

    field, (key, name), trivial, margin, unit = FIRST_DRAW[panel]
    start = {c["name"]: c["value"] for c in live.PANELS[panel]["controls"]}
    rows = live.run_panel(panel, start)["rows"]
    order = "iteration" if "iteration" in rows[0] else "round" if "round" in rows[0] else "passes"
    mine = sorted((r for r in rows if r.get(key) == name), key=lambda r: r[order])
    assert mine, f"{panel}: no rows of {name} at the panel's starting values {start}"
    final, level = mine[-1][field], trivial()
    room = margin if unit == "points" else margin * level
    assert final < level - room, (f"{panel}: the first draw shows {name} at {field} {final:.4g}, not better than "
                                  f"the trivial model's {level:.4g} by {room:.3g} ({start})")


# ------------------------------------------------------------------------------- no control without an effect
#: Row fields that only repeat a control's value (the chart's facets and tooltips), left out when comparing runs.
_ECHOES = {"topology", "run_epsilon", "mode", "clip", "regularizer"}


def _drawn(panel: str, values: dict) -> str:
    """What a run at ``values`` draws and says: its rows without the fields that echo a control, its summary."""
    from dpadmm_book import live

    result = live.run_panel(panel, values)
    names = {c["name"] for c in live.PANELS[panel]["controls"]}
    rows = [{k: v for k, v in row.items() if k not in _ECHOES | names} for row in result["rows"]]
    return repr((rows, result.get("test_accuracy"), result["summary"]))


def _idle_at(control: dict, values: dict) -> bool:
    idle = control.get("idle")
    return bool(idle) and all(values[k] in allowed for k, allowed in idle["when"].items())


@pytest.mark.parametrize("panel", ["admm", "cyffers2023", "huang2019", "liu2022", "privacy", "tuning", "xu2020",
                                   "zhang2017"])
def test_every_live_control_changes_the_run_unless_the_panel_disables_it(panel):
    """At the panel's start and at every option of each of its drop-downs, moving each slider to an end of its range
    changes what the panel draws or says — unless the control declares itself idle there (``idle``: the page then
    disables it and says why), and then it changes nothing. Runs are shortened to 20 iterations (the arena's field,
    minutes of runs, is left to its own tests)."""
    from dpadmm_book import live

    controls = live.PANELS[panel]["controls"]
    start = {c["name"]: c["value"] for c in controls}
    for name in ("iterations", "rounds"):
        if name in start:
            start[name] = min(start[name], 20)
    settings = [start] + [{**start, c["name"]: value} for c in controls if c["kind"] == "select"
                          for _, value in c["options"] if value != c["value"]]
    problems = []
    for values in settings:
        base = _drawn(panel, values)
        for c in controls:
            if c["kind"] == "select":
                continue
            moved = {**values, c["name"]: c["min"] if values[c["name"]] != c["min"] else c["max"]}
            same = _drawn(panel, moved) == base
            if same and not _idle_at(c, values):
                problems.append(f"{c['name']} → {moved[c['name']]} changes nothing at {values}: disable it there (idle)")
            if not same and _idle_at(c, values):
                problems.append(f"{c['name']} is declared idle at {values} but changes the run")
    assert not problems, "\n".join(problems)


def test_zhang_zhus_epsilon_has_no_effect_on_the_non_private_run_and_the_panel_says_so():
    from dpadmm_book import live

    epsilon = next(c for c in live.PANELS["zhang2017"]["controls"] if c["name"] == "epsilon")
    assert epsilon["idle"] == {"when": {"algorithm": ["non-private"]}, "why": "the non-private run adds no noise"}
    at = {**live.zhang2017.DEFAULTS, "iterations": 10, "algorithm": "non-private"}
    assert _drawn("zhang2017", at) == _drawn("zhang2017", {**at, "epsilon": 0.1})


def test_a_lab_control_without_an_effect_is_disabled_and_says_why():
    import dpadmm_book as book

    seen = []

    def compute(values):
        seen.append(dict(values))
        return "drawn"

    panel = book.widgets.live(compute, epsilon=1.0, delta=1e-5, advanced={"algorithm": ["DVP", "non-private"]},
                            idle={"epsilon": lambda v: "the non-private run adds no noise"
                                  if v["algorithm"] == "non-private" else None})
    epsilon, delta, algorithm = (panel.controls[k] for k in ("epsilon", "delta", "algorithm"))
    assert not epsilon.disabled and not delta.disabled and panel.idle_note.value == ""
    algorithm.value = "non-private"
    panel.wait()
    assert epsilon.disabled and epsilon.slider.disabled and epsilon.toggle.disabled
    assert "ε has no effect: the non-private run adds no noise" in panel.idle_note.value
    algorithm.value = "DVP"
    panel.wait()
    assert not epsilon.disabled and not epsilon.slider.disabled and panel.idle_note.value == ""
    epsilon.toggle.value = True  # ε = ∞: no noise, so δ has none to set
    panel.wait()
    assert delta.disabled and "δ has no effect: ε = ∞ adds no noise" in panel.idle_note.value
    assert epsilon.slider.disabled and not epsilon.toggle.disabled  # the toggle stays: the reader can turn it back
    epsilon.toggle.value = False
    panel.wait()
    assert not delta.disabled and not epsilon.slider.disabled
    with pytest.raises(ValueError, match="idle names a control"):
        book.widgets.live(compute, epsilon=1.0, idle={"rho": lambda v: None})
    with pytest.raises(ValueError, match="callable"):
        book.widgets.live(compute, epsilon=1.0, idle={"epsilon": "always"})


def test_run_live_disables_a_control_while_it_has_no_effect(server, browser):
    """Zhang & Zhu's panel: with the non-private algorithm chosen, the ε slider is disabled and its readout says
    why; back on DVP it moves again."""
    from browser_visit import Visit

    visit = Visit(browser)
    page = visit.page
    try:
        page.goto(f"{server}/book/zhang2017.html", wait_until="load")
        root = ".dpadmm-live[data-live-panel='zhang2017']"
        page.locator(f"{root} button.dpadmm-live-button").click()
        page.wait_for_selector(f"{root}[data-live-ready]", timeout=150_000)
        epsilon = page.locator(f"{root} #dpadmm-live-epsilon")
        assert epsilon.is_enabled()
        page.locator(f"{root} #dpadmm-live-algorithm").select_option("non-private")
        assert epsilon.is_disabled()
        readout = page.locator(f"{root} #dpadmm-live-epsilon + output").inner_text()
        assert readout == "no effect: the non-private run adds no noise", readout
        page.locator(f"{root} #dpadmm-live-algorithm").select_option("DVP")
        assert epsilon.is_enabled()
        assert page.locator(f"{root} #dpadmm-live-epsilon + output").inner_text() == "4"
        assert not visit.offhost and not visit.errors, (visit.offhost, visit.errors)
    finally:
        visit.close()


def test_the_zhang_zhu_panel_opens_on_the_static_charts_network_and_reaches_its_iterations():
    from dpadmm_book import live

    controls = {c["name"]: c for c in live.PANELS["zhang2017"]["controls"]}
    assert controls["topology_name"]["value"] == "ring" and controls["epsilon"]["value"] == 4.0
    assert controls["iterations"]["max"] >= 100 and controls["n_agents"]["max"] >= 20  # the static chart's T and N
    result = live.zhang2017_network(**live.zhang2017.DEFAULTS)
    assert result["title"] == "Adult, 4 nodes, ρ = 0.1, δ = 1e-05"
    admm = {c["name"]: c["value"] for c in live.PANELS["admm"]["controls"]}
    assert admm == {"rho": 0.01, "topology_name": "ring", "n_agents": 10, "iterations": 100}


@pytest.mark.parametrize("panel, values", [("zhang2017", {}), ("admm", {}), ("huang2019", {}), ("xu2020", {}),
                                           ("liu2022", {}), ("cyffers2023", {})])
def test_live_summary_lines_are_short_and_true(panel, values):
    """No run time in the line (a cached run repeated the first run's time under "computed in 1 ms"), the
    privacy spent, and short enough to read at a glance."""
    from dpadmm_book import live

    start = {c["name"]: c["value"] for c in live.PANELS[panel]["controls"]} | values
    line = live.run_panel(panel, start)["summary"]
    assert not re.search(r"\d+ ms\b", line), line
    assert "ε=" in line and len(line) <= 160, line
    counted = {"liu2022": " passes:", "cyffers2023": f"{start.get('rounds')} rounds:"}  # what the chart's axis counts
    assert counted.get(panel, f"{start.get('iterations')} iterations:") in line, line


def test_a_live_summary_line_names_privacy_that_is_not_covered():
    from dpadmm_book.live._common import run_line
    from dpadmm_lite.privacy import NO_PRIVACY, PrivacyGuarantee

    class Trace:  # the fields run_line reads
        algorithm, iterations, test_accuracy, objective_gap = "dvp_graph", 5, np.array([0.7, 0.8]), np.array([0.1])
        privacy = NO_PRIVACY

    assert run_line(Trace()) .endswith("ε=∞: no noise, not private")
    Trace.privacy = PrivacyGuarantee(math.inf, 1e-5, "accountant", covered=False, reason="the solver stopped early")
    assert "not covered: the solver stopped early" in run_line(Trace(), name="DVP")
    Trace.privacy = PrivacyGuarantee(3.9991, 1e-5, "accountant")
    assert run_line(Trace(), name="DVP", count=2, unit="passes") == "DVP, 2 passes: test accuracy 0.800; ε=4, δ=1e-05 end to end"


# ------------------------------------------------------------------------------------------ the library pieces
def test_a_charts_description_reads_its_axis_titles_not_its_column_names():
    import dpadmm_book as book
    from dpadmm_book._book import chart_description, chart_name

    frame = pd.DataFrame({"epsilon": [0.1, 1.0] * 2, "objective_gap": [1.0, 0.1, 2.0, 0.2],
                          "gap_lo": [0.9, 0.09, 1.8, 0.18], "gap_hi": [1.1, 0.11, 2.2, 0.22], "ν": ["0", "0", "2", "2"]})
    spec = book.viz.sweep_chart(frame, x="epsilon", y="objective_gap", band=("gap_lo", "gap_hi"), color="ν", log_x=True,
                              log_y=True, titles={"objective_gap": "objective gap", "epsilon": "privacy budget ε"}).to_dict()
    spec.pop("title", None)
    for text in (chart_description(spec), chart_name(spec)):
        assert "objective gap (log scale) against privacy budget ε (log scale)" in text, text
        assert "gap_lo" not in text and "objective_gap" not in text, text


def test_the_table_helper_formats_spaces_and_captions():
    import dpadmm_book as book

    frame = pd.DataFrame({"topology": ["ring", "complete"], "λ₂": [0.0979, 20.0], "runs": [3000, 12],
                          "error": [0.13771, np.nan]})
    html = book.viz.table(frame, caption="Two networks", formats={"λ₂": "{:.3f}"}).to_html()
    assert 'class="dpadmm-table"' in html and "<caption>Two networks</caption>" in html
    for shown in (">0.098<", ">20.000<", ">3,000<", ">0.1377<", ">—<", ">ring<"):
        assert shown in html, shown
    assert html.count("dpadmm-num") == 6  # the numbers, not the names
    assert "row_heading" not in html  # no row numbers
    with pytest.raises(ValueError, match="formats"):
        book.viz.table(frame, formats={"missing": "{:g}"})
    with pytest.raises(ValueError, match="digits"):
        book.viz.table(frame, digits=0)
    with pytest.raises(TypeError, match="frame"):
        book.viz.table(frame.to_dict())


def test_a_pivots_column_name_heads_no_column_and_comparisons_read_as_words():
    import dpadmm_book as book

    wide = pd.DataFrame({"ε": [0.1, 1.0, 0.1, 1.0], "method": ["A", "A", "B", "B"], "error": [0.2, 0.1, 0.3, 0.2]})
    html = book.viz.table(wide.pivot(index="method", columns="ε", values="error").reset_index(), caption="c").to_html()
    assert ">ε<" not in html and html.count("<th ") == 3, html  # method, 0.1, 1: no header cell for the name "ε"
    assert ">0.1<" in html and ">1<" in html, html  # numbers heading columns read as numbers
    comparisons, _ = book.claims.evaluate({"a": [1.0, 2.0, 3.0], "b": [2.0, 3.0, 4.5]}, {"a below b": ("a", "<", "b")},
                                        trivial={"a": 10.0, "b": 10.0}, better="lower")
    html = book.claims.comparison_table(comparisons, caption="A against B").to_html()
    assert "<caption>A against B</caption>" in html and ">a below b<" in html and ">holds<" in html
    assert ">no<" in html and "True" not in html and "False" not in html
    with pytest.raises(ValueError, match="comparisons"):
        book.claims.comparison_table({}, caption="nothing")


def test_the_chart_theme_writes_text_of_at_least_12_px():
    import dpadmm_book as book

    book.viz.use_book_theme()
    import altair as alt

    config = alt.theme.get()()["config"]
    sizes = [config["axis"]["labelFontSize"], config["axis"]["titleFontSize"], config["legend"]["labelFontSize"],
             config["legend"]["titleFontSize"], config["header"]["labelFontSize"], config["text"]["fontSize"]]
    assert min(sizes) >= 12, sizes


# ------------------------------------------------------------------------------------------------- Run live
def test_run_live_moves_focus_into_the_panel_and_shows_loading_progress(server, browser):
    """Pressed from the keyboard: while loading, the status says how many MB of the download are in; once
    ready, the button is gone, focus is on the panel's first control (not the page body), and no text
    points at "the button below"."""
    from browser_visit import Visit

    visit = Visit(browser)
    page = visit.page
    try:
        page.goto(f"{server}/book/admm.html", wait_until="load")
        panel = page.locator(".dpadmm-live[data-live-panel='admm']")
        page.evaluate("""() => { window.__statuses = [];
            const status = document.querySelector('.dpadmm-live-status');
            new MutationObserver(() => window.__statuses.push(status.textContent))
                .observe(status, {childList: true, characterData: true, subtree: true}); }""")
        panel.locator("button.dpadmm-live-button").focus()
        page.keyboard.press("Enter")
        page.wait_for_selector(".dpadmm-live[data-live-ready]", timeout=150_000)
        statuses = page.evaluate("() => window.__statuses")
        assert any(re.search(r"\d+\.\d MB of \d+\.\d MB", s) for s in statuses), statuses
        assert not panel.locator("button.dpadmm-live-button").is_visible()
        focused = page.evaluate("() => [document.activeElement.id, !!document.activeElement.closest('.dpadmm-live')]")
        assert focused == ["dpadmm-live-rho", True], focused
        assert "below" not in panel.locator(".dpadmm-live-intro").inner_text()
        summary = panel.locator(".dpadmm-live-summary").inner_text()
        assert "100 iterations" in summary and "computed in" in summary and summary.count(" ms") == 1, summary
        assert not visit.offhost and not visit.errors, (visit.offhost, visit.errors)
    finally:
        visit.close()

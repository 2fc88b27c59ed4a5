"""The published site, opened in a real headless Chromium (Debian's package).

Every page is loaded from a localhost server. Any request to another host is blocked and
counted (must be zero), the console must stay clean, every chart must have drawn an SVG or a
canvas, and math must be typeset by the site's own MathJax, with no MathJax error. What readers
trip over is checked too: a display equation wider than its column (at 1280 px), a literal `$`
or `NaN` in the rendered text, a paper cited with two different years. Charts are checked for
what they show: no NaN and no empty dataset in any Vega view, no plot that draws nothing, no log
axis whose domain reaches zero, no mark drawn at a NaN position, axis titles without raw TeX,
legend swatches as strong as the lines they name; and every slider and
drop-down of every page is moved through all its values, each of which it must reach (no float
step overshooting the last value) while its chart changes. Slider readouts show values.

Every reader, every screen (issue 25): each page is opened at 1280 x 800 and on a 390 x 844
phone. On the phone no inline formula is cut off, a wide display equation scrolls in its own box
with a cue, and chart text is at least 8 px. No page loads more than 3 MB, Vega only where there
is a chart. Every chart has a name and a description, formulas are not Tab stops, each chart
control has a name of its own and announces the value it shows, and axe-core (tests/node)
finds no serious or critical violation on any page.

The site is the fast build of the test session, or the one ``$DPADMM_SITE`` names (``make
check-book`` runs these tests on the full-mode book in ``_build/html``). These tests never skip:
no browser or no site is a failure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError

import lab_session

CHROMIUM_ARGS = lab_session.CHROMIUM_ARGS
#: A desktop reader (the issue's "1280 px page"): the equation and chart checks use it.
VIEWPORT = {"width": 1280, "height": 800}
#: A phone (390 x 844 CSS px, touch, and the page's meta viewport honoured as a phone does).
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def site(site_dir) -> Path:
    return site_dir


MATHJAX_DONE = "() => window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => true) : true"


class PageVisit:
    """One page opened with off-host requests blocked and console errors collected."""

    def __init__(self, browser, url: str, viewport: dict = VIEWPORT):
        self.offhost: list[str] = []
        self.errors: list[str] = []
        #: bytes of every response the page received (uncompressed: the test server sends files as they are)
        self.received: dict[str, int] = {}
        phone = viewport["width"] < 600
        self.context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfinished", self._finished)
        self.page.goto(url, wait_until="load")
        # MathJax typesets after load; wait for it, so its font requests are checked too. A page
        # that redirects (index.html) destroys the first context: wait for the next page.
        for _ in range(3):
            try:
                self.page.evaluate(MATHJAX_DONE)
                break
            except PlaywrightError as exc:
                if "context was destroyed" not in str(exc):
                    raise
                self.page.wait_for_load_state("load")

    def _route(self, route):
        lab_session.route_on_site(route, self.offhost)

    def _finished(self, request):
        self.received[request.url] = request.sizes()["responseBodySize"]

    def close(self):
        self.context.close()


def _pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if "_static" not in p.parts and "_sources" not in p.parts
                  and p.relative_to(site).parts[0] != "lite")  # the JupyterLite app (tests/test_lite.py)


def _wait_for_charts(page) -> int:
    count = page.locator(".dpadmm-vega").count()
    if count:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.dpadmm-vega')].every(d => d.dataset.drawn === 'done'"
            " || d.dataset.drawn === 'failed')", timeout=60_000)
    return count


def _open_every_page(site, server, browser, viewport) -> dict[str, PageVisit]:
    opened = {}
    for rel in _pages(site):
        visit = PageVisit(browser, f"{server}/{rel}", viewport)
        try:
            _wait_for_charts(visit.page)
        except PlaywrightError as exc:
            visit.errors.append(f"charts did not all draw: {exc.__class__.__name__}")
        visit.page.wait_for_timeout(300)  # late console errors (a missing resource) still count
        opened[rel] = visit
    return opened


@pytest.fixture(scope="module")
def visits(site, server, browser):
    """Every page of the site at 1280 x 800, opened once (charts drawn, math typeset), for the checks below."""
    opened = _open_every_page(site, server, browser, VIEWPORT)
    yield opened
    for visit in opened.values():
        visit.close()


@pytest.fixture(scope="module")
def phone_visits(site, server, browser):
    """Every page of the site on a 390 x 844 phone."""
    opened = _open_every_page(site, server, browser, PHONE)
    yield opened
    for visit in opened.values():
        visit.close()


@pytest.fixture(scope="module", params=["desktop", "phone"])
def both_visits(request):
    """The desktop and the phone visits, one after the other."""
    return request.getfixturevalue("visits" if request.param == "desktop" else "phone_visits")


def _each_page(visits, check) -> None:
    """Run ``check(rel, page) -> list of problems`` on every page; one failure lists them all."""
    problems = []
    for rel, visit in visits.items():
        problems += [f"{rel}: {p}" for p in check(rel, visit.page)]
    assert not problems, "\n".join(problems[:60])


def test_every_page_loads_offline_with_clean_console_and_drawn_charts(visits):
    assert len(visits) >= 3, f"expected the book's pages, found {sorted(visits)}"
    charts, problems = 0, []
    for rel, visit in visits.items():
        page = visit.page
        count = page.locator(".dpadmm-vega").count()
        charts += count
        undrawn = page.evaluate("() => [...document.querySelectorAll('.dpadmm-vega')]"
                                ".filter(d => !d.querySelector('svg, canvas')).length")
        if undrawn:
            problems.append(f"{rel}: {undrawn} of {count} chart(s) drew no SVG or canvas")
        if visit.offhost:
            problems.append(f"{rel}: {len(visit.offhost)} request(s) to other hosts: {visit.offhost[:5]}")
        if visit.errors:
            problems.append(f"{rel}: console errors: {visit.errors[:5]}")
    assert not problems, "\n".join(problems)
    assert charts >= 1, "the book has no chart at all"


def test_math_is_typeset_by_the_sites_own_mathjax_without_errors(visits):
    intro = visits.get("book/intro.html")
    assert intro is not None, sorted(visits)
    intro.page.wait_for_selector("mjx-container", timeout=20_000)
    scripts = intro.page.eval_on_selector_all("script[src]", "els => els.map(e => e.src)")
    assert any("vendor/mathjax" in s for s in scripts), scripts

    def check(rel, page):
        errors = page.evaluate(
            "() => [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]"
            ".map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 120))")
        return [f"MathJax error: {e}" for e in errors]

    _each_page(visits, check)


def test_no_display_equation_is_wider_than_its_column(visits):
    """At 1280 px, a display equation that needs a scroll bar hides its end (break it into
    ``aligned`` lines)."""

    def check(rel, page):
        wide = page.evaluate("""() => [...document.querySelectorAll('mjx-container[display="true"]')].map(c => {
            const math = c.querySelector('mjx-math');
            const column = c.closest('.math, .MathJax_Display, p, div, li, td') || c.parentElement;
            const width = math ? math.getBoundingClientRect().width : 0;
            return {width, column: column.getBoundingClientRect().width, text: (c.getAttribute('aria-label')
                    || c.textContent || '').slice(0, 80)};
        }).filter(e => e.width > e.column + 1)""")
        return [f"display equation {w['width']:.0f} px wide in a {w['column']:.0f} px column: {w['text']!r}" for w in wide]

    _each_page(visits, check)


def test_every_chart_fits_its_column_at_a_readable_size(visits):
    """At 1280 px no chart runs past the text column (the theme cuts it off there), and none is
    shrunk below 80 % of its size to fit (side-by-side panels that wide should be stacked)."""

    def check(rel, page):
        out = page.evaluate("""() => { const column = document.querySelector('article.bd-article') || document.querySelector('main');
            const right = column.getBoundingClientRect().right;
            return [...document.querySelectorAll('.dpadmm-vega svg')].map((svg, i) => {
                const box = svg.getBoundingClientRect(), size = svg.width.baseVal.value;
                return {i, over: box.right - right, scale: size ? box.width / size : 1, size};
            }).filter(c => c.over > 1 || c.scale < 0.8); }""")
        return [f"chart {c['i']} ({c['size']:.0f} px): " + (f"runs {c['over']:.0f} px past the column" if c["over"] > 1
                else f"shrunk to {100 * c['scale']:.0f} % to fit the column") for c in out]

    _each_page(visits, check)


_TEXT_JS = """() => {
    const root = (document.querySelector('main') || document.body).cloneNode(true);
    root.querySelectorAll('pre, code, script, style, .highlight, mjx-container, .MathJax').forEach(e => e.remove());
    return root.innerText;
}"""


def test_no_literal_dollar_or_nan_in_rendered_text(visits):
    """A `$` outside code is TeX that was not typeset (e.g. inline math in a prf: title); a `NaN`
    is a number that went missing (a table cell, a glued value, a chart label)."""

    def check(rel, page):
        text = page.evaluate(_TEXT_JS)
        svg_text = page.evaluate("() => [...document.querySelectorAll('.dpadmm-vega svg text')].map(t => t.textContent).join(' | ')")
        problems = [f"literal $ in {text[max(0, m.start() - 40):m.end() + 40]!r}" for m in re.finditer(r"\$", text)]
        problems += [f"NaN in {t[max(0, m.start() - 40):m.end() + 40]!r}"
                     for t in (text, svg_text) for m in re.finditer(r"\bNaN\b", t)]
        return problems

    _each_page(visits, check)


def _bibliography_years(site: Path) -> dict[str, set[str]]:
    """First author's surname (and ``Surname and Other``) → year, from the book's BibTeX file."""
    import lab

    years: dict[str, set[str]] = {}
    for key, cited in lab.bibliography(lab.ROOT / "book" / "references.bib").items():
        who, year = cited.rsplit(" (", 1)
        years.setdefault(who, set()).add(year.rstrip(")"))
    return years


def test_each_paper_is_cited_with_one_year_everywhere(site, visits):
    """"Xu et al. 2020" in one chapter and "Xu et al. (2021)" in another is the same paper."""
    years = _bibliography_years(site)

    def check(rel, page):
        text = page.evaluate(_TEXT_JS)
        problems = []
        for who, year in years.items():
            names = [re.escape(who)] + ([re.escape(who.replace(" and ", " & "))] if " and " in who else [])
            for name in names:
                for m in re.finditer(rf"{name},?\s*[\(\[]?((?:19|20)\d\d)\b", text):
                    if m.group(1) not in year:
                        problems.append(f"{who} cited as {m.group(1)}, the bibliography says {sorted(year)}: {m.group(0)!r}")
        return problems

    _each_page(visits, check)


# ----------------------------------------------------------------------------- what charts show
#: Inspect one chart's Vega view: datasets (no NaN, none empty), log scales (domain > 0), marks
#: (no NaN position), axis and legend titles (no raw TeX). Returns a list of problems.
_AUDIT_JS = """(el) => {
    const view = el.__dpadmmView;
    if (!view) return ['no Vega view (the chart did not draw)'];
    const problems = [];
    const walk = (state, path) => {
        for (const [name, rows] of Object.entries(state.data || {})) {
            if (!Array.isArray(rows)) continue;
            // selection stores start empty; facet_domain_* are Vega-Lite's layout helpers; below the
            // top level, a per-series dataset may be empty (a series absent from this setting)
            const helper = name.endsWith('_store') || name.startsWith('facet_domain') || name === 'root';
            if (rows.length === 0 && !helper && path === '') problems.push(`dataset ${name} is empty`);
            const bad = rows.find(r => r && Object.values(r).some(v => typeof v === 'number' && Number.isNaN(v)));
            if (bad) problems.push(`dataset ${path}${name} holds NaN: ${JSON.stringify(bad).slice(0, 120)}`);
        }
        (state.subcontext || []).forEach((s, i) => walk(s, `${path}${i}/`));
    };
    walk(view.getState({signals: () => false, data: () => true, recurse: true}), '');
    const scales = (rt, path) => {
        for (const [name, op] of Object.entries(rt.scales || {})) {
            const s = op.value;
            if (s && s.type === 'log') {
                const d = s.domain();
                if (!(d[0] > 0 && d[d.length - 1] > 0)) problems.push(`log scale ${path}${name} has domain [${d}] (reaches zero)`);
            }
        }
        (rt.subcontext || []).forEach((c, i) => scales(c, `${path}${i}/`));
    };
    scales(view._runtime, '');
    const visit = (node) => {
        if (!node) return;
        if (node.marktype && node.marktype !== 'group') {
            for (const item of node.items || []) {
                for (const k of ['x', 'y', 'x2', 'y2', 'width', 'height']) {
                    if (k in item && typeof item[k] === 'number' && !Number.isFinite(item[k])) {
                        problems.push(`a ${node.marktype} mark (${node.role || ''}) is drawn at ${k} = ${item[k]}`);
                        return;
                    }
                }
            }
        }
        (node.items || []).forEach(child => (child.items || []).forEach(visit));
    };
    visit(view.scenegraph().root);
    // a plot that draws nothing: a group whose marks (not text: captions, labels) have no item
    const drawn = (group) => {
        let marks = 0, items = 0;
        for (const child of group.items || []) {
            if (child.marktype === 'group') {
                (child.items || []).forEach(drawn);
                if (child.role === 'mark' || child.role === 'scope') { marks += 1; items += (child.items || []).length; }
            } else if (child.role === 'mark' && child.marktype !== 'text') {
                marks += 1;
                items += (child.items || []).length;
            }
        }
        if (marks > 0 && items === 0) problems.push('a plot draws no mark at all (empty data after its filters?)');
    };
    (view.scenegraph().root.items || []).forEach(drawn);
    let pale = 0;
    el.querySelectorAll('svg .role-legend-symbol path').forEach(p => {
        const num = (a, d) => { const v = p.getAttribute(a); return v === null ? d : parseFloat(v); };
        const opacity = num('opacity', 1);
        const paint = (c) => c && c !== 'none' && c !== 'transparent';
        const fill = paint(p.getAttribute('fill')) && num('fill-opacity', 1) * opacity >= 0.5;
        const stroke = paint(p.getAttribute('stroke')) && num('stroke-opacity', 1) * opacity >= 0.5;
        if (!fill && !stroke) pale += 1;
    });
    if (pale) problems.push(`${pale} legend swatch(es) too pale to match a line (a spread band's?)`);
    el.querySelectorAll('svg .role-axis-title text, svg .role-legend-title text, svg .role-title-text text').forEach(t => {
        if (/[_^$\\\\]/.test(t.textContent)) problems.push(`title shows raw TeX: ${JSON.stringify(t.textContent)}`);
    });
    // tick labels that touch read as one number ("0.000.05"); Vega hides the ones it drops (opacity 0)
    el.querySelectorAll('svg .role-axis-label').forEach(axis => {
        const boxes = [...axis.querySelectorAll('text')]
            .filter(t => t.textContent.trim() && parseFloat(t.getAttribute('opacity') ?? '1') > 0)
            .map(t => [t.textContent, t.getBoundingClientRect()]);
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, r] = boxes[i], [b, q] = boxes[j];
            const row = Math.abs((r.top + r.bottom) - (q.top + q.bottom)) < 2;  // labels side by side (an x axis)
            if (row && Math.min(r.right, q.right) - Math.max(r.left, q.left) > -1) {  // closer than 1 px
                problems.push(`axis labels ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`);
                return;
            }
        }
    });
    return problems;
}"""

#: Move every slider and drop-down of one chart through all its values; each value must be
#: reached, the chart must change at each move, and the view must pass the audit after each.
_MOVE_JS = """async ([el, audit, limit]) => {
    const view = el.__dpadmmView;
    if (!view) return {problems: ['no Vega view'], moves: 0};
    const problems = [];
    let moves = 0;
    const svg = () => (el.querySelector('svg') || {}).innerHTML;
    const settle = async () => { await view.runAsync(); await new Promise(r => requestAnimationFrame(() => r())); };
    const inputs = [...el.querySelectorAll('.vega-bindings input[type=range], .vega-bindings select')];
    for (const input of inputs) {
        const name = input.name || input.getAttribute('name') || '(unnamed)';
        let values;
        if (input.tagName === 'SELECT') {
            values = [...input.options].map(o => o.value);
        } else {
            const min = +input.min, max = +input.max, step = +input.step || 1;
            const n = Math.round((max - min) / step);
            values = Array.from({length: n + 1}, (_, i) => i === n ? max : min + i * step);
            if (values.length > limit) values = values.filter((_, i) => i % Math.ceil(values.length / limit) === 0 || i === n);
        }
        const original = input.value;
        let before = svg();
        for (const v of values) {
            const same = String(input.value) === String(v);
            input.value = v;
            input.dispatchEvent(new Event(input.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
            await settle();
            moves += 1;
            if (input.tagName !== 'SELECT' && Math.abs(+input.value - +v) > 1e-9 * Math.max(1, Math.abs(+v))) {
                problems.push(`slider ${name} cannot reach ${v} (it stays at ${input.value}: the step overshoots)`);
            }
            const readout = input.tagName === 'SELECT' ? null : input.nextElementSibling;
            if (readout && /^-?\\d+\\.0*[1-9]\\d{5,}/.test(readout.textContent.trim())) {  // 6+ significant digits
                problems.push(`slider ${name} reads ${readout.textContent.trim()} (a raw position or log, not a value)`);
            }
            const after = svg();
            if (!same && after === before) problems.push(`moving ${name} to ${v} did not change the chart`);
            audit(el).forEach(p => problems.push(`${name} = ${v}: ${p}`));
            before = after;
        }
        input.value = original;
        input.dispatchEvent(new Event(input.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
        await settle();
    }
    return {problems, moves};
}"""


def test_charts_hold_no_nan_no_empty_data_no_zero_on_log_axes_and_typeset_titles(visits):
    def check(rel, page):
        out = []
        for i in range(page.locator(".dpadmm-vega").count()):
            chart = page.locator(".dpadmm-vega").nth(i)
            out += [f"chart {i}: {p}" for p in chart.evaluate(_AUDIT_JS)]
        return out

    _each_page(visits, check)


def test_every_slider_and_drop_down_reaches_every_value_and_changes_its_chart(visits):
    moved = 0

    def check(rel, page):
        nonlocal moved
        out = []
        page.evaluate(f"() => {{ window.__dpadmmAudit = {_AUDIT_JS}; }}")
        for i in range(page.locator(".dpadmm-vega").count()):
            chart = page.locator(".dpadmm-vega").nth(i)
            if not chart.locator(".vega-bindings input, .vega-bindings select").count():
                continue
            result = page.evaluate(f"async ([el, limit]) => ({_MOVE_JS})([el, window.__dpadmmAudit, limit])",
                                   [chart.element_handle(), 40])
            moved += result["moves"]
            out += [f"chart {i}: {p}" for p in result["problems"]]
        errors = [e for e in visits[rel].errors]
        return out + [f"console error while moving controls: {e}" for e in errors]

    _each_page(visits, check)
    assert moved > 0, "no page has a chart with a slider or a drop-down"


def test_slider_readouts_show_grid_values(visits):
    """A sweep chart's slider moves over grid positions; its readout must show the grid value."""
    found, problems = 0, []
    for rel, visit in visits.items():
        readouts = visit.page.evaluate("""() => [...document.querySelectorAll('.dpadmm-vega input[type=range]')].map(i => {
            const view = i.closest('.dpadmm-vega').__dpadmmView;
            let labels = null;
            try { labels = view.signal(i.name + '__labels'); } catch (e) { labels = null; }
            const shown = i.nextElementSibling ? i.nextElementSibling.textContent.trim() : null;
            return [i.name, i.value, shown, labels ? labels[Math.round(+i.value)] : null];
        })""")
        for name, position, shown, label in readouts:
            if label is None:
                continue
            found += 1
            if shown != label:
                problems.append(f"{rel}: slider {name} at position {position} shows {shown!r}, not the value {label!r}")
    assert not problems, "\n".join(problems)
    assert found, "no slider over a grid (sweep_chart) on any page"


# ------------------------------------------------------------- phones, page weight, accessibility
def test_chart_data_written_by_columns_comes_back_row_for_row():
    """The site writes a large chart dataset by columns (its keys and repeated strings once); what
    dpadmm-charts.js rebuilds must be the same rows — a drawn-only float to 6 significant digits, a
    field that a filter or slider compares exactly — and rows it could not rebuild stay rows."""
    from dpadmm_book import _book

    rows = [{"algorithm": ["DP-ADMM", "ADMM"][i % 2], "iteration": i, "gap": 1 / (i + 3), "rho": 1 / (i + 7),
             "lo": None} for i in range(60)]
    spec = {"datasets": {"d": rows, "few": rows[:3], "ragged": rows[:30] + [{"iteration": 1}]}, "mark": "line",
            "encoding": {"y": {"field": "gap"}, "x": {"field": "rho"}},
            "transform": [{"filter": "datum.rho > 0.01"}]}
    compact = _book.compact_datasets(spec)
    written = compact["datasets"]["d"]
    back = _book._rows(written)
    assert written["dpadmm_rows"] == 60 and [r["rho"] for r in back] == [r["rho"] for r in rows]  # compared: exact
    assert [r["gap"] for r in back] == [float(f"{r['gap']:.6g}") for r in rows]  # drawn only: 6 digits
    assert back[0]["gap"] == 0.333333 != rows[0]["gap"]
    assert [{k: v for k, v in r.items() if k != "gap"} for r in back] == [
        {k: v for k, v in r.items() if k != "gap"} for r in rows]
    assert ["algorithm", [i % 2 for i in range(60)], ["DP-ADMM", "ADMM"]] in written["dpadmm_columns"]
    assert len(json.dumps(written)) < 0.5 * len(json.dumps(rows))
    assert compact["datasets"]["few"] == rows[:3] and compact["datasets"]["ragged"] == spec["datasets"]["ragged"]
    assert spec["datasets"]["d"] is rows and rows[0]["gap"] == 1 / 3, "the chart's own spec is not changed"


def test_the_icon_fonts_keep_exactly_the_glyphs_the_stylesheets_name(site):
    """Font Awesome's fonts are cut to the icons the site's CSS names (156 KB → 2 KB on every page):
    every codepoint a stylesheet names is in the solid font, and nothing else is."""
    from fontTools.ttLib import TTFont

    from dpadmm_book import _book

    named = _book.icon_codepoints(site / "_static")
    solid = site / "_static/vendor/fontawesome/webfonts/fa-solid-900.woff2"
    assert len(named) >= 10 and 0xF0C9 in named  # the menu's bars, at least
    assert set(TTFont(solid).getBestCmap()) == named
    assert solid.stat().st_size < 10_000


#: Where a box inside ``el`` can be seen: each ancestor that clips (overflow other than visible)
#: narrows the visible strip; an ancestor that scrolls sideways makes what it holds reachable, and
#: then that scroll box itself must be visible. The page itself never counts as a scroll box (a
#: phone reader does not pan the whole page sideways to finish a formula).
_REACHABLE_JS = """(el, box) => {
    let left = -Infinity, right = Infinity;
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX === 'visible') continue;
        const r = a.getBoundingClientRect();
        if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && a.scrollWidth > a.clientWidth + 1) {
            if (box.left < left - 1 || box.right > right + 1) return false;  // cut off inside the scroll box
            box = r; left = -Infinity; right = Infinity;
            continue;
        }
        left = Math.max(left, r.left); right = Math.min(right, r.right);
    }
    left = Math.max(left, 0); right = Math.min(right, document.documentElement.clientWidth);
    return box.left >= left - 1 && box.right <= right + 1;
}"""

#: Open every folded part of the page (exercise solutions, dropdowns) so their formulas are
#: measured too; returns a function that folds them again.
_UNFOLD_JS = """() => { window.__dpadmmFolded = [...document.querySelectorAll('details:not([open])')];
    window.__dpadmmFolded.forEach(d => d.open = true); }"""
_REFOLD_JS = "() => (window.__dpadmmFolded || []).forEach(d => d.open = false)"


def _unfolded(page, js: str):
    page.evaluate(_UNFOLD_JS)
    try:
        page.wait_for_timeout(50)
        return page.evaluate(js)
    finally:
        page.evaluate(_REFOLD_JS)


def _math_text(entry) -> str:
    return re.sub(r"\s+", " ", entry)[:70]


def test_no_inline_formula_is_cut_off(both_visits):
    """An inline formula wider than its line (a phone's 358 px column) must be scrollable in
    its own box, not cut off at the column's edge (the issue: 34 were, "ℒρ = f(x)+g(y)+ρ/2‖Ax+By −")."""

    def check(rel, page):
        cut = _unfolded(page, f"""() => {{ const reachable = {_REACHABLE_JS};
            return [...document.querySelectorAll('mjx-container:not([display="true"])')]
                .filter(c => c.getClientRects().length)
                .filter(c => !reachable(c, (c.querySelector('mjx-math') || c).getBoundingClientRect()))
                .map(c => (c.querySelector('mjx-assistive-mml') || c).textContent); }}""")
        return [f"inline formula cut off: {_math_text(t)!r}" for t in cut]

    _each_page(both_visits, check)


#: Display equations wider than their box: each must sit in a box that scrolls sideways, is
#: visible itself, shows a cue (the scroll shadows of .dpadmm-math-scroll: gradients that move
#: with the content) and can be scrolled from the keyboard (in the Tab order).
_WIDE_DISPLAY_JS = f"""() => {{ const reachable = {_REACHABLE_JS};
    const out = [];
    for (const c of document.querySelectorAll('mjx-container[display="true"]')) {{
        if (!c.getClientRects().length) continue;
        const math = (c.querySelector('mjx-math') || c).getBoundingClientRect();
        let box = null;
        for (let a = c, i = 0; a && i < 4 && !box; a = a.parentElement, i++) {{
            const s = getComputedStyle(a);
            if (s.overflowX === 'auto' || s.overflowX === 'scroll') box = a;
        }}
        const room = (box || c).clientWidth;
        if (math.width <= room + 1) continue;
        const text = (c.querySelector('mjx-assistive-mml') || c).textContent;
        const problems = [];
        if (!box || box.scrollWidth <= box.clientWidth + 1 || !reachable(c, math)) problems.push('is cut off');
        else {{
            const s = getComputedStyle(box);
            if (!(s.backgroundImage.split('gradient').length > 2 && s.backgroundAttachment.includes('local')))
                problems.push('scrolls with no cue');
            if (box.tabIndex < 0) problems.push('cannot be scrolled from the keyboard');
        }}
        out.push({{text, width: math.width, room, problems}});
    }}
    return out;
}}"""


def test_wide_display_equations_scroll_in_their_own_box_with_a_cue(both_visits):
    wide = 0

    def check(rel, page):
        nonlocal wide
        found = _unfolded(page, _WIDE_DISPLAY_JS)
        wide += len(found)
        return [f"display equation {e['width']:.0f} px wide in {e['room']:.0f} px {', '.join(e['problems'])}: "
                f"{_math_text(e['text'])!r}" for e in found if e["problems"]]

    _each_page(both_visits, check)


#: Every chart on the phone: the smallest text it shows (font size x the scale the SVG is drawn
#: at), and whether the chart can be seen whole (it fits, or it scrolls in its box with a cue).
_CHART_TEXT_JS = f"""() => {{ const reachable = {_REACHABLE_JS};
    return [...document.querySelectorAll('.dpadmm-vega')].map((el, i) => {{
        const svg = el.querySelector('svg');
        if (!svg) return {{i, smallest: 0, text: '(no svg)', cut: false, cue: true}};
        const box = svg.getBoundingClientRect(), scale = box.width / svg.width.baseVal.value;
        let smallest = Infinity, text = '';
        svg.querySelectorAll('text').forEach(t => {{
            if (!t.textContent.trim() || parseFloat(t.getAttribute('opacity') ?? '1') === 0) return;
            const px = parseFloat(getComputedStyle(t).fontSize) * scale;
            if (px < smallest) {{ smallest = px; text = t.textContent; }}
        }});
        const scrolls = el.scrollWidth > el.clientWidth + 1;
        const s = getComputedStyle(el);
        const cue = !scrolls || (s.backgroundImage.split('gradient').length > 2 && el.tabIndex >= 0);
        return {{i, smallest, text, width: svg.width.baseVal.value, cut: !reachable(svg, box), cue}};
    }});
}}"""


def test_chart_text_is_at_least_8_px_on_a_phone_and_no_chart_is_cut_off(phone_visits):
    """Charts up to 830 px wide were shrunk into the phone's 358 px column (labels of 4.7 px): a
    chart that does not fit is reflowed (panels stacked, legend below, narrower plots) or
    scrolls in its box with a cue, never shrunk below 8 px text."""

    def check(rel, page):
        out = []
        for c in page.evaluate(_CHART_TEXT_JS):
            if c["smallest"] < 8:
                out.append(f"chart {c['i']} ({c.get('width', 0):.0f} px): text {c['smallest']:.1f} px ({c['text']!r})")
            if c["cut"]:
                out.append(f"chart {c['i']} runs out of the column")
            if not c["cue"]:
                out.append(f"chart {c['i']} scrolls sideways with no cue or keyboard access")
        return out

    _each_page(phone_visits, check)


#: The most a page may load (every request's body, uncompressed).
PAGE_BUDGET = 3_000_000


def test_no_page_loads_more_than_3_mb(visits):
    def check(rel, page):
        received = visits[rel].received
        total = sum(received.values())
        if total <= PAGE_BUDGET:
            return []
        top = sorted(received.items(), key=lambda kv: -kv[1])[:4]
        return [f"loads {total / 1e6:.2f} MB, most: " + ", ".join(f"{urlparse(u).path} {n / 1e6:.2f} MB" for u, n in top)]

    _each_page(visits, check)


def test_vega_loads_only_on_pages_with_a_chart_and_mathjax_only_where_there_is_math(visits):
    def check(rel, page):
        urls = [urlparse(u).path for u in visits[rel].received]
        vega = [u for u in urls if "vega" in u.rsplit("/", 1)[-1]]
        mathjax = [u for u in urls if "/mathjax/" in u]
        charts = page.locator(".dpadmm-vega").count()
        formulas = page.locator("mjx-container").count()
        out = []
        if vega and not charts:
            out.append(f"no chart, but loads {vega}")
        if charts and not vega:
            out.append(f"{charts} chart(s), but no Vega")
        if mathjax and not formulas:
            out.append(f"no formula, but loads MathJax ({len(mathjax)} files)")
        if any(u.endswith(("-full.js", "/ui/menu.js")) for u in mathjax):
            out.append(f"loads MathJax's full build or its menu: {[u for u in mathjax if u.endswith('.js')]}")
        return out

    _each_page(visits, check)


def test_theme_icons_are_drawn_by_the_icon_font(visits):
    """The theme's Font Awesome script is left out (1.5 MB) and its CSS keeps only the icons the
    site uses: every icon shown must still be drawn, from the icon font."""
    icons = 0

    def check(rel, page):
        nonlocal icons
        found = page.evaluate("""() => [...document.querySelectorAll('[class*="fa-"]')]
            .filter(e => /\\bfa-(solid|regular|brands)\\b/.test(e.className) && e.getClientRects().length)
            .map(e => { const s = getComputedStyle(e, '::before');
                        return [e.className.replace(/\\s+/g, ' '), s.content, s.fontFamily, e.getBoundingClientRect().width]; })""")
        icons += len(found)
        return [f"icon {cls!r} is not drawn (content {content}, font {font}, {width:.0f} px)"
                for cls, content, font, width in found
                if content in ("none", "normal", '""') or "Font Awesome" not in font or width < 1]

    _each_page(visits, check)
    assert icons, "no theme icon on any page (the check found nothing to check)"


def _ax(page, selector: str) -> list[dict]:
    """Chromium's accessibility tree node (role, name, description) of each element matching ``selector``."""
    cdp = page.context.new_cdp_session(page)
    try:
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        out = []
        for node_id in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]:
            ax = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node_id, "fetchRelatives": False})["nodes"][0]
            out.append({"role": ax.get("role", {}).get("value"), "name": ax.get("name", {}).get("value", ""),
                        "description": ax.get("description", {}).get("value", "")})
        return out
    finally:
        cdp.detach()


def test_every_chart_has_a_name_and_a_description(visits):
    """Screen readers announced every chart as "Vega visualization"."""

    def check(rel, page):
        out = []
        # a chart in a closed fold (the reproducibility page's evidence) is out of the accessibility
        # tree until the reader opens it: open every fold, as a reader would, before asking
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        # a chart in a fold is drawn again for the width it gets when the fold opens: wait for it
        page.wait_for_function("() => [...document.querySelectorAll('.dpadmm-vega')].every("
                               "d => d.dataset.drawn === 'done' || d.dataset.drawn === 'failed')", timeout=60_000)
        for i, node in enumerate(_ax(page, ".dpadmm-vega")):
            name, description = node["name"].strip(), node["description"].strip()
            if not name or "vega" in name.lower():
                out.append(f"chart {i} is named {name!r}")
            if len(description.split()) < 5 or description == name:
                out.append(f"chart {i} ({name!r}) has no description of what it shows: {description!r}")
        return out

    _each_page(visits, check)


def test_formulas_are_not_tab_stops(both_visits):
    """MathJax's menu put every formula in the Tab order (liu2022: 268 of 404 stops). A formula box
    that scrolls sideways stays reachable (keyboard scrolling)."""

    def check(rel, page):
        stops = page.evaluate("""() => [...document.querySelectorAll('mjx-container, mjx-container *')]
            .filter(e => e.tabIndex >= 0 && !(e.scrollWidth > e.clientWidth + 1))
            .map(e => (e.closest('mjx-container').querySelector('mjx-assistive-mml') || e).textContent)""")
        return [f"{len(stops)} formula(s) are Tab stops, e.g. {_math_text(stops[0])!r}"] if stops else []

    _each_page(both_visits, check)


def test_every_control_has_a_distinct_name_and_announces_its_value(visits):
    """Three sliders on xu2020 were all named "ρ"; a slider must announce the value its readout shows."""
    controls = 0

    def check(rel, page):
        nonlocal controls
        nodes = _ax(page, ".dpadmm-vega input, .dpadmm-vega select")
        # what a control shows, and the value it announces: aria-valuetext when set (Chromium's
        # DevTools tree reports the raw value for it), else its value
        shown = page.evaluate("""() => [...document.querySelectorAll('.dpadmm-vega input, .dpadmm-vega select')].map(i =>
            i.tagName === 'SELECT' ? [i.options[i.selectedIndex].text, i.options[i.selectedIndex].text]
            : [i.nextElementSibling ? i.nextElementSibling.textContent.trim() : i.value,
               i.getAttribute('aria-valuetext') ?? i.value])""")
        controls += len(nodes)
        out, seen = [], {}
        for node, (text, announced) in zip(nodes, shown):
            name = node["name"].strip()
            if not name:
                out.append(f"a {node['role']} has no name")
            seen.setdefault(name, []).append(node["role"])
            if node["role"] == "slider" and announced != text:
                out.append(f"slider {name!r} shows {text!r} but announces {announced!r}")
        out += [f"{len(roles)} controls share the name {name!r}" for name, roles in seen.items() if len(roles) > 1]
        return out

    _each_page(visits, check)
    assert controls, "no chart control on any page"


AXE = Path(__file__).resolve().parent / "node" / "node_modules" / "axe-core" / "axe.min.js"


def test_axe_finds_no_serious_or_critical_violation(both_visits):
    """axe-core (the npm package of tests/node, `make node-tools`) on every page."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make node-tools` (make test does)")
    source = AXE.read_text()

    def check(rel, page):
        # evaluated by the test itself, not as a <script>: the live pages' Content-Security-Policy
        # blocks every inline script it does not list (tools/bookbuild/csp.py)
        page.evaluate(source + "\n;0")
        found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => ({id: v.id, impact: v.impact, count: v.nodes.length,
                        example: v.nodes[0].target.join(' ') + ': ' + (v.nodes[0].failureSummary || '').slice(0, 160)}))""")
        return [f"{v['impact']} {v['id']} ×{v['count']}: {v['example']}" for v in found]

    _each_page(both_visits, check)

"""A chapter of the JupyterLite edition open in Chromium, every other host blocked: what
tests/test_lite.py and benchmarks/lite.py drive.

The Lite edition exposes its application as ``window.jupyterapp`` (``exposeAppInBrowser``, as
JupyterLab's own UI tests do): cells are run with the notebook's own commands, so their outputs
render as a reader's do.
"""

from __future__ import annotations

import re
import time

import lab_session

#: JavaScript: the open notebook panel (the Notebook application shows one).
_PANEL = "(() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;" \
         " return w && w.content && w.sessionContext ? w : null; })()"

#: Console messages of the Lite edition that are expected, each with the reason it cannot be removed:
#: ``(type, regular expression, why)``. Anything else a chapter logs (an error, a warning) fails
#: the Lite tests.
CONSOLE_ALLOWED: list[tuple[str, str, str]] = [
    ("warning", r"^Menu entry for command '(filemenu:close-and-cleanup|application:close)' is duplicated\.$",
     "JupyterLite 0.6.4's own Notebook application declares these two File-menu entries twice; logged on "
     "every page of its Notebook view, whatever the notebook"),
]


def unexpected_console(messages: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The console ``messages`` (``(type, text)``) not on :data:`CONSOLE_ALLOWED`."""
    return [(kind, text) for kind, text in messages
            if not any(kind == k and re.search(pattern, text) for k, pattern, _ in CONSOLE_ALLOWED)]


class LiteChapter:
    """One browser context (requests to other hosts blocked and counted, every response's size
    summed); :meth:`launch` opens a chapter from its page's launch button."""

    def __init__(self, browser, *, route: bool = True):
        """``route=False``: no request routing (Playwright's routing turns the HTTP cache off), for a
        browser that cannot resolve other hosts anyway (``--host-resolver-rules``, benchmarks/lite.py);
        requests to other hosts are still counted."""
        self.offhost: list[str] = []
        self.requested: list[str] = []
        self.errors: list[str] = []
        self.console: list[tuple[str, str]] = []  # (type, text) of every console error and warning
        self.bytes = 0
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        if route:
            self.context.route("**/*", self._route)
        else:
            self.context.on("request", lambda r: not lab_session.stays_on_site(r.url) and self.offhost.append(r.url))
        self.context.on("request", lambda r: self.requested.append(r.url))
        self.context.on("requestfinished", self._count)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: (self.errors.append(str(e)), self.console.append(("pageerror", str(e)))))

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(message.text)
        if message.type in ("error", "warning"):
            text = message.text
            if text.startswith("Failed to load resource"):  # which one
                text += f" {(message.location or {}).get('url', '')}"
            self.console.append((message.type, text))

    def _route(self, route):
        lab_session.route_on_site(route, self.offhost)

    def _count(self, request):
        try:
            sizes = request.sizes()
            self.bytes += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        except Exception:  # a request of a closed page
            pass

    def launch(self, page_url: str, timeout: float = 180) -> float:
        """Open the chapter page ``page_url``, press its launch button, wait until the kernel is
        idle; returns the seconds from the press."""
        self.page.goto(page_url, wait_until="load")
        self.bytes_before_launch = self.bytes
        start = time.monotonic()
        self.page.locator("a.dpadmm-lite-launch").first.click()
        self.wait_kernel(timeout)
        return time.monotonic() - start

    def open(self, url: str, timeout: float = 180) -> float:
        start = time.monotonic()
        self.page.goto(url, wait_until="load")
        self.wait_kernel(timeout)
        return time.monotonic() - start

    def wait_kernel(self, timeout: float) -> None:
        self.page.wait_for_function(
            f"() => {{ const p = {_PANEL}; const k = p && p.sessionContext.session && p.sessionContext.session.kernel;"
            " return !!k && k.status === 'idle' && p.content.widgets.length > 0; }", timeout=timeout * 1000, polling=250)

    def save_and_reopen(self, timeout: float = 120) -> list[dict]:
        """Save the notebook (File → Save: JupyterLite keeps it in the browser's storage), open the
        page again and return its cells as they come back."""
        self.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        self.page.wait_for_function(f"() => {{ const p = {_PANEL}; return p && !p.context.model.dirty; }}",
                                    timeout=timeout * 1000, polling=250)
        count = len(self.cells())
        self.page.reload(wait_until="load")
        self.page.wait_for_function(f"(n) => {{ const p = {_PANEL}; return !!p && p.context.isReady"
                                    " && p.content.widgets.length === n; }", arg=count,
                                    timeout=timeout * 1000, polling=250)
        return self.cells()

    def run_all(self, timeout: float = 600, stop_on_error: bool = False) -> list[dict]:
        """Run every code cell in order, as Run All does, one at a time (so each is timed): a list of
        ``{"index", "seconds", "error", "stderr"}``: ``error`` from the cell's outputs (an error output,
        or a traceback printed to stderr), ``stderr`` what it printed there (warnings)."""
        ran = []
        for i, cell in enumerate(self.cells()):
            if cell["type"] != "code":
                continue
            out = self.run(i, timeout=timeout)
            found = self.page.evaluate(
                f"(i) => {{ const outs = {_PANEL}.content.widgets[i].model.outputs.toJSON();"
                " const e = outs.find(o => o.output_type === 'error');"
                " const text = t => Array.isArray(t) ? t.join('') : (t || '');"
                " return {error: e ? e.ename + ': ' + e.evalue + '\\n' + (e.traceback || []).join('\\n') : null,"
                " stderr: outs.filter(o => o.output_type === 'stream' && o.name === 'stderr').map(o => text(o.text)).join('')}; }", i)
            error = found["error"] or out["error"]
            ran.append({"index": i, "seconds": out["seconds"], "error": error, "stderr": found["stderr"]})
            if error and stop_on_error:
                break
        return ran

    def cells(self) -> list[dict]:
        return self.page.evaluate(f"() => {_PANEL}.content.widgets.map(c => ({{type: c.model.type,"
                                  " source: c.model.sharedModel.getSource()}))")

    def run(self, index: int, source: str | None = None, timeout: float = 180) -> dict:
        """Run cell ``index`` (its source replaced by ``source`` if given) as a reader does; returns
        its outputs' text, whether it drew a chart, an error, and the seconds it took."""
        start = time.monotonic()
        self.page.evaluate("async ([i, source]) => {"
                           f" const p = {_PANEL}; const cell = p.content.widgets[i];"
                           " if (source !== null) cell.model.sharedModel.setSource(source);"
                           " cell.model.sharedModel.execution_count = null; cell.model.executionCount = null;"
                           " p.content.activeCellIndex = i; p.content.deselectAll();"
                           " await window.jupyterapp.commands.execute('notebook:run-cell'); }", [index, source])
        self.page.wait_for_function(
            f"(i) => {{ const c = {_PANEL}.content.widgets[i]; const prompt = c.node.querySelector('.jp-InputArea-prompt');"
            " return c.model.executionCount !== null && !(prompt && prompt.textContent.includes('*')); }", arg=index,
            timeout=timeout * 1000, polling=200)
        return {**self.outputs(index), "seconds": time.monotonic() - start}

    def outputs(self, index: int) -> dict:
        return self.page.evaluate(
            f"(i) => {{ const c = {_PANEL}.content.widgets[i]; const area = c.node.querySelector('.jp-OutputArea');"
            " const error = [...c.node.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]')]"
            "   .map(e => e.textContent).find(t => t.includes('Traceback') || /Error\\b/.test(t)) || null;"
            " return {text: area ? area.innerText : '', chart: !!c.node.querySelector('.dpadmm-vega-lab svg, .dpadmm-vega-lab canvas'),"
            " sliders: c.node.querySelectorAll('.widget-slider, input[type=range]').length, error}; }", index)

    def wait_output(self, index: int, text: str | None = None, chart: bool = False, timeout: float = 60) -> dict:
        """:meth:`outputs` of cell ``index`` once they show ``text`` (and a drawn chart if ``chart``):
        outputs and widget views render a moment after the cell's reply."""
        self.page.wait_for_function(
            f"([i, text, chart]) => {{ const n = {_PANEL}.content.widgets[i].node;"
            " const area = n.querySelector('.jp-OutputArea'); const t = area ? area.innerText : '';"
            " return (text === null || t.includes(text))"
            "  && (!chart || !!n.querySelector('.dpadmm-vega-lab svg, .dpadmm-vega-lab canvas')); }",
            arg=[index, text, chart], timeout=timeout * 1000, polling=250)
        return self.outputs(index)

    def chart_svg(self, index: int) -> str:
        return self.page.evaluate(f"(i) => {{ const s = {_PANEL}.content.widgets[i].node.querySelector("
                                  "'.dpadmm-vega-lab svg'); return s ? s.outerHTML : ''; }", index)

    def move_slider(self, index: int, to: float = 0.8, timeout: float = 120) -> tuple[str, str]:
        """Click the first slider of cell ``index``'s live panel at ``to`` (0 … 1) of its track, as a
        reader does (the notebook keeps the arrow keys for moving between cells); returns the chart's
        SVG before and after the redraw."""
        before = self.chart_svg(index)
        track = self.page.evaluate_handle(
            f"(i) => {{ const n = {_PANEL}.content.widgets[i].node;"
            " return n.querySelector('.dpadmm-live .widget-slider .noUi-base'); }", index).as_element()
        if track is None:
            raise RuntimeError(f"cell {index} shows no live panel with a slider")
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        self.page.mouse.click(box["x"] + to * box["width"], box["y"] + box["height"] / 2)
        self.page.wait_for_function(
            f"([i, before]) => {{ const s = {_PANEL}.content.widgets[i].node.querySelector('.dpadmm-vega-lab svg');"
            " return s && s.outerHTML !== before; }", arg=[index, before], timeout=timeout * 1000, polling=250)
        return before, self.chart_svg(index)

    def close(self):
        self.context.close()

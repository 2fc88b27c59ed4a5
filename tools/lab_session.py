"""Drive the JupyterLab edition of the book in headless Chromium (tests/test_lab.py, benchmarks/redraw.py).

:class:`LabServer` starts JupyterLab on 127.0.0.1 (a free port, a random token) on a fresh
edition written by ``tools/lab.py``; :class:`NotebookPage` opens one chapter with every request
to another host blocked and counted, runs all its cells, and moves the controls of its live
panels, timing each redraw from the key press (or drop-down change) to the chart's
``dpadmm-chart-rendered`` event, i.e. after the new SVG is in the page.
"""

from __future__ import annotations

import re
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import Request, urlopen

import lab

ROOT = lab.ROOT
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def stays_on_site(url: str) -> bool:
    """A request that never leaves the machine: the local server, or a data:, blob: or about: URL."""
    parsed = urlparse(url)
    return parsed.scheme in ("data", "blob", "about") or parsed.hostname in LOCAL_HOSTS


def route_on_site(route, offhost: list) -> None:
    """A Playwright route handler's body: let a request to the site through; abort any other and note its URL."""
    if stays_on_site(route.request.url):
        route.continue_()
    else:
        offhost.append(route.request.url)
        route.abort()
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions",
]

_HOOKS = """() => {
  if (window.__dpadmm) return;
  window.__dpadmm = {renders: [], inputs: []};
  document.addEventListener('dpadmm-chart-rendered',
      e => window.__dpadmm.renders.push({t: performance.now(), kind: e.detail.kind, ms: e.detail.ms}), true);
  for (const type of ['keydown', 'change'])
    document.addEventListener(type, e => window.__dpadmm.inputs.push({t: e.timeStamp, type}), true);
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """JupyterLab on localhost over a fresh JupyterLab edition of the book (``fast``: FAST = True;
    ``stop_after_live``: each chapter ends with its last live panel, so a run is shorter)."""

    def __init__(self, workdir: Path, *, fast: bool = True, cache: Path | None = None, stop_after_live: bool = True):
        self.workdir = Path(workdir)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        lab.write_edition(self.workdir, fast=fast, stop_after_live=stop_after_live)
        env = lab.lab_environment(self.workdir)
        # No user settings (a fresh settings directory): the edition's own settings, as `make lab` ships
        # them (lab.SETTINGS: every cell attached to the page, so what the checks read is on it).
        env["JUPYTERLAB_SETTINGS_DIR"] = str(self.workdir / "settings")
        env["JUPYTERLAB_WORKSPACES_DIR"] = str(self.workdir / "workspaces")
        if cache is not None:
            env["DPADMM_CACHE"] = str(cache)
        cmd = lab.lab_command(self.workdir / "book", port=self.port, token=self.token, open_browser=False)
        self.log = self.workdir / "jupyterlab.log"
        self.proc = subprocess.Popen(cmd, env=env, cwd=self.workdir, stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                self.api("GET", "status")
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not start:\n{self.log.read_text()[-3000:]}")
                time.sleep(0.3)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, method: str, path: str):
        request = Request(f"{self.url}/api/{path}", method=method, headers={"Authorization": f"token {self.token}"})
        with urlopen(request, timeout=5) as response:
            return response.read()

    def kernel_idle(self, name: str) -> bool:
        """Has the kernel of notebook ``name`` started, and is it idle?"""
        import json

        return any(session.get("path", "").endswith(name) and (session.get("kernel") or {}).get("execution_state") == "idle"
                   for session in json.loads(self.api("GET", "sessions") or b"[]"))

    def shutdown_kernels(self) -> None:
        """Stop every kernel (a finished chapter must not load the machine for the next)."""
        import json

        for session in json.loads(self.api("GET", "sessions") or b"[]"):
            try:
                self.api("DELETE", f"sessions/{session['id']}")
            except OSError:
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@dataclass
class Redraw:
    control: str
    ms: float       # key press / change → chart drawn, as the page measured it
    kind: str       # "data" (rows swapped in place) or "embed" (chart drawn anew)
    page_ms: float  # of which the page's own work (data swap or embed)
    changed: bool   # the SVG differs from the one before
    compute_ms: float | None = None  # of which the kernel's compute(), as the panel's status line says


@dataclass
class NotebookPage:
    """One chapter of the edition open in Chromium; requests to other hosts are blocked."""

    server: LabServer
    browser: object
    name: str
    offhost: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    def __post_init__(self):
        self.context = self.browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"{e} {e.stack or ''}"[:2000]))
        # A workspace of its own, reset: JupyterLab must not reopen (and restart kernels for) the
        # chapters an earlier page opened.
        workspace = f"w{secrets.token_hex(4)}"
        self.page.goto(f"{self.server.url}/lab/workspaces/{workspace}/tree/{self.name}?reset&token={self.server.token}",
                       wait_until="load")
        try:
            self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
            # Wait with the page's clock: the sync API serves the blocked-request router only
            # while a Playwright call runs (a time.sleep here would stall every request).
            deadline = time.monotonic() + 120
            while not self.server.kernel_idle(self.name):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the kernel of {self.name} did not start within 120 s")
                self.page.wait_for_timeout(300)
            self.page.wait_for_timeout(1000)
            self.page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status=idle]", timeout=90_000)
        except Exception:
            self.screenshot("open")
            raise
        self.page.evaluate(_HOOKS)

    def screenshot(self, what: str) -> Path:
        """A picture of the page next to the server log (for a failing test)."""
        path = self.server.workdir / f"{Path(self.name).stem}-{what}.png"
        self.page.screenshot(path=str(path))
        return path

    def _route(self, route):
        route_on_site(route, self.offhost)

    # ------------------------------------------------------------------ running
    def run_all(self, timeout: float = 300) -> float:
        """Run every cell (Run ▸ Run All Cells) and wait until none is queued or running."""
        start = time.monotonic()
        self.page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        self.page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        # A failed cell's traceback (JupyterLab renders it as stderr, under a line of dashes).
        errors_js = ("() => [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]')]"
                     ".map(e => e.textContent).filter(t => /^\\s*-{20,}\\s*\\n\\s*\\w*(Error|Exception|Interrupt)\\b/.test(t)"
                     " || t.includes('Traceback (most recent call last)')).map(t => t.slice(-1500))")
        try:  # done: every code cell has run, or a cell failed (Run All stops there) and none runs
            self.page.wait_for_function(
                "() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];"
                f" const failed = ({errors_js})().length > 0;"
                " return p.length > 0 && (p.every(e => /\\[\\d+\\]/.test(e.textContent))"
                "  || (failed && !p.some(e => e.textContent.includes('*')))); }",
                timeout=timeout * 1000, polling=500)
        except Exception as exc:
            self.screenshot("run-all")
            state = self.page.evaluate("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(e => e.textContent)")
            raise RuntimeError(f"{self.name}: Run All did not finish in {timeout:.0f} s; prompts {state}; "
                               f"errors {self.page.evaluate(errors_js)}") from exc
        failed = self.page.evaluate(errors_js)
        if failed:
            self.screenshot("run-all")
            raise RuntimeError(f"{self.name}: a cell failed under Run All:\n{failed[0]}")
        self.page.wait_for_timeout(1500)  # the last outputs' widgets draw
        return time.monotonic() - start

    def opened(self) -> dict:
        """What the reader sees on opening: ``first`` (the first cell: "markdown" or "code"),
        ``title`` (its heading), ``scrolled`` (px from the top), ``folded`` (cells whose input is
        folded) and ``dirty`` (the tab marks the notebook modified)."""
        return self.page.evaluate("""() => {
          const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
          const first = cells[0], h1 = first && first.querySelector('h1');
          const scroller = document.querySelector('.jp-Notebook.jp-WindowedPanel-outer, .jp-Notebook .jp-WindowedPanel-outer, .jp-WindowedPanel-outer');
          const tab = document.querySelector('.lm-DockPanel .lm-TabBar-tab.lm-mod-current');
          return {first: first ? (first.classList.contains('jp-MarkdownCell') ? 'markdown' : 'code') : null,
                  title: h1 ? h1.textContent.replace(/[¶#]\\s*$/, '').trim() : null,
                  scrolled: scroller ? scroller.scrollTop : null,
                  folded: cells.map((c, i) => c.querySelector('.jp-InputPlaceholder') ? i : -1).filter(i => i >= 0),
                  dirty: !!(tab && tab.classList.contains('jp-mod-dirty'))}; }""")

    def glued_numbers(self, expected: dict[int, int]) -> list[dict]:
        """For every markdown cell ``i`` with ``expected[i]`` glued numbers (inline expressions):
        ``rendered``, and how many show ``raw`` code (``glued("…")``, never evaluated), a ``note``
        (a value glued further down, not in the kernel when the cell was evaluated) or an ``error``.
        A cell not rendered yet is scrolled into view (as a reader would scroll to it)."""
        return self.page.evaluate("""(expected) => {
          const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
          return Object.entries(expected).map(([i, n]) => {
            const c = cells.find(c => c.dataset.windowedListIndex === i) || cells[+i];
            if (!c) return {index: +i, expected: n, rendered: false, raw: n, note: 0, error: 0, text: '(not in the page)'};
            const myst = c.querySelector('.myst');  // what jupyterlab-myst rendered
            if (!myst) c.scrollIntoView();
            const raw = [...c.querySelectorAll('code')].filter(e => /^glued\\(/.test(e.textContent)).length;
            return {index: +i, expected: n, rendered: !!myst,
                    raw, note: (c.textContent.match(/computed further down/g) || []).length,
                    error: c.querySelectorAll('.jp-RenderedMarkdown [data-mime-type="application/vnd.jupyter.stderr"], .myst [data-mime-type="application/vnd.jupyter.stderr"]').length,
                    text: (myst || c).textContent.replace(/\\s+/g, ' ').slice(0, 120)};
          }); }""", {str(k): v for k, v in expected.items()})

    def wait_glued(self, expected: dict[int, int], timeout: float = 60) -> list[dict]:
        """:meth:`glued_numbers` once every one shows its value, or when ``timeout`` s have passed
        (jupyterlab-myst evaluates a cell's expressions after the code Run All queued,
        and draws the cells anew one by one)."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.glued_numbers(expected)
            if all(c["rendered"] and not (c["raw"] or c["note"] or c["error"]) for c in state) or time.monotonic() > deadline:
                return state
            self.page.wait_for_timeout(500)

    def charts(self) -> list[bool]:
        """For every chart on the page: did it draw an SVG or a canvas?"""
        return self.page.evaluate("() => [...document.querySelectorAll('.dpadmm-vega-lab')]"
                                  ".map(e => !!e.querySelector('svg, canvas'))")

    def chart_widths(self) -> list[tuple[float, float]]:
        """(drawn width, width of its output area) of every chart, in CSS px."""
        return [tuple(x) for x in self.page.evaluate("""() => [...document.querySelectorAll('.dpadmm-vega-lab')].map(e => {
          const svg = e.querySelector('svg, canvas'), area = e.closest('.jp-OutputArea-output');
          if (!svg || !area) return [0, 0];
          const style = getComputedStyle(area);
          return [svg.getBoundingClientRect().width,
                  area.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)]; })""")]

    def sliders(self, panel) -> list[dict]:
        """Every visible slider of ``panel``: its ``label``, the value its ``readout`` shows, and what
        its handle tells assistive technology (``valuetext``, ``valuenow``, ``name``)."""
        return panel.evaluate("""p => [...p.querySelectorAll('.widget-slider')].filter(s => s.offsetParent).map(s => {
          const h = s.querySelector('.noUi-handle'), r = s.querySelector('.widget-readout'), l = s.querySelector('.widget-label');
          return {label: l ? l.textContent.trim() : '', readout: r ? r.textContent.trim() : '',
                  valuetext: h.getAttribute('aria-valuetext'), valuenow: h.getAttribute('aria-valuenow'),
                  name: h.getAttribute('aria-label')}; })""")

    def panels(self):
        return self.page.locator(".dpadmm-live")

    # ------------------------------------------------------------------ moving controls
    def _wait_redraw(self, chart, before: str, n0: int, control: str, event: str, timeout: float) -> Redraw:
        try:
            self.page.wait_for_function(f"() => window.__dpadmm.renders.length > {n0}", timeout=timeout * 1000)
        except Exception as exc:
            self.screenshot("redraw")
            status = chart.locator("xpath=ancestor::*[contains(@class, 'dpadmm-live')][1]").locator(".widget-html").last
            raise RuntimeError(f"{self.name}: no redraw within {timeout:.0f} s after moving {control}; "
                               f"the panel says: {status.inner_text()!r}") from exc
        self.page.wait_for_timeout(150)  # a second, coalesced run may follow
        data = self.page.evaluate(
            "([type]) => { const d = window.__dpadmm; const i = d.inputs.filter(e => e.type === type);"
            " return [i[i.length - 1].t, d.renders[d.renders.length - 1]]; }", [event])
        start, render = data
        after = chart.inner_html()
        status = chart.locator("xpath=ancestor::*[contains(@class, 'dpadmm-live')][1]").locator(".widget-html").last
        found = re.search(r"computed in (\d+) ms", status.inner_text())
        return Redraw(control, render["t"] - start, render["kind"], render["ms"], after != before,
                      float(found.group(1)) if found else None)

    def move_slider(self, panel, index: int, key: str = "ArrowRight", timeout: float = 60) -> Redraw:
        """Press ``key`` on visible slider ``index`` of ``panel`` and time the redraw (the
        "advanced" section stays folded, as a reader first sees the panel)."""
        chart = panel.locator(".dpadmm-vega-lab").first
        before = chart.inner_html()
        handle = panel.locator(".widget-slider:visible .noUi-handle").nth(index)
        label = panel.locator(".widget-slider:visible").nth(index).locator(".widget-label").first.inner_text()
        if key == "ArrowRight":  # a slider at its largest value moves the other way
            now, top = (handle.get_attribute(a) for a in ("aria-valuenow", "aria-valuemax"))
            if now is not None and top is not None and float(now) >= float(top):
                key = "ArrowLeft"
        n0 = self.page.evaluate("() => window.__dpadmm.renders.length")
        handle.focus()
        self.page.keyboard.press(key)
        return self._wait_redraw(chart, before, n0, f"slider {label.strip()} ({key})", "keydown", timeout)

    def choose(self, panel, index: int, option: str | None = None, timeout: float = 60) -> Redraw:
        """Pick another option (or ``option``) in visible drop-down ``index`` of ``panel``; time the redraw."""
        chart = panel.locator(".dpadmm-vega-lab").first
        before = chart.inner_html()
        select = panel.locator(".widget-dropdown select:visible").nth(index)
        current = select.input_value()
        options = [o for o in select.locator("option").evaluate_all("os => os.map(o => o.value)") if o != current]
        value = option if option is not None else options[0]
        n0 = self.page.evaluate("() => window.__dpadmm.renders.length")
        select.select_option(value)
        return self._wait_redraw(chart, before, n0, f"drop-down → {value}", "change", timeout)

    def open_advanced(self, panel) -> bool:
        """Unfold the panel's "advanced" section; False if it has none."""
        header = panel.locator(".jupyter-widget-Collapse-header, .p-Collapse-header, .lm-Collapse-header")
        if not header.count():
            return False
        header.first.click()
        self.page.wait_for_timeout(300)
        return True

    def close(self) -> None:
        self.context.close()


def open_page(server: LabServer, browser, name: str) -> dict:
    """Open the Markdown page ``name`` of the edition as a reader would (double-click in the file
    browser: its default viewer) and say what shows: ``rendered`` (a rendered view, not the
    source in an editor), its ``h1``, the number of list ``items``, and console ``errors``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        workspace = f"w{secrets.token_hex(4)}"
        page.goto(f"{server.url}/lab/workspaces/{workspace}?reset&token={server.token}", wait_until="load")
        item = page.locator(".jp-DirListing-item", has_text=name).first
        item.wait_for(timeout=90_000)
        item.dblclick()
        try:
            page.wait_for_selector(".jp-MarkdownViewer h1, .jp-FileEditor", timeout=60_000)
        except Exception:
            page.screenshot(path=str(server.workdir / f"{Path(name).stem}-opened.png"))
            raise
        page.wait_for_timeout(1500)
        out = page.evaluate("""() => { const v = document.querySelector('.jp-MarkdownViewer:not(.lm-mod-hidden)');
          const h1 = v && v.querySelector('h1');
          return {rendered: !!v, editor: !!document.querySelector('.jp-FileEditor:not(.lm-mod-hidden)'),
                  h1: h1 ? h1.textContent.replace(/[¶#]\\s*$/, '').trim() : null, items: v ? v.querySelectorAll('li').length : 0}; }""")
        out["errors"] = errors
        page.screenshot(path=str(server.workdir / f"{Path(name).stem}-opened.png"))
        return out
    finally:
        context.close()


def live_notebooks(root: Path = ROOT) -> list[Path]:
    """The TOC notebooks whose code has a live panel (``book.widgets.live(`` or ``widgets.live(``)."""
    import json

    from bookbuild.toc import toc_notebooks

    out = []
    for path in toc_notebooks(root):
        code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
        if re.search(r"\bwidgets\.live\(", code):
            out.append(path)
    return out


def chromium_path() -> str:
    import shutil

    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("Debian's chromium is not installed: run `make test` (it installs it with apt)")


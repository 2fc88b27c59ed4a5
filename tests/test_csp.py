"""The Content-Security-Policy of the pages with a "Run live" panel (issue 23, item 2).

``default-src 'self'`` plus what WebAssembly needs: no ``'unsafe-eval'`` (the site's Vega draws
with its expression interpreter), no ``'unsafe-inline'`` for scripts (each inline script of the
page is allowed by its sha256, which the build lists: tools/bookbuild/csp.py), no inline event
handler. Without a browser: the build's completion of the policy, and the built pages' policies
read with the standard library's HTML parser. In headless Chromium: every live page runs its
inline scripts, typesets its math and draws every chart with zero ``securitypolicyviolation``
events and a clean console, an injected inline script and ``eval`` are blocked (the policy is
really enforced), the theme's print button still works, and the ADMM panel runs Python live.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
from pathlib import Path

import pytest
import yaml

from bookbuild import csp
from browser_visit import Visit

ROOT = Path(__file__).resolve().parents[1]
LIVE_PAGES = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["html_context"][
    "dpadmm_live_pages"]
#: Loading Python takes 40-50 s on a loaded 2-core machine (tests/test_live.py).
READY_TIMEOUT_MS = 150_000

#: Records every CSP violation of the page (and of its workers' documents) before anything runs.
VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(
  [e.violatedDirective, e.blockedURI, (e.sample || "").slice(0, 80), e.sourceFile + ":" + e.lineNumber].join(" | ")));
"""

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'">
<script>var a = 1;</script>
<script type="application/json" class="spec">{"data": [1, 2]}</script>
<script src="x.js"></script>
</head><body>
<button onclick="window.print()" class="b">print</button>
<script type="text/javascript">  var b = "é";
</script>
</body></html>"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


class _Page(html.parser.HTMLParser):
    """The policy, the executable inline scripts and the ``on*`` attributes of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.policies: list[str] = []
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self._in_script: bool | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.handlers += [f"<{tag} {k}>" for k in attrs if k.startswith("on")]
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "content-security-policy":
            self.policies.append(attrs["content"])
        if tag == "script":
            runs = "src" not in attrs and (attrs.get("type") or "text/javascript") in (
                "text/javascript", "application/javascript", "module")
            self._in_script = runs
            if runs:
                self.scripts.append("")

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None


def _directives(policy: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


# ----------------------------------------------------------------------------- without a browser
def test_completing_a_policy_lists_each_inline_script_and_swaps_the_themes_handlers():
    done = csp.complete(PAGE)
    page = _Page(done)
    assert len(page.policies) == 1 and not page.handlers
    script_src = _directives(page.policies[0])["script-src"]
    assert script_src[:2] == ["'self'", "'wasm-unsafe-eval'"]
    # the two scripts a browser runs, byte for byte (leading spaces, newline, UTF-8); not the JSON data
    assert sorted(script_src[2:]) == sorted([_hash("var a = 1;"), _hash('  var b = "é";\n')])
    assert '<button data-dpadmm-click="print" class="b">' in done
    assert csp.complete(done) == done  # completing twice changes nothing


@pytest.mark.parametrize("page, message", [
    (PAGE.replace("window.print()", "alert(1)"), "onclick"),
    (PAGE.replace("<meta http-equiv", "<script>1</script><meta http-equiv"), "before the Content-Security-Policy"),
    (PAGE.replace("script-src 'self' 'wasm-unsafe-eval'; ", ""), "no script-src"),
    (PAGE.replace('<meta http-equiv="Content-Security-Policy"', '<meta name="x"'), "0 Content-Security-Policy"),
])
def test_a_page_the_policy_cannot_cover_fails_the_build(page, message):
    with pytest.raises(csp.CspError, match=message):
        csp.complete(page)


def test_install_completes_exactly_the_pages_with_a_policy(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "live.html").write_text(PAGE)
    (tmp_path / "book" / "other.html").write_text("<html><script>var c;</script></html>")
    assert csp.install(tmp_path) == [tmp_path / "book" / "live.html"]
    assert _hash("var a = 1;") in (tmp_path / "book" / "live.html").read_text()
    assert (tmp_path / "book" / "other.html").read_text() == "<html><script>var c;</script></html>"


def test_the_live_pages_policy_is_strict_and_lists_every_inline_script(site_dir):
    for name in LIVE_PAGES:
        page = _Page((site_dir / f"{name}.html").read_text(encoding="utf-8"))
        assert len(page.policies) == 1, name
        policy = _directives(page.policies[0])
        assert policy["default-src"] == ["'self'"], name
        assert "'unsafe-eval'" not in page.policies[0], name
        assert "'unsafe-inline'" not in policy["script-src"], name
        assert "'wasm-unsafe-eval'" in policy["script-src"] and policy["worker-src"] == ["'self'"], name
        assert page.scripts, name  # the theme's inline scripts are there: the check below is not vacuous
        missing = [s[:60] for s in page.scripts if _hash(s) not in policy["script-src"]]
        assert not missing, (name, missing)
        assert not page.handlers, (name, page.handlers)


# ----------------------------------------------------------------------------- in Chromium
class _Visit(Visit):
    """A :class:`Visit` of one page that also records the page's CSP violations, with printing stubbed."""

    def __init__(self, browser, server: str, page: str):
        super().__init__(browser, init_script=VIOLATIONS + "window.print = () => { window.__printed = true; };")
        self.page.goto(f"{server}/{page}.html", wait_until="load")

    def violations(self) -> list[str]:
        return self.page.evaluate("() => window.__cspViolations")


@pytest.mark.parametrize("name", LIVE_PAGES)
def test_each_live_page_draws_its_charts_and_math_with_no_csp_violation(name, server, browser):
    visit = _Visit(browser, server, name)
    page = visit.page
    try:
        charts = page.locator(".dpadmm-vega").count()
        assert charts > 0
        page.wait_for_function("() => [...document.querySelectorAll('.dpadmm-vega')].every("
                               "d => d.dataset.drawn === 'done' || d.dataset.drawn === 'failed')", timeout=60_000)
        page.evaluate("() => window.MathJax.startup.promise")
        assert page.locator(".dpadmm-vega[data-drawn='done'] svg").count() == charts
        assert page.locator("mjx-container").count() > 0  # MathJax ran with its inline configuration
        # the theme's and Sphinx's inline scripts ran (allowed by their hashes)
        assert page.evaluate("() => [document.documentElement.dataset.mode, DOCUMENTATION_OPTIONS.pagename,"
                             " typeof togglebuttonSelector]") == ["light", name, "string"]
        # a chart's slider still filters its chart (a Vega expression, run by the interpreter)
        slider = page.locator(".dpadmm-vega .vega-bindings input[type=range]").first
        if slider.count():
            slider.evaluate("(el) => { el.value = el.max; el.dispatchEvent(new Event('input')); }")
            page.wait_for_timeout(300)
        # the print button, whose onclick the build replaced, still prints
        page.evaluate("() => document.querySelector('[data-dpadmm-click=print]').click()")
        assert page.evaluate("() => window.__printed") is True
        page.wait_for_timeout(300)
        assert visit.violations() == []
        assert not visit.errors, visit.errors
        assert not visit.offhost, visit.offhost
        # the policy is enforced: an inline script that is not listed and eval are both blocked
        ran = page.evaluate("() => { const s = document.createElement('script'); s.textContent ="
                            " 'window.__injected = 1'; document.body.appendChild(s); return window.__injected; }")
        assert ran is None
        # (from a task of the page: code that Playwright evaluates itself is exempt from the policy)
        page.evaluate("() => setTimeout(() => { try { window.__evaluated = Function('return 1')(); }"
                      " catch (e) { window.__evaluated = e.name; } })")
        page.wait_for_function("() => window.__evaluated !== undefined")
        assert page.evaluate("() => window.__evaluated") == "EvalError"
        page.wait_for_function("() => window.__cspViolations.length >= 2")
        assert {v.split(" | ")[0] for v in visit.violations()} == {"script-src-elem", "script-src"}
    finally:
        visit.close()


@pytest.fixture(scope="module")
def server_with_headers(site_dir):
    """The site served with :data:`csp.WORKER_POLICY` as the worker script's CSP header."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def end_headers(self):
            if self.path.split("?")[0].endswith("/_static/live/worker.js"):
                self.send_header("Content-Security-Policy", csp.WORKER_POLICY)
            super().end_headers()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site_dir)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_the_worker_policy_has_no_unsafe_eval():
    policy = _directives(csp.WORKER_POLICY)
    assert policy["default-src"] == ["'self'"] and policy["script-src"] == ["'self'", "'wasm-unsafe-eval'"]


def test_the_live_panel_becomes_ready_and_redraws_with_no_csp_violation(server_with_headers, browser):
    # the page under its <meta> policy, its worker (Pyodide) under WORKER_POLICY from the header
    visit = _Visit(browser, server_with_headers, "book/admm")
    page = visit.page
    try:
        page.locator(".dpadmm-live[data-live-panel='admm'] button.dpadmm-live-button").click()
        page.wait_for_selector(".dpadmm-live[data-live-ready]", timeout=READY_TIMEOUT_MS)
        runs = int(page.locator(".dpadmm-live").get_attribute("data-live-runs"))
        page.locator("#dpadmm-live-rho").evaluate(
            "(el) => { el.value = String(Number(el.value) + 1); el.dispatchEvent(new Event('input')); }")
        page.wait_for_function(f"() => Number(document.querySelector('.dpadmm-live').dataset.liveRuns) > {runs}",
                               timeout=30_000)
        # one step of the log slider from the panel's start (ρ = 0.01, the static chart's) redraws at ρ = 0.1
        assert page.evaluate("() => document.querySelector('.dpadmm-live-chart').__dpadmmView.data('live')[0].rho"
                             ) == 0.1
        page.wait_for_timeout(300)
        assert visit.violations() == []
        assert not visit.errors, visit.errors
        assert not visit.offhost, visit.offhost
    finally:
        visit.close()

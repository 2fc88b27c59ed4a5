"""The published site, opened in a real headless Chromium (Debian's package).

Every page is loaded from a localhost server. Any request to another host is blocked and
counted (must be zero), the console must stay clean, every chart must have drawn an SVG or a
canvas, math must be typeset, and moving a Vega-Lite slider must change its chart. These
tests never skip: no browser or no site is a failure.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError

import build_book

SITE = build_book.HTML
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions",
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("Debian's chromium is not installed: run `make test` (it installs it with apt)")


@pytest.fixture(scope="module")
def site(fast_build) -> Path:
    if not fast_build.site_ok or not (SITE / "index.html").exists():
        pytest.fail(f"the site was not built:\n{fast_build.site_log[-4000:]}")
    return SITE


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()


MATHJAX_DONE = "() => window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => true) : true"


class PageVisit:
    """One page opened with off-host requests blocked and console errors collected."""

    def __init__(self, browser, url: str):
        self.offhost: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context()
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
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
        url = route.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob", "about") or parsed.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.offhost.append(url)
            route.abort()

    def close(self):
        self.context.close()


def _pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def _wait_for_charts(page) -> int:
    count = page.locator(".dpadmm-vega").count()
    if count:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.dpadmm-vega')].every(d => d.querySelector('svg, canvas'))",
            timeout=30_000,
        )
    return count


def test_every_page_loads_offline_with_clean_console_and_drawn_charts(site, server, browser):
    pages = _pages(site)
    assert len(pages) >= 3, f"expected the book's pages, found {pages}"
    charts, problems = 0, []
    for rel in pages:
        visit = PageVisit(browser, f"{server}/{rel}")
        try:
            try:
                charts += _wait_for_charts(visit.page)
            except Exception as exc:  # a chart that never drew
                problems.append(f"{rel}: charts did not all draw ({exc.__class__.__name__})")
            visit.page.wait_for_timeout(300)  # late console errors (a missing resource) still count
            broken = visit.page.locator(".dpadmm-vega:has-text('could not be drawn')").count()
            if broken:
                problems.append(f"{rel}: {broken} chart(s) failed to draw")
            if visit.offhost:
                problems.append(f"{rel}: {len(visit.offhost)} request(s) to other hosts: {visit.offhost[:5]}")
            if visit.errors:
                problems.append(f"{rel}: console errors: {visit.errors[:5]}")
        finally:
            visit.close()
    assert not problems, "\n".join(problems)
    assert charts >= 1, "the book has no chart at all"


def test_math_is_typeset_by_the_sites_own_mathjax(site, server, browser):
    visit = PageVisit(browser, f"{server}/book/intro.html")
    try:
        visit.page.wait_for_selector("mjx-container", timeout=20_000)
        scripts = visit.page.eval_on_selector_all("script[src]", "els => els.map(e => e.src)")
        assert any("vendor/mathjax" in s for s in scripts), scripts
        assert not visit.offhost
    finally:
        visit.close()


def test_moving_a_vega_lite_slider_changes_its_chart(site, server, browser):
    """Find a chart with a slider, move the slider to its other end, and see the SVG change."""
    for rel in _pages(site):
        visit = PageVisit(browser, f"{server}/{rel}")
        try:
            if not _wait_for_charts(visit.page):
                continue
            charts = visit.page.locator(".dpadmm-vega").filter(has=visit.page.locator("input[type=range]"))
            if not charts.count():
                continue
            chart = charts.first
            slider = chart.locator("input[type=range]").first
            before = chart.locator("svg").first.inner_html()
            low, high, value = (float(slider.get_attribute(a) or 0) for a in ("min", "max", "value"))
            target = high if abs(value - high) > abs(value - low) else low
            slider.fill(str(target))
            visit.page.wait_for_function(
                "([el, before]) => el.querySelector('svg').innerHTML !== before",
                arg=[chart.element_handle(), before], timeout=10_000,
            )
            assert not visit.errors, visit.errors
            return
        finally:
            visit.close()
    pytest.fail("no page has a chart with a Vega-Lite slider")

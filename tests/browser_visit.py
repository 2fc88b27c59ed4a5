"""A browser visit that keeps the site offline: the Chromium context the live-panel tests
(test_live.py) and the Content-Security-Policy tests (test_csp.py) open pages in."""

from __future__ import annotations


import lab_session


class Visit:
    """A browser context that blocks (and counts) every request to another host and records
    every request made, by the page and by its workers."""

    def __init__(self, browser, init_script: str | None = None):
        self.offhost: list[str] = []
        self.requested: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.route("**/*", self._route)
        self.context.on("request", lambda r: self.requested.append(r.url))
        if init_script:
            self.context.add_init_script(init_script)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route):
        lab_session.route_on_site(route, self.offhost)

    def close(self):
        self.context.close()

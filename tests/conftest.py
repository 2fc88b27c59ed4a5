"""Shared fixtures: the book is built once per test session, in fast mode, with papermill.

The notebook tests and the browser tests both read the result of that one build, so the
suite tests exactly what `make book` publishes (same engine, same builder), only with
``FAST=True`` grids. The test build goes to ``_build/test`` (``build_book.TEST_OUT``), never
over the published book in ``_build/html``.

``DPADMM_SITE=<dir>`` points the site tests (tests/test_site.py) at an already built site
instead, e.g. the full-mode book of ``make book`` (``make check-book`` does that): the same
checks, no fast build.

``--lane=lib|contracts|book`` collects one lane of the suite (tests/lanes.py names the files of
each); without it the whole suite runs. Written as one word: in ``--lane book`` pytest takes ``book`` for
the book/ folder before it knows the option, and never reads this file.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import lanes

if TYPE_CHECKING:
    import build_book

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

#: Environment variable naming a built site for the site tests (skips the fast build).
SITE_VARIABLE = "DPADMM_SITE"


def pytest_addoption(parser):
    parser.addoption("--lane", choices=sorted(lanes.LANES), default=None,
                     help="collect only this lane's test files (tests/lanes.py); default: the whole suite")


def pytest_ignore_collect(collection_path: Path, config):
    """With ``--lane``, a test file of another lane is not even imported (its imports are the book's
    toolchain, which the library's lane must not pay for)."""
    lane = config.getoption("lane")
    name = collection_path.name
    if lane and name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        tests = Path(__file__).parent
        if collection_path.is_relative_to(tests) and collection_path.relative_to(tests).as_posix() not in lanes.LANES[lane]:
            return True
    return None


@pytest.fixture(scope="session")
def fast_build() -> "build_book.BuildResult":
    """Execute every TOC notebook with papermill (FAST=True) and build `_build/test/html`."""
    import build_book  # here, not at the top: papermill's import is the book lane's cost alone

    return build_book.build("fast", out=build_book.TEST_OUT)


@pytest.fixture(scope="session")
def site_dir(request) -> Path:
    """The built site the browser tests open: ``$DPADMM_SITE`` if set, else the fast build's."""
    given = os.environ.get(SITE_VARIABLE)
    if given:
        path = Path(given).resolve()
        if not (path / "index.html").exists():
            pytest.fail(f"{SITE_VARIABLE}={given} has no index.html: build the book first (`make book`)")
        return path
    build = request.getfixturevalue("fast_build")
    if not build.site_ok or not (build.html / "index.html").exists():
        pytest.fail(f"the site was not built:\n{build.site_log[-4000:]}")
    return build.html


def pytest_sessionfinish(session, exitstatus):
    """A skipped test is a failed test: nothing in this suite may pass by not running."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped and session.exitstatus == 0:
        reporter.write_line(f"FAILED: {len(skipped)} test(s) skipped; this suite allows no skips", red=True)
        session.exitstatus = 1


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site_dir):
    """The built site served on localhost (browsers run workers and WebAssembly only over HTTP)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site_dir)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, through Playwright (never a downloaded browser)."""
    import lab_session
    from playwright.sync_api import sync_playwright

    try:
        path = lab_session.chromium_path()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=lab_session.CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty sweep cache of this test's own (``DPADMM_CACHE``), for the sweep and cache tests; it stands
    in for pytest's own ``cache`` fixture, which no test of this suite uses. ``sweep``'s record of the
    keys this "process" used starts empty, and its snapshot of the library's files is taken anew, so that
    an edit of the shared working tree during the session is not mistaken for one during a test."""
    from dpadmm_book import sweep

    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sweep._files, "_USED", {})
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_SNAPSHOT", {})
    return tmp_path / "cache"

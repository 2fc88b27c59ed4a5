"""Shared fixtures: the book is built once per test session, in fast mode, with papermill.

The notebook tests and the browser tests both read the result of that one build, so the
suite tests exactly what `make book` publishes (same engine, same builder), only with
``FAST=True`` grids.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_book  # noqa: E402


@pytest.fixture(scope="session")
def fast_build() -> "build_book.BuildResult":
    """Execute every TOC notebook with papermill (FAST=True) and build `_build/html`."""
    return build_book.build("fast")


def pytest_sessionfinish(session, exitstatus):
    """A skipped test is a failed test: nothing in this suite may pass by not running."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped and session.exitstatus == 0:
        reporter.write_line(f"FAILED: {len(skipped)} test(s) skipped; this suite allows no skips", red=True)
        session.exitstatus = 1

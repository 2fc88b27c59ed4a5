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

"""Redraw time of every live panel, end to end in a real browser (issue 16, item 2).

For each chapter with a live panel (``book.widgets.live(``): JupyterLab serves the JupyterLab
edition of the book (fast mode) on localhost; headless Chromium (Debian's) runs the chapter and,
for each panel, presses → on every slider and picks another option in every drop-down, timing
key press (or change) → new chart in the page. Then it moves every slider to its largest value
(End) and times one more move there. Targets: ≤ 300 ms at the default setting, ≤ 1 s at the
largest settings (the status line says "computing …" when a run takes longer than 250 ms).
No request may leave the machine (they are blocked and counted).

Run: ``.venv/bin/python benchmarks/redraw.py [chapter.ipynb ...]`` (needs the `lab` extra:
``make lab`` or ``make test`` installs it). ``--full`` measures the full edition, the one ``make
lab`` opens, with the sweeps ``make book`` cached in ``_build/cache/full`` (without them Run All
recomputes every sweep first: the run says so, and uses a cache of its own so that it does not
write into make book's). Timings on a shared machine vary with its load, which is printed before
and after each chapter. A move "recomputes" when the panel's status line says "computed in … ms"
(a setting seen before is redrawn from the panel's cache); the summary gives both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lab_session  # noqa: E402

DEFAULT_TARGET_MS, LARGEST_TARGET_MS = 300, 1000


def measure(server, browser, name: str, *, timeout: float = 300) -> list[tuple]:
    """(setting, control, ms, kind, compute ms) for every move of every panel of chapter ``name``."""
    page = lab_session.NotebookPage(server, browser, name)
    rows = []
    try:
        page.run_all(timeout=timeout)
        panels = page.panels()
        for i in range(panels.count()):
            panel = panels.nth(i)
            panel.scroll_into_view_if_needed()
            sliders = panel.locator(".widget-slider:visible .noUi-handle").count()
            for k in range(sliders):
                r = page.move_slider(panel, k)
                rows.append(("default", f"panel {i}: {r.control}", r.ms, r.kind, r.compute_ms))
                page.move_slider(panel, k, key="ArrowLeft")  # back to the default
            for k in range(panel.locator(".widget-dropdown select:visible").count()):
                r = page.choose(panel, k)
                rows.append(("default", f"panel {i}: {r.control}", r.ms, r.kind, r.compute_ms))
            for k in range(sliders):  # every slider at its largest value
                page.move_slider(panel, k, key="End", timeout=120)
            for k in range(sliders):
                r = page.move_slider(panel, k, key="ArrowLeft", timeout=120)
                rows.append(("largest", f"panel {i}: {r.control}", r.ms, r.kind, r.compute_ms))
        if page.offhost:
            raise RuntimeError(f"{name}: requests to other hosts: {page.offhost[:5]}")
    finally:
        page.close()
        server.shutdown_kernels()
    return rows


def _load() -> str:
    """The machine's load averages over 1, 5 and 15 minutes (as `uptime` prints them)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="notebook names (default: every TOC chapter with a live panel)")
    parser.add_argument("--full", action="store_true", help="the full edition (make lab's), with make book's cache")
    args = parser.parse_args(argv)
    mode = "full" if args.full else "fast"
    names = args.chapters or [p.name for p in lab_session.live_notebooks()]
    from playwright.sync_api import sync_playwright

    print(f"{mode} edition; machine load: {_load()} on {os.cpu_count()} cores (timings vary with it)")
    cache = ROOT / "_build" / "cache" / mode
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        if not cache.is_dir():
            print(f"no sweep cache in {cache.relative_to(ROOT)} (run `make book` first): Run All computes the sweeps "
                  "before the panels, into a cache of this run's own")
            cache = Path(tmp) / "cache"
        server = lab_session.LabServer(Path(tmp), fast=not args.full, cache=cache)
        browser = p.chromium.launch(executable_path=lab_session.chromium_path(), args=lab_session.CHROMIUM_ARGS)
        try:
            for name in names:
                load = _load()
                try:
                    rows = measure(server, browser, name, timeout=1800 if args.full else 300)
                except Exception as exc:  # report it, measure the other chapters
                    failed.append(name)
                    print(f"\n{name}: FAILED — {str(exc).splitlines()[0][:300]}")
                    continue
                print(f"\n{name} (load before: {load}; after: {_load()})", flush=True)
                for setting, control, ms, kind, compute in rows:
                    target = DEFAULT_TARGET_MS if setting == "default" else LARGEST_TARGET_MS
                    of = f"(compute {compute:.0f} ms)" if compute is not None else ""
                    print(f"  {setting:<8} {control:<48} {ms:7.0f} ms {of:<20} {kind:<5} {'ok' if ms <= target else 'over'}")
                for setting in ("default", "largest"):
                    for what, keep in (("all moves", lambda row: True), ("recomputing", lambda row: row[4] is not None)):
                        times = [row[2] for row in rows if row[0] == setting and keep(row)]
                        if times:
                            print(f"  {setting:<8} {what:<12} {len(times):3d} moves: median {statistics.median(times):5.0f} ms, "
                                  f"max {max(times):5.0f} ms")
        finally:
            browser.close()
            server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

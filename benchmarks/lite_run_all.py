"""The JupyterLite edition (issue 37): Run All on every chapter, in the browser, offline.

Headless Chromium (Debian's) opens each chapter of the built site's Lite edition
(``lite/notebooks/?path=<chapter>.ipynb``) from a localhost server, every request to another host
blocked and counted, and runs its code cells in order as Run All does, one at a time so that each
is timed. Per chapter it prints the seconds to the idle kernel, the seconds of Run All, the
slowest cells, every cell that failed (its error), what cells printed to stderr (warnings), and the
page's console errors and warnings (those not on ``lite_session.CONSOLE_ALLOWED``).

The chapters run in fast mode (the Lite edition's ``FAST = True``), each in a fresh browser context
(a fresh kernel), one after the other. The machine's load (``uptime``) is printed before and after;
report the seconds as ratios to a peer measured in the same run.

Run: ``.venv/bin/python benchmarks/lite_run_all.py [--site _build/html] [--chapters admm privacy]``
(``make book`` builds the site with its Lite edition; the test build's is ``_build/test/html``).
Exit status 1 when a chapter failed or its console was not clean.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lab_session  # noqa: E402
import lite_session  # noqa: E402


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_chapter(browser, base: str, chapter: str, timeout: float) -> dict:
    visit = lite_session.LiteChapter(browser)
    try:
        kernel = visit.open(f"{base}/lite/notebooks/index.html?path={chapter}.ipynb", timeout=300)
        start = time.monotonic()
        cells = visit.run_all(timeout=timeout)
        seconds = time.monotonic() - start
        return {"chapter": chapter, "kernel_idle_s": round(kernel, 1), "run_all_s": round(seconds, 1),
                "cells": len(cells),
                "slowest": sorted(({"cell": c["index"], "s": round(c["seconds"], 1)} for c in cells),
                                  key=lambda c: -c["s"])[:3],
                "errors": [{"cell": c["index"], "error": c["error"][-1500:]} for c in cells if c["error"]],
                "stderr": [{"cell": c["index"], "text": c["stderr"][-500:]} for c in cells if c["stderr"].strip()],
                "console": lite_session.unexpected_console(visit.console),
                "offhost": visit.offhost[:5]}
    finally:
        visit.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--chapters", nargs="*", default=None, help="chapter names (default: every notebook)")
    parser.add_argument("--cell-timeout", type=float, default=900, help="seconds one cell may take")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    files = site / "lite" / "files"
    if not (site / "lite" / "jupyter-lite.json").exists():
        print(f"{site} has no Lite edition: run make book first")
        return 1
    chapters = args.chapters or sorted(p.stem for p in files.glob("*.ipynb"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    from playwright.sync_api import sync_playwright

    print(f"load before: {load()}", flush=True)
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lab_session.chromium_path(), args=lab_session.CHROMIUM_ARGS)
        try:
            for chapter in chapters:
                try:
                    result = run_chapter(browser, base, chapter, args.cell_timeout)
                except Exception as exc:  # a cell that never finished: say so, go on with the next chapter
                    result = {"chapter": chapter, "errors": [{"cell": None, "error": f"{type(exc).__name__}: {exc}"[:1500]}]}
                results.append(result)
                print(json.dumps(result, indent=1, ensure_ascii=False), f"(load {load()})", flush=True)
        finally:
            browser.close()
    httpd.shutdown()
    print(f"load after: {load()}")
    print(f"{'chapter':<16}{'kernel s':>10}{'run all s':>11}{'errors':>8}{'console':>9}")
    for r in results:
        print(f"{r['chapter']:<16}{r.get('kernel_idle_s', '-'):>10}{r.get('run_all_s', '-'):>11}"
              f"{len(r['errors']):>8}{len(r.get('console', [])):>9}")
    total = sum(r.get("run_all_s", 0) + r.get("kernel_idle_s", 0) for r in results)
    print(f"total {total:.0f} s")
    bad = [r for r in results if r["errors"] or r.get("console") or r.get("offhost")]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The JupyterLite edition (issue 37): from a chapter's launch button to its first executed cell,
cold and warm, and the bytes downloaded.

Headless Chromium (Debian's) opens a chapter page of the built site from a localhost server, every
other host unresolvable (``--host-resolver-rules``; requests to them are counted). Cold: a fresh browser context; press the page's "Open this chapter
as a notebook" button, time until the kernel is idle, then run the chapter's first code cell (its
imports: numpy, scipy, pandas, Altair, the widgets and the library load here) and time until it has
run. Warm: the same context (the browser's HTTP cache holds the files), the page opened and the
button pressed again. Bytes: ``received_mb``, the response bodies and headers the browser reports (from its cache too),
and ``served_mb``, what the server actually sent. The server sends ``Cache-Control: max-age=600`` as
GitHub Pages does.

Target (issue 37): launch → first executed cell ≤ 30 s cold on this machine. The machine's load
(``uptime``) is printed before and after.

Run: ``.venv/bin/python benchmarks/lite.py [--site _build/html] [--chapter admm]`` (``make book``
builds the site with its Lite edition).
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

TARGET_COLD_S = 30.0


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The site as GitHub Pages serves it: ten minutes of caching (``Cache-Control: max-age=600``),
    so the warm launch shows what a reader's browser keeps. (``http.server`` alone sends no caching
    header: every launch would download everything again.)"""

    sent = 0  # bytes of file bodies the server sent (what the browser did not take from its cache)

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def copyfile(self, source, outputfile):
        data = source.read()
        type(self).sent += len(data)
        outputfile.write(data)

    def log_message(self, *args):
        pass


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def launch(visit: lite_session.LiteChapter, url: str) -> dict:
    before, served = visit.bytes, _Handler.sent
    start = time.monotonic()
    kernel = visit.launch(url, timeout=300)
    first = next(i for i, c in enumerate(visit.cells()) if c["type"] == "code")
    out = visit.run(first, timeout=300)
    if out["error"]:
        raise RuntimeError(f"the first cell failed:\n{out['error'][-2000:]}")
    return {"kernel_idle_s": round(kernel, 1), "first_cell_s": round(time.monotonic() - start, 1),
            "first_cell_run_s": round(out["seconds"], 1), "received_mb": round((visit.bytes - before) / 1e6, 1),
            "served_mb": round((_Handler.sent - served) / 1e6, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--chapter", default="admm")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if not (site / "lite" / "jupyter-lite.json").exists():
        print(f"{site} has no Lite edition: run make book first")
        return 1
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/book/{args.chapter}.html"
    from playwright.sync_api import sync_playwright

    print(f"load before: {load()}")
    results = {}
    with sync_playwright() as p:
        # other hosts unresolvable (and counted), no request routing: Playwright's routing would turn the
        # browser's HTTP cache off, and the warm launch would measure nothing
        args = [*lab_session.CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
        browser = p.chromium.launch(executable_path=lab_session.chromium_path(), args=args)
        visit = lite_session.LiteChapter(browser, route=False)
        try:
            results["cold"] = launch(visit, url)
            results["warm"] = launch(visit, url)
            results["offhost_requests"] = len(visit.offhost)
        finally:
            visit.close()
            browser.close()
    httpd.shutdown()
    manifest = json.loads((site / "lite" / "dpadmm-lite.json").read_text())
    results["button_says_mb"] = round(manifest["download"] / 1e6, 1)
    results["target_cold_s"] = TARGET_COLD_S
    results["load_after"] = load()
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

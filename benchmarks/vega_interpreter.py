"""What the strict Content-Security-Policy costs the precomputed charts: Vega's expression interpreter
(``ast: true``, which the live pages need: their policy has no ``'unsafe-eval'``) against Vega's compiled
expressions, on the same page, in the same browser, one after the other.

For each page, headless Chromium (Debian's) opens the built site twice from localhost: as built, and with
the bundle's ``{ ast: true }`` turned off and the page's CSP ``<meta>`` removed (so that Vega may compile
its expressions with ``Function``). On each visit every slider of every precomputed chart is moved to
``--moves`` values in turn; a move is timed from the input event to the end of the view's next
``runAsync()`` (dataflow and SVG render), and the script prints the sum over the page's moves, the median
move, and their ratio, with the machine's load. Run: ``.venv/bin/python benchmarks/vega_interpreter.py
--site _build/html [--pages book/huang2019 ...]``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lab_session  # noqa: E402

MEASURE = """async (moves) => {
  const charts = [...document.querySelectorAll('.dpadmm-vega')].filter(d => d.__dpadmmView);
  const times = [];
  for (const chart of charts) {
    const view = chart.__dpadmmView;
    for (const input of chart.querySelectorAll('.vega-bindings input[type=range]')) {
      const lo = Number(input.min), hi = Number(input.max);
      for (let k = 1; k <= moves; k++) {
        const t0 = performance.now();
        input.value = String(lo + (hi - lo) * k / moves);
        input.dispatchEvent(new Event('input'));
        await view.runAsync();
        times.push(performance.now() - t0);
      }
    }
  }
  return times;
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def visit(browser, base: str, page: str, compiled: bool, moves: int) -> list[float]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    if compiled:
        def bundle(route):
            body = route.fetch().text().replace("{ ast: true }", "{ ast: false }")
            route.fulfill(body=body, content_type="application/javascript")

        def html(route):
            body = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", route.fetch().text())
            route.fulfill(body=body, content_type="text/html")

        context.route("**/vega-bundle.js", bundle)
        context.route(f"**/{page}.html", html)
    p = context.new_page()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.goto(f"{base}/{page}.html", wait_until="load")
    p.wait_for_function("() => [...document.querySelectorAll('.dpadmm-vega')].every("
                        "d => d.dataset.drawn === 'done' || d.dataset.drawn === 'failed')", timeout=120_000)
    times = p.evaluate(MEASURE, moves)
    context.close()
    if errors:
        raise RuntimeError(f"{page} ({'compiled' if compiled else 'interpreter'}): {errors[:3]}")
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--pages", nargs="*", default=["book/huang2019", "book/privacy", "book/cyffers2023"])
    parser.add_argument("--moves", type=int, default=6, help="values each slider is moved to")
    parser.add_argument("--rounds", type=int, default=3, help="visits of each kind per page, alternating")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(args.site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=lab_session.chromium_path(), args=lab_session.CHROMIUM_ARGS)
            for page in args.pages:
                print(f"{page}: load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
                runs = {"interpreter": [], "compiled": []}
                for _ in range(args.rounds):  # alternate, so that a drift of the load falls on both
                    for kind in runs:
                        runs[kind].append(visit(browser, base, page, kind == "compiled", args.moves))
                sums = {k: [sum(t) for t in v] for k, v in runs.items()}
                moves = {k: [x for t in v for x in t] for k, v in runs.items()}
                for kind in runs:
                    print(f"  {kind:11s}: {len(runs[kind][0])} moves a visit; sum per visit "
                          f"{', '.join(f'{s:.0f}' for s in sums[kind])} ms; median move {statistics.median(moves[kind]):.1f} ms")
                ratio = statistics.median(sums["interpreter"]) / statistics.median(sums["compiled"])
                print(f"  interpreter / compiled (median sums): {ratio:.2f}×")
            browser.close()
    finally:
        httpd.shutdown()
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

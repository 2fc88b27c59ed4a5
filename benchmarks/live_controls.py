"""Run by benchmarks/live_node.mjs inside Pyodide: each panel's Python run per control, in ms.

For every panel (or those named on the command line), from its defaults: each control set to three
new values in turn (30 %, 45 % and 60 % of a slider's range, on a log scale for a log slider; up to
three options of a drop-down), the median time of ``live.run_panel`` over the three. A drop-down's
first use of an option includes what that option builds once (a problem, its reference optimum).
"""

import math
import statistics
import time

from dpadmm_book import live

asked = list(globals().get("PANELS_ASKED", []))
for name, panel in live.PANELS.items():
    if asked and name not in asked:
        continue
    defaults = {c["name"]: c["value"] for c in panel["controls"]}
    live.run_panel(name, defaults)
    out = []
    for c in panel["controls"]:
        if c["kind"] == "select":
            values = [o[1] if isinstance(o, list) else o for o in c["options"]][:3]
        elif c["kind"] == "log":
            lo, hi = math.log10(c["min"]), math.log10(c["max"])
            values = [10 ** (lo + (hi - lo) * f) for f in (0.3, 0.45, 0.6)]
        else:
            values = [c["min"] + (c["max"] - c["min"]) * f for f in (0.3, 0.45, 0.6)]
            if c["kind"] == "int":
                values = [round(v) for v in values]
        times = []
        for value in values:
            start = time.perf_counter()
            live.run_panel(name, {**defaults, c["name"]: value})
            times.append(1000 * (time.perf_counter() - start))
        out.append(f"{c['name']} {statistics.median(times):.0f}")
    print(f"{name}: " + ", ".join(out) + " ms")

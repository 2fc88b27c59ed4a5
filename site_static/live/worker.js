// The Web Worker of the "Run live" panels (live.js starts it when the reader presses the button).
// Python runs here, in WebAssembly (Pyodide), so the page stays responsive. Every file comes from
// the site itself (pyodide/, written by tools/bookbuild/live.py); Pyodide checks each package's
// sha256 against pyodide/pyodide-lock.json as it loads it (the library's own wheel included).
//
// Messages in:  {type: "load"}, {type: "run", id, panel, values},
//               {type: "share", id, panel, values, share, shares, costs, assigned},
//               {type: "merge", id, panel, values, rows}
// Messages out: {type: "progress", step, of, text}, {type: "bytes", done}, {type: "ready", seconds, phases},
//               {type: "result", id, result, ms}, {type: "shared", id, rows, ms}, {type: "error", id, message}
// "share" runs one share of a panel's runs (dpadmm_book.live.run_share: the arena's field is split between two
// workers); "merge" assembles every share's rows into the panel's result (run_panel(..., shared=rows)).
// `phases`: the seconds of each loading step (start: Pyodide's core; packages: numpy, scipy and
// the library's wheel; import: `from dpadmm_book import live`), which the benchmark prints.
"use strict";
var base = self.location.href.replace(/[^/]*$/, "") + "pyodide/";
var call = null, share = null, merge = null;

function progress(step, text) { self.postMessage({ type: "progress", step: step, of: 4, text: text }); }

// The bytes of the files fetched so far (each file counts once it has arrived), for the page's progress bar and
// its estimate of the time left: {type: "bytes", done}.
var fetched = 0;
if (typeof PerformanceObserver === "function") {
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (entry) {
        fetched += entry.decodedBodySize || entry.encodedBodySize || entry.transferSize || 0;
      });
      self.postMessage({ type: "bytes", done: fetched });
    }).observe({ type: "resource", buffered: true });
  } catch (err) { /* no resource timing in this worker: the page shows the steps alone */ }
}

async function load() {
  var t0 = performance.now(), phases = {}, mark = t0;
  var lap = function (name) { var now = performance.now(); phases[name] = (now - mark) / 1000; mark = now; };
  progress(1, "starting Python (WebAssembly)");
  self.importScripts(base + "pyodide.js");
  var py = await self.loadPyodide({ indexURL: base, lockFileURL: base + "pyodide-lock.json", fullStdLib: false });
  lap("start");
  progress(2, "loading numpy, scipy and the book's library");
  await py.loadPackage(["dpadmm-lite"], { checkIntegrity: true, messageCallback: function () {} });
  lap("packages");
  progress(3, "importing the library");
  py.runPython([
    "import json",
    "from dpadmm_book import live as _live",
    "def _dpadmm_call(panel, values):",
    "    return json.dumps(_live.run_panel(panel, json.loads(values)))",
    "def _dpadmm_share(panel, values, share, shares, costs, assigned):",
    "    return json.dumps(_live.run_share(panel, json.loads(values), share, shares, json.loads(costs),",
    "                                      json.loads(assigned)), allow_nan=False)",
    "def _dpadmm_merge(panel, values, rows):",
    "    return json.dumps(_live.run_panel(panel, json.loads(values), shared=json.loads(rows)))",
  ].join("\n"));
  call = py.globals.get("_dpadmm_call");
  share = py.globals.get("_dpadmm_share");
  merge = py.globals.get("_dpadmm_merge");
  lap("import");
  progress(4, "first run");
  self.postMessage({ type: "ready", seconds: (performance.now() - t0) / 1000, phases: phases });
}

self.onmessage = function (event) {
  var msg = event.data;
  if (msg.type === "load") {
    load().catch(function (err) { self.postMessage({ type: "error", message: String(err && err.message || err) }); });
  } else if (msg.type === "run" || msg.type === "share" || msg.type === "merge") {
    try {
      var t0 = performance.now(), values = JSON.stringify(msg.values);
      if (msg.type === "share") {
        var rows = JSON.parse(share(msg.panel, values, msg.share, msg.shares, JSON.stringify(msg.costs || {}),
                                    JSON.stringify(msg.assigned || {})));
        self.postMessage({ type: "shared", id: msg.id, rows: rows, ms: performance.now() - t0 });
      } else {
        var result = JSON.parse(msg.type === "run" ? call(msg.panel, values)
                                                   : merge(msg.panel, values, JSON.stringify(msg.rows)));
        self.postMessage({ type: "result", id: msg.id, result: result, ms: performance.now() - t0 });
      }
    } catch (err) {
      self.postMessage({ type: "error", id: msg.id, message: String(err && err.message || err) });
    }
  }
};

// The Web Worker of the "Run live" panels (live.js starts it when the reader presses the button).
// Python runs here, in WebAssembly (Pyodide), so the page stays responsive. Every file comes from
// the site itself (pyodide/, written by tools/bookbuild/live.py); Pyodide checks each package's
// sha256 against pyodide/pyodide-lock.json as it loads it (the library's own wheel included).
//
// Messages in:  {type: "load"}, {type: "run", id, panel, values}
// Messages out: {type: "progress", step, of, text}, {type: "ready", seconds, phases},
//               {type: "result", id, result, ms}, {type: "error", id, message}
// `phases`: the seconds of each loading step (start: Pyodide's core; packages: numpy, scipy and
// the library's wheel; import: `from dpadmm_lite import live`), which the benchmark prints.
"use strict";
var base = self.location.href.replace(/[^/]*$/, "") + "pyodide/";
var call = null;

function progress(step, text) { self.postMessage({ type: "progress", step: step, of: 4, text: text }); }

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
    "from dpadmm_lite import live as _live",
    "def _dpadmm_call(panel, values):",
    "    return json.dumps(_live.run_panel(panel, json.loads(values)))",
  ].join("\n"));
  call = py.globals.get("_dpadmm_call");
  lap("import");
  progress(4, "first run");
  self.postMessage({ type: "ready", seconds: (performance.now() - t0) / 1000, phases: phases });
}

self.onmessage = function (event) {
  var msg = event.data;
  if (msg.type === "load") {
    load().catch(function (err) { self.postMessage({ type: "error", message: String(err && err.message || err) }); });
  } else if (msg.type === "run") {
    try {
      var t0 = performance.now();
      var result = JSON.parse(call(msg.panel, JSON.stringify(msg.values)));
      self.postMessage({ type: "result", id: msg.id, result: result, ms: performance.now() - t0 });
    } catch (err) {
      self.postMessage({ type: "error", id: msg.id, message: String(err && err.message || err) });
    }
  }
};

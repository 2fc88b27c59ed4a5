// The live panels' Python in Pyodide under Node, without a browser: where a redraw's run spends its time.
//
// Loads the built site's Pyodide core and verified wheels (numpy, scipy, threadpoolctl) from local files,
// copies the working tree's dpadmm_lite and dpadmm_book into Pyodide's file system (so a change is measured before a
// rebuild), and runs a Python file there: by default benchmarks/live_controls.py, which times every control
// of every panel. The browser benchmark (benchmarks/live.py) is the one that measures the targets; this one
// isolates the Python run from the worker, the messages and the drawing.
//
// Run: node benchmarks/live_node.mjs [--site _build/html] [python-file] [panel ...]
import fs from "fs";
import path from "path";
import { fileURLToPath, pathToFileURL } from "url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
let site = path.join(root, "_build", "html");
if (args[0] === "--site") { site = path.resolve(args[1]); args.splice(0, 2); }
const script = args[0] && args[0].endsWith(".py") ? args.shift() : path.join(root, "benchmarks", "live_controls.py");
const index = path.join(site, "_static", "live", "pyodide") + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(root, "tools/live-npm/node_modules/pyodide/pyodide.mjs")));
const py = await loadPyodide({ indexURL: index, packageCacheDir: index });
await py.loadPackage(["numpy", "scipy", "threadpoolctl"], { messageCallback: () => {} });
function copy(dir, dest) {
  py.FS.mkdirTree(dest);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "__pycache__") continue;
    const from = path.join(dir, e.name), to = dest + "/" + e.name;
    if (e.isDirectory()) copy(from, to); else py.FS.writeFile(to, fs.readFileSync(from));
  }
}
for (const pkg of ["dpadmm_lite", "dpadmm_book"]) copy(path.join(root, pkg), "/home/pyodide/lib/" + pkg);
py.setStdout({ batched: (s) => console.log(s) });
py.globals.set("PANELS_ASKED", py.toPy(args));
py.runPython("import sys; sys.path.insert(0, '/home/pyodide/lib')");
await py.runPythonAsync(fs.readFileSync(script, "utf8"));

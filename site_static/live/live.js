// "Run live": re-run a chapter's algorithm in the reader's browser (issue 23).
//
// Loaded only by the pages that have a live panel (site_static/_templates/layout.html, from
// html_context.dpadmm_live_pages in _config.yml), after config.js (written by
// tools/bookbuild/live.py: window.DPADMM_LIVE = the panels of dpadmm_book.live.PANELS and the
// bytes the button downloads). Opening the page downloads nothing more: no WebAssembly is fetched
// until the reader presses the button. Then worker.js starts Python (Pyodide) in a Web Worker,
// loads numpy, scipy and the book's library from the site itself, and each move of a control
// calls dpadmm_book.live.run_panel in Python. The chart is the chapter's static chart: its
// Vega-Lite spec without its precomputed sliders, drawn with the live rows (same fields).
//
// The panel (div.dpadmm-live) carries data-live-ready once it accepts input, data-live-runs (runs
// drawn), data-live-redraw-ms (the last move's time from input to drawn chart) and data-live-workers
// (1, or 2 once a second worker shares a splittable panel's runs: data-live-workers-seconds after the
// button was pressed; data-live-share-ms is each worker's time in Python for its share of the last
// split run); tests and the
// benchmark read them (the benchmark also data-live-phases, the worker's loading steps in s, and
// data-live-first-run-ms, the first run's time in Python). Fallback: without WebAssembly or Web Workers, or when loading takes more
// than LOAD_LIMIT_S, the panel says so and the precomputed chart above stays as it is.
(function () {
  "use strict";
  var LOAD_LIMIT_S = window.DPADMM_LIVE_LOAD_LIMIT_S || 90; // (the tests set a shorter limit)
  var script = document.currentScript;
  var page = script && script.dataset.page;
  var here = script ? script.src.replace(/[^/]*$/, "") : "";
  var config = window.DPADMM_LIVE;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) node.textContent = text;
    return node;
  }

  function megabytes(bytes) { return (bytes / 1e6).toFixed(1) + " MB"; }

  // "about 20 s left" from the bytes fetched so far and the time they took (nothing before 1 MB is in)
  function remaining(done, total, seconds) {
    if (done < 1e6 || seconds <= 0 || done >= total) return "";
    var left = (total - done) / (done / seconds);
    return left < 1.5 ? ", about a second left" : ", about " + (left < 10 ? Math.round(left) : 5 * Math.round(left / 5)) + " s left";
  }

  function canRun() { return typeof WebAssembly === "object" && typeof Worker === "function"; }

  // The chart's spec without its sliders: the layer that filters by them draws the live rows
  // (dataset "live", first drawn with `rows`), layers that only caption the sliders' values go.
  function liveSpec(spec, rows, title) {
    spec = JSON.parse(JSON.stringify(spec));
    var params = (spec.params || []).map(function (p) { return p.name; });
    var uses = function (obj) {
      var text = JSON.stringify(obj || "");
      return params.some(function (name) { return text.indexOf(name) >= 0; });
    };
    delete spec.params;
    delete spec.datasets;
    function strip(view) {
      var layers = view.layer || [view];
      var kept = [];
      layers.forEach(function (layer) {
        var filters = (layer.transform || []).filter(function (t) { return t.filter && uses(t.filter); });
        var others = (layer.transform || []).filter(function (t) { return !(t.filter && uses(t.filter)); });
        if (others.some(uses)) return; // a caption of the sliders' values
        if (filters.length) {
          layer.transform = others;
          layer.data = { name: "live" };
          kept.push(layer);
        } else {
          kept.push(layer);
        }
      });
      if (view.layer) view.layer = kept;
      else view.data = { name: "live" };
    }
    // one figure of several charts (one set of controls drives them all): every chart draws the live rows
    var views = spec.hconcat || spec.vconcat || spec.concat;
    if (views) views.forEach(strip);
    else strip(spec);
    spec.datasets = { live: rows };
    // the run's own setting where the panel gives one (result.title), else the static chart's title
    spec.title = (title || (typeof spec.title === "string" ? spec.title : "")) + " (live)";
    spec.description = spec.title;
    return spec;
  }

  function control(c, onChange) {
    var id = "dpadmm-live-" + c.name;
    var label = el("label", { for: id, class: "dpadmm-live-label" }, c.label);
    var input, readout = el("output", { for: id, class: "dpadmm-live-readout" });
    var value = function () { return c.value; };
    if (c.kind === "select") {
      input = el("select", { id: id, name: c.name });
      c.options.forEach(function (o) {
        var option = el("option", { value: o[1] }, o[0]);
        if (o[1] === c.value) option.selected = true;
        input.appendChild(option);
      });
      value = function () { return input.value; };
    } else if (c.kind === "log") {
      // the grid of log10 values through the starting value, out to the first notches at or beyond
      // min and max, which read as min and max (so both ends of the range are reachable)
      var at = Math.log10(c.value);
      var lo = at - Math.ceil((at - Math.log10(c.min)) / c.step - 1e-9) * c.step;
      var hi = at + Math.ceil((Math.log10(c.max) - at) / c.step - 1e-9) * c.step;
      // (max a hair beyond the last notch: lo + k·step may round above hi, and the browser would drop it)
      input = el("input", { id: id, name: c.name, type: "range", min: lo, max: hi + 1e-6 * c.step, step: c.step,
                            value: Math.log10(c.value) });
      value = function () {
        var v = Math.min(c.max, Math.max(c.min, Math.pow(10, Number(input.value))));
        return Number(v.toPrecision(3));
      };
    } else {
      input = el("input", { id: id, name: c.name, type: "range", min: c.min, max: c.max, step: 1, value: c.value });
      value = function () { return parseInt(input.value, 10); };
    }
    var show = function () { readout.textContent = c.kind === "select" ? "" : String(value()); };
    show();
    input.addEventListener("input", function () { show(); onChange(); });
    var row = el("div", { class: "dpadmm-live-control" });
    row.appendChild(label);
    row.appendChild(input);
    row.appendChild(readout);
    // a control that has no effect at the other controls' values (c.idle: {when: {control: [values]}, why}) is
    // disabled there, and its readout says why (Zhang & Zhu's ε when the non-private algorithm runs)
    var idle = function (values) {
      if (!c.idle) return;
      var off = Object.keys(c.idle.when).every(function (k) { return c.idle.when[k].indexOf(values[k]) >= 0; });
      input.disabled = off;
      row.classList.toggle("dpadmm-live-idle", off);
      if (off) readout.textContent = "no effect: " + c.idle.why;
      else show();
    };
    return { row: row, value: value, input: input, idle: idle };
  }

  function build(name, panel) {
    var target = document.querySelector('.dpadmm-vega[data-name="' + panel.chart.replace(/"/g, '\\"') + '"]');
    var specNode = target && document.querySelector('script.dpadmm-vega-spec[data-target="' + target.id + '"]');
    if (!target || !specNode) {  // the chapter's chart was renamed: dpadmm_book.live.PANELS must follow
      console.error("live panel " + name + ": this page has no chart named " + panel.chart);
      return;
    }
    var box = el("div", { class: "dpadmm-live", "data-live-panel": name });
    var intro = el("p", { class: "dpadmm-live-intro" });
    var button = el("button", { type: "button", class: "dpadmm-live-button" },
                    "Run live in your browser (downloads " + megabytes(config.download) +
                    ": Python, numpy and scipy in WebAssembly)");
    var status = el("p", { class: "dpadmm-live-status", role: "status", "aria-live": "polite" });
    var bar = el("progress", { max: String(config.download || 1), value: "0", hidden: "",
                               "aria-label": "Run live: loading" });
    intro.textContent = "The chart above filters runs computed when the book was built. Run live " +
      "re-runs the algorithm itself (the book's library, in Python) in this browser, " +
      "at the settings you choose; nothing leaves this site.";
    box.appendChild(intro);
    box.appendChild(button);
    box.appendChild(bar);
    box.appendChild(status);
    var holder = target.closest(".cell_output") || target.parentNode;
    holder.parentNode.insertBefore(box, holder.nextSibling);
    if (!canRun()) {
      button.disabled = true;
      status.textContent = "This browser cannot run the live panel (it has no WebAssembly or no Web Workers); " +
        "the precomputed chart above still works.";
      box.dataset.liveFallback = "unsupported";
      return;
    }
    button.addEventListener("click", function () { start(name, panel, box, button, bar, status, specNode, intro); });
  }

  function start(name, panel, box, button, bar, status, specNode, intro) {
    button.disabled = true;
    bar.hidden = false;
    var t0 = performance.now();
    var fetched = 0, fetchStarted = 0, step = { step: 1, of: 4, text: "starting Python (WebAssembly)" };
    // Loading: the step, and while the files come in, the megabytes fetched of the download and the time
    // left at the rate so far (the worker reports the bytes of each file as it arrives)
    var loading = function () {
      var text = "Loading (" + step.step + "/" + step.of + "): " + step.text;
      if (fetched > 0 && fetched < config.download) {
        text += " — " + megabytes(fetched) + " of " + megabytes(config.download) +
          remaining(fetched, config.download, (performance.now() - fetchStarted) / 1000);
      }
      status.textContent = text + " …";
      bar.value = Math.min(fetched, config.download || 0);
    };
    fetchStarted = t0;
    loading();
    var worker = new Worker(here + "worker.js");
    var ready = false, busy = false, pending = false, runs = 0, nextId = 0, movedAt = 0, startedAt = 0;
    var view = null, controls = [], shownTitle = null;
    // A panel whose runs can be split (the arena's field: panel.share) gets a second worker once the first has
    // fetched its files (they are then in the browser's cache). It joins when it has loaded and has run the
    // panel once at each drop-down option (building each problem); each move then runs half the runs in each
    // worker, on two cores at once, and the first worker assembles the result. Only where there are two cores
    // and (where the browser says) 4 GB of memory; without it, or if it fails, the first worker runs everything.
    var helper = null, helperReady = false, split = null, costs = {}, assigned = {};
    var canSplit = !!panel.share && (navigator.hardwareConcurrency || 1) >= 2 && (navigator.deviceMemory || 4) >= 4;
    var timer = setTimeout(function () {
      if (ready) return;
      worker.terminate();
      if (helper) helper.terminate();
      bar.hidden = true;
      box.dataset.liveFallback = "timeout";
      status.textContent = "Loading took longer than " + LOAD_LIMIT_S + " s and was stopped; the precomputed " +
        "chart above still works.";
    }, LOAD_LIMIT_S * 1000);
    var values = function () {
      var out = {};
      controls.forEach(function (c, i) { out[panel.controls[i].name] = c.value(); });
      return out;
    };
    var running = function (on) { // a re-run is under way: the chart says so (dimmed after 0.2 s, aria-busy)
      box.classList.toggle("dpadmm-live-running", on);
      chart.setAttribute("aria-busy", on ? "true" : "false");
    };
    var request = function () {
      if (busy) { pending = true; return; }
      busy = true;
      pending = false;
      running(true);
      startedAt = performance.now();
      var id = ++nextId, now = values();
      if (helperReady) {
        split = { id: id, values: now, rows: [null, null], ms: [0, 0] };
        [worker, helper].forEach(function (w, i) {
          w.postMessage({ type: "share", id: id, panel: name, values: now, share: i, shares: 2, costs: costs,
                          assigned: assigned });
        });
      } else {
        split = null;
        worker.postMessage({ type: "run", id: id, panel: name, values: now });
      }
    };
    var shared = function (msg, i) { // one worker's share of a split run: when both are in, the first assembles them
      if (!split || msg.id !== split.id) return; // a share of a run that was given up (the helper failed)
      split.rows[i] = msg.rows;
      msg.rows.forEach(function (row) { assigned[row.task + ":" + row.algorithm] = i; }); // runs stay where they ran
      split.ms[i] = Math.round(msg.ms);
      if (split.rows[0] && split.rows[1]) {
        box.dataset.liveShareMs = JSON.stringify(split.ms);
        worker.postMessage({ type: "merge", id: split.id, panel: name, values: split.values,
                             rows: split.rows[0].concat(split.rows[1]) });
      }
    };
    var joined = function () {
      helperReady = true;
      box.dataset.liveWorkers = "2";
      box.dataset.liveWorkersSeconds = ((performance.now() - t0) / 1000).toFixed(2);
    };
    var startHelper = function () {
      helper = new Worker(here + "worker.js");
      var warming = 0;
      helper.onmessage = function (event) {
        var msg = event.data;
        if (msg.type === "ready") { // first a run at every option of every drop-down (the other controls as they are
          // now): the helper builds each problem once, so that no move waits for it; then it takes shares
          var now = values();
          panel.controls.forEach(function (c) {
            if (c.kind !== "select") return;
            c.options.forEach(function (option) {
              var at = Object.assign({}, now);
              at[c.name] = Array.isArray(option) ? option[1] : option;
              warming += 1;
              helper.postMessage({ type: "run", id: -warming, panel: name, values: at });
            });
          });
          if (!warming) joined();
        } else if (msg.type === "result") {
          warming -= 1;
          if (!warming) joined();
        } else if (msg.type === "shared") {
          shared(msg, 1);
        } else if (msg.type === "error") {
          dropHelper("live panel, second worker: " + msg.message);
        }
      };
      helper.onerror = function (event) { dropHelper("live panel, second worker: " + (event.message || "worker error")); };
      helper.postMessage({ type: "load" });
    };
    var dropHelper = function (why) { // the first worker carries on alone; a split run under way is re-run there
      console.warn(why);
      helper.terminate();
      helperReady = false;
      box.dataset.liveWorkers = "1";
      if (split) {
        var id = split.id;
        split = null;
        worker.postMessage({ type: "run", id: id, panel: name, values: values() });
      }
    };
    var moved = function () { movedAt = performance.now(); settle(); request(); };
    var settle = function () { var now = values(); controls.forEach(function (c) { c.idle(now); }); };
    var summary = el("p", { class: "dpadmm-live-summary" });
    var chart = el("div", { class: "dpadmm-vega dpadmm-live-chart", "data-name": panel.chart + " (live)" });

    worker.onmessage = async function (event) {
      var msg = event.data;
      if (msg.type === "bytes") {
        fetched = msg.done;
        loading();
      } else if (msg.type === "progress") {
        step = msg;
        if (msg.step >= 3) fetched = config.download || fetched; // every file is in
        loading();
        if (msg.step === 3 && canSplit && !helper) startHelper(); // the files are fetched: the helper reads the cache
      } else if (msg.type === "shared") {
        shared(msg, 0);
      } else if (msg.type === "result") {
        if (msg.id !== nextId) return; // a run that was given up and re-run
        try {
          if (!view || (msg.result.title && msg.result.title !== shownTitle)) { // first draw, or a new setting in the title
            if (view) view.finalize();
            var drawn = liveSpec(JSON.parse(specNode.textContent), msg.result.rows, msg.result.title);
            // a phone's column: laid out for it (legend below, narrower plot), not shrunk to unreadable text
            var room = chart.clientWidth;
            if (room > 0 && room < 600 && window.dpadmmForColumn) drawn = window.dpadmmForColumn(drawn, room);
            var result = await window.vegaEmbed(chart, drawn, { actions: false, renderer: "svg" });
            view = result.view;
            shownTitle = msg.result.title;
          } else {
            view.data("live", msg.result.rows);
            await view.runAsync();
          }
        } catch (err) {
          status.textContent = "The live chart could not be drawn: " + err;
          console.error(err);
          busy = false; // the next move may draw again; the chart is not left marked busy
          running(false);
          return;
        }
        runs += 1;
        chart.__dpadmmView = view;
        Object.assign(costs, msg.result.costs || {});
        var took = split ? performance.now() - startedAt : msg.ms;
        summary.textContent = msg.result.summary + " · computed in " + Math.round(took) + " ms in your browser" +
          (split ? " by two workers" : "");
        split = null;
        box.dataset.liveRuns = String(runs);
        if (movedAt) box.dataset.liveRedrawMs = String(Math.round(performance.now() - movedAt));
        if (!ready) {
          ready = true;
          clearTimeout(timer);
          bar.hidden = true;
          // the button goes: keyboard focus moves into the panel, to its first control (not to the page body)
          var hadFocus = document.activeElement === button || document.activeElement === document.body;
          button.hidden = true;
          intro.textContent = "The chart above filters runs computed when the book was built. This panel " +
            "re-runs the algorithm itself (the book's library, in Python) in this browser, at the settings " +
            "you choose; nothing leaves this site.";
          if (hadFocus && controls.length) controls[0].input.focus();
          box.dataset.liveReadySeconds = ((performance.now() - t0) / 1000).toFixed(2);
          box.dataset.liveFirstRunMs = String(Math.round(msg.ms));
          box.setAttribute("data-live-ready", "");
          status.textContent = "Live: move a control and the algorithm re-runs here (ready in " +
            box.dataset.liveReadySeconds + " s).";
          box.dataset.liveWorkers = box.dataset.liveWorkers || "1";
        }
        busy = false;
        if (pending) request(); else running(false);
      } else if (msg.type === "ready") {
        box.dataset.livePhases = JSON.stringify(msg.phases || {});
        controls = panel.controls.map(function (c) { return control(c, moved); });
        var form = el("div", { class: "dpadmm-live-controls", role: "group", "aria-label": "live controls — " + panel.chart });
        controls.forEach(function (c) { form.appendChild(c.row); });
        box.appendChild(form);
        box.appendChild(chart);
        box.appendChild(summary);
        settle();
        request(); // the first run, at the controls' starting values
      } else if (msg.type === "error") {
        split = null;
        busy = false;
        running(false);
        status.textContent = "The live run failed: " + msg.message;
        if (!ready) {
          if (helper) helper.terminate();
          clearTimeout(timer);
          bar.hidden = true;
          box.dataset.liveFallback = "error";
        }
        console.error("live panel:", msg.message);
      }
    };
    worker.onerror = function (event) {
      status.textContent = "The live panel could not start: " + (event.message || "worker error") +
        "; the precomputed chart above still works.";
      box.dataset.liveFallback = "error";
      clearTimeout(timer);
    };
    worker.postMessage({ type: "load" });
  }

  function init() {
    if (!config || !page) return;
    Object.keys(config.panels).forEach(function (name) {
      if (config.panels[name].page === page) build(name, config.panels[name]);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

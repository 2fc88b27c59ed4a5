// One Vega-Lite chart in JupyterLab, drawn with the Vega bundle the kernel ships (no CDN).
//
// Model state: `spec` (the chart without its rows: datasets renamed dpadmm_d0, dpadmm_d1, …),
// `datasets` (name → rows) and `bundle` (a reference to the one VegaBundle widget of the kernel,
// whose `source` is Vega + Vega-Lite + vega-embed as one script, evaluated once per page).
// A new `spec` re-embeds the chart; new `datasets` alone are swapped into the live Vega view
// (a changeset per dataset), so a live panel redraws without compiling or re-embedding.
// A chart wider than its output area is laid out anew to fit it (fit.js: legends below, a row of
// charts wrapped), also when the area gets narrower later.
// (readouts.js and fit.js are prepended to this module by dpadmm_book.viz._widget.)

const LIBS = "__dpadmmVegaLibs";

async function vegaLibs(model) {
  const ref = model.get("bundle") || "";
  const version = model.get("bundle_version") || "?";
  const cache = (globalThis.__dpadmmVegaLoads = globalThis.__dpadmmVegaLoads || {});
  if (!cache[version]) {
    cache[version] = (async () => {
      const bundle = await model.widget_manager.get_model(ref.replace(/^IPY_MODEL_/, ""));
      const source = bundle.get("source") + `\nglobalThis[${JSON.stringify(LIBS + version)}] = globalThis.__dpadmmVegaLibs;`;
      const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      try {
        await import(/* webpackIgnore: true */ url);
      } finally {
        URL.revokeObjectURL(url);
      }
      return globalThis[LIBS + version];
    })();
    cache[version].catch(() => delete cache[version]); // a failed load may be retried
  }
  return cache[version];
}

function fullSpec(model, level) {
  const spec = dpadmmFitted(structuredClone(model.get("spec")), level);
  spec.datasets = structuredClone(model.get("datasets"));
  return spec;
}

function render({ model, el }) {
  el.classList.add("dpadmm-vega", "dpadmm-vega-lab");
  const target = document.createElement("div");
  el.appendChild(target);
  let result = null;
  let wantEmbed = true;
  let wantData = false;
  let queue = Promise.resolve();
  let renders = 0;
  let level = 0; // fit.js: the layout level drawn

  const showError = (error) => {
    target.textContent = "This chart could not be drawn: " + (error && error.message ? error.message : error);
    console.error(error);
  };

  async function apply() {
    if (!wantEmbed && !wantData) return;
    const start = performance.now();
    const libs = await vegaLibs(model);
    let kind = "data";
    if (wantEmbed || !result) {
      kind = "embed";
      wantEmbed = wantData = false;
      // The first layout that fits the output area (fit.js), from the one drawn last: a panel's
      // chart keeps its layout while the reader moves a control.
      for (;;) {
        if (result) result.finalize();
        result = await libs.vegaEmbed(target, fullSpec(model, level), { actions: false, renderer: "svg" });
        const room = dpadmmAvailableWidth(el);
        if (!room || dpadmmDrawnWidth(target) <= room + 1 || level + 1 >= dpadmmFitLevels(model.get("spec"))) break;
        level += 1;
      }
      dpadmmReadouts(target, result.view);
    } else {
      wantData = false;
      const view = result.view;
      const datasets = model.get("datasets");
      try {
        for (const [name, rows] of Object.entries(datasets)) {
          view.change(name, view.changeset().remove(() => true).insert(structuredClone(rows)));
        }
        await view.runAsync();
      } catch (error) { // a dataset Vega does not know: draw the chart anew
        console.debug("dpadmm: data swap failed, re-embedding", error);
        wantEmbed = true;
        return apply();
      }
    }
    renders += 1;
    el.__dpadmmView = result.view;
    el.dataset.renders = String(renders);
    el.dispatchEvent(new CustomEvent("dpadmm-chart-rendered", {
      bubbles: true, detail: { kind, ms: performance.now() - start, renders },
    }));
  }

  function schedule(kind) {
    if (kind === "spec") wantEmbed = true; else wantData = true;
    queue = queue.then(apply).catch(showError);
  }

  // The area got narrower (a side panel opened) or the chart was drawn before it was laid out:
  // draw it at the next level if it no longer fits.
  let lastRoom = 0;
  const resized = new ResizeObserver(() => {
    const room = dpadmmAvailableWidth(el);
    if (!result || !room || room === lastRoom) return;
    lastRoom = room;
    if (dpadmmDrawnWidth(target) > room + 1 && level + 1 < dpadmmFitLevels(model.get("spec"))) schedule("spec");
  });
  requestAnimationFrame(() => {
    const area = el.closest(".jp-OutputArea-output") || el.parentElement;
    if (area) resized.observe(area);
  });

  model.on("change:spec", () => schedule("spec"));
  model.on("change:datasets", () => schedule("data"));
  model.on("change:revision", () => { // the same chart again: nothing to draw, but say it is there
    queue = queue.then(() => el.dispatchEvent(new CustomEvent("dpadmm-chart-rendered", {
      bubbles: true, detail: { kind: "same", ms: 0, renders },
    })));
  });
  schedule("spec");
  return () => {
    resized.disconnect();
    if (result) result.finalize();
  };
}

export default { render };

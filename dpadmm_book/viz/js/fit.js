// Charts that fit the width they are given (JupyterLab: the output area).
//
// A chart wider than its output area would be cut at the area's edge (a legend on the right is the
// first to go). `dpadmmFitted(spec, level)` gives the chart's layout at a fitting `level`:
// 0 as written; 1 legends under their plots instead of beside them; from 2 on, a row of charts
// (`hconcat`) wrapped into rows of fewer charts each (n − 1, n − 2, …, 1). The chart widget
// (chart_widget.js) starts at level 0 and goes up a level while the drawing does not fit, also
// when its area gets narrower later; a panel's chart keeps its level across redraws (no layout
// jumping under the reader's slider). A chart that fits nowhere scrolls sideways in its own box.
function dpadmmFitLevels(spec) {
  const row = Array.isArray(spec.hconcat) ? spec.hconcat.length : 1;
  return 2 + Math.max(0, row - 1);
}

function dpadmmFitted(spec, level) {
  if (level <= 0) return spec;
  const out = { ...spec, config: { ...(spec.config || {}) } };
  out.config.legend = { ...(out.config.legend || {}), orient: "bottom", direction: "horizontal" };
  if (level >= 2 && Array.isArray(spec.hconcat)) {
    const columns = Math.max(1, spec.hconcat.length - (level - 1));
    delete out.hconcat;
    out.concat = spec.hconcat;
    out.columns = columns;
  }
  return out;
}

// The width a chart in `el` may take, in CSS pixels (0 while `el` is not laid out).
function dpadmmAvailableWidth(el) {
  const area = el.closest(".jp-OutputArea-output, .jp-RenderedHTMLCommon") || el.parentElement;
  if (!area) return 0;
  const style = getComputedStyle(area);
  return area.clientWidth - parseFloat(style.paddingLeft || "0") - parseFloat(style.paddingRight || "0");
}

// The width of the chart drawn in `target`.
function dpadmmDrawnWidth(target) {
  const svg = target.querySelector("svg, canvas");
  return svg ? svg.getBoundingClientRect().width : 0;
}

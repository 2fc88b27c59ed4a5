// Draws every Vega-Lite chart of the page with the Vega bundle the site serves itself
// (_static/vendor/vega-bundle.js): the published book makes no request to another host.
// Slider readouts show grid values (dpadmmReadouts, _static/vendor/dpadmm-readouts.js, shared
// with the JupyterLab chart widget). Each drawn chart keeps its Vega view as `__dpadmmView` and
// is marked data-drawn="done" (the site tests read both).
(function () {
  "use strict";
  function draw() {
    document.querySelectorAll("script.dpadmm-vega-spec").forEach(function (node) {
      var target = document.getElementById(node.dataset.target);
      if (!target || target.dataset.drawn) return;
      target.dataset.drawn = "1";
      var spec = JSON.parse(node.textContent);
      window.vegaEmbed(target, spec, { actions: false, renderer: "svg" }).then(function (result) {
        if (window.dpadmmReadouts) window.dpadmmReadouts(target, result.view);
        target.__dpadmmView = result.view;
        target.dataset.drawn = "done";
      }).catch(function (err) {
        target.textContent = "This chart could not be drawn: " + err;
        target.dataset.drawn = "failed";
        console.error(err);
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();

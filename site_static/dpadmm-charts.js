// Draws every Vega-Lite chart of the page with the Vega bundle the site serves itself
// (_static/vendor/vega-bundle.js): the published book makes no request to another host.
(function () {
  "use strict";
  function draw() {
    document.querySelectorAll("script.dpadmm-vega-spec").forEach(function (node) {
      var target = document.getElementById(node.dataset.target);
      if (!target || target.dataset.drawn) return;
      target.dataset.drawn = "1";
      var spec = JSON.parse(node.textContent);
      window.vegaEmbed(target, spec, { actions: false, renderer: "svg" }).catch(function (err) {
        target.textContent = "This chart could not be drawn: " + err;
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

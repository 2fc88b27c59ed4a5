// Draws every Vega-Lite chart of the page with the Vega bundle the site serves itself
// (_static/vendor/vega-bundle.js, loaded only by pages with a chart): the published book makes no
// request to another host. Slider readouts show grid values (dpadmmReadouts,
// _static/vendor/dpadmm-readouts.js, shared with the JupyterLab chart widget). Each drawn chart
// keeps its Vega view as `__dpadmmView` and is marked data-drawn="done" (the site tests read both).
//
// Narrow screens: a chart wider than its column may be scaled down only as far as its smallest
// text stays readable (MIN_TEXT_PX) and to no less than MIN_SCALE. A chart that needs more is
// drawn again for the column: side-by-side panels and facet columns stacked, legends below the
// plot, titles wrapped, plots narrowed (Vega-Lite then draws fewer ticks). If even that is wider
// than the column, the chart keeps its size and scrolls sideways in its box, with scroll
// shadows as the cue (.dpadmm-vega-scroll in dpadmm.css).
//
// Screen readers: the chart is named by its title (data-name, written by dpadmm_book._book, as
// Vega-Lite's `description`, which Vega makes the chart's aria-label) and described by the
// paragraph its aria-describedby points at. Each slider and drop-down is named by its label and
// its chart, so that two "ρ" sliders on one page can be told apart.
(function () {
  "use strict";
  // the smallest chart text a reader gets: 11 px on a desktop, 10 px on a phone (issue 35)
  var MIN_TEXT_PX = window.matchMedia && window.matchMedia("(max-width: 599px)").matches ? 10 : 11;
  var MIN_SCALE = 0.8;
  var MIN_PLOT_WIDTH = 140;
  var usedNames = {};

  function copy(value) { return JSON.parse(JSON.stringify(value)); }

  // A dataset written by columns (dpadmm_book._book.compact_datasets) as the rows it stands for.
  function rows(dataset) {
    if (!dataset || !dataset.dpadmm_columns) return dataset;
    var n = dataset.dpadmm_rows, columns = dataset.dpadmm_columns, out = new Array(n);
    for (var i = 0; i < n; i++) {
      var row = {};
      for (var c = 0; c < columns.length; c++) {
        var column = columns[c];
        row[column[0]] = column.length === 3 ? column[2][column[1][i]] : column[1][i];
      }
      out[i] = row;
    }
    return out;
  }

  function expand(spec) {
    if (spec.datasets) {
      Object.keys(spec.datasets).forEach(function (name) { spec.datasets[name] = rows(spec.datasets[name]); });
    }
    return spec;
  }

  function textWidth(text, size, weight) {
    var ctx = textWidth.ctx || (textWidth.ctx = document.createElement("canvas").getContext("2d"));
    ctx.font = (weight || "normal") + " " + size + "px sans-serif";
    return ctx.measureText(text).width;
  }

  // A title's lines wrapped at `room` px (Vega-Lite draws an array of strings as lines).
  function wrap(title, room, size, weight) {
    var lines = Array.isArray(title) ? title : [title];
    var out = [];
    lines.forEach(function (line) {
      var words = String(line).split(" "), current = "";
      words.forEach(function (word) {
        var next = current ? current + " " + word : word;
        if (current && textWidth(next, size, weight) > room) {
          out.push(current);
          current = word;
        } else {
          current = next;
        }
      });
      if (current) out.push(current);
    });
    return out.length === 1 ? out[0] : out;
  }

  function wrapTitle(view, key, room, size, weight) {
    var title = view[key];
    if (!title) return;
    if (typeof title === "string" || Array.isArray(title)) {
      view[key] = wrap(title, room, size, weight);
    } else if (typeof title === "object" && title.text) {
      title.text = wrap(title.text, room, size, weight);
      if (title.subtitle) title.subtitle = wrap(title.subtitle, room, size - 2, "normal");
    }
  }

  // The width a view asks for (its own, a layer's, or the theme's default).
  function askedWidth(view, config) {
    if (typeof view.width === "number") return view.width;
    var inner = (view.layer || [])[0] || view.spec;
    if (inner) return askedWidth(inner, config);
    return (config.view && config.view.continuousWidth) || 300;
  }

  // The spec for a column `room` px wide: panels side by side wrapped into `columns` per row (a
  // guess from their widths when not given), facet columns stacked with their labels above them,
  // legends below, titles wrapped, plots `plot` px wide at most. Returns {spec, columns}.
  function forColumn(spec, room, plot, columns) {
    var s = copy(spec);
    var config = (s.config = s.config || {});
    var titleSize = (config.title && config.title.fontSize) || 13;
    var wrapped = 0;
    config.legend = Object.assign({}, config.legend, { orient: "bottom", direction: "vertical" });
    if (config.view) {
      ["continuousWidth", "discreteWidth"].forEach(function (k) {
        if (typeof config.view[k] === "number") config.view[k] = Math.min(config.view[k], plot);
      });
    }
    (function walk(view) {
      if (!view || typeof view !== "object") return;
      if (Array.isArray(view.hconcat)) {
        var widest = Math.max.apply(null, view.hconcat.map(function (c) { return Math.min(askedWidth(c, config), plot); }));
        var fit = columns || Math.max(1, Math.floor(room / (widest + 10)));
        view.concat = view.hconcat;
        view.columns = Math.min(fit, view.hconcat.length);
        delete view.hconcat;
        wrapped = Math.max(wrapped, view.columns);
      } else if (Array.isArray(view.concat)) {
        view.columns = Math.min(view.columns || view.concat.length, columns || 1);
        wrapped = Math.max(wrapped, view.columns);
      }
      if (view.facet && view.spec) {
        if (view.facet.column && !view.facet.row) {
          // one row per panel, its label above it (as the column's was)
          view.facet = { row: Object.assign({}, view.facet.column, {
            header: Object.assign({}, view.facet.column.header, { labelOrient: "top", labelAngle: 0, labelAnchor: "middle" }),
          }) };
        } else if (!view.facet.row) {
          view.columns = 1;
        }
      }
      if (view.repeat && view.spec) {
        if (Array.isArray(view.repeat)) view.columns = 1;
        else if (view.repeat.column && !view.repeat.row) view.repeat = { row: view.repeat.column };
      }
      var enc = view.encoding;
      if (enc) {
        if (enc.column && !enc.row && !enc.facet) { enc.facet = enc.column; delete enc.column; view.columns = 1; }
        Object.keys(enc).forEach(function (k) {
          if (enc[k] && typeof enc[k].legend === "object" && enc[k].legend && enc[k].legend.orient) {
            enc[k].legend.orient = "bottom";
          }
        });
      }
      if (typeof view.width === "number") view.width = Math.min(view.width, plot);
      wrapTitle(view, "title", room - 10, titleSize, "bold");
      ["layer", "vconcat", "concat"].forEach(function (k) { (view[k] || []).forEach(walk); });
      walk(view.spec);
    })(s);
    return { spec: s, columns: wrapped };
  }

  // The live panels (live/live.js) lay their chart out for a narrow column the same way.
  window.dpadmmForColumn = function (spec, room) {
    return forColumn(spec, room, Math.max(MIN_PLOT_WIDTH, room - 80), 0).spec;
  };

  function smallestText(svg) {
    var smallest = Infinity;
    svg.querySelectorAll("text").forEach(function (t) {
      if (!t.textContent.trim()) return;
      var px = parseFloat(getComputedStyle(t).fontSize);
      if (px < smallest) smallest = px;
    });
    return smallest === Infinity ? 12 : smallest;
  }

  function naturalWidth(target) {
    var svg = target.querySelector("svg");
    return svg ? svg.width.baseVal.value : 0;
  }

  function nameControls(target) {
    var chart = target.dataset.name || "chart";
    target.querySelectorAll(".vega-bindings input, .vega-bindings select").forEach(function (input) {
      if (input.type === "radio") return; // each option is named by its own label
      var label = input.closest("label");
      var shown = label && label.querySelector(".vega-bind-name");
      var name = (shown ? shown.textContent : input.name).trim() + " — " + chart;
      usedNames[name] = (usedNames[name] || 0) + 1;
      if (usedNames[name] > 1) name += " (" + usedNames[name] + ")";
      input.setAttribute("aria-label", name);
    });
  }

  async function embed(target, spec) {
    target.textContent = "";
    return window.vegaEmbed(target, spec, { actions: false, renderer: "svg" });
  }

  async function drawOne(target, spec) {
    spec = copy(spec);
    if (!spec.description && target.dataset.name) spec.description = target.dataset.name;
    var room = target.clientWidth;
    var result = await embed(target, spec);
    var width = naturalWidth(target);
    var minScale = function () {
      return Math.max(MIN_SCALE, MIN_TEXT_PX / smallestText(target.querySelector("svg")));
    };
    if (room > 0 && width > room && room / width < minScale()) {
      // too wide to shrink: draw it for the column, narrowing the plots until it fits
      var plot = Math.max(MIN_PLOT_WIDTH, room - 80), columns = 0;
      for (var attempt = 0; attempt < 4; attempt++) {
        var narrow = forColumn(spec, room, plot, columns);
        result.finalize();
        result = await embed(target, narrow.spec);
        width = naturalWidth(target);
        if (width <= room) break;
        if (narrow.columns > 1) {
          columns = narrow.columns - 1; // fewer panels per row first
        } else if (plot > MIN_PLOT_WIDTH) {
          plot = Math.max(MIN_PLOT_WIDTH, plot - (width - room)); // then narrower plots
        } else {
          break;
        }
      }
      if (width > room && room / width < minScale()) {
        target.classList.add("dpadmm-vega-scroll");
        target.tabIndex = 0;
      }
    }
    return result;
  }

  function drawTarget(target, node) {
    target.dataset.drawn = "1";
    target.__dpadmmDrawing = drawOne(target, expand(JSON.parse(node.textContent))).then(function (result) {
      if (window.dpadmmReadouts) window.dpadmmReadouts(target, result.view);
      nameControls(target);
      target.__dpadmmView = result.view;
      target.dataset.drawn = "done";
    }).catch(function (err) {
      target.textContent = "This chart could not be drawn: " + err;
      target.dataset.drawn = "failed";
      console.error(err);
    });
    return target.__dpadmmDrawing;
  }

  function draw() {
    document.querySelectorAll("script.dpadmm-vega-spec").forEach(function (node) {
      var target = document.getElementById(node.dataset.target);
      if (!target || target.dataset.drawn) return;
      // a chart in a closed fold has no width yet: drawn now, and again for the column it gets
      // once the fold opens (the reproducibility page's evidence)
      var fold = target.closest("details:not([open])");
      if (fold) {
        fold.addEventListener("toggle", function redraw() {
          if (!fold.open) return;
          fold.removeEventListener("toggle", redraw);
          target.__dpadmmDrawing.then(function () {
            if (target.__dpadmmView) target.__dpadmmView.finalize();
            return drawTarget(target, node);
          });
        });
      }
      drawTarget(target, node);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();

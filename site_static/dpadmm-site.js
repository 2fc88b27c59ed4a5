// The site's own script on every page (the charts have dpadmm-charts.js).
//
// Buttons named apart from what they show: the theme names its search field "Search" while it
// shows "Search Ctrl+K", MyST-NB names its fold "Toggle hidden content" while it shows "Show code
// cell source"; a speech-input user says what they see. Such a name is dropped, so the button is
// named by its text (a button that shows no text keeps its name).
//
// Formulas on a narrow screen:
// MathJax cannot break a formula across lines, and the theme cuts an inline formula off at the
// column's edge (span.math hides its overflow). Here every formula wider than the room it has
// (an inline one wider than its line, a display one wider than the column) becomes a box that
// scrolls sideways (.dpadmm-math-scroll in dpadmm.css: scroll shadows show there is more) and
// takes a Tab stop, so the keyboard can scroll it too. Formulas that fit are left alone: MathJax
// runs without its menu, so they are not Tab stops. Measured again when the window is resized
// or a folded part of the page (a solution) opens.
(function () {
  "use strict";
  var SCROLL = "dpadmm-math-scroll";

  // The box that scrolls a formula: the theme's span.math around an inline formula, the
  // formula itself otherwise (a display formula, an inline one without the span).
  function scrollBox(container) {
    var parent = container.parentElement;
    if (container.getAttribute("display") !== "true" && parent && parent.matches("span.math")) return parent;
    return container;
  }

  function fit(root) {
    (root || document).querySelectorAll("mjx-container").forEach(function (container) {
      var box = scrollBox(container);
      var math = container.querySelector("mjx-math");
      if (!math || !box.getClientRects().length) return; // folded away: measured when it opens
      var wasWide = box.classList.contains(SCROLL);
      box.classList.remove(SCROLL);
      var wide = math.getBoundingClientRect().width > box.clientWidth + 1;
      if (wide) {
        box.classList.add(SCROLL);
        if (!box.hasAttribute("tabindex")) {
          box.tabIndex = 0;
          box.dataset.dpadmmTab = "1";
        }
      } else if (wasWide && box.dataset.dpadmmTab) {
        box.removeAttribute("tabindex");
        delete box.dataset.dpadmmTab;
      }
    });
  }

  var pending = null;
  function later() {
    clearTimeout(pending);
    pending = setTimeout(function () { fit(document); }, 150);
  }

  function namesMatchText() {
    document.querySelectorAll("button[aria-label], summary[aria-label]").forEach(function (el) {
      var text = (el.innerText || "").replace(/\s+/g, " ").trim().toLowerCase();
      if (text && el.getAttribute("aria-label").toLowerCase().indexOf(text) < 0) el.removeAttribute("aria-label");
    });
  }

  function start() {
    namesMatchText();
    var mathjax = window.MathJax;
    if (!mathjax || !mathjax.startup || !mathjax.startup.promise) return; // a page without math
    mathjax.startup.promise.then(function () {
      fit(document);
      window.addEventListener("resize", later);
      // <details> (folded solutions) and the theme's dropdowns: measure what they show when opened
      document.addEventListener("toggle", function (event) { fit(event.target); }, true);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

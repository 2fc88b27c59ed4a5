// Slider readouts that show the grid value, not the slider's position.
//
// The book's sweep charts slide over the *index* of the grid (0, 1, …, n − 1: an integer step
// reaches every value, whatever the grid) and keep the label of each position in a companion
// signal `<param>__labels` (dpadmm_book.viz.sweep_chart). Vega shows the raw signal next to a
// range input; this shows the label instead. Shared by the static site (a classic script: a
// global function) and the JupyterLab chart widget (concatenated into its ES module).
function dpadmmReadouts(container, view) {
  container.querySelectorAll('input[type="range"][name]').forEach(function (input) {
    var labels;
    try {
      labels = view.signal(input.name + "__labels");
    } catch (err) {
      return; // a slider of another kind of chart: Vega's readout stays
    }
    if (!Array.isArray(labels)) return;
    var readout = input.nextElementSibling;
    var show = function () {
      var label = labels[Math.round(+input.value)];
      if (label === undefined) return;
      if (readout) {
        readout.textContent = label;
        readout.classList.add("dpadmm-readout");
      }
      input.setAttribute("aria-valuetext", label);
    };
    input.addEventListener("input", show);
    input.addEventListener("change", show);
    view.addSignalListener(input.name, function () { Promise.resolve().then(show); });
    show();
  });
}

// The theme's header buttons on the pages with a Content-Security-Policy (the "Run live" pages):
// the policy blocks inline event handlers, so the build (tools/bookbuild/csp.py) turns the
// theme's onclick="window.print()" and onclick="toggleFullScreen()" into data-dpadmm-click
// attributes, and this file does what they did.
(function () {
  "use strict";
  var ACTIONS = {
    print: function () { window.print(); },
    fullscreen: function () { if (window.toggleFullScreen) window.toggleFullScreen(); }
  };
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-dpadmm-click]");
    var action = button && ACTIONS[button.getAttribute("data-dpadmm-click")];
    if (action) action();
  });
})();

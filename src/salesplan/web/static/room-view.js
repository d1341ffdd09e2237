// A buyer's room counts a view when a browser shows it (contract §16): the page posts its
// hidden form once, in the background. A GET never counts one, so link scanners and
// unfurlers that fetch the page (and run no scripts, or hold no room session) count nothing.
(function () {
  "use strict";
  var form = document.getElementById("room-view");
  if (!form) {
    return;
  }
  var body = new URLSearchParams(new FormData(form));
  if (navigator.sendBeacon && navigator.sendBeacon(form.action, body)) {
    return;
  }
  fetch(form.action, { method: "POST", body: body, credentials: "same-origin", keepalive: true });
})();

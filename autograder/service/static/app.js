// Live status of one submission: server-sent events, or polling where those are blocked.
// Only text is written into the page (textContent), never HTML.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var api = live.getAttribute("data-api");
  var status = document.getElementById("status");
  function done(s) { return s === "graded" || s === "error"; }
  function show(d) {
    var text = d.status;
    if (d.status === "queued" && d.position) {
      var about = d.wait_s > 0 ? ", about " + (d.wait_s < 90 ? d.wait_s + " s" : Math.round(d.wait_s / 60) + " min") +
        " to wait" : "";
      var why = d.waiting_for ? "; waiting for " + d.waiting_for : "";
      text += " (place " + d.position + " in the queue" + about + why + ")";
    }
    status.textContent = text;
    if (done(d.status)) { window.location.reload(); }
  }
  function poll() {
    fetch(api, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (d) {
        show(d);
        // the server's pace: less often far back in a long queue (poll_s), at least every 2 s near the front
        if (!done(d.status)) { setTimeout(poll, 1000 * Math.min(10, Math.max(2, d.poll_s || 2))); }
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  if (window.EventSource && !/[?&]poll=1/.test(window.location.search)) {
    var es = new EventSource(api + "/events");
    es.addEventListener("status", function (e) {
      var d = JSON.parse(e.data);
      if (done(d.status)) { es.close(); }
      show(d);
    });
    es.onerror = function () { es.close(); poll(); };
  } else {
    poll();
  }
})();

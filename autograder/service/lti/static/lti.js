// LTI launch steps: the platform's client-side storage (postMessage), the forms that post themselves,
// and the "close" message after dynamic registration. Only text is written into the page.
(function () {
  "use strict";
  function say(text) { var s = document.getElementById("lti-status"); if (s) { s.textContent = text; } }
  function platformFrame(target) {
    var host = window.parent !== window ? window.parent : window.opener;
    if (!host) { return null; }
    if (!target || target === "_parent") { return host; }
    try { return host.frames[target] || host; } catch (e) { return host; }
  }
  // One request to the platform's storage frame; calls back with the answer's value (null on error/timeout).
  function ask(target, origin, message, done) {
    var frame = platformFrame(target);
    if (!frame) { done(null); return; }
    var id = "tg-" + Math.random().toString(36).slice(2);
    message.message_id = id;
    var finished = false;
    function listener(e) {
      if (e.origin !== origin || !e.data || e.data.message_id !== id) { return; }
      finished = true;
      window.removeEventListener("message", listener);
      done(e.data.error ? null : e.data.value);
    }
    window.addEventListener("message", listener);
    frame.postMessage(message, origin);
    setTimeout(function () { if (!finished) { window.removeEventListener("message", listener); done(null); } }, 5000);
  }
  var login = document.getElementById("lti-login");
  if (login) {
    var st = login.getAttribute("data-state");
    ask(login.getAttribute("data-target"), login.getAttribute("data-origin"),
        { subject: "lti.put_data", key: "tg_state_" + st, value: st }, function (v) {
          if (v === null) { say("The LMS's page did not keep the sign-in state. Open torchgrader in a new window from the course page."); return; }
          window.location.replace(login.getAttribute("data-auth"));
        });
  }
  var finish = document.getElementById("lti-finish");
  if (finish) {
    if (finish.getAttribute("data-mode") === "storage") {
      var s2 = finish.getAttribute("data-state");
      ask(finish.getAttribute("data-target"), finish.getAttribute("data-origin"),
          { subject: "lti.get_data", key: "tg_state_" + s2 }, function (v) {
            finish.elements.proof.value = v || "";
            finish.submit();
          });
    } else {
      finish.submit();
    }
  }
  var auto = document.querySelector("form[data-autosubmit]");
  if (auto) { auto.submit(); }
  if (document.querySelector("[data-lti-close]")) {
    var to = window.opener || (window.parent !== window ? window.parent : null);
    if (to) { to.postMessage({ subject: "org.imsglobal.lti.close" }, "*"); }
  }
}());

// The login page: a plain form POST to /login (the server sets the session
// cookie and sends the browser to /jobs). This module only says why a
// previous try failed, and skips the form for a browser already logged in.
import { $, session } from "/web/common.js";

const q = new URLSearchParams(location.search);
if (q.has("error")) {
  $("status").textContent = q.get("error") === "busy"
    ? "Too many failed logins lately: wait a few seconds, then try again."
    : "Wrong password: the server did not accept it. Try again.";
  $("password").setAttribute("aria-invalid", "true");
}
$("password").focus();
session().then((s) => {
  const next = q.get("next") || "";
  // only a path of this server: never another site (an open redirect)
  if (s.organizer) location.replace(/^\/(?![\/\\])/.test(next) ? next : "/jobs");
}).catch(() => { /* the form works without it */ });

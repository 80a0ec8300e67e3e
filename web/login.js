// The login page: the form POSTs the password to /login, which sets the
// session cookie and answers 303 to /jobs (or back to /login?error=…).
// This module sends the form with fetch (the same request; the page then
// says a wrong password without a reload) and falls back to the plain
// form post; it also skips the form for a browser already logged in.
import { $, session } from "/web/common.js";

const q = new URLSearchParams(location.search);
const form = $("login");
const words = {
  busy: "Too many failed logins lately: wait a few seconds, then try again.",
  wrong: "Wrong password: the server did not accept it. Try again.",
};

function fail(text) {
  $("status").textContent = text;
  $("password").setAttribute("aria-invalid", "true");
  $("password").focus();
}

// next is where to go after the login: only a path of this server, never
// another site (an open redirect).
const next = /^\/(?![/\\])/.test(q.get("next") || "") ? q.get("next") : "/jobs";

if (q.has("error")) fail(q.get("error") === "busy" ? words.busy : words.wrong);
else $("password").focus();

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("status").textContent = "Logging in…";
  let resp;
  try {
    resp = await fetch("/login", { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin" });
  } catch {
    form.submit(); // the plain form post says what went wrong
    return;
  }
  const to = new URL(resp.url);
  if (to.pathname === "/login" && to.searchParams.has("error")) {
    form.reset();
    fail(to.searchParams.get("error") === "busy" ? words.busy : words.wrong);
  } else if (resp.ok && to.pathname !== "/login") {
    location.assign(next);
  } else {
    fail(`The server refused the login: ${resp.status} ${(await resp.text()).trim().slice(0, 300)}`);
  }
});

session().then((s) => {
  if (s.organizer) location.replace(next);
}).catch(() => { /* the form works without it */ });

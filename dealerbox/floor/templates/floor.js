"use strict";
// The page is drawn by the server; its stream (/events/page) sends the
// pieces that change, as HTML rendered by the server, by element id.
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const grid = document.getElementById("grid");
const alertlist = document.getElementById("alertlist");
const bridges = document.getElementById("bridges");
const conn = document.getElementById("conn");

function fragment(html) {
  const t = document.createElement("template");
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}
function byKey(a, b) {
  return typeof a === "number" ? a - b : String(a).localeCompare(String(b));
}
function upsert(container, d) {
  const el = fragment(d.html);
  const old = document.getElementById(d.id);
  if (old) { old.replaceWith(el); return; }
  const key = typeof d.key === "number" ? d.key : String(d.key);
  for (const sibling of container.children) {
    const k = typeof d.key === "number" ? Number(sibling.dataset.key) : sibling.dataset.key;
    if (byKey(k, key) > 0) { container.insertBefore(el, sibling); return; }
  }
  container.appendChild(el);
}
function count() {
  document.getElementById("count").textContent = "(" + alertlist.children.length + ")";
}
function ages() {
  for (const el of document.querySelectorAll(".age[data-since]")) {
    const since = Date.parse(el.dataset.since);
    if (isNaN(since)) continue;
    const s = Math.max(0, (Date.now() - since) / 1000);
    el.textContent = s < 120 ? Math.round(s) + " s" : Math.round(s / 60) + " min";
  }
}
function signedOut() { location.assign("/login"); }

const es = new EventSource("/events/page");
es.addEventListener("open", () => { conn.textContent = "live"; });
es.addEventListener("error", () => {
  if (es.readyState === EventSource.CLOSED) signedOut(); else conn.textContent = "reconnecting";
});
es.addEventListener("signedout", () => { es.close(); signedOut(); });
es.addEventListener("snapshot", e => {
  const d = JSON.parse(e.data);
  grid.innerHTML = d.grid; alertlist.innerHTML = d.alerts; bridges.innerHTML = d.bridges; count(); ages();
});
es.addEventListener("bridges", e => { bridges.innerHTML = JSON.parse(e.data).html; ages(); });
es.addEventListener("tile", e => { upsert(grid, JSON.parse(e.data)); ages(); });
es.addEventListener("alert", e => { upsert(alertlist, JSON.parse(e.data)); count(); });
es.addEventListener("cleared", e => {
  const el = document.getElementById(JSON.parse(e.data).id);
  if (el) el.remove();
  count();
});

// Clearing: a note, the session's CSRF token, JSON (never a form another site could send).
alertlist.addEventListener("submit", async ev => {
  const form = ev.target.closest("form.clear");
  if (!form) return;
  ev.preventDefault();
  const msg = form.querySelector(".msg");
  msg.textContent = "";
  const note = form.querySelector(".note").value.trim();
  const r = await fetch("/api/alerts/" + form.dataset.alert + "/clear", {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
    body: JSON.stringify({note: note})});
  if (r.status === 401) { signedOut(); return; }
  if (!r.ok) {
    let why = r.statusText;
    try { why = (await r.json()).error; } catch (e) { /* not JSON */ }
    msg.textContent = why;
  }
});
setInterval(ages, 5000);

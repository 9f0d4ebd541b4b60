"use strict";
// The page is drawn by the server; its stream (/events/page) sends the
// pieces that change, as HTML rendered by the server, by element id. A tile
// goes to its pit (data-pit, "" for the unplaced ones); its place in the pit is
// its row-N col-N classes. Alerts are kept floor calls first, then the oldest.
const csrf = document.querySelector('meta[name="csrf-token"]').content;
const grid = document.getElementById("grid");
const unplaced = document.getElementById("pit-unplaced");
const alertlist = document.getElementById("alertlist");
const bridges = document.getElementById("bridges");
const conn = document.getElementById("conn");

function fragment(html) {
  const t = document.createElement("template");
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}
function insertSorted(container, el, before) {
  for (const sibling of container.children) {
    if (before(el, sibling)) { container.insertBefore(el, sibling); return; }
  }
  container.appendChild(el);
}
function pitOf(name) {
  // The pit's section as the server drew it; a pit new since then: the unplaced tables.
  for (const section of grid.querySelectorAll("section.pit-group")) {
    if (section.dataset.pit === name) return section;
  }
  return unplaced;
}
function tileBefore(a, b) {
  const ra = Number(a.dataset.row), rb = Number(b.dataset.row);
  if (ra !== rb) return ra < rb;
  const ca = Number(a.dataset.col), cb = Number(b.dataset.col);
  if (ca !== cb) return ca < cb;
  return a.dataset.key.localeCompare(b.dataset.key) < 0;
}
function alertBefore(a, b) {
  const sa = Number(a.dataset.severity), sb = Number(b.dataset.severity);
  if (sa !== sb) return sa < sb;
  return Number(a.dataset.raised) < Number(b.dataset.raised);
}
function placeTile(el) {
  const old = document.getElementById(el.id);
  const section = pitOf(el.dataset.pit);
  if (old && old.parentElement === section.querySelector(".pit-tables")) {
    const open = old.querySelector("details[open]");
    if (open) el.querySelector("details").open = true;  // the technician's detail stays open
    old.replaceWith(el);
    return;
  }
  if (old) old.remove();
  section.hidden = false;
  insertSorted(section.querySelector(".pit-tables"), el, tileBefore);
}
function tiles(html) {
  const t = document.createElement("template");
  t.innerHTML = html;
  for (const el of [...t.content.querySelectorAll("article.table")]) placeTile(el);
}
function upsertAlert(d) {
  const el = fragment(d.html);
  const old = document.getElementById(d.id);
  if (old) old.remove();
  insertSorted(alertlist, el, alertBefore);
}
function count() {
  document.getElementById("count").textContent = "(" + alertlist.children.length + ")";
}
function ages() {
  for (const el of document.querySelectorAll(".age[data-since]")) {
    const since = Date.parse(el.dataset.since);
    if (isNaN(since)) continue;
    const s = Math.max(0, (Date.now() - since) / 1000);
    // As the server words it (app.py's _age): seconds, minutes, then hours and minutes.
    const m = Math.round(s / 60);
    el.textContent = s < 120 ? Math.round(s) + " s" : m < 120 ? m + " min"
      : Math.floor(m / 60) + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
  }
}
function signedOut() { location.assign("/login"); }

const es = new EventSource("/events/page");
// The stream's state in the page's language (the template tells it: floor.js is a template).
const LIVE = {{ _("live") | tojson }}, RECONNECTING = {{ _("reconnecting") | tojson }};
es.addEventListener("open", () => { conn.textContent = LIVE; });
es.addEventListener("error", () => {
  if (es.readyState === EventSource.CLOSED) signedOut(); else conn.textContent = RECONNECTING;
});
es.addEventListener("signedout", () => { es.close(); signedOut(); });
es.addEventListener("snapshot", e => {
  const d = JSON.parse(e.data);
  tiles(d.grid); alertlist.innerHTML = d.alerts; bridges.innerHTML = d.bridges; count(); ages();
});
es.addEventListener("bridges", e => { bridges.innerHTML = JSON.parse(e.data).html; ages(); });
es.addEventListener("tile", e => { placeTile(fragment(JSON.parse(e.data).html)); ages(); });
es.addEventListener("alert", e => { upsertAlert(JSON.parse(e.data)); count(); ages(); });
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

"""The floor view's web page: one self-contained HTML document."""

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>dealerbox floor</title>
<style>
body { font-family: sans-serif; background: #111; color: #eee; margin: 1em; }
h1 { font-size: 1.3em; margin: 0 0 .5em 0; }
#conn { font-size: .8em; color: #aaa; }
#grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(11em, 1fr)); gap: .6em; }
.table { border-radius: .4em; padding: .5em; color: #000; min-height: 5.5em; }
.table .id { font-weight: bold; font-size: 1.2em; }
.table .what, .table .meta { font-size: .85em; }
.green { background: #3c3; } .amber { background: #fb3; } .grey { background: #777; }
.red { background: #e22; color: #fff; animation: blink 1s steps(1) infinite; }
@keyframes blink { 50% { background: #600; } }
#alerts { margin-top: 1em; }
.alert { background: #322; border-left: .4em solid #e22; padding: .4em; margin: .3em 0; }
.alert button { margin-left: 1em; }
</style></head>
<body>
<h1>dealerbox floor <span id="conn">connecting</span></h1>
<div id="grid"></div>
<div id="alerts"><h2>Alerts <span id="count"></span></h2>
<label>Your name <input id="who" size="16"></label><div id="alertlist"></div></div>
<script>
const tables = new Map(); const alerts = new Map();
function age(since) {
  if (!since) return "";
  const s = Math.max(0, (Date.now() - Date.parse(since)) / 1000);
  return s < 120 ? Math.round(s) + " s" : Math.round(s / 60) + " min";
}
function text(el, cls, value) { const d = document.createElement("div"); d.className = cls; d.textContent = value; el.appendChild(d); }
function drawTables() {
  const grid = document.getElementById("grid"); grid.textContent = "";
  for (const t of [...tables.values()].sort((a, b) => a.table.localeCompare(b.table))) {
    const el = document.createElement("div"); el.className = "table " + t.colour; el.id = "table-" + t.table;
    text(el, "id", t.table);
    text(el, "what", t.online ? (t.open ? t.open.irregularity + " (" + age(t.open.since) + ")" : (t.phase || "")) : "offline");
    text(el, "meta", "seq " + t.last_seq + (t.backlog ? ", backlog " + t.backlog : "") + (t.clock_ok === false ? ", clock!" : ""));
    grid.appendChild(el);
  }
}
function drawAlerts() {
  const list = document.getElementById("alertlist"); list.textContent = "";
  document.getElementById("count").textContent = "(" + alerts.size + ")";
  for (const a of [...alerts.values()].sort((x, y) => x.id - y.id)) {
    const el = document.createElement("div"); el.className = "alert"; el.id = "alert-" + a.id;
    el.textContent = a.table + " " + a.kind + ": " + a.text + " (since " + new Date(a.raised * 1000).toLocaleTimeString() + ") ";
    const b = document.createElement("button"); b.textContent = "Clear";
    b.onclick = () => clearAlert(a.id); el.appendChild(b); list.appendChild(el);
  }
}
async function clearAlert(id) {
  const who = document.getElementById("who").value.trim();
  if (!who) { alert("Enter your name first"); return; }
  await fetch("/api/alerts/" + id + "/clear", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({who: who})});
}
const es = new EventSource("/events");
es.addEventListener("open", () => { document.getElementById("conn").textContent = "live"; });
es.addEventListener("error", () => { document.getElementById("conn").textContent = "reconnecting"; });
es.addEventListener("snapshot", e => {
  const d = JSON.parse(e.data); tables.clear(); alerts.clear();
  for (const t of d.tables) tables.set(t.table, t);
  for (const a of d.alerts) alerts.set(a.id, a);
  drawTables(); drawAlerts();
});
es.addEventListener("tables", e => { for (const t of JSON.parse(e.data).tables) tables.set(t.table, t); drawTables(); });
es.addEventListener("alert", e => { const a = JSON.parse(e.data).alert; alerts.set(a.id, a); drawAlerts(); });
es.addEventListener("cleared", e => { alerts.delete(JSON.parse(e.data).alert.id); drawAlerts(); });
setInterval(drawTables, 5000);
</script></body></html>
"""

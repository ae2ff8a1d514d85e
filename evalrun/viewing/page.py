"""The report page's own style and script (no CDN: the page works from a CI artifact, offline).

The script only reads `data-*` attributes and text the server-side renderer escaped; it never
builds HTML from strings, and the page's Content-Security-Policy lets no other script run (its
sha256 is the only one allowed), so an answer that slipped past escaping still could not execute.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root{--bad:#b42318;--good:#067647;--warn:#b54708;--muted:#667085;--line:#d0d5dd}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;max-width:1200px;
padding:1.5em;color:#101828}
h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.2em;margin:1.4em 0 .5em;
border-bottom:1px solid var(--line)}h4{margin:.8em 0 .2em;font-size:.95em}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:.6em 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.badges span{display:inline-block;margin:2px 6px 2px 0;padding:1px 8px;border-radius:10px;
background:#f2f4f7}
.st-passed{color:var(--good)}.st-failed{color:var(--bad)}.st-error{color:var(--warn)}
.st-not-run{color:var(--muted)}.garbled{color:#6941c6;font-weight:600}
.verdict{font-size:1.1em;font-weight:600}.pass{color:var(--good)}.fail{color:var(--bad)}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;padding:6px 8px;background:#f9fafb;
border:1px solid #eaecf0;border-radius:4px;max-height:28em;overflow:auto;font-size:12.5px;
unicode-bidi:isolate}
.cc{color:#c01048;background:#fff1f3;border-radius:3px;font-size:11px}
.gap{display:block;color:var(--muted);font-style:italic;margin:2px 0}
.needle{background:#fef7c3}
form#filters{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;padding:8px;
background:#f9fafb;border:1px solid var(--line);border-radius:6px;position:sticky;top:0;z-index:1}
form#filters input[type=search]{min-width:16em}
#shown{color:var(--muted)}
details.item{border-bottom:1px solid #eaecf0}
details.item>summary{display:grid;grid-template-columns:10em 8em 11em 5em 5em minmax(0,1fr);
gap:8px;padding:4px 2px;cursor:pointer;list-style:none}
details.item>summary::-webkit-details-marker{display:none}
details.item[open]>summary{background:#f2f4f7}
details.item>summary>span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.item-body{padding:4px 6px 14px 18px}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.meta{color:var(--muted)}
[hidden]{display:none !important}
svg text{font:11px system-ui,sans-serif;fill:#475467}
"""

SCRIPT = """
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll("details.item"));
  var form = document.getElementById("filters");
  if (!form) { return; }
  form.hidden = false;
  var q = document.getElementById("f-search");
  var cat = document.getElementById("f-category");
  var st = document.getElementById("f-status");
  var dg = document.getElementById("f-diagnosis");
  var gb = document.getElementById("f-garbled");
  var fl = document.getElementById("f-flipped");
  var shown = document.getElementById("shown");
  var texts = items.map(function (d) { return d.textContent.toLowerCase(); });
  function has(list, word) { return (" " + list + " ").indexOf(" " + word + " ") >= 0; }
  function apply() {
    var needle = q.value.trim().toLowerCase();
    var n = 0;
    items.forEach(function (d, i) {
      var ok = (!cat.value || d.dataset.category === cat.value) &&
        (!st.value || d.dataset.status === st.value) &&
        (!dg.value || has(d.dataset.diagnoses, dg.value)) &&
        (!gb.checked || d.dataset.garbled === "1") &&
        (!fl || !fl.checked || d.dataset.flipped === "1") &&
        (!needle || texts[i].indexOf(needle) >= 0);
      d.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + items.length + " items shown";
  }
  [q, cat, st, dg, gb, fl].forEach(function (el) {
    if (el) { el.addEventListener("input", apply); el.addEventListener("change", apply); }
  });
  form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  document.getElementById("f-reset").addEventListener("click", function () {
    form.reset(); apply();
  });
  document.getElementById("f-open").addEventListener("click", function () {
    items.forEach(function (d) { if (!d.hidden) { d.open = true; } });
  });
  document.getElementById("f-close").addEventListener("click", function () {
    items.forEach(function (d) { d.open = false; });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter-category]"), function (a) {
    a.addEventListener("click", function () {
      form.reset(); cat.value = a.dataset.filterCategory; apply();
    });
  });
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.hidden = false; el.open = true; }
  }
  window.addEventListener("hashchange", openHash);
  apply();
  openHash();
})();
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source expression that allows exactly this script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def csp(script: str = SCRIPT) -> str:
    """Nothing loads from anywhere; styles inline; images only as data: URIs; one script."""
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(script)}; base-uri 'none'; form-action 'none'"
    )

"""`evalrun report`: one run (or a pair) as one self-contained HTML page.

The page has a header (headline, suite, endpoint, contract and engine, request options, timing,
garble/error/diagnosis counts, the label's score history as inline SVG), a per-category table,
for a pair the paired statistics, the sign-off verdict and the flips, and then every item as a
collapsible entry (prompt, answer, reasoning, tool calls, grader detail, garble reasons, latency,
tokens) under filters for category, status, diagnosis, garble, flips and free text.

Model output, prompts and server-reported names are untrusted text. Every one goes through
`_t()`: HTML-escaped, with control, bidi and line-separator characters shown as visible marks,
and clipped to a bound. No attribute or script is built from them except escaped `data-*`
values, and the page's CSP lets only its own script run.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from evalrun.base.tables import fmt_points, score100
from evalrun.compare.fidelity import Divergence
from evalrun.compare.pairing import Comparison
from evalrun.endpoint.options import SamplingRecord
from evalrun.provenance import GitFacts
from evalrun.scoring.report import headline
from evalrun.store import (
    RunRecord,
    Summary,
    by_design_note,
    garble_cell,
    garble_split,
    lane_diagnoses,
)
from evalrun.suite.prompt import collapse, message_text
from evalrun.suite.select import describe_record
from evalrun.viewing.page import CSS, SCRIPT, csp
from evalrun.viewing.runview import Row, RunView

ANSWER_CHARS = 20_000  # per channel in the page; `evalrun export` has every character
PREVIEW_CHARS = 160
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff"
    "\ud800-\udfff]"
)


def _t(text: Any, limit: int | None = ANSWER_CHARS) -> str:
    """Untrusted text as HTML: escaped, invisible characters made visible, clipped."""
    s = "" if text is None else str(text)
    more = ""
    if limit is not None and len(s) > limit:
        more = f"[... {len(s) - limit:,} more characters: see `evalrun export --format jsonl`]"
        s = s[:limit]
    out = _INVISIBLE.sub(lambda m: "\x00" + f"U+{ord(m.group()):04X}" + "\x01", s)
    out = html.escape(out, quote=True)
    out = out.replace("\x00", '<span class="cc">').replace("\x01", "</span>")
    return out + (f'<span class="gap">{html.escape(more)}</span>' if more else "")


def _a(text: Any) -> str:
    """An attribute value: escaped, one line, bounded."""
    return html.escape(" ".join(str(text).split())[:200], quote=True)


def _one_line(text: str | None, n: int = PREVIEW_CHARS) -> str:
    s = " ".join((text or "").split())
    return _t(s[:n] + ("…" if len(s) > n else ""), None)


def render_report(
    view: RunView,
    *,
    history: list[RunRecord] | None = None,
    other: RunView | None = None,
    comparison: Comparison | None = None,
    signoff: StoredSignoff | None = None,
) -> str:
    """The page for `view` (the candidate, B, when `other` is the baseline, A)."""
    from evalrun.viewing.history import history_svg

    rec = view.record
    pair = other is not None and comparison is not None
    title = f"evalrun report: {rec.run_id}"
    if other is not None:
        title += f" against {other.record.run_id}"
    parts = [_header(view, other)]
    svg = history_svg(history or [], rec)
    if svg:
        parts.append(f"<h2>Score history of {_t(rec.label)}</h2><figure>{svg}</figure>")
    if pair:
        assert comparison is not None and other is not None
        parts.append(_pair_section(comparison, other, signoff))
    else:
        parts.append(_categories(view))
    flipped = {c.id for c in comparison.flips} if comparison else set()
    fid = comparison.fidelity if comparison else None
    parts.append(_items_section(view, other, flipped, fid.by_item if fid else {}))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{csp()}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            f"<title>{_t(title, 300)}</title><style>{CSS}</style></head><body><main>",
            *parts,
            "</main>",
            f"<script>{SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )


def _garble_badge(s: Summary) -> str:
    """`garbled 7 (3.9% of answers: 0 token soup, 7 loops)`."""
    split = garble_split(s)
    return f"garbled {s.garbled} ({fmt_points(100 * s.garble_rate)}% of answers{': ' + split if split else ''})"


def _header(view: RunView, other: RunView | None) -> str:
    rec = view.record
    s = rec.summary
    setup, _ = lane_diagnoses(rec)
    out = [f"<h1>{_t(headline(rec), 400)}</h1>"]
    if other is not None:
        out.append(f"<p>against baseline <b>{_t(headline(other.record), 400)}</b></p>")
    facts: list[tuple[str, str]] = [
        ("suite", f"{rec.suite.name} v{rec.suite.version} (sha256 {rec.suite.sha256[:12]})"),
        ("selection", describe_record(rec.selection)),
        ("endpoint", rec.endpoint),
        ("model", rec.model_served or rec.model_requested or "?"),
    ]
    if rec.contract:
        c = rec.contract
        facts.append(
            ("contract", f"{c.get('name')} ({c.get('engine')}, hash {c.get('hash', '')[:12]})")
        )
        if c.get("argv"):
            facts.append(("argv", " ".join(map(str, c["argv"]))))
    if rec.server:
        facts.append(("engine version", str(rec.server.get("engine_version") or "unknown")))
        if rec.server.get("boot_seconds") is not None:
            facts.append(("boot", f"{rec.server['boot_seconds']:.1f} s"))
    facts.append(("request options", _options(rec.sampling)))
    facts.append(("started", rec.started_at))
    facts.append(("ended", f"{rec.ended_at or '-'} ({rec.status})"))
    facts.append(("latency", _latency(view)))
    prov = rec.provenance
    own = _commit(prov.get("evalrun_git", {})) if prov else ""
    facts.append(("evalrun", f"{rec.evalrun_version} {own}".strip()))
    if prov and _commit(prov["git"]):
        facts.append(("working repo", _commit(prov["git"])))
    out.append(
        '<dl class="facts">'
        + "".join(f"<dt>{_t(k, 80)}</dt><dd>{_t(v, 2000)}</dd>" for k, v in facts)
        + "</dl>"
    )
    if view.suite_note:
        out.append(f'<p class="meta">{_t(view.suite_note, 500)}</p>')
    badges = [
        f"errors {s.errors}" if s else "",
        _garble_badge(s) if s else "",
        *[f"{d.kind}: {d.count}" for d in setup],
    ]
    out.append('<p class="badges">' + "".join(f"<span>{_t(b, 200)}</span>" for b in badges if b))
    out.append("</p>")
    for d in setup:
        out.append(f'<p class="meta">{_t(d.kind, 100)}: {_t(d.hint, 500)}</p>')
    if by_design_note(rec):
        out.append(f'<p class="meta">{_t(by_design_note(rec), 1000)}</p>')
    return "\n".join(out)


def _options(sampling: SamplingRecord) -> str:
    import json

    return json.dumps(sampling, ensure_ascii=False, sort_keys=True) if sampling else "-"


def _commit(git: GitFacts) -> str:
    """`1a2b3c4d5e6f (main, dirty)` of a checkout's facts; "" without a commit."""
    commit = git.get("commit")
    if not commit:
        return ""
    where = [git.get("branch") or "detached", *(["dirty"] if git.get("dirty") else [])]
    return f"{commit[:12]} ({', '.join(where)})"


def _latency(view: RunView) -> str:
    lat = sorted(r.record.latency_s for r in view.rows if r.record and r.record.latency_s)
    if not lat:
        return "-"
    p50 = lat[len(lat) // 2]
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    return f"median {p50:.2f} s, p95 {p95:.2f} s, max {lat[-1]:.2f} s over {len(lat)} items"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """Cells are already HTML."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _cat_link(cat: str) -> str:
    return f'<a href="#items" data-filter-category="{_a(cat)}">{_t(cat, 200)}</a>'


def _categories(view: RunView) -> str:
    s = view.record.summary
    rows = []
    for name, t in sorted((s.categories if s else {}).items()):
        pct = score100(t.passed, t.total)
        rows.append(
            [_cat_link(name), f"{t.passed}/{t.total}", str(pct), str(t.errors), str(t.garbled)]
        )
    if s:
        rows.append(
            ["<b>all</b>", f"{s.passed}/{s.total}", str(s.score), str(s.errors), garble_cell(s)]
        )
    return "<h2>Categories</h2>" + _table(
        ["category", "passed", "score", "errors", "garbled"], rows
    )


def _pair_section(cmp: Comparison, other: RunView, signoff: StoredSignoff | None) -> str:
    from evalrun.compare.report import category_headers, category_rows, stats_lines

    out = ["<h2>Against the baseline</h2>", f'<p class="verdict">{_t(cmp.verdict, 1000)}</p>']
    if signoff:
        css = "pass" if signoff["verdict"] == "pass" else "fail"
        out.append(
            f'<p class="verdict {css}">sign-off: {_t(signoff["verdict"].upper(), 20)} '
            f'<span class="meta">({_t(signoff["source"], 300)})</span></p>'
        )
        for title, lines in (
            ("Reasons", signoff.get("reasons")),
            ("Warnings", signoff.get("warnings")),
        ):
            if lines:
                out.append(f"<h4>{title}</h4><ul>")
                out += [f"<li>{_t(r, 1000)}</li>" for r in lines]
                out.append("</ul>")
    else:
        out.append('<p class="meta">no sign-off recorded for this pair (`evalrun signoff`)</p>')
    out.append("<ul>" + "".join(f"<li>{_t(x, 1000)}</li>" for x in stats_lines(cmp)) + "</ul>")
    if cmp.fidelity is not None:
        out.append(_fidelity_section(cmp))
    names = ("baseline", "candidate")
    raw = category_rows(cmp)
    rows = [[_cat_link(r[0]), *(_t(c, 200) for c in r[1:])] for r in raw[:-1]]
    rows += [[_t(c, 200) for c in r] for r in raw[-1:]]
    out.append("<h2>Categories</h2>" + _table([_t(h) for h in category_headers(names)], rows))
    if cmp.flips or cmp.other_changes:
        out.append(f"<h2>Flips and other changes ({len(cmp.flips) + len(cmp.other_changes)})</h2>")
        rows = [
            [
                f'<a href="#{_a(_anchor(c.id))}">{_t(c.id, 200)}</a>',
                _t(c.category, 200),
                _t(c.direction, 50),
                f"<pre>{_t(c.a_answer, 2000)}</pre>",
                f"<pre>{_t(c.b_answer, 2000)}</pre>",
            ]
            for c in cmp.flips + cmp.other_changes
        ]
        out.append(_table(["id", "category", "change", "baseline", "candidate"], rows))
    return "\n".join(out)


def _fidelity_section(cmp: Comparison) -> str:
    """The tokens verdict and the first few items where the candidate left the baseline."""
    from evalrun.compare.report import divergence_line

    f = cmp.fidelity
    assert f is not None
    out = [f'<h2>Tokens against the baseline</h2><p class="fidelity">{_t(f.line(), 1000)}</p>']
    shown = f.divergences[:10] if f.verdict != "identical" else []
    if shown:
        out.append(
            "<ul>"
            + "".join(
                f'<li><a href="#{_a(_anchor(d.id))}">{_t(d.id, 200)}</a>: '
                f"{_t(divergence_line(d), 1000)}</li>"
                for d in shown
            )
            + "</ul>"
        )
    return "\n".join(out)


def _divergence(d: Divergence) -> str:
    """One item's first divergence: the shared text with the candidate's token marked where it
    left the baseline, and each side's token, logprob, the other side's view of it, its top-K."""

    def token(text: str | None) -> str:
        return "(ended)" if text is None else _t(repr(text), 200)

    def other(there: tuple[int, float] | None, name: str) -> str:
        return f"rank {there[0]}, {there[1]:.2f}" if there else f"not in the {name}'s top-K"

    def top(alts: list[tuple[str, float]]) -> str:
        return ", ".join(f"{_t(repr(t), 100)} {lp:.2f}" for t, lp in alts)

    rows = [
        [
            "baseline",
            token(d.a_token),
            "" if d.a_logprob is None else f"{d.a_logprob:.2f}",
            other(d.a_in_b, "candidate") if d.a_token is not None else "",
            top(d.a_top),
        ],
        [
            "candidate",
            token(d.b_token),
            "" if d.b_logprob is None else f"{d.b_logprob:.2f}",
            other(d.b_in_a, "baseline") if d.b_token is not None else "",
            top(d.b_top),
        ],
    ]
    left = "" if d.b_token is None else f"<mark>{_t(d.b_token, 200)}</mark>"
    return (
        f'<div class="diverge"><h4>first divergence: token {d.position} '
        f"({_t(d.kind.replace('_', ' '), 40)})</h4>"
        f"<pre>…{_t(d.prefix, 200)}{left}</pre>"
        + _table(["side", "token", "logprob", "the other side's", "top-K"], rows)
        + "</div>"
    )


def _anchor(item_id: str) -> str:
    return "item-" + item_id


def _items_section(
    view: RunView,
    other: RunView | None,
    flipped: set[str],
    divergences: dict[str, Divergence] | None = None,
) -> str:
    cats = sorted({r.category for r in view.rows})
    kinds = sorted({k for r in view.rows for k in r.diagnoses})
    statuses = [
        s for s in ("passed", "failed", "error", "not run") if any(r.status == s for r in view.rows)
    ]

    def options(values: list[str], everything: str) -> str:
        return f'<option value="">{everything}</option>' + "".join(
            f'<option value="{_a(v)}">{_t(v, 100)}</option>' for v in values
        )

    counts = Counter(r.status for r in view.rows)
    form = [
        '<form id="filters" hidden>',
        '<input type="search" id="f-search" placeholder="search ids, prompts, answers…">',
        f'<select id="f-category">{options(cats, "all categories")}</select>',
        f'<select id="f-status">{options(statuses, "any status")}</select>',
        f'<select id="f-diagnosis">{options(kinds, "any diagnosis")}</select>',
        '<label><input type="checkbox" id="f-garbled"> garbled only</label>',
    ]
    if other is not None:
        form.append('<label><input type="checkbox" id="f-flipped"> flips only</label>')
    form += [
        '<button type="button" id="f-reset">reset</button>',
        '<button type="button" id="f-open">expand shown</button>',
        '<button type="button" id="f-close">collapse all</button>',
        '<span id="shown"></span></form>',
    ]
    summary = ", ".join(f"{n} {s}" for s, n in counts.most_common())
    divergences = divergences or {}
    entries = [
        _item(r, other.by_id.get(r.id) if other else None, r.id in flipped, divergences.get(r.id))
        for r in view.rows
    ]
    return "\n".join(
        [
            f'<h2 id="items">Items ({_t(summary, 300)})</h2>',
            *form,
            '<div id="item-list">',
            *entries,
            "</div>",
        ]
    )


def _item(row: Row, base: Row | None, flipped: bool, divergence: Divergence | None = None) -> str:
    resp = row.response
    status_css = "st-" + row.status.replace(" ", "-")
    change = f"{base.status} → " if base is not None else ""
    lat = row.record.latency_s if row.record else None
    preview = resp.content
    if preview is None and resp.tool_calls:
        preview = "tool calls: " + ", ".join(c.name for c in resp.tool_calls)
    if row.record and row.record.error:
        preview = row.detail
    attrs = (
        f'id="{_a(_anchor(row.id))}" data-category="{_a(row.category)}" '
        f'data-status="{_a(row.status)}" data-garbled="{int(row.garbled)}" '
        f'data-diagnoses="{_a(" ".join(row.diagnoses))}" data-flipped="{int(flipped)}"'
    )
    summary = (
        f"<summary><span>{_t(row.id, 200)}</span><span>{_t(row.category, 200)}</span>"
        f'<span class="{status_css}">{_t(change + row.status, 60)}'
        f"{' ⇄' if flipped else ''}</span>"
        f'<span class="garbled">{"garbled" if row.garbled else ""}</span>'
        f"<span>{f'{lat:.2f} s' if lat is not None else ''}</span>"
        f"<span>{_one_line(preview)}</span></summary>"
    )
    body = [_prompt(row)]
    if base is not None:
        body.append(
            '<div class="sides"><div><h4>baseline</h4>'
            + _answer(base)
            + "</div><div><h4>candidate</h4>"
            + _answer(row)
            + "</div></div>"
        )
        if divergence is not None:
            body.append(_divergence(divergence))
    else:
        body.append(_answer(row))
    return f'<details class="item" {attrs}>{summary}<div class="item-body">{"".join(body)}</div></details>'


def _prompt(row: Row) -> str:
    if row.item is None:
        return '<p class="meta">prompt unavailable (the suite that scored this run is not here)</p>'
    out = ["<h4>prompt</h4>"]
    for m in row.item.messages:
        chunks = []
        for part in collapse(message_text(m), row.item):
            if part.kind == "gap":
                chunks.append(f'<span class="gap">{_t(part.text, None)}</span>')
            elif part.kind == "needle":
                chunks.append(f'<span class="needle">{_t(part.text, None)}</span>')
            else:
                chunks.append(_t(part.text, None))
        out.append(
            f'<div class="meta">{_t(m.get("role", "?"), 40)}</div><pre>{"".join(chunks)}</pre>'
        )
    if row.item.tools:
        names = ", ".join(str(t.get("function", {}).get("name", "?")) for t in row.item.tools)
        out.append(f'<p class="meta">tools offered: {_t(names, 500)}</p>')
    return "".join(out)


def _answer(row: Row) -> str:
    rec = row.record
    if rec is None:
        return '<p class="meta">not run: the run stopped before this item</p>'
    resp = row.response
    out = [f'<p class="{"st-" + row.status}">{_t(row.status, 20)}']
    if row.detail:
        out.append(f" — {_t(row.detail, 2000)}")
    out.append("</p>")
    if rec.error is None:
        out.append(f"<h4>answer</h4><pre>{_t(resp.content)}</pre>")
        if resp.reasoning:
            out.append(f"<h4>reasoning</h4><pre>{_t(resp.reasoning)}</pre>")
        if resp.tool_calls:
            import json

            dumped = [c.model_dump(mode="json") for c in resp.tool_calls]
            calls = json.dumps(dumped, ensure_ascii=False, indent=1)
            out.append(f"<h4>tool calls</h4><pre>{_t(calls)}</pre>")
    if row.garbled:
        out.append(f'<p class="garbled">garbled: {_t(", ".join(row.garble_reasons), 2000)}</p>')
    if row.diagnoses:
        out.append(f"<p>diagnoses: {_t(', '.join(row.diagnoses), 500)}</p>")
    pt, ct = row.tokens
    meta = [
        f"finish_reason {resp.finish_reason}",
        f"latency {rec.latency_s:.2f} s" if rec.latency_s is not None else "",
        f"tokens {pt} prompt + {ct} completion" if pt is not None or ct is not None else "",
        f"attempts {rec.attempts}",
    ]
    out.append(f'<p class="meta">{_t("; ".join(m for m in meta if m), 500)}</p>')
    return "".join(out)


class StoredSignoff(TypedDict):
    """A sign-off verdict as the candidate's signoff.md states it."""

    verdict: str  # pass or fail
    source: str  # the file, and the policy it names
    reasons: NotRequired[list[str]]
    warnings: NotRequired[list[str]]


def stored_signoff(run_dir: Path | str, baseline: str) -> StoredSignoff | None:
    """The verdict `evalrun signoff` wrote into the candidate's folder for this baseline, if any:
    {verdict, reasons, warnings, source}."""
    path = Path(run_dir) / "signoff.md"
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return None
    head = re.match(r"# Sign-off: (PASS|FAIL)\s*$", lines[0] if lines else "")
    if head is None or f"- baseline: `{baseline}`" not in lines:
        return None
    found: StoredSignoff = {"verdict": head.group(1).lower(), "source": str(path)}
    section = ""
    for line in lines[1:]:
        if line.startswith("## "):
            section = line[3:].strip().lower()
        elif line.startswith("- ") and section in ("reasons", "warnings"):
            if line.startswith("- none: every rule passed"):
                continue
            if section == "reasons":
                found.setdefault("reasons", []).append(line[2:])
            else:
                found.setdefault("warnings", []).append(line[2:])
        elif line.startswith("- policy: "):
            found["source"] += f", policy {line[10:]}"
    return found


def write_report(
    store: Any, ref: str, ref_b: str | None, output: str | None, floor: Sequence[str] = ()
) -> str:
    """Render run `ref` (or the pair `ref` -> `ref_b`, its tokens graded against `ref`'s A/A
    partners in `floor` when given) and write it; returns the path."""
    from pathlib import Path

    from evalrun.base.errors import ConfigError
    from evalrun.compare.pairing import compare_runs
    from evalrun.viewing.runview import list_runs, load_view

    if ref_b is None:
        view = load_view(store, ref)
        page = render_report(view, history=list_runs(store.root))
        default = store.run_dir(view.record.run_id) / "report.html"
    else:
        comparison = compare_runs(store, ref, ref_b, floor=floor)
        base, view = load_view(store, ref), load_view(store, ref_b)
        folder = store.run_dir(view.record.run_id)
        page = render_report(
            view,
            history=list_runs(store.root),
            other=base,
            comparison=comparison,
            signoff=stored_signoff(folder, base.record.run_id),
        )
        default = folder / f"report-vs-{base.record.run_id}.html"
    path = Path(output) if output else default
    try:
        path.write_text(page, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ConfigError(
            f"cannot write {path} ({exc.strerror}); pass -o with a writable path"
        ) from exc
    return str(path)

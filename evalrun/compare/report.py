"""How a `Comparison` reads: terminal text, markdown (for signoff.md), one self-contained HTML page.

Tables go through evalrun.scoring.report.table. Model output is untrusted text:
markdown cells and HTML are escaped, so an answer containing `<script>` or `|` renders as text.
"""

from __future__ import annotations

from typing import Any

from evalrun.base.tables import fmt_points, fmt_score
from evalrun.base.text_safety import html_text, markdown_cell, one_line
from evalrun.compare.fidelity import Divergence, divergence_parts
from evalrun.compare.pairing import Change, Comparison, fmt_p

ANSWER_CHARS_TEXT = 300
ANSWER_CHARS_MD = 400


def _table(rows: list[list[Any]], headers: list[str], fmt: str, **kw: Any) -> str:
    from evalrun.base.tables import table

    return table(rows, headers, fmt=fmt, numparse=False, **kw)


def _signed(x: float, unit: str = "") -> str:
    """An item delta: `+2`, `−1`, `0`; pass-rate sums (repeats) keep one decimal."""
    if float(x).is_integer():
        text = f"{int(x):+d}" if x else "0"
    else:
        text = f"{x:+.1f}"
    return text.replace("-", "−") + unit


def _clip(text: str, limit: int) -> str:
    """Model text for the terminal: control sequences escaped, one line, clipped."""
    return one_line(text, limit)


def _clip_text(text: str) -> str:
    return _clip(text, ANSWER_CHARS_TEXT)


def md_cell(text: str, limit: int = ANSWER_CHARS_MD) -> str:
    """One markdown table cell: escaped, pipes neutralised, on one line."""
    return markdown_cell(text, limit)


Names = tuple[str, str]
AB: Names = ("A", "B")


def header_rows(cmp: Comparison, names: Names = AB) -> list[list[str]]:
    """One row per run: id, label, score, Wilson interval, status."""
    rows = []
    for name, side in zip(names, (cmp.a, cmp.b), strict=True):
        lo, hi = side.wilson
        status = side.status + (f" (partial: {side.total} items)" if side.partial else "")
        if side.repeats > 1:
            status += f", {side.repeats} repeats"
        rows.append(
            [
                name,
                side.run_id,
                fmt_score(side.passed, side.total),
                f"{fmt_points(lo)}–{fmt_points(hi)}",
                status,
            ]
        )
    return rows


def category_rows(cmp: Comparison) -> list[list[str]]:
    """Per-category A vs B, then a total row."""
    rows = [
        [
            c.category,
            f"{c.a_passed}/{c.a_total}",
            f"{c.b_passed}/{c.b_total}",
            _signed(c.delta),
            fmt_points(c.delta_points, signed=True),
            str(c.lost),
            str(c.gained),
            fmt_p(c.p_value),
            fmt_p(c.p_adjusted),
        ]
        for c in cmp.categories
    ]
    s = cmp.stats
    rows.append(
        [
            "TOTAL",
            f"{cmp.a.passed}/{cmp.a.total}",
            f"{cmp.b.passed}/{cmp.b.total}",
            _signed(cmp.delta_items),
            fmt_points(cmp.delta_points, signed=True),
            str(s.lost),
            str(s.gained),
            fmt_p(s.p_value),
            fmt_p(s.p_adjusted),
        ]
    )
    return rows


def category_headers(names: Names = AB) -> list[str]:
    """Δ items and Δ points are on the items graded in both runs; `p Holm` is adjusted over the
    family (total, categories, garble)."""
    return [
        "category",
        *names,
        "Δ items",
        "Δ points",
        "pass→fail",
        "fail→pass",
        "p",
        "p Holm",
    ]


RUN_HEADERS = ["", "run", "score", "Wilson interval", "status"]


def health_headers(names: Names = AB) -> list[str]:
    return ["", *names, "Δ", "hint"]


def change_headers(names: Names = AB, answers: bool = True) -> list[str]:
    return ["id", "category", "change"] + ([f"{n} answered" for n in names] if answers else [])


def health_rows(cmp: Comparison) -> list[list[str]]:
    """Errors, garble and each diagnosis kind: A, B, delta."""
    a, b = cmp.a, cmp.b
    rows = [
        ["errors", str(a.errors), str(b.errors), _signed(b.errors - a.errors), ""],
        ["not run", str(a.missing), str(b.missing), _signed(b.missing - a.missing), ""],
        [
            "garbled",
            f"{a.garbled} ({fmt_points(100 * a.garble_rate)}%)",
            f"{b.garbled} ({fmt_points(100 * b.garble_rate)}%)",
            _signed(b.garbled - a.garbled),
            garble_note(cmp),
        ],
        ["  of which loops", str(a.garble_loops), str(b.garble_loops), "", ""],
    ]
    rows += [
        [f"diagnosis {d.kind}", str(d.a), str(d.b), _signed(d.b - d.a), d.hint]
        for d in cmp.diagnoses
    ]
    return rows


def garble_note(cmp: Comparison) -> str:
    """Garble on the items answered in both runs: new in B, cleared, and the paired test."""
    g = cmp.garble
    return (
        f"paired on {g.paired}: {g.new} newly garbled ({g.new_loops} loops), {g.cleared} cleared; "
        f"p = {fmt_p(g.p_value)}, Holm {fmt_p(g.p_adjusted)}"
    )


def stats_lines(cmp: Comparison, names: Names = AB) -> list[str]:
    """The paired statistics in sentences."""
    s = cmp.stats
    a, b = names
    lo, hi = s.ci_items
    plo, phi = s.ci_points
    conf = round(100 * (1 - s.alpha))
    lines = [
        (
            f"paired items: {s.paired} of {s.universe} ({s.excluded} left out: errored or not "
            f"run in {a} or {b}); pass→fail {s.lost}, fail→pass {s.gained}"
        ),
        (
            f"exact {'McNemar' if s.test == 'mcnemar' else 'paired rate test'} p = "
            f"{fmt_p(s.p_value)} (two-sided); p = {fmt_p(s.p_worse)} for '{b} is worse' "
            f"(one-sided); Holm-adjusted over {s.family_size} tests (total, each category, "
            f"garble): {fmt_p(s.p_adjusted)} and {fmt_p(s.p_worse_adjusted)}"
        ),
        (
            f"{conf}% paired bootstrap interval for {b} − {a}: {_signed(lo)} .. {_signed(hi)} "
            f"items ({fmt_points(plo, signed=True)} .. {fmt_points(phi, signed=True)} points; "
            f"seed {s.seed}, {s.resamples} resamples)"
        ),
    ]
    if s.repeat_noise is not None:
        rn = s.repeat_noise
        lines.append(
            f"repeats ({cmp.a.repeats} in {a}, {cmp.b.repeats} in {b}): items pair on their "
            f"majority outcome; pass rates summed over the paired items {a} "
            f"{fmt_points(rn.a_rate_sum)}, {b} {fmt_points(rn.b_rate_sum)}; items that both "
            f"passed and failed across runs: {rn.a_flaky} in {a}, {rn.b_flaky} in {b}; exact "
            f"sign-flip test on the rates p = {fmt_p(rn.p_rates)}"
        )
    if s.mdd_items is None:
        lines.append(
            f"minimum detectable difference: none; {s.paired} paired items cannot show any "
            f"difference at alpha {s.alpha:g}"
        )
    else:
        lines.append(
            f"minimum detectable difference: with {s.lost + s.gained} discordant items, only a "
            f"net difference of {s.mdd_items} items ({fmt_points(s.mdd_points or 0)} points) or "
            "more would be "
            f"significant at alpha {s.alpha:g}"
        )
    return lines


def change_rows(changes: list[Change], *, answers: bool, cell: Any = None) -> list[list[str]]:
    """id, category, direction (+ both answers when asked)."""
    rows = []
    for ch in changes:
        row = [ch.id, ch.category, ch.direction]
        if answers:
            row += [cell(ch.a_answer), cell(ch.b_answer)]
        rows.append(row)
    return rows


def render_text(cmp: Comparison, *, show_responses: bool = False) -> str:
    """The terminal report of `evalrun compare`."""
    out = [
        _table(header_rows(cmp), RUN_HEADERS, "plain"),
        f"suite {cmp.a.suite} (sha256 {cmp.a.suite_sha256[:12]})",
        "",
        _table(category_rows(cmp), category_headers(), "simple"),
        "",
        _table(health_rows(cmp), health_headers(), "simple"),
        "",
    ]
    for title, changes in (("flips", cmp.flips), ("other changes", cmp.other_changes)):
        if not changes:
            continue
        out.append(f"{title} ({len(changes)}):")
        headers = change_headers(answers=show_responses)
        kw: dict[str, list[int | None]] = {}
        if show_responses:
            kw["maxcolwidths"] = [None, None, None, 48, 48]
        rows = change_rows(changes, answers=show_responses, cell=_clip_text)
        out += [_table(rows, headers, "simple", **kw), ""]
        if show_responses:
            out += first_divergence_lines(cmp, changes)
    out += stats_lines(cmp)
    out += fidelity_lines(cmp)
    out += ["", cmp.verdict]
    return "\n".join(out)


def fidelity_lines(cmp: Comparison, examples: int = 3) -> list[str]:
    """The fidelity line, and where B first left A on the first few divergent items (hard
    first) with both sides' top-K there."""
    f = cmp.fidelity
    if f is None:
        return []
    out = [f.line()]
    if f.floor is not None or "deterministic" in f.reason:  # what decided the grade
        out.append(f"  why: {f.reason}")
    for d in f.divergences[:examples] if f.verdict != "identical" else []:
        out.append("  " + divergence_line(d))
    return out


def divergence_line(d: Divergence) -> str:
    """Where B first left A on one item, on one terminal-safe line: the shared text before it,
    each side's token and logprob, the other side's rank and logprob of it, both top-3."""

    def top(alts: list[tuple[str, float]]) -> str:
        return ", ".join(f"{t!r} {lp:.2f}" for t, lp in alts[:3])

    a, b = divergence_parts(d)
    text = (
        f"{d.id} token {d.position} ({d.kind.replace('_', ' ')}) after {d.prefix[-30:]!r}: "
        f"{a} [{top(d.a_top)}] / {b} [{top(d.b_top)}]"
    )
    return one_line(text, 400)


def first_divergence_lines(cmp: Comparison, changes: list[Change]) -> list[str]:
    """The first-divergence line of each changed item whose tokens differ (compare
    --show-responses)."""
    by_item = cmp.fidelity.by_item if cmp.fidelity else {}
    found = [by_item[c.id] for c in changes if c.id in by_item]
    return ["first divergences:", *("  " + divergence_line(d) for d in found), ""] if found else []


def _md_rows(rows: list[list[str]]) -> list[list[str]]:
    return [[md_cell(c, 300) for c in row] for row in rows]


def render_markdown(cmp: Comparison, *, names: Names = AB, heading_level: int = 2) -> str:
    """Markdown sections (runs, categories, health, statistics, flips with both answers)."""
    h = "#" * heading_level
    out = [
        f"{h} Runs",
        "",
        _table(_md_rows(header_rows(cmp, names)), RUN_HEADERS, "github"),
        "",
        f"Suite {cmp.a.suite} (sha256 `{cmp.a.suite_sha256[:12]}`).",
        "",
        f"{h} Categories",
        "",
        _table(_md_rows(category_rows(cmp)), category_headers(names), "github"),
        "",
        f"{h} Errors, garble, diagnoses",
        "",
        _table(_md_rows(health_rows(cmp)), health_headers(names), "github"),
        "",
        f"{h} Statistics",
        "",
    ]
    out += [f"- {line}" for line in stats_lines(cmp, names)] + [""]
    for title, changes in (("Flips", cmp.flips), ("Other changes", cmp.other_changes)):
        out += [f"{h} {title} ({len(changes)})", ""]
        if changes:
            rows = change_rows(changes, answers=True, cell=md_cell)
            rows = [[md_cell(r[0], 200), md_cell(r[1], 200), *r[2:]] for r in rows]
            out += [_table(rows, change_headers(names), "github"), ""]
        else:
            out += ["None.", ""]
    return "\n".join(out)


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;margin:0;max-width:48em;font-size:13px}
.down{background:#fde8e8}.up{background:#e6f6e6}.verdict{font-size:1.2em;font-weight:600}
"""


def render_html(cmp: Comparison) -> str:
    """One self-contained page: the verdict, the category table and every flip side by side."""
    e = html_text  # escapes controls and lone surrogates too (a file cannot encode those)

    def table(rows: list[list[str]], headers: list[str]) -> str:
        head = "".join(f"<th>{e(x)}</th>" for x in headers)
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    flips = []
    for ch in cmp.flips + cmp.other_changes:
        css = "down" if ch.a == "passed" else ("up" if ch.b == "passed" else "")
        flips.append(
            f'<tr class="{css}"><td>{e(ch.id)}</td><td>{e(ch.category)}</td>'
            f"<td>{e(ch.direction)}</td>"
            f"<td><pre>{e(ch.a_answer)}</pre><small>{e(ch.a_detail)}</small></td>"
            f"<td><pre>{e(ch.b_answer)}</pre><small>{e(ch.b_detail)}</small></td></tr>"
        )
    title = f"evalrun compare: {cmp.a.run_id} vs {cmp.b.run_id}"
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
                f"<h1>{e(title)}</h1>",
                f'<p class="verdict">{e(cmp.verdict)}</p>',
                table(header_rows(cmp), RUN_HEADERS),
                f"<p>Suite {e(cmp.a.suite)} (sha256 {e(cmp.a.suite_sha256[:12])})</p>",
                "<h2>Categories</h2>",
                table(category_rows(cmp), category_headers()),
                "<h2>Errors, garble, diagnoses</h2>",
                table(health_rows(cmp), health_headers()),
                "<h2>Statistics</h2><ul>"
                + "".join(f"<li>{e(x)}</li>" for x in stats_lines(cmp))
                + "</ul>",
                f"<h2>Flips and other changes ({len(flips)})</h2>",
                (
                    "<table><tr><th>id</th><th>category</th><th>change</th>"
                    f"<th>A: {e(cmp.a.run_id)}</th><th>B: {e(cmp.b.run_id)}</th></tr>"
                ),
                *flips,
                "</table></body></html>",
            ]
        )
        + "\n"
    )

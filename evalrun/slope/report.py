"""Slope tables (one row per depth, one column per concurrency), lane comparisons and plots.

matplotlib is imported lazily, here only (tables through evalrun.base.tables); plots use the Agg
backend (no display).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalrun.base.jsondata import JSONObject
from evalrun.slope.record import SlopePoint, SlopeRecord, depth_label, find_cliffs, ratios_to_d0


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    from evalrun.base.tables import table

    return table(rows, headers, numparse=False)


def _tps(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _cell(point: SlopePoint | None, ratio: float | None, cliff: bool) -> str:
    if point is None:
        return ""
    if point.skipped:
        return "skipped"
    if point.decode_tps is None:
        return f"failed ({point.errors} errors)" if point.errors else "-"
    text = _tps(point.decode_tps)
    if ratio is not None and point.depth_target != 0:
        text += f" ({ratio:.2f})"
    if point.short:
        text += " *"
    if cliff:
        text += " CLIFF"
    return text


def _deepest_ratio(record: SlopeRecord, c: int) -> tuple[int, float] | None:
    ratios = ratios_to_d0(record, c)
    if len(ratios) < 2:
        return None
    deepest = max(ratios)
    return deepest, ratios[deepest]


def headline(record: SlopeRecord) -> str:
    """`256K/d0: c1 0.30, c2 0.04` for the deepest measured depth of each column."""
    parts = []
    for c in record.settings.concurrency:
        found = _deepest_ratio(record, c)
        if found:
            parts.append(f"{depth_label(found[0])}/d0: c{c} {found[1]:.2f}")
    return "; ".join(parts)


def render_text(record: SlopeRecord) -> str:
    """The slope table: depth rows, one column per concurrency, ratio to d0, cliffs, notes."""
    s = record.settings
    levels = s.concurrency
    cliffs = {(c.concurrency, c.to_depth) for c in find_cliffs(record)}
    ratios = {c: ratios_to_d0(record, c) for c in levels}
    rows = []
    for d in s.depths:
        pts = [record.point(d, c) for c in levels]
        reached = next((p.depth for p in pts if p is not None and p.depth is not None), None)
        rows.append(
            [depth_label(d), "-" if reached is None else str(reached)]
            + [_cell(p, ratios[c].get(d), (c, d) in cliffs) for p, c in zip(pts, levels)]
        )
    out = [
        f"slope {record.run_id}  ({record.status})",
        f"endpoint {record.endpoint}  model {record.model_served or record.model_requested or '?'}",
        f"decode t/s per stream, median of {s.runs} run(s); pp {s.pp} tg {s.tg}; "
        f"(ratio to d0); cache {'warm' if s.warm_cache else 'cold'}",
        "",
        _table(rows, ["depth", "reached"] + [f"c{c}" for c in levels]),
        "",
    ]
    if headline(record):
        out.append(headline(record))
    for cliff in find_cliffs(record):
        out.append(
            f"CLIFF c{cliff.concurrency}: {depth_label(cliff.from_depth)} -> "
            f"{depth_label(cliff.to_depth)} {cliff.from_tps:.1f} -> {cliff.to_tps:.1f} t/s "
            f"(keeps {cliff.kept:.2f})"
        )
    out.extend(_notes(record))
    out += ["", "prefill (TTFT s) and aggregate t/s across streams:", _secondary(record)]
    return "\n".join(out)


def _notes(record: SlopeRecord) -> list[str]:
    notes = []
    shorts = [p for p in record.points if p.short]
    if shorts:
        cells = ", ".join(
            f"{depth_label(p.depth_target)} c{p.concurrency} {p.short}/{p.streams} "
            f"(median {p.tokens} tokens)"
            for p in shorts
        )
        notes.append(f"* stopped short of tg={record.settings.tg}: {cells}")
    if record.extras_dropped:
        notes.append(f"engine rejected {', '.join(record.extras_dropped)}: sent without them")
    reasons = sorted({p.skip_reason for p in record.points if p.skipped and p.skip_reason})
    notes.extend(f"skipped: {r}" for r in reasons)
    errors = [p for p in record.points if p.errors]
    if errors:
        notes.append(
            "failed streams: "
            + ", ".join(
                f"{depth_label(p.depth_target)} c{p.concurrency} {p.errors}" for p in errors
            )
            + f" (first: {errors[0].error}; all in streams.jsonl)"
        )
    if record.error:
        notes.append(f"error: {record.error}")
    return notes


def _secondary(record: SlopeRecord) -> str:
    levels = record.settings.concurrency
    rows = []
    for d in record.settings.depths:
        row = [depth_label(d)]
        for c in levels:
            p = record.point(d, c)
            if p is None or p.skipped:
                row += ["-", "-"]
                continue
            row += [f"{p.ttft_s:.2f}" if p.ttft_s is not None else "-", _tps(p.aggregate_tps)]
        rows.append(row)
    headers = ["depth"] + [h for c in levels for h in (f"c{c} ttft", f"c{c} agg")]
    return _table(rows, headers)


def points_json(record: SlopeRecord) -> list[JSONObject]:
    """The `points` of `--json`: depth is the depth reached."""
    return [
        {
            "depth": p.depth,
            "depth_target": p.depth_target,
            "concurrency": p.concurrency,
            "ttft_s": p.ttft_s,
            "decode_tps": p.decode_tps,
            "aggregate_tps": p.aggregate_tps,
            "skipped": p.skipped,
            "stopped_short": p.short,
        }
        for p in record.points
    ]


# -- two lanes --------------------------------------------------------------------------------
def compare_rows(a: SlopeRecord, b: SlopeRecord) -> list[JSONObject]:
    """Per (depth, concurrency) in either run: both decode t/s, B/A, and each one's ratio to d0."""
    levels = sorted(set(a.settings.concurrency) | set(b.settings.concurrency))
    depths = sorted(set(a.settings.depths) | set(b.settings.depths))
    ra = {c: ratios_to_d0(a, c) for c in levels}
    rb = {c: ratios_to_d0(b, c) for c in levels}
    rows = []
    for d in depths:
        for c in levels:
            pa, pb = a.point(d, c), b.point(d, c)
            if pa is None and pb is None:
                continue
            ta = pa.decode_tps if pa else None
            tb = pb.decode_tps if pb else None
            rows.append(
                {
                    "depth": d,
                    "concurrency": c,
                    "a_decode_tps": ta,
                    "b_decode_tps": tb,
                    "ratio": round(tb / ta, 4) if ta and tb else None,
                    "a_ratio_d0": _r(ra[c].get(d)),
                    "b_ratio_d0": _r(rb[c].get(d)),
                    "a_skipped": bool(pa and pa.skipped),
                    "b_skipped": bool(pb and pb.skipped),
                }
            )
    return rows


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def render_compare(a: SlopeRecord, b: SlopeRecord) -> str:
    """Two slope runs (say an sglang and a vLLM lane) side by side per depth."""
    rows = compare_rows(a, b)
    levels = sorted({r["concurrency"] for r in rows})
    by = {(r["depth"], r["concurrency"]): r for r in rows}
    la, lb = _names(a, b)
    table = []
    for d in sorted({r["depth"] for r in rows}):
        line = [depth_label(d)]
        for c in levels:
            r = by.get((d, c))
            if r is None:
                line += ["", "", ""]
                continue
            line += [
                "skipped" if r["a_skipped"] else _tps(r["a_decode_tps"]),
                "skipped" if r["b_skipped"] else _tps(r["b_decode_tps"]),
                "-" if r["ratio"] is None else f"{r['ratio']:.2f}",
            ]
        table.append(line)
    headers = ["depth"] + [h for c in levels for h in (f"{la} c{c}", f"{lb} c{c}", "B/A")]

    def ident(rec: SlopeRecord) -> str:
        return rec.run_id + ("" if rec.status == "complete" else f" ({rec.status})")

    out = [
        f"A = {ident(a)}",
        f"B = {ident(b)}",
        f"decode t/s per stream (A pp{a.settings.pp} tg{a.settings.tg}, "
        f"B pp{b.settings.pp} tg{b.settings.tg})",
        "",
        _table(table, headers),
        "",
    ]
    for c in levels:
        fa, fb = _deepest_ratio(a, c), _deepest_ratio(b, c)
        if fa or fb:
            out.append(
                f"c{c}: "
                + ", ".join(
                    f"{name} {depth_label(f[0])}/d0 {f[1]:.2f}"
                    for name, f in ((la, fa), (lb, fb))
                    if f
                )
            )
    for name, rec in ((la, a), (lb, b)):
        for cliff in find_cliffs(rec):
            out.append(
                f"CLIFF in {name} c{cliff.concurrency}: {depth_label(cliff.from_depth)} -> "
                f"{depth_label(cliff.to_depth)} keeps {cliff.kept:.2f}"
            )
    if (a.settings.pp, a.settings.tg) != (b.settings.pp, b.settings.tg):
        out.append("warning: the runs used different pp/tg; decode figures are not like for like")
    return "\n".join(out)


def _names(a: SlopeRecord, b: SlopeRecord) -> tuple[str, str]:
    if a.label != b.label:
        return a.label, b.label
    return f"A:{a.label}", f"B:{b.label}"


# -- plots ------------------------------------------------------------------------------------
def plot(lanes: list[tuple[str, SlopeRecord]], path: Path | str) -> Path:
    """decode t/s against depth (symlog x, so d0 shows): colour per concurrency, style per lane."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    styles = ["-", "--", ":", "-."]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    levels = sorted({c for _, rec in lanes for c in rec.settings.concurrency})
    ticks: dict[int, int] = {}  # x position -> depth target, for the tick labels
    try:
        for i, (name, rec) in enumerate(lanes):
            cliff_ends = {(c.concurrency, c.to_depth) for c in find_cliffs(rec)}
            for c in rec.settings.concurrency:
                pts = sorted(
                    (p for p in rec.points if p.concurrency == c and p.decode_tps),
                    key=lambda p: p.depth_target,
                )
                if not pts:
                    continue
                xs = [p.depth if p.depth is not None else p.depth_target for p in pts]
                ys = [p.decode_tps or 0.0 for p in pts]
                ticks.update({x: p.depth_target for x, p in zip(xs, pts)})
                label = f"{name} c{c}" if len(lanes) > 1 else f"c{c}"
                ax.plot(
                    xs,
                    ys,
                    styles[i % len(styles)],
                    marker="o",
                    label=label,
                    color=colours[levels.index(c) % len(colours)],
                )
                for x, y, p in zip(xs, ys, pts):
                    if (c, p.depth_target) in cliff_ends:
                        ax.plot([x], [y], "x", color="red", markersize=11, markeredgewidth=2)
                        ax.annotate(
                            "cliff",
                            (x, y),
                            textcoords="offset points",
                            xytext=(5, 6),
                            color="red",
                            fontsize=8,
                        )
        positive = [x for x in ticks if x > 0]
        ax.set_xscale("symlog", linthresh=min(positive) if positive else 1, linscale=0.5)
        shown = _spread(sorted(ticks))
        ax.set_xticks(shown, [depth_label(ticks[x]) for x in shown])
        ax.minorticks_off()
        ax.set_xlabel("context depth reached (tokens, log scale)")
        ax.set_ylabel("decode t/s per stream")
        ax.set_ylim(bottom=0)
        first = lanes[0][1]
        ax.set_title(
            f"decode vs depth — pp{first.settings.pp} tg{first.settings.tg}"
            + ("" if len(lanes) > 1 else f" — {first.label}")
        )
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    return path


def _spread(xs: list[int]) -> list[int]:
    """Tick positions at least ~15% apart on a log axis, so labels do not overlap."""
    out: list[int] = []
    for x in xs:
        if not out or x == 0 or out[-1] == 0 or x > out[-1] * 1.15:
            out.append(x)
    return out

"""The label's score history as a small inline SVG (no matplotlib needed, a few KB in the page).

One line per series of `evalrun runs --plot` (label, plus suite version and selection when those
differ), runs in time order, Wilson-interval bars, the reported run ringed.
"""

from __future__ import annotations

import html
from datetime import datetime

from evalrun.base.tables import fmt_points
from evalrun.compare.plots import history_points
from evalrun.compare.stats import wilson_interval
from evalrun.store import RunRecord

W, H = 640, 180
LEFT, RIGHT, TOP, BOTTOM = 36, 12, 12, 34
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def history_svg(records: list[RunRecord], current: RunRecord) -> str:
    """The SVG, or '' when the label has fewer than two finished runs."""
    mine = [r for r in records if r.label == current.label]
    panels, _ = history_points(mine)
    series = panels.get("all items", {})
    if sum(len(p) for p in series.values()) < 2:
        return ""
    times = sorted({t for pts in series.values() for t, *_ in pts})
    slot = {t: i for i, t in enumerate(times)}
    span = max(len(times) - 1, 1)

    def x(t: object) -> float:
        return LEFT + (W - LEFT - RIGHT) * slot[t] / span  # type: ignore[index]

    def y(pct: float) -> float:
        return TOP + (H - TOP - BOTTOM) * (1 - pct / 100)

    e = html.escape
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="score history of {e(current.label)}">'
    ]
    for pct in (0, 25, 50, 75, 100):
        out.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(pct):.1f}" y2="{y(pct):.1f}" '
            f'stroke="#eaecf0"/><text x="{LEFT - 6}" y="{y(pct) + 4:.1f}" '
            f'text-anchor="end">{pct}</text>'
        )
    now = datetime.fromisoformat(current.started_at)
    for n, (key, pts) in enumerate(sorted(series.items())):
        color = COLORS[n % len(COLORS)]
        path = " ".join(f"{x(t):.1f},{y(p):.1f}" for t, p, *_ in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{path}"/>')
        for t, p, k, total in pts:
            lo, hi = wilson_interval(k, total)
            out.append(
                f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y(100 * lo):.1f}" '
                f'y2="{y(100 * hi):.1f}" stroke="{color}" stroke-opacity=".4"/>'
                f'<circle cx="{x(t):.1f}" cy="{y(p):.1f}" r="{5 if t == now else 3}" '
                f'fill="{"#fff" if t == now else color}" stroke="{color}" stroke-width="2">'
                f"<title>{e(key)}: {k}/{total} ({fmt_points(p)}%) {t:%Y-%m-%d %H:%M}</title></circle>"
            )
        out.append(f'<text x="{LEFT + 4}" y="{H - 4 - 12 * n}" fill="{color}">{e(key)}</text>')
    out.append(
        f'<text x="{W - RIGHT}" y="{H - 4}" text-anchor="end">{len(times)} runs, '
        f"{times[0]:%Y-%m-%d} to {times[-1]:%Y-%m-%d}; bars: 95% Wilson interval</text></svg>"
    )
    return "".join(out)

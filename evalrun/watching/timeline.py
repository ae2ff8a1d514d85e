"""A watch as one self-contained HTML page: a timeline of its ticks with the alarms marked.

Five panels share the tick axis: the running statistic against its threshold, the probe items
off the anchor (and the drift), the distance in noise-floor units, the probe's score and
garbled answers, and the mean latency; the floor and where it came from head the page.
Down ticks are grey bands, alarms red lines. Below: the watch's events (down, up, alarm with its
escalation's sign-off, recovered) and the compacted blocks. The page has no script; every text
that came from a server or a model (error texts, sign-off reasons) is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalrun.base.jsondata import JSONObject
from evalrun.base.text_safety import html_text
from evalrun.compare.floor import DIVERGENT_UNITS
from evalrun.watching.state import TickPoint, WatchState, load_state, read_events

PAGE_NAME = "timeline.html"
WIDTH, HEIGHT, PAD = 1000, 120, 40
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1.5em;color:#101828}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #d0d5dd;margin-top:1.4em}
table{border-collapse:collapse}td,th{border:1px solid #d0d5dd;padding:3px 8px;text-align:left}
th{background:#f2f4f7}td.num{text-align:right}.alarm{color:#b42318;font-weight:600}
svg text{font:11px system-ui,sans-serif;fill:#475467}.muted{color:#667085}
"""


def _e(text: Any) -> str:
    return html_text(str(text))


def _panel(
    title: str,
    points: Sequence[TickPoint],
    series: list[tuple[str, str, Callable[[TickPoint], float | None]]],
    *,
    line: float | None = None,
) -> str:
    """One chart: each series a polyline over the judged ticks; down ticks grey, alarms red."""
    if not points:
        return ""
    first, last = points[0].tick, points[-1].tick
    span = max(1, last - first)
    values = [v for _, _, f in series for p in points if (v := f(p)) is not None]
    top = max([*values, line or 0.0, 1e-9]) * 1.1

    def x(tick: int) -> float:
        return PAD + (WIDTH - 2 * PAD) * (tick - first) / span

    def y(v: float) -> float:
        return HEIGHT - 20 - (HEIGHT - 30) * v / top

    parts = [f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img">']
    parts.append(f'<text x="{PAD}" y="12">{_e(title)} (max {top / 1.1:.3g})</text>')
    for p in points:
        if p.status == "down":
            parts.append(
                f'<rect x="{x(p.tick) - 2:.1f}" y="15" width="4" height="{HEIGHT - 35}" '
                'fill="#d0d5dd"><title>down</title></rect>'
            )
        elif p.status == "alarm":
            parts.append(
                f'<line x1="{x(p.tick):.1f}" x2="{x(p.tick):.1f}" y1="15" y2="{HEIGHT - 20}" '
                f'stroke="#b42318" stroke-width="2"><title>alarm at tick {p.tick}</title></line>'
            )
    if line is not None:
        parts.append(
            f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(line):.1f}" y2="{y(line):.1f}" '
            'stroke="#b42318" stroke-dasharray="4 3"/>'
        )
    for name, color, f in series:
        xy = [f"{x(p.tick):.1f},{y(v):.1f}" for p in points if (v := f(p)) is not None]
        if xy:
            parts.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                f'points="{" ".join(xy)}"><title>{_e(name)}</title></polyline>'
            )
    parts.append(f'<text x="{PAD}" y="{HEIGHT - 5}">tick {first}</text>')
    parts.append(f'<text x="{WIDTH - PAD - 60}" y="{HEIGHT - 5}">tick {last}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _judged(f: Callable[[TickPoint], float | None]) -> Callable[[TickPoint], float | None]:
    return lambda p: None if p.status == "down" else f(p)


def _events_table(events: list[JSONObject]) -> str:
    rows = []
    for ev in events:
        kind = ev.get("event")
        if kind in ("tick", None):
            continue
        detail = ""
        if kind == "alarm":
            esc = ev.get("escalation") or {}
            detail = (
                f"statistic {ev.get('statistic')} ≥ {ev.get('threshold')}; items off: "
                f"{', '.join(map(str, ev.get('off_items') or [])) or 'none'}"
            )
            if "signoff" in esc:
                detail += f"; escalation {esc.get('run_id')}: sign-off {esc.get('signoff')}"
                reasons = esc.get("reasons") or []
                if reasons:
                    detail += " (" + "; ".join(map(str, reasons)) + ")"
            elif "error" in esc:
                detail += f"; escalation failed: {esc.get('error')}"
        elif kind in ("down", "on_alarm_failed"):
            detail = str(ev.get("reason", ""))
        elif kind == "start":
            detail = f"on {ev.get('target')} against {ev.get('anchor')}"
        elif kind == "floor":
            detail = (
                f"{ev.get('source')} ({ev.get('measured_from')}): {ev.get('diverged')} of "
                f"{ev.get('items')} items diverged, {ev.get('hard')} hard, drift {ev.get('drift')}"
                f"; healthy rate {ev.get('healthy_rate')}"
            )
        cls = ' class="alarm"' if kind == "alarm" else ""
        rows.append(
            f"<tr{cls}><td>{_e(ev.get('at', ''))}</td><td class=num>{_e(ev.get('tick', ''))}"
            f"</td><td>{_e(kind)}</td><td>{_e(detail)}</td></tr>"
        )
    if not rows:
        return "<p class=muted>no events</p>"
    return (
        "<table><tr><th>at</th><th>tick</th><th>event</th><th>detail</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _blocks_table(state: WatchState) -> str:
    if not state.blocks:
        return ""
    rows = "".join(
        f"<tr><td class=num>{b.first}–{b.last}</td><td>{_e(b.start)}</td><td>{_e(b.end)}</td>"
        f"<td class=num>{b.max_statistic:.2f}</td><td class=num>{b.off}/{b.compared}</td>"
        f"<td class=num>{b.passed}/{b.answered}</td><td class=num>{b.garbled}</td>"
        f"<td class=num>{b.down}</td><td class=num>{b.alarms}</td></tr>"
        for b in state.blocks
    )
    return (
        "<h2>Earlier ticks, compacted</h2><table><tr><th>ticks</th><th>from</th><th>to</th>"
        "<th>max statistic</th><th>off</th><th>passed</th><th>garbled</th><th>down</th>"
        f"<th>alarms</th></tr>{rows}</table>"
    )


def render_timeline(state: WatchState, events: list[JSONObject]) -> str:
    """The page's HTML."""
    pts = state.points
    judged = [p for p in pts if p.status != "down"]
    panels = [
        _panel(
            "running test: each CUSUM's share of its threshold, drift (red) and hard (violet); "
            "dashed: the alarm",
            pts,
            [
                ("drift CUSUM", "#b42318", lambda p: p.drift_statistic / state.cusum.h_units),
                ("hard CUSUM", "#6941c6", lambda p: p.hard_statistic / state.cusum.h),
            ],
            line=1.0,
        ),
        _panel(
            "probe items hard off the anchor (blue) and drift ×100 (orange)",
            pts,
            [
                ("items off", "#1849a9", _judged(lambda p: float(p.off))),
                ("drift x100", "#b54708", _judged(lambda p: p.drift * 100)),
            ],
        ),
        _panel(
            "drift in noise-floor units (the tick's over the floor's; dashed: divergent past it)",
            pts,
            [("floor units", "#0e7090", _judged(lambda p: p.units))],
            line=DIVERGENT_UNITS,
        ),
        _panel(
            "score (green: share passed) and garbled answers (purple)",
            pts,
            [
                ("score", "#067647", _judged(lambda p: p.passed / p.answered if p.answered else 0)),
                ("garbled", "#6941c6", _judged(lambda p: float(p.garbled))),
            ],
        ),
        _panel(
            "mean latency, seconds",
            pts,
            [("latency", "#475467", _judged(lambda p: p.latency_s))],
        ),
    ]
    status = "ALARM" if state.alarmed else ("down" if state.down else "quiet")
    facts = (
        f"<p>anchor <b>{_e(state.anchor)}</b> · target {_e(state.target)} · "
        f"{state.tick} ticks ({len(judged)} of those shown judged) · {state.alarms} alarms · now "
        f'<span class="{"alarm" if state.alarmed else ""}">{status}</span> · statistic '
        f"{state.statistic:.2f} of 1 (drift CUSUM {state.running.drift:.2f} of "
        f"{state.cusum.h_units:g} floor units, hard CUSUM {state.running.hard:.2f} of "
        f"{state.cusum.h:g})</p>"
        f"<p>{_e(state.floor.line() if state.floor else 'floor: not measured yet (defaults)')}"
        "</p>"
        f"<p class=muted>probe: {_e(', '.join(state.probe.ids))}</p>"
    )
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">"
        f"<title>watch {_e(state.name)}</title><style>{CSS}</style></head><body>"
        f"<h1>watch {_e(state.name)}</h1>{facts}<h2>Timeline</h2>{''.join(panels)}"
        f"<h2>Events</h2>{_events_table(events)}{_blocks_table(state)}</body></html>"
    )


def write_timeline(folder: Path, output: str | Path | None = None) -> Path:
    """Write the watch in `folder` as timeline.html there (or at `output`); the path."""
    from evalrun.base.errors import RunNotFound

    state = load_state(folder)
    if state is None:
        raise RunNotFound(f"no watch in {folder}; `evalrun watch --name NAME` starts one")
    path = Path(output) if output else folder / PAGE_NAME
    path.write_text(render_timeline(state, read_events(folder)), encoding="utf-8")
    return path

"""Score history as one PNG: a panel for the whole suite and one per category, a line per label.

matplotlib is imported lazily (only `evalrun runs --plot` needs it) and drawn through the Agg
canvas on a bare Figure, so no GUI backend or pyplot global state is involved.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from evalrun.base.errors import ConfigError
from evalrun.compare.stats import wilson_interval
from evalrun.store import RunRecord

PANEL_W, PANEL_H, COLUMNS = 4.6, 3.0, 3


def _series_key(record: RunRecord, many_suites: bool) -> str:
    """The line a run belongs to: its label, plus the suite version and the item selection when
    those differ between runs (a --limit 30 run is not the same measurement as a full one)."""
    key = record.label
    if many_suites:
        key += f" ({record.suite.name}-v{record.suite.version})"
    picked = ", ".join(
        f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in sorted(record.selection.items())
        if v and k != "ids"  # the chosen ids follow from the criteria; too long for a legend
    )
    return f"{key} [{picked}]" if picked else key


def history_points(
    records: list[RunRecord],
) -> tuple[dict[str, dict[str, list[tuple[datetime, float, int, int]]]], list[str]]:
    """panel -> series -> [(time, pct, passed, total)], and the panel order ('all items' first).

    Only finished runs are drawn: a run still running or interrupted (its unrun items would read
    as failures) or without a summary is left out.
    """
    done = [
        r
        for r in records
        if r.status in ("complete", "incomplete") and r.summary and r.summary.total
    ]
    many_suites = len({r.suite.sha256 for r in done}) > 1
    panels: dict[str, dict[str, list[tuple[datetime, float, int, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in sorted(done, key=lambda r: r.started_at):
        assert r.summary is not None
        when = datetime.fromisoformat(r.started_at)
        key = _series_key(r, many_suites)
        s = r.summary
        panels["all items"][key].append((when, 100 * s.passed / s.total, s.passed, s.total))
        for cat, tally in s.categories.items():
            if tally.total:
                panels[cat][key].append(
                    (when, 100 * tally.passed / tally.total, tally.passed, tally.total)
                )
    order = ["all items"] + sorted(p for p in panels if p != "all items") if panels else []
    return panels, order


def plot_history(records: list[RunRecord], path: Path | str) -> Path:
    """Draw the score history of `records` to a PNG at `path`; returns the path."""
    panels, order = history_points(records)
    if not order:
        raise ConfigError("no finished runs to plot; score a suite first (`evalrun score`)")
    try:
        import matplotlib.dates as mdates
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ConfigError("--plot needs matplotlib: pip install 'evalrun[plot]'") from exc

    series = sorted({k for p in panels.values() for k in p})
    colors = {k: f"C{i % 10}" for i, k in enumerate(series)}
    times = [t for p in panels.values() for pts in p.values() for t, *_ in pts]
    lo_t, hi_t = min(times), max(times)
    pad = max((hi_t - lo_t) * 0.06, timedelta(minutes=10))

    cols = min(COLUMNS, len(order))
    rows = math.ceil(len(order) / cols)
    fig = Figure(figsize=(PANEL_W * cols, PANEL_H * rows + 0.9), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, panel in zip(axes.flat, order, strict=False):
        lowest = 100.0
        for key, pts in sorted(panels[panel].items()):
            xs = [t for t, *_ in pts]
            ys = [y for _, y, _, _ in pts]
            # Wilson interval as error bars: how far a point could move by chance alone
            cis = [wilson_interval(k, n) for *_, k, n in pts]
            err = [
                [y - 100 * lo for y, (lo, _) in zip(ys, cis, strict=True)],
                [100 * hi - y for y, (_, hi) in zip(ys, cis, strict=True)],
            ]
            bars = ax.errorbar(
                xs,
                ys,
                yerr=err,
                color=colors[key],
                marker="o",
                ms=4,
                lw=1.5,
                capsize=2,
                elinewidth=0.8,
                label=key,
            )
            for part in bars.lines[1] + bars.lines[2]:  # caps and bars lighter than the line
                part.set_alpha(0.45)
            lowest = min(lowest, *(100 * lo for lo, _ in cis))
        n_items = max(n for pts in panels[panel].values() for *_, n in pts)
        ax.set_title(f"{panel} ({n_items} items)", fontsize=10)
        ax.set_ylim(max(0.0, math.floor(lowest / 10) * 10 - 5), 102)
        ax.set_xlim(lo_t - pad, hi_t + pad)
        ax.grid(True, alpha=0.3)
        ax.xaxis.set_major_locator(mdates.AutoDateLocator(maxticks=5))
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(order) :]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("score (% passed)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    latest = {k: pts[-1] for k, pts in panels["all items"].items()}
    labels = [f"{k}: latest {latest[k][2]}/{latest[k][3]}" for k in labels]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=min(4, len(labels)),
        fontsize=9,
        frameon=False,
    )
    fig.suptitle(
        "evalrun score history per label and category "
        "(bars: 95% Wilson interval, the room chance alone leaves)",
        fontsize=11,
    )
    path = Path(path)
    try:
        fig.savefig(path, dpi=100)
    except OSError as exc:
        raise ConfigError(f"cannot write {path} ({exc.strerror}); pick a writable path") from exc
    return path

"""`evalrun slope`: decode t/s against context depth (the long-context cliff), and lane compare."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "slope",
        help="decode throughput vs context depth: table, ratio to d0, cliffs, slope.png",
        description="For each depth, send about DEPTH tokens of filler context plus PP new tokens "
        "and stream TG tokens, at each concurrency level, RUNS times; report per-stream decode "
        "t/s (ratio to d0, cliffs), TTFT and aggregate t/s. Depths are calibrated from the "
        "server's own usage.prompt_tokens. `evalrun slope compare A B` puts two runs side by side.",
    )
    from evalrun.commands.target_args import add_target_arguments

    add_target_arguments(p)
    p.add_argument(
        "--depths",
        default="0,8192,32768,131072",
        metavar="LIST",
        help="context depths in tokens: 0,8k,32K,131072 (0,8192,32768,131072)",
    )
    p.add_argument("--pp", type=int, default=2048, help="prompt tokens after the context (2048)")
    p.add_argument("--tg", type=int, default=128, help="tokens generated per stream (128)")
    p.add_argument(
        "--concurrency",
        default="1,2",
        metavar="LIST",
        help="streams sent together, per level (1,2)",
    )
    p.add_argument("--runs", type=int, default=2, help="repetitions; medians are reported (2)")
    p.add_argument("--name", metavar="LABEL", help="label of the run id (default: model/contract)")
    p.add_argument(
        "--warm-cache",
        action="store_true",
        help="share each depth's context across requests so prefix caches may serve it",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per request (600)")
    p.add_argument("--results", default="results", metavar="DIR", help="results dir (results)")
    p.add_argument("--no-plot", action="store_true", help="do not write slope.png")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    sub = p.add_subparsers(dest="slope_command", metavar="compare")
    c = sub.add_parser(
        "compare",
        help="two slope runs side by side per depth",
        description="Put slope run B beside slope run A (ids, folders or "
        "`latest[:label]`), per depth and concurrency, with B/A and ratios to d0.",
    )
    c.add_argument("a", metavar="A", help="the reference lane")
    c.add_argument("b", metavar="B", help="the lane judged against A")
    c.add_argument("--plot", metavar="FILE.png", type=Path, help="overlay both slopes in a PNG")
    c.add_argument(
        "--results", default=argparse.SUPPRESS, metavar="DIR", help="results dir (results)"
    )
    c.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print one JSON object on stdout",
    )


def run(args: argparse.Namespace) -> int:
    if args.slope_command == "compare":
        return _compare(args)
    from evalrun.commands.target_args import target_spec
    from evalrun.serving.launcher import stderr_progress
    from evalrun.slope.record import parse_depths, parse_levels, slope_dir
    from evalrun.slope.sweep import SlopeHooks, SlopeRequest, run_slope

    levels = parse_levels(args.concurrency)
    spec = target_spec(args, timeout=args.timeout, concurrency=max(levels))
    req = SlopeRequest(
        depths=tuple(parse_depths(args.depths)),
        pp=args.pp,
        tg=args.tg,
        concurrency=tuple(levels),
        runs=args.runs,
        label=args.name,
        warm_cache=args.warm_cache,
    )

    def progress(msg: str) -> None:
        print(f"slope: {msg}", file=sys.stderr, flush=True)

    hooks = SlopeHooks(progress=progress, boot=stderr_progress)
    record = run_slope(spec, req, Path(args.results), hooks)
    folder = slope_dir(Path(args.results), record.run_id)
    png = None if args.no_plot else _plot([(record.label, record)], folder / "slope.png")
    from evalrun.slope.report import points_json, render_text

    failed = sum(p.errors for p in record.points)
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": record.run_id,
                    "path": str(folder),
                    "plot": str(png) if png else None,
                    "failed_streams": failed,
                    "points": points_json(record),
                },
                ensure_ascii=False,
            )
        )
    else:
        print(render_text(record))
        print(f"\nwrote {folder / 'slope.json'}" + (f" and {png}" if png else ""))
    if failed:  # like `score` with items in error: the figures are there, but not all of them
        points = sum(1 for p in record.points if p.errors)
        print(
            f"slope: {failed} stream(s) failed at {points} point(s); their figures are "
            "missing (see the notes under the table)",
            file=sys.stderr,
        )
        return 4
    return 0


def _plot(lanes, path: Path) -> Path | None:  # type: ignore[no-untyped-def]
    from evalrun.slope.report import plot

    if not any(p.decode_tps for _, rec in lanes for p in rec.points):
        return None
    try:
        return plot(lanes, path)
    except ImportError:
        print(
            "slope: matplotlib is not installed; no plot (pip install 'evalrun[plot]')",
            file=sys.stderr,
        )
        return None


def _compare(args: argparse.Namespace) -> int:
    from evalrun.slope.record import load_slope
    from evalrun.slope.report import compare_rows, render_compare

    root = Path(getattr(args, "results", "results"))
    a, b = load_slope(args.a, root), load_slope(args.b, root)
    png = (
        _plot(
            [
                (a.label if a.label != b.label else "A", a),
                (b.label if a.label != b.label else "B", b),
            ],
            args.plot,
        )
        if args.plot
        else None
    )
    if getattr(args, "json", False):
        print(
            json.dumps(
                {
                    "a": a.run_id,
                    "b": b.run_id,
                    "plot": str(png) if png else None,
                    "rows": compare_rows(a, b),
                },
                ensure_ascii=False,
            )
        )
    else:
        print(render_compare(a, b))
        if png:
            print(f"\nwrote {png}")
    return 0

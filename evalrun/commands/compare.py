"""`evalrun compare A B`: a paired, honest comparison of two runs of the same suite."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two runs: per-category deltas, flips, exact McNemar, bootstrap interval",
        description="Compare run B against run A (ids, `latest`, `latest:<label>` or tags). "
        "Both runs must use the same suite version.",
    )
    p.add_argument("a", metavar="A", help="the reference run (e.g. an anchor tag)")
    p.add_argument("b", metavar="B", help="the run judged against A")
    p.add_argument("--results", default="results", metavar="DIR", help="results dir (results)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (10000)")
    p.add_argument(
        "--show-responses",
        action="store_true",
        help="print both answers side by side for every flip",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        type=Path,
        help="also write one self-contained HTML page of the flips",
    )
    p.add_argument(
        "--floor",
        metavar="RUN",
        action="append",
        default=[],
        help="an A/A partner of A: another run of A's lane on the same items (a second score, "
        "another boot); B's tokens are then judged against A's own noise floor, not the "
        "default thresholds (repeatable: partners are pooled)",
    )
    p.add_argument(
        "--candidate-floor",
        metavar="RUN",
        action="append",
        default=[],
        help="an A/A partner of B (with --floor): the noise is widened to its own spread "
        "where wider, so a change whose own repeat wobbles as much is not divergent (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import ConfigError, UsageError
    from evalrun.compare.pairing import compare_runs, request_options_warning, to_json
    from evalrun.compare.report import render_html, render_text
    from evalrun.store import RunStore, json_text

    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    store = RunStore(args.results)
    cmp = compare_runs(
        store,
        args.a,
        args.b,
        alpha=args.alpha,
        seed=args.seed,
        resamples=args.resamples,
        floor=args.floor,
        candidate_floor=args.candidate_floor,
    )
    warning = request_options_warning(store.load_run(cmp.a.run_id), store.load_run(cmp.b.run_id))
    if warning:
        print(f"evalrun compare: warning: {warning}", file=sys.stderr)
    if args.html:
        try:
            args.html.write_text(render_html(cmp), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot write {args.html} ({exc.strerror}); pick a writable path"
            ) from exc
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json_text(to_json(cmp)))
    else:
        print(render_text(cmp, show_responses=args.show_responses))
    return 0

"""`evalrun runs`: list stored runs (id, suite, model, score, errors, garbled, status)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list stored runs", description=__doc__)
    p.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )
    p.add_argument("--last", type=int, metavar="N", help="only the N most recent runs")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="also draw the score history per label and category to a PNG",
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.scoring.report import runs_json, runs_table
    from evalrun.scoring.runner import list_runs
    from evalrun.store import json_text

    records = list_runs(args.results, last=args.last)
    if args.plot:
        import sys

        from evalrun.compare.plots import plot_history

        print(f"wrote {plot_history(records, args.plot)}", file=sys.stderr)
    if args.json:
        print(json_text(runs_json(records)))
    elif not records:
        print(f"no runs in {args.results}; start one with `evalrun score --endpoint URL`")
    else:
        print(runs_table(records))
    return 0

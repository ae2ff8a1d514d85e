"""`evalrun show RUN_ID`: the category table and the failed items with what the model said."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show", help="show one run: categories and failed items", description=__doc__
    )
    p.add_argument(
        "run",
        metavar="RUN_ID",
        nargs="?",
        default="latest",
        help="run id, tag, `latest` or `latest:<label>` (default: latest)",
    )
    p.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from evalrun.scoring.report import show_json, show_text
    from evalrun.scoring.runner import with_summary
    from evalrun.store import RunStore, json_text

    store = RunStore(args.results)
    record = with_summary(store, store.load_run(args.run))
    items = store.load_items(record.run_id)
    if args.json:
        print(json_text(show_json(record, items, store)))
    else:
        print(show_text(record, items))
    return 0

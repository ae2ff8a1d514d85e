"""`evalrun runs`: list stored runs (id, suite, model, score, errors, garbled, status)."""

from __future__ import annotations

import argparse
import re
from datetime import datetime, timedelta

from evalrun.base.errors import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("runs", help="list stored runs", description=__doc__)
    p.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )
    p.add_argument("--last", type=int, metavar="N", help="only the N most recent runs")
    p.add_argument("--label", metavar="LABEL", help="only runs with this label")
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only runs started since a date (2026-11-30), a time (2026-11-30T14:00) or an "
        "age (90m, 12h, 7d)",
    )
    p.add_argument("--suite", metavar="NAME", help="only runs of this suite (core, core-v4)")
    p.add_argument(
        "--all",
        action="store_true",
        help="include bisect trial runs (hidden by default, and skipped by `latest`)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="also draw the score history per label and category to a PNG",
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.scoring.report import runs_json, runs_table
    from evalrun.store import filter_runs, json_text
    from evalrun.viewing.runview import list_runs

    records = filter_runs(
        list_runs(args.results),
        label=args.label,
        since=parse_since(args.since) if args.since else None,
        suite=args.suite,
        trials=args.all,
    )
    if args.last is not None:
        records = records[-args.last :] if args.last > 0 else []
    if args.plot:
        import sys

        from evalrun.compare.plots import plot_history

        print(f"wrote {plot_history(records, args.plot)}", file=sys.stderr)
    if args.json:
        print(json_text(runs_json(records)))
    elif not records:
        filtered = args.label or args.since or args.suite or not args.all
        print(
            f"no runs in {args.results} match; try `evalrun runs --all`"
            if filtered and list_runs(args.results)
            else f"no runs in {args.results}; start one with `evalrun score --endpoint URL`"
        )
    else:
        print(runs_table(records))
    return 0


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`--since`: a date (2026-11-30), a date and time (2026-11-30T14:00, local unless it says),
    or an age (90m, 12h, 7d)."""
    now = now or datetime.now().astimezone()
    m = re.fullmatch(r"(\d+)\s*([mhd])", text.strip())
    if m:
        unit = {"m": "minutes", "h": "hours", "d": "days"}[m.group(2)]
        return now - timedelta(**{unit: int(m.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(
            f"--since {text!r} is not a date (2026-11-30), a time (2026-11-30T14:00) or an age "
            "(90m, 12h, 7d)"
        ) from exc
    return when if when.tzinfo else when.astimezone()

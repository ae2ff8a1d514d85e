"""`evalrun grade --suite SUITE FILE [--json]`: grade stored answers without a server."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade a JSONL file of answers against a suite, without a server",
        description='Grade answers offline. FILE holds one {"id": ITEM_ID, "answer": ANSWER} a '
        "line; ANSWER is a string (the reply's content) or {content, tool_calls, reasoning}, the "
        "shape of an item's accept examples. Prints a table, or with --json one "
        "{id, passed, detail, garbled} object a line; --explain adds the span each grader read. "
        "Exit 0 once every line is graded, 2 on a "
        "malformed line or an unknown id.",
    )
    p.add_argument("file", type=Path, help="JSONL file of answers")
    p.add_argument("--suite", default="core", help="suite name or path (core)")
    p.add_argument("--json", action="store_true", help="one JSON object a line on stdout")
    p.add_argument(
        "--explain",
        action="store_true",
        help="add the part of each answer the grader read (the boxed answer, the claim after a "
        "retraction, ...)",
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.grading.batch import grade_answers, read_answers, terminal_safe
    from evalrun.suite.load import load_suite
    from evalrun.tables import table

    suite = load_suite(args.suite)
    items = {i.id: i for i in suite.items}
    graded = grade_answers(items, read_answers(args.file, items, suite.label))
    if args.json:
        for g in graded:
            print(g.model_dump_json(exclude=set() if args.explain else {"span"}))
        return 0
    rows = [
        [
            g.id,
            "garbled" if g.garbled else ("pass" if g.passed else "FAIL"),
            terminal_safe(g.detail),
        ]
        + ([terminal_safe(g.span or "(the whole answer)", 60)] if args.explain else [])
        for g in graded
    ]
    headers = ["id", "verdict", "detail"] + (["read"] if args.explain else [])
    print(table(rows, headers=headers, numparse=False))
    passed = sum(g.passed for g in graded)
    print(f"\n{passed}/{len(graded)} passed ({suite.label})")
    return 0

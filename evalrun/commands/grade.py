"""`evalrun grade --suite SUITE FILE|RUN_FOLDER [--json]`: grade stored answers without a server.

FILE is a JSONL file of answers; RUN_FOLDER a stored run (results/<run-id>), whose responses are
graded again under today's graders, each beside the verdict the run recorded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalrun.endpoint.response import Response
    from evalrun.suite.load import Suite


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade a JSONL file of answers against a suite, without a server",
        description='Grade answers offline. FILE holds one {"id": ITEM_ID, "answer": ANSWER} a '
        "line; ANSWER is a string (the reply's content) or {content, tool_calls, reasoning}, the "
        "shape of an item's accept examples. Prints a table, or with --json one "
        "{id, passed, detail, garbled} object a line; --explain adds the span each grader read. "
        "Exit 0 once every line is graded, 2 on a "
        "malformed line or an unknown id. Given a run folder (results/RUN_ID) instead, grades "
        "that run's stored responses again under this evalrun's graders, beside the verdict the "
        "run recorded (--json adds was_passed); a run of an earlier version of the suite is "
        "graded on the items whose prompt that version shares (the suite's earlier.json) and "
        "the others are listed.",
    )
    p.add_argument("file", type=Path, help="JSONL file of answers, or a stored run's folder")
    p.add_argument("--suite", default="core", help="suite name or path (core)")
    p.add_argument("--json", action="store_true", help="one JSON object a line on stdout")
    p.add_argument(
        "--explain",
        action="store_true",
        help="add the part of each answer the grader read (the boxed answer, the claim after a "
        "retraction, ...)",
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.base.tables import table
    from evalrun.grading.batch import grade_answers, read_answers, regrade, terminal_safe
    from evalrun.suite.load import load_suite

    suite = load_suite(args.suite)
    items = {i.id: i for i in suite.items}
    stored = args.file.is_dir()
    skipped: list[str] = []
    was = suite.label
    if stored:
        answers, skipped, was = _stored_answers(args.file, suite)
        graded = regrade(items, answers)
    else:
        graded = grade_answers(items, read_answers(args.file, items, suite.label))
    if args.json:
        for g in graded:
            hide = set() if args.explain else {"span"}
            print(g.model_dump_json(exclude=hide if stored else hide | {"was_passed"}))
        if skipped:
            print(
                f"not graded again (prompt changed since {was}): {', '.join(skipped)}",
                file=sys.stderr,
            )
        return 0
    rows = [
        [g.id]
        + (["pass" if g.was_passed else "FAIL"] if stored else [])
        + [
            "garbled" if g.garbled else ("pass" if g.passed else "FAIL"),
            terminal_safe(g.detail),
        ]
        + ([terminal_safe(g.span or "(the whole answer)", 60)] if args.explain else [])
        for g in graded
    ]
    headers = ["id", *(["was"] if stored else []), "verdict", "detail"]
    headers += ["read"] if args.explain else []
    print(table(rows, headers=headers, numparse=False))
    passed = sum(g.passed for g in graded)
    print(f"\n{passed}/{len(graded)} passed ({suite.label})")
    if stored:
        changed = [g.id for g in graded if g.passed != g.was_passed]
        before = sum(bool(g.was_passed) for g in graded)
        print(f"recorded {before}/{len(graded)}; changed: {', '.join(changed) or 'none'}")
        if skipped:
            print(f"not graded again (prompt changed since {was}): {', '.join(skipped)}")
    return 0


def _stored_answers(
    folder: Path, suite: Suite
) -> tuple[list[tuple[str, Response, bool]], list[str], str]:
    """(item id, response, recorded verdict) of each graded item of the run in `folder`, the ids
    left out because their prompt changed since the run's suite version, and that version's
    label. Items in error have no answer to grade and are left out too."""
    from evalrun.base.errors import UsageError
    from evalrun.store import RunStore
    from evalrun.suite.earlier import earlier_version, unchanged_prompts

    store = RunStore(folder.parent)
    record = store.load_run(folder.name)
    ref = record.suite
    was = f"{ref.name}-v{ref.version}"
    ids = {i.id for i in suite.items}
    if (ref.name, ref.version) != (suite.name, suite.version):
        earlier = earlier_version(suite, ref.version) if ref.name == suite.name else None
        if earlier is None or earlier.sha256 != ref.sha256:
            raise UsageError(
                f"run {record.run_id} was scored on {was}, not {suite.label}, and "
                f"{suite.path}/earlier.json does not record that version's prompts; "
                "pass --suite with that version"
            )
        ids = unchanged_prompts(suite, earlier)
    answers, skipped = [], []
    for it in store.load_items(record.run_id):
        if it.response is None or it.grade is None:
            continue
        if it.id in ids:
            answers.append((it.id, it.response, it.grade.passed))
        else:
            skipped.append(it.id)
    return answers, skipped, was

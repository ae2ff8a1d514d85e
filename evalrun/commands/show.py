"""`evalrun show RUN_ID`: the category table and the failed items: prompt, what the model said.

Prompts come from the run's suite (when it still matches the run's sha256); a long prompt is
cut to its start, the region around the fact the item asks about, and its end. `--full` prints
every prompt and answer whole; `--items ID,ID` shows those items, passed or not.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument("--full", action="store_true", help="prompts and answers in full, unclipped")
    p.add_argument("--items", metavar="ID,ID", help="show these items (passed ones too)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import SuiteError, UsageError
    from evalrun.scoring.report import show_json, show_text
    from evalrun.store import RunStore, json_text
    from evalrun.suite.load import load_suite
    from evalrun.suite.prompt import prompt_line
    from evalrun.viewing.runview import with_summary

    store = RunStore(args.results)
    record = with_summary(store, store.load_run(args.run))
    items = store.load_items(record.run_id)
    wanted = [i.strip() for i in (args.items or "").split(",") if i.strip()]
    if wanted:
        missing = sorted(set(wanted) - {i.id for i in items})
        if missing:
            raise UsageError(
                f"run {record.run_id} has no item {', '.join(missing[:5])}; "
                f"`evalrun export {record.run_id}` lists its items"
            )
        items = [i for i in items if i.id in wanted]
    prompts: dict[str, str] = {}
    try:
        suite = load_suite(record.suite.path or record.suite.name)
    except SuiteError:
        suite = None
    if suite is not None and suite.sha256 == record.suite.sha256:
        shown = {i.id for i in items if wanted or i.status != "passed"}
        prompts = {i.id: prompt_line(i, full=args.full) for i in suite.items if i.id in shown}
    if args.json:
        out = show_json(record, items, store)
        for rec in out["failed_items"]:
            rec["prompt"] = prompts.get(rec["id"])
        if wanted:
            out["items"] = [
                dict(i.model_dump(mode="json"), prompt=prompts.get(i.id)) for i in items
            ]
        print(json_text(out))
    else:
        print(show_text(record, items, prompts, full=args.full, every=bool(wanted)))
    return 0

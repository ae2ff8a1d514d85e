"""`evalrun tag RUN NAME`: name an anchor run (e.g. sglang-anchor), usable wherever a run id is."""

from __future__ import annotations

import argparse
import re

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "tag",
        help="name an anchor run, usable wherever a run id is",
        description="Point NAME at RUN (an id, latest, latest:<label> or another tag). "
        "Re-tagging moves the name. Without arguments, list the tags.",
    )
    p.add_argument("run", metavar="RUN", nargs="?", help="the run to name")
    p.add_argument("name", metavar="NAME", nargs="?", help="the anchor name, e.g. sglang-anchor")
    p.add_argument("--results", default="results", metavar="DIR", help="results dir (results)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import UsageError
    from evalrun.store import RunStore, json_text

    store = RunStore(args.results)
    if args.run is None:
        tags = store.tags()
        if args.json:
            print(json_text({"tags": tags}))
        else:
            print("\n".join(f"{n}  {r}" for n, r in sorted(tags.items())) or "no tags")
        return 0
    if args.name is None:
        raise UsageError(
            "usage: evalrun tag RUN NAME (e.g. evalrun tag latest:sglang sglang-anchor)"
        )
    name = args.name
    if not _NAME_RE.fullmatch(name) or name == "latest" or name.startswith("latest:"):
        raise UsageError(
            f"tag name {name!r} must be letters, digits, '.', '_' or '-' and not "
            "'latest'; e.g. sglang-anchor"
        )
    if name in store.run_ids():
        raise UsageError(f"{name!r} is a run id; pick another name for the tag")
    before = store.tags().get(name)
    store.ensure_writable()
    store.set_tag(name, args.run)
    run_id = store.tags()[name]
    if args.json:
        print(json_text({"tag": name, "run_id": run_id, "previous": before}))
    else:
        moved = f" (was {before})" if before and before != run_id else ""
        print(f"{name} -> {run_id}{moved}")
    return 0

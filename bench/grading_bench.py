"""Grader figures on the labelled grading set: false rejects / false accepts per category and half.

    .venv/bin/python -m bench.grading_bench              # both halves, per category and style
    .venv/bin/python -m bench.grading_bench --misses     # also list every misjudged row
    .venv/bin/python -m bench.grading_bench --half tune  # one half only
    .venv/bin/python -m bench.grading_bench --set blind  # the blind set (tests/data/grading/README.md)
    .venv/bin/python -m bench.grading_bench --set blinds --half held-out  # every blind set, pooled

A false reject is a correct answer that failed; a false accept is a wrong answer that passed. Also
prints the degenerate checks: the user prompt echoed back, and constant answers ("Yes", "C", "0",
"OK", ...) graded against every item. Prints figures only; tests/test_grading_set.py enforces the
held-out budget.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from evalrun.endpoint.response import Response, example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.load import Item, load_suite
from tests.support.grading_set import BLINDS, SETS, held_out, load_rows

CONSTANTS = ["Yes", "No", "A", "B", "C", "D", "0", "1", "OK", "True"]


def judge(items: dict[str, Item], rows: list[dict]) -> list[tuple[dict, bool]]:
    return [(r, grade(items[r["id"]], example_to_response(r["answer"])).passed) for r in rows]


def rates(judged: list[tuple[dict, bool]]) -> tuple[int, int, int, int]:
    """(false rejects, correct rows, false accepts, wrong rows)."""
    fr = sum(1 for r, p in judged if r["passed"] and not p)
    fa = sum(1 for r, p in judged if not r["passed"] and p)
    good = sum(1 for r, _ in judged if r["passed"])
    return fr, good, fa, len(judged) - good


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f}% ({n}/{d})" if d else "   -"


def table(title: str, judged: list[tuple[dict, bool]], key: str, cats: dict[str, str]) -> None:
    groups: dict[str, list[tuple[dict, bool]]] = defaultdict(list)
    for r, p in judged:
        groups[cats[r["id"]] if key == "category" else r["style"]].append((r, p))
    print(f"\n{title}")
    print(f"  {key:<16} {'false rejects':>18} {'false accepts':>18}")
    for name in sorted(groups):
        fr, good, fa, wrong = rates(groups[name])
        print(f"  {name:<16} {pct(fr, good):>18} {pct(fa, wrong):>18}")
    fr, good, fa, wrong = rates(judged)
    print(f"  {'overall':<16} {pct(fr, good):>18} {pct(fa, wrong):>18}")


def degenerate(items: dict[str, Item]) -> None:
    echo = [
        i.id
        for i in items.values()
        if grade(i, Response(content=_user_text(i), finish_reason="stop")).passed
    ]
    print(f"\nprompt echoed back passes {len(echo)} items: {', '.join(echo) or '-'}")
    yesno = [i for i in items.values() if _is_yes_no(i)]
    lettered = [i for i in items.values() if _is_lettered(i)]
    print(
        f"constant answers ({len(yesno)} yes/no items, {len(lettered)} lettered multiple-choice):"
    )
    for c in CONSTANTS:
        resp = Response(content=c, finish_reason="stop")
        passed = [i.id for i in items.values() if grade(i, resp).passed]
        yn = sum(i.id in passed for i in yesno)
        mc = sum(i.id in passed for i in lettered)
        print(
            f"  {c!r:<7} passes {len(passed):3d} items (yes/no {yn}, lettered {mc}): "
            f"{', '.join(passed[:12])}{' ...' if len(passed) > 12 else ''}"
        )


def _user_text(item: Item) -> str:
    return next(m["content"] for m in reversed(item.messages) if m["role"] == "user")


def _is_yes_no(item: Item) -> bool:
    return "answer yes or no" in _user_text(item).lower()


def _is_lettered(item: Item) -> bool:
    return "answer with the letter" in _user_text(item).lower()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=["tune", "held-out", "both"], default="both")
    ap.add_argument("--misses", action="store_true", help="list every misjudged row")
    ap.add_argument("--styles", action="store_true", help="also break figures down by style")
    ap.add_argument(
        "--set",
        choices=sorted(SETS) + ["blinds"],
        default="existing",
        help="which labelled set; 'blinds': every blind set with a held-out half, pooled",
    )
    args = ap.parse_args()
    suite = load_suite("core")
    items = {i.id: i for i in suite.items}
    cats = {i.id: i.category for i in suite.items}
    names = BLINDS if args.set == "blinds" else (args.set,)
    rows = [r for name in names for r in load_rows(SETS[name])]
    print(
        f"suite {suite.label}, {args.set} set: {len(rows)} labelled answers "
        f"({sum(r['passed'] for r in rows)} correct)"
    )
    halves = {
        "tune": [r for r in rows if not held_out(r)],
        "held-out": [r for r in rows if held_out(r)],
    }
    for name, part in halves.items():
        if args.half not in ("both", name):
            continue
        judged = judge(items, part)
        table(f"{name} half ({len(part)} rows), by category", judged, "category", cats)
        if args.styles:
            table(f"{name} half, by style", judged, "style", cats)
        if args.misses:
            print(f"\n{name} misjudged:")
            for r, p in judged:
                if p != r["passed"]:
                    kind = "FR" if r["passed"] else "FA"
                    shown = r["answer"] if isinstance(r["answer"], str) else str(r["answer"])
                    print(f"  {kind} {r['id']:<12} {r['style']:<14} {shown[:110]!r}")
    degenerate(items)


if __name__ == "__main__":
    main()

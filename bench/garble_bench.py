"""Garble detector figures on the labeled corpus: confusion matrix, rates per source, cost per text.

    /work/venv/bin/python bench/garble_bench.py            # whole corpus + holdout quarter
    /work/venv/bin/python bench/garble_bench.py --misses   # also list every miss

Prints figures only; the targets (<= 1% of clean flagged, >= 98% of garbled caught) are enforced
by tests/test_garble.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.garble_corpus import holdout, load_corpus, tuning_half

from evalrun.grading.garble import detect


def family(source: str) -> str:
    """smollm2-ref/capital-fr/... -> smollm2-ref; synthetic/flood/3 -> synthetic/flood."""
    head, _, rest = source.partition("/")
    if head in ("synthetic", "written"):
        return f"{head}/{rest.split('/')[0]}"
    if source.startswith(("file:", "metadata:")):  # file:evalrun/dd.py#L81-88 -> file#function
        kind = source.rpartition("#")[2]
        return f"{source.split(':')[0]}#{'function' if kind.startswith('L') else kind}"
    if head.startswith("smollm2-ref-prefix"):  # prefix12+mismap-k-v -> prefix+mismap-k-v
        return "smollm2-ref-prefix+" + head.split("+", 1)[1]
    return head


def confusion(rows: list[dict], verdicts: list[bool], title: str) -> None:
    tp = sum(v for r, v in zip(rows, verdicts) if r["label"] == "garbled")
    fn = sum(not v for r, v in zip(rows, verdicts) if r["label"] == "garbled")
    fp = sum(v for r, v in zip(rows, verdicts) if r["label"] == "clean")
    tn = sum(not v for r, v in zip(rows, verdicts) if r["label"] == "clean")
    print(f"\n{title}: {len(rows)} texts")
    print("                    called garbled   called clean")
    print(f"  label garbled     {tp:>14}   {fn:>12}")
    print(f"  label clean       {fp:>14}   {tn:>12}")
    print(
        f"  false-positive rate on clean: {fp / max(1, fp + tn):.2%}   "
        f"catch rate on garbled: {tp / max(1, tp + fn):.2%}   "
        f"precision: {tp / max(1, tp + fp):.2%}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--misses", action="store_true", help="list every misclassified text")
    ap.add_argument("--repeat", type=int, default=5, help="timing passes (default 5)")
    args = ap.parse_args(argv)
    rows = load_corpus()
    for r in rows:  # warm caches (script lookups) once, as a long-running scorer would
        detect(r["text"], r["expect"])
    costs: list[float] = []
    verdicts = []
    cpu0 = time.process_time()
    for r in rows:
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            v = detect(r["text"], r["expect"])
            best = min(best, time.perf_counter() - t0)
        costs.append(best * 1e6)
        verdicts.append(v)
    cpu_per_text = (time.process_time() - cpu0) / (len(rows) * args.repeat) * 1e6
    called = [v.garbled for v in verdicts]
    confusion(rows, called, "whole corpus")
    held = [i for i, r in enumerate(rows) if holdout(r)]
    confusion([rows[i] for i in held], [called[i] for i in held], "holdout quarter (not tuned on)")
    for want, title in (
        (True, "tuning half (spelling + tail signals tuned here)"),
        (False, "other half (tail rule corrected once after seeing it)"),
    ):
        sel = [i for i, r in enumerate(rows) if tuning_half(r) is want]
        confusion([rows[i] for i in sel], [called[i] for i in sel], title)

    print("\nper source family (texts, called garbled):")
    total, flagged = Counter(), Counter()
    for r, c in zip(rows, called):
        key = (r["label"], family(r["source"]))
        total[key] += 1
        flagged[key] += c
    for key in sorted(total):
        print(f"  {key[0]:<8} {key[1]:<36} {total[key]:>4}  {flagged[key]:>4}")

    lengths = [len(r["text"]) for r in rows]
    print(
        f"\ncost per text (best of {args.repeat}): mean {statistics.mean(costs):.0f} µs, "
        f"median {statistics.median(costs):.0f} µs, "
        f"p95 {sorted(costs)[int(0.95 * len(costs))]:.0f} µs, max {max(costs):.0f} µs; "
        f"texts {statistics.median(lengths):.0f} chars median; CPU time {cpu_per_text:.0f} µs "
        f"per text (wall figures suffer on a busy machine, CPU time less so)"
    )
    for lo, hi in ((0, 200), (200, 600), (600, 1500), (1500, 10**9)):
        sel = [c for c, n in zip(costs, lengths) if lo <= n < hi]
        if sel:
            print(
                f"  {lo:>5}-{hi if hi < 10**9 else '':<5} chars: {len(sel):>4} texts, "
                f"median {statistics.median(sel):.0f} µs"
            )
    if args.misses:
        print("\nmisses:")
        for r, v in zip(rows, verdicts):
            if v.garbled != (r["label"] == "garbled"):
                print(
                    f"  {r['label']:<8} {r['source']}: {v.score:.2f} {v.reasons} "
                    f"{r['text'][:100]!r}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

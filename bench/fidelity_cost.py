"""What token capture costs on disk and what judging it costs in time. Prints figures.

Setup: the core suite (184 items) scored twice at the defaults (`top_logprobs` 5, the first 128
tokens of each answer kept) against the fake server on 127.0.0.1, which sends every answer with
logprobs the way vLLM does. Two answer shapes:

- `long` (the worst case the 5 MB budget is for): every answer 160 tokens, so each trace holds
  the full 128, of words drawn from a seeded vocabulary with one non-ASCII word in ten,
  full-precision logprobs;
- `suite`: each item answered with its first `accept` example (the size of a real run's traces).

For each shape: the size of each run's tokens.jsonl, `compare` in process (`compare_runs`, the
two runs loaded, paired and judged) and `evalrun compare A B` as a command (interpreter start
and imports included), median of `--repeat`. The second run differs from the first on one item
in twenty (a near tie at token 5), so the judging walks every shared prefix.

    python -m bench.fidelity_cost [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evalrun.compare.pairing import compare_runs
from evalrun.compare.report import render_text
from evalrun.endpoint.response import example_to_response
from evalrun.scoring.run import ScoreRequest, score_suite
from evalrun.serving.target import Target
from evalrun.store import RunStore
from evalrun.store.tokens import TOKENS_FILE
from evalrun.suite.load import load_suite
from tests.fakeserver import FakeServer, last_user, reply

ROOT = Path(__file__).resolve().parent.parent
LONG_TOKENS = 160
BUDGET = 5_000_000

Step = tuple[str, float, list[tuple[str, float]]]


def long_answer(rng: random.Random, vocab: list[str]) -> list[Step]:
    steps: list[Step] = []
    for _ in range(LONG_TOKENS):
        word = rng.choice(vocab)
        lp = -rng.random() * 2
        alts = [(word, lp), (rng.choice(vocab), lp - 0.1)]
        alts += [(rng.choice(vocab), lp - 1 - rng.random() * 4) for _ in range(3)]
        steps.append((word, lp, alts))
    return steps


def words_of(text: str) -> list[Step]:
    import re

    return [(w, -0.05, [(w, -0.05), (" zz", -4.0)]) for w in re.findall(r"\s*\S+|\s+", text)]


def nudged(steps: list[Step]) -> list[Step]:
    """The same answer but for a near tie at token 5 (the second choice taken)."""
    if len(steps) <= 5 or len(steps[5][2]) < 2:
        return steps
    word, lp, alts = steps[5]
    other = alts[1][0]
    return [*steps[:5], (other, lp - 0.05, [(other, lp - 0.05), (word, lp - 0.06)]), *steps[6:]]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    suite = load_suite("core")
    by_prompt = {item.messages[-1].get("content"): item for item in suite.items}
    rng = random.Random(0)
    vocab = [f" w{i}" for i in range(2000)] + [" naïve", " 東京", " ещё", " déjà"] * 50
    long_steps = {item.id: long_answer(rng, vocab) for item in suite.items}
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def rule_for(shape: str, second: bool) -> Any:
        def rule(body: dict[str, Any]) -> Any:
            item = by_prompt.get(last_user(body))
            if item is None:
                return reply("ok")
            if shape == "long":
                steps = long_steps[item.id]
            else:
                steps = words_of(example_to_response(item.accept[0]).content or "")
            if second and int(item.id.rsplit("-", 1)[-1]) % 20 == 0:
                steps = nudged(steps)
            return reply("".join(s[0] for s in steps), tokens=steps)

        return rule

    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp, FakeServer() as server:
        store = RunStore(Path(tmp) / "results")
        for shape in ("long", "suite"):
            ids = []
            for second in (False, True):
                server.rule = rule_for(shape, second)
                label = f"{shape}-{'b' if second else 'a'}"
                req = ScoreRequest(
                    target=Target.endpoint(server.base_url), suite=suite, label=label
                )
                record, _ = score_suite(req, store)
                ids.append(record.run_id)
            sizes = [(store.run_dir(i) / TOKENS_FILE).stat().st_size for i in ids]
            inproc, inproc_cpu, whole, whole_cpu = [], [], [], []
            for _ in range(args.repeat):
                started, cpu = time.perf_counter(), time.process_time()
                cmp = compare_runs(store, ids[0], ids[1])
                render_text(cmp)
                inproc.append(time.perf_counter() - started)
                inproc_cpu.append(time.process_time() - cpu)
                started, cpu = time.perf_counter(), _children_cpu()
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "evalrun",
                        "compare",
                        *ids,
                        "--results",
                        str(store.root),
                    ],
                    check=True,
                    capture_output=True,
                    env=env,
                )
                whole.append(time.perf_counter() - started)
                whole_cpu.append(_children_cpu() - cpu)
            f = cmp.fidelity
            assert f is not None
            print(
                f"{shape}: tokens.jsonl {sizes[0]:,} and {sizes[1]:,} bytes for "
                f"{len(suite.items)} items (budget {BUDGET:,}: "
                f"{'within' if max(sizes) < BUDGET else 'OVER'}); {f.tokens:,} tokens compared"
            )
            print(
                f"{shape}: compare in process {statistics.median(inproc):.3f} s "
                f"(CPU {statistics.median(inproc_cpu):.3f} s), `evalrun compare` "
                f"{statistics.median(whole):.3f} s (CPU {statistics.median(whole_cpu):.3f} s); "
                f"median of {args.repeat}, target < 1 s"
            )
            print(f"{shape}: {f.line()}")


if __name__ == "__main__":
    main()

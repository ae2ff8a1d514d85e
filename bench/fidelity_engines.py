"""Fidelity across engines: the llama.cpp reference (Q4_1) against the vLLM lane (bf16), by token.

    python -m bench.fidelity_engines capture [--vllm N]   # boots the reference once, vLLM N times
    python -m bench.fidelity_engines figures

`capture` scores the fidelity probe items (bench/fidelity_calibration.py's PROBE) on the reference
contract (bisect/contracts/reference.yaml, 4 slots) and N times on the `vllm-cpu` lane
(`evalrun lane setup vllm-cpu`, concurrency 8), each its own boot, labelled `fid-eng-<lane>` in
bench-results/. Take the engine lock around it on a shared machine
(`flock /work/engine.lock python -m bench.fidelity_engines capture`).

`figures` judges the reference against each vLLM run and the vLLM runs against each other with
the library's one code path (evalrun.compare.fidelity), twice: on the tokens as stored (token ids
where the engine sent them: llama.cpp's server for every token and alternative, vLLM for its
chosen tokens) and with the ids taken out (what a lane without ids, such as sglang, compares by:
bytes, with the renderings of invisible tokens folded). Each pair's first divergence per item is
listed under its verdict line.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

from bench.fidelity_calibration import score

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench-results"
CONTRACTS = REPO / "bisect" / "contracts"


def capture(vllm_runs: int) -> None:
    score("eng-reference", concurrency=4, contract=CONTRACTS / "reference.yaml")
    for _ in range(vllm_runs):
        score("eng-vllm-cpu", concurrency=8, contract=CONTRACTS / "vllm-cpu.yaml")


def _without_ids(traces: dict) -> dict:
    """The traces as a capture without token ids would have stored them (hex bytes kept)."""

    def strip(entry: list, start: int) -> list:
        return [*entry[:start], *(x for x in entry[start:] if x.__class__ is str)]

    return {
        k: t.model_copy(
            update={
                "tokens": [
                    [*strip(tok, 3)[:2], [strip(a, 2) for a in tok[2]], *strip(tok, 3)[3:]]
                    for tok in t.tokens
                ]
            }
        )
        for k, t in traces.items()
    }


def figures() -> None:
    from evalrun.compare.fidelity import records_fidelity
    from evalrun.store import RunStore
    from evalrun.store.tokens import load_traces

    store = RunStore(RESULTS)
    by_label: dict[str, list[str]] = {}
    for run_id in store.run_ids():
        by_label.setdefault(store.load_run(run_id).label, []).append(run_id)
    refs, vllms = by_label.get("fid-eng-reference", []), by_label.get("fid-eng-vllm-cpu", [])
    pairs = [(r, v) for r in refs for v in vllms] + list(itertools.combinations(vllms, 2))
    print(f"reference runs {len(refs)}, vLLM runs {len(vllms)}, pairs {len(pairs)}")
    for a, b in pairs:
        run_a, run_b = store.load_run(a), store.load_run(b)
        items_a, items_b = store.load_items(a), store.load_items(b)
        traces_a, traces_b = load_traces(store.run_dir(a)), load_traces(store.run_dir(b))
        for how, ta, tb in (
            ("by id", traces_a, traces_b),
            ("no ids", _without_ids(traces_a), _without_ids(traces_b)),
        ):
            f = records_fidelity(run_a, items_a, ta, run_b, items_b, tb)
            print(f"{a} vs {b} ({how}): {f.line()}")
            for item_id, d in sorted(f.by_item.items()):
                print(
                    f"    {item_id}: token {d.position} {d.kind}: "
                    f"A {d.a_token!r} {d.a_logprob}, B {d.b_token!r} {d.b_logprob}"
                )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--vllm", type=int, default=2, help="vLLM boots (default 2)")
    sub.add_parser("figures")
    args = p.parse_args(argv)
    if args.cmd == "capture":
        capture(args.vllm)
    else:
        figures()
    return 0


if __name__ == "__main__":
    sys.exit(main())

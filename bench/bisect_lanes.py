"""A pool of lanes against one lane: wall time of a one-knob sweep, rounds and boots of dd.

    .venv/bin/python -m bench.bisect_lanes [--boot-delay 3] [--launch local|ssh|slurm]

Boots tests/fake_engines/knobs.py (its --boot-delay stands in for an engine's load time) through
the real launcher. `--launch ssh|slurm` needs the remote tier's sshd / Slurm (root; it starts them
itself, as the tests do). Prints one line per figure.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evalrun.bisection.driver import BisectRequest, run_bisect
from tests.fakeserver import simple_item, write_suite
from tests.support.knob_contracts import eight_knobs, write_contract


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boot-delay", type=float, default=3.0)
    parser.add_argument("--launch", choices=["local", "ssh", "slurm"], default="local")
    args = parser.parse_args()
    launch, stop = None, None
    if args.launch == "ssh":
        from tests.support.remote import Sshd

        sshd = Sshd().start()
        launch, stop = sshd.launch(), sshd.stop
        launch["host"] = ["127.0.0.1"] * 4
    elif args.launch == "slurm":
        from tests.support.remote import SlurmCluster

        cluster = SlurmCluster().start()
        launch, stop = {"kind": "slurm"}, cluster.stop
    try:
        run(args.boot_delay, launch, args.launch)
    finally:
        if stop:
            stop()


def run(delay: float, launch: dict | None, where: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-lanes-"))
    suite = write_suite(tmp / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    args = {"load-format": "safetensors", "boot-delay": delay}
    contract = write_contract(tmp, "sweep", args, launch)
    values = ["safetensors", "instanttensor", "auto", "pt"]
    print(f"launch {where}, engine boot delay {delay:.1f}s")
    for lanes in (1, 4):
        req = BisectRequest(
            contract=contract, knob="load-format", values=values, suite=str(suite),
            results=str(tmp / f"sweep{lanes}"), burst=2, lanes=lanes,
        )  # fmt: skip
        start = time.monotonic()
        rec = run_bisect(req, log=lambda _: None)
        wall = time.monotonic() - start
        one = max(t.boot_seconds or 0 for t in rec.trials)
        print(
            f"one-knob sweep of 4 values, {lanes} lane(s): {wall:.1f}s wall, {rec.boots} boots, "
            f"{rec.rounds} rounds (slowest boot {one:.1f}s); {rec.verdict.split(',')[0]}"
        )
    for lanes in (1, 4):
        folder = tmp / f"dd{lanes}"
        folder.mkdir()
        good, bad = eight_knobs(folder, launch)
        req = BisectRequest(
            good=good, bad=bad, suite=str(suite), results=str(folder / "r"), burst=2, lanes=lanes
        )
        start = time.monotonic()
        rec = run_bisect(req, log=lambda _: None)
        print(
            f"dd of 8 knobs, 1 culprit, {lanes} lane(s): {rec.rounds} rounds, {rec.boots} boots, "
            f"{time.monotonic() - start:.1f}s wall; {rec.verdict.split(' (')[0]}"
        )


if __name__ == "__main__":
    main()

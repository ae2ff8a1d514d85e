"""Replays `bisect --floor-knob` offline on stored GPU bisects (bench/gpu/runs.py `bisect:NAMExN`).

    python -m bench.gpu.replay_floor_knob RESULTS

Every repeat of those bisects booted each trial afresh (--no-cache), so a good side (`-np 1`)
of one repeat and a `-np 16` trial of another are two independent boots, as the floor boot of
`--floor-knob parallel=16 --floor-knob ctx-size=131072` is. For each bad side of the `fa1`
(flash attention on at `-np 1`), `np-and-q4k` (`-np 16` with a q4_0 K cache) and `np-only`
(`-np 16`) repeats, the floor is measured by the library's own code (compare/fidelity.py
measure_floor with `knobs`) from its good side against a `-np 16` boot of another repeat, and the
bad side graded as a trial is (against_floor with its own serial pair). Prints the grades.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from evalrun.compare.fidelity import against_floor, judge, measure_floor, serial_pair
from evalrun.compare.floor import floor_of
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store.tokens import load_traces

KNOBS = "parallel=16, ctx-size=131072"


def traces(results: Path, run_ids: list[str]) -> dict[str, TokenTrace]:
    out: dict[str, TokenTrace] = {}
    for run_id in run_ids:
        out.update(load_traces(results / run_id))
    return out


def sides(results: Path, name: str) -> list[tuple[dict[str, TokenTrace], dict[str, TokenTrace]]]:
    """(good side, bad side) probe tokens of each stored repeat of one bisect."""
    out = []
    for path in sorted(results.glob(f"bisect-{name}-r*.json")):
        rec = json.loads(path.read_text())
        trials = {t["variant"].split(" ")[0]: t for t in rec["trials"]}
        if "(good)" in trials and "(bad)" in trials:
            out.append(
                (
                    traces(results, trials["(good)"]["run_ids"]),
                    traces(results, trials["(bad)"]["run_ids"]),
                )
            )
    return out


def main(results: Path) -> int:
    batched = [bad for _, bad in sides(results, "np-only")]
    for name in ("fa1", "np-and-q4k", "np-only"):
        grades: Counter[str] = Counter()
        units = []
        for k, (good, bad) in enumerate(sides(results, name)):
            for j, other in enumerate(batched):
                if name == "np-only" and j == k:
                    continue  # its own bad side is not its floor boot
                floor = measure_floor(good, other, knobs=KNOBS)
                if floor is None:
                    continue
                ids = [i for i in good if i in floor.item_drift]
                own = serial_pair(bad)
                mine = floor_of([own], "serial vs burst on this trial") if own else None
                fid = against_floor(judge(good, bad, ids), floor, mine)
                assert fid.floor is not None
                grades[fid.floor.grade] += 1
                units.append(fid.floor.units)
        span = f"{min(units):.2f}-{max(units):.2f}" if units else "-"
        print(f"{name}: {dict(grades)} ({sum(grades.values())} pairs; floor units {span})")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

"""`evalrun watch` on the reference: the false-alarm rate over healthy ticks, the cost of a tick,
and how many ticks a restart with another KV-cache type takes to alarm.

    flock /tmp/evalrun-engine.lock python -m bench.watch_reference [--healthy 200] [--fault 6]

Boots the reference (bisect/contracts/reference.yaml) on a free port, scores an anchor of
`--anchor-limit` items drawn across the core suite but its long-context category (greedy, with logprobs: the defaults), then
watches it back to back (`--every 0`) for `--healthy` ticks. Then the server is stopped (the
watch sees it down), booted again on the same port with `--fault-set` (default
`cache-type-k=q4_0`), and watched for `--fault` more ticks. `--contract` watches another
contract's server the same way (the vLLM lane: `--contract bisect/contracts/vllm-cpu.yaml
--fault-set 'hf-overrides={...rope_theta 20000...}'`). Prints one JSON object: ticks, alarms
in the healthy phase (false alarms) and the largest statistic there, the tick of the alarm after
the restart, the down/up events, the escalation's sign-off, and per tick: requests, prompt and
completion tokens, seconds (median and 90th percentile). Exit 0 when the healthy phase raised no
alarm and the fault phase did; 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _spread(values: list[float]) -> dict[str, float]:
    """Median, 90th percentile and largest of `values`."""
    if not values:
        return {}
    return {
        "median": round(statistics.median(values), 3),
        "p90": round(_quantile(values, 0.9), 3),
        "max": round(max(values), 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--healthy", type=int, default=200)
    p.add_argument("--fault", type=int, default=6)
    p.add_argument("--fault-set", default="cache-type-k=q4_0")
    p.add_argument(
        "--contract",
        default=None,
        help="watch this contract's server instead of the reference's (e.g. "
        "bisect/contracts/vllm-cpu.yaml with an hf-overrides rope change as --fault-set)",
    )
    p.add_argument("--anchor-limit", type=int, default=40)
    p.add_argument("--results", default=None, help="run store (default: a temporary folder)")
    args = p.parse_args(argv)

    import evalrun
    from evalrun.serving.contract import load_contract, reference_contract_path
    from evalrun.serving.launcher import boot_server
    from evalrun.serving.ports import free_port
    from evalrun.serving.target import TargetSpec
    from evalrun.store import RunStore
    from evalrun.suite.load import load_suite
    from evalrun.watching import (
        DEFAULT_CUSUM,
        WatchHooks,
        WatchOptions,
        false_alarm_ticks,
        run_watch,
    )

    results = Path(args.results or tempfile.mkdtemp(prefix="watch-ref-"))
    port = free_port()
    contract = args.contract or reference_contract_path()
    healthy = load_contract(contract, sets=[f"port={port}"])
    faulty = load_contract(contract, sets=[f"port={port}", args.fault_set])
    stack = contextlib.ExitStack()
    server = stack.enter_context(boot_server(healthy, results / "server-healthy.log"))
    # long-context items cost a minute of prefill each on 2 cores and a probe never uses them
    categories = sorted({i.category for i in load_suite("core").items} - {"long-context"})
    anchor = evalrun.score(
        server.base_url,
        limit=args.anchor_limit,
        categories=categories,
        results=results,
        label="anchor",
    )
    phase = {"restart_tick": None, "booted": False}

    def on_event(data: dict[str, Any]) -> None:
        if data["event"] == "tick" and data["tick"] == args.healthy:
            stack.close()  # the server goes away: the next tick finds it down
            phase["restart_tick"] = data["tick"]

    def sleep(seconds: float) -> None:
        if phase["restart_tick"] is not None and not phase["booted"]:
            stack.enter_context(boot_server(faulty, results / "server-fault.log"))
            phase["booted"] = True

    lines: list[str] = []
    try:
        result = run_watch(
            WatchOptions(
                anchor=anchor.run_id,
                target=TargetSpec(endpoint=server.base_url),
                name="bench",
                results=results,
                every_s=0.0,
                retry_s=1.0,
                ticks=args.healthy + args.fault,
                keep_runs=args.healthy + args.fault,
                keep_points=args.healthy + args.fault,
            ),
            WatchHooks(sleep=sleep, on_event=on_event, say=lines.append),
        )
    finally:
        stack.close()
    ticks = [e for e in result.events if e["event"] == "tick"]
    before = [e for e in ticks if e["tick"] <= args.healthy]
    after = [e for e in ticks if e["tick"] > args.healthy and e["status"] != "down"]
    alarms = [e for e in result.events if e["event"] == "alarm"]
    healthy_alarms = [a for a in alarms if a["tick"] <= args.healthy]
    fault_alarms = [a for a in alarms if a["tick"] > args.healthy]
    tick_store = RunStore(result.folder / "ticks")
    prompt = completion = requests = 0
    for e in before:
        for item in tick_store.load_items(e["run_id"]):
            requests += 1
            usage = item.response.usage if item.response else None
            if usage:
                prompt += usage.prompt_tokens or 0
                completion += usage.completion_tokens or 0
    floor_event = next((e for e in result.events if e["event"] == "floor"), None)
    floor_cost = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for run_id in (floor_event or {}).get("runs", [])[1:]:  # the serial run: the floor's own
        for item in tick_store.load_items(run_id):
            floor_cost["requests"] += 1
            usage = item.response.usage if item.response else None
            if usage:
                floor_cost["prompt_tokens"] += usage.prompt_tokens or 0
                floor_cost["completion_tokens"] += usage.completion_tokens or 0
    seconds = [e["seconds"] for e in before[1:]]  # tick 1 also measures the floor
    # the mean ticks to a false alarm if the healthy ticks' drifts (in floor units) and hard
    # rate went on as measured: resampled, a seeded simulation (a floor when it hits the limit)
    compared = sum(e["compared"] for e in before)
    hard_rate = sum(e["off"] for e in before) / compared if compared else 0.0
    simulated = false_alarm_ticks(
        DEFAULT_CUSUM,
        len(result.events[0].get("probe") or []) or 8,
        hard_rate,
        units=[e.get("units") or 0.0 for e in before] or [0.0],
        runs=20,
        limit=100_000,
    )
    first_fault = after[0]["tick"] if after else None
    out = {
        "anchor": anchor.run_id,
        "anchor_items": anchor.summary.total if anchor.summary else None,
        "probe": ticks and result.events[0].get("probe"),
        "healthy_ticks": len(before),
        "healthy_alarms": len(healthy_alarms),
        "healthy_false_alarm_rate": round(len(healthy_alarms) / max(1, len(before)), 6),
        "healthy_max_statistic": max((e["statistic"] for e in before), default=0.0),
        "healthy_max_drift_cusum": max(
            (e.get("drift_statistic", 0.0) for e in before), default=0.0
        ),
        "healthy_max_hard_cusum": max((e.get("hard_statistic", 0.0) for e in before), default=0.0),
        "healthy_ticks_moving_drift_cusum": sum(
            1 for e in before if (e.get("units") or 0.0) > DEFAULT_CUSUM.k
        ),
        "healthy_units": _spread([e.get("units") or 0.0 for e in before]),
        "healthy_false_alarm_ticks_simulated": simulated,
        "healthy_ticks_with_off_items": sum(1 for e in before if e["off"]),
        "healthy_off_items": sum(e["off"] for e in before),
        "healthy_compared_items": sum(e["compared"] for e in before),
        "healthy_near_ties": sum(e["near_tie"] for e in before),
        "healthy_max_drift": max((e["drift"] for e in before), default=0.0),
        "floor": floor_event,
        "floor_cost": floor_cost,
        "healthy_grades": {
            g: sum(1 for e in before if e.get("grade") == g)
            for g in sorted({str(e.get("grade")) for e in before})
        },
        "healthy_max_units": max((e.get("units") or 0.0 for e in before), default=0.0),
        "floor_tick_seconds": before[0]["seconds"] if before else None,
        "per_tick": {
            "requests": requests / max(1, len(before)),
            "prompt_tokens": prompt / max(1, len(before)),
            "completion_tokens": completion / max(1, len(before)),
            "seconds_median": round(statistics.median(seconds), 3) if seconds else None,
            "seconds_p90": round(_quantile(seconds, 0.9), 3),
            "seconds_max": round(max(seconds), 3) if seconds else None,
        },
        "fault": args.fault_set,
        "down_events": sum(1 for e in result.events if e["event"] == "down"),
        "up_events": sum(1 for e in result.events if e["event"] == "up"),
        "fault_first_judged_tick": first_fault,
        "fault_alarm_tick": fault_alarms[0]["tick"] if fault_alarms else None,
        "ticks_to_alarm": (fault_alarms[0]["tick"] - first_fault + 1)
        if fault_alarms and first_fault
        else None,
        "fault_ticks": [
            {
                k: e.get(k)
                for k in (
                    "tick",
                    "off",
                    "compared",
                    "drift",
                    "units",
                    "grade",
                    "statistic",
                    "drift_statistic",
                    "hard_statistic",
                    "status",
                )
            }
            for e in after
        ],
        "escalation": fault_alarms[0].get("escalation") if fault_alarms else None,
        "results": str(results),
    }
    print(json.dumps(out, indent=1))
    ok = not healthy_alarms and (args.fault == 0 or bool(fault_alarms))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

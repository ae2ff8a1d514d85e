"""Watching a live endpoint against its anchor run, on a schedule (`evalrun watch`).

probe.py chooses the few items a tick sends from the anchor (near ties early on, exact-copy
canaries); judge.py judges a tick against the anchor with the fidelity statistics and the lane's
noise floor (compare/floor.py; `--floor RUN`, or measured by the watch on its first tick);
sequential.py is the running test over ticks (two CUSUMs: the drift in floor units, the hard count; pure);
state.py is the watch on disk (state, events, tick runs, compaction); metrics.py its Prometheus
metrics; alarm.py what an alarm sets off (the escalation and its sign-off, `--on-alarm`);
loop.py the watch itself (ticks, down and up, alarms); timeline.py the watch as one HTML page (`evalrun report`).
"""

from __future__ import annotations

from evalrun.watching.loop import WatchHooks, WatchOptions, WatchResult, describe, run_watch
from evalrun.watching.sequential import DEFAULT_CUSUM, Cusum, false_alarm_ticks, ticks_to_alarm
from evalrun.watching.state import WatchState, load_state, read_events, watch_dir

__all__ = [
    "DEFAULT_CUSUM",
    "Cusum",
    "WatchHooks",
    "WatchOptions",
    "WatchResult",
    "WatchState",
    "describe",
    "false_alarm_ticks",
    "load_state",
    "read_events",
    "run_watch",
    "ticks_to_alarm",
    "watch_dir",
]

"""`evalrun watch`: check a live endpoint against its anchor run on a schedule; alarm on change.

Each tick sends a small probe chosen from the anchor (the items whose anchor tokens sit nearest a
tie early on, and exact-copy canaries; all at once, greedy, with logprobs), judges it against the
anchor token by token and against the lane's noise floor (--floor RUN, else measured on the
first tick: the probe asked again one at a time), and keeps two running CUSUMs over the ticks
(its drift in floor units; its hard divergences against the floor's hard rate): one odd tick is
no alarm, a steady shift is. An alarm scores the anchor's items again, signs that run off against the
anchor, and goes to the terminal, <results>/watches/<name>/events.jsonl, the Prometheus metrics
and --on-alarm. An endpoint that does not answer is `down` (no quality verdict) and is retried
with backoff. The watch resumes from its state when started again with the same --name; Ctrl-C
or SIGTERM stops it cleanly. `evalrun report watch:<name>` draws its timeline.

Exit codes (with --ticks, or when stopped): 0 no alarm, 1 an alarm was raised, 2 bad usage,
3 the endpoint was down on every tick, 130 stopped by Ctrl-C or SIGTERM without an alarm.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def duration(text: str) -> float:
    """`10m`, `30s`, `1h`, `0` (back to back) as seconds."""
    m = _DURATION.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: write 10m, 30s, 1h or 0")
    return float(m.group(1)) * _UNIT[m.group(2)]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "watch",
        help="watch a live endpoint against its anchor on a schedule; alarm on real change",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from evalrun.commands.target_args import add_target_arguments

    p.add_argument(
        "--anchor",
        required=True,
        metavar="RUN",
        help="the anchor run (id, tag, latest): greedy, scored with logprobs; the ticks ask as "
        "it was asked (greedy, its logprob settings)",
    )
    p.add_argument(
        "--floor",
        metavar="RUN",
        help="the anchor's A/A partner (another run of its lane on its items, as compare's "
        "--floor): the noise floor ticks are judged against (default: measured by the watch "
        "on its first tick, the probe asked at once and again one at a time)",
    )
    add_target_arguments(p, sampling=False)
    w = p.add_argument_group("the watch")
    w.add_argument("--name", default="watch", help="the watch's name and folder (default: watch)")
    w.add_argument(
        "--results",
        default="results",
        metavar="DIR",
        help="run store holding the anchor; the watch lives in DIR/watches/NAME",
    )
    w.add_argument(
        "--every",
        type=duration,
        default=600.0,
        metavar="T",
        help="time from one tick's start to the next: 10m (default), 30s, 0",
    )
    w.add_argument(
        "--ticks",
        type=int,
        metavar="N",
        help="stop after N ticks (down ones count) and exit with the outcome",
    )
    w.add_argument(
        "--retry",
        type=duration,
        default=10.0,
        metavar="T",
        help="first wait after a down tick, doubling up to --every (default 10s)",
    )
    w.add_argument(
        "--probe",
        dest="border",
        type=int,
        default=6,
        metavar="N",
        help="near-tie items in a tick's probe (default 6)",
    )
    w.add_argument(
        "--garble-probes",
        dest="garble",
        type=int,
        default=2,
        metavar="N",
        help="exact-copy canaries in a tick's probe (default 2)",
    )
    w.add_argument("--timeout", type=float, metavar="S", help="an item's budget in a tick, seconds")
    w.add_argument(
        "--no-escalate",
        dest="escalate",
        action="store_false",
        help="on an alarm, do not score the anchor's items again and sign off",
    )
    w.add_argument(
        "--policy",
        metavar="FILE",
        help="the escalation's sign-off policy (default: signoff's, selections allowed)",
    )
    w.add_argument(
        "--keep-runs",
        type=int,
        default=20,
        metavar="N",
        help="tick runs kept on disk (default 20; an alarm's run is always kept)",
    )
    w.add_argument(
        "--keep-points",
        type=int,
        default=500,
        metavar="N",
        help="ticks kept whole; older ones are compacted by hundreds (default 500)",
    )
    out = p.add_argument_group("where alarms go")
    out.add_argument(
        "--on-alarm",
        metavar="CMD",
        help="run CMD (split like a shell, run without one) with the event on stdin",
    )
    out.add_argument(
        "--metrics-file",
        metavar="FILE",
        help="Prometheus textfile (for node_exporter's textfile collector)",
    )
    out.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus /metrics on 127.0.0.1:PORT",
    )
    out.add_argument(
        "--json", action="store_true", help="print every event as one JSON line on stdout"
    )


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from evalrun.base.errors import UsageError
    from evalrun.commands.target_args import target_spec
    from evalrun.endpoint.http import HttpOptions
    from evalrun.watching import WatchHooks, WatchOptions, run_watch

    if args.ticks is not None and args.ticks < 1:
        raise UsageError(f"--ticks must be at least 1, got {args.ticks}")
    if args.border < 0 or args.garble < 0 or args.border + args.garble == 0:
        raise UsageError("--probe and --garble-probes must leave at least one probe item")

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def emit(data: dict[str, Any]) -> None:
        print(json.dumps(data), flush=True)

    hooks = WatchHooks(say=say, on_event=emit if args.json else None)
    options = WatchOptions(
        anchor=args.anchor,
        target=target_spec(args, timeout=args.timeout, concurrency=HttpOptions.concurrency),
        floor=args.floor,
        name=args.name,
        results=Path(args.results),
        every_s=args.every,
        ticks=args.ticks,
        retry_s=args.retry,
        border=args.border,
        garble=args.garble,
        escalate=args.escalate,
        on_alarm=args.on_alarm,
        policy=args.policy,
        metrics_file=Path(args.metrics_file) if args.metrics_file else None,
        metrics_port=args.metrics_port,
        keep_runs=args.keep_runs,
        keep_points=args.keep_points,
    )
    return run_watch(options, hooks).exit_code

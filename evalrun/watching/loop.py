"""The watch itself: a tick on a schedule, the running test, and what an alarm sets off.

A tick scores the probe's items (the normal scoring path: a run under the watch's `ticks/`
store, greedy, with the anchor's logprob settings), judges it against the anchor (`judge.py`),
and moves the running statistic (`sequential.py`). When the statistic reaches its threshold the
watch *alarms*: it scores the anchor's own items again into the main run store (the escalation),
signs that run off against the anchor (evalrun.signoff), and sends the event everywhere it goes
(events.jsonl, the terminal, the metrics, `--on-alarm`). It stays alarmed, without a second
escalation, until the statistic is back at 0 (`recovered`).

An endpoint that does not answer is *down*: a `down` event (never a quality change: nothing is
judged), retried with a doubling backoff up to the tick interval; an `up` event when it answers
again. Ctrl-C and SIGTERM end the watch between or inside ticks with a `stop` event and the
state saved; the next `evalrun watch` of the same name resumes it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from evalrun.base.errors import EndpointError, Interrupted, UsageError
from evalrun.base.jsondata import JSONObject
from evalrun.base.text_safety import one_line
from evalrun.compare.fidelity import (
    judge,
    runs_floor,
    serial_copies,
    serial_pair,
    serial_suite,
)
from evalrun.compare.floor import floor_of
from evalrun.endpoint.options import build_options
from evalrun.scoring.run import ScoreRequest, score_suite
from evalrun.serving.signals import sigterm_raises
from evalrun.serving.target import Target, TargetSpec, open_target
from evalrun.signoff import load_policy
from evalrun.store import RunRecord, RunStore
from evalrun.store.tokens import load_traces
from evalrun.suite.load import load_suite
from evalrun.suite.select import Selection
from evalrun.watching.alarm import escalate, on_alarm_argv, run_on_alarm
from evalrun.watching.judge import healthy_rate, judge_tick
from evalrun.watching.metrics import WatchMetrics
from evalrun.watching.probe import choose_probe
from evalrun.watching.sequential import Cusum
from evalrun.watching.state import (
    TICKS_DIR,
    TickPoint,
    WatchFloor,
    WatchState,
    append_event,
    compact,
    event,
    load_state,
    locked,
    now,
    save_state,
    watch_dir,
)

# Bursts of the probe asked once more when the watch measures its floor, beside the tick's own
# and its serial copy: six draws of the variants a healthy lane's batching gives its items.
FLOOR_BURSTS = 5


@dataclass(frozen=True)
class WatchOptions:
    """Everything one watch takes, named as `evalrun watch`'s flags."""

    anchor: str
    # what to watch: an endpoint, or a contract booted once (commands/target_args.py builds it);
    # its request options and key go with every tick (the sampling ones are the anchor's)
    target: TargetSpec = field(default_factory=TargetSpec)
    floor: str | None = None  # the anchor's A/A partner run (--floor); None: measured at start
    name: str = "watch"
    results: Path = Path("results")
    every_s: float = 600.0
    ticks: int | None = None  # stop after this many ticks (down ones count); None: run on
    retry_s: float = 10.0  # first wait after a down tick; doubles up to every_s
    border: int = 6
    garble: int = 2
    escalate: bool = True
    on_alarm: str | None = None  # a command line (split like a shell, run without one)
    policy: str | None = None  # the escalation's sign-off policy (default: signoff's own)
    metrics_file: Path | None = None
    metrics_port: int | None = None
    keep_runs: int = 20
    keep_points: int = 500


@dataclass
class WatchHooks:
    """The watch's side effects, injected: sleeping, the clock and the terminal."""

    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    say: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr))
    on_event: Callable[[JSONObject], None] | None = None  # each event as data (--json)


@dataclass
class WatchResult:
    """How a watch ended."""

    name: str
    folder: Path
    ticks: int = 0
    down: int = 0
    alarms: int = 0
    interrupted: bool = False
    events: list[JSONObject] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 quiet, 1 an alarm was raised, 3 the endpoint was down on every tick, 130 stopped."""
        if self.alarms:
            return 1
        if self.interrupted:
            return 130
        if self.ticks and self.down == self.ticks:
            return 3
        return 0


def _check_anchor(anchor: RunRecord) -> None:
    capture = anchor.fidelity.get("top_logprobs") if anchor.fidelity else None
    if anchor.tokens_unavailable or not capture:
        why = anchor.tokens_unavailable or "scored without logprobs"
        raise UsageError(
            f"anchor {anchor.run_id} has no tokens ({why}); score the anchor with logprobs "
            "(the default) and tag it"
        )
    if anchor.sampling.get("temperature", 0.0) != 0.0:
        raise UsageError(
            f"anchor {anchor.run_id} was sampled at temperature "
            f"{anchor.sampling.get('temperature')}; a watch needs a greedy anchor"
        )


class Watch:
    """One watch: its options, the anchor loaded once, its state on disk."""

    def __init__(self, options: WatchOptions, hooks: WatchHooks | None = None) -> None:
        self.o = options
        self.hooks = hooks or WatchHooks()
        self.store = RunStore(options.results)
        self.anchor = self.store.load_run(options.anchor)
        _check_anchor(self.anchor)
        self.anchor_items = self.store.load_items(self.anchor.run_id)
        self.anchor_traces = load_traces(self.store.run_dir(self.anchor.run_id))
        self.suite = load_suite(self.anchor.suite.path or self.anchor.suite.name)
        self.on_alarm = on_alarm_argv(options.on_alarm)
        self.policy = load_policy(options.policy)
        self.folder = watch_dir(options.results, options.name)
        self.spec, self.contract = options.target.resolved()
        self.target = self.spec.endpoint or str(self.spec.contract or "reference")
        self._reached: Target | None = None  # the endpoint, asked as the anchor was
        self._off_ids: list[str] = []
        self._floor_event: JSONObject | None = None  # a floor just measured, told with its tick

    def _new_state(self) -> WatchState:
        tags = {item.id: list(item.tags) for item in self.suite.items}
        probe = choose_probe(
            self.anchor_items,
            self.anchor_traces,
            tags,
            border=self.o.border,
            garble=self.o.garble,
        )
        if not probe.ids:
            raise UsageError(
                f"anchor {self.anchor.run_id} has no item a probe can use (answered, with "
                "tokens, short): tag an anchor scored on the core suite"
            )
        return WatchState(
            name=self.o.name,
            anchor=self.anchor.run_id,
            target=self.target,
            probe=probe,
            cusum=Cusum.for_healthy_rate(healthy_rate(None)),
        )

    def _state(self) -> WatchState:
        state = load_state(self.folder)
        if state is None:
            state = self._new_state()
        elif state.anchor != self.anchor.run_id:
            raise UsageError(
                f"watch {self.o.name!r} watches anchor {state.anchor}, not "
                f"{self.anchor.run_id}; pass another --name to start a new watch"
            )
        if self.o.floor is not None:
            partner = self.store.resolve(self.o.floor)
            if state.floor is None or state.floor.given != partner:
                floor = runs_floor(self.store, self.anchor.run_id, [partner])
                self._set_floor(state, WatchFloor.of(floor, given=partner))
        return state

    def _set_floor(self, state: WatchState, floor: WatchFloor) -> None:
        """Judge the ticks from now on against `floor`, the running test's healthy rate its."""
        state.floor = floor
        state.cusum = Cusum.for_healthy_rate(healthy_rate(floor.floor))
        self._floor_event = event(
            "floor",
            state,
            source=floor.source,
            given=floor.given,
            measured_from=floor.floor.source,
            items=floor.floor.items,
            diverged=floor.floor.diverged,
            hard=floor.floor.hard,
            drift=floor.floor.drift,
            healthy_rate=round(state.cusum.p0, 4),
            runs=floor.runs,
        )

    def _measure_floor(self, state: WatchState, burst_run: str) -> None:
        """The floor from this tick's probe (a burst), the same items asked again one at a
        time (bisect's A/A pair of one boot, compare.fidelity.serial_pair) and FLOOR_BURSTS
        more bursts, each against the anchor: on a healthy server (which the watch assumes at
        its start, as the anchor does) those are A/A pairs too, and the very distance every
        later tick is measured by. Their counts are pooled; the drift is the widest pair's: a
        probe's few items each come back in one of a few variants (a near tie goes one way or
        the other with the batch), so one burst's drift is one draw of which variants met. The
        mean of a burst and its serial copy sat at half of what healthy ticks then measured,
        and the widest of the two alone, when both drew the nearer variant, at 2.5 units for
        the ticks that drew the other. An endpoint that fails it leaves the floor unmeasured:
        the next tick tries again."""
        ids = set(state.probe.ids)
        serial = serial_suite(self.suite, [i for i in self.suite.items if i.id in ids], "watch")
        store = RunStore(self.folder / TICKS_DIR)
        label = f"floor-{self.o.name}"
        request = replace(self._request(None, label, concurrency=1), suite=serial)
        again = self._burst(state, label)
        try:
            record, _ = score_suite(request, store)
            more = [score_suite(again, store)[0].run_id for _ in range(FLOOR_BURSTS)]
        except EndpointError:
            return
        burst = load_traces(store.run_dir(burst_run))
        asked = load_traces(store.run_dir(record.run_id))
        first = serial_pair({**burst, **asked})
        if first is None:
            return
        sides = [burst, serial_copies(asked), *(load_traces(store.run_dir(r)) for r in more)]
        probe = [i for i in state.probe.ids if i in self.anchor_traces]
        pairs = [first]
        pairs += [
            judge(self.anchor_traces, side, [i for i in probe if i in side]) for side in sides
        ]
        floor = floor_of(
            [f for f in pairs if f.items],
            f"serial vs burst, and {FLOOR_BURSTS + 1} bursts and the serial copy each against "
            f"the anchor, on the watched lane at tick {state.tick}; the widest pair's drift",
            widest=True,
        )
        if floor is not None:
            runs = (burst_run, record.run_id, *more)
            self._set_floor(state, WatchFloor.of(floor, runs=runs))

    def run(self) -> WatchResult:
        """Watch until `ticks` are done or the watch is stopped."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with locked(self.folder), sigterm_raises():
            state = self._state()
            metrics = WatchMetrics(state, textfile=self.o.metrics_file)
            if self.o.metrics_port:
                metrics.serve(self.o.metrics_port)
            result = WatchResult(name=self.o.name, folder=self.folder)
            try:
                self._emit(
                    state,
                    result,
                    event(
                        "start",
                        state,
                        anchor=state.anchor,
                        target=self.target,
                        probe=state.probe.ids,
                        resumed=state.tick > 0,
                        floor=state.floor.line() if state.floor else None,
                    ),
                )
                self._tell_floor(state, result)
                save_state(self.folder, state)
                metrics.publish()
                with self._endpoint() as self._reached:
                    self._loop(state, metrics, result)
            except (KeyboardInterrupt, Interrupted):
                result.interrupted = True
            finally:
                save_state(self.folder, state)
                self._emit(state, result, event("stop", state, interrupted=result.interrupted))
                metrics.publish()
                metrics.close()
            return result

    @contextmanager
    def _endpoint(self) -> Iterator[Target]:
        """The endpoint the ticks go to (the given one, or the contract booted once, with the
        key its engine requires), asked as the anchor was: greedy, with its logprob settings."""
        with open_target(self.spec, self.contract, self.folder / "server.log") as target:
            sampling = self.anchor.sampling
            asked: dict[str, object] = {"temperature": 0.0}
            for key in ("top_logprobs", "logprob_tokens", "max_tokens_scale"):
                if sampling.get(key) is not None:
                    asked[key] = sampling[key]
            options = build_options(**{**target.options.model_dump(), **asked})
            yield replace(
                target, model=target.model or self.anchor.model_requested, options=options
            )

    def _loop(self, state: WatchState, metrics: WatchMetrics, result: WatchResult) -> None:
        retry = self.o.retry_s
        while self.o.ticks is None or result.ticks < self.o.ticks:
            started = self.hooks.clock()
            point = self._tick(state)
            result.ticks += 1
            if point.status == "down":
                result.down += 1
                wait = min(retry, max(self.o.every_s, self.o.retry_s))
                retry *= 2
            else:
                retry = self.o.retry_s
                wait = max(0.0, self.o.every_s - (self.hooks.clock() - started))
            alarm = self._record(state, point, result)
            metrics.tick(state, point, self.hooks.clock(), alarm=alarm)
            compact(self.folder, state, keep_points=self.o.keep_points, keep_runs=self.o.keep_runs)
            save_state(self.folder, state)
            if wait > 0 and (self.o.ticks is None or result.ticks < self.o.ticks):
                self.hooks.sleep(wait)

    def _tick(self, state: WatchState) -> TickPoint:
        """Score the probe once and judge it (a `down` point when the endpoint did not answer)."""
        state.tick += 1
        started = self.hooks.clock()
        ids = state.probe.ids
        tick_store = RunStore(self.folder / TICKS_DIR)
        request = self._burst(state, f"tick-{self.o.name}")
        point = TickPoint(tick=state.tick, at=now(), status="down", statistic=state.statistic)
        try:
            record, items = score_suite(request, tick_store)
        except EndpointError as exc:
            point.verdict = str(exc).split(";")[0][:200]
            point.run_id = exc.run_id
            point.seconds = round(self.hooks.clock() - started, 3)
            return point
        point.run_id = record.run_id
        if not any(r.response is not None for r in items):
            point.verdict = "no item answered"
            point.seconds = round(self.hooks.clock() - started, 3)
            return point
        if state.floor is None:
            self._measure_floor(state, record.run_id)
        judged = judge_tick(
            self.anchor_traces,
            items,
            load_traces(tick_store.run_dir(record.run_id)),
            ids,
            state.floor.full() if state.floor else None,
        )
        point.seconds = round(self.hooks.clock() - started, 3)
        point.status = "ok"
        fields = judged.model_dump(exclude={"off_ids"})
        for key in (
            "compared",
            "off",
            "near_tie",
            "drift",
            "verdict",
            "grade",
            "units",
            "passed",
            "answered",
            "garbled",
            "errors",
            "latency_s",
        ):
            setattr(point, key, fields[key])
        state.running = state.cusum.step(state.running, judged.units, judged.off, judged.compared)
        level = state.cusum.level(state.running)
        point.increment = round(level - state.statistic, 4)
        state.statistic = level
        point.statistic = level
        point.drift_statistic, point.hard_statistic = state.running.drift, state.running.hard
        self._off_ids = judged.off_ids
        return point

    def _request(
        self, items: Sequence[str] | None, label: str, concurrency: int | None = None
    ) -> ScoreRequest:
        """A score of `items` (None: the anchor's whole suite) on the watched endpoint."""
        assert self._reached is not None, "the endpoint is reached before any score"
        return ScoreRequest(
            target=self._reached,
            suite=self.suite,
            label=label,
            concurrency=concurrency or self._reached.http.concurrency,
            selection=Selection(items=tuple(items) if items else None),
        )

    def _burst(self, state: WatchState, label: str) -> ScoreRequest:
        """The probe asked all at once (the server batches it, as under load)."""
        return self._request(state.probe.ids, label, concurrency=len(state.probe.ids))

    def _record(self, state: WatchState, point: TickPoint, result: WatchResult) -> bool:
        """Log the tick and what it changed (down, up, alarm, recovered); True on a new alarm."""
        self._tell_floor(state, result)
        if point.status == "down":
            if not state.down:
                state.down, state.down_since = True, point.at
                self._emit(state, result, event("down", state, reason=point.verdict))
            state.points.append(point)
            self._emit(state, result, event("tick", state, **point.model_dump(mode="json")))
            return False
        if state.down:
            self._emit(state, result, event("up", state, down_since=state.down_since))
            state.down, state.down_since = False, None
        new_alarm = not state.alarmed and state.cusum.alarmed(state.statistic)
        if new_alarm:
            point.status = "alarm"
        state.points.append(point)
        self._emit(state, result, event("tick", state, **point.model_dump(mode="json")))
        if new_alarm:
            state.alarmed = True
            state.alarms += 1
            result.alarms += 1
            if point.run_id:
                state.alarm_runs.append(point.run_id)
            self._alarm(state, point, result)
        elif state.alarmed and state.statistic <= 0.0:
            state.alarmed = False
            self._emit(state, result, event("recovered", state))
        return new_alarm

    def _alarm(self, state: WatchState, point: TickPoint, result: WatchResult) -> None:
        recent = [p.model_dump(mode="json") for p in state.points[-5:]]
        data = event(
            "alarm",
            state,
            anchor=state.anchor,
            target=self.target,
            statistic=state.statistic,
            threshold=1.0,
            drift_statistic=state.running.drift,
            drift_threshold=state.cusum.h_units,
            hard_statistic=state.running.hard,
            hard_threshold=state.cusum.h,
            run_id=point.run_id,
            off_items=self._off_ids,
            recent=recent,
        )
        if self.o.escalate:
            data["escalation"] = self._escalate()
        self._emit(state, result, data)
        self._run_on_alarm(data, state, result)

    def _escalate(self) -> JSONObject:
        """The anchor's items scored again into the main store, signed off against the anchor."""
        self.hooks.say(f"watch {self.o.name}: escalating: the anchor's items against the server")
        return escalate(
            self.store,
            self.anchor,
            self._request(self.anchor.selection.get("ids"), f"watch-{self.o.name}-escalation"),
            self.policy,
            self.o.policy,
        )

    def _tell_floor(self, state: WatchState, result: WatchResult) -> None:
        """The `floor` event of a floor just set (by --floor at start, or measured)."""
        if self._floor_event is not None:
            self._emit(state, result, self._floor_event)
            self._floor_event = None

    def _run_on_alarm(self, data: JSONObject, state: WatchState, result: WatchResult) -> None:
        if self.on_alarm is None:
            return
        failed = run_on_alarm(self.on_alarm, data)
        if failed:
            self._emit(state, result, event("on_alarm_failed", state, reason=failed))

    def _emit(self, state: WatchState, result: WatchResult, data: JSONObject) -> None:
        append_event(self.folder, data)
        result.events.append(data)
        self.hooks.say(describe(data))
        if self.hooks.on_event is not None:
            self.hooks.on_event(data)


def describe(data: JSONObject) -> str:
    """An event as one terminal line (ids and numbers only: no model text)."""
    kind, name, tick = data["event"], data["watch"], data.get("tick", 0)
    head = f"watch {name} tick {tick}:"
    if kind == "tick":
        if data["status"] == "down":
            return f"{head} down ({one_line(str(data.get('verdict', '')), 160)})"
        lat = data.get("latency_s")
        units = data.get("units")
        grade = data.get("grade")
        if units is None:
            against = "no drift"
        elif grade:
            against = f"{units:g} floor units ({grade})"
        else:
            against = f"{units:g} default floor units (floor: defaults)"
        return (
            f"{head} {data['off']}/{data['compared']} hard, drift {data['drift']:.4f}, {against}, "
            f"{data['passed']}/{data['answered']} passed, {data['garbled']} garbled, "
            f"{lat if lat is not None else '-'} s, statistic {data['statistic']:.2f} "
            f"(drift {data.get('drift_statistic', 0.0):.2f}, hard {data.get('hard_statistic', 0.0):.2f})"
            f"{' ALARM' if data['status'] == 'alarm' else ''}"
        )
    if kind == "alarm":
        esc = data.get("escalation") or {}
        tail = ""
        if "signoff" in esc:
            tail = f"; escalation {esc['run_id']}: sign-off {esc['signoff']}"
        elif "error" in esc:
            tail = f"; escalation failed: {one_line(str(esc['error']), 160)}"
        return (
            f"{head} ALARM: drift CUSUM {data.get('drift_statistic', 0.0):.2f} of "
            f"{data.get('drift_threshold', 0.0):g} floor units, hard CUSUM "
            f"{data.get('hard_statistic', 0.0):.2f} of {data.get('hard_threshold', 0.0):g} "
            f"(items hard: {', '.join(data.get('off_items') or []) or 'none'}){tail}"
        )
    if kind == "start":
        verb = "resumed" if data.get("resumed") else "started"
        floor = data.get("floor") or "floor: measured at the first tick"
        return (
            f"{head} {verb} on {data['target']} against {data['anchor']} "
            f"({len(data['probe'])} probe items; {floor})"
        )
    if kind == "floor":
        return (
            f"{head} floor {data['source']} ({data['measured_from']}: {data['diverged']} of "
            f"{data['items']} items diverged, {data['hard']} hard, drift {data['drift']:.4f}); "
            f"healthy rate {data['healthy_rate']:.0%}"
        )
    if kind == "down":
        return f"{head} endpoint down ({one_line(str(data.get('reason', '')), 160)}); retrying"
    if kind == "up":
        return f"{head} endpoint back up (down since {data.get('down_since')})"
    if kind == "recovered":
        return f"{head} recovered: statistic back at 0"
    if kind == "stop":
        return f"{head} stopped{' (interrupted)' if data.get('interrupted') else ''}"
    return f"{head} {kind} {one_line(str(data.get('reason', '')), 160)}"


def run_watch(options: WatchOptions, hooks: WatchHooks | None = None) -> WatchResult:
    """Run a watch (resuming its state when the name has one)."""
    return Watch(options, hooks).run()

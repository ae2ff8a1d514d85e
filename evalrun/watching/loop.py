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
from dataclasses import dataclass, field
from pathlib import Path

from evalrun.base.errors import EndpointError, Interrupted, UsageError
from evalrun.base.jsondata import JSONObject
from evalrun.base.text_safety import one_line
from evalrun.scoring import ScoreOptions, score
from evalrun.serving.signals import sigterm_raises
from evalrun.serving.target import TargetSpec, open_target
from evalrun.signoff import load_policy
from evalrun.store import RunRecord, RunStore
from evalrun.store.tokens import load_traces
from evalrun.suite.load import load_suite
from evalrun.watching.alarm import escalate, on_alarm_argv, run_on_alarm
from evalrun.watching.judge import THRESHOLDS, judge_tick
from evalrun.watching.metrics import WatchMetrics
from evalrun.watching.probe import choose_probe
from evalrun.watching.sequential import Cusum
from evalrun.watching.state import (
    TICKS_DIR,
    TickPoint,
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


@dataclass(frozen=True)
class WatchOptions:
    """Everything one watch takes, named as `evalrun watch`'s flags."""

    anchor: str
    endpoint: str | None = None
    model: str | None = None
    contract: str | None = None
    reference: bool = False
    sets: tuple[str, ...] = ()
    unsets: tuple[str, ...] = ()
    api_key_env: str | None = None
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
    timeout: float | None = None  # an item's budget in a tick
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
        self.suite = self.anchor.suite.path or self.anchor.suite.name
        self.on_alarm = on_alarm_argv(options.on_alarm)
        self.policy = load_policy(options.policy)
        self.folder = watch_dir(options.results, options.name)
        self.target = options.endpoint or str(options.contract or "reference")
        self._url, self._model = "", options.model
        self._off_ids: list[str] = []

    def _new_state(self) -> WatchState:
        suite = load_suite(self.suite)
        tags = {item.id: list(item.tags) for item in suite.items}
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
            cusum=Cusum.for_healthy_rate(THRESHOLDS.healthy_hard_rate),
        )

    def _state(self) -> WatchState:
        state = load_state(self.folder)
        if state is None:
            return self._new_state()
        if state.anchor != self.anchor.run_id:
            raise UsageError(
                f"watch {self.o.name!r} watches anchor {state.anchor}, not "
                f"{self.anchor.run_id}; pass another --name to start a new watch"
            )
        return state

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
                    ),
                )
                save_state(self.folder, state)
                metrics.publish()
                with self._endpoint() as (self._url, self._model):
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
    def _endpoint(self) -> Iterator[tuple[str, str | None]]:
        """The endpoint the ticks go to: the given one, or a contract booted once."""
        if self.o.endpoint:
            yield self.o.endpoint, self.o.model
            return
        spec, contract = TargetSpec(
            contract=self.o.contract,
            reference=self.o.reference,
            sets=self.o.sets,
            unsets=self.o.unsets,
        ).resolved()
        with open_target(spec, contract, self.folder / "server.log") as target:
            yield target.base_url, target.model

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
        options = self._score_options(
            items=ids,
            label=f"tick-{self.o.name}",
            results=self.folder / TICKS_DIR,
            concurrency=len(ids),  # a burst: the whole probe at once
        )
        point = TickPoint(tick=state.tick, at=now(), status="down", statistic=state.statistic)
        try:
            record, items = score(options)
        except EndpointError as exc:
            point.verdict = str(exc).split(";")[0][:200]
            point.run_id = exc.run_id
            point.seconds = round(self.hooks.clock() - started, 3)
            return point
        tick_store = RunStore(self.folder / TICKS_DIR)
        judged = judge_tick(
            self.anchor_traces, items, load_traces(tick_store.run_dir(record.run_id)), ids
        )
        point.run_id = record.run_id
        point.seconds = round(self.hooks.clock() - started, 3)
        if judged.answered == 0:
            point.verdict = "no item answered"
            return point
        point.status = "ok"
        fields = judged.model_dump(exclude={"off_ids"})
        for key in (
            "compared",
            "off",
            "near_tie",
            "drift",
            "verdict",
            "passed",
            "answered",
            "garbled",
            "errors",
            "latency_s",
        ):
            setattr(point, key, fields[key])
        point.increment = round(state.cusum.increment(judged.off, judged.compared), 4)
        state.statistic = round(state.cusum.update(state.statistic, judged.off, judged.compared), 4)
        point.statistic = state.statistic
        self._off_ids = judged.off_ids
        return point

    def _score_options(
        self,
        *,
        items: Sequence[str] | None,
        label: str,
        results: Path,
        concurrency: int | None = None,
    ) -> ScoreOptions:
        """A score of `items` on the watched endpoint, asked as the anchor was: greedy, with its
        logprob settings."""
        sampling = self.anchor.sampling
        return ScoreOptions(
            endpoint=self._url,
            model=self._model or self.anchor.model_requested,
            api_key_env=self.o.api_key_env,
            suite=self.suite,
            items=tuple(items) if items else None,
            concurrency=concurrency,
            label=label,
            results=results,
            temperature=0.0,
            top_logprobs=sampling.get("top_logprobs"),
            logprob_tokens=sampling.get("logprob_tokens"),
            max_tokens_scale=sampling.get("max_tokens_scale"),
            timeout=self.o.timeout,
        )

    def _record(self, state: WatchState, point: TickPoint, result: WatchResult) -> bool:
        """Log the tick and what it changed (down, up, alarm, recovered); True on a new alarm."""
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
            threshold=state.cusum.h,
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
            self._score_options(
                items=self.anchor.selection.get("ids"),
                label=f"watch-{self.o.name}-escalation",
                results=self.o.results,
            ),
            self.policy,
            self.o.policy,
        )

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
        return (
            f"{head} {data['off']}/{data['compared']} off, drift {data['drift']:.4f}, "
            f"{data['passed']}/{data['answered']} passed, {data['garbled']} garbled, "
            f"{lat if lat is not None else '-'} s, statistic {data['statistic']:.2f}"
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
            f"{head} ALARM: statistic {data['statistic']:.2f} >= {data['threshold']:.2f} "
            f"(items off: {', '.join(data.get('off_items') or []) or 'none'}){tail}"
        )
    if kind == "start":
        verb = "resumed" if data.get("resumed") else "started"
        return f"{head} {verb} on {data['target']} against {data['anchor']} ({len(data['probe'])} probe items)"
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

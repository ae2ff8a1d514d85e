"""`evalrun watch` against fake servers on 127.0.0.1: quiet when healthy, an alarm within the
stated ticks after a fault, `down` (not a quality alarm) when the server goes away, the alarm in
Prometheus metrics and on --on-alarm's stdin, a resumed state, bounded disk, the timeline page."""

from __future__ import annotations

import json
import shlex
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fakeserver import FakeServer, last_user, reply, simple_item, write_suite
from prometheus_client.parser import text_string_to_metric_families

import evalrun
from evalrun.cli import main
from evalrun.compare.floor import DIVERGENT_UNITS
from evalrun.serving.target import TargetSpec
from evalrun.watching import (
    DEFAULT_CUSUM,
    WatchHooks,
    WatchOptions,
    false_alarm_ticks,
    load_state,
    read_events,
    run_watch,
    ticks_to_alarm,
    watch_dir,
)
from evalrun.watching.loop import FLOOR_BURSTS
from evalrun.watching.sequential import HEALTHY_UNITS, Running
from evalrun.watching.state import BLOCK, TickPoint, compact

PROBE = 8  # 6 near-tie items + 2 copy canaries
FLOOR_ASKS = 1 + FLOOR_BURSTS  # the probe asked again on the first tick: its serial copy, bursts


@pytest.fixture
def anchored(tmp_path: Path, fake_server: FakeServer) -> dict[str, Any]:
    """A suite of 6 items and 2 copy canaries, and an anchor scored on the fake server."""
    items = [simple_item(i) for i in range(6)]
    items += [simple_item(i, category="canary", tags=["copy"]) for i in range(2)]
    suite = write_suite(tmp_path / "suite", items)
    fake_server.rule = lambda body: reply("ok")
    results = tmp_path / "results"
    anchor = evalrun.score(fake_server.base_url, suite=str(suite), results=results)
    return {"fake": fake_server, "results": results, "anchor": anchor.run_id, "suite": suite}


def _options(ctx: dict[str, Any], **kw: Any) -> WatchOptions:
    base: dict[str, Any] = dict(
        anchor=ctx["anchor"],
        target=TargetSpec(endpoint=ctx["fake"].base_url),
        results=ctx["results"],
        every_s=0.0,
        retry_s=0.01,
        ticks=6,
    )
    base.update(kw)
    return WatchOptions(**base)


def _quiet() -> WatchHooks:
    return WatchHooks(say=lambda line: None)


def _faulty_after(fake: FakeServer, ticks: int) -> None:
    """From tick `ticks + 1` on, the server answers what the anchor thought unlikely (the first
    tick asks the probe again for the watch's noise floor: one at a time, then in bursts)."""
    start = fake.chat_requests

    def rule(body: dict[str, Any]) -> Any:
        late = fake.chat_requests > start + (ticks + FLOOR_ASKS) * PROBE
        return reply("zz") if late else reply("ok")

    fake.rule = rule


def test_the_test_alarms_on_two_bad_ticks_and_a_steady_small_shift_not_on_one():
    c = DEFAULT_CUSUM
    assert ticks_to_alarm(c, PROBE, PROBE) == 2  # a gross fault: every item hard
    assert ticks_to_alarm(c, PROBE, 2) == 2
    assert ticks_to_alarm(c, PROBE, 1) == 10  # one item in eight hard, every tick
    assert ticks_to_alarm(c, PROBE, 0) is None
    # the drift, in floor units: divergent (4) alarms in two, a q4_0 K cache (13.8) too
    assert ticks_to_alarm(c, PROBE, 0, units=4.0) == 2
    assert ticks_to_alarm(c, PROBE, 0, units=13.8) == 2
    assert ticks_to_alarm(c, PROBE, 0, units=3.0) == 4  # just outside the noise
    assert ticks_to_alarm(c, PROBE, 0, units=2.5) == 8
    assert ticks_to_alarm(c, PROBE, 0, units=1.99) is None  # a wobble inside the noise
    r = c.step(Running(), 100.0, PROBE, PROBE)  # one odd tick, however odd
    assert not c.alarmed(c.level(r))
    r = c.step(r, HEALTHY_UNITS, 0, PROBE)
    assert c.level(r) < 0.5  # a clean tick takes it back down
    assert false_alarm_ticks(c, PROBE, 0.02, runs=20, limit=20_000) > 5_000
    # the drifts the reference's healthy ticks showed (0.55 to 1.65 floor units) never move it
    healthy = [0.55, 0.68, 0.82, 0.98, 1.02, 1.22, 1.49, 1.65]
    assert false_alarm_ticks(c, PROBE, 0.0, units=healthy, runs=20, limit=20_000) == 20_000


def test_healthy_ticks_raise_no_alarm(anchored):
    result = run_watch(_options(anchored, ticks=8), _quiet())
    assert result.exit_code == 0
    assert result.alarms == 0 and result.ticks == 8 and result.down == 0
    state = load_state(result.folder)
    assert state is not None and state.statistic == 0.0
    assert [p.off for p in state.points] == [0] * 8
    assert {p.compared for p in state.points} == {PROBE}


def test_a_lane_whose_items_come_in_variants_stays_quiet(anchored):
    """A healthy lane whose near-tie item comes back in one of two variants, as the reference's
    do under batching (0.006 and 0.015 nats from the anchor there): the first burst and its
    serial copy draw the near one, one of the floor's later bursts the far one, and every
    tick after draws the far one. The floor is the widest of its pairs, so those ticks sit at
    1 floor unit. From the first burst and its serial copy alone (the floor before it asked
    more bursts) they sat at 2.5 units and the drift sum reached its threshold by tick 9."""
    fake, asked = anchored["fake"], [1]  # the anchor asked it once
    words = ["o", "k", "then", "done"]

    def variant(shift: float) -> Any:
        steps = [(w, -0.05 - shift, [(w, -0.05 - shift), ("zz", -4.0)]) for w in words]
        return reply("".join(words), tokens=steps)

    def rule(body: dict[str, Any]) -> Any:
        if "question 2:" not in last_user(body):
            return reply("ok")
        asked[0] += 1
        # 2: tick 1's burst, 3: its serial copy, 4 on: the floor's bursts, then a tick each
        return variant(0.1 if asked[0] == 5 or asked[0] > 3 + FLOOR_BURSTS else 0.04)

    fake.rule = lambda body: variant(0.0) if "question 2:" in last_user(body) else reply("ok")
    anchor = evalrun.score(fake.base_url, suite=str(anchored["suite"]), results=anchored["results"])
    fake.rule = rule
    result = run_watch(_options({**anchored, "anchor": anchor.run_id}, ticks=12), _quiet())
    units = [e["units"] for e in result.events if e["event"] == "tick"]
    assert units == [0.4] + [1.0] * 11, units
    assert result.alarms == 0 and result.exit_code == 0


def test_a_fault_mid_watch_alarms_within_two_ticks_with_the_signoff(anchored, tmp_path):
    _faulty_after(anchored["fake"], 3)
    out = tmp_path / "event.json"
    sink = "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())"
    result = run_watch(
        _options(
            anchored,
            ticks=7,
            on_alarm=shlex.join([sys.executable, "-c", sink, str(out)]),
            metrics_file=tmp_path / "prom" / "watch.prom",
        ),
        _quiet(),
    )
    assert result.exit_code == 1 and result.alarms == 1
    alarm = next(e for e in result.events if e["event"] == "alarm")
    assert alarm["tick"] == 5  # ticks 4 and 5 were bad: the stated two
    assert alarm["escalation"]["signoff"] == "fail"
    assert alarm["escalation"]["run_id"] in evalrun.store.RunStore(anchored["results"]).run_ids()
    # --on-alarm got the event on stdin
    assert json.loads(out.read_text()) == json.loads(json.dumps(alarm))
    # the alarm in the Prometheus textfile, read by prometheus_client's own parser
    text = (tmp_path / "prom" / "watch.prom").read_text()
    samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
    assert samples["evalrun_watch_alarm"] == 1.0
    assert samples["evalrun_watch_alarms_total"] == 1.0
    assert samples["evalrun_watch_ticks_total"] == 7.0
    assert samples["evalrun_watch_statistic"] >= samples["evalrun_watch_threshold"]
    # events.jsonl beside the runs holds the same events
    assert [e["event"] for e in read_events(result.folder)] == [e["event"] for e in result.events]


def test_down_and_back_is_a_down_event_and_no_quality_alarm(anchored):
    fake = anchored["fake"]
    waits: list[float] = []

    def on_event(data: dict[str, Any]) -> None:
        if data["event"] == "tick" and data["tick"] == 2:
            fake.down = True

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            fake.down = False

    result = run_watch(
        _options(anchored, ticks=6), WatchHooks(sleep=sleep, on_event=on_event, say=print)
    )
    kinds = [e["event"] for e in result.events]
    assert kinds.count("down") == 1 and kinds.count("up") == 1
    assert "alarm" not in kinds and result.exit_code == 0
    assert result.down == 2
    state = load_state(result.folder)
    assert state is not None and not state.down and state.statistic == 0.0
    assert [p.status for p in state.points] == ["ok", "ok", "down", "down", "ok", "ok"]


def test_a_server_never_up_exits_3(anchored):
    anchored["fake"].down = True
    result = run_watch(_options(anchored, ticks=2), _quiet())
    assert result.exit_code == 3 and result.down == 2


def test_metrics_are_scraped_over_http_while_the_watch_runs(anchored):
    from evalrun.serving.ports import free_port

    port = free_port()
    scraped: list[str] = []

    def on_event(data: dict[str, Any]) -> None:
        if data["event"] == "tick" and data["tick"] == 2:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                scraped.append(r.read().decode())

    run_watch(_options(anchored, ticks=3, metrics_port=port), WatchHooks(on_event=on_event))
    families = {f.name: f for f in text_string_to_metric_families(scraped[0])}
    up = families["evalrun_watch_up"].samples[0]
    assert up.labels == {"watch": "watch"} and up.value == 1.0
    with pytest.raises(urllib.error.URLError):  # the server is gone with the watch
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10)


def test_a_restart_resumes_the_watch(anchored):
    _faulty_after(anchored["fake"], 2)
    first = run_watch(_options(anchored, ticks=3), _quiet())
    assert first.alarms == 0
    second = run_watch(_options(anchored, ticks=1), _quiet())
    assert second.events[0]["resumed"] is True
    # the statistic the first run left (one bad tick) and one more bad tick make the alarm
    assert second.alarms == 1 and second.events[-2]["event"] == "alarm"
    state = load_state(second.folder)
    assert state is not None and state.tick == 4 and state.alarmed


def test_a_watch_of_another_anchor_is_refused(anchored, fake_server):
    run_watch(_options(anchored, ticks=1), _quiet())
    other = evalrun.score(
        fake_server.base_url,
        suite=str(anchored["results"].parent / "suite"),
        results=anchored["results"],
    )
    with pytest.raises(evalrun.base.errors.UsageError, match="another --name"):
        run_watch(_options(anchored, anchor=other.run_id, ticks=1), _quiet())


def test_disk_stays_bounded(anchored):
    result = run_watch(_options(anchored, ticks=5, keep_runs=2), _quiet())
    runs = [p for p in (result.folder / "ticks").iterdir() if (p / "run.json").exists()]
    state = load_state(result.folder)
    assert state is not None and state.floor is not None
    # the newest two, and those the floor was measured from (tick 1's burst, its serial copy and
    # the floor's bursts)
    assert len(runs) == 2 + 1 + FLOOR_ASKS and set(state.floor.runs) <= {p.name for p in runs}
    # points beyond the kept ones are compacted into blocks, their tick lines leave the log
    for i in range(6, 6 + 2 * BLOCK):
        state.points.append(TickPoint(tick=i, at="t", status="ok", statistic=0.0, compared=8))
    compact(result.folder, state, keep_points=10, keep_runs=2)
    assert len(state.points) < 10 + BLOCK and state.blocks
    assert state.blocks[0].first == 1 and state.blocks[0].ticks == BLOCK
    ticks = [e for e in read_events(result.folder) if e["event"] == "tick"]
    assert all(e["tick"] >= state.points[0].tick for e in ticks)
    # the timeline still shows the compacted ticks, as blocks
    from evalrun.watching.state import save_state
    from evalrun.watching.timeline import write_timeline

    save_state(result.folder, state)
    page = write_timeline(result.folder).read_text()
    assert "Earlier ticks, compacted" in page
    assert f"<td class=num>1–{BLOCK}</td>" in page


def test_cli_watch_and_its_timeline(anchored, tmp_path, capsys):
    _faulty_after(anchored["fake"], 1)
    code = main([
        "watch", "--endpoint", anchored["fake"].base_url, "--anchor", anchored["anchor"],
        "--results", str(anchored["results"]), "--every", "0", "--ticks", "3", "--json",
        "--no-escalate", "--name", "cli",
    ])  # fmt: skip
    assert code == 1
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events].count("alarm") == 1
    assert main(["report", "watch:cli", "--results", str(anchored["results"])]) == 0
    page = (watch_dir(anchored["results"], "cli") / "timeline.html").read_text()
    assert "<polyline" in page and "alarm at tick 3" in page


def test_timeline_escapes_server_text(anchored):
    from evalrun.watching.state import append_event

    result = run_watch(_options(anchored, ticks=1), _quiet())
    append_event(
        result.folder,
        {
            "event": "down",
            "at": "t",
            "watch": "watch",
            "tick": 2,
            "reason": "<script>alert(1)</script>",
        },
    )
    assert main(["report", "watch:watch", "--results", str(anchored["results"])]) == 0
    page = (result.folder / "timeline.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--anchor", "latest"], "--endpoint"),
        (["--anchor", "latest", "--endpoint", "http://x", "--ticks", "0"], "--ticks"),
        (["--anchor", "latest", "--endpoint", "http://x", "--name", "../up"], "watch name"),
        (
            ["--anchor", "latest", "--endpoint", "http://x", "--on-alarm", "no-such-cmd-x"],
            "not found",
        ),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(anchored, capsys, argv, message):
    code = main(["watch", "--results", str(anchored["results"]), *argv])
    assert code == 2
    assert message in capsys.readouterr().err


def _trace(item_id: str, steps: list[tuple[str, float, float]]) -> Any:
    """A trace of (token, its logprob, the runner-up's logprob) steps; the runner-up is 'zz'."""
    from evalrun.endpoint.logprobs import TokenTrace

    tokens = [[t, lp, [[t, lp], ["zz", alt]]] for t, lp, alt in steps]
    return TokenTrace(id=item_id, top_k=2, total=len(tokens), cap=128, tokens=tokens)


def test_a_near_tie_flip_is_not_off_a_hard_one_is_and_drift_counts_per_tick():
    from evalrun.watching.judge import THRESHOLDS, judge_tick

    anchor = {
        "a": _trace("a", [("x", -0.6, -0.8), ("y", -0.1, -3.0)]),
        "b": _trace("b", [("p", -0.05, -4.0), ("q", -0.05, -4.0)]),
    }
    flipped = {  # a's near tie flips; b unchanged
        "a": _trace("a", [("zz", -0.6, -0.7)]),
        "b": _trace("b", [("p", -0.05, -4.0), ("q", -0.05, -4.0)]),
    }
    flipped["a"].tokens[0][2] = [["zz", -0.6], ["x", -0.7]]
    j = judge_tick(anchor, [], flipped, ["a", "b"])
    assert (j.off, j.near_tie, j.compared) == (0, 1, 2)
    hard = {**flipped, "b": _trace("b", [("zz", -0.05, -9.0)])}
    j = judge_tick(anchor, [], hard, ["a", "b"])
    assert j.off_ids == ["b"]
    drifted = {  # the same tokens, each logprob moved past the healthy drift limit
        i: _trace(i, [(t[0], t[1] - 2 * THRESHOLDS.drift_max, t[2][1][1]) for t in tr.tokens])
        for i, tr in anchor.items()
    }
    j = judge_tick(anchor, [], drifted, ["a", "b"])  # no floor: the default one
    assert j.off == 0 and j.drift > THRESHOLDS.drift_max
    assert j.units is not None and j.units > DIVERGENT_UNITS


@pytest.mark.slow
def test_sigterm_ends_the_watch_cleanly_and_a_restart_resumes(anchored):
    import os
    import signal
    import subprocess
    import time

    argv = [
        sys.executable, "-m", "evalrun", "watch", "--endpoint", anchored["fake"].base_url,
        "--anchor", anchored["anchor"], "--results", str(anchored["results"]), "--every", "0.2",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env={**os.environ})
    folder = watch_dir(anchored["results"], "watch")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = load_state(folder) if (folder / "watch.json").exists() else None
        if state is not None and state.tick >= 2:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    events = read_events(folder)
    assert events[-1]["event"] == "stop" and events[-1]["interrupted"] is True
    ticks = load_state(folder).tick  # type: ignore[union-attr]
    again = run_watch(_options(anchored, ticks=1), _quiet())
    assert again.events[0]["resumed"] is True
    assert load_state(folder).tick == ticks + 1  # type: ignore[union-attr]


def test_an_unwritable_metrics_file_is_a_one_line_error(anchored, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main([
        "watch", "--endpoint", anchored["fake"].base_url, "--anchor", anchored["anchor"],
        "--results", str(anchored["results"]), "--ticks", "1",
        "--metrics-file", str(blocker / "watch.prom"),
    ])  # fmt: skip
    assert code == 2
    assert "--metrics-file" in capsys.readouterr().err


def test_a_noisier_lane_needs_a_larger_change():
    from evalrun.watching import Cusum

    default = Cusum.for_healthy_rate(0.02)
    assert default == DEFAULT_CUSUM
    noisy = Cusum.for_healthy_rate(0.1)
    assert ticks_to_alarm(noisy, PROBE, 1) is None  # one item in eight is its normal
    assert ticks_to_alarm(noisy, PROBE, PROBE) == 2


def test_api_key_env_reaches_a_watched_endpoint(anchored, monkeypatch, capsys):
    """--api-key-env is the endpoint's key: every tick's request carries it."""
    fake = anchored["fake"]
    fake.api_key = "sk-watch-3"
    monkeypatch.setenv("WATCH_KEY", "sk-watch-3")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main([
        "watch", "--endpoint", fake.base_url, "--anchor", anchored["anchor"],
        "--results", str(anchored["results"]), "--every", "0", "--ticks", "2",
        "--api-key-env", "WATCH_KEY", "--name", "keyed",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert fake.headers[-1].get("authorization") == "Bearer sk-watch-3"


@pytest.mark.slow
def test_a_watched_contract_gets_its_engines_key_not_the_users(tmp_path, make_suite, monkeypatch):
    """A contract whose engine requires its own key: the ticks send that key (the engine answers
    401 to anything else), not the user's OPENAI_API_KEY, which is for other endpoints."""
    from test_score_contract import contract_file

    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")
    contract = contract_file(tmp_path, **{"api-key": "sk-engine-7"})
    results = tmp_path / "results"
    suite = make_suite([simple_item(i, answer="OK") for i in range(3)])
    target = ["--contract", str(contract), "--results", str(results)]
    assert main(["score", *target, "--suite", str(suite), "--no-progress"]) == 0
    result_code = main(
        ["watch", *target, "--anchor", "latest", "--every", "0", "--ticks", "2", "--no-escalate"]
    )
    state = load_state(watch_dir(results, "watch"))
    assert state is not None
    assert [p.status for p in state.points] == ["ok", "ok"], [p.verdict for p in state.points]
    assert result_code == 0


def test_the_floor_is_measured_on_the_first_tick_shown_everywhere_and_resumed(anchored, tmp_path):
    fake = anchored["fake"]
    before = fake.chat_requests
    prom = tmp_path / "watch.prom"
    result = run_watch(_options(anchored, ticks=3, metrics_file=prom), _quiet())
    # tick 1 asked the probe at once, again one at a time and in FLOOR_BURSTS more bursts;
    # ticks 2 and 3 at once only
    assert fake.chat_requests - before == (3 + FLOOR_ASKS) * PROBE
    floor = next(e for e in result.events if e["event"] == "floor")
    # A/A pairs of the probe: the burst against its serial copy, and each run against the anchor
    assert floor["tick"] == 1 and floor["source"] == "measured"
    assert floor["items"] == (2 + FLOOR_ASKS) * PROBE
    assert f"serial vs burst, and {FLOOR_BURSTS + 1} bursts" in floor["measured_from"]
    assert len(floor["runs"]) == 1 + FLOOR_ASKS
    ticks = [e for e in result.events if e["event"] == "tick"]
    assert all(e["grade"] == "identical" and e["units"] == 0.0 for e in ticks)
    state = load_state(result.folder)
    assert state is not None and state.floor is not None and state.floor.source == "measured"
    samples = {
        (s.name, s.labels.get("source")): s.value
        for f in text_string_to_metric_families(prom.read_text())
        for s in f.samples
    }
    assert samples[("evalrun_watch_floor", "measured")] == 1.0
    assert samples[("evalrun_watch_floor", "--floor")] == 0.0
    assert ("evalrun_watch_tick_floor_units", None) in samples
    assert ("evalrun_watch_floor_drift", None) in samples
    lines: list[str] = []
    again = run_watch(_options(anchored, ticks=1), WatchHooks(say=lines.append))
    # resumed: the floor is not measured again
    assert fake.chat_requests - before == (4 + FLOOR_ASKS) * PROBE
    assert not any(e["event"] == "floor" for e in again.events)
    assert "floor measured (serial vs burst" in lines[0]
    assert "0 floor units (identical)" in lines[1]
    assert main(["report", "watch:watch", "--results", str(anchored["results"])]) == 0
    page = (result.folder / "timeline.html").read_text()
    assert f"floor measured (serial vs burst, and {FLOOR_BURSTS + 1} bursts" in page
    assert "noise-floor units" in page


def test_floor_run_is_the_anchors_a_a_partner(anchored, capsys):
    fake = anchored["fake"]
    partner = evalrun.score(
        fake.base_url, suite=str(anchored["results"].parent / "suite"), results=anchored["results"]
    )
    before = fake.chat_requests
    code = main([
        "watch", "--endpoint", fake.base_url, "--anchor", anchored["anchor"],
        "--results", str(anchored["results"]), "--every", "0", "--ticks", "2", "--json",
        "--floor", partner.run_id, "--name", "floored",
    ])  # fmt: skip
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert fake.chat_requests - before == 2 * PROBE  # nothing asked for the floor
    floor = next(e for e in events if e["event"] == "floor")
    assert floor["source"] == "--floor" and floor["given"] == partner.run_id
    assert floor["measured_from"] == f"{anchored['anchor']} vs {partner.run_id}"
    state = load_state(watch_dir(anchored["results"], "floored"))
    assert state is not None and state.floor is not None and state.floor.given == partner.run_id
    with pytest.raises(evalrun.base.errors.UsageError, match="is run A itself"):
        run_watch(_options(anchored, floor=anchored["anchor"], name="self"), _quiet())


def test_the_drift_that_counts_is_measured_in_floor_units():
    from evalrun.compare.floor import Floor
    from evalrun.watching.judge import THRESHOLDS, healthy_rate, judge_tick

    anchor = {
        "a": _trace("a", [("x", -0.2, -3.0), ("y", -0.1, -3.0)]),
        "b": _trace("b", [("p", -0.05, -4.0), ("q", -0.05, -4.0)]),
    }
    moved = 2 * THRESHOLDS.drift_max  # every logprob moved past the healthy limit
    tick = {
        i: _trace(i, [(t[0], t[1] - moved, t[2][1][1]) for t in tr.tokens])
        for i, tr in anchor.items()
    }

    def floor(drift: float, hard: int = 0) -> Floor:
        per = {i: (drift * 2, 2) for i in anchor}
        return Floor(
            source="s", pairs=1, items=2, diverged=hard, hard=hard, tokens=4, drift=drift,
            item_drift=per,
        )  # fmt: skip

    # no floor: the default one (drift_max at DIVERGENT_UNITS); the drift is a distance, never
    # an item off
    plain = judge_tick(anchor, [], tick, ["a", "b"])
    assert (plain.off, plain.units, plain.grade) == (0, 8.0, "")
    noisy = judge_tick(anchor, [], tick, ["a", "b"], floor(moved))
    assert (noisy.off, noisy.units, noisy.grade) == (0, 1.0, "within noise")
    tight = judge_tick(anchor, [], tick, ["a", "b"], floor(0.001))
    assert tight.off == 0 and tight.grade == "divergent" and tight.units == 100.0
    small = {
        i: _trace(i, [(t[0], t[1] - (0.04 if i == "a" else 0.03), t[2][1][1]) for t in tr.tokens])
        for i, tr in anchor.items()
    }
    shifted = judge_tick(anchor, [], small, ["a", "b"], floor(0.01))
    assert shifted.grade == "numerically different" and shifted.units == 3.5
    assert shifted.off == 0
    assert judge_tick(anchor, [], small, ["a", "b"], floor(0.03)).units == round(3.5 / 3, 2)
    assert healthy_rate(None) == healthy_rate(floor(0.0)) == THRESHOLDS.healthy_hard_rate
    assert healthy_rate(floor(0.0, hard=1)) == 0.5


def _shifted_after(fake: FakeServer, ticks: int, healthy: float, shifted: float) -> None:
    """The same answer with its one token's logprob `healthy` below the anchor's (-0.05) for
    `ticks` ticks, then `shifted` below: a numeric change, the tokens unchanged."""
    start = fake.chat_requests

    def rule(body: dict[str, Any]) -> Any:
        late = fake.chat_requests > start + (ticks + FLOOR_ASKS) * PROBE
        lp = -0.05 - (shifted if late else healthy)
        return reply("ok", tokens=[("ok", lp, [("ok", lp), ("zz", -4.0), ("yy", -5.0)])])

    fake.rule = rule


# The healthy server sits 0.01 from the anchor on every token; its floor is the widest of the
# burst against its serial copy (0) and each against the anchor (0.01): 0.01, so a healthy tick
# is 1 floor unit and a shift of u floor units is u·FLOOR.
FLOOR = 0.01


def test_a_steady_shift_of_a_few_floor_units_alarms_within_three_ticks(anchored):
    # 3.5 floor units on every tick from tick 4 on: outside the noise, under the healthy limit
    _shifted_after(anchored["fake"], 3, 0.01, 3.5 * FLOOR)
    result = run_watch(_options(anchored, ticks=9, escalate=False), _quiet())
    ticks = [e for e in result.events if e["event"] == "tick"]
    assert [e["units"] for e in ticks[:3]] == [1.0] * 3
    assert {round(e["units"], 1) for e in ticks[3:]} == {3.5}
    assert all(e["off"] == 0 for e in ticks)  # no item left the anchor's tokens
    alarm = next(e for e in result.events if e["event"] == "alarm")
    assert alarm["tick"] == 6  # +1.5 a tick: 1.5, 3.0, then the threshold of 4
    assert alarm["drift_statistic"] == alarm["drift_threshold"] == 4.0


def test_a_steady_shift_under_the_noise_line_still_adds_up(anchored):
    # 2.5 floor units: compare calls one such tick within noise, eight in a row are a change
    _shifted_after(anchored["fake"], 1, 0.01, 2.5 * FLOOR)
    result = run_watch(_options(anchored, ticks=10, escalate=False), _quiet())
    alarm = next(e for e in result.events if e["event"] == "alarm")
    assert alarm["tick"] == 9


def test_a_steady_wobble_inside_the_noise_never_alarms(anchored):
    # 1.95 floor units on every tick, forty ticks: above the healthy 1, under the reference 2
    _shifted_after(anchored["fake"], 1, 0.01, 1.95 * FLOOR)
    result = run_watch(_options(anchored, ticks=40), _quiet())
    assert result.alarms == 0
    state = load_state(result.folder)
    assert state is not None and state.statistic == 0.0 and state.running.drift == 0.0

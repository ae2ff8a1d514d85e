"""One deadline bounds every wait of an item, and the run says when it waits on the server.

`--timeout S` is an item's whole budget: its tries, a body trickled however slowly, and the waits
between tries (a Retry-After past it fails the item at once). A server that sends nothing while
requests wait is told on stderr after min(60, S/2) seconds, and once that silence reaches S the
run stops: the items in flight are recorded as errors, and a resume asks them again.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from fakeserver import http_error, last_user, simple_item
from rawserver import HANG, RawServer
from test_reliability import assert_agrees, score

from evalrun.base.errors import UsageError
from evalrun.cli import main
from evalrun.endpoint.activity import Activity
from evalrun.endpoint.client import RequestFailed, RetryPolicy, chat_attempt, make_client
from evalrun.endpoint.http import HttpOptions
from evalrun.scoring.state import silence_bound

PARAMS = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_timeout_that_is_not_positive_is_a_usage_error(
    fake_server, make_suite, tmp_path, capsys, value
):
    code = score(fake_server, make_suite(n=2), tmp_path / "r", f"--timeout={value}")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--timeout" in err
    assert fake_server.chat_requests == 0 and not (tmp_path / "r").exists()
    with pytest.raises(UsageError):
        HttpOptions(timeout=float(value))


def test_a_retry_after_past_the_deadline_fails_the_item_at_once(
    fake_server, make_suite, tmp_path, capsys
):
    fake_server.rule = lambda req: http_error(429, "slow down", retry_after=3600)
    started = time.monotonic()
    code = score(fake_server, make_suite(n=2), tmp_path / "r", "--timeout", "10")
    elapsed = time.monotonic() - started
    # was 120 s a retry, past any --timeout, and nothing said; failing at the 10 s deadline
    # instead of at once would take 10 s (the bound leaves room for a loaded machine running
    # the suite on two workers: 6.2 s seen beside a vLLM boot at load 8)
    assert elapsed < 8, elapsed
    _, rows = assert_agrees(tmp_path / "r")
    message = rows["basic-000"]["error"]["message"]
    assert "retry after 3600 s" in message and "--timeout" in message
    assert code in (3, 4) and "Traceback" not in capsys.readouterr().err


def waits_of(fake, timeout: float) -> tuple[list[float], list[str], RequestFailed | None]:
    """One item against `fake` with a recorded (not slept) wait and the lines told."""
    slept: list[float] = []
    told: list[str] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    async def go() -> RequestFailed | None:
        client = make_client(fake.base_url, http=HttpOptions(timeout=timeout))
        try:
            await chat_attempt(
                client, PARAMS, retry=RetryPolicy(), sleep=sleep, on_wait=told.append
            )
        except RequestFailed as exc:
            return exc
        finally:
            await client.close()
        return None

    return slept, told, asyncio.run(go())


def test_a_long_retry_after_within_the_deadline_is_told(fake_server):
    fake_server.script(http_error(429, "slow down", retry_after=30))
    slept, told, failure = waits_of(fake_server, timeout=60)
    assert failure is None and sum(slept) == 30
    assert told == ["waiting for Retry-After 30 s"]


def test_short_waits_are_not_told(fake_server):
    fake_server.script(http_error(503, "busy", retry_after=1))
    _, told, failure = waits_of(fake_server, timeout=60)
    assert failure is None and told == []


def test_the_run_names_the_item_it_waits_for(fake_server, make_suite, tmp_path, capsys):
    fake_server.script(http_error(429, "slow down", retry_after=5))
    code = score(fake_server, make_suite([simple_item(4)]), tmp_path / "r", "--timeout", "30")
    assert code == 0
    assert "waiting for Retry-After 5 s on basic-004" in capsys.readouterr().err


def test_retries_share_one_deadline(fake_server):
    """Each try used to get a full timeout: 4 tries of a hung server took 4 x S plus backoff."""
    fake_server.latency = 30
    started = time.monotonic()
    _, _, failure = waits_of(fake_server, timeout=1.0)
    assert failure is not None and failure.kind == "timeout"
    assert "1 s" in failure.message
    assert time.monotonic() - started < 3


SILENCE_S = 3.0  # --timeout in the silence tests: the run stops after this much silence
SLACK_S = 2.5  # the rest on a loaded machine (poll, ending requests, writing the run); under 2 x S


def hanging(fake, answered: str | None = None, after: float = 0.0) -> list[float]:
    """Make every chat request to `fake` hang (the prompt holding `answered` is answered after
    `after` s); return the list the arrival time of each request is appended to."""
    arrivals: list[float] = []

    def latency(body: dict) -> float:
        arrivals.append(time.monotonic())
        return after if answered is not None and answered in last_user(body) else 60.0

    fake.latency = latency
    return arrivals


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_silent_server_stops_the_run_after_one_timeout_of_silence(
    fake_server, make_suite, tmp_path, capsys, concurrency
):
    # /v1/models answers, every chat request hangs: nothing comes back for --timeout seconds,
    # so the run stops then, whatever the concurrency (it took 2 x S before: two waves of items).
    arrivals = hanging(fake_server)
    suite = make_suite(n=5)
    timeout = ("--timeout", f"{SILENCE_S:g}")
    code = score(fake_server, suite, tmp_path / "r", *timeout, "--concurrency", concurrency)
    elapsed = time.monotonic() - arrivals[0]  # from the first request on: the bound's clock
    err = capsys.readouterr().err
    assert code == 3
    assert elapsed < silence_bound(SILENCE_S) + SLACK_S, elapsed
    assert "no answer from the server for 1.5 s" in err
    assert f"nothing from the server for {SILENCE_S:g} s (--timeout)" in err
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "incomplete"
    assert rows and all(
        r["status"] == "error" and r["error"]["kind"] == "timeout" for r in rows.values()
    )
    # Nothing lost: a resume against a server that answers again asks every item not passed.
    fake_server.latency = 0
    assert score(fake_server, suite, tmp_path / "r", "--resume", "latest") == 0
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "complete" and len(rows) == 5
    assert all(r["status"] == "passed" for r in rows.values())


def test_items_in_flight_when_the_server_falls_silent_are_recorded_and_asked_again(
    fake_server, make_suite, tmp_path, capsys
):
    # Two at a time: item 1 answers at S/2 (the server's last byte), every other item hangs.
    # Item 0 waited while item 1 was answered (as a request queued behind others does), so its
    # deadline moves to S/2 + S; item 2 is asked at S/2. At 1.5 S the silence reaches S: the run
    # stops both in flight and records them as errors (asked again by --resume; item 0's own
    # deadline falls at that moment too); items 3 to 5 are never asked.
    half = SILENCE_S / 2
    arrivals = hanging(fake_server, answered="question 1:", after=half)
    suite = make_suite(n=6)
    code = score(
        fake_server, suite, tmp_path / "r", "--timeout", f"{SILENCE_S:g}", "--concurrency", "2"
    )
    elapsed = time.monotonic() - arrivals[0]
    assert code == 3
    assert elapsed < half + silence_bound(SILENCE_S) + SLACK_S, elapsed
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "incomplete"
    statuses = {i: r["status"] for i, r in rows.items()}
    assert statuses == {"basic-000": "error", "basic-001": "passed", "basic-002": "error"}
    # item 2's own deadline and the run's silence fall within moments of each other: either says
    # why it was given up on
    message = rows["basic-002"]["error"]["message"]
    assert "the run stopped" in message or "no answer within" in message, message
    assert {rows[i]["error"]["kind"] for i in ("basic-000", "basic-002")} == {"timeout"}
    fake_server.latency = 0
    assert score(fake_server, suite, tmp_path / "r", "--resume", "latest") == 0
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "complete" and len(rows) == 6
    capsys.readouterr()


def test_a_server_that_answers_nothing_at_all_is_told_and_given_up_on(make_suite, tmp_path, capsys):
    # The raw server reads each request and never answers, /v1/models included: the run says so
    # while it waits and gives up after --timeout seconds, before it wrote anything.
    with RawServer(lambda path: [HANG], models=True) as raw:
        started = time.monotonic()
        code = score(raw, make_suite(n=3), tmp_path / "r", "--timeout", f"{SILENCE_S:g}")
        elapsed = time.monotonic() - started  # imports and the suite's loading included
    err = capsys.readouterr().err
    assert code == 3
    assert elapsed < silence_bound(SILENCE_S) + 2 * SLACK_S, elapsed
    assert "no answer from the server for 1.5 s" in err
    assert err.strip().splitlines()[-1].startswith("evalrun score: error: cannot reach")
    assert "Traceback" not in err


def test_score_help_states_the_bound(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "after S s of such silence the run stops" in text


def test_silence_counts_only_the_time_requests_wait_and_ends_with_a_byte():
    now = [0.0]
    activity = Activity(clock=lambda: now[0])
    activity.begin()
    now[0] = 2.0
    assert activity.silent_for() == 2.0
    activity.end()
    now[0] = 10.0  # nothing asked (a Retry-After wait): not the server's silence
    assert activity.silent_for() == 2.0
    activity.begin()
    activity.begin()
    now[0] = 11.0
    activity.end()  # one of two over: the other still waits
    now[0] = 12.0
    assert activity.silent_for() == 4.0
    activity.heard()
    now[0] = 12.5
    assert activity.silent_for() == 0.5
    activity.end()
    now[0] = 20.0
    assert activity.silent_for() == 0.5 and activity.in_flight == 0

"""One deadline bounds every wait of an item, and the run says when it waits on the server.

`--timeout S` is an item's whole budget: its tries, a body trickled however slowly, and the waits
between tries (a Retry-After past it fails the item at once). A server that answers nothing is
told on stderr after min(60, S/2) seconds of silence, and the run stops within about 2 x S.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from fakeserver import http_error, simple_item
from test_reliability import assert_agrees, score

from evalrun.endpoint.client import RequestFailed, RetryPolicy, chat_attempt, make_client
from evalrun.endpoint.http import HttpOptions
from evalrun.errors import UsageError

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
    assert elapsed < 5, elapsed  # was 120 s a retry, past any --timeout, and nothing said
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


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_hung_endpoint_is_told_and_stops_within_twice_the_timeout(
    fake_server, make_suite, tmp_path, capsys, concurrency
):
    fake_server.latency = 60
    started = time.monotonic()
    code = score(
        fake_server, make_suite(n=5), tmp_path / "r", "--timeout", "2", "--concurrency", concurrency
    )
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 3
    assert elapsed < 2 * 2 + 2, elapsed  # concurrency 1 took 5 items x 2 s (4 x 2 s before)
    assert "no answer from the server for 1 s" in err and "(--timeout)" in err
    record, _ = assert_agrees(tmp_path / "r")
    assert record["status"] == "incomplete"

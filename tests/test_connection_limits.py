"""A server that takes fewer connections than the run asks with (a proxy or a small threaded
server with a connection cap): the run adapts and completes (endpoint/activity.py's policy)."""

from __future__ import annotations

import time

import pytest
from slotserver import SlotServer
from test_reliability import assert_agrees, score

from evalrun.endpoint.activity import Activity

pytestmark = pytest.mark.slow  # 184 items through a real server and the CLI


@pytest.mark.parametrize("mode", ["reset", "queue"])
def test_concurrency_256_against_a_server_of_4_connections_completes(
    mode, make_suite, tmp_path, capsys
):
    """reset: connections past 4 are reset (51 of 184 items failed, 4 tries in 3.5 s of
    backoff); queue: they wait unread until a slot frees, and idle keep-alive connections held
    the slots (the run stopped at 16 of 184, `the endpoint stopped answering`)."""
    with SlotServer(slots=4, mode=mode) as server:
        started = time.monotonic()
        code = score(server, make_suite(n=184), tmp_path / "r", "--concurrency", "256")
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 0, err
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "complete" and len(rows) == 184
    assert all(r["status"] == "passed" for r in rows.values())
    assert server.served == 184  # nothing asked twice
    assert elapsed < 90, elapsed


def test_the_cap_drops_to_what_the_server_holds_and_climbs_back():
    import asyncio

    async def go() -> None:
        a = Activity()
        assert a.limit is None and not a.refused()  # nothing held: a refusal is a failure
        async with a.slot(), a.slot(), a.slot():
            assert not a.refused()  # nothing answered yet: a server resetting everything
            a.answered()
            assert a.refused() and a.limit == 3
        for _ in range(3):
            await a.served()
        assert a.limit == 4

    asyncio.run(go())


def test_refusals_from_a_server_silent_for_long_are_failures(monkeypatch):
    import asyncio

    now = [0.0]
    a = Activity(clock=lambda: now[0])

    async def go() -> None:
        a.answered()
        async with a.slot():
            now[0] = 60.0  # one request of ours hangs on a server that answers no more
            assert not a.refused() and a.limit is None

    asyncio.run(go())


def test_a_server_resetting_every_connection_is_one_line(make_suite, tmp_path):
    """Requests given up while they wait for a slot were never begun: no coroutine is left
    un-awaited (Python's warning reached stderr), and the run ends with one error line."""
    import subprocess
    import sys

    from rawserver import RESET, RawServer

    with RawServer(lambda path: [RESET]) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "evalrun", "score", "--endpoint", server.base_url]
            + ["--suite", str(make_suite(n=20)), "--results", str(tmp_path / "r")]
            + ["--no-progress", "--timeout", "3"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    lines = [ln for ln in proc.stderr.splitlines() if "no answer from the server" not in ln]
    assert proc.returncode == 3 and len(lines) == 1, proc.stderr
    assert "never awaited" not in proc.stderr and "the endpoint stopped answering" in lines[0]


def test_a_failure_finishing_as_the_deadline_passes_is_not_left_unretrieved(monkeypatch):
    """A request that fails in the same turn of the loop as its deadline passes: the deadline
    wins (TimeoutError) and the failure is retrieved, so asyncio prints no "Task exception was
    never retrieved" traceback to stderr (seen once on a busy machine against a server that
    resets every connection)."""
    import asyncio
    import gc

    from evalrun.endpoint import client

    real_wait = asyncio.wait

    async def wait_reporting_a_timeout(tasks, timeout=None):
        await real_wait(tasks)  # the request finishes, but the wait reports its timeout first
        return set(), set(tasks)

    async def failing() -> None:
        raise ConnectionResetError("reset by peer")

    unretrieved: list[str] = []
    now = iter([0.0, 5.0, 5.0, 5.0])

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, ctx: unretrieved.append(ctx["message"])
        )
        monkeypatch.setattr(client.asyncio, "wait", wait_reporting_a_timeout)
        try:
            with pytest.raises(TimeoutError):
                await client._within(failing(), lambda: 1.0, lambda: next(now))
        finally:
            monkeypatch.setattr(client.asyncio, "wait", real_wait)
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(run())
    gc.collect()
    assert not unretrieved, unretrieved

"""Every failure below HTTP is a classified item error (or a one-line error), never a traceback.

Each shape is served by a raw asyncio server on 127.0.0.1 (rawserver.py) and asked through the real
stack (openai -> httpx2 -> the SDK's aiohttp transport), the way tests/test_reliability.py asks a
misbehaving fake server: what a user sees is the exit code, one line on stderr, and the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import socket
import sys
import threading
import time

import pytest
from rawserver import CHAT, HANG, RESET, RawServer, http
from test_reliability import assert_agrees, score

from evalrun.base.errors import UsageError
from evalrun.cli import main
from evalrun.endpoint.client import (
    RequestFailed,
    RetryPolicy,
    chat_attempt,
    make_client,
    run_sync,
)
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.options import normalise_endpoint

ONE_TRY = RetryPolicy(attempts=1)

# name -> (steps the server plays after reading the request, the kind a user must see)
SHAPES = {
    "content_length_short": ([http(CHAT, length=10)], {"bad_response"}),
    "content_length_long": ([http(CHAT, length=len(CHAT) + 50)], {"bad_response"}),
    "status_line_garbage": ([b"HTTP/1.1 abc\r\n\r\n"], {"bad_response"}),
    "http09_body_only": ([b"{}"], {"bad_response"}),
    "nul_bytes": ([b"\x00" * 64], {"bad_response"}),
    "http2_frame": ([b"\x00\x00\x12\x04\x00\x00\x00\x00\x00"], {"bad_response"}),
    "header_without_colon": (
        [b"HTTP/1.1 200 OK\r\nBad Header\r\nContent-Length: 2\r\n\r\n{}"],
        {"bad_response"},
    ),
    "header_line_too_long": (
        [b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\nContent-Length: 2\r\n\r\n{}"],
        {"bad_response"},
    ),
    "two_content_lengths": ([http(CHAT, extra="Content-Length: 5\r\n")], {"bad_response"}),
    "chunk_size_garbage": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"],
        {"bad_response"},
    ),
    "chunked_cut": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"],
        {"bad_response"},
    ),
    "body_cut_then_reset": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", RESET],
        {"bad_response", "connect"},
    ),
    "closed_at_once": ([], {"connect"}),
    "reset_at_once": ([RESET], {"connect"}),
    "status_line_then_close": ([b"HTTP/1.1 200 OK\r\n"], {"connect"}),
    "hang": ([HANG], {"timeout"}),
    "hang_after_head": ([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", HANG], {"timeout"}),
}


def ask(base_url: str, timeout: float = 1.0) -> RequestFailed:
    """One try against `base_url`; the RequestFailed it must end in."""

    async def go() -> RequestFailed:
        client = make_client(base_url, http=HttpOptions(timeout=timeout))
        try:
            with pytest.raises(RequestFailed) as info:
                await chat_attempt(client, {"model": "m", "messages": []}, retry=ONE_TRY)
            return info.value
        finally:
            await client.close()

    return run_sync(go)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_raw_shape_is_a_classified_one_line_failure(name):
    steps, kinds = SHAPES[name]
    with RawServer(lambda path: steps) as server:
        failure = ask(server.base_url)
    assert failure.kind in kinds, (failure.kind, failure.message)
    assert "\n" not in failure.message and len(failure.message) < 400
    assert "event loop" not in failure.message


def test_short_content_length_is_an_item_error_not_a_traceback(make_suite, tmp_path, capsys):
    with RawServer(lambda path: [http(CHAT, length=10)]) as server:
        code = score(server, make_suite(n=3), tmp_path / "r", "--timeout", "2")
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "no answer from the server" not in line]
    assert code == 3 and "Traceback" not in err and len(errors) == 1
    assert "not valid HTTP" in err or "not a chat completion" in err
    _, rows = assert_agrees(tmp_path / "r")
    assert rows and all(r["status"] == "error" for r in rows.values())
    assert {r["error"]["kind"] for r in rows.values()} == {"bad_response"}


def test_a_non_http_banner_is_a_one_line_error(make_suite, tmp_path, capsys):
    with RawServer(lambda path: [HANG], banner=b"SSH-2.0-OpenSSH_9.6\r\n") as server:
        code = score(server, make_suite(n=2), tmp_path / "r", "--timeout", "2")
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1
    assert "not valid HTTP" in err and "SSH-2.0-OpenSSH_9.6" in err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_says_so(make_suite, tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["score", "--endpoint", url, "--suite", str(make_suite(n=1)), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1
    assert "connection refused" in err and "event loop" not in err


def test_a_server_killed_mid_run_says_so(make_suite, tmp_path, capsys):
    asked: list[str] = []

    def shape(path: str) -> list:
        asked.append(path)
        if len(asked) == 3:
            threading.Thread(target=server.kill).start()
            return [HANG]
        return [http(CHAT)]

    server = RawServer(shape).start()
    try:
        code = score(server, make_suite(n=30), tmp_path / "r", "--concurrency", "4")
    finally:
        server.stop()
    err = capsys.readouterr().err
    assert code == 3 and "event loop" not in err and err.count("\n") == 1
    assert "connection refused" in err
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "incomplete" and 2 <= len(rows) < 30


def test_the_raw_server_killed_while_clients_connect_leaves_no_socket_open(monkeypatch):
    """The kill the test above leans on: a connection accepted in the instant of the kill is
    closed too, and no stop raises in the killing thread. A socket left open is a
    ResourceWarning when collected, which pytest reports against whatever test runs then."""
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    for _ in range(5):
        assert _kill_while_clients_connect() >= 3
        gc.collect()
        assert not unraisable, unraisable[:3]


def _kill_while_clients_connect() -> int:
    """Connections the raw server took while three clients kept connecting and the third
    request killed it."""
    done, killed = threading.Event(), threading.Event()
    asked = itertools.count(1)

    def shape(path: str) -> list:
        if next(asked) == 3:
            threading.Thread(target=server.kill).start()
            killed.set()
        return [HANG]

    def connect() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                with socket.create_connection(("127.0.0.1", server.port), timeout=0.1) as s:
                    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n\r\n")

    server = RawServer(shape).start()
    clients = [threading.Thread(target=connect) for _ in range(3)]
    for client in clients:
        client.start()
    try:
        assert killed.wait(10)
        time.sleep(0.02)  # connections keep coming while the kill runs
    finally:
        server.stop()
        done.set()
        for client in clients:
            client.join()
    return server.connections


def test_https_to_an_http_port_names_tls(fake_server, make_suite, capsys):
    url = fake_server.base_url.replace("http://", "https://")
    code = main(
        ["score", "--endpoint", url, "--suite", str(make_suite(n=1)), "--no-progress"]
        + ["--timeout", "3"]
    )
    err = capsys.readouterr().err
    assert code == 3 and "TLS handshake failed" in err and "scheme of --endpoint" in err


def test_a_port_out_of_range_is_a_usage_error(make_suite, capsys):
    with pytest.raises(UsageError, match="1 to 65535"):
        normalise_endpoint("http://127.0.0.1:99999/v1")
    code = main(
        ["score", "--endpoint", "127.0.0.1:99999", "--suite", str(make_suite(n=1)), "--no-progress"]
    )
    assert code == 2 and "65535" in capsys.readouterr().err


def test_run_sync_gives_failures_no_event_loop_context():
    async def fail() -> None:
        raise OSError("boom")

    with pytest.raises(OSError) as info:
        run_sync(fail)
    assert info.value.__context__ is None


def test_refused_and_killed_in_a_running_loop_too():
    """The notebook path (run_sync inside a running loop) classifies the same way."""
    url = f"http://127.0.0.1:{free_port()}/v1"

    async def inside() -> RequestFailed:
        return await asyncio.to_thread(ask, url)

    started = time.monotonic()
    failure = asyncio.run(inside())
    assert failure.kind == "connect" and "connection refused" in failure.message
    assert time.monotonic() - started < 10

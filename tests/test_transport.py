"""evalrun's lean HTTP/1.1 transport under the openai client, against raw sockets on 127.0.0.1.

Each test scripts the server byte for byte (one function per accepted connection), so the framing
cases real engines produce are exercised: Content-Length keep-alive, chunked, HTTP/1.0 close-
delimited, gzip, a stale keep-alive connection, a hang, a refused port, a malformed head.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from evalrun.endpoint.client import make_client
from evalrun.endpoint.transport import LeanTransport, httpx

ANSWER = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
}
BODY = json.dumps(ANSWER).encode()

Script = Callable[[socket.socket], None]


def read_request(sock: socket.socket) -> bytes:
    """One request (head + Content-Length body) from the socket; b'' if the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        if not part:
            return b""
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def ok(body: bytes = BODY, *extra: bytes) -> bytes:
    return b"\r\n".join(
        [
            b"HTTP/1.1 200 OK",
            b"Content-Type: application/json",
            b"Content-Length: %d" % len(body),
            *extra,
            b"",
            body,
        ]
    )


class RawServer:
    """Accepts connections on 127.0.0.1; connection number i is served by scripts[i]."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            script = self.scripts[min(self.connections, len(self.scripts) - 1)]
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, script), daemon=True).start()

    @staticmethod
    def _serve(conn: socket.socket, script: Script) -> None:
        with conn:
            try:
                script(conn)
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def start(*scripts: Script) -> RawServer:
        servers.append(RawServer(*scripts))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def post(url: str, n: int = 1, *, timeout: float = 5.0) -> list[Any]:
    """n sequential chat posts through make_client (the lean transport); the parsed bodies."""

    async def run() -> list[Any]:
        client = make_client(url, timeout=timeout)
        try:
            return [
                json.loads(
                    await client.post(
                        "/chat/completions", cast_to=bytes, body={"model": "m", "messages": []}
                    )
                )
                for _ in range(n)
            ]
        finally:
            await client.close()

    return asyncio.run(run())


def keep_alive(n: int) -> Script:
    def script(sock: socket.socket) -> None:
        for _ in range(n):
            if not read_request(sock):
                return
            sock.sendall(ok())

    return script


def test_plain_http_clients_use_the_lean_transport() -> None:
    def under_the_cap(client: Any) -> Any:  # every transport sits under the response-size cap
        return client._client._transport._inner

    assert isinstance(under_the_cap(make_client("http://127.0.0.1:1/v1")), LeanTransport)
    https = make_client("https://example.invalid/v1")
    assert not isinstance(under_the_cap(https), LeanTransport)
    default = make_client("http://127.0.0.1:1/v1", lean=False)
    assert not isinstance(under_the_cap(default), LeanTransport)


def test_keep_alive_reuses_one_connection(raw_server: Callable[..., RawServer]) -> None:
    server = raw_server(keep_alive(5))
    assert post(server.url, 5) == [ANSWER] * 5
    assert server.connections == 1


def test_connection_close_is_honoured(raw_server: Callable[..., RawServer]) -> None:
    def close_after_one(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(ok(BODY, b"Connection: close"))

    server = raw_server(close_after_one)
    assert post(server.url, 3) == [ANSWER] * 3
    assert server.connections == 3


def test_chunked_body_with_extensions_and_trailers(raw_server: Callable[..., RawServer]) -> None:
    def chunked(sock: socket.socket) -> None:
        read_request(sock)
        half = BODY.index(b"completion") + 3  # the split falls inside a JSON string
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
            + b"%x;name=val\r\n%s\r\n" % (half, BODY[:half])
            + b"%X\r\n%s\r\n" % (len(BODY) - half, BODY[half:])
            + b"0\r\nX-Trailer: 1\r\n\r\n"
        )
        keep_alive(1)(sock)  # the connection stays usable after the chunked body

    server = raw_server(chunked)
    assert post(server.url, 2) == [ANSWER] * 2
    assert server.connections == 1


def test_http10_body_delimited_by_close(raw_server: Callable[..., RawServer]) -> None:
    def http10(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY)

    server = raw_server(http10)
    assert post(server.url, 2) == [ANSWER] * 2
    assert server.connections == 2


def test_gzip_body_is_decoded(raw_server: Callable[..., RawServer]) -> None:
    def gzipped(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(ok(gzip.compress(BODY), b"Content-Encoding: gzip"))

    assert post(raw_server(gzipped).url) == [ANSWER]


def test_stale_keep_alive_connection_is_retried_once(raw_server: Callable[..., RawServer]) -> None:
    def answer_then_drop_next(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(ok())
        read_request(sock)  # the second request arrives; hang up without a byte of answer

    server = raw_server(answer_then_drop_next, keep_alive(5))
    assert post(server.url, 3) == [ANSWER] * 3
    assert server.connections == 2


def test_fresh_connection_dropped_is_a_connection_error(
    raw_server: Callable[..., RawServer],
) -> None:
    def drop(sock: socket.socket) -> None:
        read_request(sock)

    server = raw_server(drop)
    with pytest.raises(openai.APIConnectionError) as info:
        post(server.url)
    assert isinstance(info.value.__cause__, httpx.ReadError)
    assert server.connections == 1  # no retry on a fresh connection


def test_body_cut_short_is_a_protocol_error(raw_server: Callable[..., RawServer]) -> None:
    def short(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(ok()[:-10])

    with pytest.raises(openai.APIConnectionError) as info:
        post(raw_server(short).url)
    assert isinstance(info.value.__cause__, httpx.RemoteProtocolError)


def test_malformed_head_is_a_protocol_error(raw_server: Callable[..., RawServer]) -> None:
    def garbage(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    with pytest.raises(openai.APIConnectionError) as info:
        post(raw_server(garbage).url)
    assert "malformed response head" in str(info.value.__cause__)


def test_read_timeout_is_an_openai_timeout(raw_server: Callable[..., RawServer]) -> None:
    release = threading.Event()

    def hang(sock: socket.socket) -> None:
        read_request(sock)
        release.wait(10)

    started = time.perf_counter()
    try:
        with pytest.raises(openai.APITimeoutError):
            post(raw_server(hang).url, timeout=0.3)
    finally:
        release.set()
    assert time.perf_counter() - started < 3


def test_refused_port_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(openai.APIConnectionError) as info:
        post(f"http://127.0.0.1:{port}/v1")
    assert isinstance(info.value.__cause__, httpx.ConnectError)


def test_interim_100_continue_is_skipped(raw_server: Callable[..., RawServer]) -> None:
    def interim(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" + ok())

    assert post(raw_server(interim).url) == [ANSWER]


def test_streamed_body_arrives_as_it_is_sent(raw_server: Callable[..., RawServer]) -> None:
    """An SSE stream is read lazily: the first event is seen before the server sends the next."""
    first_seen = threading.Event()

    def sse(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        for event in (b"data: one\n\n", b"data: two\n\n"):
            sock.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            if event.endswith(b"one\n\n"):
                assert first_seen.wait(5)
        sock.sendall(b"0\r\n\r\n")

    server = raw_server(sse)

    async def run() -> list[bytes]:
        async with httpx.AsyncClient(transport=LeanTransport()) as client:
            seen = []
            async with client.stream("GET", server.url + "/stream") as response:
                async for chunk in response.aiter_bytes():
                    seen.append(chunk)
                    first_seen.set()
            return seen

    assert asyncio.run(run()) == [b"data: one\n\n", b"data: two\n\n"]


def test_cancelled_request_closes_its_socket(raw_server: Callable[..., RawServer]) -> None:
    """Ctrl-C mid-request: the connection is closed (the server sees EOF), nothing leaks."""
    hung_up = threading.Event()

    def wait_for_hangup(sock: socket.socket) -> None:
        read_request(sock)
        sock.settimeout(5)
        if sock.recv(1) == b"":
            hung_up.set()

    server = raw_server(wait_for_hangup)

    async def run() -> None:
        client = make_client(server.url)
        task = asyncio.create_task(client.post("/chat/completions", cast_to=bytes, body={}))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.close()

    asyncio.run(run())
    assert hung_up.wait(5)


def test_pool_keeps_one_connection_per_concurrent_request(
    raw_server: Callable[..., RawServer],
) -> None:
    """At concurrency 4 over 40 requests, 4 connections carry everything."""

    def slow_keep_alive(sock: socket.socket) -> None:
        while read_request(sock):
            time.sleep(0.02)
            sock.sendall(ok())

    server = raw_server(slow_keep_alive)

    async def run() -> int:
        client = make_client(server.url)
        todo = iter(range(40))

        async def worker() -> int:
            return sum(
                [
                    json.loads(await client.post("/chat/completions", cast_to=bytes, body={}))
                    == ANSWER
                    for _ in todo
                ]
            )

        try:
            return sum(await asyncio.gather(*(worker() for _ in range(4))))
        finally:
            await client.close()

    assert asyncio.run(run()) == 40
    assert server.connections == 4

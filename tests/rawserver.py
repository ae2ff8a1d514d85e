"""A TCP server on 127.0.0.1 that answers with raw bytes: the shapes no HTTP library would send.

`RawServer(shape)` runs an asyncio server in a thread. For each connection it reads one request
(its head, and a body of the Content-Length it declares) unless `banner` is set, then plays the
steps `shape(path)` returns: bytes are written, a float sleeps that long, `HANG` waits until the
server stops, `RESET` aborts the connection (an RST), and the connection is closed at the end.
`/v1/models` answers a normal model list unless the shape says otherwise (`models=True`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

HANG = "hang"
RESET = "reset"
Step = bytes | float | str

MODELS = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()
CHAT = json.dumps(
    {"model": "fake-model", "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}
).encode()


def http(
    body: bytes, *, status: str = "200 OK", length: int | None = None, extra: str = ""
) -> bytes:
    """A response with a Content-Length of `length` (default: the body's true length)."""
    n = len(body) if length is None else length
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {n}\r\n{extra}"
    return head.encode() + b"\r\n" + body


class RawServer:
    """Answers every connection with `shape(path)`; `banner` bytes are sent before any read."""

    def __init__(
        self,
        shape: Callable[[str], Sequence[Step]],
        *,
        banner: bytes | None = None,
        models: bool = False,
    ) -> None:
        self.shape, self.banner, self.models = shape, banner, models
        self.connections = 0
        self._open: set[asyncio.StreamWriter] = set()
        self._seen: list[asyncio.StreamWriter] = []
        self._handlers: set[asyncio.Task[None]] = set()
        self._abort = False
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        # held while the loop closes, so a stop from another thread never schedules onto a
        # closed loop (call_soon_threadsafe raises RuntimeError there)
        self._closing = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> RawServer:
        self._thread.start()
        self._ready.wait(5)
        return self

    def kill(self) -> None:
        """Stop at once, as a killed server does: open connections reset, the port refused."""
        self._signal(abort=True)
        self._thread.join(5)

    def stop(self) -> None:
        self._signal(abort=False)
        self._thread.join(5)

    def __enter__(self) -> RawServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _signal(self, *, abort: bool) -> None:
        with self._closing:
            if self._stopped is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._begin_stop, abort)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        with self._closing:
            self._loop.close()

    async def _main(self) -> None:
        self._stopped = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopped.wait()
        await self._drain()

    def _begin_stop(self, abort: bool) -> None:
        """In the loop: accept nothing more, end the open connections (reset when `abort`), and
        wake every HANG step."""
        assert self._server is not None and self._stopped is not None
        self._abort = self._abort or abort
        for sock in self._server.sockets:
            self._loop.remove_reader(sock.fileno())  # the Server closes in _drain
        self._end_connections()
        self._stopped.set()

    def _end_connections(self) -> None:
        for writer in list(self._open):
            if self._abort:
                writer.transport.abort()
            elif not writer.is_closing():
                writer.close()

    async def _drain(self) -> None:
        """Close the port, then wait until every connection has ended and its socket is closed.
        The loop must not close before: a socket still open then is never closed, and its
        garbage collection warns (a ResourceWarning, an error under pytest's settings).

        A connection accepted in the loop turn before the stop is wrapped in its transport a
        turn later, by a task of asyncio's own; the Server closes only once those tasks are
        done (one that runs after the close fails an assertion in asyncio and drops its socket
        unclosed, Python 3.11). Their handlers see the stop and end the connection at once."""
        assert self._server is not None
        me = asyncio.current_task()
        while accepting := asyncio.all_tasks() - {me} - self._handlers:
            await asyncio.wait(accepting)
        self._server.close()  # the port refuses from now on
        while others := asyncio.all_tasks() - {me}:
            self._end_connections()
            _, pending = await asyncio.wait(others, timeout=1.0)
            for task in pending & self._handlers:  # a step still sleeping
                task.cancel()
        for writer in self._seen:
            writer.transport.abort()  # no-op when closed; a close still flushing ends now
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._open.add(writer)
        self._seen.append(writer)
        task = asyncio.current_task()
        assert task is not None and self._stopped is not None
        self._handlers.add(task)
        try:
            if self._stopped.is_set():  # accepted in the moment before the stop: ended too
                self._end_connections()
                return
            if self.banner is not None:
                writer.write(self.banner)
                await writer.drain()
                steps: Sequence[Step] = self.shape("")
            else:
                path = await _read_request(reader)
                if path is None:
                    return
                if path.endswith("/models") and not self.models:
                    steps = [http(MODELS)]
                else:
                    steps = self.shape(path)
            await self._play(steps, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._open.discard(writer)
            self._handlers.discard(task)
            if not writer.is_closing():
                writer.close()

    async def _play(self, steps: Sequence[Step], writer: asyncio.StreamWriter) -> None:
        assert self._stopped is not None
        for step in steps:
            if isinstance(step, bytes):
                writer.write(step)
                await writer.drain()
            elif isinstance(step, float | int):
                await asyncio.sleep(step)
            elif step == HANG:
                await self._stopped.wait()
            elif step == RESET:
                sock: Any = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return


async def _read_request(reader: asyncio.StreamReader) -> str | None:
    """The path of one request, its body read and dropped; None when the client left."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip() or 0)
    if length:
        await reader.readexactly(length)
    parts = lines[0].split(" ")
    return parts[1] if len(parts) > 1 else "/"

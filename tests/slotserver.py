"""A chat server on 127.0.0.1 with a fixed number of connection slots, as a small threaded server
(or a proxy with a connection cap) has: a connection holds a slot from accept to close, idle
keep-alive time included. Past the slots it either resets new connections (`mode="reset"`) or
leaves them waiting, unread, until a slot frees (`mode="queue"`).

    with SlotServer(slots=4, mode="queue") as server: ... server.base_url ...
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading

MODELS = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}).encode()


def _chat(n: int) -> bytes:
    return json.dumps(
        {
            "id": f"c{n}",
            "object": "chat.completion",
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        }
    ).encode()


class SlotServer:
    def __init__(self, *, slots: int = 4, mode: str = "reset", latency: float = 0.02) -> None:
        assert mode in ("reset", "queue")
        self.slots, self.mode, self.latency = slots, mode, latency
        self.port = 0
        self.served = 0
        self.resets = 0
        self.busy = 0  # connections holding a slot now
        self.most = 0  # the most that ever held one at once
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._stop: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> SlotServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._free = asyncio.Semaphore(self.slots)
        self._tasks: set[asyncio.Task] = set()
        server = await asyncio.start_server(self._track, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _track(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._conn(reader, writer)
        except asyncio.CancelledError:
            writer.close()
        finally:
            self._tasks.discard(task)

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "reset" and self._free.locked():
            self.resets += 1
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.close()
            return
        async with self._free:
            self.busy += 1
            self.most = max(self.most, self.busy)
            try:
                await self._requests(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                self.busy -= 1
                writer.close()

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Keep-alive: answer requests on this connection until the client closes it."""
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
            length = 0
            close = False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
                if name.strip().lower() == "connection" and value.strip().lower() == "close":
                    close = True
            if length:
                await reader.readexactly(length)
            if path.endswith("/models"):
                body = MODELS
            else:
                await asyncio.sleep(self.latency)
                self.served += 1
                body = _chat(self.served)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            if close:
                return

"""A lean HTTP/1.1 keep-alive transport under the openai client, for plain-http endpoints.

Why: scoring is many small requests to one local server. The default transport of openai's httpx
client (httpcore, h11 and anyio underneath) costs about 2 ms of CPU per request, more than the
rest of evalrun's per-item work, and at `--concurrency 32` against a 100 ms endpoint that CPU
alone made the request phase 1.8x its ideal. This transport speaks HTTP/1.1 straight on asyncio
streams: requests still go through `openai.AsyncOpenAI` (its request building, errors and status
handling are unchanged); only the last hop is ours.

What it does: one request per connection at a time, idle connections kept for reuse (one per
concurrent worker), bodies framed by Content-Length, chunked encoding, or the server closing the
connection (HTTP/1.0). Response bodies are read lazily, so streamed (SSE) answers still stream.
Timeouts come from httpx's per-request `timeout` extension and raise httpx's timeout errors,
which openai turns into `APITimeoutError`; socket failures raise httpx's network errors
(`APIConnectionError`). A reused idle connection that turns out to be closed before a byte of
the answer came back gets one retry on a fresh connection. https endpoints keep httpx's own
transport (see `client.make_client`); proxies from the environment still apply, since httpx
mounts its proxy transports in front of this one.

"httpx" below is whichever of httpx / httpx2 the installed openai builds on (the two share one
API), which is why openai is imported here as well as in client.py.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Awaitable
from types import ModuleType
from typing import Any, TypeVar

import openai


def _openai_http_library() -> ModuleType:
    """The httpx package the installed openai builds on: httpx2 (openai 3.x) or httpx (1.x, 2.x);
    the transport must speak that one's Request and Response types."""
    for cls in openai.DefaultAsyncHttpxClient.__mro__:
        if cls.__name__ == "AsyncClient":
            return importlib.import_module(cls.__module__.split(".")[0])
    raise ImportError("cannot tell which httpx the installed openai uses")  # pragma: no cover


httpx: Any = _openai_http_library()

T = TypeVar("T")
_NO_BODY_STATUSES = frozenset({204, 304})
_HEAD_LIMIT = 1 << 20  # the StreamReader buffer: a status line plus headers must fit


class _Conn:
    """One open TCP connection to the server."""

    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def usable(self) -> bool:
        """Still open on both sides (an idle connection the server hung up on is not)."""
        return not (self.reader.at_eof() or self.writer.transport.is_closing())

    def close(self) -> None:
        self.writer.close()


class LeanTransport(httpx.AsyncBaseTransport):  # type: ignore[misc]
    """HTTP/1.1 over asyncio streams with a keep-alive pool; http:// only."""

    def __init__(self, *, max_idle: int = 256) -> None:
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max_idle = max_idle

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"LeanTransport speaks http only, not {url.scheme}")
        timeouts = request.extensions.get("timeout") or {}
        key = (url.host, url.port or 80)
        data = _serialise(request, await request.aread())
        for retry_stale in (True, False):
            conn, reused = await self._acquire(key, timeouts.get("connect"))
            try:
                async with _deadline(timeouts.get("write"), httpx.WriteTimeout):
                    conn.writer.write(data)
                    await conn.writer.drain()
                async with _deadline(timeouts.get("read"), httpx.ReadTimeout):
                    head = await conn.reader.readuntil(b"\r\n\r\n")
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                conn.close()
                partial = getattr(exc, "partial", b"")
                if reused and retry_stale and not partial:
                    continue  # the server closed this idle connection just before we wrote
                kind = httpx.RemoteProtocolError if partial else httpx.ReadError
                raise kind(f"server closed the connection: {exc or type(exc).__name__}") from exc
            except asyncio.LimitOverrunError as exc:
                conn.close()
                raise httpx.RemoteProtocolError("response headers over 1 MiB") from exc
            except BaseException:
                conn.close()
                raise
            break
        try:
            version, status, reason, headers = _parse_head(head)
            while 100 <= status < 200 and status != 101:  # interim (100 Continue): skip it
                async with _deadline(timeouts.get("read"), httpx.ReadTimeout):
                    head = await conn.reader.readuntil(b"\r\n\r\n")
                version, status, reason, headers = _parse_head(head)
        except ValueError as exc:
            conn.close()
            raise httpx.RemoteProtocolError(f"malformed response head: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        body = _Body(
            self, conn, key, request.method, status, version, headers, timeouts.get("read")
        )
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": version, "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        for pool in self._idle.values():
            for conn in pool:
                conn.close()
        self._idle.clear()

    async def _acquire(self, key: tuple[str, int], timeout: float | None) -> tuple[_Conn, bool]:
        pool = self._idle.get(key)
        while pool:
            conn = pool.pop()
            if conn.usable():
                return conn, True
            conn.close()
        try:
            async with _deadline(timeout, httpx.ConnectTimeout):
                reader, writer = await asyncio.open_connection(*key, limit=_HEAD_LIMIT)
        except OSError as exc:
            raise httpx.ConnectError(
                f"cannot connect to {key[0]}:{key[1]}: {exc.strerror or exc}"
            ) from exc
        return _Conn(reader, writer), False

    def _release(self, key: tuple[str, int], conn: _Conn) -> None:
        pool = self._idle.setdefault(key, [])
        if len(pool) < self._max_idle and conn.usable():
            pool.append(conn)
        else:
            conn.close()


class _Body(httpx.AsyncByteStream):  # type: ignore[misc]
    """A response body read from the connection as it is iterated; the connection goes back to
    the pool once the body is read in full and both sides allow keep-alive."""

    def __init__(
        self,
        transport: LeanTransport,
        conn: _Conn,
        key: tuple[str, int],
        method: str,
        status: int,
        version: bytes,
        headers: list[tuple[bytes, bytes]],
        timeout: float | None,
    ) -> None:
        self._transport, self._conn, self._key, self._timeout = transport, conn, key, timeout
        fields = {name.lower(): value for name, value in headers}
        self._length: int | None = None
        self._chunked = b"chunked" in fields.get(b"transfer-encoding", b"").lower()
        if method == "HEAD" or status in _NO_BODY_STATUSES:
            self._length = 0
        elif not self._chunked and b"content-length" in fields:
            try:
                self._length = int(fields[b"content-length"])
            except ValueError:
                self._length = None  # unreadable length: read to the end of the connection
        connection = fields.get(b"connection", b"").lower()
        delimited = self._chunked or self._length is not None
        self._keep_alive = delimited and (
            b"keep-alive" in connection if version == b"HTTP/1.0" else b"close" not in connection
        )
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reader = self._conn.reader
        try:
            if self._chunked:
                while size := await self._read(_chunk_size(reader)):
                    yield (await self._read(reader.readexactly(size + 2)))[:-2]
                while await self._read(reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
            elif self._length is not None:
                if self._length:
                    yield await self._read(reader.readexactly(self._length))
            else:
                while chunk := await self._read(reader.read(65536)):
                    yield chunk
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise httpx.RemoteProtocolError(
                f"server closed the connection mid-body: {exc or type(exc).__name__}"
            ) from exc
        self._done = True

    async def _read(self, step: Awaitable[T]) -> T:
        """One read, under the read timeout (per read, as httpx does: a stream may be long)."""
        async with _deadline(self._timeout, httpx.ReadTimeout):
            return await step

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None  # type: ignore[assignment]
        if conn is None:
            return
        if self._done and self._keep_alive:
            self._transport._release(self._key, conn)
        else:
            conn.close()


async def _chunk_size(reader: asyncio.StreamReader) -> int:
    """The size from a chunked body's next size line (extensions ignored)."""
    line = await reader.readuntil(b"\r\n")
    try:
        return int(line.split(b";", 1)[0].strip(), 16)
    except ValueError as exc:
        raise httpx.RemoteProtocolError(f"bad chunk size line {line[:40]!r}") from exc


def _serialise(request: httpx.Request, body: bytes) -> bytes:
    """The request as bytes on the wire (httpx has already set Host and Content-Length)."""
    target = request.url.raw_path or b"/"
    lines = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    chunked = False
    for name, value in request.headers.raw:
        if name.lower() == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        lines += [name, b": ", value, b"\r\n"]
    lines.append(b"\r\n")
    if chunked:  # a streamed request body: it is in memory now, send it as one chunk
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
    lines.append(body)
    return b"".join(lines)


def _parse_head(head: bytes) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]]]:
    """(version, status, reason, headers) from a response head ending in a blank line."""
    status_line, _, rest = head[:-4].partition(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ValueError(f"status line {status_line[:60]!r}")
    headers = []
    for line in rest.split(b"\r\n") if rest else ():
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError(f"header line {line[:60]!r}")
        headers.append((name.strip(), value.strip()))
    return parts[0], int(parts[1]), parts[2] if len(parts) > 2 else b"", headers


class _deadline:
    """`asyncio.timeout` whose expiry raises the given httpx timeout error (None: no limit)."""

    __slots__ = ("_cm", "_error")

    def __init__(self, seconds: float | None, error: type[httpx.TimeoutException]) -> None:
        self._cm = asyncio.timeout(seconds)
        self._error = error

    async def __aenter__(self) -> None:
        await self._cm.__aenter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            await self._cm.__aexit__(exc_type, exc, tb)
        except TimeoutError as timeout:
            raise self._error("timed out") from timeout

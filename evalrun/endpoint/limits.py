"""A cap on how many bytes one response may bring, whatever transport is underneath.

An endpoint's body is untrusted: two 50 MB answers once took evalrun to 4.3 GB of memory and put
105 MB into items.jsonl. `CappedTransport` wraps any httpx async transport and stops reading a body
at `max_bytes` (at once when Content-Length already says more), raising `ResponseTooLarge`, which
the client turns into an item in error (kind `too_large`) that names the option to raise the cap.
gzip and deflate bodies are inflated here, counting the inflated bytes (a small compressed body
can inflate to gigabytes); one that does not inflate raises `BadEncoding`. Given an `Activity`
(activity.py), the wrapper also tells it when each request goes out, hears a byte, and is over.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from functools import lru_cache
from types import ModuleType
from typing import Any

from evalrun.endpoint.activity import Activity
from evalrun.endpoint.failures import protocol_errors

DEFAULT_MAX_RESPONSE_MB = 8.0


class ResponseTooLarge(Exception):
    """A response body went past the cap."""

    def __init__(self, limit: int, seen: int) -> None:
        super().__init__(f"response body over {limit:,} bytes (at least {seen:,})")
        self.limit = limit
        self.seen = seen


class BadEncoding(Exception):
    """A body that says it is gzip or deflate but does not inflate."""


_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}


def http_library() -> ModuleType:
    """The one httpx flavour evalrun speaks: httpx2, what openai 3.x builds on (endpoint/http.py)."""
    import httpx2

    return httpx2


def capped_transport(inner: Any, max_bytes: int, activity: Activity | None = None) -> Any:
    """`inner` (an async transport of `http_library()`), with every body capped at `max_bytes`
    and every request's traffic told to `activity`."""
    return _capped_class(http_library())(inner, max_bytes, activity or Activity())


@lru_cache(maxsize=2)
def _capped_class(httpx: ModuleType) -> Any:
    class CappedStream(httpx.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(
            self, inner: Any, limit: int, encoding: str, activity: Activity, ok: bool
        ) -> None:
            self._inner = inner
            self._ok = ok  # a 2xx: its whole body is an answer
            self._limit = limit
            self._inflate = zlib.decompressobj(_WBITS[encoding]) if encoding in _WBITS else None
            self._encoding = encoding
            self._activity: Activity | None = activity  # None once the request is over

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for raw in _protocol_checked(httpx, self._inner):
                chunk = (
                    raw if self._inflate is None else self._inflated(raw, self._limit - seen + 1)
                )
                if self._activity is not None:
                    self._activity.heard()
                seen += len(chunk)
                if seen > self._limit:
                    raise ResponseTooLarge(self._limit, seen)
                yield chunk
            if self._activity is not None and self._ok:
                self._activity.answered()  # the whole body of an answer

        def _inflated(self, raw: bytes, room: int) -> bytes:
            assert self._inflate is not None
            try:
                return self._inflate.decompress(raw, room)
            except zlib.error as exc:
                raise BadEncoding(f"a {self._encoding} body that does not inflate ({exc})") from exc

        async def aclose(self) -> None:
            if self._activity is not None:
                self._activity.end()
                self._activity = None
            await self._inner.aclose()

    class CappedTransport(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, max_bytes: int, activity: Activity) -> None:
            self._inner = inner
            self.max_bytes = max_bytes
            self.activity = activity

        async def handle_async_request(self, request: Any) -> Any:
            self.activity.begin()
            try:
                response = await self._inner.handle_async_request(request)
            except protocol_errors() as exc:
                self.activity.end()
                raise httpx.RemoteProtocolError(str(exc), request=request) from exc
            except BaseException:  # a timeout or a cancel too: the request is over, then re-raised
                self.activity.end()
                raise
            self.activity.heard()  # the status line and headers
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                self.activity.end()
                await response.aclose()
                raise ResponseTooLarge(self.max_bytes, int(declared))
            encoding = response.headers.get("content-encoding", "").strip().lower()
            headers = response.headers
            if encoding in _WBITS:  # inflated here, under the cap; httpx must not inflate it again
                drop = ("content-encoding", "content-length")
                headers = httpx.Headers(
                    [(k, v) for k, v in headers.multi_items() if k.lower() not in drop]
                )
            return httpx.Response(
                status_code=response.status_code,
                headers=headers,
                stream=CappedStream(
                    response.stream,
                    self.max_bytes,
                    encoding,
                    self.activity,
                    200 <= response.status_code < 300,
                ),
                extensions=response.extensions,
                request=request,
            )

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedTransport


async def _protocol_checked(httpx: ModuleType, stream: Any) -> AsyncIterator[bytes]:
    """`stream`'s chunks, a malformed reply raised as httpx's RemoteProtocolError (failures.py:
    the transport lets aiohttp's own errors escape, past every `except` of the SDK)."""
    try:
        async for chunk in stream:
            yield chunk
    except protocol_errors() as exc:
        raise httpx.RemoteProtocolError(str(exc)) from exc

"""Every exception the HTTP stack can raise ends as a classified failure with a one-line message.

evalrun's requests go openai -> httpx2 -> the SDK's aiohttp transport (endpoint/http.py). This
walks both libraries' exception trees: every class is either reached here by a real shape (a raw
asyncio server on 127.0.0.1, a refused port, a full listen backlog, a proxy variable, a TLS server
with an untrusted certificate) and found in the failure's chain of causes, with the kind a user
must see, or listed in UNREACHABLE with the reason evalrun cannot meet it. A class a new version
of either library adds fails the accounting test until it is placed.

The launcher's readiness polls (a sync httpx2 client) catch `httpx2.HTTPError` whole: every class
under it means "not ready yet" there, so only the async path needs a class-by-class map.
"""

from __future__ import annotations

import inspect
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
import aiohttp.http_exceptions as http_exc
import httpx2
import pytest
from fakeserver import FakeServer
from rawserver import CHAT, HANG, RESET, RawServer, http

from evalrun.base.errors import EndpointError, UsageError
from evalrun.endpoint.client import (
    RequestFailed,
    RetryPolicy,
    chat_attempt,
    list_models,
    make_client,
    run_sync,
)
from evalrun.endpoint.failures import describe_failure
from evalrun.endpoint.http import HttpOptions, async_client
from evalrun.endpoint.options import normalise_endpoint

PARAMS = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@dataclass
class Seen:
    """What a scenario ended in: the kind and line a user sees, and every exception behind it."""

    kind: str
    message: str
    chain: list[BaseException]


def causes(exc: BaseException) -> list[BaseException]:
    """`exc` and everything behind it (causes, and contexts even when suppressed)."""
    out: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in out:
        out.append(seen)
        seen = seen.__cause__ or seen.__context__
    return out


def ask(url: str, timeout: float = 3.0, proxies: bool = False) -> Seen:
    """One try of a chat request through the real stack; the RequestFailed it ends in."""

    async def go() -> Seen:
        client = make_client(url, http=HttpOptions(timeout=timeout, proxies=proxies))
        try:
            with pytest.raises(RequestFailed) as info:
                await chat_attempt(client, PARAMS, retry=RetryPolicy(attempts=1))
            return Seen(info.value.kind, info.value.message, causes(info.value))
        finally:
            await client.close()

    return run_sync(go)


def models_check(url: str, timeout: float) -> Seen:
    """The /v1/models check a run starts with (no item deadline around it: the transport's own
    timeouts are what end it), described the way the client describes it."""

    async def go() -> Seen:
        client = make_client(url, http=HttpOptions(timeout=timeout))
        try:
            with pytest.raises(EndpointError) as info:
                await list_models(client, url)
            kind, _ = describe_failure(info.value.__cause__ or info.value)
            return Seen(kind, info.value.message, causes(info.value))
        finally:
            await client.close()

    return run_sync(go)


def raw(*steps: bytes | float | str, **kw: object) -> Callable[[], Seen]:
    def run() -> Seen:
        with RawServer(lambda path: list(steps), **kw) as server:  # type: ignore[arg-type]
            return ask(server.base_url)

    return run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)


def refused() -> Seen:
    return ask(f"http://127.0.0.1:{free_port()}/v1")


def unresolvable() -> Seen:
    return ask("http://no-such-host.invalid:8000/v1")  # .invalid never resolves (RFC 6761)


def untrusted_certificate() -> Seen:
    trustme = pytest.importorskip("trustme")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    trustme.CA().issue_cert("127.0.0.1").configure_cert(ctx)
    server = FakeServer().start(tls=ctx)
    try:
        return ask(server.base_url)
    finally:
        server.stop()


def https_to_an_http_port() -> Seen:
    with FakeServer() as server:  # http.server answers the TLS hello with a 400 page
        return ask(server.base_url.replace("http://", "https://"))


def proxy_refused() -> Seen:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
        return ask("http://example.invalid:8000/v1", proxies=True)


def proxy_forbids_connect() -> Seen:
    with RawServer(lambda path: [b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"]) as px:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HTTPS_PROXY", f"http://127.0.0.1:{px.port}")
            return ask("https://example.invalid/v1", proxies=True)


def proxy_with_a_bad_port() -> Seen:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HTTP_PROXY", "http://127.0.0.1:99999")
        return ask("http://example.invalid:8000/v1", proxies=True)


def no_host_through_the_api() -> Seen:
    return ask("http://:8000/v1")  # make_client takes what a Python caller gives it


def silent_models_check() -> Seen:
    with RawServer(lambda path: [HANG], models=True) as server:
        return models_check(server.base_url, timeout=0.5)


def full_backlog_models_check() -> Seen:
    # A listener that never accepts: once its backlog is full the kernel drops further SYNs,
    # so connecting hangs until aiohttp's connect timeout ends it.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fill = [socket.socket() for _ in range(4)]
        try:
            for s in fill:
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", port))
                except BlockingIOError:
                    pass
            return models_check(f"http://127.0.0.1:{port}/v1", timeout=0.5)
        finally:
            for s in fill:
                s.close()


def redirect_loop() -> Seen:
    loop = "Location: /v1/chat/completions\r\nConnection: close\r\n"
    return raw(http(b"", status="307 Temporary Redirect", extra=loop))()


REDIRECT_FTP = http(b"", status="307 Temporary Redirect", extra="Location: ftp://127.0.0.1/x\r\n")
REDIRECT_BAD = http(b"", status="307 Temporary Redirect", extra="Location: http://[::1/x\r\n")
GZIP_TWICE = http(b"not compressed at all", extra="Content-Encoding: gzip, gzip\r\n")
TOO_MANY_HEADERS = (
    b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(200)) + b"\r\n"
)

# name -> (how to meet it, the kinds a user may see)
SCENARIOS: dict[str, tuple[Callable[[], Seen], set[str]]] = {
    "refused": (refused, {"connect"}),
    "unresolvable": (unresolvable, {"connect"}),
    "untrusted_certificate": (untrusted_certificate, {"tls"}),
    "https_to_an_http_port": (https_to_an_http_port, {"tls"}),
    "proxy_refused": (proxy_refused, {"connect"}),
    "proxy_forbids_connect": (proxy_forbids_connect, {"connect"}),
    "proxy_with_a_bad_port": (proxy_with_a_bad_port, {"connect"}),
    "no_host_through_the_api": (no_host_through_the_api, {"connect"}),
    "reset_after_the_request": (raw(RESET), {"connect"}),
    "closed_without_an_answer": (raw(), {"connect"}),
    "status_line_garbage": (raw(b"HTTP/1.1 abc\r\n\r\n"), {"bad_response"}),
    "header_without_colon": (raw(b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n"), {"bad_response"}),
    "too_many_headers": (raw(TOO_MANY_HEADERS), {"bad_response"}),
    "nul_in_a_header": (
        raw(b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 2\r\n\r\n{}"),
        {"bad_response"},
    ),
    "header_line_too_long": (
        raw(b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n"),
        {"bad_response"},
    ),
    "body_short_of_content_length": (raw(http(CHAT, length=len(CHAT) + 50)), {"bad_response"}),
    "chunked_body_cut": (
        raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"),
        {"bad_response"},
    ),
    "redirect_to_ftp": (raw(REDIRECT_FTP), {"bad_response"}),
    "redirect_to_a_bad_url": (raw(REDIRECT_BAD), {"bad_response"}),
    "redirect_loop": (redirect_loop, {"bad_response"}),
    "gzip_twice_over_plain_bytes": (raw(GZIP_TWICE), {"bad_response"}),
    "http_500": (raw(http(b'{"error": "x"}', status="500 Internal Server Error")), {"http"}),
    "silent_models_check": (silent_models_check, {"timeout"}),
    "full_backlog_models_check": (full_backlog_models_check, {"timeout"}),
}

# class -> the scenario that meets it (its chain holds an instance)
REACHED: dict[type[BaseException], str] = {
    aiohttp.ClientConnectorError: "refused",
    aiohttp.ClientConnectorDNSError: "unresolvable",
    aiohttp.ClientConnectorCertificateError: "untrusted_certificate",
    aiohttp.ClientConnectorSSLError: "https_to_an_http_port",
    aiohttp.ClientProxyConnectionError: "proxy_refused",
    aiohttp.ClientHttpProxyError: "proxy_forbids_connect",
    aiohttp.InvalidURL: "proxy_with_a_bad_port",
    aiohttp.InvalidUrlClientError: "no_host_through_the_api",
    aiohttp.ClientOSError: "reset_after_the_request",
    aiohttp.ServerDisconnectedError: "closed_without_an_answer",
    aiohttp.ClientResponseError: "status_line_garbage",
    aiohttp.ClientPayloadError: "body_short_of_content_length",
    aiohttp.NonHttpUrlClientError: "redirect_to_ftp",
    aiohttp.SocketTimeoutError: "silent_models_check",
    aiohttp.ConnectionTimeoutError: "full_backlog_models_check",
    http_exc.HttpProcessingError: "status_line_garbage",
    http_exc.BadStatusLine: "status_line_garbage",
    http_exc.BadHttpMessage: "header_without_colon",
    http_exc.InvalidHeader: "nul_in_a_header",
    http_exc.LineTooLong: "header_line_too_long",
    http_exc.ContentLengthError: "body_short_of_content_length",
    http_exc.TransferEncodingError: "chunked_body_cut",
    httpx2.ConnectTimeout: "refused",  # the SDK's transport maps every connection error here
    httpx2.ProxyError: "proxy_forbids_connect",
    httpx2.RemoteProtocolError: "status_line_garbage",  # limits.py, for aiohttp's raw errors
    httpx2.ReadError: "body_short_of_content_length",
    httpx2.UnsupportedProtocol: "redirect_to_ftp",
    httpx2.InvalidURL: "redirect_to_a_bad_url",
    httpx2.TooManyRedirects: "redirect_loop",
    httpx2.DecodingError: "gzip_twice_over_plain_bytes",
    httpx2.HTTPStatusError: "http_500",  # the SDK turns it into APIStatusError: kind http
    httpx2.ReadTimeout: "silent_models_check",
    httpx2.TimeoutException: "silent_models_check",
}

_REDIRECTS = "the SDK's transport passes allow_redirects=False: httpx2 follows redirects itself"
_REQUEST_SIDE = "raised parsing a request: aiohttp's server side, never its client"
_SYNC_ONLY = "httpcore2 raises it on the sync path only (readiness polls catch HTTPError whole)"
_BASE = "a base class: only its subclasses are raised"
UNREACHABLE: dict[type[BaseException], str] = {
    aiohttp.ClientError: _BASE,
    aiohttp.ClientConnectionError: "raised bare only for a connection lost while closing; "
    "the requests see its subclasses",
    aiohttp.ServerConnectionError: _BASE,
    aiohttp.ClientSSLError: _BASE,
    aiohttp.ServerTimeoutError: "raised bare only by aiohttp's websocket heartbeat",
    aiohttp.client_exceptions.UnixClientConnectorError: "evalrun never connects over a Unix socket",
    aiohttp.ServerFingerprintMismatch: "evalrun pins no certificate fingerprint",
    aiohttp.ClientConnectionResetError: "a race (a pooled connection the server closes as the "
    "next request is written); a ConnectionResetError: see the constructed test",
    aiohttp.UploadAbortedError: "a race (the connection lost while a body is still being "
    "sent); see the constructed test",
    aiohttp.ContentTypeError: "raised by ClientResponse.json(); the transport reads bytes",
    aiohttp.TooManyRedirects: _REDIRECTS,
    aiohttp.RedirectClientError: _REDIRECTS,
    aiohttp.InvalidUrlRedirectClientError: _REDIRECTS,
    aiohttp.NonHttpUrlRedirectClientError: _REDIRECTS,
    aiohttp.WSServerHandshakeError: "websockets only",
    http_exc.BadHttpMethod: _REQUEST_SIDE,
    http_exc.HttpBadRequest: _REQUEST_SIDE,
    http_exc.InvalidURLError: _REQUEST_SIDE,
    http_exc.PayloadEncodingError: _BASE,
    http_exc.ContentEncodingError: "aiohttp's decompression is off (auto_decompress=False); "
    "limits.py inflates, and a body that does not inflate is BadEncoding",
    http_exc.DecompressSizeError: "aiohttp's decompression is off (auto_decompress=False)",
    httpx2.HTTPError: _BASE,
    httpx2.RequestError: _BASE,
    httpx2.TransportError: _BASE,
    httpx2.NetworkError: _BASE,
    httpx2.ProtocolError: _BASE,
    httpx2.ConnectError: "the SDK's transport maps a failed connect to ConnectTimeout; "
    + _SYNC_ONLY,
    httpx2.WriteError: "the SDK's transport maps a failed write to ConnectTimeout; " + _SYNC_ONLY,
    httpx2.CloseError: _SYNC_ONLY,
    httpx2.LocalProtocolError: "a request h11 refuses to send: evalrun's headers are checked "
    "first (check_headers: UsageError); " + _SYNC_ONLY,
    httpx2.PoolTimeout: "the pool holds one connection per request in flight; " + _SYNC_ONLY,
    httpx2.WriteTimeout: "aiohttp has no write timeout; " + _SYNC_ONLY,
    httpx2.SSEError: "httpx2's SSE reader; evalrun parses server-sent events itself (slope)",
    httpx2.CookieConflict: "raised reading cookies; evalrun reads none",
    httpx2.StreamError: _BASE,
    httpx2.StreamConsumed: "a caller reading a stream twice: evalrun reads each body once",
    httpx2.StreamClosed: "a caller reading a closed stream: evalrun reads each body once",
    httpx2.ResponseNotRead: "a caller using .content before reading: the SDK reads first",
    httpx2.RequestNotRead: "caught inside the SDK's transport (it sends the stream instead)",
}


def walk(*roots: type[BaseException]) -> set[type[BaseException]]:
    out: set[type[BaseException]] = set()
    todo = list(roots)
    while todo:
        cls = todo.pop()
        if cls not in out:
            out.add(cls)
            todo.extend(cls.__subclasses__())
    return out


def trees() -> set[type[BaseException]]:
    """Every exception class of aiohttp's client and parser and of httpx2."""
    found = walk(aiohttp.ClientError, http_exc.HttpProcessingError, httpx2.HTTPError)
    for _, obj in inspect.getmembers(httpx2, inspect.isclass):
        if issubclass(obj, Exception):
            found |= walk(obj)
    return {c for c in found if c.__module__.split(".")[0] in ("aiohttp", "httpx2")}


def test_every_exception_class_is_accounted_for():
    classes = trees()
    assert not set(REACHED) & set(UNREACHABLE)
    missing = sorted(c.__qualname__ for c in classes - set(REACHED) - set(UNREACHABLE))
    assert not missing, f"place these in REACHED (with a scenario) or UNREACHABLE: {missing}"
    stale = sorted(c.__qualname__ for c in (set(REACHED) | set(UNREACHABLE)) - classes)
    assert not stale, stale
    assert set(REACHED.values()) <= set(SCENARIOS)


_seen: dict[str, Seen] = {}


def met(name: str) -> Seen:
    if name not in _seen:
        _seen[name] = SCENARIOS[name][0]()
    return _seen[name]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_is_a_classified_one_line_failure(name):
    seen = met(name)
    assert seen.kind in SCENARIOS[name][1], (seen.kind, seen.message)
    assert "\n" not in seen.message and len(seen.message) < 400, seen.message
    assert "Traceback" not in seen.message


@pytest.mark.parametrize(
    "cls", sorted(REACHED, key=lambda c: c.__qualname__), ids=lambda c: c.__qualname__
)
def test_each_reachable_class_is_met_by_its_scenario(cls):
    seen = met(REACHED[cls])
    assert any(isinstance(e, cls) for e in seen.chain), [type(e).__name__ for e in seen.chain]


@pytest.mark.parametrize(
    ("exc", "wrapper"),
    [
        # a ClientConnectionError: the SDK's transport raises it as ConnectTimeout
        (aiohttp.ClientConnectionResetError("Cannot write to closing transport"), "ConnectTimeout"),
        # outside the SDK's map: limits.py raises it as RemoteProtocolError
        (aiohttp.UploadAbortedError("The request body was not fully sent"), "RemoteProtocolError"),
    ],
    ids=lambda x: x if isinstance(x, str) else type(x).__name__,
)
def test_the_racy_ones_are_connection_failures(exc, wrapper):
    wrapped = getattr(httpx2, wrapper)(str(exc))
    wrapped.__cause__ = exc
    kind, message = describe_failure(wrapped)
    assert kind == "connect" and "\n" not in message, (kind, message)


def test_the_proxy_failures_name_the_proxy():
    assert "cannot reach the proxy" in met("proxy_refused").message
    assert "NO_PROXY" in met("proxy_refused").message
    assert "the proxy answered HTTP 403" in met("proxy_forbids_connect").message


@pytest.mark.parametrize(
    "url",
    ["http://[::1:8000/v1", "http://127.0.0.1:8000/v1\x01", "http://:8000"],
)
def test_an_endpoint_the_stack_cannot_ask_is_a_usage_error(url):
    with pytest.raises(UsageError, match="--endpoint"):
        normalise_endpoint(url)


@pytest.mark.parametrize("value", ["ftp://127.0.0.1:1", "http://[::1"])
def test_a_proxy_variable_the_stack_cannot_use_is_a_usage_error(monkeypatch, value):
    monkeypatch.setenv("HTTP_PROXY", value)
    with pytest.raises(UsageError, match="proxy variable"):
        async_client("http://127.0.0.1:1/v1", HttpOptions())


@pytest.mark.parametrize("header", [{"X": "a\nb"}, {"X\r": "a"}, {"X": "caf\u00e9"}, {"X": "\x00"}])
def test_a_header_http_cannot_carry_is_a_usage_error(header):
    with pytest.raises(UsageError, match="--header"):
        make_client("http://127.0.0.1:1/v1", headers=header)

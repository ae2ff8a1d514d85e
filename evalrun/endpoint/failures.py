"""Every way a request can fail below HTTP, as one classified failure with a one-line message.

A request goes openai -> httpx2 -> the SDK's vendored aiohttp transport. That transport maps
aiohttp's connection errors onto httpx2's tree (some oddly: a refused connection or a server that
hung up becomes `ConnectTimeout`), and lets the rest escape raw: a reply that is not HTTP (an SSH
banner, a status line of garbage, a body past its Content-Length read as the next status line)
comes out as `aiohttp.ClientResponseError`, outside every `except` the SDK has. `protocol_errors`
names those, so the transport wrapper (limits.py) can raise them as httpx2's
`RemoteProtocolError` and the SDK reports them like any other connection failure.

`describe_failure` then reads the whole exception chain and names the failure by its root, the
table below; `kind` is one of the client's classified failures:

    ssl.SSLCertVerificationError          tls           certificate not trusted: --ca-bundle
    ssl.SSLError                          tls           handshake failed: is the endpoint https?
    ClientProxyConnectionError /
      ClientHttpProxyError                connect       the proxy is unreachable or refused:
                                                        check the *_PROXY variables, NO_PROXY
    ConnectionRefusedError                connect       nothing listens on host:port
    socket.gaierror (ClientConnectorDNS)  connect       the host name does not resolve
    InvalidURL / UnsupportedProtocol      connect       the URL cannot be asked (bad port, scheme)
    aiohttp.ServerDisconnectedError       connect       the server closed without an answer
    aiohttp.UploadAbortedError            connect       lost while the request was being sent
    ConnectionResetError / BrokenPipe     connect       the server reset the connection
    NonHttpUrlClientError                 bad_response  a redirect to a URL that is not http(s)
    httpx2 RemoteProtocolError,
      DecodingError, TooManyRedirects     bad_response  a bad redirect, a body that does not
                                                        decode as its Content-Encoding, a loop
    HttpProcessingError: bad status line,
      header, chunk size, line too long   bad_response  the reply is not valid HTTP
    ContentLengthError / TransferEncoding
      / ClientPayloadError                bad_response  the body ended before its declared length
    TimeoutError (aiohttp's socket/
      connect timeouts, httpx2's)         timeout       no answer in time
    any other OSError                     connect       its strerror
    anything else from the transport      connect       its first line

Of evalrun, only text_safety is imported here (the messages show server bytes).
"""

from __future__ import annotations

import socket
import ssl
from functools import lru_cache

_LIMIT = 200


@lru_cache(maxsize=1)
def protocol_errors() -> tuple[type[BaseException], ...]:
    """The aiohttp errors the vendored transport lets escape unmapped (its map covers
    ClientConnectionError, ClientPayloadError, proxy and URL errors; ClientResponseError, which
    carries every malformed reply, and a parser error raised bare are left out)."""
    import aiohttp
    import aiohttp.http_exceptions

    return (aiohttp.ClientError, aiohttp.http_exceptions.HttpProcessingError)


def chain_of(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it, outermost first: each `__cause__`, else an unsuppressed
    `__context__` (the exception being handled when it was raised)."""
    out: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in out and len(out) < 32:
        out.append(seen)
        nxt = seen.__cause__
        if nxt is None and not seen.__suppress_context__:
            nxt = seen.__context__
        seen = nxt
    return out


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """(kind, one line) for a request that got no usable HTTP answer: kind is `tls`, `connect`,
    `bad_response` (the server sent something that is not HTTP) or `timeout`."""
    chain = chain_of(exc)
    for err in chain:
        cert = getattr(err, "certificate_error", None)  # aiohttp keeps the ssl error here
        if isinstance(cert, ssl.SSLCertVerificationError):
            err = cert
        if isinstance(err, ssl.SSLCertVerificationError):
            why = err.verify_message or str(err)
            return "tls", (
                f"TLS certificate not trusted ({_flat(why)}); pass --ca-bundle PATH with the CA "
                "that signed it (or set SSL_CERT_FILE), or --insecure to skip the check"
            )
        if isinstance(err, ssl.SSLError):
            return "tls", (
                f"TLS handshake failed ({_flat(str(getattr(err, 'reason', None) or err))}); is the endpoint "
                "https? check the scheme of --endpoint"
            )
    return _by_root(chain)


def _by_root(chain: list[BaseException]) -> tuple[str, str]:
    """The table of the module docstring, most specific rule first."""
    import aiohttp
    import aiohttp.http_exceptions as http_exc
    import httpx2

    where = _address(chain)
    for err in chain:
        if isinstance(err, aiohttp.ClientHttpProxyError):
            return "connect", (
                f"the proxy answered HTTP {err.status} ({_flat(str(err.message))}); {_PROXY_HINT}"
            )
        if isinstance(err, aiohttp.ClientProxyConnectionError):
            cause = err.os_error
            refused = isinstance(cause, ConnectionRefusedError)
            why = "connection refused" if refused else _flat(cause.strerror or str(cause))
            return "connect", f"cannot reach the proxy{where} ({why}); {_PROXY_HINT}"
    for err in chain:
        if isinstance(err, ConnectionRefusedError):
            return "connect", f"connection refused{where} (nothing listens there)"
        if isinstance(err, socket.gaierror):
            return "connect", f"cannot resolve the host{where} ({_flat(err.strerror or str(err))})"
    for err in chain:
        if isinstance(err, aiohttp.NonHttpUrlClientError):  # --endpoint is http(s): a redirect
            return "bad_response", (
                f"the server redirected to {_flat(str(err))!r}, not an http(s) URL"
            )
        if isinstance(err, (aiohttp.InvalidURL, ValueError)) and "port" in str(err).lower():
            return "connect", f"invalid URL ({_flat(str(err))}); check --endpoint {_OR_PROXY}"
        if isinstance(err, aiohttp.InvalidURL):
            return "connect", f"invalid URL {_flat(str(err))!r}; check --endpoint {_OR_PROXY}"
    for err in chain:
        if isinstance(err, http_exc.ContentLengthError | http_exc.TransferEncodingError):
            return "bad_response", (
                f"the server ended the body before its declared length ({_parser_text(err)})"
            )
        if isinstance(err, http_exc.HttpProcessingError):
            return "bad_response", (f"the server's reply is not valid HTTP ({_parser_text(err)})")
    for err in chain:
        if isinstance(err, aiohttp.ClientPayloadError):
            return "bad_response", f"the server sent a broken body ({_flat(str(err))})"
        if isinstance(err, aiohttp.ServerDisconnectedError):
            return "connect", "the server closed the connection without an answer"
        if isinstance(err, aiohttp.UploadAbortedError):
            return "connect", "the connection was lost while the request was being sent"
        if isinstance(err, ConnectionResetError | BrokenPipeError):
            return "connect", "the server reset the connection"
    for err in chain:
        if isinstance(err, httpx2.TooManyRedirects):
            return "bad_response", "the server redirects in a loop; point --endpoint at the server"
        if isinstance(err, httpx2.DecodingError):
            return "bad_response", (
                f"the body does not decode as its Content-Encoding says ({_flat(str(err))})"
            )
        if isinstance(err, httpx2.RemoteProtocolError):
            return "bad_response", f"the server's reply is not valid HTTP ({_flat(str(err))})"
    if any(isinstance(e, TimeoutError) or type(e).__name__.endswith("Timeout") for e in chain):
        return "timeout", "no answer from the server in time"
    root = chain[-1]
    if isinstance(root, OSError) and root.strerror:
        return "connect", _flat(root.strerror) + where
    return "connect", _flat(str(root) or type(root).__name__)


_OR_PROXY = "(and any HTTP_PROXY / HTTPS_PROXY / ALL_PROXY)"
_PROXY_HINT = "check HTTP_PROXY / HTTPS_PROXY / ALL_PROXY, or list the endpoint's host in NO_PROXY"


def refused(exc: BaseException) -> bool:
    """Whether a failure was a refused connection (nothing listens: the server is gone)."""
    return any(isinstance(e, ConnectionRefusedError) for e in chain_of(exc))


def _address(chain: list[BaseException]) -> str:
    """' at host:port' when an aiohttp connector error in the chain names them."""
    for err in chain:
        host, port = getattr(err, "host", None), getattr(err, "port", None)
        if isinstance(host, str) and isinstance(port, int):
            return f" at {host}:{port}"
    return ""


def _parser_text(err: BaseException) -> str:
    """aiohttp's parser message (several indented lines with a caret) on one line."""
    message = getattr(err, "message", "") or str(err)
    parts = [p.strip() for p in str(message).splitlines()]
    return _flat(" ".join(p for p in parts if p and set(p) != {"^"}))


def _flat(text: str) -> str:
    """One line, control characters shown as escapes, at most _LIMIT characters."""
    from evalrun.base.text_safety import one_line

    return one_line(" ".join(text.split()), _LIMIT)

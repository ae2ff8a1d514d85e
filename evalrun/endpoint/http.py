"""The one HTTP stack evalrun speaks: httpx2 (what the openai SDK builds on), with the SDK's aiohttp
transport for the async side.

Every request evalrun sends goes through a client made here: scoring (under `openai.AsyncOpenAI`),
slope's streamed requests and the launcher's readiness polls (a sync `httpx2.Client`). So proxies
(`HTTP(S)_PROXY`, `ALL_PROXY`, `NO_PROXY`) apply as httpx2 applies them for the SDK, TLS follows
one rule (`--ca-bundle PATH`, else `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the system store;
`--insecure` turns verification off), and connection pools are bounded by the concurrency asked
for. `describe_failure` (failures.py) names each failure below HTTP by its root cause.
"""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalrun.base.errors import UsageError
from evalrun.endpoint.activity import Activity
from evalrun.endpoint.failures import describe_failure, refused
from evalrun.endpoint.limits import DEFAULT_MAX_RESPONSE_MB

if TYPE_CHECKING:
    import httpx2

__all__ = ["HttpOptions", "async_client", "describe_failure", "refused", "sync_client"]

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")


@dataclass(frozen=True)
class HttpOptions:
    """How to reach an endpoint: timeouts, pool size, certificate checks."""

    timeout: float = 120.0  # seconds an item may take: every try and wait (the client's deadline)
    concurrency: int = 16  # connections kept: one per request in flight
    ca_bundle: str | None = None  # PEM file (or folder) of CAs to trust instead of the system's
    insecure: bool = False  # do not verify the server's certificate at all
    proxies: bool = True  # honour HTTP(S)_PROXY / NO_PROXY (off for servers evalrun booted itself)
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB  # a body past this is an item in error

    def __post_init__(self) -> None:
        if not 0 < self.timeout < float("inf"):  # NaN fails too
            raise UsageError(
                f"--timeout takes seconds above 0, got {self.timeout:g}; pass e.g. --timeout 120"
            )

    def verify(self, base_url: str) -> ssl.SSLContext | bool:
        """The `verify=` for httpx2: False when insecure, or when no TLS can be involved (a plain
        http endpoint and no proxy variable: loading the CA store costs ~0.1 s per client)."""
        if self.insecure:
            return False
        if self.ca_bundle:
            path = Path(self.ca_bundle).expanduser()
            try:
                if path.is_dir():
                    return ssl.create_default_context(capath=str(path))
                return ssl.create_default_context(cafile=str(path))
            except (OSError, ssl.SSLError) as exc:
                raise UsageError(
                    f"--ca-bundle {self.ca_bundle}: not a readable PEM certificate file or folder "
                    f"({exc}); pass the CA that signed the endpoint's certificate"
                ) from exc
        if base_url.startswith("http://") and not (self.proxies and _proxy_env()):
            return False
        return True  # httpx2: SSL_CERT_FILE / SSL_CERT_DIR, else the system store


def _proxy_env() -> bool:
    return any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARS)


def _limits(options: HttpOptions) -> httpx2.Limits:
    import httpx2

    n = max(1, options.concurrency)
    # An idle connection is closed within a second: a run's next request takes a
    # connection back at once, and one left idle (the run's tail, fewer items than
    # connections) would hold a slot of a server that caps its connections, while requests
    # queued behind it wait (activity.py).
    return httpx2.Limits(
        max_connections=n, max_keepalive_connections=n, keepalive_expiry=KEEPALIVE_S
    )


KEEPALIVE_S = 0.25


def async_client(
    base_url: str, options: HttpOptions, activity: Activity | None = None
) -> httpx2.AsyncClient:
    """An async client on the SDK's aiohttp transport (its choice for high concurrency), every
    body capped at `max_response_mb` (limits.py), the proxy transports included; its traffic
    told to `activity` (how long the server has been silent)."""
    import openai

    from evalrun.endpoint.limits import capped_transport

    max_bytes = int(options.max_response_mb * 1024 * 1024)
    activity = activity or Activity()

    class Capped(openai.DefaultAioHttpClient):  # type: ignore[misc,valid-type]
        # The two hooks httpx2 builds its transports with (the SDK's aiohttp client overrides
        # the same two): the direct one and one per proxy mount.
        def _init_transport(self, *args: Any, **kwargs: Any) -> Any:
            return capped_transport(super()._init_transport(*args, **kwargs), max_bytes, activity)

        def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> Any:
            inner = super()._init_proxy_transport(*args, **kwargs)
            return capped_transport(inner, max_bytes, activity)

    with _proxy_variables_checked():
        return Capped(  # type: ignore[no-any-return]
            timeout=options.timeout,
            limits=_limits(options),
            verify=options.verify(base_url),
            trust_env=options.proxies,
        )


def sync_client(base_url: str, options: HttpOptions | None = None) -> httpx2.Client:
    """A sync client of the same family (the launcher's readiness polls; by default straight to
    the server, no proxy: it is one evalrun booted on this machine)."""
    import httpx2

    options = options or HttpOptions(timeout=10.0, concurrency=2, proxies=False)
    with _proxy_variables_checked():
        return httpx2.Client(
            timeout=options.timeout,
            limits=_limits(options),
            verify=options.verify(base_url),
            trust_env=options.proxies,
        )


@contextlib.contextmanager
def _proxy_variables_checked() -> Iterator[None]:
    """A client is made: a proxy variable httpx2 cannot use (`ftp://...`, a bad port) is a
    UsageError naming the variables, not a traceback (the endpoint's URL is checked before)."""
    import httpx2

    try:
        yield
    except (httpx2.InvalidURL, ValueError) as exc:
        raise UsageError(
            f"a proxy variable holds a URL that cannot be used ({exc}); fix or unset "
            "HTTP_PROXY / HTTPS_PROXY / ALL_PROXY (or list the endpoint's host in NO_PROXY)"
        ) from exc

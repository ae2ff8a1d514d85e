"""One chat request to an OpenAI-compatible endpoint: bounded retries and full response parsing.

Retried (exponential backoff with jitter): connection errors, timeouts, HTTP 408, 429 (honouring
`Retry-After`) and 5xx. Not retried: every other 4xx, and a 200 whose body is not a chat
completion. A request that still fails raises `RequestFailed`, which carries the cause; the runner
records it as an item in error, never as a wrong answer.

The openai package is imported here (and by transport.py, which must speak the httpx openai uses),
lazily by callers, so `evalrun --help` stays fast.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from evalrun.endpoint.limits import (
    DEFAULT_MAX_RESPONSE_MB,
    BadEncoding,
    ResponseTooLarge,
    capped_transport,
    http_library,
)
from evalrun.endpoint.response import Response, parse_completion
from evalrun.errors import EndpointError, UsageError

if TYPE_CHECKING:
    import openai

RETRY_STATUSES = frozenset({408, 429})
_OPTION_KEYS = frozenset({"extra_body", "extra_headers", "timeout"})
MAX_RETRY_AFTER_S = 120.0


@dataclass(frozen=True)
class RetryPolicy:
    """How many times and how patiently to retry one request."""

    attempts: int = 4  # total tries, first included
    base_delay: float = 0.5  # seconds before the first retry; doubles each time
    max_delay: float = 8.0
    seed: int = 0  # jitter comes from a seeded Random: runs are reproducible

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try number `attempt` (1-based)."""
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return ceiling * (0.5 + 0.5 * rng.random())


class RequestFailed(EndpointError):
    """One request failed for good (after retries, or at once for a non-retryable error)."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        http_status: int | None = None,
        attempts: int = 1,
        body: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind  # connect | timeout | http | bad_response
        self.http_status = http_status
        self.attempts = attempts
        self.body = body

    def as_dict(self) -> dict[str, Any]:
        """The `error` field of an item record."""
        return {"kind": self.kind, "message": self.message, "http_status": self.http_status}


@dataclass
class Attempt:
    """A finished request: the parsed response, raw model name, and how many tries it took."""

    response: Response
    model: str | None
    attempts: int


class _Retryable(Exception):
    """A failed try that may be retried."""

    def __init__(self, failure: RequestFailed, retry_after: float | None = None) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.retry_after = retry_after


def normalise_endpoint(endpoint: str) -> str:
    """The OpenAI base URL: 'host:8000', 'http://h:8000', '.../v1/chat/completions' -> '.../v1'."""
    text = endpoint.strip()
    if not text:
        raise UsageError("empty --endpoint; pass the server's URL, e.g. http://127.0.0.1:8000/v1")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"--endpoint {endpoint!r} is not an http(s) URL; pass e.g. http://127.0.0.1:8000/v1"
        )
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        path = path.removesuffix(suffix)
    if not path.endswith("/v1"):
        path = path + "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def make_client(
    base_url: str,
    *,
    api_key: str | None = None,
    timeout: float = 120.0,
    concurrency: int = 16,
    lean: bool = True,
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB,
) -> openai.AsyncOpenAI:
    """An AsyncOpenAI client with our retries (its own are off).

    Plain-http endpoints (a local engine, the usual case) get evalrun's lean HTTP/1.1 transport
    under openai's httpx client: the default one costs ~2 ms of CPU per request, which at high
    concurrency made the client, not the server, the bottleneck (evalrun/transport.py). https
    endpoints keep the default transport, and so does `lean=False` (bench/score_overhead.py
    compares the two). `concurrency` is accepted for callers that size pools; both transports keep
    as many connections as there are requests in flight. Every response body is capped at
    `max_response_mb` (limits.py).
    """
    import openai

    del concurrency
    inner: Any
    if base_url.startswith("http://") and lean:
        from evalrun.endpoint.transport import LeanTransport

        inner = LeanTransport()
    else:  # plain http needs no CA certificates (~0.14 s a client)
        inner = http_library().AsyncHTTPTransport(verify=not base_url.startswith("http://"))
    capped = capped_transport(inner, int(max_response_mb * 1024 * 1024))
    http_client = openai.DefaultAsyncHttpxClient(transport=capped, timeout=timeout)
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "EMPTY",
        max_retries=0,
        timeout=timeout,
        http_client=http_client,
    )


def error_message(body: str) -> str:
    """The human part of an error body: vLLM's {"message"}, OpenAI's {"error": {"message"}}, or
    the start of an HTML/text page."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, ValueError):
        text = re.sub(r"<[^>]+>", " ", body)
        return " ".join(text.split())[:200] or "(empty body)"
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(err.get(key), str):
                    return err[key]
        if isinstance(err, str):
            return err
    return json.dumps(data, ensure_ascii=False)[:200]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def _once(client: openai.AsyncOpenAI, params: dict[str, Any]) -> tuple[Response, str | None]:
    import openai

    body = {k: v for k, v in params.items() if k not in _OPTION_KEYS}
    body.update(params.get("extra_body") or {})
    options: dict[str, Any] = {}
    if "timeout" in params:
        options["timeout"] = params["timeout"]
    if params.get("extra_headers"):
        options["headers"] = params["extra_headers"]
    started = time.perf_counter()
    try:
        # client.post with the JSON body as is: chat.completions.create() would walk every
        # message and tool through its type-driven transform (~5 ms per request of pure CPU).
        content = await client.post("/chat/completions", cast_to=bytes, body=body, options=options)  # type: ignore[call-overload]
    except openai.APITimeoutError as exc:
        raise _Retryable(RequestFailed(f"timed out ({exc})", kind="timeout")) from exc
    except (ResponseTooLarge, BadEncoding) as exc:
        raise _unreadable(exc) from exc
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, (ResponseTooLarge, BadEncoding)):
            raise _unreadable(cause) from exc
        failure = RequestFailed(f"connection failed: {_short(cause)}", kind="connect")
        raise _Retryable(failure) from exc
    except openai.APIStatusError as exc:
        status = exc.status_code
        text = exc.response.text
        failure = RequestFailed(
            f"HTTP {status}: {error_message(text)}",
            kind="http",
            http_status=status,
            body=text[:2000],
        )
        if status in RETRY_STATUSES or status >= 500:
            retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            raise _Retryable(failure, retry_after if status in (429, 503) else None) from exc
        raise failure from exc
    latency = time.perf_counter() - started
    try:
        data = json.loads(content)
        response, model = parse_completion(data)
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "HTML" if content.lstrip()[:1] == b"<" else "a non-chat-completion body"
        raise RequestFailed(
            f"HTTP 200 with {kind} ({exc}); the endpoint does not speak the OpenAI chat API: "
            "point --endpoint at its /v1 base URL",
            kind="bad_response",
            http_status=200,
            body=content[:2000].decode("utf-8", "replace"),
        ) from exc
    response.latency_s = round(latency, 4)
    return response, model


def _unreadable(exc: ResponseTooLarge | BadEncoding) -> RequestFailed:
    """A body evalrun will not read: over the size cap, or garbage under a gzip header."""
    if isinstance(exc, ResponseTooLarge):
        return RequestFailed(
            f"{exc}; raise --max-response-mb if the endpoint really answers this much",
            kind="too_large",
        )
    return RequestFailed(f"HTTP body with {exc}", kind="bad_response")


def _deadline(client: openai.AsyncOpenAI, params: dict[str, Any]) -> float | None:
    """Seconds one try may take in total: the request's (or client's) timeout.

    The transport's timeout bounds each read, so a body trickled one byte a second would never
    trip it; this bounds the whole try, whatever the transport.
    """
    value = params.get("timeout", client.timeout)
    if isinstance(value, int | float):
        return float(value)
    read = getattr(value, "read", None)
    return float(read) if isinstance(read, int | float) else None


async def chat_attempt(
    client: openai.AsyncOpenAI,
    params: dict[str, Any],
    *,
    retry: RetryPolicy = RetryPolicy(),
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    should_stop: Callable[[], bool] = lambda: False,
    on_try: Callable[[RequestFailed | None], None] = lambda failure: None,
) -> Attempt:
    """Send one chat request with retries; return the parsed response and the number of tries.

    `params` are keyword arguments as for `chat.completions.create` (model, messages, max_tokens,
    temperature, tools, tool_choice, plus extra_body / extra_headers / timeout); they are sent
    as the JSON body unchanged. `should_stop` lets the caller give up retrying (e.g. once the
    endpoint is known to be down); `on_try` hears of every try (None when it got an answer).
    Each try has a total deadline of the request's timeout, however slowly the body arrives.
    """
    rng = rng or random.Random(retry.seed)
    deadline = _deadline(client, params)
    for attempt in range(1, retry.attempts + 1):
        try:
            try:
                async with asyncio.timeout(deadline):
                    response, model = await _once(client, params)
            except TimeoutError as exc:
                failure = RequestFailed(f"timed out after {deadline or 0:g} s", kind="timeout")
                raise _Retryable(failure) from exc
            on_try(None)
            return Attempt(response=response, model=model, attempts=attempt)
        except _Retryable as exc:
            exc.failure.attempts = attempt
            on_try(exc.failure)
            if attempt == retry.attempts or should_stop():
                raise exc.failure from None
            await sleep(retry.delay(attempt, rng, exc.retry_after))
            if should_stop():  # the endpoint was called dead while we waited
                raise exc.failure from None
        except RequestFailed as exc:
            exc.attempts = attempt
            on_try(exc)
            raise
    raise AssertionError("unreachable")  # pragma: no cover


async def chat(client: openai.AsyncOpenAI, params: dict[str, Any], **kw: Any) -> Response:
    """Send one chat request with retries and return the parsed Response (raises RequestFailed)."""
    return (await chat_attempt(client, params, **kw)).response


async def list_models(client: openai.AsyncOpenAI, base_url: str) -> list[str]:
    """Model ids from GET /v1/models; EndpointError (one line, what to do) if that fails."""
    import openai

    try:
        raw = await client.models.with_raw_response.list()
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        raise EndpointError(
            f"cannot reach {base_url} ({_short(cause)}); is the server up? "
            "check --endpoint (host, port, and the /v1 prefix)"
        ) from exc
    except openai.APIStatusError as exc:
        raise EndpointError(
            f"{base_url}/models answered HTTP {exc.status_code} "
            f"({error_message(exc.response.text)}); point --endpoint at an OpenAI-compatible "
            "server's /v1 base URL"
            + ("; set --api-key-env" if exc.status_code in (401, 403) else "")
        ) from exc
    body = raw.http_response.content
    try:
        data = json.loads(body)
        ids = [str(m["id"]) for m in data["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        what = "an HTML page" if body.lstrip()[:1] == b"<" else "a body that is not a model list"
        raise EndpointError(
            f"{base_url}/models returned {what}, not the OpenAI API; point --endpoint at the "
            "server's OpenAI base URL (e.g. http://host:8000/v1)"
        ) from exc
    return ids


def pick_model(requested: str | None, served: list[str], base_url: str) -> str:
    """The model to send: the one asked for, else the only one served."""
    if requested:
        return requested
    if not served:
        raise EndpointError(
            f"{base_url}/models lists no model; is the server still loading? "
            "retry when it is ready, or pass --model"
        )
    if len(served) > 1:
        raise UsageError(
            f"{base_url} serves {len(served)} models ({', '.join(served)}); pick one with --model"
        )
    return served[0]


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.split("\n", 1)[0][:160]

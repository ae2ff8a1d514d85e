"""One chat request to an OpenAI-compatible endpoint: bounded retries and full response parsing.

Retried (exponential backoff with jitter): connection errors, timeouts, HTTP 408, 429 (honouring
`Retry-After`) and 5xx. Not retried: every other 4xx, and a 200 whose body is not a chat
completion. A request that still fails raises `RequestFailed`, which carries the cause; the runner
records it as an item in error, never as a wrong answer.

The openai package is imported here, lazily by callers, so `evalrun --help` stays fast; the HTTP
client under it comes from http.py (the one stack evalrun speaks).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.utils
import gc
import json
import random
import re
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from evalrun.base.errors import EndpointError, UsageError
from evalrun.base.jsondata import JSONObject, collector_paused, loads
from evalrun.endpoint.activity import Activity
from evalrun.endpoint.http import HttpOptions, async_client, describe_failure
from evalrun.endpoint.limits import BadEncoding, ResponseTooLarge
from evalrun.endpoint.options import ApiKey
from evalrun.endpoint.response import ItemError, Response, parse_completion

if TYPE_CHECKING:
    import openai

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 429})
_OPTION_KEYS = frozenset({"extra_body", "extra_headers", "timeout"})
MAX_RETRY_AFTER_S = 120.0
NOTICE_WAIT_S = 5.0  # a wait between tries this long is told to the user (on_wait)


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
        self.kind = kind  # connect | tls | timeout | http | bad_response
        self.http_status = http_status
        self.attempts = attempts
        self.body = body

    def as_error(self) -> ItemError:
        """The `error` field of an item record."""
        return ItemError(kind=self.kind, message=self.message, http_status=self.http_status)


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


def load_sdk(*, freeze: bool = False) -> bool:
    """Import the openai SDK (~0.5 s, most of a short run's start) now, so that a caller can
    overlap it with work elsewhere (a grading process starting) before `make_client`; True when
    this call imported it (False: it was imported already, nothing to overlap).

    With `freeze`, for a process the run has to itself (one that forked a grading process: no
    other thread), the first import pauses the collector and freezes everything alive after it
    (gc.freeze): the SDK's and pydantic's ~50,000 objects live as long as the process, and a
    full collection walking them cost a run ~0.05-0.08 s, during the import and again while it
    asks. Only the first: frozen objects that later become cyclic garbage are never collected,
    so a process that runs many runs (bisect) freezes its start-up only, not earlier runs'
    leftovers."""
    fresh = "openai" not in sys.modules
    with collector_paused() if freeze and fresh else contextlib.nullcontext():
        import openai  # noqa: F401
    if freeze and fresh:
        gc.freeze()
    return fresh


def make_client(
    base_url: str,
    *,
    api_key: ApiKey | str | None = None,
    http: HttpOptions | None = None,
    headers: Mapping[str, str] | None = None,
    activity: Activity | None = None,
) -> openai.AsyncOpenAI:
    """An AsyncOpenAI client with our retries (its own are off), on http.py's client: the pool
    holds `http.concurrency` connections, proxies and TLS follow http.py's rules; `activity`
    hears of every request's traffic (activity.py)."""
    import openai

    http = http or HttpOptions()
    check_headers(headers or {})
    key = api_key.value if isinstance(api_key, ApiKey) else api_key
    activity = activity or Activity()
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=key or "EMPTY",
        max_retries=0,
        timeout=http.timeout,
        default_headers=dict(headers or {}),
        http_client=async_client(base_url, http, activity),
    )
    _ACTIVITY[client] = activity
    return client


# Each client's Activity (its connection policy, the answers it has seen): chat_attempt asks
# through it.
_ACTIVITY: weakref.WeakKeyDictionary[Any, Activity] = weakref.WeakKeyDictionary()
QUEUE_CEILING = 5  # an item waits at most this many --timeouts while others are answered


def check_headers(headers: Mapping[str, str]) -> None:
    """UsageError for a header HTTP cannot carry: a control character (a newline would split the
    request), or a character outside ASCII, in its name or value."""
    for name, value in headers.items():
        for part in (name, value):
            if not part.isascii() or any(ord(c) < 32 or ord(c) == 127 for c in part if c != "\t"):
                raise UsageError(
                    f"--header {name!r}: {part!r} holds a character HTTP headers cannot carry "
                    "(a control character or non-ASCII); pass plain ASCII text"
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


async def _once(
    client: openai.AsyncOpenAI,
    params: JSONObject,
    logprobs: Callable[[Any], Any] | None = None,
) -> tuple[Response, str | None]:
    import openai

    body = {k: v for k, v in params.items() if k not in _OPTION_KEYS}
    body.update(params.get("extra_body") or {})
    options: JSONObject = {}
    budget = _budget(client, params)
    if budget is not None:
        # The transport's own bound (each read) only catches what chat_attempt's deadline
        # misses: a request queued at the server behind others may wait past one --timeout.
        options["timeout"] = budget * QUEUE_CEILING
    elif "timeout" in params:
        options["timeout"] = params["timeout"]
    if params.get("extra_headers"):
        options["headers"] = params["extra_headers"]
    started = time.perf_counter()
    try:
        # client.post with the JSON body as is: chat.completions.create() would walk every
        # message and tool through its type-driven transform (~5 ms per request of pure CPU).
        content = await client.post("/chat/completions", cast_to=bytes, body=body, options=options)  # type: ignore[call-overload]
    except (ResponseTooLarge, BadEncoding) as exc:
        raise _unreadable(exc) from exc
    except openai.APIConnectionError as exc:  # APITimeoutError included
        cause = exc.__cause__ or exc
        if isinstance(cause, (ResponseTooLarge, BadEncoding)):
            raise _unreadable(cause) from exc
        kind, why = describe_failure(exc)
        if kind == "tls":  # a certificate does not fix itself between tries
            raise RequestFailed(f"connection failed: {why}", kind="tls") from exc
        if kind == "timeout":
            why = f"timed out: {why}"
        elif kind == "connect":
            why = f"connection failed: {why}"
        raise _Retryable(RequestFailed(why, kind=kind)) from exc
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
        # A body with logprobs is thousands of small objects, none in a cycle: read (orjson),
        # kept as `logprobs` makes of them and dropped with the collector paused, so none of
        # them is ever walked by it.
        with collector_paused():
            data = loads(content)
            response, model = parse_completion(data)
            del data
            if logprobs is not None:
                response.logprobs = logprobs(response.logprobs)
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


def _budget(client: openai.AsyncOpenAI, params: JSONObject) -> float | None:
    """Seconds one item may take in all: the request's (or client's) timeout.

    The transport's timeout bounds each read, so a body trickled one byte a second would never
    trip it, and each retry would start it afresh; this bounds every try and every wait between
    tries together, whatever the transport.
    """
    value = params.get("timeout", client.timeout)
    if isinstance(value, int | float):
        return float(value)
    read = getattr(value, "read", None)
    return float(read) if isinstance(read, int | float) else None


async def chat_attempt(
    client: openai.AsyncOpenAI,
    params: JSONObject,
    *,
    retry: RetryPolicy = RetryPolicy(),
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    should_stop: Callable[[], bool] = lambda: False,
    on_try: Callable[[RequestFailed | None], None] = lambda failure: None,
    on_wait: Callable[[str], None] = lambda text: None,
    clock: Callable[[], float] = time.monotonic,
    logprobs: Callable[[Any], Any] | None = None,
) -> Attempt:
    """Send one chat request with retries; return the parsed response and the number of tries.

    `params` are keyword arguments as for `chat.completions.create` (model, messages, max_tokens,
    temperature, tools, tool_choice, plus extra_body / extra_headers / timeout); they are sent
    as the JSON body unchanged. `should_stop` lets the caller give up retrying (e.g. once the
    endpoint is known to be down); `on_try` hears of every try (None when it got an answer);
    `on_wait` hears, in one line, of a wait between tries of `NOTICE_WAIT_S` or more.
    One deadline, the request's timeout, bounds the whole item: every try, however slowly its
    body arrives, and every wait between tries (a Retry-After past it fails the item at once).
    `logprobs`, when given, turns the answer's `choices[0].logprobs` (None when it has none) into
    what `Response.logprobs` keeps, while the body is read (logprobs.py's `Capture.take`).
    """
    rng = rng or random.Random(retry.seed)
    budget = _budget(client, params)
    activity = _ACTIVITY.get(client)
    started = clock()

    def ends() -> float | None:
        """The item's deadline: `budget` after it started or, while the server answers other
        requests (this one queued behind them), after the last answer, up to QUEUE_CEILING
        budgets in all."""
        if budget is None:
            return None
        end = started + budget
        ago = activity.since_answer() if activity is not None else None
        if ago is not None:
            end = max(end, min(clock() - ago + budget, started + budget * QUEUE_CEILING))
        return end

    attempt = 0
    while attempt < retry.attempts:
        attempt += 1
        try:
            try:
                response, model = await _within(
                    _admitted(activity, lambda: _once(client, params, logprobs)), ends, clock
                )
            except TimeoutError as exc:
                failure = RequestFailed(
                    f"timed out: no answer within {budget or 0:g} s (--timeout)", kind="timeout"
                )
                raise _Retryable(failure) from exc
            if activity is not None:
                await activity.served()
            on_try(None)
            return Attempt(response=response, model=model, attempts=attempt)
        except _Retryable as exc:
            failure = exc.failure
            failure.attempts = attempt
            end = ends()
            if (
                failure.kind == "connect"
                and activity is not None
                and activity.refused()
                and not should_stop()
                and (end is None or clock() < end)
            ):
                # Refused or reset while others are served: a server at its connection limit,
                # not a failed try. Go again once a slot (now capped) frees.
                attempt -= 1
                await sleep(0)
                continue
            on_try(failure)
            if attempt == retry.attempts or should_stop():
                raise failure from None
            wait = retry.delay(attempt, rng, exc.retry_after)
            if end is not None and clock() + wait >= end:
                if exc.retry_after is not None and exc.retry_after >= wait:
                    failure.message += (
                        f"; the server asked to retry after {exc.retry_after:g} s, past this "
                        f"item's deadline of {budget:g} s (--timeout)"
                    )
                raise failure from None
            if wait >= NOTICE_WAIT_S:
                why = "Retry-After" if exc.retry_after is not None else "a retry"
                on_wait(f"waiting for {why} {wait:.0f} s")
            await _sleep_unless(sleep, wait, should_stop)
            if should_stop():  # the endpoint was called dead while we waited
                raise failure from None
        except RequestFailed as exc:
            exc.attempts = attempt
            on_try(exc)
            raise
    raise AssertionError("unreachable")  # pragma: no cover


async def _admitted(activity: Activity | None, request: Callable[[], Awaitable[T]]) -> T:
    """`request()`, sent once the client's connection policy admits it (activity.py); made
    only then, so a request given up while it waits for a slot was never begun."""
    if activity is None:
        return await request()
    async with activity.slot():
        return await request()


async def _within(
    request: Coroutine[Any, Any, T], ends: Callable[[], float | None], clock: Callable[[], float]
) -> T:
    """`request`'s result, or TimeoutError once `ends()` (which may move later while it runs)
    has passed; the request is cancelled then."""
    task = asyncio.ensure_future(request)
    try:
        while True:
            end = ends()
            left = None if end is None else end - clock()
            if left is not None and left <= 0:
                raise TimeoutError
            done, _ = await asyncio.wait({task}, timeout=left)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        elif not task.cancelled():
            # a failure that finished as the deadline passed: retrieved here, so asyncio does
            # not print it to stderr as a task exception that was never retrieved
            task.exception()


async def _sleep_unless(
    sleep: Callable[[float], Awaitable[None]], seconds: float, stop: Callable[[], bool]
) -> None:
    """Sleep `seconds` in slices of at most one, ending early once `stop()` (a long Retry-After
    must not hold a run that was called dead meanwhile)."""
    while seconds > 0 and not stop():
        step = min(seconds, 1.0)
        await sleep(step)
        seconds -= step


async def list_models(
    client: openai.AsyncOpenAI, base_url: str, api_key: ApiKey | None = None
) -> list[str]:
    """Model ids from GET /v1/models; EndpointError (one line, what to do) if that fails."""
    import openai

    try:
        raw = await client.models.with_raw_response.list()
    except openai.APIConnectionError as exc:
        kind, why = describe_failure(exc)
        if kind == "tls":
            raise EndpointError(f"cannot reach {base_url}: {why}") from exc
        if kind == "bad_response":
            raise EndpointError(
                f"{base_url}/models: {why}; point --endpoint at an OpenAI-compatible server's "
                "/v1 base URL"
            ) from exc
        raise EndpointError(
            f"cannot reach {base_url} ({why}); is the server up? "
            "check --endpoint (host, port, and the /v1 prefix)"
        ) from exc
    except openai.APIStatusError as exc:
        status = exc.status_code
        what = error_message(exc.response.text)
        if status in (401, 403):
            hint = (api_key or ApiKey()).refused_hint()
            raise EndpointError(
                f"{base_url}/models answered HTTP {status} ({what}); {hint}"
            ) from exc
        raise EndpointError(
            f"{base_url}/models answered HTTP {status} ({what}); point --endpoint at an "
            "OpenAI-compatible server's /v1 base URL"
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


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, also when the caller is itself inside a
    running event loop (a notebook cell): then it runs on its own loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: its RuntimeError is no failure's context
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="evalrun") as pool:
        return pool.submit(asyncio.run, make()).result()

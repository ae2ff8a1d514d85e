"""The wire side of `evalrun slope`: filler prompts and timed, streamed chat completions.

One `Wire` talks to one endpoint. It sends the optional extras that force a fixed output length
(`ignore_eos`, `min_tokens`) and ask for streamed usage (`stream_options`), and drops each one the
engine rejects with a 400 naming it, once for the whole sweep. A prompt longer than the engine's
context comes back as `context_exceeded`, never as an error, so the sweep can report the depth as
skipped.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import httpx2 as httpx

from evalrun.base.errors import EndpointError
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.client import error_message
from evalrun.endpoint.http import describe_failure, refused
from evalrun.endpoint.options import ApiKey

OPTIONAL_EXTRAS = ("ignore_eos", "min_tokens", "stream_options")
INSTRUCTION = (
    "Continue the account of the valley above with new paragraphs in the same plain style. "
    "Keep writing until you are stopped."
)
CUT_OFF_HINT = (
    "the server or a proxy closed the stream early; if it is llama-cpp-python, which ends a "
    "running stream when another request arrives: --set interrupt_requests=false"
)
# Context-length rejections as vLLM, sglang, llama.cpp (both servers) and TGI word them.
_CONTEXT_RE = re.compile(
    r"context[ _]length|context window|maximum context|max_model_len|prompt is too long|"
    r"exceeds? the (?:available )?context|input (?:is too long|length)|too many tokens|"
    r"exceed_context_size|max_new_tokens` must be",
    re.IGNORECASE,
)


@functools.cache
def _paragraphs() -> tuple[str, ...]:
    text = resources.files("evalrun").joinpath("data/filler.txt").read_text(encoding="utf-8")
    return tuple(p.strip() for p in text.split("\n\n") if p.strip())


def filler(n_chars: int, *, seed: int) -> str:
    """About `n_chars` characters of stored prose, deterministic for a seed.

    The stored paragraphs are reshuffled per block by a seeded Random, so a long context is not
    one short period repeated; the text is cut at a word boundary.
    """
    if n_chars <= 0:
        return ""
    parts: list[str] = []
    total = 0
    block = 0
    while total < n_chars:
        order = list(_paragraphs())
        random.Random(seed * 1_000_003 + block).shuffle(order)
        for para in order:
            parts.append(para)
            total += len(para) + 2
        block += 1
    text = "\n\n".join(parts)[:n_chars]
    cut = text.rfind(" ")
    return text[:cut] if cut > n_chars // 2 else text


def prompt_text(*, head: str, depth_chars: int, tail: str, pp_chars: int) -> str:
    """The user message: head id, depth filler, tail id, the pp new text, the instruction.

    `head` is a per-request nonce (cold: no prefix cache can serve the depth) or a fixed id per
    depth (warm cache); `tail` is always a fresh nonce so the pp part is never cached.
    """
    return (
        f"Record {head}.\n\n{filler(depth_chars, seed=1)}\n\n"
        f"Note {tail}.\n\n{filler(pp_chars, seed=2)}\n\n{INSTRUCTION}"
    )


def is_context_error(status: int, text: str) -> bool:
    """Whether an error body says the prompt does not fit the context."""
    return status in (400, 413, 422) and bool(_CONTEXT_RE.search(text))


@dataclass
class Probe:
    """A non-streamed one-token request: the server's own prompt token count."""

    prompt_tokens: int | None = None
    context_exceeded: bool = False
    message: str = ""


@dataclass
class StreamTiming:
    """Clock readings of one streamed completion (seconds from the wire's clock)."""

    sent: float
    first: float | None = None
    last: float | None = None
    chunks: int = 0
    usage_completion: int | None = None
    usage_prompt: int | None = None
    finish_reason: str | None = None
    error: str | None = None
    context_exceeded: bool = False

    @property
    def tokens(self) -> int:
        """Generated tokens: streamed usage when the engine sends it, else content chunks."""
        return self.usage_completion if self.usage_completion is not None else self.chunks

    @property
    def ttft_s(self) -> float | None:
        return None if self.first is None else self.first - self.sent

    @property
    def decode_tps(self) -> float | None:
        """Tokens after the first, over the time from the first to the last token."""
        if self.first is None or self.last is None or self.last <= self.first or self.tokens < 2:
            return None
        return (self.tokens - 1) / (self.last - self.first)


class Wire:
    """Requests to one OpenAI-compatible endpoint, with per-engine extras negotiated once."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        model: str | None,
        *,
        request_extra: JSONObject | None = None,
        clock: Callable[[], float],
        api_key: ApiKey | None = None,
    ) -> None:
        self.api_key = api_key or ApiKey()
        self.client = client
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.request_extra = dict(request_extra or {})
        self.clock = clock
        self.dropped: list[str] = []

    # -- discovery ---------------------------------------------------------------------------
    async def models(self) -> dict[str, int | None]:
        """Served model ids -> max context where the engine lists it ({} if /models is absent)."""
        try:
            resp = await self.client.get(f"{self.base_url}/models")
        except httpx.HTTPError as exc:
            kind, why = describe_failure(exc)
            raise EndpointError(
                f"cannot reach {self.base_url}/models ({why})",
                hint=None
                if kind == "tls"
                else "is the server up? pass the base URL, e.g. http://127.0.0.1:8000/v1",
            ) from exc
        if resp.status_code in (401, 403):
            raise self._unusable(resp.status_code, resp.text)
        if resp.status_code != 200:
            return {}
        try:
            data = resp.json().get("data") or []
        except (json.JSONDecodeError, AttributeError):
            return {}
        out: dict[str, int | None] = {}
        for entry in data:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                limit = entry.get("max_model_len") or entry.get("context_length")
                out[entry["id"]] = limit if isinstance(limit, int) else None
        return out

    # -- requests ----------------------------------------------------------------------------
    def _body(self, text: str, *, max_tokens: int, stream: bool) -> JSONObject:
        body: JSONObject = {"messages": [{"role": "user", "content": text}]}
        if self.model:
            body["model"] = self.model
        body.setdefault("temperature", 0)
        body.update(self.request_extra)
        body.update(max_tokens=max_tokens, stream=stream)
        extras: JSONObject = {"ignore_eos": True, "min_tokens": max_tokens}
        if stream:
            extras["stream_options"] = {"include_usage": True}
        body.update({k: v for k, v in extras.items() if k not in self.dropped})
        return body

    def _drop_rejected(self, body: JSONObject, text: str) -> bool:
        """After a 400: drop the extras it names (or all sent ones); False when none is left."""
        sent = [k for k in OPTIONAL_EXTRAS if k in body and k not in self.dropped]
        named = [k for k in sent if k in text] or sent
        self.dropped.extend(named)
        return bool(named)

    def _unusable(self, status: int, text: str) -> EndpointError:
        hint = (
            self.api_key.refused_hint()
            if status in (401, 403)
            else "check the URL and the model name (--model)"
        )
        return EndpointError(
            f"{self.base_url} answered HTTP {status}: {_one_line(text)}", hint=hint
        )

    async def probe(self, text: str) -> Probe:
        """Send `text` for one token, non-streamed; read usage.prompt_tokens."""
        reconnects = 1  # a pooled connection the server closed while idle: resend once
        while True:
            body = self._body(text, max_tokens=1, stream=False)
            try:
                resp = await self.client.post(f"{self.base_url}/chat/completions", json=body)
            except httpx.HTTPError as exc:
                if describe_failure(exc)[0] == "connect" and not refused(exc) and reconnects:
                    reconnects -= 1
                    continue
                raise EndpointError(
                    f"request to {self.base_url} failed ({describe_failure(exc)[1]})",
                    hint="is the server still up? see its log",
                ) from exc
            if resp.status_code == 200:
                break
            if is_context_error(resp.status_code, resp.text):
                return Probe(context_exceeded=True, message=_one_line(resp.text))
            if resp.status_code == 400 and self._drop_rejected(body, resp.text):
                continue
            raise self._unusable(resp.status_code, resp.text)
        try:
            usage = resp.json().get("usage") or {}
        except (json.JSONDecodeError, AttributeError) as exc:
            raise EndpointError(
                f"{self.base_url} did not answer JSON",
                hint="is this an OpenAI-compatible /v1 base URL?",
            ) from exc
        tokens = usage.get("prompt_tokens")
        if not isinstance(tokens, int):
            raise EndpointError(
                f"{self.base_url} reports no usage.prompt_tokens",
                hint="slope calibrates depth from the server's own token count; use an engine "
                "that returns usage",
            )
        return Probe(prompt_tokens=tokens)

    async def stream(self, text: str, *, max_tokens: int) -> StreamTiming:
        """Stream one completion and time every content chunk."""
        reconnects = 1  # a pooled connection the server closed while idle: resend once
        while True:
            body = self._body(text, max_tokens=max_tokens, stream=True)
            timing = StreamTiming(sent=self.clock())
            try:
                async with self.client.stream(
                    "POST", f"{self.base_url}/chat/completions", json=body
                ) as resp:
                    if resp.status_code != 200:
                        raw = (await resp.aread()).decode("utf-8", "replace")
                        if is_context_error(resp.status_code, raw):
                            timing.context_exceeded = True
                            timing.error = _one_line(raw)
                            return timing
                        if resp.status_code == 400 and self._drop_rejected(body, raw):
                            continue
                        if resp.status_code in (401, 403, 404):
                            raise self._unusable(resp.status_code, raw)
                        timing.error = f"HTTP {resp.status_code}: {_one_line(raw)}"
                        return timing
                    await self._read_events(resp, timing)
                    if timing.error is None and timing.finish_reason is None:
                        timing.error = (
                            f"cut off after {timing.tokens} tokens, no finish_reason "
                            f"({CUT_OFF_HINT})"
                        )
                    return timing
            except httpx.HTTPError as exc:
                kind, why = describe_failure(exc)
                if refused(exc):
                    raise EndpointError(
                        f"lost {self.base_url} ({why})",
                        hint="the server went away mid-sweep; see its log",
                    ) from exc
                if kind == "connect" and reconnects and timing.first is None:
                    reconnects -= 1
                    continue
                timing.error = f"{type(exc).__name__}: {why}"
                return timing

    async def _read_events(self, resp: httpx.Response, timing: StreamTiming) -> None:
        async for line in resp.aiter_lines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                break
            now = self.clock()
            try:
                event = json.loads(payload)
            except json.JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            if "error" in event:
                text = json.dumps(event["error"])
                timing.context_exceeded = is_context_error(400, text)
                timing.error = _one_line(text)
                break
            usage = event.get("usage")
            if isinstance(usage, dict):
                timing.usage_completion = usage.get("completion_tokens", timing.usage_completion)
                timing.usage_prompt = usage.get("prompt_tokens", timing.usage_prompt)
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if any(
                    delta.get(k)
                    for k in ("content", "reasoning_content", "reasoning", "tool_calls")
                ):
                    timing.chunks += 1
                    timing.first = now if timing.first is None else timing.first
                    timing.last = now
                if choice.get("finish_reason"):
                    timing.finish_reason = choice["finish_reason"]


def _one_line(body: str, limit: int = 200) -> str:
    """The message of an error body (vLLM, OpenAI or llama.cpp shape), on one line."""
    text = " ".join(error_message(body).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

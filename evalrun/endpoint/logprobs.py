"""Token log-probabilities riding on a run's own chat requests, kept compact in `tokens.jsonl`.

Every chat request of a run asks for `logprobs: true, top_logprobs: K` (`RequestOptions.top_logprobs`,
default 5; None turns capture off). The engines here answer in the OpenAI shape:
`choices[0].logprobs.content[]`, one `{token, logprob, bytes, top_logprobs: [...]}` per generated
token (vLLM, sglang, llama.cpp's server). The first `RequestOptions.logprob_tokens` tokens of each
answer are kept as a `TokenTrace`, one line of `tokens.jsonl` beside `items.jsonl` (store/tokens.py; the item record
stays small; the file follows items.jsonl's rules: appended in the same group commit, a torn last
line moved aside, a later line for an item replacing an earlier one on resume).

A token is stored as `[text, logprob, [[alt, logprob], ...]]` with logprobs rounded to 4 places; a
token whose bytes are not its text (half of a UTF-8 character) gets its bytes as hex in a fourth
place, so two lanes compare by what the model emitted, not by how the server rendered it.

An endpoint that refuses logprobs (a 400 that names them, as hosted reasoning models answer) is
noticed on the first refusal: the run goes on without them and run.json says why (`Capture`).
"""

from __future__ import annotations

import math
import threading
from typing import Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from evalrun.jsondata import JSONObject, collector_paused, json_bytes

DEFAULT_TOP_K = 5
# 128 tokens: the whole answer of every probe item but one (their max_tokens are 16-128) and of 150
# of the 184 core items; a first divergence caused by a fault shows within the first tens of
# tokens, and 184 answers of 128 tokens with 5 alternatives stay under 2.5 MB.
DEFAULT_TOKENS = 128
MAX_TOP_K = 20  # the OpenAI API's own limit on top_logprobs
MAX_TOKENS = 4096
TEXT_CAP = 64  # characters of one token's text kept (a token is rarely longer)
PLACES = 4


class FidelityRecord(TypedDict):
    """run.json's `fidelity`: what capture asked for, and why the run has no tokens when so."""

    top_logprobs: int | None  # None: capture turned off
    tokens: int
    unavailable: NotRequired[str]


class TokenTrace(BaseModel):
    """One line of tokens.jsonl: the first tokens of one item's answer."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Suite item id.")
    top_k: int = Field(description="Alternatives asked for per position.")
    total: int = Field(description="Tokens the answer had (the trace keeps the first `cap`).")
    cap: int = Field(description="Tokens kept at most.")
    tokens: list[list[Any]] = Field(
        description="[text, logprob, [[alt, logprob], ...]] (+ hex bytes when not the text)."
    )


def trace_line(trace: TokenTrace) -> bytes:
    """The trace as its line of tokens.jsonl: its fields as they are (plain lists of str and
    float), no model_dump walk over every token."""
    fields = {
        "id": trace.id,
        "top_k": trace.top_k,
        "total": trace.total,
        "cap": trace.cap,
        "tokens": trace.tokens,
    }
    return json_bytes(fields) + b"\n"


def token_key(token: list[Any]) -> str:
    """What a stored token is, for comparing two lanes: its bytes when stored, else its text."""
    return str(token[3]) if len(token) > 3 else str(token[0])


def alternatives(token: list[Any]) -> dict[str, float]:
    """The stored top-K of a position as {token key: logprob}, the chosen token included."""
    out = {(str(a[2]) if len(a) > 2 else str(a[0])): float(a[1]) for a in token[2] or []}
    out.setdefault(token_key(token), float(token[1]))
    return out


def _entry(raw: Any) -> list[Any]:
    """[text, logprob] (+ hex bytes) of one `{token, logprob, bytes}` object.

    This runs per token and alternative (up to cap x (1 + top_k) times an answer), so the common
    case goes first: checks by class, the number rounded inline."""
    if raw.__class__ is not dict:
        raise ValueError("a logprobs entry is not an object")
    text = raw.get("token")
    if text.__class__ is not str:
        raise ValueError("a logprobs entry has no token text")
    value = raw.get("logprob")
    if value.__class__ is not float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("a logprob is not a number")
        value = float(value)
    if value != value or value == math.inf:  # NaN, or +inf: no log-probability
        raise ValueError("a logprob is not a number")
    value = round(value, PLACES)
    out: list[Any] = [
        text if len(text) <= TEXT_CAP else text[:TEXT_CAP],
        value if value > -9999.0 else -9999.0,  # -inf is written as vLLM writes it
    ]
    data = raw.get("bytes")
    if data.__class__ is list:
        try:
            blob = bytes(data)
        except (TypeError, ValueError):  # not a list of ints 0-255: no bytes to keep
            return out
        try:
            same = blob == text.encode("utf-8")
        except UnicodeEncodeError:  # text with a lone surrogate is never what was emitted
            same = False
        if not same:
            out.append(blob.hex())
    return out


def parse_logprobs(raw: Any, *, top_k: int, cap: int, item_id: str) -> TokenTrace | None:
    """The trace of one answer from `choices[0].logprobs`; None when the body carries none.
    Malformed logprobs (an untrusted body) are dropped, never an error of the item.

    This runs on every answer of a run (up to `cap` x (1 + `top_k`) entries), so it is written
    for speed: no validation pass over the result (`model_construct`), type checks by class."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return None
    entry = _entry
    tokens: list[list[Any]] = []
    try:
        for step in content[:cap]:
            head = entry(step)
            tops = step.get("top_logprobs")
            head.insert(2, [entry(t) for t in tops[:top_k]] if tops.__class__ is list else [])
            tokens.append(head)
    except ValueError:
        return None
    return TokenTrace.model_construct(
        id=item_id, top_k=top_k, total=len(content), cap=cap, tokens=tokens
    )


def refusal(message: str, status: int | None) -> bool:
    """Whether an HTTP error refuses the logprobs request itself (not the item)."""
    return status in (400, 422) and "logprob" in message.lower()


class Capture:
    """The capture state of one run: on until the endpoint refuses logprobs, then off (once)."""

    def __init__(self, top_k: int | None, cap: int) -> None:
        self.top_k, self.cap = top_k, cap
        self.refused: str | None = None  # the engine's reason, from its first refusal
        self.answered = 0  # answers seen while capture was on
        self.traced = 0  # ... that carried logprobs
        self._lock = threading.Lock()

    @property
    def on(self) -> bool:
        return self.top_k is not None and self.refused is None

    def body(self) -> JSONObject:
        """The request fields that ask for logprobs (none once refused or when off)."""
        return {"logprobs": True, "top_logprobs": self.top_k} if self.on else {}

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.refused = self.refused or reason

    def take(self, raw: Any, item_id: str) -> bytes | None:
        """The tokens.jsonl line of one answer sent with logprobs asked for (None: it carried
        none). Written out at once, with the collector paused: a trace is ~1,000 small lists,
        and held as objects until the items' next group commit they were what made the
        collector walk the whole heap during a run."""
        assert self.top_k is not None
        with collector_paused():
            trace = parse_logprobs(raw, top_k=self.top_k, cap=self.cap, item_id=item_id)
            line = None if trace is None else trace_line(trace)
            del trace
        with self._lock:
            self.answered += 1
            self.traced += line is not None
        return line

    def unavailable(self, earlier: FidelityRecord | None = None) -> str | None:
        """Why the run has no tokens to compare, or None when it has them."""
        if self.top_k is None:
            return "capture turned off (--no-logprobs)"
        if self.refused:
            return self.refused
        if self.answered and not self.traced:
            return "the endpoint answered without logprobs (it ignores the logprobs field)"
        if not self.answered and earlier is not None:
            return earlier.get("unavailable")
        return None

    def record(self, earlier: FidelityRecord | None = None) -> FidelityRecord:
        """run.json's `fidelity`: what was asked and whether the run has tokens."""
        out: FidelityRecord = {"top_logprobs": self.top_k, "tokens": self.cap}
        why = self.unavailable(earlier)
        if why:
            out["unavailable"] = why
        return out

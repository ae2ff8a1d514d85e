"""Token log-probabilities riding on a run's own chat requests, kept compact in `tokens.jsonl`.

Every chat request of a run asks for `logprobs: true, top_logprobs: K` (`RequestOptions.top_logprobs`,
default 5; None turns capture off). The engines here answer in the OpenAI shape:
`choices[0].logprobs.content[]`, one `{token, logprob, bytes, top_logprobs: [...]}` per generated
token (vLLM, sglang, llama.cpp's server). The first `RequestOptions.logprob_tokens` tokens of each
answer are kept as a `TokenTrace`, one line of `tokens.jsonl` beside `items.jsonl` (store/tokens.py; the item record
stays small; the file follows items.jsonl's rules: appended in the same group commit, a torn last
line moved aside, a later line for an item replacing an earlier one on resume).

A token is stored as `[text, logprob, [[alt, logprob], ...]]` with logprobs rounded to 4 places,
then, when known, a token's bytes as hex (only when they are not its text: half of a UTF-8
character) and its token id (an int). Each alternative is `[alt, logprob]` with the same optional
hex and id. Two lanes compare tokens by their bytes with the renderings of invisible tokens
folded together (`text_key`: the same end-of-turn token is `<|im_end|>` on vLLM and empty on
llama.cpp, half of a character is nothing on vLLM and U+FFFD on sglang) and, where both sides
have them, by id (`same_token`; llama.cpp's server sends an `id` with every token and
alternative, vLLM the chosen tokens' ids in `choices[0].token_ids` when asked
`return_token_ids: true`, sglang none).

vLLM's `return_tokens_as_token_ids` is not used: it replaces every alternative's text and bytes by
`token_id:N`, so a top-K could no longer be matched against a lane that sends text only (sglang).

An endpoint that refuses logprobs (a 400 that names them, as hosted reasoning models answer) is
noticed on the first refusal: the run goes on without them and run.json says why (`Capture`). One
that refuses the `return_token_ids` field (an API that rejects fields it does not know) is asked
again without it, and its tokens compare by bytes.
"""

from __future__ import annotations

import math
import re
import threading
from typing import Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from evalrun.base.jsondata import JSONObject, collector_paused, json_bytes

DEFAULT_TOP_K = 5
# 128 tokens: the whole answer of every probe item but one (their max_tokens are 16-128) and of 150
# of the 184 core items; a first divergence caused by a fault shows within the first tens of
# tokens, and 184 answers of 128 tokens with 5 alternatives stay under 4 MB (3.9 with an id on
# every token and alternative, as llama.cpp's server sends them).
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
        description="[text, logprob, [[alt, logprob], ...]] (+ hex bytes when not the text, + "
        "token id when the engine sent it); an alternative [alt, logprob] (+ hex, + id)."
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


# Tokens a server renders as markup or as nothing: an end-of-turn or end-of-text token is
# `<|im_end|>` on vLLM and sglang and empty on llama.cpp; `</s>`, `<eos>` and friends elsewhere.
SPECIAL = re.compile(r"<\|[^<>|\s]{1,40}\|>|</?s>|<(?:eos|bos|pad|unk|end_of_turn|start_of_turn)>")
TOKEN_EXTRA, ALT_EXTRA = 3, 2  # where the optional hex bytes and id start in a stored entry


def text_key(text: str, hex_bytes: str | None = None) -> str:
    """What a token is, by its bytes, with renderings that differ between engines folded: bytes
    that are no whole UTF-8 character (shown as nothing, U+FFFD or the bytes themselves) dropped,
    a special token (`<|im_end|>`) the same as an empty one."""
    if hex_bytes is not None:
        text = bytes.fromhex(hex_bytes).decode("utf-8", "ignore")
    if "\ufffd" in text:
        text = text.replace("\ufffd", "")
    if "<" in text and SPECIAL.fullmatch(text):
        return ""
    return text


def entry_hex(entry: list[Any], start: int) -> str | None:
    """The hex bytes a stored entry keeps (None: its bytes are its text)."""
    return entry[start] if len(entry) > start and entry[start].__class__ is str else None


def entry_id(entry: list[Any], start: int) -> int | None:
    """The token id a stored entry keeps (None: the engine sent none)."""
    last = entry[-1] if len(entry) > start else None
    return last if last.__class__ is int else None


def entry_key(entry: list[Any], start: int) -> str:
    """A stored entry's `text_key` (start: TOKEN_EXTRA for a token, ALT_EXTRA for an alternative)."""
    return text_key(str(entry[0]), entry_hex(entry, start))


def token_key(token: list[Any]) -> str:
    """A stored token's `text_key`."""
    return entry_key(token, TOKEN_EXTRA)


def token_id(token: list[Any]) -> int | None:
    return entry_id(token, TOKEN_EXTRA)


def same_token(a: list[Any], b: list[Any]) -> bool:
    """Two stored tokens are one: the same `text_key`, and the same id when both have one (two
    tokens a server renders alike, such as two halves of characters, differ by id). The text is
    checked too: llama.cpp's server lists a character split over tokens as its last token's id
    with the whole character's text."""
    ia, ib = entry_id(a, TOKEN_EXTRA), entry_id(b, TOKEN_EXTRA)
    if ia is not None and ib is not None and ia != ib:
        return False
    if a[0] == b[0] and entry_hex(a, TOKEN_EXTRA) == entry_hex(b, TOKEN_EXTRA):
        return True  # the common case: the same plain text
    return token_key(a) == token_key(b)


class TopK:
    """The stored top-K of one position (the chosen token included), to look tokens up in: by id
    when every alternative has one, else by `text_key`."""

    __slots__ = ("by_id", "by_key")

    def __init__(self, token: list[Any]) -> None:
        alts = list(token[2] or [])
        ids = [entry_id(a, ALT_EXTRA) for a in alts]
        chosen = entry_id(token, TOKEN_EXTRA)
        self.by_id: dict[int, float] | None = None
        if alts and all(i is not None for i in ids) and chosen is not None:
            self.by_id = {i: float(a[1]) for i, a in zip(ids, alts, strict=True) if i is not None}
            self.by_id.setdefault(chosen, float(token[1]))
        self.by_key = {entry_key(a, ALT_EXTRA): float(a[1]) for a in alts}
        self.by_key.setdefault(token_key(token), float(token[1]))

    def get(self, token: list[Any]) -> float | None:
        """The logprob this position gave `token` (a stored token of either lane); None: not in
        its top-K."""
        ident = entry_id(token, TOKEN_EXTRA)
        if self.by_id is not None and ident is not None:
            return self.by_id.get(ident)
        return self.by_key.get(token_key(token))

    def values(self) -> list[float]:
        return list((self.by_id or self.by_key).values())


# Why an answer's logprobs were unusable (Capture names the reason when no answer had usable ones).
NAN = "NaN logprobs"
INFINITE = "infinite logprobs"
POSITIVE = "positive logprobs (a log-probability is at most 0)"
NOT_A_NUMBER = "logprobs that are not numbers"


def _entry(raw: Any) -> list[Any]:
    """[text, logprob] (+ hex bytes, + id) of one `{token, logprob, bytes, id}` object.

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
            raise ValueError(NOT_A_NUMBER)
        try:
            value = float(value)
        except OverflowError:  # an integer of hundreds of digits
            raise ValueError(POSITIVE) from None
    if value != value:
        raise ValueError(NAN)
    value = round(value, PLACES)
    if value > 0.0:  # +inf included: a log-probability is at most 0
        raise ValueError(INFINITE if value == math.inf else POSITIVE)
    out: list[Any] = [
        text if len(text) <= TEXT_CAP else text[:TEXT_CAP],
        value if value > -9999.0 else -9999.0,  # -inf is written as vLLM writes it
    ]
    data = raw.get("bytes")
    if data.__class__ is list:
        try:
            blob: bytes | None = bytes(data)
        except (TypeError, ValueError):  # not a list of ints 0-255: no bytes to keep
            blob = None
        if blob is not None:
            try:
                same = blob == text.encode("utf-8")
            except UnicodeEncodeError:  # text with a lone surrogate is never what was emitted
                same = False
            if not same:
                out.append(blob.hex())
    ident = raw.get("id")  # llama.cpp's server: the token id of every token and alternative
    if ident.__class__ is int and ident >= 0:
        out.append(ident)
    return out


def _chosen_ids(raw: dict[str, Any], steps: int) -> list[int] | None:
    """vLLM's `choices[0].token_ids` (folded into the logprobs by response.py), when it is one
    int per logprobs step: the chosen tokens' ids."""
    ids = raw.get("token_ids")
    if ids.__class__ is not list or len(ids) != steps:
        return None
    return ids if all(i.__class__ is int and i >= 0 for i in ids) else None


def parse_logprobs(raw: Any, *, top_k: int, cap: int, item_id: str) -> TokenTrace | None:
    """The trace of one answer from `choices[0].logprobs`; None when the body carries none.
    ValueError, saying what is wrong, for logprobs that are there but unusable (an object of the
    wrong type, NaN, infinite or positive logprobs): the caller drops them, never the item.

    This runs on every answer of a run (up to `cap` x (1 + `top_k`) entries), so it is written
    for speed: no validation pass over the result (`model_construct`), type checks by class."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"choices[0].logprobs is {_kind(raw)}, not an object")
    content = raw.get("content")
    if content is None:
        return None
    if not isinstance(content, list):
        raise ValueError(f"choices[0].logprobs.content is {_kind(content)}, not a list")
    entry = _entry
    ids = _chosen_ids(raw, len(content))
    tokens: list[list[Any]] = []
    for i, step in enumerate(content[:cap]):
        head = entry(step)
        tops = step.get("top_logprobs")
        head.insert(2, [entry(t) for t in tops[:top_k]] if tops.__class__ is list else [])
        if ids is not None and head[-1].__class__ is not int:
            head.append(ids[i])
        tokens.append(head)
    return TokenTrace.model_construct(
        id=item_id, top_k=top_k, total=len(content), cap=cap, tokens=tokens
    )


def _kind(value: Any) -> str:
    """`a list`, `a str`, ... (JSON's names would be clearer, Python's are what the reader knows)."""
    name = type(value).__name__
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


IDS_FIELD = "return_token_ids"  # vLLM: the chosen tokens' ids in choices[0].token_ids


def refusal(message: str, status: int | None) -> bool:
    """Whether an HTTP error refuses the logprobs request itself (not the item)."""
    return status in (400, 422) and "logprob" in message.lower()


def ids_refusal(message: str, status: int | None) -> bool:
    """Whether an HTTP error refuses the token-ids field (an API that knows no such field)."""
    return status in (400, 422) and IDS_FIELD in message


class Capture:
    """The capture state of one run: on until the endpoint refuses logprobs, then off (once)."""

    def __init__(self, top_k: int | None, cap: int) -> None:
        self.top_k, self.cap = top_k, cap
        self.refused: str | None = None  # the engine's reason, from its first refusal
        self.ids = True  # ask for token ids too, until the endpoint refuses the field
        self.answered = 0  # answers seen while capture was on
        self.traced = 0  # ... that carried logprobs
        self.unusable: dict[str, int] = {}  # why answers' logprobs were dropped, how often
        self._lock = threading.Lock()

    @property
    def on(self) -> bool:
        return self.top_k is not None and self.refused is None

    def body(self) -> JSONObject:
        """The request fields that ask for logprobs (none once refused or when off)."""
        if not self.on:
            return {}
        out: JSONObject = {"logprobs": True, "top_logprobs": self.top_k}
        if self.ids:
            out[IDS_FIELD] = True
        return out

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.refused = self.refused or reason

    def refuse_ids(self) -> None:
        self.ids = False

    def take(self, raw: Any, item_id: str) -> bytes | None:
        """The tokens.jsonl line of one answer sent with logprobs asked for (None: it carried
        none). Written out at once, with the collector paused: a trace is ~1,000 small lists,
        and held as objects until the items' next group commit they were what made the
        collector walk the whole heap during a run."""
        assert self.top_k is not None
        why = None
        with collector_paused():
            try:
                trace = parse_logprobs(raw, top_k=self.top_k, cap=self.cap, item_id=item_id)
            except ValueError as exc:
                trace, why = None, str(exc)
            line = None if trace is None else trace_line(trace)
            del trace
        with self._lock:
            self.answered += 1
            self.traced += line is not None
            if why is not None:
                self.unusable[why] = self.unusable.get(why, 0) + 1
        return line

    def unavailable(self, earlier: FidelityRecord | None = None) -> str | None:
        """Why the run has no tokens to compare, or None when it has them."""
        if self.top_k is None:
            return "capture turned off (--no-logprobs)"
        if self.refused:
            return self.refused
        if self.answered and not self.traced and self.unusable:
            why = max(self.unusable, key=lambda k: self.unusable[k])
            numerics = why in (NAN, INFINITE, POSITIVE)
            return f"the endpoint's logprobs were unusable on every answer: {why}" + (
                " (an engine numerics fault)" if numerics else ""
            )
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

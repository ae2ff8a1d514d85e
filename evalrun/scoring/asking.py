"""Asking one item and grading its answer: the request it sends (`build_params`), its record
when the request failed, the verdict when it was answered, and `--repeats`.

Everything asking takes that is the same for every item of a run (client, model, options,
retries, the run's stop test and try counter, logprob capture, the judge) is one `AskContext`,
built once a run.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalrun.base.errors import SuiteError
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.client import Attempt, RequestFailed, RetryPolicy, chat_attempt
from evalrun.endpoint.diagnose import diagnose_error, diagnose_response
from evalrun.endpoint.logprobs import IDS_FIELD, Capture, ids_refusal, refusal
from evalrun.endpoint.options import RequestOptions
from evalrun.endpoint.response import ItemError
from evalrun.scoring.judge import Judge
from evalrun.store import ItemRecord, now_iso
from evalrun.suite.load import GraderSpec, Item
from evalrun.verdicts import Grade, GradeTimeout

if TYPE_CHECKING:
    import openai

CONTEXT_REJECTED = "prompt rejected: longer than the endpoint's context window"

Scored = tuple[ItemRecord, str | None, bytes | None]  # record, model served, its tokens' line


@dataclass(frozen=True)
class AskContext:
    """What asking any item of one run takes: built once a run, shared by its workers."""

    client: openai.AsyncOpenAI
    model: str
    options: RequestOptions
    retry: RetryPolicy
    rng: random.Random  # the retries' jitter, seeded by `retry.seed`
    should_stop: Callable[[], bool]  # the run is stopping: give up between tries
    on_try: Callable[[RequestFailed | None], None]  # every try's outcome (the endpoint's health)
    notice: Callable[[str], None]  # one line when a request waits (a 429's Retry-After)
    capture: Capture  # logprobs asked, and whether the endpoint refused them
    judge: Judge


@dataclass
class Answered:
    """An item the endpoint answered, its verdict still to come."""

    item: Item
    base: JSONObject
    got: Attempt  # the response, its tries, the model served
    trace: bytes | None  # its tokens.jsonl line (endpoint/logprobs.py)


def build_params(item: Item, model: str, options: RequestOptions) -> JSONObject:
    """Keyword arguments of chat.completions.create for one item: the run's sampling options,
    its max_tokens (scaled), its tools/tool_choice, plus the extra body."""
    params: JSONObject = {
        "model": model,
        "messages": item.messages,
        **options.body(item.max_tokens),
    }
    if item.tools is not None:
        params["tools"] = item.tools
    if item.tool_choice is not None:
        params["tool_choice"] = item.tool_choice
    if options.extra_body:
        params["extra_body"] = options.extra_body
    return params


def request_record(params: JSONObject) -> JSONObject:
    """The request parameters kept in items.jsonl (messages are pinned by the suite sha256)."""
    out = {k: v for k, v in params.items() if k not in ("messages", "extra_body")}
    if "extra_body" in params:
        out["extra"] = params["extra_body"]
    return out


def expects_tool_call(spec: GraderSpec) -> bool:
    """Whether an item's grader passes only a tool call: `tool_call` naming a function, `all`
    with such a part, `any` whose every part is one."""
    params = spec.params()
    if spec.kind == "tool_call":
        return params.get("name") is not None
    subs = [GraderSpec(**sub) for sub in params.get("graders") or [] if isinstance(sub, dict)]
    if spec.kind == "all":
        return any(expects_tool_call(sub) for sub in subs)
    if spec.kind == "any":
        return bool(subs) and all(expects_tool_call(sub) for sub in subs)
    return False


def check_graders(items: list[Item], known: Collection[str], params: str | None = None) -> None:
    """SuiteError naming the grader kinds the items use that no grader registers (`known`: the
    kinds registered, `Judge.kinds`), or the first item whose grader parameters do not validate
    (`params`: `Judge.params_problem`), before a run is created."""
    unknown = sorted({i.grader.kind for i in items} - set(known))
    if unknown:
        raise SuiteError(
            f"unknown grader kind(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(known))}; fix the suite items"
        )
    if params:
        raise SuiteError(f"{params}; fix the suite (`evalrun suite check` lists every problem)")


async def score_item(item: Item, ctx: AskContext) -> Scored:
    """Ask one item and wait for its verdict (an item in error is never graded)."""
    got = await ask_item(item, ctx)
    return await judged(got, ctx.judge) if isinstance(got, Answered) else got


async def judged(answered: Answered, judge: Judge) -> Scored:
    """The record of an answered item, graded by the run's judge."""
    item, resp = answered.item, answered.got.response
    try:
        verdict = await judge.grade(item, resp)  # runs the garble detector too: garbled fails
    except GradeTimeout as exc:  # the suite's pattern, not the model, is at fault: never graded
        return (
            ItemRecord(
                **answered.base,
                status="error",
                response=resp,
                error=ItemError(kind="grader_timeout", message=str(exc)),
                attempts=answered.got.attempts,
                latency_s=resp.latency_s,
                finished_at=now_iso(),
            ),
            answered.got.model,
            answered.trace,
        )
    return (
        ItemRecord(
            **answered.base,
            status="passed" if verdict.passed else "failed",
            response=resp,
            grade=verdict.model_copy(update={"garble": None}),  # the record keeps it as `garble`
            diagnoses=diagnose_response(
                resp, tools_offered=bool(item.tools), tool_expected=expects_tool_call(item.grader)
            ),
            garble=verdict.garble,
            attempts=answered.got.attempts,
            latency_s=resp.latency_s,
            finished_at=now_iso(),
        ),
        answered.got.model,
        answered.trace,
    )


async def ask_item(item: Item, ctx: AskContext) -> Scored | Answered:
    """Ask one item: its answer to grade, or its final record when the request failed."""
    capture = ctx.capture
    asked = capture.body()
    params = {**build_params(item, ctx.model, ctx.options), **asked}
    base: JSONObject = {
        "id": item.id,
        "category": item.category,
        "request": request_record(params),
    }
    try:
        got = await chat_attempt(
            ctx.client,
            params,
            retry=ctx.retry,
            rng=ctx.rng,
            should_stop=ctx.should_stop,
            on_try=ctx.on_try,
            on_wait=lambda text: ctx.notice(f"{text} on {item.id}"),
            logprobs=(lambda raw: capture.take(raw, item.id)) if asked else None,
        )
    except RequestFailed as exc:
        if asked and refusal(exc.message, exc.http_status):
            # The endpoint will not give logprobs: noted once, this item asked again without.
            capture.refuse(exc.message)
            return await ask_item(item, ctx)
        if IDS_FIELD in asked and ids_refusal(exc.message, exc.http_status):
            # An API that rejects fields it does not know: token ids are not asked again.
            capture.refuse_ids()
            return await ask_item(item, ctx)
        return _failed(base, exc), None, None
    trace = got.response.logprobs if asked else None  # the tokens.jsonl line capture made
    got.response.logprobs = None  # kept in tokens.jsonl, not in the item record
    return Answered(item, base, got, trace)


def _failed(base: JSONObject, exc: RequestFailed) -> ItemRecord:
    """The final record of an item whose request failed: an error to ask again, or a failure of
    the lane when the serving contract cannot take the prompt at all (context length:
    deterministic, so a shrunken max-model-len must cost score)."""
    error = exc.as_error()
    diagnoses = diagnose_error(error)
    rejected = "context_length" in diagnoses
    return ItemRecord(
        **base,
        status="failed" if rejected else "error",
        error=error,
        diagnoses=diagnoses,
        grade=Grade(passed=False, detail=CONTEXT_REJECTED) if rejected else None,
        attempts=exc.attempts,
        finished_at=now_iso(),
    )


async def score_repeated(
    repeats: int,
    ask: Callable[[], Awaitable[Scored]],
    should_stop: Callable[[], bool],
) -> Scored:
    """Ask an item `repeats` times (`ask` scores it once), one after another: the first run's
    record, with every run's {status, detail, garbled} in `repeats` (compare pairs items on their
    majority outcome)."""
    rec, served, trace = await ask()  # the first answer's tokens are the item's
    if repeats == 1:
        return rec, served, trace
    runs = [rec]
    for _ in range(repeats - 1):
        if should_stop():
            break
        more, again, _ = await ask()
        runs.append(more)
        served = served or again
    rec.repeats = [r.outcome() for r in runs]
    return rec, served, trace


def unanswered(item: Item, ctx: AskContext, why: str) -> ItemRecord:
    """The record of an item whose request the run ended (the server had fallen silent)."""
    return ItemRecord(
        id=item.id,
        category=item.category,
        request=request_record(build_params(item, ctx.model, ctx.options)),
        status="error",
        error=ItemError(
            kind="timeout",
            message=f"not answered: {why}; the run stopped, --resume asks this item again",
        ),
        finished_at=now_iso(),
    )

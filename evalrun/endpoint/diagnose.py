"""Endpoint misconfigurations users actually hit, recognised per item, each with a one-line hint.

A diagnosis is about the serving setup, not the model's skill: an answer that sits only in the
reasoning channel, a 400 for `tool_choice: "auto"`, a raw `<think>` block, tool calls left as text,
`finish_reason: length` with nothing to show, a prompt rejected for context length.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TypedDict

from evalrun.endpoint.response import ItemError, Response

HINTS: dict[str, str] = {
    # FIELD (vLLM 0.32, real engine): the text is in `message.reasoning` (not reasoning_content)
    # with content null. enable_thinking false moves it back only with parsers that honour it
    # (qwen3, deepseek_v3); deepseek_r1 files all text before </think> as reasoning regardless.
    "reasoning_only": (
        "the answer is only in the reasoning channel (reasoning_content; vLLM: reasoning) and "
        "content is empty: a --reasoning-parser is on. Parsers that honour enable_thinking "
        '(vLLM qwen3, deepseek_v3) move it back with chat_template_kwargs {"enable_thinking": '
        "false} (contract `request:`); deepseek_r1 ignores that: drop --reasoning-parser, or "
        "use the parser that matches the model"
    ),
    "reasoning_exhausted_tokens": (
        "thinking used up max_tokens before any answer (finish_reason length, content empty); "
        'turn thinking off (chat_template_kwargs {"enable_thinking": false}) or raise max_tokens'
    ),
    "tool_choice_400": (
        'the server rejects tool_choice "auto": relaunch vLLM with --enable-auto-tool-choice '
        "--tool-call-parser <parser for your model> (e.g. hermes, llama3_json, mistral); in a "
        "contract: args enable-auto-tool-choice: true and tool-call-parser: <parser>"
    ),
    "think_in_content": (
        "a raw <think> block is left in content: launch with the --reasoning-parser that matches "
        "the model (vLLM/sglang), or fix the chat template"
    ),
    "raw_tool_call": (
        "tool calls came back as raw text in content, not tool_calls: launch with the matching "
        "--tool-call-parser (vLLM also needs --enable-auto-tool-choice)"
    ),
    # FIELD (sglang 0.5.23): without --tool-call-parser a request with tools gets HTTP 200 and
    # plain text (vLLM 0.32 answers 400); nothing fails but the item, so the answer must say it.
    "no_tool_call": (
        "a tool call was expected but the answer is plain text with no tool_calls: sglang without "
        "--tool-call-parser answers tools this way (HTTP 200; vLLM answers 400), and a chat "
        "template that ignores `tools` hides them from the model; set tool-call-parser: <parser "
        "for the model> (evalrun lint checks the contract), or the model chose not to call"
    ),
    "length_no_answer": (
        "finish_reason length with no answer at all: check the chat template and stop tokens, "
        "or raise max_tokens"
    ),
    "context_length": (
        "the prompt was rejected for context length: raise --max-model-len (vLLM), "
        "--context-length (sglang) or -c/--ctx-size (llama.cpp)"
    ),
    # FIELD (vLLM 0.32): a parser that swallows everything sends content null, reasoning "".
    "empty_response": (
        "content and reasoning are both empty (null): a reasoning-parser fault (often only under "
        "concurrency); check --reasoning-parser, compare with --concurrency 1"
    ),
    "model_not_found": (
        "the endpoint does not serve that model name: pass --model with a name from /v1/models "
        "(vLLM: --served-model-name)"
    ),
}

_TOOL_CHOICE_RE = re.compile(
    r"enable-auto-tool-choice|tool.choice.*(auto|requires|not supported)", re.IGNORECASE
)
_CONTEXT_RE = re.compile(
    r"context length|context window|context size|max_model_len|maximum context|"
    r"too long and exceeds|longer than the model|exceeds? the (available )?context",
    re.IGNORECASE,
)
_MODEL_RE = re.compile(
    r"model .*(does not exist|not found)|no such model|unknown model", re.IGNORECASE
)
_THINK_RE = re.compile(r"</?think>", re.IGNORECASE)
_RAW_TOOL_RE = re.compile(
    r"<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<function[=>]|<\|tool_call|"
    r"\{\s*\"(name|function)\"\s*:\s*\"[^\"]+\"\s*,\s*\"(arguments|parameters)\"\s*:",
    re.DOTALL,
)


def diagnose_error(error: ItemError | None) -> list[str]:
    """Diagnoses of a failed request (its `error`: kind, message, http_status)."""
    if error is None:
        return []
    status, message = error.http_status, error.message
    out = []
    if status == 400 and _TOOL_CHOICE_RE.search(message):
        out.append("tool_choice_400")
    if status in (400, 413, 422) and _CONTEXT_RE.search(message):
        out.append("context_length")
    if status in (400, 404) and _MODEL_RE.search(message):
        out.append("model_not_found")
    return out


def diagnose_response(
    response: Response, *, tools_offered: bool = False, tool_expected: bool = False
) -> list[str]:
    """Diagnoses of an answer that came back (HTTP 200). `tool_expected`: the item's grader
    wants a tool call (a prose answer to a direct question is fine even with tools offered)."""
    content = response.content or ""
    reasoning = response.reasoning or ""
    has_answer = bool(content.strip()) or bool(response.tool_calls)
    out = []
    if not has_answer and reasoning.strip():
        truncated = response.finish_reason == "length"
        out.append("reasoning_exhausted_tokens" if truncated else "reasoning_only")
    elif not has_answer and response.finish_reason == "length":
        out.append("length_no_answer")
    elif response.content is None and not response.tool_calls:
        # null, not "": the server dropped the text (a model that says nothing sends "")
        out.append("empty_response")
    if _THINK_RE.search(content):
        out.append("think_in_content")
    if tools_offered and not response.tool_calls and _RAW_TOOL_RE.search(content):
        out.append("raw_tool_call")
    elif tool_expected and not response.tool_calls and content.strip():
        out.append("no_tool_call")
    return out


class DiagnosisCount(TypedDict):
    """One diagnosis kind summed over a run's items, as run.json's summary holds it."""

    kind: str
    count: int
    hint: str


def summarize(kinds: Iterable[str]) -> list[DiagnosisCount]:
    """[{kind, count, hint}] over all items, most frequent first."""
    counts = Counter(kinds)
    return [
        {"kind": k, "count": n, "hint": HINTS.get(k, "")}
        for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]

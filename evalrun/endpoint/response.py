"""What an endpoint said for one item, in the shape graders and the garble detector read."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """One function call the model asked for."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Function name as the model emitted it.")
    arguments: Any = Field(
        default=None,
        description="Arguments: the parsed JSON object when it parses, else the raw string.",
    )

    @classmethod
    def from_raw(cls, name: str, arguments: Any) -> ToolCall:
        """Build a call, parsing a JSON-string `arguments` the way the OpenAI API sends it."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                pass
        return cls(name=name, arguments=arguments)


class Usage(BaseModel):
    """Token counts the server reported."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int | None = Field(default=None, description="Prompt tokens.")
    completion_tokens: int | None = Field(default=None, description="Generated tokens.")


class Response(BaseModel):
    """One chat completion, read in full."""

    model_config = ConfigDict(extra="forbid")

    content: str | None = Field(default=None, description="message.content (the answer channel).")
    reasoning: str | None = Field(
        default=None, description="reasoning_content or reasoning (the thinking channel)."
    )
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Parsed tool calls.")
    finish_reason: str | None = Field(default=None, description="stop, length, tool_calls, ...")
    usage: Usage | None = Field(default=None, description="Token usage, when reported.")
    latency_s: float | None = Field(default=None, description="Wall time of the request.")
    logprobs: Any = Field(
        default=None,
        exclude=True,
        description="choices[0].logprobs as sent, or what the request's `logprobs` reader made "
        "of them (never stored here: tokens.jsonl keeps them).",
    )


class ItemError(BaseModel):
    """Why an item has no answer to grade: the request failed, or its grader timed out."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="connect, timeout, http, bad_response, tls, grader_timeout, ...")
    message: str = Field(description="One line: what went wrong.")
    http_status: int | None = Field(default=None, description="The HTTP status, when one came.")


def parse_completion(data: Any) -> tuple[Response, str | None]:
    """Response + served model name from a chat-completion JSON body.

    ValueError, saying which field, for anything that is not a chat completion: a server's body is
    untrusted input, and a malformed 200 must become an item in error, never a crash or a grade.
    Token counts that are not integers are dropped (they are informational only).
    """
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices in the body")
    choice = choices[0]
    msg = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(msg, dict):
        raise ValueError("choices[0].message is missing")
    reasoning = msg.get("reasoning_content")
    if reasoning is None:
        reasoning = msg.get("reasoning")
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise ValueError("choices[0].finish_reason is not a string")
    usage = data.get("usage")
    return Response(
        content=_content(msg.get("content")),
        reasoning=reasoning if isinstance(reasoning, str) else None,
        tool_calls=_tool_calls(msg.get("tool_calls")),
        finish_reason=finish,
        usage=Usage(
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
        )
        if isinstance(usage, dict)
        else None,
        logprobs=_logprobs(choice),
    ), data.get("model") if isinstance(data.get("model"), str) else None


def _logprobs(choice: dict[str, Any]) -> Any:
    """choices[0].logprobs, with vLLM's `choices[0].token_ids` (the chosen tokens' ids, sent when
    asked `return_token_ids`) folded in as its `token_ids`."""
    logprobs = choice.get("logprobs")
    ids = choice.get("token_ids")
    if isinstance(logprobs, dict) and isinstance(ids, list):
        return {**logprobs, "token_ids": ids}
    return logprobs


def _content(content: Any) -> str | None:
    """message.content: a string, null, or a list of text parts (joined)."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"message.content is a {type(content).__name__}, not text")
    texts = []
    for part in content:
        text = part.get("text", "") if isinstance(part, dict) else None
        if not isinstance(text, str):
            raise ValueError("message.content holds a part whose text is not a string")
        texts.append(text)
    return "".join(texts)


def _tool_calls(raw: Any) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("message.tool_calls is not a list")
    calls = []
    for n, tc in enumerate(raw):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name", ""), str):
            raise ValueError(f"message.tool_calls[{n}] is not a {{function: {{name, arguments}}}}")
        calls.append(ToolCall.from_raw(fn.get("name", ""), fn.get("arguments")))
    return calls


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def example_to_response(example: Any) -> Response:
    """A Response from an answer in the shape of a suite `accept`/`reject` example: a string (the
    content) or {content, tool_calls: [{name, arguments}], reasoning, finish_reason}. Raises
    ValueError saying what is wrong with any other shape (answers files are user input)."""
    if isinstance(example, str):
        return Response(content=example, finish_reason="stop")
    if not isinstance(example, dict):
        raise TypeError(f"answer must be a string or an object, not {type(example).__name__}")
    unknown = set(example) - {
        "content",
        "tool_calls",
        "reasoning",
        "reasoning_content",
        "finish_reason",
    }
    if unknown:
        raise ValueError(
            f"unknown answer keys {sorted(unknown)}; use content, tool_calls, reasoning"
        )
    content = example.get("content")
    reasoning = example.get("reasoning", example.get("reasoning_content"))
    for key, value in (("content", content), ("reasoning", reasoning)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key} must be a string or null")
    raw_calls = example.get("tool_calls") or []
    if not isinstance(raw_calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in raw_calls
    ):
        raise ValueError("tool_calls must be a list of {name, arguments} objects")
    calls = [ToolCall.from_raw(c["name"], c.get("arguments")) for c in raw_calls]
    return Response(
        content=content,
        reasoning=reasoning,
        tool_calls=calls,
        finish_reason=example.get("finish_reason", "tool_calls" if calls else "stop"),
    )

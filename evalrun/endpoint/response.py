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

"""Diagnoses of answers shaped as the real sglang 0.5.23 sends them (seen on the sglang-cpu lane).

- `--reasoning-parser deepseek-r1` on a model that writes no </think>: the whole answer is in
  `reasoning_content` and `content` is "" (vLLM: `reasoning`, content null). Both are
  reasoning_only.
- Tools without `--tool-call-parser`: HTTP 200 with plain text and no tool_calls, where vLLM
  answers 400. There is no error to catch: the diagnosis (no_tool_call) comes from the answer,
  for items whose grader expected a call.
"""

from __future__ import annotations

import pytest

from evalrun.endpoint.diagnose import HINTS, diagnose_response
from evalrun.endpoint.response import Response, ToolCall
from evalrun.scoring.asking import expects_tool_call
from evalrun.suite.load import GraderSpec


@pytest.mark.parametrize("content", ["", None])
def test_reasoning_only_with_empty_or_null_content(content: str | None) -> None:
    resp = Response(
        content=content, reasoning="The capital of France is Paris.", finish_reason="stop"
    )
    assert diagnose_response(resp) == ["reasoning_only"]
    cut = resp.model_copy(update={"finish_reason": "length"})
    assert diagnose_response(cut) == ["reasoning_exhausted_tokens"]


SGLANG_PLAIN = "Lisbon in celsius is approximately 1.8°C (3.5°F) in Celsius."  # real, no parser


def test_plain_text_where_a_call_was_expected_is_no_tool_call() -> None:
    resp = Response(content=SGLANG_PLAIN, finish_reason="stop")
    assert diagnose_response(resp, tools_offered=True, tool_expected=True) == ["no_tool_call"]
    # Tools offered but the item wants a direct answer: prose is right, nothing to say.
    assert diagnose_response(resp, tools_offered=True, tool_expected=False) == []
    assert "--tool-call-parser" in HINTS["no_tool_call"] and "sglang" in HINTS["no_tool_call"]


def test_a_call_left_as_text_is_raw_tool_call_not_no_tool_call() -> None:
    # sglang, tool_choice "required" and no parser: the JSON call lands in content (real shape).
    content = '[\n  {\n    "name": "get_weather",\n    "parameters": {\n      "city": "Lisbon"'
    resp = Response(content=content, finish_reason="length")
    assert diagnose_response(resp, tools_offered=True, tool_expected=True) == ["raw_tool_call"]


def test_a_parsed_call_or_an_empty_answer_is_not_no_tool_call() -> None:
    called = Response(tool_calls=[ToolCall(name="set_timer", arguments='{"minutes": 12}')])
    assert diagnose_response(called, tools_offered=True, tool_expected=True) == []
    empty = Response(content=None, finish_reason="stop")
    assert diagnose_response(empty, tools_offered=True, tool_expected=True) == ["empty_response"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"kind": "tool_call", "name": "get_weather"}, True),
        ({"kind": "tool_call", "name": None}, False),  # "answer directly" items
        ({"kind": "tool_call"}, False),
        (
            {"kind": "all", "graders": [{"kind": "tool_call", "name": None}, {"kind": "regex"}]},
            False,
        ),
        ({"kind": "all", "graders": [{"kind": "tool_call", "name": "f"}, {"kind": "regex"}]}, True),
        # any: prose may pass through another sub-grader, so a call is expected only if every one needs it
        (
            {"kind": "any", "graders": [{"kind": "exact"}, {"kind": "tool_call", "name": "f"}]},
            False,
        ),
        (
            {
                "kind": "any",
                "graders": [{"kind": "tool_call", "name": "f"}, {"kind": "tool_call", "name": "g"}],
            },
            True,
        ),
        ({"kind": "numeric", "answer": 63}, False),
    ],
)
def test_which_graders_expect_a_tool_call(spec: dict, expected: bool) -> None:
    assert expects_tool_call(GraderSpec(**spec)) is expected

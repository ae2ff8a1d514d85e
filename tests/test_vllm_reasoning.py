"""Reasoning parsers on the real vLLM, serving the lane's think model (SmolLM2 with <think> tokens).

FIELD (vLLM 0.32): the parsed text is in `message.reasoning` with `content: null`. deepseek_r1
files all text before `</think>` as reasoning whatever the request says, so
`chat_template_kwargs: {enable_thinking: false}` does not help; qwen3 honours it. evalrun's
diagnosis (`reasoning_only`) and its hint must say what really changes the outcome.
Two boots: one per parser; each is asked with and without enable_thinking false.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.vllm import THINK_MODEL, pick, sample_suite, score_on

from evalrun.endpoint.diagnose import HINTS
from evalrun.serving import Server, boot_server, lint_contract, load_contract
from evalrun.suite import Suite, load_suite

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1200)]

OFF = {"chat_template_kwargs": {"enable_thinking": False}}
ITEMS = ["canary-001", "canary-005", "factual-001"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(sample_suite(tmp_path_factory.mktemp("think-suite"), pick(ITEMS)))


def sets(parser: str) -> list[str]:
    return ["port=0", f"model={THINK_MODEL}", f"reasoning-parser={parser}"]


@pytest.fixture(scope="module", params=["deepseek_r1", "qwen3"])
def parser_server(
    request: pytest.FixtureRequest, vllm_contract: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Server]]:
    parser = request.param
    contract = load_contract(vllm_contract, sets=sets(parser))
    log = tmp_path_factory.mktemp(f"think-{parser}") / "server.log"
    with boot_server(contract, log) as server:
        yield parser, server


def run(server: Server, suite: Suite, tmp_path: Path, extra: dict | None) -> list:
    return score_on(server, suite, tmp_path / "results", extra=extra)[1]


def test_reasoning_parser_is_diagnosed_and_the_hint_says_what_fixes_it(
    parser_server: tuple[str, Server], suite: Suite, tmp_path: Path, vllm_contract: Path
) -> None:
    parser, server = parser_server
    plain = run(server, suite, tmp_path / "plain", None)
    # The answer moved out of content: every item is reasoning_only and fails.
    assert all(i.diagnoses == ["reasoning_only"] for i in plain), [i.diagnoses for i in plain]
    assert all(i.status == "failed" and i.response.content is None for i in plain)
    assert all((i.response.reasoning or "").strip() for i in plain)

    off = run(server, suite, tmp_path / "off", OFF)
    if parser == "qwen3":
        # The suggested fix works with a parser that honours enable_thinking.
        assert all(i.diagnoses == [] and (i.response.content or "").strip() for i in off)
        assert sum(i.status == "passed" for i in off) >= 2
    else:
        # deepseek_r1 ignores it: still reasoning_only; the hint and lint say what does work.
        assert all(i.diagnoses == ["reasoning_only"] for i in off)
        assert "deepseek_r1 ignores that: drop --reasoning-parser" in HINTS["reasoning_only"]
        data_sets = [*sets(parser), "request.chat_template_kwargs={enable_thinking: false}"]
        found = lint_contract(vllm_contract, sets=data_sets).findings
        assert any("whatever enable_thinking says" in f.message for f in found)

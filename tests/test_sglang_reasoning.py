"""The reasoning parser on the real sglang: `--reasoning-parser deepseek-r1` boots on SmolLM2's
tokenizer (vLLM's refuses it) and files the whole answer as reasoning, which sglang sends as
`reasoning_content` with `content: ""` (vLLM: `reasoning`, content null). evalrun diagnoses both
shapes as reasoning_only, with a hint, and lint warns before the boot. One boot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.lanes import score_on

from evalrun.serving import boot_server, load_contract
from evalrun.serving.lint import lint_contract
from evalrun.suite import load_suite

pytestmark = [pytest.mark.sglang, pytest.mark.timeout(1200)]

PARSER = "reasoning-parser=deepseek-r1"
CANARIES = ("canary-001", "canary-002", "canary-003")


def test_deepseek_r1_parser_is_reasoning_only_with_empty_content(
    sglang_contract: Path, tmp_path: Path
) -> None:
    lint = lint_contract(sglang_contract, sets=["port=0", PARSER])
    assert "reasoning_parser" in {f.kind for f in lint.findings}
    contract = load_contract(sglang_contract, sets=["port=0", PARSER])
    suite = load_suite("core")
    results = tmp_path / "results"
    with boot_server(contract, tmp_path / "server.log") as server:
        record, items = score_on(server, suite, results, tags=("probe",), label="r1")
        # FIELD (sglang 0.5.23): deepseek-r1's detector reasons "always", so the switch that
        # qwen3-style parsers honour changes nothing here (as vLLM's deepseek_r1).
        _, switched = score_on(
            server, suite, results, items=CANARIES, label="r1-no-thinking",
            extra={"chat_template_kwargs": {"enable_thinking": False}},
        )  # fmt: skip
    answered = [rec for rec in items if rec.response is not None]
    assert len(answered) >= 12, [(r.id, r.status, r.error) for r in items]
    only = [rec for rec in answered if "reasoning_only" in rec.diagnoses]
    # Every answer that ended on its own is in the reasoning channel, and content is "" (not null).
    stopped = [rec for rec in answered if rec.response.finish_reason == "stop"]
    assert stopped and {rec.id for rec in stopped} <= {rec.id for rec in only}
    for rec in only:
        assert rec.response.content == "" and rec.response.reasoning, rec.response
        assert rec.status == "failed"
    # The switch leaves every answer in the reasoning channel: stopped there, or (the greedy
    # answer differs by CPU: canary-002 ran to max_tokens on an AMD EPYC) cut there.
    in_reasoning = [["reasoning_only"], ["reasoning_exhausted_tokens"]]
    assert all(rec.diagnoses in in_reasoning for rec in switched), switched
    assert len(switched) == len(CANARIES) and any(
        rec.diagnoses == in_reasoning[0] for rec in switched
    )
    kinds = {d.kind: d for d in record.summary.diagnoses}
    assert (
        kinds["reasoning_only"].count == len(only) and "reasoning" in kinds["reasoning_only"].hint
    )

"""The real vLLM as evalrun meets it: lint before boot, readiness and version, the tool_choice 400,
context length, and the stream's delta fields. One boot for the module: the lane's contract
without its tool flags, the misconfiguration users hit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from support.vllm import NO_TOOL_FLAGS, pick, sample_suite, score_on

from evalrun.cli import main
from evalrun.serving import Server, boot_server, load_contract
from evalrun.suite import load_suite

pytestmark = pytest.mark.vllm

UNSETS = [f"--unset={flag}" for flag in NO_TOOL_FLAGS]


def test_lint_flags_the_contract_without_tool_flags_before_booting(
    vllm_contract: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", str(vllm_contract), "--set", "port=0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clean"]
    assert main(["lint", str(vllm_contract), "--set", "port=0", *UNSETS, "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["kind"] for f in findings] == ["tool_choice_400"]
    assert "enable-auto-tool-choice: true" in findings[0]["fix"]


@pytest.fixture(scope="module")
def no_tools(vllm_contract: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    contract = load_contract(vllm_contract, sets=["port=0"], unsets=list(NO_TOOL_FLAGS))
    log = tmp_path_factory.mktemp("vllm-endpoint") / "server.log"
    with boot_server(contract, log) as server:
        yield server


def test_readiness_and_version(no_tools: Server) -> None:
    assert no_tools.engine_version == "0.32.0" and no_tools.version_source == "/version"
    health = httpx.get(no_tools.base_url.removesuffix("/v1") + "/health", timeout=10)
    assert health.status_code == 200 and health.text == ""  # FIELD: 200 with an empty body


def test_tool_choice_400_and_context_length_are_diagnosed(no_tools: Server, tmp_path: Path) -> None:
    # tool-006 and tool-001 offer tools with tool_choice "auto"; long-003 is a ~6K-token needle,
    # over the lane's max-model-len of 4096; canary-001 is answered.
    suite = load_suite(
        sample_suite(tmp_path / "suite", pick(["tool-006", "tool-001", "long-003", "canary-001"]))
    )
    record, items = score_on(no_tools, suite, tmp_path / "results")
    by_id = {item.id: item for item in items}
    for tool in ("tool-006", "tool-001"):
        assert by_id[tool].status == "error" and by_id[tool].diagnoses == ["tool_choice_400"]
        assert by_id[tool].error is not None and by_id[tool].error.http_status == 400
        assert '"auto" tool choice requires --enable-auto-tool-choice' in by_id[tool].error.message
    assert "context_length" in by_id["long-003"].diagnoses
    assert by_id["canary-001"].status == "passed"
    hints = {d.kind: d.hint for d in record.summary.diagnoses}
    assert "enable-auto-tool-choice: true and tool-call-parser" in hints["tool_choice_400"]


def test_stream_deltas(no_tools: Server) -> None:
    body = {
        "model": no_tools.model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 8,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    chunks = []
    with httpx.stream(
        "POST", no_tools.base_url + "/chat/completions", json=body, timeout=120
    ) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunks.append(json.loads(line[6:]))
    # FIELD (vLLM 0.32): the first delta carries the role and content "", text comes in
    # delta.content, the finish_reason rides on the last text chunk, usage on a chunk without
    # choices.
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text.strip()
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] >= 1

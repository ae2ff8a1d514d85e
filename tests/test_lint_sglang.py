"""`evalrun lint` on sglang contracts: tools without a parser are flagged, as for vLLM.

FIELD (sglang 0.5.23): with tools and no --tool-call-parser, sglang answers HTTP 200 with plain
text where vLLM answers 400, so the run shows nothing wrong but failed tool items; lint says it
before any boot. The sglang-cpu lane's own contract (with qwen) is clean of it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from evalrun.cli import main
from evalrun.serving.lint import lint_contract

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, args: dict) -> Path:
    path = tmp_path / "sglang.yaml"
    data = {
        "name": "sg",
        "engine": "sglang",
        "command": [sys.executable, "-c", "pass"],
        "model": "org/model",
        "port": 0,
        "args": args,
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_sglang_without_tool_call_parser_is_flagged(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, {"device": "cpu"})
    found = {f.kind: f for f in lint_contract(path).findings}
    assert "tools_as_text" in found
    finding = found["tools_as_text"]
    assert finding.level == "warning"
    assert "HTTP 200" in finding.message and "plain text" in finding.message
    assert "tool-call-parser" in finding.fix
    assert main(["lint", str(path)]) == 1
    assert "tools_as_text" in capsys.readouterr().out


def test_sglang_with_a_parser_or_other_engines_are_not_flagged(tmp_path: Path) -> None:
    with_parser = write(tmp_path, {"device": "cpu", "tool-call-parser": "qwen"})
    assert "tools_as_text" not in {f.kind for f in lint_contract(with_parser).findings}
    data = yaml.safe_load(with_parser.read_text())
    data.update(engine="llama.cpp", args={})
    with_parser.write_text(yaml.safe_dump(data))
    assert "tools_as_text" not in {f.kind for f in lint_contract(with_parser).findings}


def test_the_lane_contract_has_its_parser_and_unsetting_it_is_flagged() -> None:
    contract = REPO / "bisect" / "contracts" / "sglang-cpu.yaml"
    assert "tools_as_text" not in {f.kind for f in lint_contract(contract).findings}
    unset = lint_contract(contract, unsets=["tool-call-parser"])
    assert "tools_as_text" in {f.kind for f in unset.findings}


def test_sglang_deepseek_r1_is_flagged_even_with_enable_thinking_false(tmp_path: Path) -> None:
    path = write(tmp_path, {"tool-call-parser": "qwen", "reasoning-parser": "deepseek-r1"})
    data = yaml.safe_load(path.read_text())
    data["request"] = {"chat_template_kwargs": {"enable_thinking": False}}
    path.write_text(yaml.safe_dump(data))
    found = {f.kind: f for f in lint_contract(path).findings}
    message = found["reasoning_parser"].message
    assert "whatever enable_thinking says" in message and "reasoning_content" in message

"""`evalrun lint`: each known trap is found, with its fix; exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
import yaml

from evalrun.cli import main
from evalrun.serving.lint import lint_contract


def write(tmp_path: Path, **data: object) -> Path:
    base = {
        "name": "lane",
        "engine": "vllm",
        "command": [sys.executable, "-c", "pass"],
        "model": "org/model",
        "port": 0,
    }
    base.update(data)
    path = tmp_path / "lane.yaml"
    path.write_text(yaml.safe_dump(base))
    return path


def kinds(path: Path, **kw: object) -> dict[str, str]:
    return {f.kind: f.message + " | " + f.fix for f in lint_contract(path, **kw).findings}


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only an empty dir, so nothing is found by accident (ninja lives in /usr/bin)."""
    empty = tmp_path / "sysbin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


def test_clean_contract_exits_0(tmp_path: Path, capsys, bare_path: Path) -> None:
    path = write(tmp_path, engine="other")
    assert main(["lint", str(path)]) == 0
    assert "clean" in capsys.readouterr().out


def test_tool_parser_partners(tmp_path: Path, bare_path: Path) -> None:
    found = kinds(write(tmp_path, args={"tool-call-parser": "gemma4"}))
    assert 'tool_choice "auto" get HTTP 400' in found["missing_partner"]
    assert "enable-auto-tool-choice: true" in found["missing_partner"]
    found = kinds(write(tmp_path, args={"enable-auto-tool-choice": True}))
    assert "add tool-call-parser" in found["missing_partner"]
    both = write(tmp_path, args={"enable-auto-tool-choice": True, "tool-call-parser": "gemma4"})
    assert "missing_partner" not in kinds(both)


def test_reasoning_parser_needs_enable_thinking_false(tmp_path: Path, bare_path: Path) -> None:
    found = kinds(write(tmp_path, args={"reasoning-parser": "gemma4"}))
    assert (
        "reasoning_content" in found["reasoning_parser"]
        and "content is null" in found["reasoning_parser"]
    )
    ok = write(
        tmp_path,
        args={"reasoning-parser": "gemma4"},
        request={"chat_template_kwargs": {"enable_thinking": False}},
    )
    assert "reasoning_parser" not in kinds(ok)


def test_quantized_v_cache_needs_flash_attention(tmp_path: Path, bare_path: Path) -> None:
    path = write(
        tmp_path,
        engine="llama.cpp",
        command=[sys.executable, "-m", "evalrun.serving.llamacpp"],
        model=None,
        args={"cache-type-v": "q8_0", "flash-attn": "off"},
    )
    assert 'flash-attn: "on"' in kinds(path)["missing_partner"]
    assert "missing_partner" not in kinds(path, sets=["flash-attn=on"])


def test_ninja_in_the_venv_but_not_on_path(tmp_path: Path, bare_path: Path) -> None:
    venv_bin = tmp_path / "vllm-env" / "bin"
    venv_bin.mkdir(parents=True)
    for name in ("vllm", "ninja"):
        (venv_bin / name).write_text("#!/bin/sh\n")
        (venv_bin / name).chmod(0o755)
    path = write(tmp_path, command=[str(venv_bin / "vllm"), "serve"])
    found = kinds(path)
    assert "FileNotFoundError: 'ninja'" in found["executable_not_found"]
    assert f"exists in {venv_bin}: add that dir to path_prepend" in found["executable_not_found"]
    assert "executable_not_found" not in kinds(path, sets=[f"path_prepend=[{venv_bin}]"])


def test_command_not_on_path_says_where_it_is(tmp_path: Path, bare_path: Path) -> None:
    elsewhere = tmp_path / "opt-bin"
    elsewhere.mkdir()
    (elsewhere / "sglang-serve").write_text("#!/bin/sh\n")
    (elsewhere / "sglang-serve").chmod(0o755)
    path = write(tmp_path, engine="other", command=["sglang-serve"])
    assert "not on the server's PATH" in kinds(path)["executable_not_found"]
    found = kinds(path, sets=[f"path_prepend=[{elsewhere}]"])
    assert "executable_not_found" not in found


def test_python_module_that_cannot_be_imported(tmp_path: Path, bare_path: Path) -> None:
    path = write(tmp_path, engine="other", command=["python", "-m", "no_such_server_xyz"])
    assert "cannot import no_such_server_xyz" in kinds(path)["import_error"]


def test_missing_local_model_and_path_prepend(tmp_path: Path, bare_path: Path) -> None:
    path = write(
        tmp_path,
        engine="other",
        model=str(tmp_path / "gone.gguf"),
        path_prepend=[str(tmp_path / "nodir")],
    )
    found = kinds(path)
    assert "does not exist" in found["model_missing"]
    assert "nodir" in found["path_prepend_missing"]
    assert "model_missing" not in kinds(write(tmp_path, engine="other", model="org/hub-id"))


def test_busy_port_names_the_holder(tmp_path: Path, bare_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        found = kinds(write(tmp_path, engine="other", port=port))
    assert f"port {port} on 127.0.0.1 is already in use by pid" in found["port_busy"]
    assert "--set port=N" in found["port_busy"]


def test_schema_errors_are_findings_with_exit_1(tmp_path: Path, capsys, bare_path: Path) -> None:
    path = write(tmp_path, boot_timout=5, engine="tgi")
    assert main(["lint", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert not out["clean"]
    found = {f["kind"]: f for f in out["findings"]}
    assert "did you mean 'boot_timeout'" in found["schema"]["message"]
    assert "vllm, sglang, llama.cpp, other" in found["unknown_engine"]["fix"]


def test_unusable_file_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["lint", str(tmp_path / "missing.yaml")]) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    assert main(["lint", str(bad)]) == 2
    assert "invalid YAML" in capsys.readouterr().err


def test_reference_contract_is_clean() -> None:
    report = lint_contract(
        Path(__file__).parent.parent / "bisect" / "contracts" / "reference.yaml", sets=["port=0"]
    )
    assert report.clean, report.findings


def test_vllm_without_tool_flags_gets_the_tool_choice_400(tmp_path: Path, bare_path: Path) -> None:
    found = kinds(write(tmp_path))
    assert 'HTTP 400 to every request with tools and tool_choice "auto"' in found["tool_choice_400"]
    assert "enable-auto-tool-choice: true and tool-call-parser" in found["tool_choice_400"]
    both = write(tmp_path, args={"enable-auto-tool-choice": True, "tool-call-parser": "hermes"})
    assert "tool_choice_400" not in kinds(both)
    assert "tool_choice_400" not in kinds(write(tmp_path, engine="sglang"))  # sglang answers 200


def test_deepseek_r1_ignores_enable_thinking(tmp_path: Path, bare_path: Path) -> None:
    # Real vLLM 0.32 (the vllm tier): deepseek_r1 keeps content null even with enable_thinking
    # false; qwen3 honours it.
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    r1 = kinds(write(tmp_path, args={"reasoning-parser": "deepseek_r1"}, request=off))
    assert "whatever enable_thinking says" in r1["reasoning_parser"]
    assert "qwen3" in r1["reasoning_parser"]
    qwen3 = kinds(write(tmp_path, args={"reasoning-parser": "qwen3"}, request=off))
    assert "reasoning_parser" not in qwen3

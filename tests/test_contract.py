"""Contract files: schema, rendering, overrides, hashing, redaction."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from evalrun.base.errors import ConfigError
from evalrun.serving.contract import (
    Contract,
    apply_overrides,
    contract_hash,
    effective_env,
    load_contract,
    redact_argv,
    redact_env,
    reference_contract_path,
    render_argv,
    with_overrides,
)

ISSUE_EXAMPLE = """\
name: mimo-flash-4x-vllm
engine: vllm
command: [vllm, serve]
model: XiaomiMiMo/MiMo-V2-Flash
served_model_name: mimo
host: 127.0.0.1
port: 8000
args:
  load-format: instanttensor
  kv-cache-dtype: auto
  speculative-config: {method: dflash, num_speculative_tokens: 5}
  enable-auto-tool-choice: true
  tool-call-parser: gemma4
  enforce-eager: false
  max-num-seqs: null
env: {VLLM_PLUGINS: b12x_loader, HF_TOKEN: hf_secret}
path_prepend: [~/vllm-env/bin, /usr/local/cuda/bin]
request: {chat_template_kwargs: {enable_thinking: false}}
health: /health
boot_timeout: 1200
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "lane.yaml"
    path.write_text(ISSUE_EXAMPLE)
    return path


def write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def test_render_follows_vllm_config_conventions(example: Path) -> None:
    argv = render_argv(load_contract(example))
    assert argv == [
        "vllm",
        "serve",
        "XiaomiMiMo/MiMo-V2-Flash",
        "--served-model-name",
        "mimo",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
        "--load-format",
        "instanttensor",
        "--kv-cache-dtype",
        "auto",
        "--speculative-config",
        '{"method":"dflash","num_speculative_tokens":5}',
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "gemma4",
    ]  # false (enforce-eager) and null (max-num-seqs) are omitted


def test_llama_cpp_passes_model_as_flag_and_lists_as_json(tmp_path: Path) -> None:
    c = Contract(
        name="l",
        engine="llama.cpp",
        command=["llama-server"],
        model="/m/x.gguf",
        args={"override-kv": ["a=int:1", "b=str:x"], "jinja": True, "ctx-size": 4096},
    )
    assert render_argv(c) == [
        "llama-server",
        "--model",
        "/m/x.gguf",
        "--host",
        "127.0.0.1",
        "--port",
        "8080",
        "--override-kv",
        '["a=int:1","b=str:x"]',
        "--jinja",
        "--ctx-size",
        "4096",
    ]


def test_the_embedded_launcher_gets_llama_server_flags(tmp_path: Path) -> None:
    c = Contract(
        name="r",
        engine="llama.cpp",
        command=["python", "-m", "evalrun.serving.llamacpp"],
        model="/m.gguf",
        served_model_name="smol",
        args={"kv-unified": True, "no-warmup": False, "cache-type-k": None, "-np": 4},
    )
    argv = render_argv(c)
    assert argv[0] == sys.executable  # bare `python` is the interpreter running evalrun
    # the same argv as for a llama-server binary: bare booleans, llama-server's port and alias
    assert argv[3:] == [
        "--model",
        "/m.gguf",
        "--alias",
        "smol",
        "--host",
        "127.0.0.1",
        "--port",
        "8080",
        "--kv-unified",
        "-np",
        "4",
    ]


def test_python_comes_from_path_prepend_when_there(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    c = Contract(
        name="s",
        engine="sglang",
        command=["python", "-m", "sglang.launch_server"],
        model="org/m",
        path_prepend=[str(tmp_path / "bin")],
    )
    argv = render_argv(c)
    assert argv[0] == str(tmp_path / "bin" / "python")
    assert argv[3:7] == ["--model-path", "org/m", "--host", "127.0.0.1"]
    assert argv[-1] == "30000"


def test_set_values_are_yaml_and_unset_removes(example: Path) -> None:
    c = load_contract(
        example,
        sets=[
            'speculative-config={"method":"ngram"}',
            "port=0",
            "enforce-eager=true",
            "env.EXTRA=1",
            "gpu-memory-utilization=0.9",
        ],
        unsets=["tool-call-parser", "env.HF_TOKEN"],
    )
    assert c.args["speculative-config"] == {"method": "ngram"}
    assert c.port == 0 and c.env == {"VLLM_PLUGINS": "b12x_loader", "EXTRA": "1"}
    argv = render_argv(c)
    assert "--enforce-eager" in argv and "--tool-call-parser" not in argv
    assert argv[argv.index("--speculative-config") + 1] == '{"method":"ngram"}'
    assert argv[argv.index("--gpu-memory-utilization") + 1] == "0.9"


def test_unset_unknown_knob_is_a_one_line_error(example: Path) -> None:
    with pytest.raises(ConfigError, match=r"--unset load_format: no such knob.*load-format"):
        load_contract(example, unsets=["load_format"])


def test_set_without_equals_is_an_error(example: Path) -> None:
    with pytest.raises(ConfigError, match="KNOB=VALUE"):
        load_contract(example, sets=["enforce-eager"])


def test_unknown_top_level_key_is_an_error_with_suggestion(tmp_path: Path) -> None:
    path = write(
        tmp_path, {"name": "x", "engine": "vllm", "command": ["vllm", "serve"], "boot_timout": 5}
    )
    with pytest.raises(ConfigError) as err:
        load_contract(path)
    msg = str(err.value)
    assert "unknown key 'boot_timout'" in msg and "did you mean 'boot_timeout'" in msg
    assert "\n" not in msg


def test_unknown_engine_lists_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, {"name": "x", "engine": "tgi", "command": ["tgi"]})
    with pytest.raises(ConfigError, match=r"unknown engine 'tgi'; use one of vllm, sglang"):
        load_contract(path)


def test_invalid_yaml_and_missing_file_are_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nargs: {a: [1, 2}\n")
    with pytest.raises(ConfigError, match=r"line \d+: invalid YAML") as err:
        load_contract(path)
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="not found"):
        load_contract(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="YAML mapping"):
        load_contract(write(tmp_path, "- a\n- b\n"))


def test_host_and_port_do_not_belong_in_args(tmp_path: Path) -> None:
    path = write(tmp_path, {"name": "x", "engine": "vllm", "command": ["v"], "args": {"port": 1}})
    with pytest.raises(ConfigError, match="top-level fields"):
        load_contract(path)


def test_env_values_must_be_scalars(tmp_path: Path) -> None:
    ok = load_contract(
        write(
            tmp_path,
            {"name": "x", "engine": "vllm", "command": ["v"], "env": {"CUDA_VISIBLE_DEVICES": 0}},
        )
    )
    assert ok.env == {"CUDA_VISIBLE_DEVICES": "0"}
    with pytest.raises(ConfigError, match="quote the value"):
        load_contract(
            write(
                tmp_path, {"name": "x", "engine": "vllm", "command": ["v"], "env": {"FLAG": True}}
            )
        )


def test_hash_changes_with_any_rendered_part(example: Path) -> None:
    base = load_contract(example)
    assert contract_hash(base) == contract_hash(load_contract(example))
    variants = [
        with_overrides(base, sets=["kv-cache-dtype=fp8"]),
        with_overrides(base, sets=["env.VLLM_PLUGINS=other"]),
        with_overrides(base, sets=["request.chat_template_kwargs={enable_thinking: true}"]),
        with_overrides(base, sets=["path_prepend=[/opt/bin]"]),
    ]
    hashes = {contract_hash(v) for v in variants} | {contract_hash(base)}
    assert len(hashes) == 5
    # boot_timeout does not change what is served
    assert contract_hash(with_overrides(base, sets=["boot_timeout=5"])) == contract_hash(base)


def test_secrets_are_redacted(example: Path) -> None:
    c = load_contract(example, sets=["env.OPENAI_API_KEY=sk-1", "env.DB_PASSWORD=pw"])
    red = redact_env(c.env)
    assert red == {
        "VLLM_PLUGINS": "b12x_loader",
        "HF_TOKEN": "***",
        "OPENAI_API_KEY": "***",
        "DB_PASSWORD": "***",
    }
    assert redact_argv(["x", "--api-key", "sk", "--port", "1"]) == [
        "x",
        "--api-key",
        "***",
        "--port",
        "1",
    ]


def test_path_prepend_expands_home_in_front_of_path(example: Path) -> None:
    env = effective_env(load_contract(example), base={"PATH": "/usr/bin", "HOME": "/h"})
    home = os.path.expanduser("~")
    assert env["PATH"] == f"{home}/vllm-env/bin:/usr/local/cuda/bin:/usr/bin"
    assert env["VLLM_PLUGINS"] == "b12x_loader"


def test_overrides_do_not_touch_the_input() -> None:
    data = {"name": "x", "args": {"a": 1}}
    out = apply_overrides(data, ["a=2"], [])
    assert data["args"]["a"] == 1 and out["args"]["a"] == 2


def test_reference_contract_loads_and_exposes_its_knobs() -> None:
    c = load_contract(reference_contract_path())
    assert c.engine == "llama.cpp" and c.host == "127.0.0.1"
    assert {"cache-type-k", "cache-type-v", "flash-attn", "model-draft", "ctx-size"} <= set(c.args)
    assert c.args["ctx-size"] // c.args["parallel"] == 4096  # the ~2.1K-token needles fit a slot
    argv = render_argv(with_overrides(c, sets=["cache-type-v=q8_0", "flash-attn=on"]))
    assert argv[argv.index("--cache-type-v") + 1] == "q8_0"
    assert argv[argv.index("--flash-attn") + 1] == "on"  # YAML's `on` is kept a string here
    model = argv[argv.index("--model") + 1]
    assert model.endswith(".gguf") and Path(model).is_file()
    json.dumps(c.model_dump(mode="json"))  # serialisable for run.json


def test_token_counts_and_tokenizers_are_knobs_not_secrets() -> None:
    # FIELD: sglang's --max-total-tokens was recorded as *** in run.json, hiding a knob's value.
    argv = ["x", "--max-total-tokens", "32768", "--max-num-batched-tokens", "8192",
            "--tokenizer", "org/tok", "--hf-token", "hf_x", "--access-token", "t"]  # fmt: skip
    assert redact_argv(argv) == [
        "x", "--max-total-tokens", "32768", "--max-num-batched-tokens", "8192",
        "--tokenizer", "org/tok", "--hf-token", "***", "--access-token", "***",
    ]  # fmt: skip
    env = {"TOKENIZERS_PARALLELISM": "false", "MAX_TOKENS": "64", "HF_TOKEN": "hf_x"}
    assert redact_env(env) == {
        "TOKENIZERS_PARALLELISM": "false",
        "MAX_TOKENS": "64",
        "HF_TOKEN": "***",
    }

"""Deterministic mode: one contract field sets each engine's batch-invariant switches."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from evalrun.base.errors import ConfigError
from evalrun.cli import main
from evalrun.serving.contract import load_contract


def _contract(tmp_path, engine, **args):
    path = tmp_path / f"{engine}.yaml"
    data = {"name": "lane", "engine": engine, "command": ["x"], "model": "m", "args": args}
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_each_engine_gets_its_own_switches(tmp_path):
    on = ["deterministic=true"]
    vllm = load_contract(
        _contract(tmp_path, "vllm", **{"max-num-seqs": 64, "enable-prefix-caching": True}), sets=on
    )
    assert vllm.args == {"max-num-seqs": 1, "no-enable-prefix-caching": True}
    assert vllm.deterministic and "VLLM_BATCH_INVARIANT" not in vllm.env
    sglang = load_contract(_contract(tmp_path, "sglang"), sets=on)
    assert sglang.args == {"max-running-requests": 1, "disable-radix-cache": True}
    llama = load_contract(_contract(tmp_path, "llama.cpp", np=16), sets=on)
    assert llama.args == {"parallel": 1} and llama.request == {"cache_prompt": False}
    plain = load_contract(_contract(tmp_path, "llama.cpp", np=16))
    assert plain.args == {"np": 16} and not plain.deterministic
    with pytest.raises(ConfigError, match="no known switches for engine 'other'"):
        load_contract(_contract(tmp_path, "other"), sets=on)


def test_score_records_it_in_run_json(tmp_path, capsys, make_suite):
    """--deterministic is --set deterministic=true: the booted engine gets the switches and
    run.json's contract says so."""
    here = Path(__file__).resolve().parent / "fake_engines"
    contract = tmp_path / "c.yaml"
    data = {
        "name": "knobs",
        "engine": "llama.cpp",
        "command": [sys.executable, str(here / "knobs.py")],
        "model": "m",
        "port": 0,
        "health": "/v1/models",
        "boot_timeout": 30,
        "args": {"np": 8},
    }
    contract.write_text(yaml.safe_dump(data))
    results = tmp_path / "results"
    suite = make_suite(n=2)
    argv = ["score", "--contract", str(contract), "--suite", str(suite), "--results", str(results)]
    assert main([*argv, "--deterministic", "--no-progress", "--json"]) in (0, 1)
    record = json.loads(capsys.readouterr().out)
    run = json.loads((results / record["run_id"] / "run.json").read_text())
    assert run["contract"]["deterministic"] is True
    assert "--parallel" in run["contract"]["argv"] and "--np" not in run["contract"]["argv"]
    assert run["contract"]["request"] == {"cache_prompt": False}
    code = main(["score", "--endpoint", "http://127.0.0.1:9/v1", "--deterministic"])
    assert code == 2 and "--set/--unset change a contract" in capsys.readouterr().err

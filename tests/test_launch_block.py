"""The contract's `launch:` block, offline: validation, the hash, lint (no ssh or Slurm needed)."""

from __future__ import annotations

import pytest
import yaml

from evalrun.base.errors import ConfigError
from evalrun.serving.contract import contract_from_data, contract_hash, render_argv
from evalrun.serving.lint import lint_contract
from evalrun.serving.remote.engine import port_index

BASE = {"name": "x", "engine": "vllm", "command": ["vllm", "serve"], "model": "org/m"}


def test_local_is_the_default_and_keeps_the_hash_of_a_contract_without_the_block():
    plain = contract_from_data(BASE)
    local = contract_from_data({**BASE, "launch": {"kind": "local"}})
    assert plain.launch.kind == "local" and not plain.remote
    assert contract_hash(plain) == contract_hash(local)


def test_the_launch_block_is_part_of_the_hash():
    ssh = contract_from_data({**BASE, "launch": {"kind": "ssh", "host": "gpu1"}})
    other = contract_from_data({**BASE, "launch": {"kind": "ssh", "host": "gpu2"}})
    slurm = contract_from_data({**BASE, "launch": {"kind": "slurm", "gres": "gpu:1"}})
    hashes = {contract_hash(c) for c in (contract_from_data(BASE), ssh, other, slurm)}
    assert len(hashes) == 4


@pytest.mark.parametrize(
    ("launch", "said"),
    [
        (
            {"kind": "ssh", "host": "a", "hots": "b"},
            "unknown key 'launch.hots' (did you mean 'host'?)",
        ),
        ({"host": "a"}, "launch.kind: use one of local, ssh, slurm"),
        ({"kind": "slurm", "time": "1h"}, "write minutes, HH:MM:SS"),
        ({"kind": "slurm", "gres": "gpu 1"}, "name[:type][:count]"),
        ({"kind": "ssh", "host": "-oProxyCommand=x"}, "cannot start with '-'"),
        ({"kind": "ssh", "host": "a", "options": {"-x": "1"}}, "ssh option names"),
    ],
)
def test_bad_launch_fields_are_one_line_errors(launch, said):
    with pytest.raises(ConfigError) as err:
        contract_from_data({**BASE, "launch": launch})
    assert said in err.value.message
    assert "\n" not in err.value.message


def test_a_remote_command_keeps_a_bare_python_for_the_other_machine():
    data = {**BASE, "engine": "other", "command": ["python3", "-m", "srv"], "port": 0}
    here = render_argv(contract_from_data(data))
    there = render_argv(contract_from_data({**data, "launch": {"kind": "ssh", "host": "h"}}))
    assert here[0] != "python3" and there[0] == "python3"
    assert there[port_index(there)] == "0"


def test_a_pool_of_hosts():
    c = contract_from_data({**BASE, "launch": {"kind": "ssh", "host": ["a", "b"]}})
    assert [c.launch.lane_host(i) for i in range(3)] == ["a", "b", "a"]


def lint(tmp_path, data):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return {f.kind: f for f in lint_contract(path).findings}


def test_lint_checks_the_launch_fields_instead_of_this_machines_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no vllm, no ssh, no sbatch here
    local = lint(tmp_path, BASE)
    assert "executable_not_found" in local
    ssh = lint(
        tmp_path,
        {**BASE, "launch": {"kind": "ssh", "host": "gpu1", "identity": str(tmp_path / "k"),
                            "forward": False}},
    )  # fmt: skip
    assert "executable_not_found" not in ssh  # vllm is looked for on gpu1, not here
    assert ssh["launch_client_missing"].message.startswith("launch ssh needs ssh")
    assert "does not exist" in ssh["launch_identity_missing"].message
    assert "forward: true" in ssh["launch_unreachable"].fix
    slurm = lint(tmp_path, {**BASE, "launch": {"kind": "slurm"}})
    assert "sbatch" in slurm["launch_client_missing"].message
    assert slurm["launch_unreachable"].level == "warning"
    bad = lint_contract_schema(tmp_path, {**BASE, "launch": {"kind": "slurm", "nodes": 0}})
    assert bad == ["schema"]


def lint_contract_schema(tmp_path, data):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return [f.kind for f in lint_contract(path).findings]


@pytest.mark.parametrize("name", ["vllm-ssh.yaml", "vllm-slurm.yaml"])
def test_the_docs_examples_lint_without_errors(name):
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "examples" / name
    report = lint_contract(path)
    errors = [f for f in report.findings if f.level == "error"]
    # the clients (ssh, sbatch) may be missing on a machine that only lints: that is all
    assert all(f.kind == "launch_client_missing" for f in errors), errors
    assert report.name in ("vllm-ssh", "vllm-slurm")

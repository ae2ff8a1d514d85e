"""The real vLLM CPU lane batches: a knob that only changes batching stays within the good side's
noise floor (measured in the same bisect: its probe serial against the burst). The good side is
the lane's own contract: cached from the tier's earlier bisects (`lane_results`), else booted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]


def test_max_num_seqs_is_within_the_good_sides_noise(
    vllm_contract: Path, lane_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["bisect", "--contract", str(vllm_contract), "--knob", "max-num-seqs", "--values", "2",
         "--results", str(lane_results), "--json"]
    )  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["floor"]["source"] == "serial vs burst on the good side", out
    own, two = sorted(out["trials"], key=lambda t: "(contract)" not in t["variant"])
    assert own["outcome"] == "ok" and two["fidelity"]["floor"] is not None, out
    assert two["outcome"] == "ok", two["fidelity"]["line"]  # not `different`, not `divergent`
    assert "no value of max-num-seqs fails" in out["verdict"], (code, out["verdict"])

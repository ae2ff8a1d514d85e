"""`evalrun slope --contract vllm-cpu.yaml`: real decode throughput at two depths within 4096 (a
shallow one and a 2K-token context: the slope between them). One boot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1200)]


def test_slope_measures_real_decode_speed(
    vllm_contract: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "slope", "--contract", str(vllm_contract), "--set", "port=0",
        "--depths", "0,2k", "--pp", "256", "--tg", "32", "--concurrency", "1", "--runs", "1",
        "--results", str(tmp_path / "results"), "--no-plot", "--json",
    ])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    points = {p["depth"]: p for p in out["points"]}
    assert not any(p["skipped"] for p in points.values())
    assert len(points) == 2
    for point in points.values():
        assert point["decode_tps"] and point["decode_tps"] > 1, point
        assert point["ttft_s"] and point["ttft_s"] > 0
    record = json.loads((Path(out["path"]) / "slope.json").read_text())
    assert record["server"]["engine_version"] == "0.32.0"

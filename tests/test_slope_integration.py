"""`evalrun slope --reference`: the real llama.cpp reference engine, depths up to its context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.serving.reference import reference_available
from evalrun.slope.record import load_slope
from evalrun.slope.report import render_text

pytestmark = pytest.mark.integration


@pytest.mark.skipif(not reference_available(), reason="needs pip install 'evalrun[reference]'")
def test_reference_slope_table_and_png(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    # A slot's context is ctx-size / parallel = 1024 tokens: 800 + pp 32 + template + tg 16 still
    # fits, 2K does not (and prefill on 2 cores is slow enough that deeper would cost minutes).
    code = main(
        [
            "slope",
            "--reference",
            "--set",
            "port=0",
            "--set",
            "ctx-size=4096",
            "--depths",
            "0,800,2k",
            "--pp",
            "32",
            "--tg",
            "16",
            "--concurrency",
            "1,2",
            "--runs",
            "1",
            "--results",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    points = {(p["depth_target"], p["concurrency"]): p for p in out["points"]}
    assert len(points) == 6
    for depth in (0, 800):
        for c in (1, 2):
            p = points[(depth, c)]
            assert not p["skipped"] and p["decode_tps"] > 0 and p["ttft_s"] > 0
            assert p["stopped_short"] == 0  # llama-server honours ignore_eos
            assert abs(p["depth"] - depth) <= max(0.02 * depth, 32)  # server-counted depth
    assert points[(2048, 1)]["skipped"] and points[(2048, 2)]["skipped"]

    rec = load_slope(out["run_id"], tmp_path)
    assert rec.status == "complete" and rec.server and rec.server["engine_version"] is not None
    assert rec.contract and "--ctx-size" in rec.contract["argv"]
    assert rec.provenance
    text = render_text(rec)
    print(text)  # the table, for the CI log
    assert "800/d0: c1" in text and "skipped: exceeds the context" in text
    png = Path(out["path"]) / "slope.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (Path(out["path"]) / "server.log").stat().st_size > 0

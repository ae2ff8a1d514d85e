"""`evalrun signoff` with the policy's slope rule, on the seeds' sglang and vLLM slopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.synthruns import seeds_pair

from evalrun.cli import main
from evalrun.slope.record import SlopePoint, SlopeRecord, SlopeSettings, write_record
from evalrun.store import RunStore

SGLANG = {0: 77.6, 8192: 76.2, 32768: 57.8, 131072: 33.7, 262144: 23.5}
VLLM = {0: 51.1, 8192: 54.0, 32768: 53.6, 131072: 33.7, 262144: 37.8}


def slope_run(root: Path, run_id: str, decode: dict[int, float]) -> str:
    record = SlopeRecord(
        run_id=run_id,
        label=run_id.rsplit("_", 1)[-1],
        endpoint="http://h/v1",
        started_at="t",
        status="complete",
        settings=SlopeSettings(depths=sorted(decode), pp=2048, tg=128, concurrency=[1], runs=2),
        points=[
            SlopePoint(depth_target=d, depth=d, concurrency=1, decode_tps=v)
            for d, v in decode.items()
        ],
    )
    write_record(root, record)
    return run_id


@pytest.fixture
def lanes(tmp_path: Path) -> tuple[Path, list[str]]:
    store = RunStore(tmp_path / "results")
    base, cand = seeds_pair(store)  # score runs that pass on their own
    slope_run(store.root, "2026-09-28_190000_sglang", SGLANG)
    slope_run(store.root, "2026-09-28_230000_vllm", VLLM)
    return store.root, [
        "--candidate",
        cand.run_id,
        "--baseline",
        base.run_id,
        "--results",
        str(store.root),
        "--slope-baseline",
        "latest:sglang",
        "--slope-candidate",
        "latest:vllm",
    ]


def policy(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_slope_rule_blocks_the_d0_loss(lanes, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    root, args = lanes
    strict = policy(tmp_path, "slope:\n  max_decode_drop: 0.10\n")
    assert main(["signoff", *args, "--policy", strict, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "fail"
    assert any("decode at d0 c1 fell 34%" in r for r in out["reasons"])
    report = (root / out["candidate"] / "signoff.md").read_text(encoding="utf-8")
    assert "slope_decode_drop" in report


def test_slope_rule_at_long_context_only_passes(lanes, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, args = lanes
    long_ctx = policy(
        tmp_path,
        "slope:\n  max_decode_drop: 0.10\n  depths: [128K, 256K]\n  min_ratio_to_d0: 0.5\n",
    )
    assert main(["signoff", *args, "--policy", long_ctx]) == 0
    assert "PASS" in capsys.readouterr().out


def test_slope_policy_without_slope_runs_is_a_usage_error(lanes, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, args = lanes
    strict = policy(tmp_path, "slope:\n  max_decode_drop: 0.10\n")
    assert main(["signoff", *args[:6], "--policy", strict]) == 2
    assert "--slope-baseline" in capsys.readouterr().err


def test_bad_slope_policy_is_a_config_error(lanes, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, args = lanes
    bad = policy(tmp_path, "slope:\n  max_decode_dorp: 0.10\n")
    assert main(["signoff", *args, "--policy", bad]) == 2
    assert "slope.max_decode_dorp" in capsys.readouterr().err

"""Bisect on the real sglang: `--load-format dummy` is named in two boots, and an fp8 KV-cache
sweep classifies both boot failures with the engine's own one-line reasons and skips them.

The runs share the tier's results folder (`lane_results`), so the sweep's `auto` trial is the
load-format run's, cached (as a user's repeated runs would be): the sweep boots only the two fp8
variants.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.sglang import cli_json

from evalrun.store import RunStore

pytestmark = [pytest.mark.sglang, pytest.mark.timeout(1800)]

# FIELD (sglang 0.5.23 on a CPU without AMX): the reasons its scheduler gives, as logged.
FP8_REFUSALS = {
    "fp8_e5m2": "ValueError: --kv-cache-dtype fp8_e5m2 is not supported on CPU.",
    "fp8_e4m3": "ValueError: CPU FP8 KV cache requires Intel AMX support.",
}


def by_value(out: dict, default: str) -> dict[str, dict]:
    return {t["applied"][0]["value"] if t["applied"] else default: t for t in out["trials"]}


def test_one_knob_names_dummy_in_two_boots(
    sglang_contract: Path, lane_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli_json(
        capsys, "bisect", "--contract", str(sglang_contract), "--set", "port=0",
        "--knob", "load-format", "--values", "auto,dummy", "--results", str(lane_results),
    )  # fmt: skip
    assert code == 0, out
    assert out["culprits"] == [{"knob": "load-format", "value": "dummy"}]
    assert out["boots"] == 2
    trials = by_value(out, "auto")
    assert trials["dummy"]["outcome"] == "garble" and trials["dummy"]["garble_rate"] >= 0.25
    assert trials["auto"]["outcome"] == "ok"
    # What the random weights said: sglang's token soup, the same as vLLM's.
    soup = [
        rec.response.content
        for run_id in trials["dummy"]["run_ids"]
        for rec in RunStore(lane_results).load_items(run_id)
        if rec.response and rec.response.content
    ]
    assert soup and any("logupload" in text for text in soup), soup[:3]


def test_fp8_kv_sweep_skips_both_boot_failures_with_their_reasons(
    sglang_contract: Path, lane_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli_json(
        capsys, "bisect", "--contract", str(sglang_contract), "--set", "port=0",
        "--knob", "kv-cache-dtype", "--values", "auto,fp8_e5m2,fp8_e4m3",
        "--results", str(lane_results),
    )  # fmt: skip
    assert code == 1, out  # nothing found: the only bad-looking variants cannot be tested
    assert out["culprits"] == [] and out["boots"] == 2, out  # auto: cached from the other run
    trials = by_value(out, "auto")
    assert trials["auto"]["outcome"] == "ok" and trials["auto"]["cached"]
    for value, reason in FP8_REFUSALS.items():
        trial = trials[value]
        assert trial["outcome"] == "boot_fail" and trial["verdict"] == "unresolved", trial
        assert trial["boot_error"].startswith("validator_refusal: "), trial
        assert trial["boot_error"].endswith(reason), trial

"""Fidelity on the real sglang: a fluent rope fault is named by its tokens, an ignored knob is not.

sglang 0.5.23 reads a transformers-5 config's rope base from `rope_parameters` and merges a
partial `--json-model-override-args` into it; the old flat `{"rope_theta": ...}` boots and is
silently ignored (FIELD, the garble corpus's sglang run: 12 of 12 greedy answers byte-identical to
the healthy lane's). Both sides of each bisect differ in that one knob; the good side is the lane's
own contract, booted once in the tier and cached (one results folder, `lane_results`): after
test_sglang_bisect, two boots in all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.sglang import cli_json

pytestmark = [pytest.mark.sglang, pytest.mark.timeout(1800)]

ROPE_10K = {"rope_parameters": {"rope_theta": 10000}}  # SmolLM2's own base is 100000
FLAT_ROPE = {"rope_theta": 100}  # the pre-transformers-5 key: sglang ignores it


def sides(contract: Path, folder: Path, override: dict) -> list[str]:
    """--good/--bad files: the lane's contract on any free port, and it with `override`."""
    data = yaml.safe_load(contract.read_text()) | {"port": 0}
    good, bad = folder / "good.yaml", folder / "bad.yaml"
    good.write_text(yaml.safe_dump(data, sort_keys=False))
    data["args"] = data["args"] | {"json-model-override-args": override}
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    return ["--good", str(good), "--bad", str(bad)]


def bad_trial(out: dict) -> dict:
    return next(t for t in out["trials"] if t["variant"].startswith("(bad)"))


def test_rope_base_10000_stays_fluent_and_is_divergent_from_the_good_side(
    sglang_contract: Path, lane_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*sides(sglang_contract, tmp_path, ROPE_10K), "--results", str(lane_results)]
    code, out = cli_json(capsys, "bisect", *argv)
    assert code == 0, out
    assert out["culprits"] == [{"knob": "json-model-override-args", "value": ROPE_10K}], out
    good = next(t for t in out["trials"] if t["variant"].startswith("(good)"))
    assert out["boots"] == (1 if good["cached"] else 2)  # cached: an earlier bisect of the tier
    row = bad_trial(out)
    # fluent: the garble rule alone would pass it; its tokens do not
    assert row["outcome"] == "divergent" and row["garble_rate"] < 0.25, row
    assert row["fidelity"]["verdict"] == "divergent" and row["effect"] is None, row["fidelity"]


def test_a_flat_rope_theta_is_ignored_and_not_divergent(
    sglang_contract: Path, lane_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*sides(sglang_contract, tmp_path, FLAT_ROPE), "--results", str(lane_results)]
    code, out = cli_json(capsys, "bisect", *argv)
    assert code == 1, out  # nothing to bisect: the bad side passes
    assert out["boots"] <= 2, out  # 1 when the good side is cached
    assert out["verdict"].startswith("nothing to bisect: the bad side passes"), out["verdict"]
    row = bad_trial(out)
    assert row["outcome"] == "ok", row
    # Not divergent. Not `identical` either (measured: `equivalent` on 26 of 26 items): two boots
    # of the healthy sglang lane already differ in near ties under the probe's concurrency burst,
    # so an ignored knob looks like a second healthy boot, not like the same one.
    assert row["fidelity"]["verdict"] in ("identical", "equivalent"), row["fidelity"]

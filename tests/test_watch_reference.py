"""`evalrun watch` on real engines, the reference (llama.cpp + SmolLM2-135M) first: healthy ticks
back to back raise no alarm; the server stopped (a `down` event, no quality alarm) and booted again with
`cache-type-k=q4_0` alarms within the stated two ticks, the escalation's sign-off in the event.

The 200-tick figure of docs/watch.md is bench/watch_reference.py's (about 17 minutes here);
this test runs the same script with 10 healthy ticks (2 to 3 minutes). The vllm tier does the
same on the vLLM lane, with a rope base of 20000 (the model's is 100000) as the fault: fluent
answers, other tokens. (An fp8 KV cache does not boot on a CPU without AVX-512 or AMX.)"""

from __future__ import annotations

import json

import pytest

ROPE = 'hf-overrides={"rope_parameters": {"rope_theta": 20000, "rope_type": "default"}}'


@pytest.mark.integration
def test_reference_watch_quiet_when_healthy_and_alarms_on_a_q4_0_k_cache(tmp_path, capsys):
    from bench.watch_reference import main

    code = main(
        ["--healthy", "10", "--fault", "3", "--anchor-limit", "16", "--results", str(tmp_path)]
    )
    out = json.loads(capsys.readouterr().out)
    # on a failure, the figures that say which sum moved and why (the whole object is cut short)
    why = ("healthy_units", "healthy_max_drift_cusum", "healthy_max_hard_cusum", "floor")
    assert code == 0, {k: out.get(k) for k in (*why, "healthy_off_items", "ticks_to_alarm")}
    assert out["healthy_ticks"] == 10 and out["healthy_alarms"] == 0
    assert out["down_events"] == 1 and out["up_events"] == 1
    assert out["ticks_to_alarm"] is not None and out["ticks_to_alarm"] <= 2
    assert out["escalation"]["signoff"] in ("pass", "fail")
    assert out["escalation"]["run_id"]


@pytest.mark.vllm
@pytest.mark.timeout(900)  # 14 ticks of ~20 s, the floor's seven runs, two boots on 2 cores
def test_vllm_watch_quiet_when_healthy_and_alarms_on_a_rope_change(tmp_path, capsys, vllm_contract):
    from bench.watch_reference import main

    code = main(
        [
            "--contract",
            str(vllm_contract),
            "--fault-set",
            ROPE,
            "--healthy",
            "10",
            "--fault",
            "4",
            "--anchor-limit",
            "24",
            "--results",
            str(tmp_path),
        ]  # fmt: skip
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert out["healthy_alarms"] == 0 and out["down_events"] == 1
    assert out["ticks_to_alarm"] is not None and out["ticks_to_alarm"] <= 2

"""A knob sweep on the real vLLM: an fp8 KV cache and ngram speculative decoding boot and are
scored, and each really took effect (the engine's own log and metrics say so). Two boots.

FIELD (measured here): the plain lane passes 11-12 of the 16 probe items; with
`--kv-cache-dtype fp8` (no calibrated scales) it passed 7, dropped April from the months, got the
2K needle wrong and looped `Какой-то какой-то …` on the Russian item (garbled): an fp8 cache
costs a 135M model real accuracy. Neither knob turns the lane into token soup.
"""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
import pytest
from support.vllm import score_on

from evalrun.base.errors import BootError
from evalrun.serving import boot_server, load_contract
from evalrun.suite import load_suite

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1200)]

NGRAM = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
KNOBS = {
    "kv-fp8": ("kv-cache-dtype=fp8", "kv_cache_dtype=fp8"),
    "ngram": (f"speculative-config={NGRAM}", "method='ngram'"),
}


def _fp8_kv_on_this_cpu() -> bool:
    """vLLM's CPU backend keeps an fp8 KV cache only on x86 with AVX-512 or AMX; elsewhere it
    refuses at boot ('FP8 KV cache on CPU requires x86 with AVX-512 or AMX.')."""
    flags = (
        Path("/proc/cpuinfo").read_text(errors="replace").split()
        if Path("/proc/cpuinfo").is_file()
        else []
    )
    return "avx512f" in flags or any(f.startswith("amx") for f in flags)


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_knob_boots_is_scored_and_takes_effect(
    knob: str, vllm_contract: Path, tmp_path: Path
) -> None:
    setting, resolved = KNOBS[knob]
    contract = load_contract(vllm_contract, sets=["port=0", setting])
    suite = load_suite("core")
    if knob == "kv-fp8" and not _fp8_kv_on_this_cpu():
        # This CPU lacks both: the boot fails, and evalrun names the engine's refusal and the knob.
        with pytest.raises(BootError) as refused:
            with boot_server(contract, tmp_path / "server.log"):
                pass
        assert "FP8 KV cache on CPU requires" in str(refused.value), refused.value
        assert "refused this combination of knobs" in str(refused.value), refused.value
        return
    with boot_server(contract, tmp_path / "server.log") as server:
        record, items = score_on(server, suite, tmp_path / "results", tags=("probe",), label=knob)
        metrics = httpx.get(server.base_url.removesuffix("/v1") + "/metrics", timeout=30).text
    assert record.status == "complete" and len(items) == 16 and record.summary.errors == 0
    # Scored, not broken: below bisect's garble threshold (0.25), and well above dummy's 0.
    assert record.summary.garble_rate < 0.25, [(i.id, i.garble) for i in items if i.garble]
    assert record.summary.passed >= 4, [(i.id, i.status) for i in items]
    assert resolved in (tmp_path / "server.log").read_text(errors="replace")
    if knob == "ngram":
        drafted = [
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith("vllm:spec_decode_num_draft_tokens_total")
        ]
        assert drafted and sum(drafted) > 0, "ngram proposed no draft tokens"

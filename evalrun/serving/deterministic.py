"""Deterministic mode: the engine's own batch-invariant switches, set from one contract field.

`deterministic: true` in a contract (or `--deterministic`, which is `--set deterministic=true`)
turns on what each engine offers so that a healthy lane equals itself, and a pair of its runs
compares `identical`:

- vLLM: `VLLM_BATCH_INVARIANT=1` (batch-invariant kernels: a request's numerics do not depend on
  what else is batched with it);
- sglang: `--enable-deterministic-inference`;
- llama.cpp: one slot (`parallel: 1`: no request shares a batch) and no prompt cache
  (`cache_prompt: false` in every request, so a repeated prompt is computed again, not reused).

Known leaks are warned about, not fixed: vLLM's batch invariance gave 3 distinct outputs in 5
under many concurrent sequences of one workload (fixed by `--max-num-seqs 8`), and sequence
parallelism at tensor parallel 4 or more leaks too.
"""

from __future__ import annotations

from typing import Any

LEAK_SEQS = 8  # vLLM: more concurrent sequences than this broke batch invariance


def switches(engine: str) -> dict[str, dict[str, Any]]:
    """{"args": ..., "env": ..., "request": ...} the engine's deterministic switches set."""
    if engine == "vllm":
        return {"env": {"VLLM_BATCH_INVARIANT": "1"}}
    if engine == "sglang":
        return {"args": {"enable-deterministic-inference": True}}
    if engine == "llama.cpp":
        return {"args": {"parallel": 1}, "request": {"cache_prompt": False}}
    raise ValueError(
        f"deterministic: no known switches for engine {engine!r}; set them in the contract's "
        "args/env yourself (vllm, sglang and llama.cpp have them)"
    )


def apply(engine: str, args: dict[str, Any], env: dict[str, str], request: dict[str, Any]) -> None:
    """Set the engine's switches in place; a slot flag spelled another way is replaced."""
    sw = switches(engine)
    if engine == "llama.cpp":
        for alias in ("np", "-np", "n_parallel", "n-parallel"):
            args.pop(alias, None)
    args.update(sw.get("args", {}))
    env.update(sw.get("env", {}))
    request.update(sw.get("request", {}))


def leaks(engine: str, args: dict[str, Any]) -> list[str]:
    """Known ways the engine's deterministic mode still lets batching in, for this contract."""
    out: list[str] = []
    if engine != "vllm":
        return out
    seqs = args.get("max-num-seqs")
    if not isinstance(seqs, int) or seqs > LEAK_SEQS:
        out.append(
            "vLLM's batch invariance has leaked under many concurrent sequences (an identical "
            f"workload gave 3 distinct outputs in 5); set args.max-num-seqs={LEAK_SEQS}"
        )
    tp = args.get("tensor-parallel-size", args.get("tp", 1))
    if isinstance(tp, int) and tp >= 4:
        out.append(
            "sequence parallelism at tensor parallel >= 4 leaks through vLLM's batch "
            "invariance; leave it off"
        )
    return out

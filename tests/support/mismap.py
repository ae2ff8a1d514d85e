"""The mis-mapped GGUF fixture; its code lives in bench/mismap.py, which users run too."""

from __future__ import annotations

from bench.mismap import (
    DEFAULT_PAIR,
    reference_gguf,
    shared_mismapped_gguf,
    swap_plan,
    write_mismapped_gguf,
    write_noisy_gguf,
    write_scaled_gguf,
    write_zeroed_gguf,
)

__all__ = [
    "DEFAULT_PAIR",
    "reference_gguf",
    "shared_mismapped_gguf",
    "swap_plan",
    "write_mismapped_gguf",
    "write_noisy_gguf",
    "write_scaled_gguf",
    "write_zeroed_gguf",
]

"""The labeled garble corpus (tests/data/garble/*.jsonl), its families and its held-out half."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evalrun.suite.load import read_jsonl

CORPUS = Path(__file__).resolve().parent.parent / "data" / "garble"
LABELS = ("clean", "garbled", "loop", "fluent")
# Real answers of SmolLM2 on healthy engines (llama.cpp reference, the vLLM and sglang bf16 lanes):
# never engine garble (a loop of the model's own is reported as kind "loop" at most).
HEALTHY = ("smollm2-ref/", "vllm-0.32-bf16/", "sglang-0.5.23-bf16/")
# The garble families: every garbled row names one, and each is measured apart.
FAMILIES = ("multi-script", "non-words", "salad", "loop", "flood", "collapse", "mojibake")


def load_corpus() -> list[dict]:
    """Every row of every corpus file: {text, label, expect, source[, family]}.

    label is clean, garbled (engine damage: caught when the detector calls it garbled), loop
    (a healthy small model's own repetition loop: right unless called engine garble) or fluent
    (a broken engine's output that reads as fluent language: wrong answers are the graders'
    business, so the detector may call it either way; counted apart)."""
    return [row for _, row in _rows()]


def load_corpus_with_files() -> list[dict]:
    """load_corpus(), each row also naming its file (key "file")."""
    return [{**row, "file": name} for name, row in _rows()]


def _rows() -> list[tuple[str, dict]]:
    return [(path.name, row) for path in sorted(CORPUS.glob("*.jsonl")) for row in read_jsonl(path)]


def held_out(row: dict) -> bool:
    """The held-out half: rows the detector was not tuned on; figures are reported here. The salt
    is fixed, so every row stays on its side of the split."""
    digest = hashlib.sha256(
        ("held-out-15" + row["source"] + row["text"]).encode("utf-8")
    ).hexdigest()
    return int(digest[:8], 16) % 2 == 0

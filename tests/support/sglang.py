"""The sglang tier's shared parts: the lane (set up once per session) and its contract.

Every test of the tier runs against the real engine: sglang 0.5.23 on the CPU serving
SmolLM2-135M-Instruct in bf16 (bisect/contracts/sglang-cpu.yaml), the same weights as the
vllm-cpu lane. The `sglang_contract` fixture runs `evalrun lane setup sglang-cpu` (idempotent:
seconds when the lane is there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.store import ItemRecord, RunStore
from support import lanes

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "bisect" / "contracts" / "sglang-cpu.yaml"
# A stratified draw of the core suite (every category; `score --limit 40 --seed 3`) whose
# long-context items are a 2K-token needle both engines serve and a 12K one both reject.
SAMPLE = ("--limit", "40", "--seed", "3")


def setup_lane() -> Path:
    """Build the sglang-cpu lane if it is not there (progress on stderr); the contract's path."""
    return lanes.setup_lane("sglang-cpu")


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    """Run an evalrun command with --json; (exit code, the JSON it printed)."""
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def items_of(results: Path, run_id: str) -> dict[str, ItemRecord]:
    """A run's final item records by id."""
    return {rec.id: rec for rec in RunStore(results).load_items(run_id)}

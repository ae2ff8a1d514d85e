"""The lane tiers' common step: build a lane with the CLI, as a user would, once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def setup_lane(name: str) -> Path:
    """`evalrun lane setup NAME` (idempotent: seconds when the lane is there); its contract."""
    done = subprocess.run(
        [sys.executable, "-m", "evalrun", "lane", "setup", name],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"evalrun lane setup {name} failed ({done.returncode}):\n{done.stdout}")
    return REPO / "bisect" / "contracts" / f"{name}.yaml"

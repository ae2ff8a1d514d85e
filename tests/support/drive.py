"""A stand-in for a running evalrun: tests/fake_engines/drive.py boots a contract, prints READY and
sleeps, so a test can interrupt it (Ctrl-C, SIGTERM, kill -9) and check what is left running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

TESTS = Path(__file__).resolve().parent.parent
DRIVE = TESTS / "fake_engines" / "drive.py"


def start_drive(tmp_path: Path, data: dict) -> subprocess.Popen[str]:
    """drive.py booting the contract `data` (written to tmp_path), past its READY line."""
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = subprocess.Popen(
        [sys.executable, str(DRIVE), str(path), str(tmp_path / "server.log")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("READY"), (line, (tmp_path / "server.log").read_text())
    return proc

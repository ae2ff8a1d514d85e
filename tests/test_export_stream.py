"""`export` of a large run streams: its peak memory stays under twice the largest record plus a
fixed overhead, whatever the run's size (a 193 MB run took ~975 MB: 5x the store)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fakeserver import simple_item
from test_score import run

pytestmark = pytest.mark.slow  # writes a large run and exports it through the CLI

ROOT = Path(__file__).resolve().parent.parent


def grow(folder: Path, records: int, answer_kb: int) -> int:
    """Fill folder/items.jsonl with `records` copies of its first record, each answer
    `answer_kb` KB; the size of the largest line."""
    path = folder / "items.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    largest = 0
    with path.open("w") as fh:
        for n in range(records):
            row = dict(first, id=f"basic-{n:03d}" if n < 1000 else f"big-{n:05d}")
            row["response"] = dict(first["response"], content=f"{n} " + "word " * (answer_kb * 205))
            line = json.dumps(row) + "\n"
            largest = max(largest, len(line))
            fh.write(line)
    return largest


def peak_mb(argv: list[str]) -> float:
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0.0]

    def watch() -> None:
        while proc.poll() is None:
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) / 1024)
            except (OSError, ValueError):
                pass
            threading.Event().wait(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    _, err = proc.communicate(timeout=600)
    watcher.join()
    assert proc.returncode == 0, err
    return peak[0]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_of_a_large_run_stays_near_one_record(fake_server, make_suite, tmp_path, fmt):
    record, _ = run(fake_server, make_suite([simple_item(i) for i in range(2)]), tmp_path)
    folder = tmp_path / "results" / record.run_id
    results = str(tmp_path / "results")
    argv = [sys.executable, "-m", "evalrun", "export", record.run_id, "--format", fmt]
    small = peak_mb([*argv, "--results", results, "-o", str(tmp_path / "small.out")])
    largest = grow(folder, records=600, answer_kb=100)  # ~60 MB
    size_mb = (folder / "items.jsonl").stat().st_size / 2**20
    large = peak_mb([*argv, "--results", results, "-o", str(tmp_path / "large.out")])
    assert size_mb > 50
    assert large - small < 2 * largest / 2**20 + 25, (small, large, size_mb)
    lines = (tmp_path / "large.out").read_text().count("\n")
    assert lines >= 600

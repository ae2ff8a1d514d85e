"""`kill -9` of evalrun leaves no local engine behind (serving/reaper.py): `score --contract` and
`bisect`, killed while the engine boots and while it answers, against the fake engine (a
process of its own session, with a child of its own, as vLLM's engine core is)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from fakeserver import simple_item, write_suite

pytestmark = pytest.mark.slow  # real evalrun processes and fake engines

ROOT = Path(__file__).resolve().parent.parent
ENGINE = Path(__file__).parent / "fake_engines" / "engine.py"
GONE_WITHIN_S = 8.0


def contract(folder: Path, name: str, **args: object) -> Path:
    path = folder / f"{name}.yaml"
    base = {"pidfile": str(folder / f"{name}.pids"), "spawn-child": True}
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "engine": "vllm",
                "command": [sys.executable, str(ENGINE)],
                "model": "fake-model",
                "port": 0,
                "boot_timeout": 60,
                "args": {**base, **args},
            }
        )
    )
    return path


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def engine_pids(folder: Path) -> list[int]:
    return [int(p) for f in folder.glob("*.pids") for p in f.read_text().split()]


def served_chat(folder: Path) -> bool:
    """An engine under `folder` has answered a chat completion (the readiness chat included)."""
    return any("POST /v1/chat/completions" in p.read_text(errors="replace") for p in logs(folder))


def logs(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.log") if p.is_file()]


def wait_for(condition, timeout: float = 60.0) -> None:
    ends = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < ends, "timed out waiting"
        time.sleep(0.1)


def kill_and_check(tmp_path: Path, argv: list[str], moment: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalrun", *argv],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if moment == "boot":
            wait_for(lambda: len(engine_pids(tmp_path)) >= 2)
        else:
            wait_for(lambda: served_chat(tmp_path))
            time.sleep(0.5)  # the scoring requests are in flight
        assert proc.poll() is None, "evalrun ended before it was killed"
        pids = engine_pids(tmp_path)
        assert pids and all(alive(p) for p in pids)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        ends = time.monotonic() + GONE_WITHIN_S
        while any(alive(p) for p in pids) and time.monotonic() < ends:
            time.sleep(0.1)
        left = [p for p in pids if alive(p)]
        assert not left, f"engine processes {left} outlived evalrun's SIGKILL"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in engine_pids(tmp_path):  # never leave a process behind, even on failure
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("moment", ["boot", "trial"])
def test_kill_9_of_score_contract_leaves_no_engine(tmp_path, moment):
    suite = write_suite(tmp_path / "suite", [simple_item(i, answer="OK") for i in range(40)])
    delays = {"boot-delay": 30} if moment == "boot" else {"reply-delay": 1.0}
    path = contract(tmp_path, "lane", **delays)
    results = tmp_path / "results"
    argv = ["score", "--contract", str(path), "--suite", str(suite), "--results", str(results)]
    kill_and_check(tmp_path, [*argv, "--no-progress"], moment)
    # the next run starts clean: a fresh engine boots and scores
    (tmp_path / "again").mkdir()
    quick = contract(tmp_path / "again", "lane")
    done = subprocess.run(
        [sys.executable, "-m", "evalrun", "score", "--contract", str(quick), "--suite", str(suite)]
        + ["--results", str(results), "--no-progress", "--limit", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not [p for p in engine_pids(tmp_path / "again") if alive(p)]


@pytest.mark.parametrize("moment", ["boot", "trial"])
def test_kill_9_of_bisect_leaves_no_engine(tmp_path, moment):
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(8)])
    delays = {"boot-delay": 30} if moment == "boot" else {"reply-delay": 1.0}
    good = contract(tmp_path, "good", **delays)
    bad = contract(tmp_path, "bad", **delays, message="b")
    argv = ["bisect", "--good", str(good), "--bad", str(bad), "--suite", str(suite)]
    kill_and_check(tmp_path, [*argv, "--results", str(tmp_path / "results")], moment)

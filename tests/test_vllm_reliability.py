"""The real vLLM lane where evalrun's reliability meets it: an engine that requires a key, a
kill -9 of evalrun mid-boot and mid-run (no `vllm serve` left behind), and the default
concurrency on a machine another job keeps busy (no item times out while vLLM queues them)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.vllm import sample_suite, stratified

from evalrun.cli import main

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-vllm-reliability-1234"


def _session(sid: int) -> list[int]:
    """Live processes of session `sid` (the engine's: it runs in a session of its own)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _engine_of(parent: int) -> int | None:
    """The engine evalrun (`parent`) started: its child in a session of its own."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent and int(fields[3]) == int(entry.name):
            return int(entry.name)
    return None


def test_an_engine_with_an_api_key_boots_and_scores(vllm_contract, tmp_path, capsys):
    suite = sample_suite(tmp_path / "suite", stratified(1)[:4])
    results = tmp_path / "results"
    code = main(
        ["score", "--contract", str(vllm_contract), "--set", "port=0"]
        + ["--set", f"args.api-key={KEY}", "--suite", str(suite), "--results", str(results)]
        + ["--no-progress", "--json"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["errors"] == 0 and data["total"] == 4
    folder = Path(data["path"])
    for name in ("run.json", "server.log", "items.jsonl"):
        assert KEY not in (folder / name).read_text()


@pytest.mark.parametrize("moment", ["boot", "run"])
def test_kill_9_of_score_leaves_no_vllm(vllm_contract, tmp_path, moment):
    suite = sample_suite(tmp_path / "suite", stratified(3))
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalrun", "score", "--contract", str(vllm_contract)]
        + ["--set", "port=0", "--suite", str(suite), "--results", str(results), "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    engine = None
    try:
        ends = time.monotonic() + 300
        while time.monotonic() < ends and proc.poll() is None:
            engine = engine or _engine_of(proc.pid)
            logs = list(results.glob("*/server.log"))
            text = logs[0].read_text(errors="replace") if logs else ""
            if engine and (moment == "boot" or "POST /v1/chat/completions" in text):
                break
            time.sleep(0.2)
        assert engine and proc.poll() is None, "evalrun ended before it was killed"
        if moment == "boot":
            time.sleep(3)  # vLLM is loading
        held = _session(engine)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        ends = time.monotonic() + 15
        while _session(engine) and time.monotonic() < ends:
            time.sleep(0.2)
        assert not _session(engine), f"{held} of the engine outlived evalrun's SIGKILL"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _session(engine) if engine else []:
            os.kill(pid, signal.SIGKILL)


def test_default_concurrency_on_a_busy_machine_has_no_timeouts(vllm_contract, tmp_path, capsys):
    """Another job keeps a core busy (a Python loop spinning on one core, niced like none):
    vLLM answers the default 16 requests a few at a time, and none of the queued ones (20 items:
    4 wait for a free slot) times out while the others are answered."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        suite = sample_suite(tmp_path / "suite", stratified(2))
        results = tmp_path / "results"
        code = main(
            ["score", "--contract", str(vllm_contract), "--set", "port=0", "--suite", str(suite)]
            + ["--results", str(results), "--no-progress", "--json"]
        )
    finally:
        busy.kill()
        busy.wait()
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["errors"] == 0, data

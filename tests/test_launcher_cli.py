"""`evalrun score --contract` with a fake engine: what a user sees, and nothing left running."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_launcher import alive, contract_file, pids_of

from evalrun.serving.ports import free_port, port_in_use

pytestmark = pytest.mark.slow  # runs the evalrun CLI and boots fake engines


def score(contract: Path, suite: Path, results: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalrun",
            "score",
            "--contract",
            str(contract),
            "--suite",
            str(suite),
            "--results",
            str(results),
            "--concurrency",
            "2",
            "--no-progress",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_items(results: Path, n: int, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for items in results.glob("*/items.jsonl"):
            if len(items.read_text().splitlines()) >= n:
                return items.parent
        time.sleep(0.1)
    raise AssertionError("the run never got going")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_score_leaves_no_process(
    tmp_path: Path, make_suite: Callable[..., Path], sig: int
) -> None:
    port = free_port()
    pidfile = tmp_path / "pids"
    contract = contract_file(
        tmp_path, port, pidfile=str(pidfile), **{"spawn-child": True, "reply-delay": 0.3}
    )
    results = tmp_path / "results"
    with score(contract, make_suite(n=40), results) as proc:
        try:
            run_dir = wait_for_items(results, 2)
            pids = pids_of(pidfile)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["contract"]["argv"][2] == "fake-model" and run["server"]["engine_version"]
    assert (run_dir / "server.log").exists()
    assert not any(alive(p) for p in pids), "orphan server process left behind"
    assert not port_in_use("127.0.0.1", port)


def test_server_crash_mid_run_is_explained(tmp_path: Path, make_suite: Callable[..., Path]) -> None:
    port = free_port()
    contract = contract_file(tmp_path, port, **{"die-after": 3})
    results = tmp_path / "results"
    with score(contract, make_suite(n=20), results) as proc:
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    line = err.strip().splitlines()[-1]
    assert "fake died with code 139 after boot" in line and "Segmentation fault" in line, err
    assert not port_in_use("127.0.0.1", port)
    # once the process is gone retrying stops: the in-flight items fail on their first try, or
    # their second when the connection broke a moment before the process was seen to exit
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    lines = (run_dir / "items.jsonl").read_text(encoding="utf-8").split("\n")
    errors = [r for r in map(json.loads, filter(None, lines)) if r["status"] == "error"]
    assert errors and len(errors) <= 2 and all(r["attempts"] <= 2 for r in errors), errors


def test_boot_failure_is_one_line_with_a_hint(
    tmp_path: Path, make_suite: Callable[..., Path]
) -> None:
    contract = contract_file(tmp_path, free_port(), **{"no-such-flag": 1})
    with score(contract, make_suite(n=2), tmp_path / "results") as proc:
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    line = err.strip().splitlines()[-1]
    assert line.startswith("evalrun score: error: fake exited with code 2 during boot")
    assert "unrecognized arguments: --no-such-flag" in line and "--unset no-such-flag" in line

"""Kill the scorer mid-run (kill -9, Ctrl-C, SIGTERM), then resume: only missing items are asked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakeserver import last_user, reply, simple_item

from evalrun.cli import main
from evalrun.store import RunStore

REPO = Path(__file__).resolve().parent.parent
N = 30


def start_scoring(endpoint: str, suite: Path, results: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalrun",
            "score",
            "--endpoint",
            endpoint,
            "--suite",
            str(suite),
            "--results",
            str(results),
            "--concurrency",
            "2",
            "--name",
            "killed",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )


def wait_for_items(results: Path, n: int, proc: subprocess.Popen, timeout: float = 30) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = list(results.glob("*/items.jsonl"))
        if files and files[0].read_bytes().count(b"\n") >= n:
            return files[0].parent
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("the scorer wrote no items in time")


@pytest.fixture
def slow_suite(fake_server, make_suite):
    fake_server.latency = 0.05
    fake_server.rule = lambda req: reply("ok" if "question 3:" not in last_user(req) else "no")
    return make_suite([simple_item(i) for i in range(N)])


@pytest.mark.slow
def test_resume_after_kill_9(fake_server, slow_suite, tmp_path, capsys):
    results = tmp_path / "results"
    proc = start_scoring(fake_server.base_url, slow_suite, results)
    folder = wait_for_items(results, 6, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    store = RunStore(results)
    run_id = folder.name
    assert json.loads((folder / "run.json").read_text())["status"] == "running"
    done = {r.id for r in store.load_items(run_id)}
    assert 6 <= len(done) < N
    sent_before = fake_server.chat_requests
    assert sent_before - len(done) <= 3  # lost: the 2 in flight + at most one fsync batch
    assert main(["show", run_id, "--results", str(results)]) == 0  # a killed run shows too
    passed = sum(r.status == "passed" for r in store.load_items(run_id))
    assert f"{passed}/{N} (" in capsys.readouterr().out

    code = main(["score", "--resume", run_id, "--results", str(results), "--no-progress"])
    out = capsys.readouterr().out
    headline = f"{run_id}: mini-v1: {N - 1}/{N} ({round(100 * (N - 1) / N)}/100)"
    assert code == 0 and out.strip().endswith(headline)
    resent = [last_user(r) for r in fake_server.requests[sent_before:]]
    assert len(resent) == N - len(done)  # only the missing items were requested
    ids = [r.id for r in store.load_items(run_id)]
    assert sorted(ids) == sorted(f"basic-{i:03d}" for i in range(N))
    assert store.load_run(run_id).status == "complete"


@pytest.mark.slow
def test_ctrl_c_marks_run_and_exits_130(fake_server, slow_suite, tmp_path):
    results = tmp_path / "results"
    proc = start_scoring(fake_server.base_url, slow_suite, results)
    folder = wait_for_items(results, 3, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "interrupted" and record["summary"]["total"] == N
    assert f"--resume {folder.name}" in err.decode()


def test_sigterm_interrupts_like_ctrl_c(fake_server, slow_suite, tmp_path):
    from evalrun.base.errors import Interrupted
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.suite.load import load_suite

    store = RunStore(tmp_path / "results")

    def rule(req):  # the 4th request: SIGTERM arrives while it is being answered
        if fake_server.chat_requests == 4:
            os.kill(os.getpid(), signal.SIGTERM)
        return reply("ok")

    fake_server.rule = rule
    with pytest.raises(Interrupted, match="resume with --resume"):
        score_suite(
            ScoreRequest(
                target=Target.endpoint(fake_server.base_url),
                suite=load_suite(str(slow_suite)),
                concurrency=1,
            ),
            store,
        )
    record = store.load_run("latest")
    assert record.status == "interrupted" and 0 < len(store.load_items(record.run_id)) < N
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handler restored


def test_resume_retries_items_in_error(fake_server, make_suite, tmp_path, capsys):
    from fakeserver import http_error

    results = tmp_path / "results"
    suite = make_suite(n=3)
    fake_server.rule = lambda req: (
        http_error(400, "nope") if "question 2:" in last_user(req) else reply("ok")
    )
    assert (
        main(
            [
                "score",
                "--endpoint",
                fake_server.base_url,
                "--suite",
                str(suite),
                "--results",
                str(results),
                "--no-progress",
            ]
        )
        == 4
    )
    fake_server.rule = lambda req: reply("ok")
    before = fake_server.chat_requests
    run_id = RunStore(results).resolve("latest")
    assert main(["score", "--resume", run_id, "--results", str(results), "--no-progress"]) == 0
    assert fake_server.chat_requests - before == 1
    assert RunStore(results).load_run(run_id).summary.passed == 3
    capsys.readouterr()


def test_resume_refuses_a_changed_suite(fake_server, make_suite, tmp_path, capsys):
    results = tmp_path / "results"
    main(
        [
            "score",
            "--endpoint",
            fake_server.base_url,
            "--suite",
            str(make_suite(n=2)),
            "--results",
            str(results),
            "--no-progress",
        ]
    )
    run_id = RunStore(results).resolve("latest")
    other = make_suite(n=3)
    code = main(["score", "--resume", run_id, "--suite", str(other), "--results", str(results)])
    assert code == 2 and "resume needs the same suite" in capsys.readouterr().err

"""A run of many items grades its answers in a forked grading process (scoring/judge.py): the
records are the ones grading in the run's own process gives, and the grading process never
outlives the run.

The run is a real `evalrun score` process: a test process has threads (the fake server's), and
a run forks its grader only from a process without any.
"""

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
from evalrun.scoring.judge import APART_FROM

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# The CLI, telling on stderr whether its judge grades apart (nothing else changed).
CLI = """
import sys
import evalrun.scoring.judge as judge
made = judge.Judge.__init__
def init(self, **kw):
    made(self, **kw)
    print("graded apart:", self.apart, file=sys.stderr, flush=True)
judge.Judge.__init__ = init
from evalrun.cli import main
sys.exit(main(sys.argv[1:]))
"""

GARBLED = "wisacke opacityarers thermomorn glimbrath ostrelvaine quonderphilic zastromet"


def answer(body: dict) -> object:
    """Right, wrong, garbled or empty by the item's number: every kind of verdict."""
    n = int(last_user(body).split()[1].rstrip(":"))
    return reply(["ok", "no", GARBLED, ""][n % 4])


def items_by_id(results: Path) -> dict[str, dict]:
    (run,) = [p for p in results.iterdir() if p.is_dir()]
    out = {}
    for line in (run / "items.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for key in ("finished_at", "latency_s"):
            rec.pop(key, None)
        rec["response"].pop("latency_s", None)
        out[rec["id"]] = rec
    return out


def cli(*argv: str, **kw: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        env=env,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


def test_grading_apart_gives_the_records_grading_inline_gives(fake_server, make_suite, tmp_path):
    fake_server.rule = answer
    suite = make_suite([simple_item(i) for i in range(APART_FROM + 6)])
    argv = ["score", "--endpoint", fake_server.base_url, "--suite", str(suite), "--no-progress"]
    proc = cli(*argv, "--results", str(tmp_path / "apart"), stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "graded apart: True" in err
    assert main([*argv, "--results", str(tmp_path / "inline")]) == 0  # threads here: inline
    apart, inline = items_by_id(tmp_path / "apart"), items_by_id(tmp_path / "inline")
    assert apart == inline
    statuses = {r["status"] for r in apart.values()}
    assert statuses == {"passed", "failed"}
    assert any(r.get("garble") and r["garble"]["garbled"] for r in apart.values())


def test_a_small_run_grades_inline(fake_server, make_suite, tmp_path):
    suite = make_suite(n=4)
    proc = cli(
        *("score", "--endpoint", fake_server.base_url, "--suite", str(suite), "--no-progress"),
        *("--results", str(tmp_path / "r")),
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "graded apart: False" in err


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_the_grading_process_ends_with_the_run(fake_server, make_suite, tmp_path, how):
    fake_server.latency = 0.2
    suite = make_suite([simple_item(i) for i in range(APART_FROM * 2)])
    proc = cli(
        *("score", "--endpoint", fake_server.base_url, "--suite", str(suite), "--no-progress"),
        *("--concurrency", "2", "--results", str(tmp_path / "r")),
        stderr=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C goes to the process group, the grader in it too
    )
    assert proc.stderr is not None
    assert "graded apart: True" in proc.stderr.readline()
    deadline = time.monotonic() + 120
    while len(fake_server.requests) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    children = subprocess.run(
        ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children, "no grading process"
    os.killpg(proc.pid, how) if how == signal.SIGINT else proc.send_signal(how)
    proc.communicate(timeout=120)
    assert proc.returncode == (130 if how == signal.SIGINT else -how)
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{c}").exists() for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [c for c in children if Path(f"/proc/{c}").exists()]


def test_the_grading_process_loads_the_lists_before_the_first_answer() -> None:
    # Its warm-up, in a fresh interpreter as a forked grading process starts it: the lists and
    # counts a run's answers look up are loaded then, not while the answers wait.
    probe = (
        "from evalrun.scoring.judge import _warm\n"
        "from evalrun.grading.garble import lexicon as L\n"
        "_warm()\n"
        "print(L._english_pairs.cache_info().currsize, L._wordlist.cache_info().currsize,"
        " len(L.LATIN_LISTS))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    pairs, lists, latin = map(int, out)
    assert pairs == 1 and lists == 2 + latin  # English's two, and every Latin-script list


@pytest.mark.parametrize("n", [4, APART_FROM + 6])
def test_a_grader_kind_nothing_registers_stops_the_run_before_it_asks(
    fake_server, make_suite, tmp_path, n
):
    # Graded apart, the grading process names the kinds it registers (the run's own process
    # never imports the graders); inline, the run's process does: the same error either way.
    items = [simple_item(i) for i in range(n)]
    items[1]["grader"] = {"kind": "no_such_kind"}
    suite = make_suite(items)
    proc = cli(
        *("score", "--endpoint", fake_server.base_url, "--suite", str(suite), "--no-progress"),
        *("--results", str(tmp_path / "r")),
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert f"graded apart: {n >= APART_FROM}" in err
    assert "unknown grader kind(s) no_such_kind; known: all, any, choice" in err
    assert not fake_server.requests
    assert not [p for p in (tmp_path / "r").iterdir() if p.is_dir()]

"""Chaos: the core suite against a server mixing every bad-response shape, killed and restarted
mid-run, then resumed until complete. Every item ends graded or in error, items.jsonl and run.json
agree, and no command crashes."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from fakeserver import FakeServer, Fault, http_error, rate_limited, reply
from test_reliability import MALFORMED, assert_agrees

from evalrun.cli import main
from evalrun.suite.load import load_suite

MALFORMED_BODIES = sorted(MALFORMED)
SHAPES = [  # each served to 5% of requests
    http_error(500, "engine error"),
    rate_limited(0.05),
    Fault(kind="drop"),
    Fault(kind="hang", delay=3),
    Fault(status=200, kind="html", message="Welcome to nginx"),
    Fault(status=200, kind="nonjson", message="OK"),
    "malformed",  # one of MALFORMED's bodies
    Fault(status=200, kind="gzip"),
    Fault(status=200, kind="short", body=b'{"choices": [{"message": {"content": "4'),
    Fault(status=200, kind="trickle", body=b" " * 200, delay=0.02, chunked=True),
    reply("x" * (2 * 1024 * 1024)),  # over --max-response-mb 1
    "odd",  # a real answer with terminal escapes, bidi overrides or a lone surrogate
]
ODD = ["\x1b]0;pwned\x07 \x1b[2J 42 \u202e", "lone \ud800 surrogate 42"]
RATE = 0.05


@pytest.mark.slow
def test_core_suite_under_chaos_then_resume(tmp_path, capsys):
    rng = random.Random(19)
    lock = threading.Lock()

    def rule(request):
        with lock:
            draw = rng.random()
            n = int(draw / RATE)
            pick = rng.randrange(len(MALFORMED_BODIES))
        shape = SHAPES[n] if n < len(SHAPES) else reply("42")
        if shape == "malformed":
            return Fault(status=200, kind="raw", body=MALFORMED[MALFORMED_BODIES[pick]])
        if shape == "odd":
            return reply(ODD[pick % 2])
        return shape

    server = FakeServer(rule=rule).start()
    port = server.port
    endpoint = server.base_url
    results = tmp_path / "results"
    servers = [server]

    def kill_and_restart():
        while servers[0].chat_requests < 120:
            time.sleep(0.01)
        servers[0].stop()
        time.sleep(1.0)
        servers.append(FakeServer(rule=rule).start(port))

    chaos = threading.Thread(target=kill_and_restart, daemon=True)
    chaos.start()
    common = [
        "--results",
        str(results),
        "--no-progress",
        # The default --timeout (120 s), as a user runs it. No shape here waits past 4 s (a hang
        # of 3 s, a trickle of 4 s), so the wall time does not depend on it (one run of ~40 s,
        # machine loaded), and a regression that hangs still ends each run within one --timeout
        # of silence. At --timeout 4 the loaded machine's own stalls timed items out and stopped
        # runs early (three to nine runs to finish, 42-172 s).
        "--max-response-mb",
        "1",
        "--concurrency",
        "8",
    ]
    codes = []
    try:
        codes.append(
            main(["score", "--endpoint", endpoint, "--suite", "core", "--name", "chaos", *common])
        )
        chaos.join(timeout=60)
        (folder,) = results.iterdir()
        for _ in range(8):
            if json.loads((folder / "run.json").read_text())["status"] == "complete":
                break
            codes.append(main(["score", "--resume", folder.name, *common]))
    finally:
        for s in servers:
            s.stop()
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert set(codes) <= {0, 3, 4}, (codes, err[-2000:])
    record, rows = assert_agrees(results)
    suite = load_suite("core")
    assert record["status"] == "complete"
    assert set(rows) == {i.id for i in suite.items}
    assert {r["status"] for r in rows.values()} <= {"passed", "failed", "error"}
    for row in rows.values():
        assert (row["status"] == "error") == (row["grade"] is None)
    kinds = {r["error"]["kind"] for r in rows.values() if r["status"] == "error"}
    assert kinds <= {"bad_response", "too_large", "timeout", "connect", "http"}, kinds
    assert main(["show", "--results", str(results), folder.name]) in (0, 4)
    out = capsys.readouterr().out
    assert "\x1b" not in out
    print(f"chaos: codes {codes}, {sum(r['status'] == 'error' for r in rows.values())} errors")

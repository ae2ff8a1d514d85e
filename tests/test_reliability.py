"""Hostile responses, a torn store, runaway graders: each is a per-item error or a one-line error.

Every test here reproduces one defect against a misbehaving server on 127.0.0.1 or a corrupted
store, and asserts what a user would notice: the exit code, one line on stderr, and that
items.jsonl and run.json agree.
"""

from __future__ import annotations

import errno
import hashlib
import json
import socket
import time
from pathlib import Path

import pytest
import yaml
from fakeserver import Fault, last_user, reply, simple_item
from support.synthruns import items_for, write_run
from test_launcher import contract_file

from evalrun.cli import main
from evalrun.endpoint.response import parse_completion
from evalrun.store import RunStore


def body(message: dict) -> bytes:
    return json.dumps(
        {"model": "fake-model", "choices": [{"message": message, "finish_reason": "stop"}]}
    ).encode()


# Bodies that answer HTTP 200 but are not a usable chat completion.
MALFORMED = {
    "tool_calls_not_objects": body({"role": "assistant", "content": None, "tool_calls": ["x"]}),
    "content_part_text_int": body({"content": [{"type": "text", "text": 5}]}),
    "content_is_number": body({"content": 5}),
    "choice_is_string": b'{"choices": ["x"]}',
    "function_is_string": body({"content": None, "tool_calls": [{"function": "f"}]}),
    "finish_reason_object": json.dumps(
        {"choices": [{"message": {"content": "ok"}, "finish_reason": {"a": 1}}]}
    ).encode(),
    "body_is_list": b"[1, 2]",
    "truncated_json": b'{"choices": [{"message": {"content": "o',
    "not_utf8": b'{"choices": [{"message": {"content": "\xff\xfe"}}]}',
}


def assert_agrees(results: Path) -> tuple[dict, dict[str, dict]]:
    """run.json's summary counts exactly the records items.jsonl holds."""
    (folder,) = [p for p in results.iterdir() if (p / "run.json").exists()]
    record = json.loads((folder / "run.json").read_text())
    lines = (folder / "items.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "", "items.jsonl must end with a newline"
    rows = {r["id"]: r for r in map(json.loads, lines[:-1])}
    s = record["summary"]
    assert s["passed"] == sum(r["status"] == "passed" for r in rows.values())
    assert s["errors"] == sum(r["status"] == "error" for r in rows.values())
    return record, rows


def score(fake, suite, results, *extra: str) -> int:
    return main(
        [
            "score",
            "--endpoint",
            fake.base_url,
            "--suite",
            str(suite),
            "--results",
            str(results),
            "--no-progress",
            "--name",
            "t",
            *extra,
        ]
    )


# -- 1. malformed 200s -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", sorted(set(MALFORMED) - {"truncated_json", "not_utf8"}))
def test_parse_rejects_malformed_shapes_with_value_error(shape):
    with pytest.raises(ValueError):
        parse_completion(json.loads(MALFORMED[shape]))


def test_parse_drops_token_counts_that_are_not_integers():
    data = {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": "many"}}
    resp, _ = parse_completion(data)
    assert resp.content == "ok" and resp.usage is not None and resp.usage.prompt_tokens is None


def test_malformed_200s_are_item_errors_and_the_store_agrees(
    fake_server, make_suite, tmp_path, capsys
):
    shapes = sorted(MALFORMED)
    bad = {f"question {3 * n}:": MALFORMED[s] for n, s in enumerate(shapes)}  # spread out

    def rule(req):
        for marker, raw in bad.items():
            if marker in last_user(req):
                return Fault(status=200, kind="raw", body=raw)
        return reply("ok")

    fake_server.rule = rule
    suite = make_suite([simple_item(i) for i in range(3 * len(shapes))])
    code = score(fake_server, suite, tmp_path / "r", "--concurrency", "4")
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 4
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "complete" and len(rows) == 3 * len(shapes)
    errors = {i for i, r in rows.items() if r["status"] == "error"}
    assert errors == {f"basic-{3 * n:03d}" for n in range(len(shapes))}
    assert {rows[i]["error"]["kind"] for i in errors} == {"bad_response"}


# -- 2. torn tail ----------------------------------------------------------------------------------


def test_resume_after_a_torn_last_line_keeps_every_record(fake_server, make_suite, tmp_path):
    suite = make_suite([simple_item(i) for i in range(6)])
    results = tmp_path / "r"
    assert score(fake_server, suite, results) == 0
    (folder,) = results.iterdir()
    items = folder / "items.jsonl"
    data = items.read_bytes()
    items.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1 + 30])  # last line cut
    run = json.loads((folder / "run.json").read_text())
    run.update(status="interrupted", summary=None)
    (folder / "run.json").write_text(json.dumps(run))
    assert len(RunStore(results).load_items(folder.name)) == 5
    assert score(fake_server, suite, results, "--resume", folder.name) == 0
    record, rows = assert_agrees(results)
    assert record["status"] == "complete" and len(rows) == 6
    assert record["summary"]["passed"] == 6
    assert (folder / "items.jsonl.torn").read_bytes()[:-1] == data[
        data.rstrip(b"\n").rfind(b"\n") + 1 :
    ][:30]


# -- 11. corrupted store files ---------------------------------------------------------------------


def test_an_invalid_record_line_is_a_one_line_error(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}))
    path = store.run_dir("2026-01-01_000000_a") / "items.jsonl"
    lines = path.read_text().split("\n")
    lines.insert(1, '{"id": 5}')
    path.write_text("\n".join(lines))
    assert main(["show", "--results", str(store.root), "2026-01-01_000000_a"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "items.jsonl:2" in err and "Traceback" not in err


def test_run_json_that_is_not_an_object(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}))
    write_run(store, "2026-01-02_000000_b", items_for({"math": 3}))
    (store.run_dir("2026-01-02_000000_b") / "run.json").write_text("[1, 2]")
    assert main(["runs", "--results", str(store.root)]) == 0
    out, err = capsys.readouterr()
    assert "2026-01-01_000000_a" in out and "Traceback" not in err
    assert store.resolve("latest") == "2026-01-01_000000_a"
    assert main(["show", "--results", str(store.root), "2026-01-02_000000_b"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.json" in err


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"anchor": 5}'])
def test_a_corrupted_tags_file_is_a_one_line_error(tmp_path, capsys, text):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}))
    (store.root / "tags.json").write_text(text)
    assert main(["show", "--results", str(store.root), "anchor"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tags.json" in err


# -- 6. model output reaches the terminal escaped ----------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07 10,250 \x1b[2J\u202egnp.exe\x00"


def test_show_escapes_control_sequences(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}, failing=["math-001"]))
    path = store.run_dir("2026-01-01_000000_a") / "items.jsonl"
    hostile = json.dumps(HOSTILE)[1:-1]
    path.write_text(path.read_text().replace("wrong answer to math-001", hostile))
    items = store.load_items("2026-01-01_000000_a")
    assert items[1].response.content == HOSTILE
    assert main(["show", "--results", str(store.root), "latest"]) == 0
    out = capsys.readouterr().out
    assert items and not any(c in out for c in "\x1b\x07\x00\u202e")
    assert "\\x1b]0;pwned\\x07" in out


def test_compare_show_responses_and_signoff_md(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    ids = ["math-000", "math-001"]
    write_run(store, "2026-01-01_000000_a", items_for({"math": 4}, answer=HOSTILE))
    write_run(store, "2026-01-02_000000_b", items_for({"math": 4}, failing=ids))
    for path in store.root.glob("*/items.jsonl"):
        path.write_text(path.read_text().replace("wrong answer to math-00", "10,250 \\u001b[2J"))
    code = main(
        [
            "compare",
            "--results",
            str(store.root),
            "--show-responses",
            "2026-01-01_000000_a",
            "2026-01-02_000000_b",
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1) and "10,250" in out
    assert not any(c in out for c in "\x1b\x07\x00\u202e")
    main(
        [
            "signoff",
            "--results",
            str(store.root),
            "--candidate",
            "2026-01-02_000000_b",
            "--baseline",
            "2026-01-01_000000_a",
        ]
    )
    md = (store.run_dir("2026-01-02_000000_b") / "signoff.md").read_text()
    assert not any(c in md for c in "\x1b\x07\x00\u202e")


# -- 5. catastrophic regex -------------------------------------------------------------------------

EVIL = r"^([a-z ]|[a-z ]{2})+$"  # backtracks through every split into ones and twos
SLOW = "the answer is paris the capital of france which is a beautiful city!"


def test_catastrophic_regex_is_bounded(fake_server, make_suite, tmp_path, capsys):
    item = simple_item(
        0, grader={"kind": "regex", "pattern": EVIL}, accept=["ab", "abc"], reject=["b!"]
    )
    fake_server.rule = lambda req: reply(SLOW)
    suite = make_suite([item, simple_item(1)])
    started = time.monotonic()
    code = score(fake_server, suite, tmp_path / "r", "--timeout", "5")
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed
    _, rows = assert_agrees(tmp_path / "r")
    assert rows["basic-000"]["status"] == "error"
    assert rows["basic-000"]["error"]["kind"] == "grader_timeout"
    assert code == 4 and "Traceback" not in capsys.readouterr().err


def test_suite_check_flags_a_catastrophic_regex(make_suite, capsys):
    item = simple_item(
        0, grader={"kind": "regex", "pattern": EVIL}, accept=["ab", "abc"], reject=[SLOW, "b!"]
    )
    suite = make_suite([item])
    started = time.monotonic()
    code = main(["suite", "check", str(suite)])
    assert time.monotonic() - started < 20
    out = capsys.readouterr().out
    assert code == 1 and "time" in out and "reject[0]" in out


# -- 7. response size ------------------------------------------------------------------------------


def test_response_size_cap(fake_server, make_suite, tmp_path, capsys):
    big = "x" * (3 * 1024 * 1024)
    fake_server.rule = lambda req: reply(big if "question 0:" in last_user(req) else "ok")
    suite = make_suite([simple_item(i) for i in range(3)])
    code = score(fake_server, suite, tmp_path / "r", "--max-response-mb", "1")
    _, rows = assert_agrees(tmp_path / "r")
    assert rows["basic-000"]["status"] == "error"
    assert rows["basic-000"]["error"]["kind"] == "too_large"
    assert "--max-response-mb" in rows["basic-000"]["error"]["message"]
    assert (tmp_path / "r").stat().st_size < 1024 * 1024
    assert code == 4 and "Traceback" not in capsys.readouterr().err


# -- 9. trickled bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [True, False])
def test_timeout_bounds_a_trickled_body(fake_server, make_suite, tmp_path, chunked):
    fake_server.script(
        *[Fault(status=200, kind="trickle", body=b" " * 100, delay=0.2, chunked=chunked)] * 4
    )
    suite = make_suite([simple_item(0)])
    started = time.monotonic()
    score(fake_server, suite, tmp_path / "r", "--timeout", "0.6")
    elapsed = time.monotonic() - started
    _, rows = assert_agrees(tmp_path / "r")
    assert rows["basic-000"]["error"]["kind"] == "timeout"
    assert elapsed < 12, elapsed  # 4 tries of 0.6 s plus backoff, not 4 x 20 s


# -- 10. lone surrogates in a suite ----------------------------------------------------------------


def test_lone_surrogate_in_a_prompt(fake_server, make_suite, tmp_path, capsys):
    item = simple_item(0)
    item["messages"][0]["content"] = "bad SURROGATE text"
    suite = make_suite([item, simple_item(1)])
    items = suite / "items.jsonl"
    items.write_text(items.read_text().replace("SURROGATE", "\\ud800"))  # as a JSON escape
    manifest = json.loads((suite / "manifest.json").read_text())
    manifest["sha256"] = hashlib.sha256(items.read_bytes()).hexdigest()
    (suite / "manifest.json").write_text(json.dumps(manifest))
    assert score(fake_server, suite, tmp_path / "r") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "surrogate" in err and "basic-000" in err
    assert main(["suite", "check", str(suite)]) == 1
    assert "surrogate" in capsys.readouterr().out


# -- 8. disk full ----------------------------------------------------------------------------------


class FullDisk(RunStore):
    """A store whose disk fills up after `room` item appends."""

    def __init__(self, root: Path, room: int) -> None:
        super().__init__(root)
        self.room = room
        self.written = 0  # items appended before the disk filled

    def append_items(self, run_id, items):
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= 1
        super().append_items(run_id, items)
        self.written += len(items)


def test_disk_full_stops_the_run_with_one_line(fake_server, make_suite, tmp_path):
    from evalrun.base.errors import ConfigError
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.suite.load import load_suite

    fake_server.latency = 0.01
    suite = load_suite(str(make_suite([simple_item(i) for i in range(60)])))
    store = FullDisk(tmp_path / "r", room=5)
    with pytest.raises(ConfigError) as info:
        target = Target.endpoint(fake_server.base_url)
        score_suite(ScoreRequest(target=target, suite=suite, concurrency=2), store)
    assert "No space left" in str(info.value) and "--resume" in str(info.value)
    assert "\n" not in str(info.value)
    assert fake_server.chat_requests < 20  # it stopped asking
    (folder,) = store.root.iterdir()
    assert not (folder / "run.json.tmp").exists()
    record, rows = assert_agrees(store.root)
    assert record["status"] == "incomplete"
    # Every item appended before the disk filled is kept, and run.json counts exactly those. (An
    # append holds the items graded since the last one: with grading apart from the requests
    # that can be more than `concurrency`.)
    assert len(rows) == record["summary"]["passed"] == store.written > 0


# -- dead endpoints --------------------------------------------------------------------------------


def test_persistent_429_is_a_dead_endpoint(fake_server, make_suite, tmp_path, capsys):
    fake_server.rule = lambda req: Fault(
        status=429, message="slow down", headers={"Retry-After": "0"}
    )
    suite = make_suite([simple_item(i) for i in range(60)])
    code = score(fake_server, suite, tmp_path / "r", "--concurrency", "4")
    assert code == 3
    assert fake_server.chat_requests < 80  # was 4 x 60
    record, _ = assert_agrees(tmp_path / "r")
    assert record["status"] == "incomplete"
    assert "429" in capsys.readouterr().err


def test_a_hung_endpoint_gives_up_soon(fake_server, make_suite, tmp_path):
    fake_server.latency = 30
    suite = make_suite([simple_item(i) for i in range(40)])
    started = time.monotonic()
    code = score(fake_server, suite, tmp_path / "r", "--concurrency", "4", "--timeout", "1")
    elapsed = time.monotonic() - started
    assert code == 3
    assert elapsed < 8, elapsed  # was 4 tries x 8 items x ~2 rounds


# -- stale runs ------------------------------------------------------------------------------------


def test_a_killed_run_shows_stale(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}))
    path = store.run_dir("2026-01-01_000000_a") / "run.json"
    run = json.loads(path.read_text())
    run.update(status="running", summary=None, pid=2**22 + 7, host=socket.gethostname())
    path.write_text(json.dumps(run))
    assert main(["runs", "--results", str(store.root)]) == 0
    assert "stale" in capsys.readouterr().out


# -- 3. secrets in contract args -------------------------------------------------------------------


@pytest.mark.slow
def test_contract_secrets_stay_out_of_run_json_and_server_log(tmp_path, make_suite, capsys):
    contract = contract_file(tmp_path, 0, **{"api-key": "argsecret789", "print-env": "HF_TOKEN"})
    doc = yaml.safe_load(contract.read_text())
    contract.write_text(yaml.safe_dump({**doc, "env": {"HF_TOKEN": "envsecret456"}}))
    results = tmp_path / "r"
    suite = make_suite([simple_item(0, answer="OK")])
    code = main(
        [
            "score",
            "--contract",
            str(contract),
            "--suite",
            str(suite),
            "--results",
            str(results),
            "--no-progress",
        ]
    )
    assert code == 0, capsys.readouterr().err
    (folder,) = results.iterdir()
    run = (folder / "run.json").read_text()
    log = (folder / "server.log").read_text()
    assert "non-default args" in log and "ENV HF_TOKEN=" in log  # the engine did echo them
    for secret in ("argsecret789", "envsecret456"):
        assert secret not in run and secret not in log
    assert json.loads(run)["contract"]["args"]["api-key"] == "***"


# -- gzip garbage, and a whole record that lost only its newline --------------------------------


def test_gzip_garbage_is_a_bad_response_not_a_connection_error(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: (
        Fault(status=200, kind="gzip") if "question 0:" in last_user(req) else reply("ok")
    )
    suite = make_suite([simple_item(i) for i in range(3)])
    assert score(fake_server, suite, tmp_path / "r") == 4
    _, rows = assert_agrees(tmp_path / "r")
    error = rows["basic-000"]["error"]
    assert error["kind"] == "bad_response" and "gzip" in error["message"]
    assert rows["basic-000"]["attempts"] == 1  # not retried as a network fault


def test_a_record_missing_only_its_newline_is_kept(tmp_path):
    from evalrun.store import repair_tail

    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b"}')
    assert repair_tail(path) == b""
    assert path.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'
    assert not (tmp_path / "items.jsonl.torn").exists()

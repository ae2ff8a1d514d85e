"""What evalrun prints and writes holds up against hostile answers: comma-grouped numbers in a
wrapped table, control bytes on a terminal, and line separators inside JSON lines."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from support.synthruns import items_for, write_run
from support.viewruns import HOSTILE_ID, hostile_run

from evalrun.cli import main
from evalrun.store import RunStore, dump_json_line, json_text

SEPARATORS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_compare_show_responses_with_comma_grouped_answers(tmp_path, capsys):
    store = RunStore(tmp_path / "r")
    write_run(store, "2026-01-01_000000_a", items_for({"math": 3}))
    write_run(store, "2026-01-02_000000_b", items_for({"math": 3}, failing=["math-001"]))
    for run_id, answer in (("2026-01-01_000000_a", "10,000"), ("2026-01-02_000000_b", "10,250")):
        items = store.run_dir(run_id) / "items.jsonl"
        rows = [json.loads(line) for line in items.read_text(encoding="utf-8").split("\n") if line]
        for row in rows:
            if row["id"] == "math-001":
                row["response"]["content"] = answer
        items.write_text("".join(json_text(r) + "\n" for r in rows), encoding="utf-8")
    args = ["compare", "--results", str(store.root), "--show-responses"]
    code = main([*args, "2026-01-01_000000_a", "2026-01-02_000000_b"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "10,000" in out and "10,250" in out


def test_csv_export_to_a_terminal_shows_control_bytes_as_escapes(tmp_path, fake_server):
    store, run_id = hostile_run(tmp_path, fake_server)
    master, slave = pty.openpty()
    cmd = [sys.executable, "-m", "evalrun", "export", run_id, "--format", "csv"]
    proc = subprocess.Popen(
        [*cmd, "--results", str(store.root)], stdout=slave, stderr=subprocess.PIPE
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(30) == 0
    assert proc.stderr is not None
    proc.stderr.close()
    shown = b"".join(chunks).decode("utf-8")
    assert HOSTILE_ID in shown
    assert not any(c in shown for c in "\x1b\x07\x00\u202e")
    assert "\\u202e" in shown  # shown, not obeyed


def test_csv_export_to_a_file_stays_exact(tmp_path, fake_server):
    store, run_id = hostile_run(tmp_path, fake_server)
    out = tmp_path / "x.csv"
    main(["export", run_id, "--format", "csv", "-o", str(out), "--results", str(store.root)])
    assert "\u202e" in out.read_text(encoding="utf-8")  # a file keeps the answer as written


@pytest.mark.parametrize("sep", list(SEPARATORS))
def test_a_json_line_is_one_line_to_splitlines(sep):
    line = dump_json_line({"answer": f"a{sep}b", "id": "x"})
    assert len(line.splitlines()) == 1 and line.endswith("\n")
    assert json.loads(line)["answer"] == f"a{sep}b"


def test_jsonl_export_and_items_read_as_one_record_a_line(tmp_path, fake_server):
    store, run_id = hostile_run(tmp_path, fake_server)
    items = store.run_dir(run_id) / "items.jsonl"
    raw = items.read_text(encoding="utf-8")
    assert not any(c in raw for c in "\x85\u2028\u2029")
    assert len(raw.splitlines()) == raw.count("\n")
    out = tmp_path / "x.jsonl"
    main(["export", run_id, "--format", "jsonl", "-o", str(out), "--results", str(store.root)])
    text = out.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == 12
    assert "\u2028" in next(r for r in rows if r["id"] == HOSTILE_ID)["answer"]


def test_thirty_answers_holding_u2028_export_as_thirty_lines(tmp_path):
    store = RunStore(tmp_path / "r")
    recs = items_for({"math": 30})
    for rec in recs:
        rec.response.content = "one\u2028two\u2029three\x85four"
    write_run(store, "2026-01-01_000000_a", recs)
    out = tmp_path / "x.jsonl"
    main(["export", "latest", "--format", "jsonl", "-o", str(out), "--results", str(store.root)])
    lines = Path(out).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30
    assert json.loads(lines[0])["answer"] == "one\u2028two\u2029three\x85four"

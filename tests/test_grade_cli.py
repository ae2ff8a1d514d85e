"""`evalrun grade --suite SUITE FILE [--json]`, driven through the CLI entry point."""

from __future__ import annotations

import json

from evalrun.cli import main


def write(tmp_path, lines: list[str]):
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


ANSWERS = [
    json.dumps({"id": "math-007", "answer": "**Answer:** 6 × $2.50 = $15.00"}),
    json.dumps({"id": "logic-001", "answer": "C"}),
    "",
    json.dumps(
        {
            "id": "tool-006",
            "answer": {"tool_calls": [{"name": "set_timer", "arguments": '{"minutes": 12}'}]},
        }
    ),
    json.dumps(
        {
            "id": "canary-001",
            "answer": "The blue kettle sings at dawn!!!!!!!!!!!!!!!!!!!!!!!!"
            "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        }
    ),
    json.dumps({"id": "ml-017", "answer": "我每天早上喝咖啡，不喝茶。\u2028"}),
]


def test_json_lines_one_verdict_per_answer(tmp_path, capsys):
    assert main(["grade", "--suite", "core", "--json", str(write(tmp_path, ANSWERS))]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["math-007", "logic-001", "tool-006", "canary-001", "ml-017"]
    assert [o["passed"] for o in out] == [True, False, True, False, False]
    assert out[3]["garbled"] is True and out[3]["detail"].startswith("garbled")
    assert set(out[0]) == {"id", "passed", "detail", "garbled"}


def test_table_escapes_control_characters(tmp_path, capsys):
    path = write(tmp_path, [json.dumps({"id": "canary-010", "answer": "Hello, word \x1b[2J!"})])
    assert main(["grade", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b" in out
    assert "0/1 passed (core-v5)" in out


def test_bad_lines_are_one_line_errors_naming_the_line(tmp_path, capsys):
    cases = {
        '{"id": "nope", "answer": "x"}': "unknown item id 'nope'",
        "not json": "not a JSON object",
        '{"id": "math-001"}': '{"id": ITEM_ID, "answer": ANSWER}',
        '{"id": "math-001", "answer": 8}': "answer must be a string or an object",
        '{"id": "math-001", "answer": {"text": "8"}}': "unknown answer keys",
    }
    for line, said in cases.items():
        path = write(tmp_path, [json.dumps({"id": "math-001", "answer": "8"}), line])
        assert main(["grade", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"{path}:2:" in err and said in err, err
    assert main(["grade", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_suite_graders_lists_every_registered_kind(capsys):
    from evalrun.grading.registry import GRADERS

    assert main(["suite", "graders"]) == 0
    out = capsys.readouterr().out
    kinds = [line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert kinds == sorted(GRADERS)
    assert "contains" not in kinds and "reject_units" in out and "sequence" in kinds


def test_explain_names_the_span_each_grader_read(tmp_path, capsys):
    lines = [
        json.dumps({"id": "factual-004", "answer": "Saturn? No — Jupiter."}),
        json.dumps({"id": "math-017", "answer": "Each pays $29 (3 × 29 = 87)."}),
    ]
    assert main(["grade", "--json", "--explain", str(write(tmp_path, lines))]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["passed"] for o in out] == [True, True]
    assert out[0]["span"] == "Jupiter." and "87" not in out[1]["span"]
    assert main(["grade", "--explain", str(write(tmp_path, lines))]) == 0
    table = capsys.readouterr().out
    assert "read" in table.splitlines()[0] and "Jupiter." in table


def _stored_run(tmp_path, version: int = 5, sha256: str | None = None, more=()):
    """A run folder of core-v`version` holding three items (and `more`: (id, content, passed))
    as an older grader recorded them."""
    from evalrun.store import ItemRecord, RunRecord, RunStore, SuiteRef, dump_json_line
    from evalrun.suite.load import load_suite

    suite = load_suite("core")
    store = RunStore(tmp_path / "results")
    record = RunRecord(
        run_id="2026-12-01_100000_old",
        label="old",
        evalrun_version="0.1.0",
        suite=SuiteRef(name="core", version=version, sha256=sha256 or suite.sha256),
        endpoint="http://127.0.0.1:8000/v1",
        model_served="m",
        started_at="2026-12-01T10:00:00+00:00",
        status="complete",
    )
    store.write_run(record)

    def answered(item_id, content, passed):
        return ItemRecord(
            id=item_id,
            category=item_id.rsplit("-", 1)[0],
            status="passed" if passed else "failed",
            request={"model": "m"},
            response={"content": content, "finish_reason": "stop", "tool_calls": []},
            grade={"passed": passed, "detail": "as recorded"},
        )

    items = [
        answered("math-009", "one hundred fifty-five minutes", False),
        answered("factual-001", "Ottawa", True),
        ItemRecord(
            id="code-001",
            category="code",
            status="error",
            request={"model": "m"},
            error={"kind": "timeout", "message": "read timed out"},
        ),
        *(answered(*row) for row in more),
    ]
    folder = store.run_dir(record.run_id)
    (folder / "items.jsonl").write_text("".join(dump_json_line(i) for i in items), "utf-8")
    return folder


def test_a_stored_run_is_graded_again_beside_its_recorded_verdicts(tmp_path, capsys):
    folder = _stored_run(tmp_path)
    assert main(["grade", "--json", str(folder)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["id"], o["was_passed"], o["passed"]) for o in out] == [
        ("math-009", False, True),
        ("factual-001", True, True),
    ]
    assert main(["grade", str(folder)]) == 0
    assert "recorded 1/2; changed: math-009" in capsys.readouterr().out


def test_a_run_of_another_suite_version_is_refused_in_one_line(tmp_path, capsys):
    assert main(["grade", str(_stored_run(tmp_path, version=1))]) == 2
    err = capsys.readouterr().err
    assert "was scored on core-v1, not core-v5" in err and len(err.strip().splitlines()) == 1


def _earlier_sha256(version: int):
    from evalrun.suite.earlier import earlier_version
    from evalrun.suite.load import load_suite

    earlier = earlier_version(load_suite("core"), version)
    assert earlier is not None
    return earlier.sha256


def test_a_core_v2_run_is_graded_again_on_the_items_whose_prompt_is_unchanged(tmp_path, capsys):
    # long-004's prompt changed in core-v3 (do not quote other entries): its v2 answer is to
    # another question and is listed, not graded; math-009 and factual-001 are asked as in v2
    more = [("long-004", "4471", True)]
    folder = _stored_run(tmp_path, version=2, sha256=_earlier_sha256(2), more=more)
    assert main(["grade", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "1/2 passed (core-v5)" not in out and "2/2 passed (core-v5)" in out
    assert "changed: math-009" in out and "long-004" not in out.split("recorded")[0]
    assert "not graded again (prompt changed since core-v2): long-004" in out
    assert main(["grade", "--json", str(folder)]) == 0
    got = capsys.readouterr()
    assert [json.loads(line)["id"] for line in got.out.splitlines()] == ["math-009", "factual-001"]
    assert "long-004" in got.err


def test_a_core_v3_run_is_graded_again_on_the_items_whose_prompt_is_unchanged(tmp_path, capsys):
    # logic-016's prompt changed in core-v4 ("One word is enough." for "Reply with one word."):
    # its v3 answer is listed, not graded; math-009 and factual-001 are asked as in v3
    more = [("logic-016", "North", True)]
    folder = _stored_run(tmp_path, version=3, sha256=_earlier_sha256(3), more=more)
    assert main(["grade", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "2/2 passed (core-v5)" in out and "changed: math-009" in out
    assert "not graded again (prompt changed since core-v3): logic-016" in out


def test_a_core_v4_run_is_graded_again_on_every_item(tmp_path, capsys):
    # core-v5 changed graders only, no prompt: every answer of a v4 run is graded again, and
    # a copy that drops the comma of "Hello, world!" no longer passes
    more = [("canary-010", "Hello world!", True)]
    folder = _stored_run(tmp_path, version=4, sha256=_earlier_sha256(4), more=more)
    assert main(["grade", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "2/3 passed (core-v5)" in out and "canary-010" in out.split("recorded")[1]
    assert "not graded again" not in out


def test_a_core_v2_run_whose_hash_is_not_core_v2_is_refused(tmp_path, capsys):
    folder = _stored_run(tmp_path, version=2, sha256="0" * 64)
    assert main(["grade", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "was scored on core-v2, not core-v5" in err and len(err.strip().splitlines()) == 1

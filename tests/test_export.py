"""Exports parse with the standard tools, hold each item once (after a resume too), and carry the
hostile answer intact (jsonl) or safely (csv formula guard, XML-invalid characters escaped)."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.viewruns import ERRORED_IDS, GARBLED_ID, HOSTILE, HOSTILE_ID, hostile_run

from evalrun.cli import main
from evalrun.store import read_jsonl_records
from evalrun.viewing.export import render_export, xml_safe
from evalrun.viewing.runview import load_view


@pytest.fixture
def run(tmp_path: Path, fake_server):
    return hostile_run(tmp_path, fake_server)


def test_items_jsonl_repeats_but_exports_do_not(run) -> None:
    store, run_id = run
    raw = [r["id"] for r in read_jsonl_records(store.run_dir(run_id) / "items.jsonl")]
    assert len(raw) == 14 and all(raw.count(i) == 2 for i in ERRORED_IDS)  # the resume's repeats
    rows = [
        json.loads(line)
        for line in render_export(load_view(store, run_id), "jsonl").split("\n")
        if line
    ]
    ids = [r["id"] for r in rows]
    assert len(ids) == 12 == len(set(ids))
    by_id = {r["id"]: r for r in rows}
    assert {by_id[i]["status"] for i in ERRORED_IDS} == {"passed"}  # the final attempt
    assert by_id[HOSTILE_ID]["answer"] == HOSTILE  # exact, U+2028 and all
    assert by_id[GARBLED_ID]["garbled"] is True and by_id[GARBLED_ID]["garble_reasons"]
    assert by_id["math-004"]["status"] == "failed" and by_id["math-004"]["reasoning"]
    assert by_id["basic-003"]["tool_calls"] == [{"name": "lookup", "arguments": {"q": "<b>x</b>"}}]
    assert by_id["basic-000"]["prompt_tokens"] and by_id["basic-000"]["latency_s"] is not None


def test_csv_parses_with_the_csv_module(run, tmp_path: Path, capsys) -> None:
    store, run_id = run
    out = tmp_path / "items.csv"
    assert (
        main(["export", run_id, "--format", "csv", "-o", str(out), "--results", str(store.root)])
        == 0
    )
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and len({r["id"] for r in rows}) == 12
    hostile = next(r for r in rows if r["id"] == HOSTILE_ID)
    assert hostile["answer"] == HOSTILE  # newlines, quotes, U+2028 survive quoting
    assert next(r for r in rows if r["id"] == GARBLED_ID)["garbled"] == "true"


def test_csv_guards_spreadsheet_formulas() -> None:
    from evalrun.store.export import csv_cell as _csv_cell

    assert _csv_cell("answer", '=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert _csv_cell("answer", "+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0"
    assert _csv_cell("answer", "@SUM(A1)") == "'@SUM(A1)"
    assert _csv_cell("answer", "-5") == "-5"  # a number stays a number
    assert _csv_cell("id", "=x") == "=x"  # ids come from the suite, not the model


def test_junit_parses_and_names_failures(run, tmp_path: Path) -> None:
    store, run_id = run
    out = tmp_path / "junit.xml"
    assert (
        main(["export", run_id, "--format", "junit", "-o", str(out), "--results", str(store.root)])
        == 0
    )
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == 12 == int(suite.get("tests", "0"))
    by_name = {c.get("name"): c for c in cases}
    failures = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert int(suite.get("failures", "0")) == len(failures)
    assert failures[GARBLED_ID].get("type") == "garbled"
    assert "garbled" in failures[GARBLED_ID].get("message", "")
    assert failures["math-004"].get("type") == "failed"
    assert (
        by_name["basic-000"].find("failure") is None
        and by_name["basic-000"].get("classname") == "mini.basic"
    )
    hostile_out = by_name[HOSTILE_ID].find("system-out")
    assert hostile_out is not None and SCRIPT_TEXT in (hostile_out.text or "")


SCRIPT_TEXT = "<script>window.__pwned"


def test_junit_errors_skips_and_bad_xml_characters(tmp_path: Path, fake_server) -> None:
    from fakeserver import http_error, simple_item, write_suite

    from evalrun.endpoint.client import RetryPolicy
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.store import RunStore
    from evalrun.suite.load import load_suite

    suite = load_suite(str(write_suite(tmp_path / "s", [simple_item(n) for n in range(3)])))
    store = RunStore(tmp_path / "r")
    fake_server.rule = lambda b: (
        http_error(400, "bad \x00 request") if "question 1" in str(b) else "ok \x07\ud800 bell"
    )
    req = ScoreRequest(
        target=Target.endpoint(fake_server.base_url), suite=suite, retry=RetryPolicy(attempts=1)
    )
    record, _ = score_suite(req, store)
    text = render_export(load_view(store, record.run_id), "junit")
    root = ET.fromstring(text.encode("utf-8"))
    suite_el = root.find("testsuite")
    assert suite_el is not None and suite_el.get("errors") == "1"
    err = suite_el.find("testcase[@name='basic-001']/error")
    assert err is not None and "\\x00" in err.get("message", "")
    assert xml_safe("a\x1bb\ufffe") == "a\\x1bb\\ufffe"
    # an item the run never reached is a skipped testcase
    path = store.run_dir(record.run_id) / "items.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(x for x in lines if '"basic-002"' not in x), encoding="utf-8")
    root = ET.fromstring(render_export(load_view(store, record.run_id), "junit"))
    assert root.find("testsuite/testcase[@name='basic-002']/skipped") is not None


def test_score_junit_writes_at_the_end(fake_server, make_suite, tmp_path: Path) -> None:
    out = tmp_path / "ci.xml"
    rc = main(
        [
            "score",
            "--endpoint",
            fake_server.base_url,
            "--suite",
            str(make_suite()),
            "--results",
            str(tmp_path / "r"),
            "--junit",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    assert len(ET.parse(out).getroot().findall("testsuite/testcase")) == 4


def test_export_stdout_and_bad_run(run, capsys) -> None:
    store, run_id = run
    assert main(["export", "--format", "jsonl", "--results", str(store.root)]) == 0
    lines = [json.loads(x) for x in io.StringIO(capsys.readouterr().out) if x.strip()]
    assert len(lines) == 12
    assert main(["export", "nope", "--results", str(store.root)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_score_junit_is_the_export_of_the_stored_run(fake_server, tmp_path: Path) -> None:
    """The JUnit file a score writes, a stopped run's and its resume's too, is byte for byte what
    `evalrun export --format junit` writes of the stored run afterwards."""
    from support.viewruns import MODEL, _items, answer_for, write_suite

    import evalrun
    from evalrun.base.errors import EndpointError

    suite = write_suite(tmp_path / "suite", _items(), name="mini")
    results = tmp_path / "results"
    fake_server.models = [MODEL]

    def exported(run_id: str) -> bytes:
        out = tmp_path / f"export-{run_id}.xml"
        argv = ["export", run_id, "--format", "junit", "-o", str(out), "--results", str(results)]
        assert main(argv) == 0
        return out.read_bytes()

    def dies(body: dict) -> object:
        if fake_server.chat_requests >= 4:
            fake_server.down = True
        return answer_for(body, first_pass=False)

    common = {"suite": str(suite), "results": results, "progress": False, "concurrency": 1}
    stopped, resumed = tmp_path / "stopped.xml", tmp_path / "resumed.xml"
    fake_server.rule = dies
    with pytest.raises(EndpointError) as info:
        evalrun.score(fake_server.base_url, junit=stopped, timeout=1, **common)
    run_id = info.value.run_id
    assert run_id and stopped.read_bytes() == exported(run_id)
    assert b"<skipped" in stopped.read_bytes()
    fake_server.down = False
    fake_server.rule = lambda body: answer_for(body, first_pass=False)
    record = evalrun.score(fake_server.base_url, resume=run_id, junit=resumed, **common)
    assert resumed.read_bytes() == exported(record.run_id)
    assert b"<skipped" not in resumed.read_bytes() and b"<failure" in resumed.read_bytes()

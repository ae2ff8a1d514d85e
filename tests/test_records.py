"""Run records, schema 2: typed fields, bytes that round-trip, and schema-1 runs read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakeserver import last_user, reply, simple_item
from pydantic import ValidationError

from evalrun.base.errors import ConfigError
from evalrun.bisection.driver import BisectRecord
from evalrun.compare.pairing import garble_kind
from evalrun.endpoint.client import RetryPolicy
from evalrun.endpoint.options import RequestOptions
from evalrun.grading.garble import detect
from evalrun.scoring.run import ScoreRequest, score_suite
from evalrun.serving.target import Target
from evalrun.slope.record import SlopeRecord
from evalrun.store import ItemRecord, RunRecord, RunStore, dump_json_line, numbered_rows
from evalrun.store.records import upgrade_run
from evalrun.suite.load import load_suite
from evalrun.verdicts import SIGNAL_FAMILY, upgrade_v1

SOUP = "wisacke wislished wisStackAs wisinkelilarly the wisUT wisAP wisOf wisOr wisOr"


def _scored(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: reply(SOUP if "question 0:" in last_user(req) else "ok")
    suite = load_suite(
        str(make_suite([simple_item(0), simple_item(1), simple_item(2, answer="no")]))
    )
    req = ScoreRequest(
        target=Target.endpoint(fake_server.host_url, options=RequestOptions()),
        suite=suite,
        retry=RetryPolicy(attempts=1),
    )
    store = RunStore(tmp_path / "results")
    record, recs = score_suite(req, store)
    return store, record, recs


def test_a_stored_item_line_round_trips_byte_for_byte(fake_server, make_suite, tmp_path):
    store, record, recs = _scored(fake_server, make_suite, tmp_path)
    path = store.run_dir(record.run_id) / "items.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 3
    for line in lines:
        assert dump_json_line(ItemRecord.model_validate_json(line)) == line
    run_json = (store.run_dir(record.run_id) / "run.json").read_text(encoding="utf-8")
    assert store.load_run(record.run_id).model_dump_json(indent=2) == run_json


def test_item_fields_are_typed(fake_server, make_suite, tmp_path):
    store, record, _ = _scored(fake_server, make_suite, tmp_path)
    by_id = {r.id: r for r in store.load_items(record.run_id)}
    soup, fine = by_id["basic-000"], by_id["basic-001"]
    assert soup.garbled and soup.status == "failed" and not fine.garbled
    assert soup.garble is not None and soup.garble.channel == "content"
    assert soup.garble.signals and all(
        s.family == SIGNAL_FAMILY[s.name] for s in soup.garble.signals
    )
    assert soup.grade is not None and soup.grade.detail.startswith("garbled (content): ")
    assert soup.response is not None and soup.response.content == SOUP
    assert fine.grade is not None and fine.grade.passed and fine.detail == fine.grade.detail
    assert record.summary is not None and record.summary.garbled == 1


@pytest.mark.parametrize(
    "text",
    [
        SOUP,
        json.dumps({"name": "Ivan", "bio": SOUP}),  # read inside JSON strings
        "ok " + SOUP * 700,  # longer than the detector reads: a note says which part it judged
    ],
)
def test_schema_1_reasons_read_back_into_the_same_verdict(text):
    v = detect(text, ["en", "json"] if text.startswith("{") else ["en"])
    v1 = {"garbled": v.garbled, "score": v.score, "kind": v.kind, "reasons": v.reasons}
    back = type(v).model_validate(upgrade_v1(v1))
    assert back.reasons == v.reasons and back.kind == v.kind and back.garbled
    assert [s.name for s in back.signals] == [s.name for s in v.signals]


def _v1_run(store: RunStore, version: int = 1) -> str:
    """A run folder the way schema-1 evalrun wrote it."""
    run_id = "2026-01-01_000000_old"
    folder = store.root / run_id
    folder.mkdir(parents=True)
    run = {
        "schema_version": version,
        "run_id": run_id,
        "label": "old",
        "evalrun_version": "0.1.0",
        "suite": {"name": "core", "version": 1, "sha256": "a" * 64},
        "endpoint": "http://127.0.0.1:1/v1",
        "started_at": "2026-01-01T00:00:00+00:00",
        "status": "complete",
    }
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    base = {"category": "c", "request": {"model": "m"}, "attempts": 1}
    answer = {"content": "x", "reasoning": None, "tool_calls": [], "finish_reason": "stop"}
    rows = [
        {
            **base,
            "id": "a",
            "status": "failed",
            "response": answer,
            "grade": {"passed": False, "detail": "garbled (content): flood (0.91): 'x' x 200"},
            "garble": {
                "garbled": True,
                "score": 0.91,
                "reasons": ["flood (0.91): 'x' repeated 200 times", "repetition (0.30): lines"],
                "channel": "content",
            },
            "repeats": [{"status": "failed", "detail": "garbled", "garbled": True}],
        },
        {
            **base,
            "id": "b",
            "status": "failed",
            "response": answer,
            "grade": {"passed": False, "detail": "garbled"},
            "garble": {"garbled": True, "score": 0.8, "reasons": ["soup (0.80): made-up words"]},
        },
        {
            **base,
            "id": "c",
            "status": "error",
            "error": {"kind": "timeout", "message": "read timed out", "http_status": None},
        },
    ]
    (folder / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    return run_id


def test_a_schema_1_run_is_read_as_schema_2(tmp_path):
    store = RunStore(tmp_path)
    run_id = _v1_run(store)
    assert store.load_run(run_id).schema_version == 2
    a, b, c = store.load_items(run_id)
    assert a.garble is not None and a.garble.reasons[0] == "flood (0.91): 'x' repeated 200 times"
    assert [s.family for s in a.garble.signals] == ["flood", "loop"]
    # Written before verdicts had a kind: floods and repetitions only count as a loop, as then.
    assert garble_kind(a) == "loop" and garble_kind(b) == "soup"
    assert a.repeats is not None and a.repeats[0].garbled
    assert c.error is not None and c.error.kind == "timeout" and c.detail == "timeout"


def test_a_run_from_a_newer_evalrun_is_refused_in_one_line(tmp_path):
    store = RunStore(tmp_path)
    run_id = _v1_run(store, version=3)
    with pytest.raises(ConfigError) as exc:
        store.load_run(run_id)
    assert "schema_version 3" in str(exc.value) and "\n" not in str(exc.value)


def test_resuming_a_schema_1_file_keeps_both_shapes_readable(tmp_path):
    store = RunStore(tmp_path)
    run_id = _v1_run(store)
    new = ItemRecord(id="d", category="c", status="passed", request={"model": "m"})
    store.append_items(run_id, [new])
    rows = numbered_rows(store.run_dir(run_id) / "items.jsonl")
    assert len(rows) == 4 and "reasons" in rows[0][1]["garble"]
    assert [r.id for r in store.load_items(run_id)] == ["a", "b", "c", "d"]


RECORDS = Path(__file__).parent / "data" / "records"


@pytest.mark.parametrize("path", sorted(RECORDS.glob("bisect-*.json")), ids=lambda p: p.stem)
def test_a_stored_bisect_record_reads_typed_and_rewrites_byte_for_byte(path):
    """Stored by earlier runs (knob mode with `values` added last, contracts mode with token
    fidelity, git mode): each typed field reads, and the record writes back unchanged."""
    text = path.read_text(encoding="utf-8")
    record = BisectRecord.model_validate_json(text)
    assert record.model_dump_json(indent=2) == text
    for row in [*record.culprits, *(a for t in record.trials for a in t.applied)]:
        assert set(row) == {"knob", "value"}
    assert all(
        t.fidelity is None or t.fidelity.line.startswith("fidelity: ") for t in record.trials
    )


def test_a_bisect_record_with_a_mistyped_fragment_is_refused():
    data = json.loads((RECORDS / "bisect-knob.json").read_text(encoding="utf-8"))
    data["culprits"] = [{"knob": "load-format", "valeu": "dummy"}]
    with pytest.raises(ValidationError, match="culprits.0"):
        BisectRecord.model_validate(data)
    data["culprits"] = []
    data["settings"]["tries"] = "twice"
    with pytest.raises(ValidationError, match="settings.tries"):
        BisectRecord.model_validate(data)


@pytest.mark.parametrize("path", sorted(RECORDS.glob("run-*.json")), ids=lambda p: p.stem)
def test_a_stored_run_record_reads_typed_and_rewrites_byte_for_byte(path):
    """Stored by earlier runs: a booted contract (and evalrun's own checkout), a selection by
    items and categories, by tags, a --limit with --repeats, sent headers (redacted), extra body."""
    text = path.read_text(encoding="utf-8")
    record = RunRecord.model_validate(upgrade_run(json.loads(text), str(path)))
    assert record.model_dump_json(indent=2) == text
    if record.contract is not None:
        assert record.contract["hash"] and record.server and record.server["log_path"]


@pytest.mark.parametrize("path", sorted(RECORDS.glob("slope-*.json")), ids=lambda p: p.stem)
def test_a_stored_slope_record_rewrites_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    assert SlopeRecord.model_validate_json(text).model_dump_json(indent=2) == text


def test_a_run_record_with_a_mistyped_server_is_refused():
    data = json.loads((RECORDS / "run-contract-own-git.json").read_text(encoding="utf-8"))
    data["server"]["boot_seconds"] = "slow"
    with pytest.raises(ValidationError, match="server.boot_seconds"):
        RunRecord.model_validate(data)


@pytest.mark.parametrize(
    ("field", "key", "value"),
    [
        ("sampling", "temperature", "warm"),
        ("selection", "ids", "a-000"),
        ("fidelity", "tokens", "many"),
        ("provenance", "git", "clean"),
    ],
)
def test_a_run_record_with_a_mistyped_fragment_is_refused(field, key, value):
    data = json.loads((RECORDS / "run-limit-repeats.json").read_text(encoding="utf-8"))
    data[field][key] = value
    with pytest.raises(ValidationError, match=f"{field}.{key}"):
        RunRecord.model_validate(data)


def test_a_run_record_reads_its_fragments_typed():
    def load(name: str) -> RunRecord:
        text = (RECORDS / name).read_text(encoding="utf-8")
        return RunRecord.model_validate(upgrade_run(json.loads(text), name))

    repeated, no_tokens = load("run-limit-repeats.json"), load("run-contract-extra-no-tokens.json")
    assert (repeated.repeats, repeated.tokens_unavailable) == (2, None)
    assert repeated.selection["ids"] == ["a-000", "a-001", "b-003", "c-004"]
    assert repeated.provenance is not None and repeated.provenance["git"]["dirty"] is False
    assert no_tokens.repeats == 1
    assert no_tokens.tokens_unavailable == (
        "the endpoint answered without logprobs (it ignores the logprobs field)"
    )


def test_a_run_record_without_provenance_reads_and_writes_none():
    """Records made without collecting provenance were written with `{}`; both read as None."""
    data = json.loads((RECORDS / "run-selection-tags.json").read_text(encoding="utf-8"))
    for empty in ({}, None):
        record = RunRecord.model_validate({**data, "provenance": empty})
        assert record.provenance is None
        assert json.loads(record.model_dump_json())["provenance"] is None

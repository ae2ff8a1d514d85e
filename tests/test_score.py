"""score_suite end to end against the fake endpoint: records, errors, diagnoses, early stop."""

from __future__ import annotations

import json

import pytest
from fakeserver import (
    Fault,
    context_length_400,
    http_error,
    last_user,
    reply,
    simple_item,
    tool_choice_400,
)

from evalrun.base.errors import EndpointError, SuiteError, UsageError
from evalrun.endpoint.client import RetryPolicy
from evalrun.endpoint.options import RequestOptions
from evalrun.grading import garble
from evalrun.grading import registry as graders
from evalrun.grading.garble import GarbleSignal, GarbleVerdict
from evalrun.scoring.run import ScoreHooks, ScoreRequest, score_suite
from evalrun.serving.target import Target
from evalrun.store import RunStore
from evalrun.suite.load import load_suite
from evalrun.suite.select import Selection

FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def run(fake, suite_dir, tmp_path, *, model=None, options=None, stop_when=None, **kw):
    """score_suite on the fake, the way a Python caller builds the request."""
    kw.setdefault("retry", FAST)
    target = Target.endpoint(fake.host_url, model=model, options=options or RequestOptions())
    picks = {k: kw.pop(k) for k in ("tags", "limit", "selection") if k in kw}
    if "selection" in picks:
        kw["selection"] = picks["selection"]
    elif picks:
        tags = picks.get("tags")
        kw["selection"] = Selection(
            tags=tuple(sorted(tags)) if tags else None, limit=picks.get("limit")
        )
    req = ScoreRequest(target=target, suite=load_suite(str(suite_dir)), **kw)
    return score_suite(req, RunStore(tmp_path / "results"), ScoreHooks(stop_when=stop_when))


def test_run_writes_record_and_items(fake_server, make_suite, tmp_path):
    items = [simple_item(i) for i in range(3)] + [simple_item(9, answer="no", category="other")]
    record, recs = run(fake_server, make_suite(items), tmp_path, label="My Run")
    s = record.summary
    assert (s.passed, s.total, s.score, s.errors) == (3, 4, 75, 0)
    assert s.categories["basic"].passed == 3 and s.categories["other"].total == 1
    assert record.status == "complete" and record.run_id.endswith("_My-Run")
    assert record.model_served == "fake-model" and record.endpoint == fake_server.base_url
    folder = tmp_path / "results" / record.run_id
    on_disk = json.loads((folder / "run.json").read_text())
    assert on_disk["schema_version"] == 2 and on_disk["suite"]["sha256"] == record.suite.sha256
    assert on_disk["sampling"]["temperature"] == 0 and on_disk["evalrun_version"]
    lines = (folder / "items.jsonl").read_bytes().split(b"\n")
    assert len([ln for ln in lines if ln]) == 4
    # items land in the order they finish: pick a passing one by its category, not its line
    first = next(r for r in map(json.loads, filter(None, lines)) if r["category"] == "basic")
    assert first["request"]["max_tokens"] == 16 and first["request"]["temperature"] == 0
    assert first["response"]["content"] == "ok" and first["grade"]["passed"] is True
    # requests went out as the items say
    sent = fake_server.requests[0]
    assert sent["temperature"] == 0 and sent["max_tokens"] == 16 and sent["model"] == "fake-model"


def test_default_label_is_model_slug(fake_server, make_suite, tmp_path):
    fake_server.models = ["org/Qwen3-8B"]
    record, _ = run(fake_server, make_suite(n=1), tmp_path)
    assert record.run_id.endswith("_Qwen3-8B") and record.model_requested is None


def test_tools_and_extra_body_are_sent(fake_server, make_suite, tmp_path):
    item = simple_item(0, tools=TOOLS, tool_choice="auto")
    run(
        fake_server,
        make_suite([item]),
        tmp_path,
        options=RequestOptions(extra_body={"chat_template_kwargs": {"enable_thinking": False}}),
    )
    sent = fake_server.requests[0]
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "auto"
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}


def test_errors_are_never_graded(fake_server, make_suite, tmp_path, monkeypatch):
    graded = []
    real = graders.grade
    monkeypatch.setattr(
        graders, "grade", lambda item, resp: graded.append(item.id) or real(item, resp)
    )
    fake_server.rule = lambda req: Fault(500) if "question 1:" in last_user(req) else reply("ok")
    record, recs = run(fake_server, make_suite(n=3), tmp_path)
    bad = [r for r in recs if r.status == "error"]
    assert len(bad) == 1 and bad[0].id == "basic-001"
    assert bad[0].grade is None and bad[0].response is None
    assert bad[0].error.http_status == 500 and bad[0].attempts == 2
    assert "basic-001" not in graded and len(graded) == 2
    assert record.summary.errors == 1 and record.summary.passed == 2 and record.summary.total == 3
    assert record.status == "complete"


def test_endpoint_that_dies_midway_stops_early(fake_server, make_suite, tmp_path):
    def rule(req):
        if fake_server.chat_requests >= 4:
            fake_server.down = True
        return reply("ok")

    fake_server.rule = rule
    store = RunStore(tmp_path / "results")
    with pytest.raises(EndpointError, match="stopped answering.*--resume"):
        score_suite(
            ScoreRequest(
                target=Target.endpoint(fake_server.base_url),
                suite=load_suite(str(make_suite(n=60))),
                concurrency=2,
                retry=FAST,
            ),
            store,
        )
    record = store.load_run("latest")
    assert record.status == "incomplete"
    assert record.summary.total == 60 and record.summary.passed < 10
    assert len(store.load_items(record.run_id)) < 20  # did not burn through all 60 items


def test_stop_when_halts_without_an_error(fake_server, make_suite, tmp_path):
    """A caller's stop rule (bisect: garble certain) ends the run early; it is not a failure."""
    seen = []

    def stop_when(rec):
        seen.append(rec.id)
        return "enough" if len(seen) == 3 else None

    fake_server.latency = lambda req: 0.5 if "question 3" in last_user(req) else 0.02
    record, recs = run(fake_server, make_suite(n=40), tmp_path, concurrency=2, stop_when=stop_when)
    assert record.status == "incomplete" and len(seen) == len(recs) == 3
    # the slow request in flight at the halt was dropped, not waited for
    assert fake_server.chat_requests == 4 and "basic-003" not in {r.id for r in recs}


def test_garble_verdict_recorded_and_counted(fake_server, make_suite, tmp_path, monkeypatch):
    seen = []

    def check(response, expect=None):
        seen.append(expect)
        bad = "soup" in (response.content or "")
        return GarbleVerdict(
            garbled=bad,
            score=1.0 if bad else 0.0,
            kind="non-words" if bad else "",
            signals=[GarbleSignal(name="soup", family="non-words", score=1.0, reason="soup")]
            if bad
            else [],
            channel="content",
        )

    monkeypatch.setattr(garble, "check_response", check)
    fake_server.rule = lambda req: reply("token soup" if "question 0:" in last_user(req) else "ok")
    items = [simple_item(0, languages=["en"]), simple_item(1)]
    record, recs = run(fake_server, make_suite(items), tmp_path)
    assert recs[0].garbled is True and recs[1].garbled is False
    assert record.summary.garbled == 1 and record.summary.garble_rate == 0.5
    assert seen == [["en"], ["en"]]  # no languages: the category default (garble.expected_for)


def test_unicode_line_separators_and_lone_surrogates_round_trip(fake_server, make_suite, tmp_path):
    text = "line\u2028sep\u2029para \ud800 lone \udfff end"
    fake_server.rule = lambda req: reply(text, reasoning="r\u2028")
    record, _ = run(fake_server, make_suite(n=2), tmp_path)
    store = RunStore(tmp_path / "results")
    path = store.run_dir(record.run_id) / "items.jsonl"
    raw = path.read_bytes()
    assert "\u2028".encode() not in raw and b"\\u2028" in raw  # escaped: one line to any reader
    assert raw.count(b"\n") == 2 and len(raw.decode().splitlines()) == 2
    back = store.load_items(record.run_id)
    assert [r.response.content for r in back] == [text, text]
    assert back[0].response.reasoning == "r\u2028"


def test_model_choice_when_several_served(fake_server, make_suite, tmp_path):
    fake_server.models = ["a", "b"]
    with pytest.raises(UsageError, match="serves 2 models \\(a, b\\).*--model"):
        run(fake_server, make_suite(n=1), tmp_path)
    record, _ = run(fake_server, make_suite(n=1), tmp_path, model="b")
    assert fake_server.requests[-1]["model"] == "b" and record.model_requested == "b"


def test_limit_and_tags_select_items(fake_server, make_suite, tmp_path):
    items = [simple_item(i, tags=["probe"] if i % 2 else []) for i in range(6)]
    folder = make_suite(items)
    record, recs = run(fake_server, folder, tmp_path, tags={"probe"})
    assert [r.id for r in recs] == ["basic-001", "basic-003", "basic-005"]
    ids = ["basic-001", "basic-003", "basic-005"]
    assert record.selection == {"tags": ["probe"], "ids": ids}  # the criteria and the choice
    record, recs = run(fake_server, folder, tmp_path, limit=2)
    assert len(recs) == 2 and record.summary.total == 2


def test_unknown_grader_kind_fails_before_requests(fake_server, make_suite, tmp_path):
    item = simple_item(0)
    item["grader"] = {"kind": "no-such-grader"}
    with pytest.raises(SuiteError, match="no-such-grader"):
        run(fake_server, make_suite([item]), tmp_path)
    assert fake_server.chat_requests == 0


THINK = "<think>Let me think about it.</think>ok"
RAW_TOOL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.mark.parametrize(
    "answer,item_extra,kind,status",
    [
        (reply(None, reasoning="the answer is ok"), {}, "reasoning_only", "failed"),
        (
            reply("", reasoning="hmm " * 20, reasoning_key="reasoning", finish_reason="length"),
            {},
            "reasoning_exhausted_tokens",
            "failed",
        ),
        (tool_choice_400(), {"tools": TOOLS, "tool_choice": "auto"}, "tool_choice_400", "error"),
        (reply(THINK), {}, "think_in_content", "failed"),
        (reply(RAW_TOOL), {"tools": TOOLS}, "raw_tool_call", "failed"),
        (reply("", finish_reason="length"), {}, "length_no_answer", "failed"),
        (context_length_400(), {}, "context_length", "failed"),
        (reply(None), {}, "empty_response", "failed"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_each_diagnosis(fake_server, make_suite, tmp_path, answer, item_extra, kind, status):
    fake_server.rule = lambda req: answer
    record, recs = run(
        fake_server,
        make_suite([simple_item(0, **item_extra), simple_item(1, **item_extra)]),
        tmp_path,
    )
    assert {r.status for r in recs} == {status}
    assert all(kind in r.diagnoses for r in recs)
    diag = {d.kind: d for d in record.summary.diagnoses}
    assert diag[kind].count == 2 and diag[kind].hint
    assert record.summary.passed == 0


def test_context_rejection_fails_the_item_without_retry(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: context_length_400()
    record, recs = run(fake_server, make_suite(n=2), tmp_path)
    assert record.status == "complete" and record.summary.errors == 0
    assert all(r.attempts == 1 and "context window" in r.grade.detail for r in recs)
    assert fake_server.chat_requests == 2


def test_clean_answers_have_no_diagnosis(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: reply("ok", reasoning="short thought")
    record, recs = run(fake_server, make_suite(n=2), tmp_path)
    assert record.summary.diagnoses == [] and record.summary.passed == 2


def test_runs_in_the_same_second_get_distinct_ids(fake_server, make_suite, tmp_path):
    folder = make_suite(n=1)
    first, _ = run(fake_server, folder, tmp_path, label="same")
    second, _ = run(fake_server, folder, tmp_path, label="same")
    assert first.run_id != second.run_id
    store = RunStore(tmp_path / "results")
    assert len(store.load_items(first.run_id)) == 1 and len(store.load_items(second.run_id)) == 1


def test_model_not_found_diagnosed_and_stops(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: http_error(404, "The model `fake-model` does not exist.")
    with pytest.raises(UsageError, match="does not serve model"):
        run(fake_server, make_suite(n=5), tmp_path, concurrency=1)
    store = RunStore(tmp_path / "results")
    record = store.load_run("latest")
    assert record.status == "incomplete"
    assert [d.kind for d in record.summary.diagnoses] == ["model_not_found"]
    assert record.summary.diagnoses[0].hint

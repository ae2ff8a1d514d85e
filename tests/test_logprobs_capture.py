"""Token capture: logprobs ride on the suite's own requests into tokens.jsonl (fake endpoint)."""

from __future__ import annotations

import json

import pytest
from fakeserver import LOGPROBS_REFUSED_TEXT, reply, simple_item
from test_score import run

from evalrun.endpoint.logprobs import parse_logprobs, token_key
from evalrun.endpoint.options import build_options
from evalrun.scoring.report import score_text
from evalrun.store import RunStore
from evalrun.store.tokens import TOKENS_FILE, load_traces


def test_every_request_asks_for_logprobs_and_tokens_land_beside_items(
    fake_server, make_suite, tmp_path
):
    fake_server.rule = lambda req: reply("the answer is ok")
    record, recs = run(fake_server, make_suite(n=3), tmp_path)
    assert fake_server.chat_requests == 3  # no extra request per item
    assert all(r["logprobs"] is True and r["top_logprobs"] == 5 for r in fake_server.requests)
    folder = RunStore(tmp_path / "results").run_dir(record.run_id)
    traces = load_traces(folder)
    assert sorted(traces) == sorted(r.id for r in recs)
    trace = traces[recs[0].id]
    assert [t[0] for t in trace.tokens] == ["the", " answer", " is", " ok"]
    assert trace.tokens[0][1] == -0.05 and trace.tokens[0][2][1] == ["zz", -4.0]
    # the item record stays small: no logprobs in it
    line = (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert "zz" not in line and "-0.05" not in line
    assert record.fidelity == {"top_logprobs": 5, "tokens": 128}


def test_capture_adds_no_request_of_any_kind(fake_server, make_suite, tmp_path):
    """The same suite, repeats and concurrency with logprobs on and off: the same requests at
    the real HTTP server, one chat request per item and repeat, logprobs asked on each."""
    suite = make_suite(n=6)
    counts = []
    for options in (build_options(), build_options(top_logprobs=None)):
        fake_server.requests.clear()
        fake_server.gets.clear()
        record, _ = run(fake_server, suite, tmp_path, options=options, repeats=2, concurrency=3)
        assert record.summary is not None and record.summary.passed == 6
        counts.append((fake_server.chat_requests, sorted(fake_server.gets)))
        asked = [bool(r.get("logprobs")) for r in fake_server.requests]
        assert asked == [options.top_logprobs is not None] * 12
    assert counts[0] == counts[1]
    assert counts[0][0] == 12  # 6 items x 2 repeats


def test_first_tokens_only_and_top_k_flag(fake_server, make_suite, tmp_path):
    fake_server.rule = lambda req: reply(" ".join(f"w{i}" for i in range(50)))
    options = build_options(top_logprobs=2, logprob_tokens=10)
    record, recs = run(fake_server, make_suite(n=1), tmp_path, options=options)
    assert fake_server.requests[0]["top_logprobs"] == 2
    trace = load_traces(RunStore(tmp_path / "results").run_dir(record.run_id))[recs[0].id]
    assert len(trace.tokens) == 10 and trace.total == 50
    assert all(len(t[2]) == 2 for t in trace.tokens)


def test_no_logprobs_asks_for_none(fake_server, make_suite, tmp_path):
    record, _ = run(
        fake_server, make_suite(n=2), tmp_path, options=build_options(top_logprobs=None)
    )
    assert all("logprobs" not in r for r in fake_server.requests)
    folder = RunStore(tmp_path / "results").run_dir(record.run_id)
    assert not (folder / TOKENS_FILE).exists()
    assert record.fidelity["unavailable"] == "capture turned off (--no-logprobs)"


def test_refusal_is_noticed_once_and_the_run_goes_on(fake_server, make_suite, tmp_path):
    fake_server.logprobs = "refuse"
    record, recs = run(fake_server, make_suite(n=4), tmp_path, concurrency=1)
    assert [r.status for r in recs] == ["passed"] * 4
    asked = [bool(r.get("logprobs")) for r in fake_server.requests]
    assert asked == [True, False, False, False, False]  # one refusal, then none asked
    assert LOGPROBS_REFUSED_TEXT in record.fidelity["unavailable"]
    assert f"fidelity unavailable: HTTP 400: {LOGPROBS_REFUSED_TEXT}" in score_text(record)


def test_an_endpoint_that_ignores_the_field_is_reported(fake_server, make_suite, tmp_path):
    fake_server.logprobs = "off"
    record, _ = run(fake_server, make_suite(n=2), tmp_path)
    assert "without logprobs" in record.fidelity["unavailable"]


def test_torn_tokens_line_is_skipped_and_resume_rewrites(fake_server, make_suite, tmp_path):
    from fakeserver import Fault

    fake_server.script(reply("ok"), Fault(500), Fault(500))
    suite = make_suite(n=2)
    record, recs = run(fake_server, suite, tmp_path, concurrency=1)
    assert [r.status for r in recs] == ["passed", "error"]
    folder = RunStore(tmp_path / "results").run_dir(record.run_id)
    with (folder / TOKENS_FILE).open("a", encoding="utf-8") as fh:
        fh.write('{"id": "torn", "top_k": 5, "tok')  # a crash mid-write
    assert sorted(load_traces(folder)) == [recs[0].id]
    again, recs2 = run(fake_server, suite, tmp_path, resume=record.run_id)
    assert [r.status for r in recs2] == ["passed", "passed"]
    assert sorted(load_traces(folder)) == sorted(r.id for r in recs2)
    assert (folder / (TOKENS_FILE + ".torn")).exists()


def test_split_utf8_tokens_keep_their_bytes():
    raw = {
        "content": [
            {"token": "bytes:\\xe2\\x80", "logprob": -0.5, "bytes": [226, 128], "top_logprobs": []},
            {"token": "é", "logprob": -0.25, "bytes": [195, 169], "top_logprobs": []},
        ]
    }
    trace = parse_logprobs(raw, top_k=5, cap=10, item_id="x")
    assert trace is not None
    assert trace.tokens[0][3] == "e280"  # the bytes, not the server's rendering
    # half a character is no text: the same as vLLM's rendering of it (nothing)
    assert token_key(trace.tokens[0]) == token_key(["", -0.5, []]) == ""
    assert token_key(trace.tokens[1]) == "é"  # text that is its bytes: no hex kept


def test_absent_logprobs_are_no_trace():
    assert parse_logprobs(None, top_k=5, cap=10, item_id="x") is None
    assert parse_logprobs({"content": None}, top_k=5, cap=10, item_id="x") is None


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"content": "x"}, "logprobs.content is a str, not a list"),
        ("yes", "logprobs is a str, not an object"),
        ([{"token": "a", "logprob": -1}], "logprobs is a list, not an object"),
        ({"content": [{"token": 1}]}, "no token text"),
        ({"content": [{"token": "a"}]}, "not numbers"),
    ],
)
def test_malformed_logprobs_say_what_is_wrong(bad, why):
    with pytest.raises(ValueError, match=why):
        parse_logprobs(bad, top_k=5, cap=10, item_id="x")


def test_size_of_a_full_suite_of_tokens(tmp_path):
    """184 answers of 128 tokens with 5 alternatives, every one with its token id (as llama.cpp's
    server sends them): under 5 MB."""
    step = {"token": " word", "logprob": -0.1234, "bytes": list(b" word"), "id": 12345}
    raw = {"content": [{**step, "top_logprobs": [step] * 5} for _ in range(128)]}
    trace = parse_logprobs(raw, top_k=5, cap=128, item_id="item-001")
    assert trace is not None and trace.tokens[0][-1] == 12345
    size = 184 * len(json.dumps(trace.model_dump(mode="json"), ensure_ascii=False))
    assert size < 5_000_000


def test_item_ids_in_trace_match_items(fake_server, make_suite, tmp_path):
    items = [simple_item(i) for i in range(2)]
    record, recs = run(fake_server, make_suite(items), tmp_path)
    traces = load_traces(RunStore(tmp_path / "results").run_dir(record.run_id))
    assert set(traces) == {r.id for r in recs}


@pytest.mark.parametrize(
    ("step", "stored"),
    [
        ({"token": "a", "logprob": -1}, ["a", -1.0, []]),  # an int logprob is a number
        ({"token": "a", "logprob": float("-inf")}, ["a", -9999.0, []]),
        ({"token": "a", "logprob": -0.123456, "bytes": [97]}, ["a", -0.1235, []]),
        ({"token": "a", "logprob": -0.5, "bytes": [300]}, ["a", -0.5, []]),  # not bytes: dropped
        ({"token": "a", "logprob": -0.5, "bytes": "a"}, ["a", -0.5, []]),
        ({"token": "a", "logprob": -0.5, "bytes": [98]}, ["a", -0.5, [], "62"]),  # not its text
    ],
)
def test_token_entries_are_read_as_numbers_and_bytes(step, stored):
    trace = parse_logprobs({"content": [step]}, top_k=5, cap=10, item_id="x")
    assert trace is not None and trace.tokens == [stored]


@pytest.mark.parametrize(
    ("lp", "why"),
    [
        (True, "not numbers"),
        (float("nan"), "NaN logprobs"),
        (float("inf"), "infinite logprobs"),
        (1e308, "positive logprobs"),
        (0.5, "positive logprobs"),
        (10**400, "positive logprobs"),  # an integer no float holds
        ("-0.5", "not numbers"),
        (None, "not numbers"),
    ],
)
def test_a_logprob_that_is_not_one_drops_the_trace_saying_why(lp, why):
    raw = {"content": [{"token": "a", "logprob": lp}]}
    with pytest.raises(ValueError, match=why):
        parse_logprobs(raw, top_k=5, cap=10, item_id="x")


def test_a_body_with_a_lone_surrogate_is_read_and_its_tokens_kept(
    fake_server, make_suite, tmp_path
):
    """Half of an emoji, as an engine may render a token (`\\ud83d` in the JSON): orjson refuses
    such a body, so it is read by json instead; the answer is graded and its tokens stored."""
    half = "\ud83d"
    tokens = [("ok", -0.1, [("ok", -0.1)]), (" " + half, -0.5, [(" " + half, -0.5)])]
    fake_server.rule = lambda req: reply("ok " + half, tokens=tokens)
    record, recs = run(fake_server, make_suite(n=1), tmp_path)
    assert recs[0].status != "error" and recs[0].response.content == "ok " + half
    folder = RunStore(tmp_path / "results").run_dir(record.run_id)
    trace = load_traces(folder)[recs[0].id]
    assert [t[0] for t in trace.tokens] == ["ok", " " + half]
    assert b"\\ud83d" in (folder / TOKENS_FILE).read_bytes()  # written as the escape it came as

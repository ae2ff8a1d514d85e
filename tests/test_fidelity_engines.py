"""Fidelity across engines: one token is one token however the server renders it.

Fake endpoints render the same tokens the way vLLM, llama.cpp's server and sglang do (fakeserver's
`engine_tokens`): the end-of-turn token is `<|im_end|>` on vLLM and sglang and empty on llama.cpp;
half of a UTF-8 character is nothing on vLLM and U+FFFD on sglang, while llama.cpp leaves it out
and lists the token that completes the character with the whole character's text; llama.cpp
sends every token's id, vLLM its chosen tokens' ids in `choices[0].token_ids`.
"""

from __future__ import annotations

import pytest
from fakeserver import END_TOKEN, Tok, engine_tokens, reply, simple_item
from test_score import run

from evalrun.compare.fidelity import runs_fidelity
from evalrun.store import RunStore
from evalrun.store.tokens import load_traces

HELLO, THERE, ONE = Tok(19556, b"Hello"), Tok(665, b" there"), Tok(57, b"I")
KO_HEAD, KO_TAIL = Tok(7365, b"\xe3\x81"), Tok(8000, b"\x93")  # こ in two byte tokens
KA_HEAD = Tok(7366, b"\xe3\x82")  # another character's first bytes: rendered as KO_HEAD is
N = 20


def steps(i: int, head: Tok = KO_HEAD) -> list:
    """Item i's answer: `Hello there`, on odd items `こ` in two byte tokens, then end of turn;
    each token sure of itself (its runner-up 3 nats below)."""
    picks = [HELLO, THERE] + ([head, KO_TAIL] if i % 2 else []) + [END_TOKEN]
    return [(t, -0.1, [(t, -0.1), (ONE, -3.1)]) for t in picks]


def lane(fake, suite, tmp_path, engine, answer=steps):
    def rule(req):
        i = int(req["messages"][-1]["content"].split()[1].rstrip(":"))
        return reply("Hello there", tokens=engine_tokens(engine, answer(i)))

    fake.rule = rule
    record, _ = run(fake, suite, tmp_path)
    return record.run_id


@pytest.fixture
def suite(make_suite):
    return make_suite([simple_item(i) for i in range(N)])


@pytest.mark.parametrize(
    ("a", "b"), [("llama.cpp", "vllm"), ("vllm", "sglang"), ("llama.cpp", "sglang")]
)
def test_the_same_tokens_rendered_by_two_engines_are_identical(fake_server, suite, tmp_path, a, b):
    """The text compare of old read the end-of-turn token as a hard divergence on every item."""
    run_a = lane(fake_server, suite, tmp_path, a)
    run_b = lane(fake_server, suite, tmp_path, b)
    f = runs_fidelity(RunStore(tmp_path / "results"), run_a, run_b)
    assert (f.verdict, f.identical, f.hard, f.items) == ("identical", N, 0, N), f.line()


def test_ids_are_stored_where_the_engine_sends_them(fake_server, suite, tmp_path):
    store = RunStore(tmp_path / "results")
    llama = load_traces(store.run_dir(lane(fake_server, suite, tmp_path, "llama.cpp")))
    token = llama["basic-001"].tokens[2]  # こ whole, under its last token's id; half of it below
    assert token[0] == "こ" and token[3:] == [8000] and token[2][0] == ["", -0.1, "93", 8000]
    assert len(llama["basic-001"].tokens) == 4 and llama["basic-001"].tokens[-1][0] == ""
    assert fake_server.requests[-1]["return_token_ids"] is True
    vllm = load_traces(store.run_dir(lane(fake_server, suite, tmp_path, "vllm")))
    token = vllm["basic-001"].tokens[2]  # vLLM: the chosen token's id, none on alternatives
    assert token == ["", -0.1, [["", -0.1], ["I", -3.1]], 7365]
    assert vllm["basic-001"].tokens[-1][0] == "<|im_end|>"
    sglang = load_traces(store.run_dir(lane(fake_server, suite, tmp_path, "sglang")))
    assert sglang["basic-001"].tokens[2] == ["\ufffd", -0.1, [["\ufffd", -0.1], ["I", -3.1]]]


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp"])
def test_tokens_that_render_alike_are_told_apart(fake_server, suite, tmp_path, engine):
    """Two different first halves of a character: both nothing on vLLM, where their ids tell
    them apart (by text the runs were identical); left out by llama.cpp, whose whole character
    tells. Neither side's top-K can say which half the other chose: a near tie, not identical."""
    run_a = lane(fake_server, suite, tmp_path, engine)
    run_b = lane(fake_server, suite, tmp_path, engine, lambda i: steps(i, KA_HEAD))
    f = runs_fidelity(RunStore(tmp_path / "results"), run_a, run_b)
    assert (f.verdict, f.identical, f.near_tie) == ("equivalent", N // 2, N // 2), f.line()
    assert {d.position for d in f.divergences} == {2}


def test_a_character_llama_cpp_lists_whole_is_the_tokens_vllm_lists_apart(
    fake_server, suite, tmp_path
):
    """The walk goes on past a split character, comparing the logprob of the token that
    completes it (the text compare of old stopped there: a hard divergence)."""
    store = RunStore(tmp_path / "results")
    run_a = lane(fake_server, suite, tmp_path, "llama.cpp")
    run_b = lane(fake_server, suite, tmp_path, "vllm")
    f = runs_fidelity(store, run_a, run_b)
    # every token llama.cpp lists compared: 3 on even items, 4 on odd ones
    assert (f.verdict, f.tokens) == ("identical", 10 * 3 + 10 * 4), f.line()


def test_an_api_that_rejects_the_ids_field_is_asked_again_without_it(fake_server, suite, tmp_path):
    fake_server.strict_fields = {"return_token_ids"}
    fake_server.rule = lambda req: reply("ok")
    record, recs = run(fake_server, suite, tmp_path, concurrency=1)
    assert [r.status for r in recs] == ["passed"] * N
    asked = ["return_token_ids" in r for r in fake_server.requests]
    assert asked == [True] + [False] * N  # one refusal, then never asked again
    assert "unavailable" not in record.fidelity
    assert len(load_traces(RunStore(tmp_path / "results").run_dir(record.run_id))) == N


def test_other_ids_for_the_same_text_are_another_tokenizer(fake_server, suite, tmp_path):
    run_a = lane(fake_server, suite, tmp_path, "llama.cpp")
    other = [(Tok(t.id + 1, t.data, t.end), lp, alts) for t, lp, alts in steps(0)]
    run_b = lane(fake_server, suite, tmp_path, "llama.cpp", lambda i: other)
    f = runs_fidelity(RunStore(tmp_path / "results"), run_a, run_b)
    assert f.verdict == "not comparable" and "tokenize differently" in f.reason

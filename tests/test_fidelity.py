"""Fidelity: two runs judged token by token (fake endpoints that serve logprobs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fakeserver import reply, simple_item
from test_score import run

from evalrun.cli import main
from evalrun.compare.fidelity import Thresholds, binom_sf, fit_thresholds, judge, runs_fidelity
from evalrun.compare.pairing import compare_runs
from evalrun.compare.report import render_text
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.endpoint.options import build_options
from evalrun.store import RunStore

A_TOKENS = [
    ("The", -0.1, [("The", -0.1), ("A", -2.5)]),
    (" cat", -0.2, [(" cat", -0.2), (" dog", -0.5)]),
]


def steps(*picks: tuple[str, float, list[tuple[str, float]]]) -> list:
    return list(picks)


def trace(item_id: str, tokens: list, cap: int = 128) -> TokenTrace:
    return TokenTrace(
        id=item_id,
        top_k=5,
        total=len(tokens),
        cap=cap,
        tokens=[[t, lp, [[a, alp] for a, alp in alts]] for t, lp, alts in tokens],
    )


def lane(fake, make_suite, tmp_path, tokens_for, *, n=20, **kw):
    """Score n items against a fake whose answer tokens come from tokens_for(item index)."""

    def rule(req):
        i = int(req["messages"][-1]["content"].split()[1].rstrip(":"))
        toks = tokens_for(i)
        return reply("".join(t for t, _, _ in toks), tokens=toks)

    fake.rule = rule
    items = [simple_item(i) for i in range(n)]
    return run(fake, kw.pop("suite", None) or make_suite(items), tmp_path, **kw)


HEALTHY = [
    ("ok", -0.01, [("ok", -0.01), ("no", -5.0)]),
    (" then", -0.3, [(" then", -0.3), (" so", -0.4)]),
]


def test_same_tokens_are_identical_and_json_carries_the_figures(
    fake_server, make_suite, tmp_path, capsys
):
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    cmp = compare_runs(RunStore(tmp_path / "results"), a.run_id, b.run_id)
    assert cmp.fidelity is not None and cmp.fidelity.verdict == "identical"
    assert cmp.fidelity.items == 20 and cmp.fidelity.identical == 20
    assert "fidelity: identical on 20 of 20 items" in render_text(cmp)
    code = main(["compare", a.run_id, b.run_id, "--results", str(tmp_path / "results"), "--json"])
    assert code == 0
    fid = json.loads(capsys.readouterr().out)["fidelity"]
    assert {"verdict", "items", "identical", "near_tie", "hard", "drift", "p_value"} <= set(fid)


def test_near_ties_are_equivalent_hard_picks_divergent(fake_server, make_suite, tmp_path):
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    # B flips " then" for " so" (0.1 nats apart on both sides) on 5 items: near ties
    tied = [HEALTHY[0], (" so", -0.35, [(" so", -0.35), (" then", -0.36)])]
    b, _ = lane(
        fake_server, make_suite, tmp_path, lambda i: tied if i < 5 else HEALTHY, suite=suite
    )
    store = RunStore(tmp_path / "results")
    f = runs_fidelity(store, a.run_id, b.run_id)
    assert (f.verdict, f.near_tie, f.hard, f.identical) == ("equivalent", 5, 0, 15)
    # C starts with what A thought unlikely ("no" at -5) on 6 of 20 items: hard divergences
    wrong = [("no", -0.2, [("no", -0.2), ("ok", -1.9)]), HEALTHY[1]]
    c, _ = lane(
        fake_server, make_suite, tmp_path, lambda i: wrong if i < 6 else HEALTHY, suite=suite
    )
    f = runs_fidelity(store, a.run_id, c.run_id)
    assert (f.verdict, f.hard) == ("divergent", 6)
    assert f.p_value < 0.01
    first = f.divergences[0]
    assert (first.position, first.a_token, first.b_token, first.kind) == (0, "ok", "no", "hard")
    text = render_text(compare_runs(store, a.run_id, c.run_id))
    assert "token 0 (hard)" in text and "'no'" in text


def test_one_hard_divergence_is_within_the_healthy_rate():
    a = {f"i{k}": trace(f"i{k}", HEALTHY) for k in range(40)}
    b = dict(a)
    b["i0"] = trace("i0", [("no", -0.2, [("no", -0.2), ("ok", -1.9)])])
    f = judge(a, b, list(a))
    assert f.verdict == "equivalent" and f.hard == 1


def test_drift_over_the_same_tokens_is_divergent():
    a = {f"i{k}": trace(f"i{k}", HEALTHY) for k in range(10)}
    shifted = [(t, lp - 0.4, alts) for t, lp, alts in HEALTHY]
    b = {k: trace(k, shifted) for k in a}
    f = judge(a, b, list(a))
    assert f.verdict == "divergent" and f.hard == 0 and f.drift > 0.3
    assert "drift" in f.reason


def test_other_tokenizer_is_not_comparable():
    a = {f"i{k}": trace(f"i{k}", [("hello", -0.1, []), (" world", -0.1, [])]) for k in range(5)}
    b = {
        k: trace(k, [("hel", -0.1, []), ("lo", -0.1, []), (" wor", -0.1, []), ("ld", -0.1, [])])
        for k in a
    }
    f = judge(a, b, list(a))
    assert f.verdict == "not comparable" and "tokenize differently" in f.reason


def test_a_run_without_logprobs_is_not_comparable(fake_server, make_suite, tmp_path, capsys):
    suite = make_suite(n=3)
    a, _ = run(fake_server, suite, tmp_path)
    b, _ = run(fake_server, suite, tmp_path, options=build_options(top_logprobs=None))
    f = runs_fidelity(RunStore(tmp_path / "results"), a.run_id, b.run_id)
    assert f.verdict == "not comparable"
    assert f.reason == (
        f"run B ({b.run_id}) has no tokens: capture turned off (--no-logprobs); "
        "re-score it without --no-logprobs to compare tokens"
    )
    assert main(["compare", a.run_id, b.run_id, "--results", str(tmp_path / "results")]) == 0
    assert "fidelity: not comparable (run B" in capsys.readouterr().out


def test_sampled_runs_are_not_comparable(fake_server, make_suite, tmp_path):
    suite = make_suite(n=2)
    a, _ = run(fake_server, suite, tmp_path)
    b, _ = run(fake_server, suite, tmp_path, options=build_options(temperature=0.7))
    f = runs_fidelity(RunStore(tmp_path / "results"), a.run_id, b.run_id)
    assert f.verdict == "not comparable" and "temperature 0.7" in f.reason


def test_partial_run_compares_the_items_both_have(fake_server, make_suite, tmp_path):
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite, limit=8)
    f = runs_fidelity(RunStore(tmp_path / "results"), a.run_id, b.run_id)
    assert (f.verdict, f.items, f.of) == ("identical", 8, 20)
    assert "on 8 of 20 items" in f.line()


def test_an_answer_that_stops_where_the_other_goes_on():
    a = {"i": trace("i", HEALTHY)}
    b = {"i": trace("i", HEALTHY[:1])}  # B ended after "ok"; A was sure of " then"? no: 0.1 gap
    assert judge(a, b, ["i"]).near_tie == 1
    sure = [HEALTHY[0], (" then", -0.01, [(" then", -0.01), (" so", -6.0)])]
    assert judge({"i": trace("i", sure)}, b, ["i"]).hard == 1


def test_thresholds_fit_on_healthy_pairs():
    a = {f"i{k}": trace(f"i{k}", HEALTHY) for k in range(50)}
    healthy = judge(a, a, list(a))
    fitted = fit_thresholds([healthy] * 4)
    assert fitted.healthy_hard_rate == Thresholds().healthy_hard_rate  # floor kept
    assert binom_sf(0, 10, 0.5) == 1.0 and abs(binom_sf(10, 10, 0.5) - 0.5**10) < 1e-12


def test_signoff_reports_fidelity_and_a_policy_can_fail_divergent(
    fake_server, make_suite, tmp_path
):
    from evalrun.signoff.gate import signoff
    from evalrun.signoff.policy import Policy

    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    wrong = [("ok", -0.2, [("ok", -0.2), ("no", -1.9)]), (" so", -0.1, [(" so", -0.1)])]
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: wrong, suite=suite)
    store = RunStore(tmp_path / "results")
    reported = signoff(store, b.run_id, a.run_id, Policy(), write_report=False)
    check = next(c for c in reported.checks if c.rule == "fidelity")
    assert (check.subject, check.outcome) == ("divergent", "warn")
    assert reported.verdict == "pass"  # same answers graded: only the tokens moved
    strict = signoff(store, b.run_id, a.run_id, Policy(fidelity="fail"), write_report=False)
    assert strict.verdict == "fail" and any("fidelity: divergent" in r for r in strict.reasons)


@pytest.mark.slow
def test_compare_command_reads_runs_without_the_client_or_the_graders(
    fake_server, make_suite, tmp_path
):
    """`evalrun compare` of two runs with tokens loads neither the HTTP client (openai, asyncio)
    nor the graders and the garble detector: start-up was most of the command's time."""
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    script = (
        "import sys\n"
        "from evalrun.cli import main\n"
        f"code = main(['compare', {a.run_id!r}, {b.run_id!r}, '--results', sys.argv[1]])\n"
        "heavy = ('openai', 'asyncio', 'evalrun.endpoint.client', 'evalrun.grading')\n"
        "print(code, sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "results")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines()[-1] == "0 []", out

"""Bad input to fidelity: each case a line that says what it is and what to do (fake endpoints)."""

from __future__ import annotations

from fakeserver import simple_item
from test_fidelity import HEALTHY, lane
from test_score import run

from evalrun.cli import main
from evalrun.compare.fidelity import runs_fidelity
from evalrun.endpoint.options import build_options
from evalrun.signoff.gate import signoff
from evalrun.signoff.policy import Policy
from evalrun.store import RunStore


def test_compare_of_two_suites_is_one_line_and_exit_2(fake_server, make_suite, tmp_path, capsys):
    a, _ = run(fake_server, make_suite(n=2), tmp_path)
    b, _ = run(fake_server, make_suite([simple_item(7)]), tmp_path)
    code = main(["compare", a.run_id, b.run_id, "--results", str(tmp_path / "results")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "same suite version" in err


def test_a_run_without_tokens_says_what_to_do(fake_server, make_suite, tmp_path):
    suite = make_suite(n=3)
    a, _ = run(fake_server, suite, tmp_path)
    b, _ = run(fake_server, suite, tmp_path, options=build_options(top_logprobs=None))
    f = runs_fidelity(RunStore(tmp_path / "results"), a.run_id, b.run_id)
    assert f.verdict == "not comparable" and "\n" not in f.line()
    assert "re-score it without --no-logprobs" in f.reason
    fake_server.logprobs = "refuse"
    c, _ = run(fake_server, suite, tmp_path)
    f = runs_fidelity(RunStore(tmp_path / "results"), a.run_id, c.run_id)
    assert "its endpoint sends none" in f.reason and "answers only" in f.reason


def test_signoff_that_must_judge_tokens_fails_without_them(fake_server, make_suite, tmp_path):
    """`fidelity: fail` with a candidate scored --no-logprobs: the gate cannot check what it
    was told to, so it fails and says how to fix it (it used to pass silently)."""
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    b, _ = run(fake_server, suite, tmp_path, options=build_options(top_logprobs=None))
    store = RunStore(tmp_path / "results")
    strict = signoff(store, b.run_id, a.run_id, Policy(fidelity="fail"), write_report=False)
    check = next(c for c in strict.checks if c.rule == "fidelity")
    assert (check.subject, check.outcome) == ("not comparable", "fail")
    assert strict.verdict == "fail"
    assert any("fidelity: not comparable" in r and "re-score" in r for r in strict.reasons)
    reported = signoff(store, b.run_id, a.run_id, Policy(), write_report=False)
    check = next(c for c in reported.checks if c.rule == "fidelity")
    assert (check.outcome, reported.verdict) == ("warn", "pass")


def test_partial_candidate_says_how_many_items_in_compare_and_signoff(
    fake_server, make_suite, tmp_path, capsys
):
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite, limit=8)
    store = RunStore(tmp_path / "results")
    assert main(["compare", a.run_id, b.run_id, "--results", str(store.root)]) == 0
    assert "fidelity: identical on 8 of 20 items" in capsys.readouterr().out
    result = signoff(store, b.run_id, a.run_id, Policy(), write_report=False)
    check = next(c for c in result.checks if c.rule == "fidelity")
    assert "on 8 of 20 items" in check.reason

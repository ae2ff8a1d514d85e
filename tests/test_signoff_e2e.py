"""score -> compare -> signoff as a user chains them, on run records the real runner wrote."""

from __future__ import annotations

import json

import pytest
from fakeserver import http_error, last_user, reply, simple_item

from evalrun.cli import main


def suite_items():
    return [simple_item(n, category="chat") for n in range(10)] + [
        simple_item(n, category="tools") for n in range(10, 20)
    ]


def score(fake, suite, results, name, rule, capsys):
    fake.rule = rule
    code = main(
        [
            "score",
            "--no-progress",
            "--endpoint",
            fake.base_url,
            "--suite",
            str(suite),
            "--results",
            results,
            "--name",
            name,
            "--concurrency",
            "4",
        ]
    )
    capsys.readouterr()
    return code


def wrong_for(*needles):
    return lambda req: reply("nope") if any(n in last_user(req) for n in needles) else reply("ok")


@pytest.mark.slow
def test_score_compare_signoff_chain(fake_server, make_suite, tmp_path, capsys):
    suite = make_suite(suite_items())
    results = str(tmp_path / "results")
    assert score(fake_server, suite, results, "base", lambda req: reply("ok"), capsys) == 0
    assert main(["tag", "--results", results, "latest:base", "anchor"]) == 0
    # one item flips: noise
    assert score(fake_server, suite, results, "noise", wrong_for("question 3:"), capsys) == 0
    # the tools category collapses: every tools item answers wrong
    collapse = wrong_for(*(f"question {n}:" for n in range(10, 20)))
    assert score(fake_server, suite, results, "broken", collapse, capsys) == 0
    # a reasoning parser moved every answer out of content
    assert (
        score(
            fake_server, suite, results, "parser", lambda req: reply(None, reasoning="ok"), capsys
        )
        == 0
    )

    # a request failed
    def failing(req):
        return http_error(400, "bad request") if "question 5:" in last_user(req) else reply("ok")

    score(fake_server, suite, results, "flaky", failing, capsys)
    capsys.readouterr()

    assert main(["compare", "--results", results, "anchor", "latest:noise", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["stats"]["paired"] == 20 and cmp["stats"]["lost"] in (1, 2)
    assert "no significant difference" in cmp["verdict"]

    def gate(label):
        code = main(
            [
                "signoff",
                "--results",
                results,
                "--candidate",
                f"latest:{label}",
                "--baseline",
                "anchor",
                "--json",
            ]
        )
        return code, json.loads(capsys.readouterr().out)

    code, verdict = gate("noise")
    assert code == 0 and verdict["verdict"] == "pass"
    code, verdict = gate("broken")
    assert code == 1
    rules = {(c["rule"], c["subject"]) for c in verdict["checks"] if c["outcome"] == "fail"}
    assert ("category_drop", "tools") in rules
    code, verdict = gate("parser")
    assert code == 1
    assert ("fatal_diagnosis", "reasoning_only") in {
        (c["rule"], c["subject"]) for c in verdict["checks"] if c["outcome"] == "fail"
    }
    code, verdict = gate("flaky")
    assert code == 1
    failed = {c["rule"] for c in verdict["checks"] if c["outcome"] == "fail"}
    assert {"incomplete", "errors"} <= failed
    report = (tmp_path / "results" / verdict["candidate"] / "signoff.md").read_text("utf-8")
    assert report.startswith("# Sign-off: FAIL") and "[error" in report

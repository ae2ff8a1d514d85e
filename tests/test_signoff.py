import json

import pytest
import yaml
from support.synthruns import (
    OTHER_SHA,
    core_earlier_and_now,
    ids_of,
    items_for,
    seeds_pair,
    write_run,
)

from evalrun.base.errors import ConfigError
from evalrun.cli import main
from evalrun.signoff.gate import signoff
from evalrun.signoff.policy import DEFAULT_POLICY_YAML, Policy, load_policy
from evalrun.store import RunStore

BASE = "2026-01-01_000000_base"
CAND = "2026-01-02_000000_cand"


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "results")


def failed_rules(result):
    return sorted({(c.rule, c.subject) for c in result.checks if c.outcome == "fail"})


def judge(store, cand_items, *, base_items=None, policy=None, **run_kw):
    write_run(store, BASE, base_items if base_items is not None else items_for())
    write_run(store, CAND, cand_items, **run_kw)
    return signoff(store, CAND, BASE, policy or Policy(), seed=0)


# --- noise passes -------------------------------------------------------------------------------


def test_two_item_noise_gain_passes(store):
    base, cand = seeds_pair(store)
    result = signoff(store, cand.run_id, base.run_id)
    assert result.verdict == "pass" and result.reasons == []
    assert result.headline == (
        "candidate − baseline = +2 items (170 vs 168), McNemar p = 0.69: no significant difference"
    )


def test_two_item_noise_drop_passes(store):
    base, cand = seeds_pair(store)
    result = signoff(store, base.run_id, cand.run_id)  # 168 judged against 170
    assert result.verdict == "pass", result.reasons


def test_drop_beyond_limit_but_not_significant_warns_only(store):
    base, cand = seeds_pair(store)
    result = signoff(store, base.run_id, cand.run_id, Policy(max_total_drop=0.5))
    assert result.verdict == "pass"
    assert any("could be noise" in w for w in result.warnings)
    # alpha 1 lets the thresholds alone decide
    strict = signoff(store, base.run_id, cand.run_id, Policy(max_total_drop=0.5, alpha=1.0))
    assert strict.verdict == "fail" and failed_rules(strict) == [("total_drop", "")]


# --- each rule triggers on its own ---------------------------------------------------------------


def test_total_drop_alone(store):
    # 11 losses spread thin: no category loses more than 10 points, the total loses 6
    spread = [
        "code-000",
        "instruction-000",
        "json-000",
        "long-context-000",
        "math-000",
        "math-001",
        "multilingual-000",
        "reasoning-000",
        "reasoning-001",
        "tools-000",
        "tools-001",
    ]
    result = judge(store, items_for(failing=spread))
    assert result.verdict == "fail"
    assert failed_rules(result) == [("total_drop", "")]
    assert "real (one-sided p = 0.00049, Holm-adjusted 0.0014 < 0.05)" in result.reasons[0]


def test_collapsing_category_fails_even_when_total_is_within_the_drop(store):
    math_fixed = [f"math-{k:03d}" for k in range(10)]
    tools_broken = [f"tools-{k:03d}" for k in range(12)]
    result = judge(store, items_for(failing=tools_broken), base_items=items_for(failing=math_fixed))
    cmp = result.comparison
    assert cmp.delta_items == -2  # 172 vs 174: total drop 1.1 points, within 2
    assert result.verdict == "fail"
    assert failed_rules(result) == [("category_drop", "tools")]
    assert "category tools fell 50.0 points" in result.reasons[0]


def test_garble_alone(store):
    garbled = [f"{cat}-{k:03d}" for cat in ("code", "json") for k in range(6)]
    result = judge(store, items_for(garbled=garbled))
    assert failed_rules(result) == [("garble_increase", "")]
    assert "12 newly garbled and 0 cleared against the baseline on 184" in result.reasons[0]
    assert "(+6.5 points of rate)" in result.reasons[0]
    # a few new garbled answers are not proof of a fault: a warning, not a block
    few = judge(store, items_for(garbled=[f"code-{k:03d}" for k in range(5)]))
    assert few.verdict == "pass" and any("could be noise" in w for w in few.warnings)
    assert judge(store, items_for(garbled=["code-000"])).verdict == "pass"


def test_garble_ceiling_blocks_a_broken_lane_whatever_the_baseline(store):
    broken = [i for i in ids_of({"code": 20, "instruction": 20})]
    result = judge(store, items_for(garbled=broken), base_items=items_for(garbled=broken))
    assert failed_rules(result) == [("garble_rate", "")]
    assert "40 of 184 answered items garbled (21.7%: 40 token soup, 0 loops)" in (result.reasons[0])


def test_errors_alone(store):
    result = judge(
        store,
        items_for(errors=["math-004"]),
        status="incomplete",
        policy=Policy(allow_incomplete=True),
    )
    assert failed_rules(result) == [("errors", "")]
    assert any("allowed by the policy" in w for w in result.warnings)


def test_incomplete_run_fails(store):
    result = judge(
        store, items_for(errors=["math-004"]), status="incomplete", policy=Policy(max_errors=5)
    )
    assert failed_rules(result) == [("incomplete", "")]
    assert "1 items errored" in result.reasons[0]


def test_interrupted_run_with_unrun_items_fails_unless_allowed(store):
    unrun = ids_of({"tools": 24})[12:]
    result = judge(store, items_for(skip=unrun), status="interrupted", total=184, summary=False)
    assert failed_rules(result) == [("incomplete", "")]
    assert "status interrupted" in result.reasons[0] and "12 items not run" in result.reasons[0]
    allowed = signoff(store, CAND, BASE, Policy(allow_incomplete=True))
    assert allowed.verdict == "pass"


def test_fatal_diagnosis_alone(store):
    result = judge(store, items_for(diagnoses={"reasoning_only": ["json-002"]}))
    assert failed_rules(result) == [("fatal_diagnosis", "reasoning_only")]
    assert "fix reasoning_only" in result.reasons[0]  # the run's own hint is quoted
    # a diagnosis the policy does not call fatal is only shown
    ok = signoff(store, CAND, BASE, Policy(fatal_diagnoses=["tool_choice_400"]))
    assert ok.verdict == "pass"


def test_identical_runs_pass(store):
    assert judge(store, items_for()).verdict == "pass"


# --- policy ------------------------------------------------------------------------------------


def test_documented_default_policy_is_the_model_default():
    assert Policy.model_validate(yaml.safe_load(DEFAULT_POLICY_YAML)) == Policy()


def test_policy_file_typo_is_an_error(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("max_total_drp: 3\n")
    with pytest.raises(ConfigError, match="max_total_drp"):
        load_policy(path)
    path.write_text("")
    assert load_policy(path) == Policy()
    path.write_text("alpha: 2\n")
    with pytest.raises(ConfigError, match="alpha"):
        load_policy(path)
    with pytest.raises(ConfigError):
        load_policy(tmp_path / "missing.yaml")


# --- CLI: exit codes, report, --json --------------------------------------------------------


def cli(store, *extra):
    return main(["signoff", "--results", str(store.root), *extra])


def test_cli_pass_writes_report(store, capsys):
    base, cand = seeds_pair(store)
    store.set_tag("sglang-anchor", base.run_id)
    assert cli(store, "--candidate", "latest", "--baseline", "sglang-anchor") == 0
    out = capsys.readouterr().out
    assert out.startswith("signoff: PASS")
    report = (store.run_dir(cand.run_id) / "signoff.md").read_text(encoding="utf-8")
    assert report.startswith("# Sign-off: PASS")
    for part in (
        "## Reasons",
        "## Checks",
        "## Categories",
        "## Flips (6)",
        "math-003",
        "wrong answer to math-003",
        "| TOTAL",
        "candidate answered",
    ):
        assert part in report, part


def test_cli_fail_is_exit_1_with_reasons_in_report(store, capsys):
    tools_broken = [f"tools-{k:03d}" for k in range(12)]
    write_run(store, BASE, items_for())
    write_run(store, CAND, items_for(failing=tools_broken))
    assert cli(store, "--candidate", CAND, "--baseline", BASE) == 1
    assert "FAIL category tools fell" in capsys.readouterr().out
    report = (store.run_dir(CAND) / "signoff.md").read_text(encoding="utf-8")
    assert report.startswith("# Sign-off: FAIL")
    assert "- category tools fell 50.0 points" in report


def test_cli_json_prints_the_verdict_object(store, capsys):
    base, cand = seeds_pair(store)
    assert cli(store, "--candidate", cand.run_id, "--baseline", base.run_id, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "pass" and data["candidate"] == cand.run_id
    assert data["report"].endswith("signoff.md")
    assert data["comparison"]["stats"]["lost"] == 2


def test_cli_refuses_a_baseline_of_another_core_version_in_one_line(store, capsys):
    before, now = core_earlier_and_now()
    write_run(store, BASE, items_for(), **before)
    write_run(store, CAND, items_for(), **now)
    assert cli(store, "--candidate", CAND, "--baseline", BASE) == 2
    err = capsys.readouterr().err.strip()
    names = (f"core-v{before['version']}", f"core-v{now['version']}")
    assert all(n in err for n in names) and len(err.splitlines()) == 1, err


def test_cli_unusable_input_is_exit_2(store, tmp_path, capsys):
    write_run(store, BASE, items_for(), sha=OTHER_SHA)
    write_run(store, CAND, items_for())
    assert cli(store, "--candidate", CAND, "--baseline", BASE) == 2  # different suites
    assert "core-v2" in capsys.readouterr().err
    assert cli(store, "--candidate", "nope", "--baseline", BASE) == 2
    bad = tmp_path / "p.yaml"
    bad.write_text("fatal: [x]\n")
    assert cli(store, "--candidate", CAND, "--baseline", CAND, "--policy", str(bad)) == 2
    assert cli(store, "--candidate", CAND) == 2
    assert not (store.run_dir(CAND) / "signoff.md").exists()


def test_cli_policy_file_is_used(store, tmp_path):
    base, cand = seeds_pair(store)
    policy = tmp_path / "strict.yaml"
    policy.write_text("max_total_drop: 0\nalpha: 1\n")
    assert (
        cli(store, "--candidate", base.run_id, "--baseline", cand.run_id, "--policy", str(policy))
        == 1
    )
    report = (store.run_dir(base.run_id) / "signoff.md").read_text(encoding="utf-8")
    assert str(policy) in report


def test_cli_print_policy(capsys):
    assert main(["signoff", "--print-policy"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["max_total_drop"] == 2.0


def test_cli_corrupt_item_record_is_exit_2(store, capsys):
    write_run(store, BASE, items_for())
    write_run(store, CAND, items_for())
    with (store.run_dir(CAND) / "items.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "x", "status": "maybe"}\n')
    assert cli(store, "--candidate", CAND, "--baseline", BASE) == 2
    assert "not an item record" in capsys.readouterr().err


def test_extra_checks_count_like_rules(store):
    from evalrun.signoff.policy import Check

    base, cand = seeds_pair(store)
    slope = Check(
        rule="slope",
        subject="c1",
        outcome="fail",
        reason="decode at 128K fell to 0.5 of d0 (baseline 0.8)",
    )
    result = signoff(store, cand.run_id, base.run_id, extra_checks=[slope])
    assert result.verdict == "fail" and result.reasons == [slope.reason]
    report = (store.run_dir(cand.run_id) / "signoff.md").read_text(encoding="utf-8")
    assert "decode at 128K" in report

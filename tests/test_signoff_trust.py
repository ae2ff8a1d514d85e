"""Sign-off and compare a user can trust: three outputs that misled (a partial run re-based on the
whole suite, two rounding paths, a bisect probe taken as `latest`), pinned through the CLI, plus
the family rule, the collapse rule, garble against the baseline and repeats."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction

import pytest
from support.synthruns import ids_of, items_for, write_run

from evalrun.base.tables import fmt_points, score100
from evalrun.cli import main
from evalrun.compare.family import family
from evalrun.compare.pairing import compare_runs
from evalrun.compare.stats import holm_adjust, mcnemar_exact, paired_rate_test
from evalrun.signoff.gate import signoff
from evalrun.store import RunStore
from evalrun.suite.load import load_suite

CORE = dict(Counter(i.category for i in load_suite("core").items))  # the core suite's 184 items


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "results")


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def with_selection(store, record, ids):
    """Make a stored run a --limit run that chose `ids`."""
    record.selection = {"limit": len(ids), "seed": 0, "ids": list(ids)}
    store.write_run(record)
    return record


# --- misleading output 1: a --limit 60 run re-based on the whole suite ----------------------------


def test_partial_run_keeps_its_own_score_and_pairs_on_common_items(store, capsys):
    full = write_run(store, "2026-01-01_000000_full", items_for(CORE))
    chosen = ids_of(CORE)[::3][:60]
    part_items = [i for i in items_for(CORE, failing={chosen[5]}) if i.id in set(chosen)]
    part = with_selection(store, write_run(store, "2026-01-02_000000_part", part_items), chosen)
    root = str(store.root)

    code, out, _ = cli(capsys, "runs", "--results", root)
    assert code == 0 and "59/60 (98)" in out

    code, out, _ = cli(capsys, "compare", full.run_id, part.run_id, "--results", root)
    assert code == 0
    assert "59/60 (98/100)" in out and "184/184 (100/100)" in out
    assert "59/184" not in out and "(32/100)" not in out
    assert (
        out.rstrip()
        .splitlines()[-1]
        .startswith("paired on 60 of 184 items: B − A = −1 item (59 vs 60 on the paired items)")
    )
    data = json.loads(
        cli(capsys, "compare", full.run_id, part.run_id, "--json", "--results", root)[1]
    )
    assert (data["b"]["passed"], data["b"]["total"], data["b"]["partial"]) == (59, 60, True)
    assert (data["stats"]["paired"], data["stats"]["universe"]) == (60, 184)

    # signoff refuses a partial candidate unless the policy allows it
    code, out, _ = cli(
        capsys, "signoff", "--candidate", part.run_id, "--baseline", full.run_id, "--results", root
    )
    assert code == 1
    assert "paired on 60 of 184 items" in out and "ran 60 of the suite's 184 items" in out


def test_two_samples_of_the_same_items_do_not_claim_the_suite_size(store, capsys):
    """Two --limit samples of the same 40 items pair on all 40: the refusal says a selection was
    run, not `ran 40 of the suite's 40 items`."""
    chosen = ids_of(CORE)[::4][:40]
    runs = [
        with_selection(
            store,
            write_run(
                store,
                f"2026-01-0{n}_000000_s{n}",
                [i for i in items_for(CORE) if i.id in set(chosen)],
            ),
            chosen,
        )
        for n in (1, 2)
    ]
    code, out, _ = cli(
        capsys,
        "signoff",
        "--candidate",
        runs[1].run_id,
        "--baseline",
        runs[0].run_id,
        "--results",
        str(store.root),
    )
    assert code == 1
    assert "ran a selection of 40 items, not the whole suite" in out
    assert "of the suite's 40" not in out


# --- misleading output 2: two rounding paths ------------------------------------------------------


def test_compare_and_signoff_show_the_same_rounded_drop(store, capsys):
    logic = [f"logic-{k:03d}" for k in range(22)]
    base = write_run(store, "2026-01-01_000000_base", items_for(CORE, failing=logic[:1]))
    cand = write_run(store, "2026-01-02_000000_cand", items_for(CORE, failing=logic[:8]))
    root = str(store.root)
    # 21/22 -> 14/22: -31.818... points; rounding each side first gave -31.9 in compare
    code, out, _ = cli(capsys, "compare", base.run_id, cand.run_id, "--results", root)
    row = next(line for line in out.splitlines() if line.startswith("logic"))
    assert "−31.8" in row and "31.9" not in out
    code, out, _ = cli(
        capsys, "signoff", "--candidate", cand.run_id, "--baseline", base.run_id, "--results", root
    )
    assert "category logic fell 31.8 points" in out and "31.9" not in out
    assert fmt_points(100 * 14 / 22 - 100 * 21 / 22, signed=True) == "−31.8"
    assert (score100(1, 8), score100(59, 60), score100(5, 8)) == (13, 98, 63)  # halves go up


# --- misleading output 3: `latest` was a bisect probe --------------------------------------------


def test_latest_and_runs_skip_bisect_trials(store, capsys):
    mine = write_run(store, "2026-01-01_000000_mine", items_for(CORE))
    trial = write_run(store, "2026-01-02_000000_bisect-1624b25d-probe", items_for(CORE), trial=True)
    other = write_run(store, "2026-01-01_120000_vllm", items_for(CORE), started_at=None)
    root = str(store.root)

    code, out, _ = cli(capsys, "show", "latest", "--results", root)
    assert code == 0 and out.rstrip().splitlines()[-1].startswith(other.run_id)
    assert trial.run_id not in out
    assert store.resolve("latest") == other.run_id  # the last run that is not a trial
    assert store.resolve("latest:bisect-1624b25d-probe") == trial.run_id  # named: allowed

    code, out, _ = cli(capsys, "runs", "--results", root)
    assert mine.run_id in out and trial.run_id not in out
    code, out, _ = cli(capsys, "runs", "--all", "--results", root)
    assert trial.run_id in out
    runs = json.loads(cli(capsys, "runs", "--all", "--json", "--results", root)[1])["runs"]
    assert [(r["label"], r["trial"]) for r in runs] == [
        ("mine", False),
        ("vllm", False),
        ("bisect-1624b25d-probe", True),
    ]
    code, out, _ = cli(capsys, "runs", "--label", "vllm", "--results", root)
    assert other.run_id in out and mine.run_id not in out
    code, out, _ = cli(capsys, "runs", "--since", "2026-01-01T06:00", "--results", root)
    assert other.run_id in out and mine.run_id not in out
    code, out, _ = cli(capsys, "runs", "--suite", "core-v2", "--results", root)
    assert "no runs" in out and "--all" in out
    code, _, err = cli(capsys, "runs", "--since", "yesterday", "--results", root)
    assert code == 2 and "90m, 12h, 7d" in err


# --- the family: noise in one category no longer blocks; a collapse still does -------------------


def test_one_noisy_category_no_longer_blocks(store):
    # 6 of 22 factual items lost, none gained: p = 0.016 alone, which blocked before; in the
    # family of 12 tests it is not significant, so it warns
    lost = [f"factual-{k:03d}" for k in range(6)]
    gained = ["math-000", "logic-001", "code-002", "tool-003"]  # the total moves 2 items only
    write_run(store, "2026-01-01_000000_base", items_for(CORE, failing=gained))
    write_run(store, "2026-01-02_000000_cand", items_for(CORE, failing=lost))
    result = signoff(store, "latest:cand", "latest:base")
    assert result.verdict == "pass"
    warn = next(c for c in result.checks if c.subject == "factual")
    assert warn.outcome == "warn" and warn.p_value == pytest.approx(1 / 64)
    assert warn.p_adjusted is not None and warn.p_adjusted > 0.05


def test_long_context_collapse_blocks_without_a_test(store, tmp_path):
    gone = [f"long-context-{k:03d}" for k in range(8)]
    noise = ["math-000", "logic-001", "code-002", "factual-003"]  # gained back by the candidate
    write_run(store, "2026-01-01_000000_base", items_for(CORE, failing=noise))
    write_run(store, "2026-01-02_000000_cand", items_for(CORE, failing=gone))
    result = signoff(store, "latest:cand", "latest:base")
    assert result.verdict == "fail"
    check = next(c for c in result.checks if c.subject == "long-context")
    assert check.outcome == "fail" and "collapsed" in check.reason
    report = (store.run_dir(result.candidate) / "signoff.md").read_text("utf-8")
    assert "## Tested rules (one family, Holm-adjusted)" in report
    assert "| category long-context" in report and "p adjusted" in report
    data = json.loads(
        main_json(
            [
                "signoff",
                "--candidate",
                "latest:cand",
                "--baseline",
                "latest:base",
                "--results",
                str(store.root),
                "--json",
            ]
        )
    )
    fam = {c["subject"]: c for c in data["checks"] if c["p_value"] is not None}
    assert fam["long-context"]["p_adjusted"] >= fam["long-context"]["p_value"]


def main_json(argv):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(argv)
    return buf.getvalue()


# --- garble against the baseline ----------------------------------------------------------------


def _loops(ids):
    return {
        "garbled": True,
        "score": 0.8,
        "kind": "loop",
        "signals": [
            {"name": "loop", "family": "loop", "score": 0.8, "reason": "'ciel, ' repeated 40 times"}
        ],
    }


def test_a_small_models_own_loops_do_not_block_its_lane(store):
    """The seeds' real case: sglang 4 loops (candidate) vs vLLM 6 (baseline), no score change."""
    base_items = items_for(CORE, garbled=ids_of(CORE)[10:16])
    cand_items = items_for(CORE, garbled=ids_of(CORE)[13:17])
    for it in base_items + cand_items:
        if it.garble:
            it.garble = _loops(it.id)
    write_run(store, "2026-01-01_000000_vllm", base_items)
    write_run(store, "2026-01-02_000000_sglang", cand_items)
    result = signoff(store, "latest:sglang", "latest:vllm")
    assert result.verdict == "pass", result.reasons
    ceiling = next(c for c in result.checks if c.rule == "garble_rate")
    assert "4 of 184 answered items garbled (2.2%: 0 token soup, 4 loops)" in ceiling.reason
    rel = next(c for c in result.checks if c.rule == "garble_increase")
    assert rel.outcome == "pass" and "1 newly garbled and 3 cleared" in rel.reason


def test_a_misloaded_engine_still_fails_on_garble(store):
    soup = ids_of(CORE)[::4]  # 46 items of token soup
    write_run(store, "2026-01-01_000000_base", items_for(CORE))
    write_run(store, "2026-01-02_000000_cand", items_for(CORE, garbled=soup))
    result = signoff(store, "latest:cand", "latest:base")
    assert {c.rule for c in result.checks if c.outcome == "fail"} == {
        "garble_increase",
        "garble_rate",
    }


# --- repeats ------------------------------------------------------------------------------------


def test_repeats_pair_items_on_their_majority_and_show_the_noise(store):
    base = items_for(CORE)
    cand = items_for(CORE)
    for k, it in enumerate(cand):
        runs = ["passed", "passed", "passed"]
        if k < 20:
            runs[k % 3] = "failed"  # 20 flaky items, each still passing 2 of 3
        it.repeats = [{"status": s, "detail": "", "garbled": False} for s in runs]
    for it in base:
        it.repeats = [{"status": "passed", "detail": "", "garbled": False}] * 3
    write_run(store, "2026-01-01_000000_base", base)
    write_run(store, "2026-01-02_000000_cand", cand)
    cmp = compare_runs(store, "latest:base", "latest:cand")
    assert (cmp.stats.lost, cmp.stats.gained) == (0, 0)  # majorities unchanged
    noise = cmp.stats.repeat_noise
    assert noise is not None and (noise.a_flaky, noise.b_flaky) == (0, 20)
    assert noise.b_rate_sum == pytest.approx(184 - 20 / 3)
    assert noise.p_rates == pytest.approx(2 / 2**20)
    assert cmp.b.repeats == 3
    from evalrun.compare.report import render_text

    assert "items that both passed and failed across runs: 0 in A, 20 in B" in render_text(cmp)
    assert signoff(store, "latest:cand", "latest:base").verdict == "pass"


# --- the shared statistics ----------------------------------------------------------------------


def test_holm_and_weighted_holm():
    assert holm_adjust([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    # weighted: the first hypothesis holds half of alpha
    assert holm_adjust([0.02, 0.01, 0.3], [0.5, 0.25, 0.25]) == pytest.approx([0.04, 0.04, 0.3])


def test_rate_test_is_mcnemar_without_repeats():
    for b, c in [(5, 0), (3, 7), (10, 2)]:
        diffs = [Fraction(-1)] * b + [Fraction(1)] * c + [Fraction(0)] * 30
        for alt in ("two-sided", "less", "greater"):
            assert paired_rate_test(diffs, alternative=alt) == pytest.approx(
                mcnemar_exact(b, c, alternative=alt)
            )
    # sign flips of {1/3, 2/3, 1}: 8 patterns, the all-negative one is the only sum <= -2
    assert paired_rate_test(
        [Fraction(-1, 3), Fraction(-2, 3), Fraction(-1)], alternative="less"
    ) == pytest.approx(1 / 8)


def test_compare_and_signoff_read_one_family():
    fam = family([("a", -1)] * 8 + [("b", 0)] * 20, [0] * 28)
    assert [t.subject for t in fam.members] == ["", "a", "b", "garble"]
    assert all(t.p_adjusted >= t.p_value for t in fam.members)
    assert fam.categories[0].p_worse == pytest.approx(1 / 256)


def test_score_repeats_records_each_run_and_shows_the_noise(
    fake_server, make_suite, tmp_path, capsys
):
    """`score --repeats 3` against a real HTTP server that answers item 1 right only on its
    second request: the item's record keeps all three outcomes; the run counts it as flaky."""
    from fakeserver import last_user, reply, simple_item

    asked: dict[str, int] = {}

    def rule(req):
        q = last_user(req)
        asked[q] = asked.get(q, 0) + 1
        if "question 1:" in q:
            return reply("ok" if asked[q] == 2 else "nope")
        return reply("ok")

    fake_server.rule = rule
    suite = make_suite([simple_item(0), simple_item(1), simple_item(2)])
    results = str(tmp_path / "results")
    argv = ["score", "--no-progress", "--endpoint", fake_server.base_url, "--suite", str(suite)]
    code, out, _ = cli(capsys, *argv, "--results", results, "--repeats", "3", "--name", "r")
    assert code == 0
    assert "repeats 3: 1 of 3 items both passed and failed" in out
    assert sorted(asked.values()) == [3, 3, 3]
    store = RunStore(results)
    run = store.load_run("latest")
    assert run.sampling["repeats"] == 3 and run.summary is not None and run.summary.flaky == 1
    flaky = next(i for i in store.load_items(run.run_id) if i.id == "basic-001")
    assert [r.status for r in flaky.repeats or []] == ["failed", "passed", "failed"]
    code, _, err = cli(capsys, *argv, "--results", results, "--repeats", "0")
    assert code == 2 and "--repeats must be between 1 and 20" in err


def test_signoff_md_escapes_names_from_the_suite(store):
    evil = "<img src=x onerror=alert(1)>|x"
    sizes = {evil: 12, "math": 24}
    write_run(store, "2026-01-01_000000_base", items_for(sizes))
    write_run(store, "2026-01-02_000000_cand", items_for(sizes, failing=ids_of({evil: 12})))
    result = signoff(store, "latest:cand", "latest:base")
    report = (store.run_dir(result.candidate) / "signoff.md").read_text("utf-8")
    assert result.verdict == "fail" and "<img" not in report and "&lt;img" in report


def test_signoff_terminal_output_shows_escapes_not_control_characters(store, capsys):
    evil = "code\x1b]0;pwned\x07"
    sizes = {evil: 12, "math": 24}
    write_run(store, "2026-01-01_000000_base", items_for(sizes))
    write_run(store, "2026-01-02_000000_cand", items_for(sizes, failing=ids_of({evil: 12})))
    code, out, _ = cli(
        capsys,
        "signoff",
        "--candidate",
        "latest:cand",
        "--baseline",
        "latest:base",
        "--results",
        str(store.root),
    )
    assert code == 1 and "\x1b" not in out and "code\\x1b]0;pwned\\x07" in out
    report = (store.run_dir("2026-01-02_000000_cand") / "signoff.md").read_text("utf-8")
    assert "\x1b" not in report

import json

import pytest
from support.synthruns import (
    CORE_LIKE,
    OTHER_SHA,
    core_earlier_and_now,
    items_for,
    seeds_pair,
    write_run,
)

from evalrun.base.errors import SuiteError
from evalrun.cli import main
from evalrun.compare.pairing import compare_runs
from evalrun.compare.report import render_html, render_markdown, render_text
from evalrun.store import RunStore


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "results")


def test_seeds_story_is_no_significant_difference(store):
    a, b = seeds_pair(store)
    cmp = compare_runs(store, a.run_id, b.run_id)
    assert (cmp.a.passed, cmp.b.passed, cmp.a.total) == (168, 170, 184)
    assert (cmp.stats.lost, cmp.stats.gained) == (2, 4)
    assert cmp.stats.p_value == pytest.approx(0.6875)
    assert not cmp.stats.significant
    assert cmp.verdict == (
        "B − A = +2 items (170 vs 168), McNemar p = 0.69: no significant difference"
    )
    lo, hi = cmp.stats.ci_items
    assert lo < 0 < hi
    assert cmp.stats.mdd_items == 6


def test_flips_by_id_and_category(store):
    a, b = seeds_pair(store)
    cmp = compare_runs(store, a.run_id, b.run_id)
    flips = {(f.id, f.category, f.direction) for f in cmp.flips}
    assert flips == {
        ("multilingual-002", "multilingual", "pass->fail"),
        ("long-context-017", "long-context", "pass->fail"),
        ("math-003", "math", "fail->pass"),
        ("tools-011", "tools", "fail->pass"),
        ("json-004", "json", "fail->pass"),
        ("code-007", "code", "fail->pass"),
    }
    math = next(c for c in cmp.categories if c.category == "math")
    assert (math.a_passed, math.b_passed, math.delta, math.gained, math.lost) == (27, 28, 1, 1, 0)
    flip = next(f for f in cmp.flips if f.id == "math-003")
    assert flip.a_answer == "wrong answer to math-003" and flip.b_answer == "ok"


def test_suite_hash_mismatch_is_refused_naming_both(store):
    write_run(store, "2026-01-01_000000_old", items_for(), sha=OTHER_SHA)
    write_run(store, "2026-01-02_000000_new", items_for())
    with pytest.raises(SuiteError) as err:
        compare_runs(store, "latest:old", "latest:new")
    msg = str(err.value)
    assert "2026-01-01_000000_old" in msg and "2026-01-02_000000_new" in msg
    assert "core-v2" in msg and "core-v1" in msg
    assert main(["compare", "--results", str(store.root), "latest:old", "latest:new"]) == 2


def test_runs_of_two_core_versions_are_refused_in_one_line(store, capsys):
    before, now = core_earlier_and_now()
    write_run(store, "2026-01-01_000000_old", items_for(), **before)
    write_run(store, "2026-01-02_000000_new", items_for(), **now)
    assert main(["compare", "--results", str(store.root), "latest:old", "latest:new"]) == 2
    err = capsys.readouterr().err.strip()
    names = (f"core-v{before['version']}", f"core-v{now['version']}")
    assert all(n in err for n in names) and len(err.splitlines()) == 1, err


def test_real_regression_is_significant(store):
    a = write_run(store, "2026-01-01_000000_a", items_for())
    tools = [f"tools-{k:03d}" for k in range(12)]
    b = write_run(store, "2026-01-02_000000_b", items_for(failing=tools))
    cmp = compare_runs(store, a.run_id, b.run_id)
    assert cmp.stats.significant
    assert cmp.verdict.startswith("B − A = −12 items (172 vs 184), McNemar p = 0.00049")
    assert "B is significantly worse" in cmp.verdict
    assert cmp.stats.ci_items[1] < 0


def test_errors_are_not_paired_and_show_as_other_changes(store):
    a = write_run(store, "2026-01-01_000000_a", items_for())
    b = write_run(
        store,
        "2026-01-02_000000_b",
        items_for(
            errors={"math-001", "math-002"},
            skip={"code-000"},
            garbled={"json-001"},
            diagnoses={"reasoning_only": ["json-003"]},
        ),
        status="incomplete",
        total=184,
    )
    cmp = compare_runs(store, a.run_id, b.run_id)
    assert cmp.stats.paired == 181 and cmp.stats.excluded == 3
    assert (cmp.stats.lost, cmp.stats.gained) == (0, 0)
    assert {(c.id, c.direction) for c in cmp.other_changes} == {
        ("math-001", "pass->error"),
        ("math-002", "pass->error"),
        ("code-000", "pass->missing"),
    }
    assert (cmp.b.errors, cmp.b.missing, cmp.b.garbled) == (2, 1, 1)
    assert [(d.kind, d.a, d.b) for d in cmp.diagnoses] == [("reasoning_only", 0, 1)]
    assert cmp.verdict == (
        "paired on 181 of 184 items: B − A = 0 items (181 vs 181 on the paired items), "
        "McNemar p = 1.00: no significant difference; 3 items errored or not run in A or B "
        "left out"
    )


def test_anchor_tags_and_latest_resolve(store):
    a, b = seeds_pair(store)
    store.set_tag("sglang-anchor", a.run_id)
    cmp = compare_runs(store, "sglang-anchor", "latest")
    assert (cmp.a.run_id, cmp.b.run_id) == (a.run_id, b.run_id)


def test_text_report_and_show_responses(store):
    a, b = seeds_pair(store)
    cmp = compare_runs(store, a.run_id, b.run_id)
    text = render_text(cmp)
    assert "TOTAL" in text and "168/184" in text and "170/184" in text
    assert "wrong answer to math-003" not in text
    shown = render_text(cmp, show_responses=True)
    assert "wrong answer to math-003" in shown and "A answered" in shown
    assert shown.rstrip().endswith("no significant difference")


def test_html_escapes_model_output(store, tmp_path):
    a = write_run(store, "2026-01-01_000000_a", items_for(failing={"code-001"}))
    evil = "<script>alert('x')</script> | & done\nline two"
    b = write_run(store, "2026-01-02_000000_b", items_for(answer=evil))
    cmp = compare_runs(store, a.run_id, b.run_id)
    page = render_html(cmp)
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert page.startswith("<!DOCTYPE html>") and page.count("<html") == 1
    md = render_markdown(cmp)
    assert "<script>" not in md
    flip_row = next(line for line in md.splitlines() if line.startswith("| code-001"))
    assert flip_row.count("|") == 6  # the answer's pipe and newline do not break the table


def test_cli_json_and_html(store, tmp_path, capsys):
    a, b = seeds_pair(store)
    out_html = tmp_path / "flips.html"
    code = main(
        [
            "compare",
            "--results",
            str(store.root),
            a.run_id,
            b.run_id,
            "--json",
            "--html",
            str(out_html),
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"].startswith("B − A = +2 items")
    assert data["stats"]["p_value"] == pytest.approx(0.6875)
    assert {f["direction"] for f in data["flips"]} == {"pass->fail", "fail->pass"}
    page = out_html.read_text(encoding="utf-8")
    assert "math-003" in page and "wrong answer to math-003" in page


def test_cli_unknown_run_is_exit_2(store, capsys):
    store.root.mkdir(parents=True)
    assert main(["compare", "--results", str(store.root), "nope", "latest"]) == 2
    assert "evalrun runs" in capsys.readouterr().err


def test_bootstrap_seed_changes_only_the_interval(store):
    a, b = seeds_pair(store)
    one = compare_runs(store, a.run_id, b.run_id, seed=1, resamples=500)
    same = compare_runs(store, a.run_id, b.run_id, seed=1, resamples=500)
    assert one.stats.ci_items == same.stats.ci_items
    assert one.stats.p_value == compare_runs(store, a.run_id, b.run_id, seed=2).stats.p_value


def test_categories_cover_the_suite(store):
    a, b = seeds_pair(store)
    cmp = compare_runs(store, a.run_id, b.run_id)
    assert {c.category: c.a_total for c in cmp.categories} == CORE_LIKE


def test_lone_surrogates_in_answers_still_write(store, tmp_path, capsys):
    a = write_run(store, "2026-01-01_000000_a", items_for(failing={"code-001"}))
    b = write_run(store, "2026-01-02_000000_b", items_for(answer="broken \ud800 bytes"))
    out = tmp_path / "f.html"
    assert (
        main(
            [
                "compare",
                "--results",
                str(store.root),
                a.run_id,
                b.run_id,
                "--html",
                str(out),
                "--show-responses",
            ]
        )
        == 0
    )
    assert "broken \\ud800 bytes" in out.read_text(encoding="utf-8")
    assert (
        main(
            [
                "signoff",
                "--results",
                str(store.root),
                "--candidate",
                b.run_id,
                "--baseline",
                a.run_id,
                "--json",
            ]
        )
        == 0
    )

"""One count of a lane's garble: a bisect trial and sign-off read the same answers alike.

A healthy small model loops on a few answers; mis-mapped weights loop on nearly all of them.
verdicts.LaneGarble counts soup and loops once; a bisect trial's rate counts the loops
once most answers loop, sign-off's ceiling every flagged answer (see the module's docstring).
"""

from __future__ import annotations

import pytest
from support.synthruns import CORE_LIKE, ids_of, items_for, write_run

from evalrun.bisection.trial import TrialRules, measure
from evalrun.compare.pairing import compare_runs
from evalrun.endpoint.response import ItemError
from evalrun.signoff.policy import Policy
from evalrun.signoff.rules import comparison_family
from evalrun.store import ItemRecord, RunStore, summarize
from evalrun.verdicts import LOOPING_LANE, GarbleVerdict, LaneGarble

LOOP = {
    "garbled": True,
    "score": 0.8,
    "kind": "loop",
    "signals": [
        {"name": "loop", "family": "loop", "score": 0.8, "reason": "'ciel, ' repeated 40 times"}
    ],
}


def lane(loops: int, soup: int, errors: int = 0) -> list[ItemRecord]:
    """184 items: the first `loops` answers loop, the next `soup` are token soup, then errors."""
    ids = ids_of(CORE_LIKE)
    items = items_for(garbled=ids[: loops + soup], errors=ids[loops + soup : loops + soup + errors])
    for it in items[:loops]:
        it.garble = GarbleVerdict.model_validate(LOOP)
    return items


# (loops, soup, errors) of the candidate lane: none, a healthy model's few loops, loops with some
# soup, many loops short of most answers, most answers (92 of 184), soup alone, errors besides.
LANES = [(0, 0, 0), (6, 0, 0), (6, 12, 0), (30, 0, 0), (91, 0, 0), (92, 0, 0), (92, 10, 0)]
LANES += [(0, 46, 0), (150, 20, 0), (40, 0, 100)]


@pytest.mark.parametrize(("loops", "soup", "errors"), LANES)
def test_bisect_and_signoff_judge_the_same_answers_alike(tmp_path, loops, soup, errors):
    store = RunStore(tmp_path / "results")
    items = lane(loops, soup, errors)
    base = write_run(store, "2026-01-01_000000_base", items_for())
    cand = write_run(store, "2026-01-02_000000_cand", items)

    trial = measure(items, [cand.run_id], len(items))
    cmp = compare_runs(store, base.run_id, cand.run_id)
    policy = Policy()
    ceiling = next(c for c in comparison_family(cmp, policy) if c.rule == "garble_rate")

    # the same counts, from the same answers, through bisect's measure and compare's sides
    assert cmp.b.lane_garble == trial.lane_garble
    # and the run's own summary (what `score` shows and --fail-on-garble judges): flagged rate
    summary = summarize(items, items)
    assert summary.garbled == trial.lane_garble.garbled
    assert summary.garble_rate == round(trial.lane_garble.flagged_rate, 4)
    answered = len(items) - errors
    assert trial.lane_garble == LaneGarble(garbled=loops + soup, loops=loops, answered=answered)
    looping = loops >= LOOPING_LANE * answered
    assert trial.lane_garble.looping == looping
    assert trial.garble_rate == (loops * looping + soup) / answered
    # sign-off's ceiling judges the flagged rate, with the same words
    flagged = (loops + soup) / answered
    assert (ceiling.outcome == "fail") == (flagged > policy.max_garble_rate)
    assert trial.lane_garble.describe() in ceiling.reason
    # a trial bisect calls garbled never passes sign-off's ceiling
    judge = TrialRules()
    assert (judge.kind(trial) == "garble") == (trial.garble_rate >= judge.garble_rate)
    if judge.kind(trial) == "garble":
        assert ceiling.outcome == "fail"


def test_a_healthy_models_loops_are_shown_and_counted_apart():
    g = LaneGarble(garbled=10, loops=6, answered=184)
    assert (g.soup, g.counted, g.looping) == (4, 4, False)
    assert g.flagged_rate == 10 / 184 and g.rate == 4 / 184
    assert g.describe() == "10 of 184 answered items garbled (5.4%: 4 token soup, 6 loops)"
    most = LaneGarble(garbled=100, loops=92, answered=184)
    assert most.looping and most.rate == most.flagged_rate == 100 / 184
    assert most.describe().endswith("(54.3%: 8 token soup, 92 loops, most answers loop)")


def test_counts_come_from_the_verdicts_of_the_answers():
    soup = GarbleVerdict(garbled=True, score=0.9, kind="non-words")
    clean = GarbleVerdict(garbled=False, score=0.0)
    loop = GarbleVerdict.model_validate(LOOP)
    g = LaneGarble.of([soup, clean, None, loop, loop])
    assert g == LaneGarble(garbled=3, loops=2, answered=5)


def test_a_runs_summary_counts_the_answers_bisect_counts(tmp_path):
    """An answer whose grading timed out (an error, with a response) is an answered item; a
    prompt rejected for context length (failed, no response) is not: for the run's summary, a
    bisect trial, and compare's side (sign-off's garble ceiling) alike."""
    items = lane(6, 12, 3)
    answered = [i for i, r in enumerate(items) if r.response is not None and not r.garbled]
    timed_out, rejected = answered[0], answered[1]
    items[timed_out] = items[timed_out].model_copy(
        update={"status": "error", "error": ItemError(kind="grader_timeout", message="slow")}
    )
    items[rejected] = items[rejected].model_copy(
        update={"status": "failed", "response": None, "diagnoses": ["context_length"]}
    )
    trial = measure(items, ["r"], len(items))
    summary = summarize(items, items)
    assert trial.lane_garble == LaneGarble(garbled=18, loops=6, answered=len(items) - 3 - 1)
    assert summary.garbled == 18
    assert summary.garble_rate == round(18 / (len(items) - 4), 4)
    # compare's sides alike, each case alone (together their two miscounts would cancel)
    store = RunStore(tmp_path / "results")
    base = write_run(store, "2026-01-01_000000_base", items_for())
    for n, one in enumerate((timed_out, rejected)):
        alone = lane(6, 12, 3)
        alone[one] = items[one]
        cand = write_run(store, f"2026-01-0{n + 2}_000000_cand", alone)
        side = compare_runs(store, base.run_id, cand.run_id).b
        assert side.lane_garble == measure(alone, ["r"], len(alone)).lane_garble
        assert round(side.garble_rate, 4) == summarize(alone, alone).garble_rate

"""The per-lane noise floor: a candidate graded against its baseline's own A/A spread."""

from __future__ import annotations

import json
import random

from fakeserver import simple_item
from test_fidelity import lane, trace

from evalrun.cli import main
from evalrun.compare.fidelity import against_floor, binom_sf, judge, runs_fidelity
from evalrun.compare.floor import beta_binom_sf, floor_of
from evalrun.compare.pairing import compare_runs
from evalrun.compare.report import render_text
from evalrun.store import RunStore

ITEMS = 30
LENGTH = 24


def tokens(item: int, jitter: float, seed: int, *, flips: set[int] = frozenset(), hard=()):
    """One item's answer: LENGTH tokens whose logprobs move by up to `jitter` nats (a lane's
    numeric wobble, seeded); on `flips` the first token is a near tie the other way, on `hard`
    a pick the lane thought unlikely."""
    rng = random.Random(seed * 1000 + item)
    out = []
    for k in range(LENGTH):
        lp = -0.2 - 0.05 * ((item + k) % 7) + rng.uniform(-jitter, jitter)
        alt = lp - 0.3 if k else lp - 0.05  # the first token is a near tie: 0.05 nats apart
        out.append((f"t{k}", lp, [(f"t{k}", lp), (f"u{k}", alt)]))
    if item in flips:
        t, lp, alts = out[0]
        out[0] = ("u0", lp, [("u0", lp), ("t0", lp - 0.04)])
    if item in hard:
        out[0] = ("zz", -0.1, [("zz", -0.1), ("t0", -4.0)])
    return out


def lane_traces(jitter: float, seed: int, **kw):
    return {f"i{k}": trace(f"i{k}", tokens(k, jitter, seed, **kw)) for k in range(ITEMS)}


def graded(a, b, floor):
    return against_floor(judge(a, b, list(a)), floor)


def test_aa_pairs_stay_within_noise_and_faults_leave_it():
    a = lane_traces(0.01, 1)
    partner = lane_traces(0.01, 2, flips={3, 7})
    floor = floor_of([judge(a, partner, list(a))], "A vs A'")
    assert floor is not None and floor.diverged == 2 and floor.hard == 0
    # another healthy run: the same wobble, other near ties flipped
    healthy = graded(a, lane_traces(0.01, 3, flips={5, 11, 20}), floor)
    assert healthy.verdict == "within noise", healthy.reason
    assert healthy.floor is not None and 0.5 < healthy.floor.units < 1.5
    # a numeric change well outside the lane's wobble (a dtype, a wrong constant): under the
    # constants' 0.05 nats it reads equivalent; against the floor it is several floor units
    moved = lane_traces(0.05, 4, flips={1, 2})
    assert judge(a, moved, list(a)).verdict == "equivalent"
    numeric = graded(a, moved, floor)
    assert numeric.verdict == "numerically different", numeric.reason
    assert numeric.floor is not None and numeric.floor.units > 3
    assert "floor units" in numeric.line() and "floor: measured (A vs A'" in numeric.line()
    # a fault: hard divergences the floor never shows
    broken = graded(a, lane_traces(0.01, 5, hard=set(range(6))), floor)
    assert broken.verdict == "divergent" and "hard" in broken.reason


def test_a_wobbly_lane_tolerates_what_the_constants_call_divergent():
    """A lane whose own A/A pair drifts 0.08 nats: the constants flag a healthy repeat, its
    floor does not; a large drift over its floor is still divergent."""
    a = lane_traces(0.16, 1)
    floor = floor_of([judge(a, lane_traces(0.16, 2), list(a))], "A vs A'")
    assert floor is not None and floor.drift > 0.05
    repeat = lane_traces(0.16, 3)
    assert judge(a, repeat, list(a)).verdict == "divergent"  # the fixed drift_max
    assert graded(a, repeat, floor).verdict == "within noise"
    far = graded(a, lane_traces(1.2, 4), floor)
    assert far.verdict == "divergent" and far.floor is not None and far.floor.units > 4


def test_an_identical_floor_and_identical_candidate():
    a = lane_traces(0.01, 1)
    floor = floor_of([judge(a, a, list(a))], "A vs A")
    assert floor is not None and floor.drift == 0
    same = graded(a, dict(a), floor)
    assert same.verdict == "identical"
    # against a bitwise-stable lane any wobble is outside its noise, but not divergent
    wobble = graded(a, lane_traces(0.01, 2), floor)
    assert wobble.verdict == "numerically different"


def test_beta_binomial_is_the_binomial_once_the_floor_is_large():
    assert beta_binom_sf(0, 20, 0, 10) == 1.0 and beta_binom_sf(21, 20, 0, 10) == 0.0
    big = beta_binom_sf(3, 26, 2_000, 100_000)
    assert abs(big - binom_sf(3, 26, 0.02)) < 2e-3
    # a floor of 26 items without a hard divergence needs 5 of 26 to call it divergent
    assert beta_binom_sf(4, 26, 0, 26) > 0.01 > beta_binom_sf(5, 26, 0, 26)


def test_compare_takes_an_aa_partner_and_says_which_floor(
    fake_server, make_suite, tmp_path, capsys
):
    suite = make_suite([simple_item(i) for i in range(ITEMS)])

    def score(jitter, seed, **kw):
        run, _ = lane(
            fake_server,
            make_suite,
            tmp_path,
            lambda i: tokens(i, jitter, seed, **kw),
            n=ITEMS,
            suite=suite,
        )
        return run.run_id

    a, partner = score(0.01, 1), score(0.01, 2, flips={3})
    moved = score(0.05, 3)
    store = RunStore(tmp_path / "results")
    plain = compare_runs(store, a, moved)
    assert plain.fidelity is not None and plain.fidelity.verdict == "equivalent"
    assert plain.fidelity.line().endswith("floor: defaults")
    cmp = compare_runs(store, a, moved, floor=[partner])
    assert cmp.fidelity is not None and cmp.fidelity.verdict == "numerically different"
    assert f"floor: measured ({a} vs {partner}" in render_text(cmp)
    results = str(tmp_path / "results")
    assert main(["compare", a, moved, "--floor", partner, "--results", results, "--json"]) == 0
    fid = json.loads(capsys.readouterr().out)["fidelity"]
    assert fid["verdict"] == "numerically different" and fid["floor"]["units"] > 3
    assert fid["floor"]["floor"]["source"] == f"{a} vs {partner}"
    assert runs_fidelity(store, a, partner).verdict == "equivalent"
    assert main(["compare", a, moved, "--floor", a, "--results", results]) == 2
    assert "is run A itself" in capsys.readouterr().err
    page = tmp_path / "pair.html"
    assert (
        main(["report", a, moved, "--floor", partner, "--results", results, "-o", str(page)]) == 0
    )
    text = page.read_text()
    assert "numerically different" in text and f"floor: measured ({a} vs {partner}" in text
    assert main(["report", a, moved, "--results", results, "-o", str(page)]) == 0
    assert "floor: defaults" in page.read_text()


def test_signoff_blocks_divergent_and_warns_numerically_different(
    fake_server, make_suite, tmp_path
):
    from evalrun.signoff.gate import signoff
    from evalrun.signoff.policy import Policy

    suite = make_suite([simple_item(i) for i in range(ITEMS)])

    def score(jitter, seed, **kw):
        fn = lambda i: tokens(i, jitter, seed, **kw)  # noqa: E731
        return lane(fake_server, make_suite, tmp_path, fn, n=ITEMS, suite=suite)[0].run_id

    a, partner, moved = score(0.01, 1), score(0.01, 2), score(0.05, 3)
    broken = score(0.01, 4, hard=set(range(8)))
    store = RunStore(tmp_path / "results")

    def check(cand, **kw):
        result = signoff(store, cand, a, Policy(**kw), write_report=False, floor=[partner])
        return next(c for c in result.checks if c.rule == "fidelity"), result.verdict

    (c, verdict) = check(moved)
    assert (c.subject, c.outcome, verdict) == ("numerically different", "warn", "pass")
    (c, verdict) = check(broken)
    assert (c.subject, c.outcome, verdict) == ("divergent", "fail", "fail")
    (c, _) = check(moved, fidelity_blocks=["divergent", "numerically different"])
    assert c.outcome == "fail"


def test_the_calibration_bench_reads_stored_runs_offline(fake_server, make_suite, tmp_path, capsys):
    """bench/fidelity_floor.py on ordinary stored runs (ids and folders): per-setting floors,
    and every (A, A', B) triple judged with the constants and with A's floor."""
    from bench import fidelity_floor

    suite = make_suite([simple_item(i) for i in range(ITEMS)])

    def score(jitter, seed, **kw):
        fn = lambda i: tokens(i, jitter, seed, **kw)  # noqa: E731
        return lane(fake_server, make_suite, tmp_path, fn, n=ITEMS, suite=suite)[0].run_id

    aa = [score(0.01, s, flips={s}) for s in (1, 2, 3)]
    moved, broken = score(0.05, 7), score(0.01, 8, hard=set(range(6)))
    results = tmp_path / "results"
    argv = ["--results", str(results), "--aa", "base=" + ",".join(aa)]
    argv += ["--fault", f"moved={moved}", "--fault", f"broken={results / broken}", "--json"]
    assert fidelity_floor.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    (floor,) = out["floors"]
    assert (floor["runs"], floor["pairs"], floor["hard"]) == (3, 3, 0)
    by = {(s["role"], s["cand"]): s for s in out["summary"]}
    assert by[("aa", "base")]["n"] == 6 and by[("aa", "base")]["floor_outside"] == 0
    assert by[("fault", "moved")]["constants_divergent"] == 0
    assert by[("fault", "moved")]["floor_outside"] == 6
    assert by[("fault", "broken")]["floor_divergent"] == 6
    assert fidelity_floor.main(argv[:-1]) == 0
    assert "outside noise (floor)" in capsys.readouterr().out


def test_fisher_counts_the_floors_own_uncertainty():
    from evalrun.compare.floor import fisher_sf

    assert fisher_sf(0, 10, 3, 10) == 1.0 and fisher_sf(11, 10, 0, 10) == 0.0
    # one A/A pair's 7 hard of 180 is a sample too: 13 of 180 is within it, 33 is not
    assert fisher_sf(13, 180, 7, 180) > 0.05
    assert fisher_sf(33, 180, 13, 180) < 0.01
    # against a known rate (the one-sample test) the same 13 would read as beyond chance
    assert binom_sf(13, 180, 7 / 180) < 0.05


def test_the_candidates_own_spread_widens_the_noise_but_not_for_a_fault():
    """A deterministic good side (floor 0): a batching variant that wobbles as much against
    itself as against A is within noise once its own floor is given; a fault whose own repeat
    wobbles as wildly (hard divergences on every third item) stays divergent."""
    a = lane_traces(0.0, 1)
    steady = floor_of([judge(a, lane_traces(0.0, 1), list(a))], "A vs A'")
    assert steady is not None and steady.diverged == 0
    batched = lane_traces(0.15, 2, flips={1, 4, 9})
    own = floor_of([judge(batched, lane_traces(0.15, 3, flips={2, 5}), list(a))], "B vs B'")
    alone = against_floor(judge(a, batched, list(a)), steady)
    assert alone.verdict == "divergent"  # far outside a floor of 0
    widened = against_floor(judge(a, batched, list(a)), steady, own)
    assert widened.verdict == "within noise", widened.reason
    assert widened.floor is not None and widened.floor.cand_floor == own
    unstable = set(range(0, ITEMS, 3))
    fault = lane_traces(0.1, 4, hard=unstable)
    fault_own = floor_of([judge(fault, lane_traces(0.1, 5, hard=unstable - {0}), list(a))], "F")
    assert fault_own is not None and fault_own.hard >= 1
    caught = against_floor(judge(a, fault, list(a)), steady, fault_own)
    assert caught.verdict == "divergent", caught.reason


def test_candidate_floor_needs_the_baselines(tmp_path, capsys):
    results = str(tmp_path / "results")
    assert main(["compare", "x", "y", "--candidate-floor", "z", "--results", results]) == 2
    assert "add --floor RUN too" in capsys.readouterr().err


def test_a_lane_unstable_against_itself_is_not_excused_by_its_own_wobble():
    """A fault that makes the lane unstable (a q4_0 K cache on a GPU): against the good side few
    items diverge hard, but its logprobs move far beyond the good side's floor; its own repeat
    diverges hard more often than healthy noise does, so that repeat is no excuse."""
    a = lane_traces(0.01, 1)
    floor = floor_of([judge(a, lane_traces(0.01, 2), list(a))], "A vs A'")
    fault = lane_traces(0.2, 4, hard={0})
    own = floor_of([judge(fault, lane_traces(0.2, 5, hard={0, 3, 6, 9}), list(a))], "B vs B'")
    assert own is not None and own.hard == 3 and own.drift > 0.05
    caught = against_floor(judge(a, fault, list(a)), floor, own)
    assert caught.verdict == "divergent", caught.reason
    assert caught.floor is not None and caught.floor.units > 4
    # the same wobble with its hard divergences in a healthy share stays excused
    calm = floor_of([judge(fault, lane_traces(0.2, 5, hard={0}), list(a))], "B vs B'")
    assert calm is not None and calm.hard == 0
    excused = against_floor(judge(a, fault, list(a)), floor, calm)
    assert excused.verdict == "within noise", excused.reason

"""A pool of lanes for bisect: the same answer as one lane, in fewer rounds, each row naming its
lane. Local lanes here (k engines on this machine); tests/test_remote_launch.py boots the same
bisects over ssh and Slurm. Wall times are bench/bisect_lanes.py's, not asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeserver import simple_item, write_suite
from support.knob_contracts import eight_knobs, write_contract

from evalrun.bisection.driver import BisectRequest, run_bisect

pytestmark = pytest.mark.slow  # boots the fake engine a dozen times


def request(tmp_path: Path, lanes: int, results: str, **kw: object) -> BisectRequest:
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    return BisectRequest(
        suite=str(suite), results=str(tmp_path / results), burst=2, lanes=lanes, **kw
    )


def test_knob_sweep_runs_every_value_at_once(tmp_path):
    contract = write_contract(tmp_path, "lane", {"load-format": "safetensors"})
    values = ["safetensors", "instanttensor", "auto", "pt"]
    one = run_bisect(request(tmp_path, 1, "r1", contract=contract, knob="load-format",
                             values=values), log=lambda _: None)  # fmt: skip
    four = run_bisect(request(tmp_path, 4, "r4", contract=contract, knob="load-format",
                              values=values), log=lambda _: None)  # fmt: skip
    assert one.culprits == four.culprits == [{"knob": "load-format", "value": "instanttensor"}]
    assert (one.rounds, one.boots) == (4, 4)
    # the contract's own value first, alone (its tokens judge the others), then the other three
    assert (four.rounds, four.boots) == (2, 4)
    assert sorted(t.lane for t in four.trials) == [1, 1, 2, 3]  # the report names each lane
    assert all(t.lane is None for t in one.trials)
    assert [t.n for t in four.trials] == [1, 2, 3, 4]


def test_delta_debugging_of_eight_knobs_takes_fewer_rounds_with_four_lanes(tmp_path):
    good, bad = eight_knobs(tmp_path)
    one = run_bisect(request(tmp_path, 1, "r1", good=good, bad=bad), log=lambda _: None)
    four = run_bisect(request(tmp_path, 4, "r4", good=good, bad=bad), log=lambda _: None)
    culprit = [{"knob": "load-format", "value": "instanttensor"}]
    assert one.culprits == four.culprits == culprit
    assert four.rounds < one.rounds
    assert one.boots == one.rounds  # one lane: one trial a round


def test_the_trial_cache_is_shared_by_the_lanes(tmp_path):
    good, bad = eight_knobs(tmp_path)
    first = run_bisect(request(tmp_path, 4, "r", good=good, bad=bad), log=lambda _: None)
    again = run_bisect(request(tmp_path, 4, "r", good=good, bad=bad), log=lambda _: None)
    assert again.culprits == first.culprits
    assert len({t.lane for t in first.trials}) > 1  # the first bisect booted on several lanes
    # every trial, whichever lane booted it, is read back from the one cache: nothing boots
    assert again.boots == 0, [(t.variant, t.boot_error) for t in first.trials if t.boot_error]
    assert all(t.cached and t.lane is None for t in again.trials)


def test_git_mode_tests_commits_in_parallel(tmp_path):
    import subprocess

    repo = tmp_path / "ops"
    repo.mkdir()

    def git(*args: str) -> str:
        argv = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
        return subprocess.run(argv, cwd=repo, check=True, capture_output=True, text=True).stdout

    git("init", "-q", "-b", "main")
    shas = []
    for i in range(9):  # commit 6 sets the culprit; the others move a harmless knob
        args = {"load-format": "instanttensor" if i >= 6 else "safetensors", "knob-1": str(i)}
        write_contract(repo, "lane", args)
        git("add", "lane.yaml")
        git("commit", "-qm", f"lane: step {i}")
        shas.append(git("rev-parse", "HEAD").strip())
    runs = {
        lanes: run_bisect(
            request(
                tmp_path,
                lanes,
                f"r{lanes}",
                contract="lane.yaml",
                repo=str(repo),
                good=shas[0],
                bad=shas[-1],
            ),
            log=lambda _: None,
        )  # fmt: skip
        for lanes in (1, 4)
    }
    one, four = runs[1], runs[4]
    assert one.first_bad_commit and four.first_bad_commit
    assert one.first_bad_commit["sha"] == four.first_bad_commit["sha"] == shas[6]
    assert four.rounds < one.rounds
    booted = [t for t in four.trials if not t.cached]
    assert len({t.lane for t in booted}) > 1  # commits ran on several lanes at once

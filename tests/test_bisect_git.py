"""Git-history bisection: commits that changed the contract, read without touching the work tree."""

import subprocess

import pytest
import yaml

from evalrun.base.errors import UsageError
from evalrun.bisection.dd import Outcome
from evalrun.bisection.gitbisect import bisect_commits, commits_between, read_at, resolve_rev

P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED
CONTRACT = "bisect/contracts/lane.yaml"


def _git(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _commit_contract(repo, args, message):
    path = repo / CONTRACT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"name": "lane", "engine": "vllm", "model": "m", "args": args}))
    _git(repo, "add", CONTRACT)
    _git(repo, "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def _commit_other(repo, n):
    (repo / "notes.txt").write_text(f"note {n}\n")
    _git(repo, "add", "notes.txt")
    _git(repo, "commit", "-qm", f"notes {n}")
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def history(tmp_path):
    """good, then 6 contract commits interleaved with unrelated ones; commit 4 sets the bad knob."""
    repo = tmp_path / "ops"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    args = {"load-format": "safetensors", "max-num-seqs": 8}
    shas = {"good": _commit_contract(repo, dict(args), "lane: first")}
    for i in range(1, 7):
        _commit_other(repo, i)
        args["max-num-seqs"] = 8 + i
        if i == 4:
            args["load-format"] = "instanttensor"
        shas[i] = _commit_contract(repo, dict(args), f"lane: step {i}")
    _commit_other(repo, 99)
    shas["bad"] = _git(repo, "rev-parse", "HEAD")
    return repo, shas


def _by_content(repo, outcome_for_args):
    calls = []

    def test(commit):
        calls.append(commit.sha)
        data = read_at(repo, commit.sha, CONTRACT)
        if data is None:
            return U
        return outcome_for_args(yaml.safe_load(data)["args"])

    test.calls = calls
    return test


def test_commits_between_lists_only_contract_changes_oldest_first(history):
    repo, shas = history
    commits = commits_between(repo, shas["good"], shas["bad"], CONTRACT)
    assert [c.sha for c in commits] == [shas[i] for i in range(1, 7)]
    assert commits[0].summary == "lane: step 1"
    every = commits_between(repo, shas["good"], shas["bad"], CONTRACT, all_commits=True)
    assert len(every) == 13
    assert every[-1].sha == shas["bad"]


def test_read_at_reads_old_content_without_touching_the_work_tree(history):
    repo, shas = history
    (repo / CONTRACT).write_text("local edit, uncommitted\n")
    before = _git(repo, "status", "--porcelain")
    head = _git(repo, "rev-parse", "HEAD")
    old = yaml.safe_load(read_at(repo, shas[2], CONTRACT))
    assert old["args"] == {"load-format": "safetensors", "max-num-seqs": 10}
    assert read_at(repo, shas["good"], "no/such/file.yaml") is None
    assert _git(repo, "status", "--porcelain") == before
    assert _git(repo, "rev-parse", "HEAD") == head
    assert (repo / CONTRACT).read_text() == "local edit, uncommitted\n"


def test_bisect_finds_the_commit_that_set_the_bad_knob(history):
    repo, shas = history
    commits = commits_between(repo, shas["good"], shas["bad"], CONTRACT)
    test = _by_content(repo, lambda a: F if a["load-format"] == "instanttensor" else P)
    result = bisect_commits(commits, test)
    assert result.first_bad.sha == shas[4]
    assert result.last_good.sha == shas[3]
    assert not result.ambiguous
    assert len(test.calls) <= 3  # 6 candidates, the last assumed bad: ceil(log2 6)


def test_bisect_over_all_commits(history):
    repo, shas = history
    commits = commits_between(repo, shas["good"], shas["bad"], CONTRACT, all_commits=True)
    test = _by_content(repo, lambda a: F if a["load-format"] == "instanttensor" else P)
    result = bisect_commits(commits, test)
    assert result.first_bad.sha == shas[4]
    assert len(test.calls) <= 4  # 13 candidates


def test_skipped_commit_is_stepped_around(history):
    repo, shas = history
    commits = commits_between(repo, shas["good"], shas["bad"], CONTRACT)

    def outcome(args):
        if args["max-num-seqs"] == 10:  # step 2 does not boot
            return U
        return F if args["load-format"] == "instanttensor" else P

    result = bisect_commits(commits, _by_content(repo, outcome))
    assert result.first_bad.sha == shas[4]
    assert not result.ambiguous


def test_skips_next_to_the_culprit_leave_it_ambiguous(history):
    repo, shas = history
    commits = commits_between(repo, shas["good"], shas["bad"], CONTRACT)

    def outcome(args):
        if args["max-num-seqs"] in (11, 12):  # steps 3 and 4 do not boot
            return U
        return F if args["load-format"] == "instanttensor" else P

    result = bisect_commits(commits, _by_content(repo, outcome))
    assert result.ambiguous
    assert [c.sha for c in result.candidates] == [shas[3], shas[4], shas[5]]
    assert result.last_good.sha == shas[2]


def test_empty_and_single_ranges():
    assert bisect_commits([], lambda c: F).first_bad is None
    calls = []
    result = bisect_commits(["only"], lambda c: calls.append(c) or F)
    assert result.first_bad == "only" and calls == []


@pytest.mark.parametrize("n", range(1, 17))
def test_trial_count_is_logarithmic(n):
    for bad in range(n):
        calls: list[int] = []

        def test(c, calls=calls, bad=bad):
            calls.append(c)
            return F if c >= bad else P

        result = bisect_commits(list(range(n)), test)
        assert result.first_bad == bad
        assert len(calls) <= max(0, (n - 1).bit_length())


def test_bad_revisions_are_usage_errors(history, tmp_path):
    repo, shas = history
    with pytest.raises(UsageError, match="unknown revision"):
        commits_between(repo, "nope", shas["bad"], CONTRACT)
    with pytest.raises(UsageError, match="not an ancestor"):
        commits_between(repo, shas["bad"], shas["good"], CONTRACT)
    with pytest.raises(UsageError, match="not a git repository"):
        commits_between(tmp_path / "nothing", "a", "b", CONTRACT)
    assert resolve_rev(repo, "HEAD~1").sha == shas[6]

"""Binary search over the commits that changed a contract file, read straight from git objects.

The contract at each commit is read with gitpython from the commit's tree
(`repo.commit(sha).tree / path`), so the user's work tree, index and checkout are never touched.
An untestable commit (the file is missing, or the variant does not boot) is skipped like
`git bisect skip`; when skips leave more than one candidate, the result names them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import git
from gitdb.exc import BadName

from evalrun.base.errors import UsageError
from evalrun.bisection.dd import Outcome

T = TypeVar("T")


@dataclass(frozen=True)
class Commit:
    """One commit of the searched range."""

    sha: str
    summary: str
    date: str

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass
class GitBisectResult(Generic[T]):
    """Where the search ended."""

    first_bad: T | None
    """The first commit that fails (None when the range is empty)."""
    last_good: T | None
    """The newest commit seen passing (None: the good revision itself)."""
    candidates: list[T] = field(default_factory=list)
    """When ambiguous: every commit that may be the first bad one (skipped ones and first_bad)."""
    ambiguous: bool = False
    tested: list[tuple[T, Outcome]] = field(default_factory=list)


def _open(repo_dir: Path | str) -> git.Repo:
    try:
        return git.Repo(Path(repo_dir).expanduser(), search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise UsageError(
            f"{repo_dir} is not a git repository; pass --repo with a git work tree"
        ) from exc


def _resolve(repo: git.Repo, rev: str) -> git.Commit:
    try:
        return repo.commit(rev)
    except (BadName, ValueError) as exc:
        raise UsageError(
            f"unknown revision {rev!r} in {repo.working_dir}; use a sha, tag or branch"
        ) from exc


def resolve_rev(repo_dir: Path | str, rev: str) -> Commit:
    """A revision (sha, tag, branch, HEAD~3) as a Commit."""
    c = _resolve(_open(repo_dir), rev)
    return Commit(
        c.hexsha,
        c.summary if isinstance(c.summary, str) else c.summary.decode(),
        c.committed_datetime.isoformat(),
    )


def commits_between(
    repo_dir: Path | str, good: str, bad: str, path: str, *, all_commits: bool = False
) -> list[Commit]:
    """Commits after `good` up to `bad`, oldest first, that changed `path` (every commit with
    all_commits). Raises UsageError when good is not an ancestor of bad."""
    repo = _open(repo_dir)
    good_c, bad_c = _resolve(repo, good), _resolve(repo, bad)
    if good_c == bad_c:
        raise UsageError(f"--good and --bad are the same commit ({good_c.hexsha[:10]})")
    if not repo.is_ancestor(good_c, bad_c):
        raise UsageError(
            f"--good {good} is not an ancestor of --bad {bad}; pass an older good revision"
        )
    found = repo.iter_commits(
        f"{good_c.hexsha}..{bad_c.hexsha}",
        paths="" if all_commits else path,
        topo_order=True,
        reverse=True,
        ancestry_path=True,
    )
    return [
        Commit(
            c.hexsha,
            c.summary if isinstance(c.summary, str) else c.summary.decode(),
            c.committed_datetime.isoformat(),
        )
        for c in found
    ]


def read_at(repo_dir: Path | str, rev: str, path: str) -> bytes | None:
    """The bytes of `path` at `rev` (None when the file does not exist there)."""
    repo = _open(repo_dir)
    try:
        blob = _resolve(repo, rev).tree / path
    except KeyError:
        return None
    return bytes(blob.data_stream.read())


def bisect_commits(
    commits: Sequence[T],
    test: Callable[[T], Outcome],
    *,
    test_many: Callable[[list[T]], list[Outcome]] | None = None,
    width: int = 1,
) -> GitBisectResult[T]:
    """The first failing commit, assuming the one before commits[0] passes and commits[-1] fails.

    Tests the untested commit nearest the middle of the open range; an UNRESOLVED commit is
    skipped and its neighbours tried instead. With `test_many` and `width` k > 1 (a pool of k
    lanes), each round tests k commits spread evenly over the open range at once (k-section).
    """
    if not commits:
        return GitBisectResult(first_bad=None, last_good=None)
    lo, hi = -1, len(commits) - 1  # lo: newest known good (-1: the good revision); hi: oldest bad
    skipped: set[int] = set()
    tested: list[tuple[T, Outcome]] = []
    k = max(1, width) if test_many is not None else 1
    while hi - lo > 1:
        open_range = [i for i in range(lo + 1, hi) if i not in skipped]
        if not open_range:
            break
        picks: list[int] = []
        for j in range(1, k + 1):
            target = lo + (hi - lo) * j / (k + 1) if k > 1 else (lo + hi) // 2
            free = [i for i in open_range if i not in picks]
            if free:
                picks.append(min(free, key=lambda i: (abs(i - target), i)))
        picks.sort()
        if len(picks) > 1 and test_many is not None:
            outcomes = test_many([commits[i] for i in picks])
        else:
            outcomes = [test(commits[i]) for i in picks]
        tested += [(commits[i], o) for i, o in zip(picks, outcomes)]
        fails = [i for i, o in zip(picks, outcomes) if o is Outcome.FAIL]
        hi = min([hi, *fails])
        lo = max([lo, *(i for i, o in zip(picks, outcomes) if o is Outcome.PASS and i < hi)])
        skipped |= {i for i, o in zip(picks, outcomes) if o is Outcome.UNRESOLVED}
    result = GitBisectResult(
        first_bad=commits[hi], last_good=commits[lo] if lo >= 0 else None, tested=tested
    )
    if hi - lo > 1:
        result.ambiguous = True
        result.candidates = list(commits[lo + 1 : hi + 1])
    return result

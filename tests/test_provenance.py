"""Provenance's git facts, read with the git executable, say what gitpython's reading of the same
repo says, in the states a working repo can be in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import git
import pytest

from evalrun.provenance import git_facts


def _gitpython_facts(path: Path) -> dict:
    """What provenance recorded when it read the repo with gitpython."""
    repo = git.Repo(path, search_parent_directories=True)
    try:
        try:
            commit = repo.head.commit.hexsha
        except ValueError:
            commit = None
        return {
            "commit": commit,
            "branch": None if repo.head.is_detached else repo.active_branch.name,
            "dirty": repo.is_dirty(untracked_files=False),
            "remotes": {r.name: url for r in repo.remotes for url in r.urls},
            "root": str(repo.working_tree_dir),
        }
    finally:
        repo.close()


def _repo(tmp_path: Path) -> tuple[Path, object]:
    root = tmp_path / "repo"
    root.mkdir()

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
        ).stdout

    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "t")
    return root, run


def _commit(root: Path, run, text: str = "1") -> None:  # type: ignore[no-untyped-def]
    (root / "f").write_text(text)
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "g").write_text(text)
    run("add", "f", "sub/g")
    run("commit", "-qm", text)


STATES = {
    "unborn": lambda root, run: None,
    "staged on unborn": lambda root, run: ((root / "f").write_text("x"), run("add", "f")),
    "clean": lambda root, run: _commit(root, run),
    "edited": lambda root, run: (_commit(root, run), (root / "f").write_text("2")),
    "staged": lambda root, run: (
        _commit(root, run),
        (root / "f").write_text("2"),
        run("add", "f"),
    ),
    "untracked only": lambda root, run: (_commit(root, run), (root / "new").write_text("n")),
    "touched, same content": lambda root, run: (_commit(root, run), (root / "f").write_text("1")),
    "detached": lambda root, run: (
        _commit(root, run),
        _commit(root, run, "2"),
        run("checkout", "-q", "HEAD~1"),
    ),
    "other branch": lambda root, run: (_commit(root, run), run("checkout", "-qb", "feat/x")),
    "remotes": lambda root, run: (
        _commit(root, run),
        run("remote", "add", "origin", "https://example.com/r.git"),
        run("remote", "add", "my.fork", "git@example.com:me/r.git"),
        run("remote", "add", "two", "https://example.com/a.git"),
        run("remote", "set-url", "--add", "two", "https://mirror.example/b.git"),
        run("config", "url.https://rewritten.example/.insteadOf", "https://mirror.example/"),
    ),
}


@pytest.mark.parametrize("state", list(STATES))
def test_git_facts_match_gitpython(tmp_path, state):
    root, run = _repo(tmp_path)
    STATES[state](root, run)
    want = _gitpython_facts(root)
    assert git_facts(root) == want
    assert git_facts(root / "sub") == want if (root / "sub").is_dir() else True  # from below


def test_git_facts_of_a_linked_worktree(tmp_path):
    root, run = _repo(tmp_path)
    _commit(root, run)
    run("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    (tmp_path / "side" / "f").write_text("changed")
    facts = git_facts(tmp_path / "side")
    assert facts == _gitpython_facts(tmp_path / "side")
    assert facts["branch"] == "side" and facts["dirty"] is True
    assert facts["root"] == str(tmp_path / "side")


def test_git_facts_strip_credentials(tmp_path):
    root, run = _repo(tmp_path)
    _commit(root, run)
    run("remote", "add", "origin", "https://me:s3cret@example.com/r.git")
    assert git_facts(root)["remotes"] == {"origin": "https://example.com/r.git"}


def test_git_facts_when_git_refuses_the_repo(tmp_path):
    """A repo git will not read is an error line saying why, not a crash and not 'no repo'."""
    root, run = _repo(tmp_path)
    _commit(root, run)
    run("config", "core.repositoryformatversion", "99")  # a format from git's future
    assert git_facts(root) == {"error": "git: Expected git repo version <= 1, found 99"}


def test_git_facts_without_git(tmp_path, monkeypatch):
    root, run = _repo(tmp_path)
    _commit(root, run)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert git_facts(root) == {}


def test_provenance_imports_no_gitpython(tmp_path):
    code = (
        "import sys; from evalrun.provenance import collect; collect(sys.argv[1]); "
        "assert 'git' not in sys.modules, 'gitpython imported'"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)

"""What produced a run: evalrun and Python versions, and the git state of the working repo.

gitpython is imported here only. Credentials in remote URLs (https://user:token@host/...) are
stripped before anything is recorded.
"""

from __future__ import annotations

import platform
import re
import sys
from pathlib import Path

from evalrun import __version__
from evalrun.jsondata import JSONObject

_CRED_RE = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)


def strip_credentials(url: str) -> str:
    """https://user:token@github.com/o/r.git -> https://github.com/o/r.git (ssh user@ kept)."""
    return _CRED_RE.sub(r"\g<scheme>", url)


def git_facts(path: Path | str = ".") -> JSONObject:
    """Commit, branch, dirty flag and remotes of the git repo holding `path` ({} outside one)."""
    try:
        import git
    except ImportError:  # git executable missing: gitpython refuses to import
        return {}
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return {}
    try:
        try:
            commit = repo.head.commit.hexsha
        except ValueError:  # no commits yet
            commit = None
        branch = None if repo.head.is_detached else repo.active_branch.name
        return {
            "commit": commit,
            "branch": branch,
            "dirty": repo.is_dirty(untracked_files=False),
            "remotes": {r.name: strip_credentials(url) for r in repo.remotes for url in r.urls},
            "root": str(repo.working_tree_dir),
        }
    except git.GitCommandError as exc:
        return {"error": str(exc).split("\n", 1)[0]}
    finally:
        repo.close()


def collect(path: Path | str = ".") -> JSONObject:
    """run.json `provenance`: versions, git facts of the working repo, and of evalrun's own
    checkout when it runs from one elsewhere (an editable install)."""
    out: JSONObject = {
        "evalrun": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
        "git": git_facts(path),
    }
    here = Path(__file__).resolve().parent
    root = out["git"].get("root")
    nearest = next((p for p in (here, *here.parents) if (p / ".git").exists()), None)
    if root and nearest == Path(root).resolve():
        return out  # evalrun runs from the working repo itself: one look is enough
    own = git_facts(here)
    if own and own.get("root") != root:
        out["evalrun_git"] = own
    return out

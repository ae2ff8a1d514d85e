"""What produced a run: evalrun and Python versions, and the git state of the working repo
(`Provenance`); the types of the contract as rendered and the server booted that run.json and
slope.json keep beside it (`RenderedContract`, `ServerFacts`, filled by serving/launcher.py).

The git facts come from the `git` executable itself (a few plumbing-grade commands, run in the
background while a run connects): importing gitpython would cost more than the commands do.
Credentials in remote URLs (https://user:token@host/...) are stripped before anything is recorded.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, NotRequired

from pydantic import BeforeValidator
from typing_extensions import TypedDict

from evalrun.base.jsondata import AsWritten, JSONObject
from evalrun.base.version import __version__


class GitFacts(TypedDict, total=False):
    """The git state of a checkout ({} outside one; only `error` when git failed)."""

    commit: str | None  # None: no commits yet
    branch: str | None  # None: detached head
    dirty: bool
    remotes: dict[str, str]  # name -> URL, credentials stripped
    root: str
    error: str


class Provenance(TypedDict):
    """run.json's `provenance`."""

    evalrun: str
    python: str
    platform: str
    git: GitFacts
    evalrun_git: NotRequired[GitFacts]  # evalrun's own checkout, when not the working repo


def _none_when_empty(value: object) -> object:
    return None if value == {} else value


# The `provenance` field of run.json and slope.json: None for a record made without collecting
# any (a test's, a library caller's), which older versions wrote as {}.
StoredProvenance = Annotated[AsWritten[Provenance] | None, BeforeValidator(_none_when_empty)]


class RenderedContract(TypedDict, total=False):
    """The contract a run booted, as rendered: argv and env as started (secrets redacted)."""

    name: str
    engine: str
    hash: str  # contract_hash: the bisect cache key
    argv: list[str]
    env: dict[str, str]
    path_prepend: list[str]
    request: JSONObject  # the contract's request block, as the user wrote it
    health: str
    model: str | None
    args: JSONObject  # the knobs (flag -> value) as the user wrote them, secrets redacted
    # The engine build it booted from: {pip, extra, key, installer, install_seconds, versions}
    engine_build: JSONObject
    deterministic: bool  # the engine's batch-invariant switches were set (--deterministic)
    by_design: dict[str, str]  # diagnosis kind -> what the lane does not do (Contract.by_design)


class ServerFacts(TypedDict, total=False):
    """The server a run booted."""

    base_url: str
    model: str | None
    engine_version: str | None
    version_source: str | None
    boot_seconds: float | None
    log_path: str
    port: int | None
    image: dict[str, str]  # launch: container: the image's reference, id, digest and runtime


_CRED_RE = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)
GIT_TIMEOUT_S = 20.0  # one git command; a status of a huge tree on a slow disk may take a while
_NO_REPO = ("not a git repository", "cannot change to")  # outside a repo, or no such folder


def strip_credentials(url: str) -> str:
    """https://user:token@github.com/o/r.git -> https://github.com/o/r.git (ssh user@ kept)."""
    return _CRED_RE.sub(r"\g<scheme>", url)


class _GitFailed(Exception):
    """A git command exited nonzero: its first line of stderr."""


def _git(folder: Path | str, *args: str) -> str:
    """The stdout of `git -C folder ARGS` (messages in English, no optional locks taken)."""
    proc = subprocess.run(
        ["git", "--no-optional-locks", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=GIT_TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"},
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or f"git {args[0]} exited {proc.returncode}").splitlines()
        raise _GitFailed(lines[0].removeprefix("fatal: "))
    return proc.stdout


def git_facts(path: Path | str = ".") -> GitFacts:
    """Commit, branch, dirty flag and remotes of the git repo holding `path` ({} outside one, or
    without git); {"error": ...} when git cannot read the repo (e.g. a dubious owner).

    dirty: tracked files differ from HEAD, staged or not (untracked files do not count).
    remotes: each remote's URL as git resolves it (`url.*.insteadOf` applied; the last one when a
    remote has several)."""
    try:
        root = _git(path, "rev-parse", "--show-toplevel").strip()
        status = _git(root, "status", "--porcelain=v2", "--branch", "--untracked-files=no")
        remotes: dict[str, str] = {}
        for name in _git(root, "remote").split():
            for url in _git(root, "remote", "get-url", "--all", name).splitlines():
                remotes[name] = strip_credentials(url)
    except FileNotFoundError:  # no git executable, or the folder is gone
        return {}
    except _GitFailed as exc:
        if any(s in str(exc) for s in _NO_REPO):
            return {}
        return {"error": f"git: {exc}"}
    except subprocess.TimeoutExpired as exc:
        return {"error": f"git {exc.cmd[4]} took over {GIT_TIMEOUT_S:g} s"}
    heads = dict(
        line[2:].split(" ", 1) for line in status.splitlines() if line.startswith("# branch.")
    )
    oid, head = heads.get("branch.oid"), heads.get("branch.head")
    return {
        "commit": None if oid in (None, "(initial)") else oid,  # None: no commit yet
        "branch": None if head in (None, "(detached)") else head,
        "dirty": any(line and not line.startswith("#") for line in status.splitlines()),
        "remotes": remotes,
        "root": root,
    }


def collect(path: Path | str = ".") -> Provenance:
    """run.json `provenance`: versions, git facts of the working repo, and of evalrun's own
    checkout when it runs from one elsewhere (an editable install)."""
    out: Provenance = {
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

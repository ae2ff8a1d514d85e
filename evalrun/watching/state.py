"""A watch on disk: `<results>/watches/<name>/`, resumable, its disk use bounded.

- `watch.json`: the state (`WatchState`): the anchor, the probe, the running statistic, the
  recent ticks as points and the older ones compacted into blocks; rewritten whole (atomically)
  after every tick, so a restart resumes where the last tick left it;
- `events.jsonl`: every event as one JSON line (start, tick, down, up, alarm, recovered, stop);
  at compaction the tick lines older than the kept points are dropped (they live on in blocks);
- `ticks/`: the tick runs, an ordinary run store (`evalrun show --results .../ticks RUN`); the
  newest `keep_runs` are kept, and every run an alarm names;
- `.lock`: one watcher per watch.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import ConfigError, UsageError
from evalrun.base.jsondata import JSONObject, json_bytes, loads
from evalrun.compare.floor import Floor
from evalrun.watching.probe import Probe
from evalrun.watching.sequential import Cusum, Running

WATCH_SCHEMA_VERSION = 1
STATE_FILE = "watch.json"
EVENTS_FILE = "events.jsonl"
TICKS_DIR = "ticks"
BLOCK = 100  # ticks compacted into one block

TickStatus = Literal["ok", "down", "alarm"]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def watch_dir(results: Path | str, name: str) -> Path:
    """The folder of watch `name` (UsageError for a name that is not a plain folder name)."""
    if not NAME.fullmatch(name):
        raise UsageError(f"watch name {name!r}: use letters, digits, '.', '_' and '-'")
    return Path(results) / "watches" / name


class TickPoint(BaseModel):
    """One tick, as the timeline draws it."""

    model_config = ConfigDict(extra="forbid")

    tick: int
    at: str
    status: TickStatus
    run_id: str | None = None
    statistic: float = Field(
        description="The running test after the tick: the larger CUSUM's share of its threshold."
    )
    increment: float = 0.0
    drift_statistic: float = Field(default=0.0, description="The drift CUSUM (floor units).")
    hard_statistic: float = Field(default=0.0, description="The hard CUSUM (nats).")
    compared: int = 0
    off: int = 0
    near_tie: int = 0
    drift: float = 0.0
    verdict: str = ""
    grade: str = Field(default="", description="Against the floor: identical ... divergent.")
    units: float | None = Field(default=None, description="The tick's drift in floor units.")
    passed: int = 0
    answered: int = 0
    garbled: int = 0
    errors: int = 0
    latency_s: float | None = None
    seconds: float = Field(default=0.0, description="Wall time of the tick.")


class Block(BaseModel):
    """Ticks compacted: what the timeline still shows of them."""

    model_config = ConfigDict(extra="forbid")

    first: int
    last: int
    start: str
    end: str
    ticks: int
    down: int = 0
    alarms: int = 0
    max_statistic: float = 0.0
    off: int = 0
    compared: int = 0
    passed: int = 0
    answered: int = 0
    garbled: int = 0
    latency_s: float | None = None


class WatchFloor(BaseModel):
    """The anchor lane's noise floor the ticks are judged against, and where it came from."""

    model_config = ConfigDict(extra="forbid")

    given: str | None = Field(
        default=None, description="The --floor run it was measured from; None: by the watch."
    )
    floor: Floor
    item_drift: dict[str, tuple[float, int]] = Field(
        default_factory=dict, description="Per item (sum |Δ logprob|, tokens): the bootstrap's."
    )
    runs: list[str] = Field(
        default_factory=list, description="The tick runs it was measured from (kept on disk)."
    )

    @classmethod
    def of(
        cls, floor: Floor, *, given: str | None = None, runs: tuple[str, ...] = ()
    ) -> WatchFloor:
        return cls(floor=floor, given=given, item_drift=floor.item_drift, runs=list(runs))

    @property
    def source(self) -> Literal["--floor", "measured"]:
        return "--floor" if self.given else "measured"

    def full(self) -> Floor:
        """The floor with its per-item drift (a Floor does not serialize it)."""
        return self.floor.model_copy(update={"item_drift": self.item_drift})

    def line(self) -> str:
        f = self.floor
        return (
            f"floor {self.source} ({f.source}: {f.diverged} of {f.items} items diverged, "
            f"{f.hard} hard, drift {f.drift:.4f})"
        )


class WatchState(BaseModel):
    """watch.json."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = WATCH_SCHEMA_VERSION
    name: str
    anchor: str = Field(description="The anchor's run id.")
    target: str = Field(description="The endpoint watched (or the contract booted).")
    probe: Probe
    cusum: Cusum = Field(default_factory=Cusum)
    floor: WatchFloor | None = Field(
        default=None, description="The noise floor; None: not measured yet (fidelity defaults)."
    )
    started_at: str = Field(default_factory=now)
    updated_at: str = Field(default_factory=now)
    tick: int = Field(default=0, description="Ticks tried so far, down ones included.")
    statistic: float = Field(default=0.0, description="`running`'s level: 1 alarms.")
    running: Running = Field(default_factory=Running)
    alarmed: bool = Field(default=False, description="An alarm is raised and not yet recovered.")
    alarms: int = 0
    down: bool = False
    down_since: str | None = None
    alarm_runs: list[str] = Field(default_factory=list, description="Tick runs kept for alarms.")
    points: list[TickPoint] = Field(default_factory=list)
    blocks: list[Block] = Field(default_factory=list)


def load_state(folder: Path) -> WatchState | None:
    path = folder / STATE_FILE
    if not path.exists():
        return None
    try:
        data = loads(path.read_bytes())
        if data.get("schema_version") != WATCH_SCHEMA_VERSION:
            raise ConfigError(
                f"{path} has schema_version {data.get('schema_version')}; this evalrun reads "
                f"{WATCH_SCHEMA_VERSION}: start a new watch with another --name"
            )
        return WatchState.model_validate(data)
    except (ValueError, ValidationError) as exc:
        raise ConfigError(
            f"{path} is not a watch state ({exc.__class__.__name__}); "
            "move it aside or pick another --name"
        ) from exc


def save_state(folder: Path, state: WatchState) -> None:
    """Write watch.json whole: a new file renamed over the old, so a crash keeps one of them."""
    state.updated_at = now()
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_bytes(json_bytes(state.model_dump(mode="json")))
    os.replace(tmp, folder / STATE_FILE)


def append_event(folder: Path, event: JSONObject) -> None:
    with (folder / EVENTS_FILE).open("ab") as f:
        f.write(json_bytes(event) + b"\n")
        f.flush()


def read_events(folder: Path) -> list[JSONObject]:
    """The events (a torn last line is skipped)."""
    path = folder / EVENTS_FILE
    if not path.exists():
        return []
    out: list[JSONObject] = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(loads(line))
        except ValueError:
            continue
    return out


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the watch's lock (UsageError when another watcher holds it)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another evalrun watch is running on {folder}; stop it, or pass another --name"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _block(points: list[TickPoint]) -> Block:
    judged = [p for p in points if p.status != "down"]
    lat = [p.latency_s for p in judged if p.latency_s is not None]
    return Block(
        first=points[0].tick,
        last=points[-1].tick,
        start=points[0].at,
        end=points[-1].at,
        ticks=len(points),
        down=sum(p.status == "down" for p in points),
        alarms=sum(p.status == "alarm" for p in points),
        max_statistic=max(p.statistic for p in points),
        off=sum(p.off for p in judged),
        compared=sum(p.compared for p in judged),
        passed=sum(p.passed for p in judged),
        answered=sum(p.answered for p in judged),
        garbled=sum(p.garbled for p in judged),
        latency_s=round(sum(lat) / len(lat), 4) if lat else None,
    )


def compact(folder: Path, state: WatchState, *, keep_points: int, keep_runs: int) -> None:
    """Bound the watch's disk: points beyond `keep_points` go into blocks of BLOCK ticks (their
    lines leave events.jsonl), and tick runs beyond the newest `keep_runs` are removed (those an
    alarm names stay)."""
    if len(state.points) >= keep_points + BLOCK:
        cut = len(state.points) - keep_points
        cut -= cut % BLOCK
        old, state.points = state.points[:cut], state.points[cut:]
        state.blocks += [_block(old[i : i + BLOCK]) for i in range(0, len(old), BLOCK)]
        _trim_events(folder, state.points[0].tick)
    ticks = folder / TICKS_DIR
    if ticks.is_dir():
        runs = sorted(p for p in ticks.iterdir() if p.is_dir() and (p / "run.json").exists())
        keep = set(state.alarm_runs) | set(state.floor.runs if state.floor else ())
        for run in runs[: max(0, len(runs) - keep_runs)]:
            if run.name not in keep:
                shutil.rmtree(run, ignore_errors=True)


def _trim_events(folder: Path, first_kept: int) -> None:
    """events.jsonl without the tick lines before tick `first_kept` (other events stay)."""
    kept = [
        e
        for e in read_events(folder)
        if e.get("event") != "tick" or int(e.get("tick", 0)) >= first_kept
    ]
    tmp = folder / (EVENTS_FILE + ".tmp")
    tmp.write_bytes(b"".join(json_bytes(e) + b"\n" for e in kept))
    os.replace(tmp, folder / EVENTS_FILE)


def event(kind: str, state: WatchState, **fields: Any) -> JSONObject:
    """An event of the watch: its kind, time, watch, tick and fields."""
    return {"event": kind, "at": now(), "watch": state.name, "tick": state.tick, **fields}

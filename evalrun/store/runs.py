"""The run store: results/<run_id>/run.json + items.jsonl, and references to runs (ids,
`latest`, `latest:<label>`, tags).

Items are appended, flushed and fsynced one line at a time, so a crash (even kill -9) loses only
what was in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from evalrun.base.errors import ConfigError, RunNotFound
from evalrun.store.jsonl import bad_line, dump_json_line, numbered_rows, repair_tail
from evalrun.store.lock import RunLock
from evalrun.store.records import ItemRecord, RunRecord, upgrade_item, upgrade_run

DEFAULT_RESULTS = Path("results")
RunKind = Literal["score", "slope"]
_RUN_FILE: dict[str, str] = {"score": "run.json", "slope": "slope.json"}

RESERVE_NAME = ".reserve"  # given back when the disk fills, so run.json can still be finished
RESERVE_BYTES = 256 * 1024


def _make_reserve(reserve: Path) -> None:
    """Hold back room for the final run.json: RESERVE_BYTES, or half the free space when less
    is free (a full 256 KB reserve once failed on 40 KB free, so the run ended `running`)."""
    try:
        free = shutil.disk_usage(reserve.parent).free
        reserve.write_bytes(bytes(min(RESERVE_BYTES, free // 2)))
    except OSError:
        reserve.unlink(missing_ok=True)  # a partial reserve would only fill the disk


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class RunStore:
    """A results directory holding one folder per run."""

    def __init__(self, root: Path | str = DEFAULT_RESULTS) -> None:
        self.root = Path(root)

    def ensure_writable(self) -> None:
        """Create the root, or fail with a one-line error before any request is sent."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # one probe file per thread: bisect lanes score at once into the same store
            probe = self.root / f".write-test-{os.getpid()}-{threading.get_ident()}"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(
                f"results dir {self.root} is not writable ({exc.strerror}); "
                "pass --results DIR with a writable folder"
            ) from exc

    def run_dir(self, run_id: str) -> Path:
        return self.root / run_id

    def lock(self, run_id: str) -> RunLock:
        """The run's writer lock, taken (lock.py: one writer a run); ConfigError naming the
        process that holds it."""
        return RunLock(self.run_dir(run_id)).acquire()

    def write_run(self, record: RunRecord) -> None:
        """Write run.json atomically (temp file + rename).

        While a run is `running` its folder keeps a small reserve file; when the disk is full,
        the reserve is given back so the final status can still be written.
        """
        folder = self.run_dir(record.run_id)
        folder.mkdir(parents=True, exist_ok=True)
        reserve = folder / RESERVE_NAME
        if record.status == "running" and not reserve.exists():
            _make_reserve(reserve)
        try:
            self._replace_run_json(folder, record)
        except OSError:
            if not reserve.exists():
                raise
            reserve.unlink()
            self._replace_run_json(folder, record)
            if record.status == "running":  # the final write will need room again
                _make_reserve(reserve)
        if record.status != "running":
            reserve.unlink(missing_ok=True)

    @staticmethod
    def _replace_run_json(folder: Path, record: RunRecord) -> None:
        """Land run.json whole or leave the previous one: the new text is written and fsynced
        in a temp file, renamed over, and the rename made durable by an fsync of the folder."""
        tmp = folder / "run.json.tmp"
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                fh.write(record.model_dump_json(indent=2))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, folder / "run.json")
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(folder)

    def append_items(self, run_id: str, items: list[ItemRecord]) -> None:
        """Append finished items (one write, one fsync: a group commit), whole or not at all: a
        write the disk cuts short is truncated back, so items.jsonl holds exactly the records
        the run counts (a torn batch had left whole records no summary counted)."""
        path = self.run_dir(run_id) / "items.jsonl"
        repair_tail(path)
        data = memoryview("".join(dump_json_line(i) for i in items).encode("utf-8"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            try:
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
                raise
        finally:
            os.close(fd)

    def load_run(self, ref: str) -> RunRecord:
        """run.json of a run id, `latest`, `latest:<label>` or a tag."""
        run_id = self.resolve(ref)
        path = self.run_dir(run_id) / "run.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RunNotFound(f"cannot read {path}; is {run_id} a finished run?") from exc
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path} is not a run record (not a JSON object); restore or remove it"
            )
        data = upgrade_run(data, str(path))
        try:
            record = RunRecord.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(
                f"{path} is not a valid run record: {exc.errors()[0]['msg']}"
            ) from exc
        # A run is the folder it sits in: a copied folder's run.json still names the original,
        # and a resume of the copy must write into the copy.
        record.run_id = run_id
        return record

    def load_items(self, run_id: str) -> list[ItemRecord]:
        """Final item records of a run, in file order; a later record for an id replaces an earlier."""
        by_id: dict[str, ItemRecord] = {}
        path = self.run_dir(run_id) / "items.jsonl"
        for lineno, row in numbered_rows(path):
            try:
                rec = ItemRecord.model_validate(upgrade_item(row))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"]) or "(root)"
                raise bad_line(path, lineno, f"not an item record ({where}: {err['msg']})") from exc
            by_id[rec.id] = rec
        return list(by_id.values())

    def final_offsets(self, run_id: str) -> dict[str, int]:
        """Where the final record of each item starts in items.jsonl (byte offset), in file
        order: what `item_at` reads one at a time, so a large run is never all in memory."""
        path = self.run_dir(run_id) / "items.jsonl"
        out: dict[str, int] = {}
        if not path.exists():
            return out
        with path.open("rb") as fh:
            lineno = 0
            while True:
                at = fh.tell()
                line = fh.readline()
                if not line:
                    break
                lineno += 1
                if not line.endswith(b"\n") or not line.strip():
                    continue  # the torn tail, or an empty line
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise bad_line(path, lineno, "not JSON") from exc
                item_id = row.get("id") if isinstance(row, dict) else None
                if not isinstance(item_id, str):
                    raise bad_line(path, lineno, "not an item record (id: missing)")
                out[item_id] = at  # a later record replaces an earlier, in its place
                del row
        return out

    def item_at(self, run_id: str, offset: int) -> ItemRecord:
        """The item record whose line starts at `offset` of items.jsonl (`final_offsets`)."""
        path = self.run_dir(run_id) / "items.jsonl"
        with path.open("rb") as fh:
            fh.seek(offset)
            row = json.loads(fh.readline())
        try:
            return ItemRecord.model_validate(upgrade_item(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "(root)"
            raise bad_line(path, 0, f"not an item record ({where}: {err['msg']})") from exc

    def readable(self, run_id: str) -> bool:
        """Whether run.json of `run_id` is a JSON object (`latest` never points at a torn or
        garbled one)."""
        try:
            data = json.loads((self.run_dir(run_id) / "run.json").read_bytes())
        except (OSError, ValueError):
            return False
        return isinstance(data, dict)

    def run_ids(self, kind: RunKind = "score") -> list[str]:
        """The folder names of one kind of run, oldest first (ids sort by time): score runs hold
        run.json, slope runs (`slope-<id>`) slope.json."""
        if not self.root.is_dir():
            return []
        marker = _RUN_FILE[kind]
        return sorted(p.name for p in self.root.iterdir() if (p / marker).exists())

    def tags(self) -> dict[str, str]:
        """Anchor names -> run ids (results/tags.json)."""
        path = self.root / "tags.json"
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read {path} ({exc}); fix or remove it") from exc
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ConfigError(f"{path} is not a {{name: run id}} object; fix or remove it")
        return data

    def set_tag(self, name: str, ref: str) -> None:
        """Name an anchor run (a score run, else a slope run)."""
        try:
            folder = self.resolve(ref)
        except RunNotFound:
            try:
                folder = self.resolve(ref, kind="slope")
            except RunNotFound:
                raise RunNotFound(
                    f"no run {ref!r} in {self.root}; see `evalrun runs` for ids and tags"
                ) from None
        tags = self.tags()
        tags[name] = folder
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "tags.json").write_text(json.dumps(tags, indent=2), encoding="utf-8")

    def resolve(self, ref: str, kind: RunKind = "score") -> str:
        """The folder name of a run of `kind` from an id, `latest`, `latest:<label>` or a tag.

        The one resolver for every command that takes a run: score runs (show, compare,
        signoff, --resume) and slope runs (a slope id may be given with or without `slope-`).
        `latest` is the user's last run: bisect trial runs are skipped. `latest:<label>` skips
        them too, unless the label names trial runs only (then it is the last of those).
        """
        ids = self.run_ids(kind)
        what = "slope run" if kind == "slope" else "run"
        hint = "run `evalrun slope` first" if kind == "slope" else "see `evalrun runs`"
        if ref == "latest" or ref.startswith("latest:"):
            label = ref.partition(":")[2]
            matches = [i for i in ids if not label or i.split("_", 2)[-1] == label]
            while kind == "score" and matches and not self.readable(matches[-1]):
                matches.pop()
            if not matches:
                raise RunNotFound(f"no {what} matches {ref!r} in {self.root}; {hint}")
            for run_id in reversed(matches):
                if not self.is_trial(run_id):
                    return run_id
            if label:
                return matches[-1]
            raise RunNotFound(
                f"no run in {self.root} other than bisect trials; name one by id "
                "(`evalrun runs --all`)"
            )
        tagged = self.tags().get(ref)
        for candidate in (tagged, ref, f"slope-{ref}" if kind == "slope" else None):
            if candidate is not None and candidate in ids:
                return candidate
        raise RunNotFound(f"no {what} {ref!r} in {self.root}; {hint} (ids, `latest`, tags)")

    def is_trial(self, run_id: str) -> bool:
        """Whether run.json marks the run as a bisect trial (unreadable: not a trial)."""
        try:
            data = json.loads((self.run_dir(run_id) / "run.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return False
        return bool(isinstance(data, dict) and data.get("trial"))


def filter_runs(
    records: list[RunRecord],
    *,
    label: str | None = None,
    since: datetime | None = None,
    suite: str | None = None,
    trials: bool = False,
) -> list[RunRecord]:
    """The runs `evalrun runs` lists: bisect trials only with `trials`, and only those with the
    label, started at or after `since`, of the suite (`core` or `core-v4`)."""
    out = []
    for r in records:
        if r.trial and not trials:
            continue
        if label is not None and r.label != label:
            continue
        if suite is not None and suite not in (r.suite.name, f"{r.suite.name}-v{r.suite.version}"):
            continue
        if since is not None and _started(r) < since:
            continue
        out.append(r)
    return out


def _started(record: RunRecord) -> datetime:
    try:
        when = datetime.fromisoformat(record.started_at)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.astimezone()


def shown_status(record: RunRecord) -> str:
    """The status to show: `stale` for a run still marked running whose process on this host
    is gone (killed with -9, or the machine rebooted); it can be resumed."""
    if record.status != "running" or record.pid is None or record.host != socket.gethostname():
        return record.status
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return "stale"
    except PermissionError:
        pass  # alive, another user's
    return record.status

"""The run store: results/<run_id>/run.json + items.jsonl, written as items finish.

Readers check `schema_version`. Items are appended, flushed and fsynced one line at a time, so a
crash (even kill -9) loses only what was in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.errors import ConfigError, RunNotFound, UsageError

SCHEMA_VERSION = 1
DEFAULT_RESULTS = Path("results")
RunKind = Literal["score", "slope"]
_RUN_FILE: dict[str, str] = {"score": "run.json", "slope": "slope.json"}

RESERVE_NAME = ".reserve"  # given back when the disk fills, so run.json can still be finished
RESERVE_BYTES = 256 * 1024

ItemStatus = Literal["passed", "failed", "error"]
RunStatus = Literal["running", "complete", "incomplete", "interrupted"]


class Diagnosis(BaseModel):
    """An endpoint misconfiguration seen on some items, with what to do about it."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="Diagnosis kind, e.g. reasoning_only, tool_choice_400.")
    count: int = Field(description="Items showing it.")
    hint: str = Field(description="One line: what to change.")


class CategoryTally(BaseModel):
    """Per-category counts."""

    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    total: int = 0
    errors: int = 0
    garbled: int = 0


class Summary(BaseModel):
    """What a run amounts to."""

    model_config = ConfigDict(extra="forbid")

    passed: int = Field(description="Items graded as passed.")
    total: int = Field(description="Items in the run (passed + failed + error + not yet run).")
    score: int = Field(description="round(100 * passed / total).")
    errors: int = Field(description="Items whose request failed (never graded).")
    garbled: int = Field(default=0, description="Items the garble detector flagged.")
    garble_rate: float = Field(default=0.0, description="garbled / answered items.")
    diagnoses: list[Diagnosis] = Field(default_factory=list, description="Summed diagnoses.")
    categories: dict[str, CategoryTally] = Field(default_factory=dict, description="Per category.")
    flaky: int = Field(
        default=0,
        description="Items that both passed and failed across their repeats (score --repeats).",
    )


class SuiteRef(BaseModel):
    """Which suite a run used."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    sha256: str
    path: str | None = Field(default=None, description="Folder the suite was loaded from.")


class RunRecord(BaseModel):
    """run.json."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    label: str
    evalrun_version: str
    suite: SuiteRef
    endpoint: str
    model_requested: str | None = None
    model_served: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict, description="temperature, extras sent.")
    selection: dict[str, Any] = Field(
        default_factory=dict,
        description="limit / tags used to pick items, when not the whole suite.",
    )
    contract: dict[str, Any] | None = Field(
        default=None, description="The contract as rendered (argv, env redacted), when booted."
    )
    server: dict[str, Any] | None = Field(
        default=None, description="Engine version, boot seconds, log path, when booted."
    )
    provenance: dict[str, Any] = Field(default_factory=dict, description="git commit/branch/dirty.")
    started_at: str
    ended_at: str | None = None
    status: RunStatus = "running"
    trial: bool = Field(
        default=False,
        description="A bisect trial's run: stored and linked from bisect.json, but `runs` and "
        "`latest` skip it unless asked (--all, or latest:<its label>).",
    )
    summary: Summary | None = None
    pid: int | None = Field(default=None, description="Process writing the run, while running.")
    host: str | None = Field(default=None, description="Host of that process.")


class ItemRecord(BaseModel):
    """One line of items.jsonl."""

    model_config = ConfigDict(extra="forbid")

    id: str
    category: str
    status: ItemStatus
    request: dict[str, Any] = Field(description="Parameters sent (model, max_tokens, tools, ...).")
    response: dict[str, Any] | None = Field(
        default=None, description="evalrun.endpoint.response.Response."
    )
    grade: dict[str, Any] | None = Field(
        default=None, description="{passed, detail}; None if error."
    )
    error: dict[str, Any] | None = Field(default=None, description="{kind, message, http_status}.")
    diagnoses: list[str] = Field(default_factory=list, description="Diagnosis kinds on this item.")
    garble: dict[str, Any] | None = Field(default=None, description="{garbled, score, reasons}.")
    repeats: list[dict[str, Any]] | None = Field(
        default=None,
        description="score --repeats K: each run's {status, detail, garbled}, the first one "
        "included; the fields above are the first run's.",
    )
    attempts: int = 1
    latency_s: float | None = None
    finished_at: str | None = None


def now_iso() -> str:
    """Local time, ISO 8601 with offset, to the second."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def slug(text: str) -> str:
    """A filesystem-safe label: model 'org/Model-7B' -> 'Model-7B'."""
    text = text.rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "run"


def new_run_id(label: str, when: datetime | None = None) -> str:
    """YYYY-MM-DD_HHMMSS_<label>."""
    when = when or datetime.now()
    return f"{when:%Y-%m-%d_%H%M%S}_{slug(label)}"


def claim_folder(root: Path, name: str) -> Path:
    """Create and return a new folder `root/name`, or `name-2`, `name-3`, ... when taken.

    The one way a run (score, slope, bisect) gets its folder: mkdir without exist_ok is atomic,
    so two runs started in the same second never share one.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        for n in range(1, 1000):
            folder = root / (name if n == 1 else f"{name}-{n}")
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                continue
    except OSError as exc:
        raise ConfigError(
            f"cannot create a folder in {root} ({exc.strerror}); "
            "pass --results DIR with a writable folder"
        ) from exc
    raise ConfigError(f"{root} holds 999 folders named {name}; clean up old runs")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json_line(obj: BaseModel | dict[str, Any]) -> str:
    """One JSON line, UTF-8 kept as is (ensure_ascii=False).

    U+2028/U+2029 stay raw (readers split on \\n only). Lone surrogates, which a server may send
    as `\\ud800` escapes, cannot be encoded as UTF-8, so they are written back as the same
    escapes: json.loads restores the identical string.
    """
    data = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    return json_text(data) + "\n"


def json_text(data: Any) -> str:
    """json.dumps(ensure_ascii=False) that stays encodable: lone surrogates become escapes."""
    text = json.dumps(data, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def read_jsonl_records(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file of objects (see numbered_rows)."""
    return [row for _, row in numbered_rows(path)]


def numbered_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of a JSONL file of objects.

    A torn last line (no newline: a crash mid-write) is skipped; the next append moves it aside.
    Any other line that is not a JSON object is a ConfigError naming the file and line.
    """
    rows: list[tuple[int, dict[str, Any]]] = []
    if not path.exists():
        return rows
    with path.open(encoding="utf-8", newline="", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, 1):  # splits on \n only, never at U+2028
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                if not line.endswith("\n"):
                    continue  # the torn tail
                raise _bad_line(path, lineno, f"not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise _bad_line(path, lineno, "not a JSON object")
            rows.append((lineno, row))
    return rows


def _bad_line(path: Path, lineno: int, why: str) -> ConfigError:
    return ConfigError(
        f"{path}:{lineno}: {why}; move that line out of the file (its item is asked again "
        "on --resume)"
    )


TORN_SUFFIX = ".torn"


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def repair_tail(path: Path) -> bytes:
    """Cut a torn last line (no trailing newline) off `path` into `path` + .torn; return it.

    Appending onto a fragment would glue the next record to it and lose both.
    """
    try:
        with path.open("rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return b""
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return b""
            fh.seek(0)
            data = fh.read()
            keep = data.rfind(b"\n") + 1
            if _is_json(data[keep:]):  # a whole record that lost only its newline: keep it
                fh.write(b"\n")
                return b""
            with open(str(path) + TORN_SUFFIX, "ab") as aside:
                aside.write(data[keep:] + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            fh.truncate(keep)
            return data[keep:]
    except FileNotFoundError:
        return b""


class RunStore:
    """A results directory holding one folder per run."""

    def __init__(self, root: Path | str = DEFAULT_RESULTS) -> None:
        self.root = Path(root)

    def ensure_writable(self) -> None:
        """Create the root, or fail with a one-line error before any request is sent."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe = self.root / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(
                f"results dir {self.root} is not writable ({exc.strerror}); "
                "pass --results DIR with a writable folder"
            ) from exc

    def run_dir(self, run_id: str) -> Path:
        return self.root / run_id

    def write_run(self, record: RunRecord) -> None:
        """Write run.json atomically (temp file + rename).

        While a run is `running` its folder keeps a small reserve file; when the disk is full,
        the reserve is given back so the final status can still be written.
        """
        folder = self.run_dir(record.run_id)
        folder.mkdir(parents=True, exist_ok=True)
        reserve = folder / RESERVE_NAME
        if record.status == "running" and not reserve.exists():
            with contextlib.suppress(OSError):
                reserve.write_bytes(bytes(RESERVE_BYTES))
        try:
            self._replace_run_json(folder, record)
        except OSError:
            if not reserve.exists():
                raise
            reserve.unlink()
            self._replace_run_json(folder, record)
        if record.status != "running":
            reserve.unlink(missing_ok=True)

    @staticmethod
    def _replace_run_json(folder: Path, record: RunRecord) -> None:
        tmp = folder / "run.json.tmp"
        try:
            tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
            os.replace(tmp, folder / "run.json")
        finally:
            tmp.unlink(missing_ok=True)

    def append_items(self, run_id: str, items: list[ItemRecord]) -> None:
        """Append finished items (one write, one fsync: a group commit)."""
        path = self.run_dir(run_id) / "items.jsonl"
        repair_tail(path)
        with path.open("a", encoding="utf-8", newline="") as fh:
            fh.write("".join(dump_json_line(i) for i in items))
            fh.flush()
            os.fsync(fh.fileno())

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
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ConfigError(
                f"{path} has schema_version {data.get('schema_version')}, this evalrun reads "
                f"{SCHEMA_VERSION}; use a matching evalrun version"
            )
        try:
            return RunRecord.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(
                f"{path} is not a valid run record: {exc.errors()[0]['msg']}"
            ) from exc

    def load_items(self, run_id: str) -> list[ItemRecord]:
        """Final item records of a run, in file order; a later record for an id replaces an earlier."""
        by_id: dict[str, ItemRecord] = {}
        path = self.run_dir(run_id) / "items.jsonl"
        for lineno, row in numbered_rows(path):
            try:
                rec = ItemRecord.model_validate(row)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"]) or "(root)"
                raise _bad_line(
                    path, lineno, f"not an item record ({where}: {err['msg']})"
                ) from exc
            by_id[rec.id] = rec
        return list(by_id.values())

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

    def mark_trial(self, run_id: str) -> None:
        """Mark a stored run as a bisect trial (bisect calls this on each trial's runs); a run
        that was never stored is left alone."""
        path = self.run_dir(run_id) / "run.json"
        if not path.exists():
            return
        record = self.load_run(run_id)
        if not record.trial:
            record.trial = True
            self.write_run(record)

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
    label, started at or after `since`, of the suite (`core` or `core-v2`)."""
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


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`--since`: a date (2026-11-30), a date and time (2026-11-30T14:00, local unless it says),
    or an age (90m, 12h, 7d)."""
    now = now or datetime.now().astimezone()
    m = re.fullmatch(r"(\d+)\s*([mhd])", text.strip())
    if m:
        unit = {"m": "minutes", "h": "hours", "d": "days"}[m.group(2)]
        return now - timedelta(**{unit: int(m.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(
            f"--since {text!r} is not a date (2026-11-30), a time (2026-11-30T14:00) or an age "
            "(90m, 12h, 7d)"
        ) from exc
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

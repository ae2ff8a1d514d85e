"""What a slope run is: depth parsing, the slope.json models, the store, and the analysis.

A slope record lives in `results/slope-<run_id>/`: `slope.json` (this module's `SlopeRecord`) and
`streams.jsonl` (one line per measured stream). Pure and light (pydantic only), so the sign-off
policy can use `SlopeRule` without pulling in the HTTP side (evalrun.slope.sweep).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import ConfigError, RunNotFound, UsageError
from evalrun.base.jsondata import AsWritten, JSONObject
from evalrun.base.version import __version__
from evalrun.provenance import RenderedContract, ServerFacts, StoredProvenance
from evalrun.store import DEFAULT_RESULTS, RunStore, dump_json_line

SLOPE_SCHEMA_VERSION = 1
CLIFF_RATIO = 0.5  # one depth step keeping less than this share of decode t/s is a cliff
_DEPTH_RE = re.compile(r"^(?:d)?(\d+(?:\.\d+)?)([kKmM]?)$")


# -- depths ---------------------------------------------------------------------------------
def parse_depth(text: str) -> int:
    """`8k` / `128K` -> 8192 / 131072 (K = 1024, as llama-bench counts); `0`, `d0`."""
    match = _DEPTH_RE.match(text.strip())
    if not match:
        raise UsageError(f"depth {text!r} is not a token count; use forms like 0, 8192, 8k, 128K")
    scale = {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2).lower()]
    return int(round(float(match.group(1)) * scale))


def parse_depths(text: str) -> list[int]:
    """A comma list of depths, sorted, duplicates removed."""
    depths = sorted({parse_depth(p) for p in text.split(",") if p.strip()})
    if not depths:
        raise UsageError("--depths is empty; pass e.g. --depths 0,8k,32k")
    return depths


def parse_levels(text: str) -> list[int]:
    """`1,2` -> [1, 2]: concurrency levels, each at least 1."""
    try:
        levels = sorted({int(p) for p in text.split(",") if p.strip()})
    except ValueError as exc:
        raise UsageError(f"--concurrency {text!r} is not a comma list of integers") from exc
    if not levels or levels[0] < 1:
        raise UsageError("--concurrency needs levels of 1 or more, e.g. 1,2")
    return levels


def depth_label(depth: int) -> str:
    """0 -> d0, 8192 -> 8K, 131072 -> 128K, 1000 -> 1000."""
    if depth == 0:
        return "d0"
    if depth % (1024 * 1024) == 0:
        return f"{depth // (1024 * 1024)}M"
    if depth % 1024 == 0:
        return f"{depth // 1024}K"
    return str(depth)


# -- records --------------------------------------------------------------------------------
class SlopeSettings(BaseModel):
    """What the sweep was asked to do."""

    model_config = ConfigDict(extra="forbid")

    depths: list[int] = Field(description="Target depths in tokens, ascending.")
    pp: int = Field(description="New prompt tokens after the depth context.")
    tg: int = Field(description="Tokens asked for per stream.")
    concurrency: list[int] = Field(description="Streams sent together, per level.")
    runs: int = Field(description="Repetitions per (depth, concurrency); medians are reported.")
    warm_cache: bool = Field(default=False, description="Depth prefix shared, so caches may hit.")


class Calibration(BaseModel):
    """How filler characters map to the server's tokens."""

    model_config = ConfigDict(extra="forbid")

    overhead_tokens: int = Field(description="Prompt tokens with no filler (template, ids).")
    tokens_per_char: float = Field(description="Server tokens per filler character.")
    pp_chars: int = Field(description="Characters of new text sent as the pp part.")
    pp_tokens: int = Field(description="Server tokens of the pp part.")
    base_tokens: int = Field(description="Prompt tokens at depth 0 (overhead + pp).")
    max_context: int | None = Field(default=None, description="As listed by /v1/models.")


class SlopePoint(BaseModel):
    """One (depth, concurrency) cell: medians over runs."""

    model_config = ConfigDict(extra="forbid")

    depth_target: int = Field(description="Depth asked for.")
    depth: int | None = Field(description="Depth reached, from the server's prompt_tokens.")
    concurrency: int
    ttft_s: float | None = Field(default=None, description="Median time to first token (prefill).")
    decode_tps: float | None = Field(default=None, description="Median per-stream decode t/s.")
    aggregate_tps: float | None = Field(
        default=None,
        description="Median over runs of all streams' tokens / first-to-last-token window.",
    )
    tokens: int | None = Field(default=None, description="Median tokens generated per stream.")
    streams: int = Field(default=0, description="Streams measured.")
    short: int = Field(default=0, description="Streams that stopped before tg tokens.")
    errors: int = Field(default=0, description="Streams that failed.")
    error: str | None = Field(default=None, description="The first stream error, verbatim.")
    skipped: bool = False
    skip_reason: str | None = None


class SlopeRecord(BaseModel):
    """slope.json."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SLOPE_SCHEMA_VERSION
    kind: Literal["slope"] = "slope"
    run_id: str
    label: str
    evalrun_version: str = __version__
    endpoint: str
    model_requested: str | None = None
    model_served: str | None = None
    settings: SlopeSettings
    calibration: Calibration | None = None
    request_extra: JSONObject = Field(default_factory=dict, description="Extra body sent.")
    extras_dropped: list[str] = Field(
        default_factory=list, description="ignore_eos/min_tokens/... the engine 400'd."
    )
    contract: AsWritten[RenderedContract] | None = None
    server: AsWritten[ServerFacts] | None = None
    provenance: StoredProvenance = None
    started_at: str
    ended_at: str | None = None
    status: Literal["running", "complete", "incomplete", "interrupted"] = "running"
    error: str | None = None
    points: list[SlopePoint] = Field(default_factory=list)

    def point(self, depth_target: int, concurrency: int) -> SlopePoint | None:
        for p in self.points:
            if p.depth_target == depth_target and p.concurrency == concurrency:
                return p
        return None


# -- store ----------------------------------------------------------------------------------
def slope_dir(root: Path, run_id: str) -> Path:
    return Path(root) / f"slope-{run_id}"


def write_record(root: Path, record: SlopeRecord) -> Path:
    """Write slope.json atomically; returns the folder."""
    folder = slope_dir(root, record.run_id)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "slope.json.tmp"
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, folder / "slope.json")
    return folder


def append_stream(folder: Path, row: JSONObject) -> None:
    with (folder / "streams.jsonl").open("a", encoding="utf-8", newline="") as fh:
        fh.write(dump_json_line(row))
        fh.flush()
        os.fsync(fh.fileno())


def resolve_slope(ref: str, root: Path = DEFAULT_RESULTS) -> Path:
    """slope.json of a path, or of a slope run named as any run is (id with or without
    `slope-`, `latest`, `latest:<label>`, a tag): RunStore.resolve does the naming."""
    path = Path(ref)
    if path.is_file():
        return path
    if (path / "slope.json").is_file():
        return path / "slope.json"
    return Path(root) / RunStore(root).resolve(ref, kind="slope") / "slope.json"


def load_slope(ref: str, root: Path = DEFAULT_RESULTS) -> SlopeRecord:
    """Read and validate a slope record."""
    path = resolve_slope(ref, root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunNotFound(f"cannot read {path}; is it a finished slope run?") from exc
    if data.get("schema_version") != SLOPE_SCHEMA_VERSION or data.get("kind") != "slope":
        raise ConfigError(
            f"{path} is not a slope record of schema {SLOPE_SCHEMA_VERSION}; "
            "use a matching evalrun version"
        )
    try:
        return SlopeRecord.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid slope record: {exc.errors()[0]['msg']}") from exc


# -- analysis -------------------------------------------------------------------------------
def ratios_to_d0(record: SlopeRecord, concurrency: int) -> dict[int, float]:
    """decode t/s at each measured depth over that at the shallowest measured depth."""
    pts = [p for p in record.points if p.concurrency == concurrency and p.decode_tps]
    if not pts:
        return {}
    base = min(pts, key=lambda p: p.depth_target).decode_tps or 0.0
    return {p.depth_target: p.decode_tps / base for p in pts if base and p.decode_tps}


class Cliff(BaseModel):
    """One depth step losing more than half the decode t/s."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int
    from_depth: int
    to_depth: int
    from_tps: float
    to_tps: float

    @property
    def kept(self) -> float:
        return self.to_tps / self.from_tps


def find_cliffs(record: SlopeRecord, ratio: float = CLIFF_RATIO) -> list[Cliff]:
    """Consecutive measured depths where decode t/s falls below `ratio` of the step before."""
    cliffs = []
    for c in record.settings.concurrency:
        pts = sorted(
            (p for p in record.points if p.concurrency == c and p.decode_tps),
            key=lambda p: p.depth_target,
        )
        for a, b in zip(pts, pts[1:]):
            if a.decode_tps and b.decode_tps and b.decode_tps < ratio * a.decode_tps:
                cliffs.append(
                    Cliff(
                        concurrency=c,
                        from_depth=a.depth_target,
                        to_depth=b.depth_target,
                        from_tps=a.decode_tps,
                        to_tps=b.decode_tps,
                    )
                )
    return cliffs

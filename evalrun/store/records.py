"""The records a run leaves: run.json (`RunRecord`, its `Summary`) and each line of items.jsonl
(`ItemRecord`: the `Response`, its `Grade` and `GarbleVerdict`, or its `ItemError`).

run.json carries `schema_version`; `upgrade_run` and `upgrade_item` are the one place a record
written by an older evalrun is read into today's shape (schema 1: the garble verdict's reasons as
strings), and a record from a newer evalrun is refused with a one-line message.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import AsWritten, JSONObject
from evalrun.endpoint.logprobs import FidelityRecord
from evalrun.endpoint.options import SamplingRecord
from evalrun.endpoint.response import ItemError, Response
from evalrun.provenance import RenderedContract, ServerFacts, StoredProvenance
from evalrun.verdicts import GarbleVerdict, Grade, upgrade_v1

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

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
    garble_loops: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # (a run written before it reads back byte for byte)
        description="Of the garbled items, the model's own repetition loops (the rest is token "
        "soup, floods, mojibake: engine damage); None in runs written before it was counted.",
    )
    diagnoses: list[Diagnosis] = Field(default_factory=list, description="Summed diagnoses.")
    categories: dict[str, CategoryTally] = Field(default_factory=dict, description="Per category.")
    flaky: int = Field(
        default=0,
        description="Items that both passed and failed across their repeats (score --repeats).",
    )


class SelectionRecord(TypedDict, total=False):
    """run.json's `selection` ({} for the whole suite): the criteria given and the ids chosen.
    Runs recorded before the stratified draw hold `tags` and `limit` only."""

    items: list[str]
    categories: list[str]
    tags: list[str]
    limit: int
    seed: int  # with limit only
    ids: list[str]


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
    sampling: AsWritten[SamplingRecord] = Field(
        default_factory=lambda: SamplingRecord(), description="temperature, extras sent."
    )
    selection: AsWritten[SelectionRecord] = Field(
        default_factory=lambda: SelectionRecord(),
        description="limit / tags used to pick items, and the ids picked; {}: the whole suite.",
    )
    contract: AsWritten[RenderedContract] | None = Field(
        default=None, description="The contract as rendered (argv, env redacted), when booted."
    )
    server: AsWritten[ServerFacts] | None = Field(
        default=None, description="Engine version, boot seconds, log path, when booted."
    )
    provenance: StoredProvenance = Field(
        default=None, description="evalrun and Python versions, git commit/branch/dirty."
    )
    started_at: str
    ended_at: str | None = None
    status: RunStatus = "running"
    trial: bool = Field(
        default=False,
        description="A bisect trial's run: stored and linked from bisect.json, but `runs` and "
        "`latest` skip it unless asked (--all, or latest:<its label>).",
    )
    summary: Summary | None = None
    fidelity: AsWritten[FidelityRecord] | None = Field(
        default=None,
        description="Token capture: {top_logprobs, tokens} asked, `unavailable` with the reason "
        "when the run has no tokens to compare (endpoint/logprobs.py).",
    )
    pid: int | None = Field(default=None, description="Process writing the run, while running.")
    host: str | None = Field(default=None, description="Host of that process.")

    @property
    def by_design(self) -> dict[str, str]:
        """Diagnosis kind -> what the booted lane does not do by its design (the contract's
        `by_design`); {} for an endpoint or a lane that declares nothing."""
        return dict((self.contract or {}).get("by_design") or {})

    @property
    def repeats(self) -> int:
        """score --repeats K: how many times each item was asked (1: once)."""
        return self.sampling.get("repeats", 1)

    @property
    def tokens_unavailable(self) -> str | None:
        """Why the run has no tokens to compare; None when it has them, or when it was scored
        before token capture (no `fidelity` at all)."""
        return self.fidelity.get("unavailable") if self.fidelity is not None else None


class RepeatOutcome(BaseModel):
    """One ask of an item under score --repeats K."""

    model_config = ConfigDict(extra="forbid")

    status: ItemStatus
    detail: str = Field(default="", description="The grade's detail, or the error's kind.")
    garbled: bool = Field(default=False, description="The garble detector flagged this answer.")


class ItemRecord(BaseModel):
    """One line of items.jsonl."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    category: str
    status: ItemStatus
    request: JSONObject = Field(description="Parameters sent (model, max_tokens, tools, ...).")
    response: Response | None = Field(default=None, description="What the endpoint answered.")
    grade: Grade | None = Field(default=None, description="The grader's verdict; None if error.")
    error: ItemError | None = Field(default=None, description="Why there is no grade.")
    diagnoses: list[str] = Field(default_factory=list, description="Diagnosis kinds on this item.")
    garble: GarbleVerdict | None = Field(
        default=None, description="The garble detector's verdict on the response."
    )
    repeats: list[RepeatOutcome] | None = Field(
        default=None,
        description="score --repeats K: each ask's outcome, the first one included; the fields "
        "above are the first ask's.",
    )
    attempts: int = 1
    latency_s: float | None = None
    finished_at: str | None = None

    @property
    def garbled(self) -> bool:
        """The garble detector flagged the answer."""
        return self.garble is not None and self.garble.garbled

    @property
    def detail(self) -> str:
        """The grade's detail, or the error's kind when the item has no grade."""
        if self.grade is not None:
            return self.grade.detail
        return self.error.kind if self.error is not None else ""

    def outcome(self) -> RepeatOutcome:
        """This ask's outcome, as `repeats` lists it."""
        return RepeatOutcome(status=self.status, detail=self.detail, garbled=self.garbled)


def upgrade_run(data: JSONObject, where: str) -> JSONObject:
    """run.json's fields in this version's shape; ConfigError naming `where` when the record is
    from a version this evalrun cannot read."""
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise ConfigError(
            f"{where} has schema_version {version}, this evalrun reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}; use a matching evalrun version"
        )
    return {**data, "schema_version": SCHEMA_VERSION}  # schema 1 differs in items.jsonl only


def upgrade_item(row: JSONObject) -> JSONObject:
    """One items.jsonl line in this version's shape. A run resumed across versions holds lines of
    both, so each line is read by its own shape: schema 1's garble verdict has `reasons`."""
    garble = row.get("garble")
    if isinstance(garble, dict) and "reasons" in garble:
        return {**row, "garble": upgrade_v1(garble)}
    return row

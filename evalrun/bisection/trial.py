"""One bisect trial: boot a contract variant, run the probe, classify what came back.

The probe is the suite's items tagged `probe`, each sent once plus a concurrency burst of copies
(engine bugs that show only under batching), then one prompt sent twice in a row (the
prefix-cache-hit path), then the probe items once more one at a time (`~serial`): on the good
side, serial against the burst is the lane's own noise floor (compare/floor.py), and every later
trial's tokens are graded against it (`within noise`, `numerically different`: outcome
`different`, `divergent`). `--full` scores the whole suite instead. Trials are cached by the rendered
contract's hash (contract_hash) in `<results>/bisect-cache/`, keyed also by the probe's content, so
running the same bisect again boots nothing. The raw measurements are cached, not the outcome, so a
different --fail-on or threshold reuses them. The launcher (boot_server) and the scorer
(score_suite) are passed in.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import BootError, EndpointError, EvalrunError, UsageError
from evalrun.base.jsondata import AsWritten
from evalrun.bisection.dd import Outcome, Vote, with_tries
from evalrun.bisection.request import DEFAULT_FAIL_ON, BisectRequest, Kind, parse_fail_on
from evalrun.bisection.variants import KnobValue
from evalrun.compare.fidelity import (
    Divergence,
    Fidelity,
    FidelityCounts,
    against_floor,
    measure_floor,
    not_comparable,
    serial_pair,
    serial_suite,
)
from evalrun.compare.fidelity import judge as judge_fidelity
from evalrun.compare.floor import Floor, floor_of
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.endpoint.options import RequestOptions
from evalrun.scoring.run import ScoreHooks, ScoreRequest
from evalrun.serving.contract import Contract, contract_hash, with_overrides
from evalrun.serving.target import Launcher, Target, TargetSpec, open_target
from evalrun.store import ItemRecord, RunRecord, RunStore
from evalrun.store.tokens import load_traces
from evalrun.suite.load import Suite, copy_item, derived_suite
from evalrun.verdicts import LaneGarble

BURST = 8
# Boot failures worth retrying next time rather than caching: they say nothing about the variant.
TRANSIENT_BOOT = frozenset({"port_in_use", "teardown"})

Log = Callable[[str], None]


class Scorer(Protocol):
    """Scores one request against a target (scoring.run.score_suite is one)."""

    def __call__(
        self, req: ScoreRequest, store: RunStore, hooks: ScoreHooks = ...
    ) -> tuple[RunRecord, list[ItemRecord]]: ...


class Measurement(BaseModel):
    """What one probe pass measured."""

    model_config = ConfigDict(extra="forbid")

    items: int = Field(description="Requests sent.")
    answered: int = Field(description="Requests that got an answer (not errors).")
    passed: int = Field(description="Items graded as passed.")
    garbled: int = Field(description="Answers the garble detector flagged.")
    loops: int = Field(
        default=0, description="Of those, repetition loops (healthy small models loop too)."
    )
    errors: int = Field(description="Requests that failed.")
    diagnosed: int = Field(description="Items with an endpoint-misconfiguration diagnosis.")
    diagnoses: list[str] = Field(default_factory=list, description="Diagnosis kinds seen.")
    run_ids: list[str] = Field(default_factory=list, description="Runs stored in results/.")
    stopped: str | None = Field(default=None, description="Why the probe stopped early.")

    @property
    def lane_garble(self) -> LaneGarble:
        return LaneGarble(garbled=self.garbled, loops=self.loops, answered=self.answered)

    @property
    def garble_rate(self) -> float:
        """The lane's garble rate (loops count only when most answers loop: LaneGarble.rate)."""
        return self.lane_garble.rate

    @property
    def score(self) -> int:
        return round(100 * self.passed / self.items) if self.items else 0


class CachedTrial(BaseModel):
    """A trial's raw result, as cached under bisect-cache/ (outcome recomputed on read)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    contract_hash: str
    probe_key: str
    boot_seconds: float | None = None
    engine_version: str | None = None
    boot_error: dict[str, str] | None = Field(default=None, description="{kind, message}.")
    crashed: str | None = Field(default=None, description="The server died during the probe.")
    measurements: list[Measurement] = Field(default_factory=list)
    log_path: str | None = None


class TrialRules(BaseModel):
    """How a trial's measurements map to an outcome and to pass / fail / skip."""

    model_config = ConfigDict(extra="forbid")

    fail_on: frozenset[str] = DEFAULT_FAIL_ON
    garble_rate: float = Field(default=0.25, description="Garbled fraction at or above = garble.")
    min_score: int | None = Field(default=None, description="Probe score below = regressed.")
    tries: int = Field(default=1, ge=1)
    vote: Vote = "any"

    @classmethod
    def of(cls, req: BisectRequest) -> TrialRules:
        """The rules the request sets (`regressed` needs --min-score: without it, it is off)."""
        fail_on = parse_fail_on(req.fail_on)
        if req.min_score is None:
            fail_on -= {"regressed"}
        return cls(
            fail_on=fail_on,
            garble_rate=req.garble_rate,
            min_score=req.min_score,
            tries=req.tries,
            vote=req.vote,
        )

    def kind(self, m: Measurement) -> Kind:
        """Outcome of one probe pass."""
        if m.answered == 0:
            return "broken"
        if m.garble_rate >= self.garble_rate:
            return "garble"
        if (m.errors + m.diagnosed) / max(m.items, 1) >= self.garble_rate:
            return "broken"
        if self.min_score is not None and m.score < self.min_score:
            return "regressed"
        return "ok"

    def verdict(self, kind: str, m: Measurement | None = None) -> Outcome:
        """FAIL when the outcome is one --fail-on names; boot_fail (and a probe nothing answered)
        is untestable unless named; anything else passes."""
        if kind in self.fail_on:
            return Outcome.FAIL
        if kind == "boot_fail" or (kind == "broken" and m is not None and m.answered == 0):
            return Outcome.UNRESOLVED
        return Outcome.PASS

    def judge(self, cached: CachedTrial) -> tuple[Kind, Outcome, Measurement | None]:
        """(outcome kind, verdict, the measurement shown) of a trial, applying tries and vote."""
        if cached.boot_error is not None:
            return "boot_fail", self.verdict("boot_fail"), None
        shown: list[tuple[Kind, Measurement]] = []
        queue = list(cached.measurements[: self.tries])

        def one(_: tuple[int, ...]) -> Outcome:
            m = queue.pop(0)
            kind = self.kind(m)
            shown.append((kind, m))
            return self.verdict(kind, m)

        if not queue:  # cannot happen for a trial that booted; treat as nothing answered
            return "broken", Outcome.UNRESOLVED, None
        verdict = with_tries(one, min(self.tries, len(queue)), self.vote)(())
        pick = next(((k, m) for k, m in shown if self.verdict(k, m) is verdict), shown[-1])
        return pick[0], verdict, pick[1]


class TrialFidelity(FidelityCounts):
    """A trial's tokens against the good side's: compare's Fidelity without its thresholds
    (the same for every trial), with its one-line summary."""

    divergences: list[Divergence] = Field(default_factory=list)
    line: str = Field(default="", description="Fidelity.line(): the verdict in one line.")

    @classmethod
    def of_fidelity(cls, fid: Fidelity) -> TrialFidelity:
        return cls(**fid.model_dump(exclude={"thresholds"}), line=fid.line())


class TrialResult(BaseModel):
    """One row of the trial table (and of bisect.json)."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Trial number, in the order run.")
    variant: str = Field(description="The variant as a diff against the base contract.")
    applied: list[AsWritten[KnobValue]] = Field(
        default_factory=list, description="[{knob, value}]."
    )
    commit: str | None = Field(default=None, description="Git mode: the commit's sha.")
    contract_hash: str
    outcome: Kind
    verdict: Literal["pass", "fail", "unresolved"]
    garble_rate: float | None = None
    score: int | None = None
    diagnoses: list[str] = Field(default_factory=list)
    errors: int | None = None
    boot_seconds: float | None = None
    boot_error: str | None = None
    engine_version: str | None = None
    run_ids: list[str] = Field(default_factory=list)
    cached: bool = Field(description="True when read from the cache: no boot.")
    log_path: str | None = None
    fidelity: TrialFidelity | None = Field(
        default=None, description="The probe's tokens against the good side's."
    )
    effect: str | None = Field(
        default=None,
        description="'no observable effect' when every token equals the good side's (the "
        "engine ignored or resolved the knob).",
    )
    lane: int | None = Field(
        default=None, description="The pool lane (1-based) that booted it; None: one lane, cached."
    )


def probe_suites(suite: Suite, *, full: bool, burst: int = BURST) -> list[tuple[Suite, int]]:
    """(suite, concurrency) passes of a trial: the probe items + a burst of copies at once, then
    one prompt twice in a row; or the whole suite with --full."""
    from evalrun.grading.registry import GRADERS

    unknown = sorted({i.grader.kind for i in suite.items} - set(GRADERS))
    if unknown:  # checked before the first boot, not after it
        raise UsageError(f"suite {suite.label} uses unknown grader kind(s) {', '.join(unknown)}")
    if full:
        return [(suite, HttpOptions.concurrency)]  # a full score asks as `score` does
    probes = [i for i in suite.items if "probe" in i.tags]
    if not probes:
        raise UsageError(
            f"suite {suite.label} has no items tagged `probe`; tag some, or pass --full"
        )
    copies = [copy_item(probes[k % len(probes)], f"burst{k + 1}") for k in range(burst)]
    repeat = [copy_item(probes[0], "repeat1"), copy_item(probes[0], "repeat2")]
    return [
        (derived_suite(suite, "probe", probes + copies), max(1, burst + len(probes))),
        (derived_suite(suite, "probe-repeat", repeat), 1),
        (serial_suite(suite, probes, "probe-serial"), 1),
    ]


def probe_key(passes: list[tuple[Suite, int]], options: RequestOptions | None = None) -> str:
    """Identity of the probe (which items, how sent, with which request options): part of the
    cache key."""
    sent = (options or RequestOptions()).record()
    blob = json.dumps([[s.name, s.sha256, c] for s, c in passes] + [sent], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def measure(
    records: list[ItemRecord], run_ids: list[str], items: int, stopped: str | None = None
) -> Measurement:
    """Counts over the item records of one probe pass (all its runs)."""
    kinds = sorted({k for r in records for k in r.diagnoses})
    garble = LaneGarble.of(r.garble for r in records if r.response is not None)
    return Measurement(
        items=items,
        answered=garble.answered,
        passed=sum(r.status == "passed" for r in records),
        garbled=garble.garbled,
        loops=garble.loops,
        errors=sum(r.status == "error" for r in records) + (items - len(records)),
        diagnosed=sum(bool(r.diagnoses) for r in records),
        diagnoses=kinds,
        run_ids=run_ids,
        stopped=stopped,
    )


@dataclass(frozen=True)
class TrialReach:
    """How trials reach a server and tell what they do: the launcher that boots a variant, the
    scorer that probes it, the target options (request options, API key) sent to every variant,
    the log and a boot timer given each trial's name."""

    launcher: Launcher
    scorer: Scorer
    target: TargetSpec = TargetSpec()
    log: Log | None = None
    boot_progress: Callable[[str], Any] | None = None


def floor_contract(good: Contract, sets: list[str]) -> Contract:
    """The good side as its floor boot runs it: with the --floor-knob harmless knobs set."""
    if not sets:
        return good
    try:
        return with_overrides(good, sets=sets)
    except EvalrunError as exc:
        raise UsageError(f"--floor-knob: {exc}") from exc


class TrialRunner:
    """Runs trials with an injected launcher and scorer, caching by contract hash."""

    def __init__(
        self,
        req: BisectRequest,
        rules: TrialRules,
        suite: Suite,
        store: RunStore,
        workdir: Path,
        reach: TrialReach,
    ) -> None:
        self.target = reach.target
        self.floor_boots = req.floor_boots  # boots of the good side its noise floor is measured on
        self.floor_sets = list(req.floor_sets)  # --floor-knob: the floor boot's harmless knobs
        # The good side's probe tokens, once its trial ran: every later trial is judged against
        # them (compare/fidelity.py); None without token capture (--no-logprobs).
        self.reference: dict[str, TokenTrace] | None = None
        self.reference_runs: list[str] = []  # the good side's probe runs
        # The good side's own noise (its probe items serial against the burst); None: the
        # fidelity defaults judge (no tokens, --full, or a probe without the serial pass).
        self.floor: Floor | None = None
        self.fidelity = self.target.options.top_logprobs is not None
        self.store = store
        self.launcher = reach.launcher
        self.scorer = reach.scorer
        self.judge = rules
        self.workdir = Path(workdir)
        self.passes = probe_suites(suite, full=req.full, burst=req.burst)
        self.key = probe_key(self.passes, self.target.options)
        self.use_cache = req.use_cache
        self.log = reach.log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.boot_progress = reach.boot_progress
        self.results: list[TrialResult] = []
        self.boots = 0
        # Trials of a pool of lanes run in threads (bisection/pool.py): numbers and rows are
        # taken under the lock; `stopping` set means the trials in flight are being torn down.
        self._lock = threading.Lock()
        self._count = 0
        self.stopping = threading.Event()

    def _number(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def _append(self, row: TrialResult) -> None:
        with self._lock:
            self.results.append(row)
            self.results.sort(key=lambda r: r.n)

    @property
    def cache_dir(self) -> Path:
        return self.store.root / "bisect-cache" / self.key

    def _cache_path(self, chash: str) -> Path:
        return self.cache_dir / f"{chash}.json"

    def _cached(self, chash: str) -> CachedTrial | None:
        path = self._cache_path(chash)
        if not self.use_cache or not path.exists():
            return None
        try:
            cached = CachedTrial.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            return None
        enough = cached.boot_error is not None or len(cached.measurements) >= self.judge.tries
        if not enough and self.judge.vote == "any":  # a cached failure settles "any" already
            enough = any(
                self.judge.verdict(self.judge.kind(m), m) is Outcome.FAIL
                for m in cached.measurements
            )
        return cached if enough else None

    def _save(self, cached: CachedTrial) -> None:
        if cached.boot_error and cached.boot_error.get("kind") in TRANSIENT_BOOT:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = self._cache_path(cached.contract_hash).with_suffix(".tmp")
        tmp.write_text(cached.model_dump_json(indent=2), encoding="utf-8")
        os.replace(tmp, self._cache_path(cached.contract_hash))

    def run(
        self,
        contract: Contract,
        *,
        variant: str,
        applied: list[KnobValue] | None = None,
        commit: str | None = None,
        reference: bool = False,
        lane: int | None = None,
    ) -> TrialResult:
        """Boot (unless cached), probe, judge; append and return the table row. The
        `reference` trial's tokens become what every later trial is judged against. `lane`
        (0-based) is the pool lane that boots it: its host when the launch block names a pool."""
        chash = contract_hash(contract)  # the lane is not part of it: the cache is shared
        n = self._number()
        cached = self._cached(chash)
        from_cache = cached is not None
        if cached is None:
            on = "" if lane is None else f" on lane {lane + 1}"
            self.log(f"trial {n}: booting {variant} [{chash[:10]}]{on}")
            if lane is not None:
                contract = contract.model_copy(update={"launch": contract.launch.for_lane(lane)})
            cached = self._boot_and_probe(contract, chash, n)
            if self.stopping.is_set():  # torn down under it: says nothing about the variant
                raise KeyboardInterrupt("stopped while trials were running")
            with self._lock:
                self.boots += _started(cached)
            self._save(cached)
        kind, verdict, m = self.judge.judge(cached)
        fid = None
        if m is not None and self.reference is not None and not reference:
            fid = self._fidelity(m.run_ids)
            graded: dict[str, Kind] = {
                "divergent": "divergent",
                "numerically different": "different",
            }
            if fid.verdict in graded and kind == "ok":
                kind = graded[fid.verdict]
                verdict = self.judge.verdict(kind, m)
        if reference and m is not None and self.fidelity and kind == "ok":
            self._take_reference(m, contract, chash, variant, n)
        row = _row(
            cached,
            m,
            fid,
            n=n,
            variant=variant,
            applied=applied or [],
            commit=commit,
            outcome=kind,
            verdict=verdict.value,
            cached=from_cache,
            lane=None if from_cache or lane is None else lane + 1,
        )
        self._append(row)
        self.log(_row_line(row, fid))
        return row

    def _take_reference(
        self, m: Measurement, contract: Contract, chash: str, variant: str, n: int
    ) -> None:
        """The good side's probe: its tokens are what every later trial is judged against, and
        its serial pass against its burst (and a second boot's, --floor-boots 2) its floor."""
        self.reference = self._traces(m.run_ids)
        self.reference_runs = list(m.run_ids)
        self.floor = measure_floor(self.reference)
        if self.floor is not None and (self.floor_boots > 1 or self.floor_sets):
            self._floor_boot(contract, chash, variant)
        if self.floor is None:
            return
        self.log(f"trial {n}: good side's {self.floor.line()}")
        if not self.floor_sets and self.floor.diverged == 0:
            self.log(
                "the good side answered every probe item alike serial and in the burst: any "
                "change of numerics reads outside its floor, a harmless kernel's too; --floor-knob "
                "KNOB=VALUE (a harmless knob that batches, e.g. parallel=16) puts one in it"
            )

    def _floor_boot(self, contract: Contract, chash: str, variant: str) -> None:
        """--floor-boots 2: boot the good side once more (cached apart from its first boot) and
        pool its probe into the floor, so the floor holds what a boot changes too. With
        --floor-knob, that boot runs with the harmless knobs set: the floor then holds the
        change of numerics they make (batching on a lane that answers alike at any load)."""
        key = f"{chash}-floor2"
        again = f"{variant} again"
        if self.floor_sets:
            contract = floor_contract(contract, self.floor_sets)
            key = f"{key}-{contract_hash(contract)[:16]}"
            again = f"{variant} with {', '.join(self.floor_sets)}"
        cached = self._cached(key)
        if cached is None:
            n = self._number()
            self.log(f"trial {n}: booting {again} for the floor [{chash[:10]}]")
            cached = self._boot_and_probe(contract, chash, n)
            cached = cached.model_copy(update={"contract_hash": key})
            with self._lock:
                self.boots += _started(cached)
            self._save(cached)
        kind, _, m = self.judge.judge(cached)
        if m is None or kind != "ok":
            self.log(f"the good side's second boot was {kind}: its floor is from one boot")
            return
        assert self.reference is not None
        knobs = ", ".join(self.floor_sets) or None
        self.floor = measure_floor(self.reference, self._traces(m.run_ids), knobs=knobs)

    def _fidelity(self, run_ids: list[str]) -> Fidelity:
        """A trial's probe tokens judged against the good side's; when either side has none,
        not comparable with why (the trial is then judged by its garble and score only)."""
        assert self.reference is not None
        traces = self._traces(run_ids)
        for side, have, ids in (
            ("the good side's", self.reference, self.reference_runs),
            ("this trial's", traces, run_ids),
        ):
            if not have:
                why = self._no_tokens(ids)
                return not_comparable(
                    f"{side} probe has no tokens ({why}): judged by garble and score only"
                )
        if self.floor is None:
            return judge_fidelity(self.reference, traces, list(self.reference))
        # The same items the floor compared (the burst's originals), graded against the wider
        # of the good side's floor and this trial's own (its serial copies against its burst):
        # a knob whose own repeat wobbles as much as it differs from the good side is noise.
        ids = [i for i in self.reference if i in self.floor.item_drift]
        own = serial_pair(traces)
        mine = floor_of([own], "serial vs burst on this trial") if own is not None else None
        return against_floor(judge_fidelity(self.reference, traces, ids), self.floor, mine)

    def _no_tokens(self, run_ids: list[str]) -> str:
        """What the runs' run.json say about their missing tokens."""
        for run_id in run_ids:
            try:
                why = self.store.load_run(run_id).tokens_unavailable
            except EvalrunError:
                continue
            if why:
                return why
        return "none captured"

    def _traces(self, run_ids: list[str]) -> dict[str, TokenTrace]:
        """The tokens of a trial's probe runs, by item id (burst copies keep their own ids)."""
        out: dict[str, TokenTrace] = {}
        for run_id in run_ids:
            out.update(load_traces(self.store.run_dir(run_id)))
        return out

    def untestable(self, variant: str, reason: str, *, commit: str | None = None) -> TrialResult:
        """A row for a variant that cannot even be booted (no valid contract): never a culprit."""
        kind: Kind = "boot_fail"
        row = TrialResult(
            n=self._number(),
            variant=variant,
            commit=commit,
            contract_hash="",
            outcome=kind,
            verdict=self.judge.verdict(kind).value,  # type: ignore[arg-type]
            boot_error=reason,
            cached=False,
        )
        self._append(row)
        self.log(f"trial {row.n}: {variant} -> untestable ({reason})")
        return row

    def _boot_and_probe(self, contract: Contract, chash: str, n: int) -> CachedTrial:
        log_path = self.workdir / "logs" / f"trial{n:02d}-{chash[:10]}.log"
        cached = CachedTrial(contract_hash=chash, probe_key=self.key, log_path=str(log_path))
        booted = False
        progress = self.boot_progress
        watch = (lambda _name: progress(f"trial {n}")) if progress is not None else None
        try:
            with open_target(
                self.target, contract, log_path, watch=watch, launcher=self.launcher
            ) as target:
                booted = True
                server = target.server or {}
                cached.boot_seconds = server.get("boot_seconds")
                self.log(
                    f"trial {n}: ready in {cached.boot_seconds}s, probing "
                    f"({sum(len(s.items) for s, _ in self.passes)} requests)"
                )
                cached.engine_version = server.get("engine_version")
                for k in range(self.judge.tries):
                    m = self._probe(target, chash, k)
                    cached.measurements.append(m)
                    v = self.judge.verdict(self.judge.kind(m), m)
                    if self.judge.vote == "any" and v is Outcome.FAIL:
                        break
        except BootError as exc:
            if not booted:
                cached.boot_error = {"kind": exc.kind, "message": exc.message}
            else:  # died under the probe: a real failure of this variant, not untestable
                cached.crashed = f"{exc.kind}: {exc.message}"
                if not cached.measurements:
                    cached.measurements.append(
                        Measurement(
                            items=1,
                            answered=0,
                            passed=0,
                            garbled=0,
                            errors=1,
                            diagnosed=0,
                            stopped=cached.crashed,
                        )
                    )
        return cached

    def _probe(self, target: Target, chash: str, k: int) -> Measurement:
        records: list[ItemRecord] = []
        run_ids: list[str] = []
        items = 0
        stopped = None
        total = sum(len(suite.items) for suite, _ in self.passes)
        seen = garbled = 0

        def settled() -> bool:
            """So many answers are garbled that the rest of the probe, however clean, could not
            bring the rate back under the threshold: the trial's outcome cannot change."""
            return garbled > 0 and garbled >= self.judge.garble_rate * total

        def garble_certain(rec: ItemRecord) -> str | None:
            nonlocal seen, garbled
            seen += 1
            garbled += rec.garbled
            return "garble certain" if settled() else None

        for suite, concurrency in self.passes:
            label = f"bisect-{chash[:8]}-{suite.name.rsplit('-', 1)[-1]}" + (
                f"-try{k + 1}" if k else ""
            )
            try:
                req = ScoreRequest(
                    target=target, suite=suite, label=label, concurrency=concurrency, trial=True
                )
                record, recs = self.scorer(req, self.store, ScoreHooks(stop_when=garble_certain))
            except EndpointError as exc:
                items += len(suite.items)
                stopped = exc.message
                break
            run_ids.append(record.run_id)
            records += recs
            if settled():  # nothing left to learn: the rest of the probe is not sent
                items += len(recs)
                stopped = f"garble certain: {garbled} of {seen} answers garbled"
                break
            items += len(suite.items)
        return measure(records, run_ids, items, stopped)


def _started(cached: CachedTrial) -> int:
    """1 when the trial started an engine, 0 when its build did not install (nothing booted)."""
    return 0 if cached.boot_error is not None and cached.boot_error.get("kind") == "install" else 1


def _row(
    trial: CachedTrial, m: Measurement | None, fid: Fidelity | None, **given: Any
) -> TrialResult:
    """The table row of a trial's cached result (its outcome and verdict set by the caller)."""
    boot_error = trial.boot_error
    return TrialResult(
        **given,
        contract_hash=trial.contract_hash,
        garble_rate=round(m.garble_rate, 4) if m else None,
        score=m.score if m else None,
        diagnoses=m.diagnoses if m else [],
        errors=m.errors if m else None,
        boot_seconds=trial.boot_seconds,
        boot_error=f"{boot_error['kind']}: {boot_error['message']}"
        if boot_error
        else trial.crashed,
        engine_version=trial.engine_version,
        run_ids=[r for x in trial.measurements for r in x.run_ids],
        log_path=trial.log_path,
        fidelity=TrialFidelity.of_fidelity(fid) if fid else None,
        effect="no observable effect" if fid and fid.verdict == "identical" else None,
    )


def _row_line(row: TrialResult, fid: Fidelity | None) -> str:
    """A trial's line in the log."""
    return (
        f"trial {row.n}: {row.variant} -> {row.outcome} ({row.verdict})"
        + (
            f", garble {row.garble_rate:.0%}, score {row.score}"
            if row.garble_rate is not None
            else ""
        )
        + (
            f", {fid.verdict} from the good side ({fid.hard} hard of {fid.items}; "
            f"{fid.floor_line()})"
            if fid
            else ""
        )
        + (" - no observable effect" if row.effect else "")
        + (f", boot {row.boot_seconds:.1f}s" if row.boot_seconds is not None else "")
        + (" [cached, no boot]" if row.cached else "")
        + (f" [{row.boot_error}]" if row.boot_error else "")
    )

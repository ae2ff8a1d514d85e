"""A score settled before anything is sent: `ScorePlan`, made once from the options (`plan`) or
from a caller's ready request (`plan_request`).

The options (scoring/options.py) are settled here and nowhere else: `target_spec` turns them into
the target to reach with the request options and API key it is sent (commands/target_args.py
builds slope's, bisect's and watch's spec through it too), `_selection` into the items they pick.
The plan holds the target spec, checked, with its contract loaded once (a booted score parses
its YAML here and nowhere else); the suite and the items to ask; a resumed run read back once,
under its lock, with the items it already has; the run id, label and server log path; and one
`Limits` (concurrency and timeout, each default in one home). Opening the target
(serving/target.py) and running (scoring/run.py) only read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evalrun.base.errors import SuiteError, UsageError
from evalrun.endpoint.client import RetryPolicy
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.options import (
    ApiKey,
    RequestOptions,
    build_options,
    options_differ,
    parse_extra_body,
    parse_headers,
    resolve_api_key,
)
from evalrun.scoring.request import ScoreRequest
from evalrun.serving.contract import Contract
from evalrun.serving.target import TargetSpec
from evalrun.store import ItemRecord, RunRecord, RunStore, claim_folder, new_run_id, now_iso
from evalrun.store.lock import RunLock
from evalrun.store.records import SelectionRecord
from evalrun.suite.load import Item, Suite, load_suite
from evalrun.suite.select import Selection

if TYPE_CHECKING:
    from evalrun.scoring.options import ScoreOptions

_ENDPOINT = HttpOptions()
DEFAULT_CONCURRENCY = _ENDPOINT.concurrency  # requests in flight against an endpoint: 16
DEFAULT_TIMEOUT_S = _ENDPOINT.timeout  # an item's whole budget: 120 s
REFERENCE_TIMEOUT_S = 600.0  # CPU inference; a long-context item can take minutes on 2 cores


@dataclass(frozen=True)
class Limits:
    """How much a run asks at once and how long an item may take."""

    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT_S

    @classmethod
    def of(cls, options: ScoreOptions, contract: Contract | None = None) -> Limits:
        """--concurrency, else the reference's slots (its contract's `parallel`, since more
        requests than slots only queue in the server), else 16; --timeout, else 600 s with the
        reference, else 120 s."""
        slots = contract.args.get("parallel") if contract is not None else None
        concurrency = options.concurrency
        if concurrency is None:
            concurrency = DEFAULT_CONCURRENCY
            if options.reference and isinstance(slots, int) and slots > 0:
                concurrency = slots
        timeout = options.timeout
        if timeout is None:
            timeout = REFERENCE_TIMEOUT_S if options.reference else DEFAULT_TIMEOUT_S
        return cls(concurrency=concurrency, timeout=timeout)

    def http(self, http: HttpOptions) -> HttpOptions:
        return replace(http, timeout=self.timeout, concurrency=self.concurrency)


@dataclass(frozen=True)
class ScorePlan:
    """One score, settled: what to reach, what to ask, where it is kept."""

    spec: TargetSpec  # checked; its http carries the limits
    suite: Suite
    items: list[Item]  # the items of the run (a resume's: the run's own)
    selection: SelectionRecord  # what run.json records of them
    limits: Limits = Limits()
    contract: Contract | None = None  # loaded once, when booted
    repeats: int = 1
    label: str | None = None
    run_id: str | None = None  # fixed before the run starts (booted: server.log lives there)
    log_path: Path | None = None  # the booted server's log
    resumed: RunRecord | None = None  # the stored run a resume finishes, read once
    done: dict[str, ItemRecord] = field(default_factory=dict)  # its items (errors asked again)
    lock: RunLock | None = None  # a resume's, held from before its run was read
    retry: RetryPolicy = RetryPolicy()
    trial: bool = False  # a bisect trial's probe: `runs` and `latest` skip it
    junit: Path | None = None  # the run also written here as JUnit XML when it ends

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> ScorePlan:
        return self

    def __exit__(self, *exc: object) -> None:
        """A plan used as a context releases its lock however the run ends (a boot that
        failed, a run that raised); a run that ended released it already."""
        self.release()


def plan(options: ScoreOptions, store: RunStore) -> ScorePlan:
    """The score the options describe: a resume's run read once (its endpoint, model and suite
    taken where the options say none), the spec checked, the contract loaded once, the request
    options it will send settled (a resume's must be its run's), then limits, names and items."""
    selection = _selection(options)
    if options.resume and not selection.is_everything:
        raise UsageError(
            "--resume keeps the run's own items; drop --limit/--items/--category/--tags, "
            "or start a new run without --resume"
        )
    resumed, lock = _locked_run(store, options.resume)
    try:
        if resumed is not None:
            options = _resume_options(options, resumed)
        spec, contract = target_spec(options).resolved()
        # what the run will send, the contract's `request:` block folded in: a bad block
        # fails here, before anything boots; a resume must send what its run sent
        sent = spec.options.with_contract(contract.request) if contract else spec.options
        _sends_as_before(resumed, sent)
        limits = Limits.of(options, contract)
        spec = replace(spec, http=limits.http(spec.http))
        label, run_id, log_path = _naming(store, options.label, contract, resumed)
        return _settled(
            ScorePlan(
                spec=spec,
                suite=load_suite(options.suite or "core"),
                items=[],
                selection=selection.record([]),
                limits=limits,
                contract=contract,
                repeats=options.repeats,
                label=label,
                run_id=run_id,
                log_path=log_path,
                lock=lock,
                junit=Path(options.junit) if options.junit else None,
            ),
            store,
            resumed,
            selection,
        )
    except BaseException:
        if lock is not None:
            lock.release()
        raise


def target_spec(options: ScoreOptions) -> TargetSpec:
    """The target the options describe (UsageError on a bad value): what to reach, the request
    options and API key it is sent, the connection's options; its limits those the options give
    (a score's plan settles the rest: Limits)."""
    if options.max_response_mb <= 0:
        raise UsageError(f"--max-response-mb must be positive, got {options.max_response_mb:g}")
    http = HttpOptions(
        ca_bundle=options.ca_bundle,
        insecure=options.insecure,
        max_response_mb=options.max_response_mb,
    )  # the limits given, else HttpOptions' own
    http = replace(
        http,
        timeout=http.timeout if options.timeout is None else options.timeout,
        concurrency=http.concurrency if options.concurrency is None else options.concurrency,
    )
    request = _request_options(options)
    key = (
        ApiKey(options.api_key, "api_key=")
        if options.api_key
        else resolve_api_key(options.api_key_env)
    )
    return TargetSpec(
        endpoint=options.endpoint,
        contract=options.contract,
        reference=options.reference,
        sets=tuple(options.sets),
        unsets=tuple(options.unsets),
        model=options.model,
        api_key=key,
        options=request,
        http=http,
    )


def _request_options(options: ScoreOptions) -> RequestOptions:
    """What every request of the run is sent, as the options give it (UsageError on a bad
    value): top_logprobs None with no_logprobs, else the K asked (its default left out)."""
    logprobs: dict[str, int | None] = {}
    if options.no_logprobs:
        logprobs["top_logprobs"] = None
    elif options.top_logprobs is not None:
        logprobs["top_logprobs"] = options.top_logprobs
    extra, headers = options.extra_body, options.headers
    if isinstance(extra, str):
        extra = parse_extra_body(extra) if extra else None
    return build_options(
        temperature=options.temperature,
        top_p=options.top_p,
        seed=options.request_seed,
        max_tokens_scale=options.max_tokens_scale,
        extra_body=dict(extra) if extra else None,
        headers=(dict(headers) if isinstance(headers, Mapping) else parse_headers(list(headers)))
        or None,
        logprob_tokens=options.logprob_tokens,
        **logprobs,
    )


def _selection(options: ScoreOptions) -> Selection:
    """The items the options pick (none: the whole suite)."""
    return Selection(
        items=_names(options.items),
        categories=_names(options.categories),
        tags=_names(options.tags),
        limit=options.limit,
        seed=options.seed,
    )


def _names(value: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """`a,b,,c` or ('a', 'b,c') -> ('a', 'b', 'c'); None when nothing is listed."""
    if value is None:
        return None
    parts = [value] if isinstance(value, str) else list(value)
    out = tuple(t.strip() for p in parts for t in p.split(",") if t.strip())
    return out or None


def plan_request(req: ScoreRequest, store: RunStore) -> ScorePlan:
    """The plan of a caller's ready request (a target already reached: `score_suite`)."""
    resumed, lock = _locked_run(store, req.resume)
    try:
        target = req.target
        spec = TargetSpec(model=target.model, api_key=target.api_key, options=target.options)
        limits = Limits(concurrency=req.concurrency, timeout=target.http.timeout)
        first = ScorePlan(
            spec=replace(spec, http=limits.http(target.http)),
            suite=req.suite,
            items=[],
            selection=req.selection.record([]),
            limits=limits,
            repeats=req.repeats,
            label=req.label,
            run_id=req.run_id,
            lock=lock,
            retry=req.retry,
            trial=req.trial,
        )
        _sends_as_before(resumed, target.options)
        return _settled(first, store, resumed, req.selection)
    except BaseException:
        if lock is not None:
            lock.release()
        raise


def _locked_run(store: RunStore, ref: str | None) -> tuple[RunRecord | None, RunLock | None]:
    """The run a resume finishes, read once under its lock (one writer a run: a second
    --resume refuses before it reads or asks anything); (None, None) for a new run."""
    if not ref:
        return None, None
    run_id = store.resolve(ref)
    lock = store.lock(run_id)
    try:
        return store.load_run(run_id), lock
    except BaseException:
        lock.release()
        raise


def _resume_options(options: ScoreOptions, resumed: RunRecord) -> ScoreOptions:
    """A resume's missing endpoint, model and suite taken from the run it finishes; UsageError
    when the run was booted from a contract the options do not name."""
    contract = (resumed.contract or {}).get("name")
    if contract and not options.booted and not options.endpoint:
        raise UsageError(
            f"run {options.resume} was scored on a server booted from contract "
            f"{contract!r}; resume with --contract FILE (or --reference) "
            f"--resume {options.resume}"
        )
    suite = options.suite or resumed.suite.path or resumed.suite.name
    if options.booted:
        return replace(options, suite=suite)
    return replace(
        options,
        suite=suite,
        endpoint=options.endpoint or resumed.endpoint,
        model=options.model or resumed.model_requested or resumed.model_served,
    )


def _naming(
    store: RunStore, label: str | None, contract: Contract | None, resumed: RunRecord | None
) -> tuple[str | None, str | None, Path | None]:
    """(label, run id, server log) of a score: a booted one names its run after the contract
    and claims its folder now, for server.log (a resume logs beside the run it finishes)."""
    if contract is None:
        return label, None, None
    store.ensure_writable()
    if resumed is not None:
        stamp = now_iso()[11:19].replace(":", "")
        return (
            label or contract.name,
            None,
            store.run_dir(resumed.run_id) / (f"server.resume-{stamp}.log"),
        )
    run_id = claim_folder(store.root, new_run_id(label or contract.name)).name
    return label or contract.name, run_id, store.run_dir(run_id) / "server.log"


def _sends_as_before(resumed: RunRecord | None, sent: RequestOptions) -> None:
    """A resume must send the request options its run was sent (UsageError naming them)."""
    differ = options_differ(resumed.sampling, sent.record()) if resumed else []
    if resumed and differ:
        raise UsageError(
            f"run {resumed.run_id} was sent other request options ({', '.join(differ)}: "
            f"{resumed.sampling}); resume with the same options, or start a new run"
        )


def _settled(
    first: ScorePlan, store: RunStore, resumed: RunRecord | None, selection: Selection
) -> ScorePlan:
    """The plan with its items: a new run's selection, or the resumed run's own items and what
    it has of them (SuiteError when the suite differs; UsageError on a bad limit)."""
    if first.limits.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {first.limits.concurrency}")
    if not 1 <= first.repeats <= 20:
        raise UsageError(f"--repeats must be between 1 and 20, got {first.repeats}")
    store.ensure_writable()
    suite = first.suite
    if resumed is None:
        items = selection.pick(suite)
        return replace(first, items=items, selection=selection.record(items))
    if resumed.suite.sha256 != suite.sha256:
        raise SuiteError(
            f"run {resumed.run_id} used {resumed.suite.name}-v{resumed.suite.version} "
            f"({resumed.suite.sha256[:12]}), not this suite ({suite.sha256[:12]}); resume needs "
            f"the same suite, or start a new run"
        )
    return replace(
        first,
        items=Selection.from_record(resumed.selection).pick(suite),
        selection=resumed.selection,
        resumed=resumed,
        done={r.id: r for r in store.load_items(resumed.run_id)},  # errors are asked again
        repeats=resumed.repeats,  # as the run began
    )

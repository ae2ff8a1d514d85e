"""Paired comparison of two runs of the same suite: tables, flips, exact tests, a verdict in words.

`compare_runs(store, "A", "B")` loads both runs (ids, `latest`, `latest:<label>` or tags), refuses
runs of different suites, pairs the items by id and returns a `Comparison`: per-category deltas,
pass->fail / fail->pass flips with both answers, error / garble / diagnosis deltas, an exact McNemar
test, a seeded paired-bootstrap interval for B - A, and the minimum detectable difference.

Only items graded in both runs enter the paired statistics: an item that errored (or was not run)
on either side is not a wrong answer, so it is counted apart (`excluded`) and listed as a change.
A partial run (`--limit`, `--tags`, or stopped early) keeps its own score on the items it ran and
is never re-based on the whole suite; the verdict then says `paired on 60 of 184 items`.

The total, each category and the garble rate are tested as one family (evalrun.compare.family):
the p-values in the category table are Holm-adjusted, the same rule `signoff` uses. With repeats
(`score --repeats K`) each item contributes its pass rate and the tests work on rates.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import ConfigError, SuiteError, UsageError
from evalrun.base.jsondata import JSONObject
from evalrun.base.tables import fmt_points, percent
from evalrun.compare.family import Diff, Family, PairedTest, family, majority
from evalrun.compare.fidelity import Fidelity, not_comparable, records_fidelity, runs_floor
from evalrun.compare.stats import (
    DEFAULT_ALPHA,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    min_detectable_difference,
    paired_bootstrap_ci,
    paired_rate_bootstrap_ci,
    paired_rate_test,
    wilson_interval,
)
from evalrun.store import ItemRecord, RunRecord, RunStore
from evalrun.store.tokens import load_traces, stored_answers
from evalrun.verdicts import LaneGarble

COMPARE_SCHEMA_VERSION = 2
Outcome = Literal["passed", "failed", "error", "missing"]


class Side(BaseModel):
    """One run's figures, computed from its items."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    label: str
    status: str = Field(description="run.json status: complete, incomplete, interrupted, running.")
    suite: str = Field(description="Suite name and version, e.g. core-v1.")
    suite_sha256: str
    passed: int
    total: int = Field(
        description="Items the run selected (the whole suite, or its --limit / --tags subset), "
        "including errors and items not run. The run's score is passed / total."
    )
    partial: bool = Field(
        description="The run selected a subset of the suite (--limit, --items, --category, "
        "--tags): its score covers those items only."
    )
    repeats: int = Field(default=1, description="Runs of each item (score --repeats).")
    errors: int = Field(description="Items whose request failed.")
    missing: int = Field(description="Items of the run's total with no record (not run).")
    garbled: int
    garble_loops: int = Field(default=0, description="Garbled items that are repetition loops.")
    garble_answered: int = Field(
        default=0, description="Items that got an answer, the garble rate's denominator."
    )
    garble_rate: float = Field(description="garbled / answered items.")
    pct: float = Field(description="100 * passed / total, unrounded.")
    wilson: tuple[float, float] = Field(description="Wilson interval of pct, in points.")
    diagnoses: dict[str, int] = Field(description="Diagnosis kind -> items showing it.")

    @property
    def lane_garble(self) -> LaneGarble:
        """The run's garble on its answered items, as sign-off's ceiling judges it."""
        return LaneGarble(
            garbled=self.garbled, loops=self.garble_loops, answered=self.garble_answered
        )


class CategoryRow(BaseModel):
    """One category, A vs B."""

    model_config = ConfigDict(extra="forbid")

    category: str
    a_passed: int
    a_total: int
    b_passed: int
    b_total: int
    delta: float = Field(description="B - A on the paired items, in items (pass rates summed).")
    a_pct: float = Field(description="A's score on its own items of the category, unrounded.")
    b_pct: float
    delta_points: float = Field(description="B - A in points of the paired items, unrounded.")
    paired: int = Field(description="Items of the category graded in both runs.")
    lost: int = Field(description="Paired items pass in A, fail in B (pass rate fell).")
    gained: int = Field(description="Paired items fail in A, pass in B (pass rate rose).")
    p_value: float = Field(description="Two-sided exact paired test within the category.")
    p_worse: float = Field(description="One-sided exact paired test for 'B is worse'.")
    p_adjusted: float = Field(description="p_value, Holm-adjusted over the family.")
    p_worse_adjusted: float = Field(description="p_worse, Holm-adjusted over the family.")


class Change(BaseModel):
    """An item whose outcome differs between A and B, with both answers."""

    model_config = ConfigDict(extra="forbid")

    id: str
    category: str
    a: Outcome
    b: Outcome
    a_answer: str = Field(description="What A answered (content, tool calls, or the error).")
    b_answer: str
    a_detail: str = Field(default="", description="A's grade detail or error kind.")
    b_detail: str = ""

    @property
    def direction(self) -> str:
        return f"{self.a}->{self.b}".replace("passed", "pass").replace("failed", "fail")


class DiagnosisRow(BaseModel):
    """Items showing one diagnosis kind, in A and B."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    a: int
    b: int
    hint: str = ""


class RepeatNoise(BaseModel):
    """With repeats: how much each run disagreed with itself, and the test on raw pass rates."""

    model_config = ConfigDict(extra="forbid")

    a_rate_sum: float = Field(description="A's pass rates summed over the paired items.")
    b_rate_sum: float
    a_flaky: int = Field(description="Paired items that both passed and failed among A's runs.")
    b_flaky: int
    p_rates: float = Field(
        description="Two-sided exact sign-flip test on the raw pass rates (for reading; the "
        "family tests majority outcomes)."
    )


class PairedStats(BaseModel):
    """Exact and resampled statistics on the paired (graded in both runs) items."""

    model_config = ConfigDict(extra="forbid")

    paired: int = Field(description="Items graded in both runs.")
    universe: int = Field(
        description="Item ids in either run (the suite, unless both are partial)."
    )
    excluded: int = Field(description="Items errored or missing in at least one run.")
    lost: int = Field(description="b of McNemar: pass in A, fail in B.")
    gained: int = Field(description="c of McNemar: fail in A, pass in B.")
    net: float = Field(description="B - A on the paired items, in items (pass rates summed).")
    a_paired_passed: float = Field(description="A's passes on the paired items (rates summed).")
    b_paired_passed: float
    alpha: float
    test: str = Field(description="exact McNemar, or the exact sign-flip test on pass rates.")
    p_value: float = Field(description="Two-sided exact paired p.")
    p_worse: float = Field(description="One-sided exact paired p for 'B is worse than A'.")
    p_adjusted: float = Field(description="p_value, Holm-adjusted over the family.")
    p_worse_adjusted: float = Field(description="p_worse, Holm-adjusted over the family.")
    family_size: int = Field(description="Tests in the family: total, categories, garble.")
    significant: bool = Field(description="p_adjusted < alpha.")
    ci_items: tuple[float, float] = Field(description="Paired bootstrap interval of B - A, items.")
    ci_points: tuple[float, float] = Field(
        description="The same interval in points of the paired items."
    )
    seed: int
    resamples: int
    mdd_items: int | None = Field(description="Smallest net difference significant at alpha.")
    mdd_points: float | None
    repeat_noise: RepeatNoise | None = Field(
        default=None, description="Set when either run has repeats (score --repeats K)."
    )


class GarbleStats(BaseModel):
    """Garble on the items answered in both runs: what B garbles that A did not, and the test."""

    model_config = ConfigDict(extra="forbid")

    paired: int = Field(description="Items answered (not errored) in both runs.")
    new: int = Field(description="Garbled in B, not in A.")
    new_loops: int = Field(description="Of `new`, repetition loops (not token soup).")
    cleared: int = Field(description="Garbled in A, not in B.")
    a_rate: float = Field(description="A's garble rate on the paired items.")
    b_rate: float = Field(description="B's garble rate on the paired items.")
    p_value: float = Field(description="Two-sided exact McNemar on garble flips.")
    p_worse: float = Field(description="One-sided: B garbles more.")
    p_adjusted: float
    p_worse_adjusted: float

    @property
    def increase(self) -> float:
        """B's garble rate minus A's on the paired items."""
        return self.b_rate - self.a_rate


class Comparison(BaseModel):
    """Everything `evalrun compare` reports; `--json` prints this object."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = COMPARE_SCHEMA_VERSION
    a: Side
    b: Side
    delta_items: float = Field(description="B - A on the paired items, in items.")
    delta_points: float = Field(description="B - A in points of the paired items, unrounded.")
    categories: list[CategoryRow]
    flips: list[Change] = Field(description="pass->fail and fail->pass items, suite order.")
    other_changes: list[Change] = Field(description="Items errored or missing on one side.")
    diagnoses: list[DiagnosisRow]
    stats: PairedStats
    garble: GarbleStats
    verdict: str = Field(description="One line in plain words.")
    fidelity: Fidelity | None = Field(
        default=None, description="B's tokens judged against A's (compare/fidelity.py)."
    )


def compare_runs(
    store: RunStore,
    ref_a: str,
    ref_b: str,
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    floor: Sequence[str] = (),
    candidate_floor: Sequence[str] = (),
) -> Comparison:
    """Load two runs by reference and compare them (B against A). `floor`: A's A/A partners
    (other runs of A's lane on the same items): B's tokens are judged against A's own noise
    floor (compare/floor.py), else against the default thresholds. `candidate_floor`: B's A/A
    partners: the floor is widened to B's own spread where that is wider."""
    if candidate_floor and not floor:
        raise UsageError("--candidate-floor widens the baseline's floor: add --floor RUN too")
    run_a = store.load_run(ref_a)
    run_b = store.load_run(ref_b)
    check_same_suite(run_a, run_b)
    items_a, items_b = _load_items(store, run_a.run_id), _load_items(store, run_b.run_id)
    cmp = compare_records(
        run_a, items_a, run_b, items_b, alpha=alpha, seed=seed, resamples=resamples
    )
    traces_a = load_traces(store.run_dir(run_a.run_id), stored_answers(items_a))
    traces_b = load_traces(store.run_dir(run_b.run_id), stored_answers(items_b))
    for side, traces in (("A", traces_a), ("B", traces_b)):
        if traces.not_own():  # judging them would judge the run they came from
            cmp.fidelity = not_comparable(traces.foreign_reason(side))
            return cmp
    cmp.fidelity = records_fidelity(
        run_a,
        items_a,
        traces_a,
        run_b,
        items_b,
        traces_b,
        floor=runs_floor(store, run_a.run_id, floor) if floor else None,
        cand_floor=(
            runs_floor(store, run_b.run_id, candidate_floor, option="--candidate-floor", side="B")
            if floor and candidate_floor
            else None
        ),
    )
    return cmp


def _load_items(store: RunStore, run_id: str) -> list[ItemRecord]:
    """Item records of a run; a line that is not an item record is unusable input (exit 2)."""
    try:
        return store.load_items(run_id)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(
            f"{store.run_dir(run_id) / 'items.jsonl'} holds a line that is not an item record "
            f"({where}: {err['msg']}); was it written by another evalrun version?"
        ) from exc


def request_options_warning(run_a: RunRecord, run_b: RunRecord) -> str | None:
    """One line when the two runs were sent different request options (temperature, extra
    body, ...): a difference between them may then come from the options, not the serving."""
    from evalrun.endpoint.options import options_differ

    differ = options_differ(run_a.sampling, run_b.sampling)
    if not differ:
        return None
    pairs = ", ".join(f"{k} {run_a.sampling.get(k)!r} vs {run_b.sampling.get(k)!r}" for k in differ)
    return (
        f"the runs were sent different request options ({pairs}); a difference may come "
        "from those, not from the serving"
    )


def check_same_suite(run_a: RunRecord, run_b: RunRecord) -> None:
    """Refuse to pair runs of different suites (or suite versions): the items are not the same."""
    if run_a.suite.sha256 != run_b.suite.sha256:
        raise SuiteError(
            f"{run_a.run_id} used suite {_suite_name(run_a)} "
            f"(sha256 {run_a.suite.sha256[:12]}) but "
            f"{run_b.run_id} used {_suite_name(run_b)} (sha256 {run_b.suite.sha256[:12]}); "
            "compare runs of the same suite version, or re-score one of them"
        )


def compare_records(
    run_a: RunRecord,
    items_a: list[ItemRecord],
    run_b: RunRecord,
    items_b: list[ItemRecord],
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Compare two loaded runs; pure (no I/O), so signoff and tests can call it directly."""
    check_same_suite(run_a, run_b)
    by_a = {i.id: i for i in items_a}
    by_b = {i.id: i for i in items_b}
    order = list(by_a) + [i for i in by_b if i not in by_a]
    category = {i: (by_a.get(i) or by_b[i]).category for i in order}

    flips: list[Change] = []
    others: list[Change] = []
    pairs: list[tuple[str, Diff]] = []
    garble_pairs: list[tuple[bool, bool]] = []  # (garbled in A, garbled in B), answered in both
    new_loops = 0
    passes = [Fraction(0), Fraction(0)]  # A's and B's (majority) passes on the paired items
    rates = [Fraction(0), Fraction(0)]  # A's and B's pass rates summed over the paired items
    flaky = [0, 0]  # paired items that both passed and failed among a run's repeats
    rate_diffs: list[Fraction] = []
    for item_id in order:
        ia, ib = by_a.get(item_id), by_b.get(item_id)
        oa, ob = _outcome(ia), _outcome(ib)
        ra, rb = pass_rate(ia), pass_rate(ib)
        if ra is not None and rb is not None:
            pairs.append((category[item_id], _diff(majority(ra), majority(rb))))
            passes[0] += majority(ra)
            passes[1] += majority(rb)
            rates[0] += ra
            rates[1] += rb
            rate_diffs.append(rb - ra)
            flaky[0] += 0 < ra < 1
            flaky[1] += 0 < rb < 1
        if (
            ia is not None
            and ib is not None
            and ia.response is not None
            and ib.response is not None
        ):
            ga, gb = garble_kind(ia), garble_kind(ib)
            garble_pairs.append((ga is not None, gb is not None))
            new_loops += ga is None and gb == "loop"
        if oa == ob:
            continue
        change = Change(
            id=item_id,
            category=category[item_id],
            a=oa,
            b=ob,
            a_answer=answer_text(ia),
            b_answer=answer_text(ib),
            a_detail=_detail(ia),
            b_detail=_detail(ib),
        )
        (flips if {oa, ob} == {"passed", "failed"} else others).append(change)

    side_a = _side(run_a, items_a, len(order), alpha)
    side_b = _side(run_b, items_b, len(order), alpha)
    fam = family(pairs, [int(ga) - int(gb) for ga, gb in garble_pairs])
    universe = max(len(order), side_a.total, side_b.total)
    stats = _paired_stats(fam, universe, passes, alpha, seed, resamples)
    if rates != passes or any(flaky):
        stats.repeat_noise = RepeatNoise(
            a_rate_sum=float(rates[0]),
            b_rate_sum=float(rates[1]),
            a_flaky=flaky[0],
            b_flaky=flaky[1],
            p_rates=paired_rate_test(rate_diffs),
        )
    return Comparison(
        a=side_a,
        b=side_b,
        delta_items=float(fam.total.net),
        delta_points=-fam.total.drop_points,
        categories=_categories(order, category, by_a, by_b, fam.categories),
        flips=flips,
        other_changes=others,
        diagnoses=_diagnoses(run_a, side_a, run_b, side_b),
        stats=stats,
        garble=_garble_stats(fam.garble, garble_pairs, new_loops),
        verdict=verdict_line(side_a, side_b, stats),
    )


def pass_rate(item: ItemRecord | None) -> Fraction | None:
    """The item's pass rate over its graded repeats (1 or 0 without repeats); None if ungraded."""
    if item is None or item.status == "error":
        return None
    runs = [r for r in (item.repeats or []) if r.status in ("passed", "failed")]
    if not runs:
        return Fraction(item.status == "passed")
    return Fraction(sum(r.status == "passed" for r in runs), len(runs))


def garble_kind(item: ItemRecord | None) -> Literal["loop", "soup"] | None:
    """`loop` (a repetition loop: the model's own habit as often as engine damage), `soup` (any
    other garble: token soup, mixed scripts, mojibake) or None when the answer is not garbled.

    The detector's own `kind` decides (records written before verdicts had a kind get one when
    they are read: `store.records.upgrade_item`).
    """
    if item is None or item.garble is None or not item.garble.garbled:
        return None
    return "loop" if item.garble.loop else "soup"


def _diff(a: Fraction, b: Fraction) -> Diff:
    d = b - a
    return int(d) if d.denominator == 1 else d


def verdict_line(a: Side, b: Side, stats: PairedStats) -> str:
    """`B − A = +2 items (170 vs 168), McNemar p = 0.69: no significant difference`.

    When the runs do not cover the same items (a partial run, errors, items not run), the counts
    are those of the paired items and the line starts with `paired on 60 of 184 items`; the runs'
    own scores stay in the table, never re-based. A p-value significant alone but not after the
    family's adjustment says so.
    """
    whole = not stats.excluded and not a.partial and not b.partial and stats.paired
    if whole and a.repeats == b.repeats == 1:
        head = f"B − A = {_items(b.passed - a.passed)} ({b.passed} vs {a.passed})"
    else:
        a_sum, b_sum = stats.a_paired_passed, stats.b_paired_passed
        head = (
            f"B − A = {_items(stats.net)} ({_num(b_sum)} vs {_num(a_sum)})"
            if whole
            else f"paired on {stats.paired} of {stats.universe} items: B − A = "
            f"{_items(stats.net)} ({_num(b_sum)} vs {_num(a_sum)} on the paired items)"
        )
    name = "McNemar" if stats.test == "mcnemar" else "paired rate test"
    head += f", {name} p = {fmt_p(stats.p_value)}"
    if stats.p_value < stats.alpha and stats.p_adjusted >= stats.alpha:
        head += f", {fmt_p(stats.p_adjusted)} adjusted for {stats.family_size} tests"
    elif stats.significant:
        head += f" ({fmt_p(stats.p_adjusted)} adjusted for {stats.family_size} tests)"
    if not stats.significant:
        words = "no significant difference"
    elif stats.net > 0:
        words = f"B is significantly better (alpha {stats.alpha:g})"
    else:
        words = f"B is significantly worse (alpha {stats.alpha:g})"
    tail = (
        f"; {_items(stats.excluded, signed=False)} errored or not run in A or B left out"
        if stats.excluded
        else ""
    )
    return f"{head}: {words}{tail}"


def _num(x: float) -> str:
    """An item count: whole numbers plain, pass-rate sums (repeats) to one decimal."""
    return f"{x:g}" if float(x).is_integer() else fmt_points(x)


def fmt_p(p: float) -> str:
    """Two decimals for ordinary p-values, two significant digits for small ones."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def answer_text(item: ItemRecord | None) -> str:
    """What an item's endpoint said, as one readable string (content, tool calls, or the error)."""
    if item is None:
        return "(not run)"
    if item.status == "error" or item.response is None:
        err = item.error
        what = f"[error {err.kind}] {err.message}" if err else "[error ?]"
        return _encodable(what.strip())
    resp = item.response
    parts = []
    if resp.content:
        parts.append(resp.content)
    for call in resp.tool_calls:
        args = json.dumps(call.arguments, ensure_ascii=False)
        parts.append(f"[tool call] {call.name}({args})")
    if not parts and resp.reasoning:
        parts.append(f"[reasoning only] {resp.reasoning}")
    if resp.finish_reason == "length":
        parts.append("[cut at max_tokens]")
    return _encodable("\n".join(parts)) if parts else "(empty answer)"


def _encodable(text: str) -> str:
    """Lone surrogates (a broken server's output) become \\udXXX escapes: files stay writable."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _outcome(item: ItemRecord | None) -> Outcome:
    return "missing" if item is None else item.status


def _detail(item: ItemRecord | None) -> str:
    if item is None:
        return ""
    if item.status == "error":
        return item.error.kind if item.error else ""
    return item.grade.detail if item.grade else ""


def _suite_name(run: RunRecord) -> str:
    return f"{run.suite.name}-v{run.suite.version}"


def _signed(n: float) -> str:
    return f"+{_num(n)}" if n > 0 else ("0" if n == 0 else f"−{_num(-n)}")


def _items(n: float, *, signed: bool = True) -> str:
    """'+2 items', '−1 item', '0 items', '+1.3 items' (pass rates summed, with repeats)."""
    return f"{_signed(n) if signed else _num(n)} item{'' if abs(n) == 1 else 's'}"


def _side(run: RunRecord, items: list[ItemRecord], seen: int, alpha: float) -> Side:
    """Figures of one run, on the items it selected (never re-based on the other run's items).

    A run killed before it wrote its summary selected the whole suite unless its selection says
    otherwise, so `seen` (item ids in either run) stands in for its total then.
    """
    passed = sum(i.status == "passed" for i in items)
    errors = sum(i.status == "error" for i in items)
    partial = bool(run.selection)  # run.json records a selection only when it is not everything
    if run.summary is not None:
        total = max(run.summary.total, len(items))
    else:
        total = len(items) if partial else max(len(items), seen)
    # answered = got a response, as the run's summary and bisect count it (a context rejection
    # has none; a grader timeout is an error with one)
    garble = LaneGarble.of(i.garble for i in items if i.response is not None)
    lo, hi = wilson_interval(passed, total, alpha=alpha)
    diag: Counter[str] = Counter(kind for i in items for kind in set(i.diagnoses))
    repeats = max((len(i.repeats or []) for i in items), default=0)
    return Side(
        run_id=run.run_id,
        label=run.label,
        status=run.status,
        suite=_suite_name(run),
        suite_sha256=run.suite.sha256,
        passed=passed,
        total=total,
        partial=partial,
        repeats=max(1, repeats),
        errors=errors,
        missing=total - len(items),
        garbled=garble.garbled,
        garble_loops=garble.loops,
        garble_answered=garble.answered,
        garble_rate=garble.flagged_rate,
        pct=percent(passed, total),
        wilson=(100 * lo, 100 * hi),
        diagnoses=dict(sorted(diag.items())),
    )


def _paired_stats(
    fam: Family,
    universe: int,
    passes: list[Fraction],
    alpha: float,
    seed: int,
    resamples: int,
) -> PairedStats:
    t = fam.total
    fractional = any(isinstance(d, Fraction) for d in t.diffs)
    if fractional:
        lo, hi = paired_rate_bootstrap_ci(t.diffs, seed=seed, resamples=resamples, alpha=alpha)
    else:
        ia, ib = _outcomes_from_diffs(t.diffs)
        lo, hi = paired_bootstrap_ci(ia, ib, seed=seed, resamples=resamples, alpha=alpha)
    mdd = min_detectable_difference(t.lost + t.gained, alpha=alpha, limit=t.paired)
    pts = 100 / t.paired if t.paired else 0.0  # points of the paired items
    return PairedStats(
        paired=t.paired,
        universe=universe,
        excluded=universe - t.paired,
        lost=t.lost,
        gained=t.gained,
        net=float(t.net),
        a_paired_passed=float(passes[0]),
        b_paired_passed=float(passes[1]),
        alpha=alpha,
        test="paired rate test" if fractional else "mcnemar",
        p_value=t.p_value,
        p_worse=t.p_worse,
        p_adjusted=t.p_adjusted,
        p_worse_adjusted=t.p_worse_adjusted,
        family_size=len(fam.members),
        significant=t.p_adjusted < alpha,
        ci_items=(lo, hi),
        ci_points=(lo * pts, hi * pts),
        seed=seed,
        resamples=resamples,
        mdd_items=mdd,
        mdd_points=mdd * pts if mdd is not None else None,
    )


def _outcomes_from_diffs(diffs: list[Diff]) -> tuple[list[bool], list[bool]]:
    """Paired pass/fail lists with the same discordance as `diffs` (what the bootstrap needs)."""
    a = [d < 0 for d in diffs]
    b = [d > 0 for d in diffs]
    return a, b


def _categories(
    order: list[str],
    category: dict[str, str],
    by_a: dict[str, ItemRecord],
    by_b: dict[str, ItemRecord],
    tests: list[PairedTest],
) -> list[CategoryRow]:
    by_cat = {t.subject: t for t in tests}
    rows = []
    for cat in sorted(set(category.values())):
        ids = [i for i in order if category[i] == cat]
        a_ids = [i for i in ids if i in by_a]
        b_ids = [i for i in ids if i in by_b]
        ap = sum(by_a[i].status == "passed" for i in a_ids)
        bp = sum(by_b[i].status == "passed" for i in b_ids)
        t = by_cat.get(cat)
        rows.append(
            CategoryRow(
                category=cat,
                a_passed=ap,
                a_total=len(a_ids),
                b_passed=bp,
                b_total=len(b_ids),
                delta=float(t.net) if t else 0.0,
                a_pct=percent(ap, len(a_ids)),
                b_pct=percent(bp, len(b_ids)),
                delta_points=-t.drop_points if t else 0.0,
                paired=t.paired if t else 0,
                lost=t.lost if t else 0,
                gained=t.gained if t else 0,
                p_value=t.p_value if t else 1.0,
                p_worse=t.p_worse if t else 1.0,
                p_adjusted=t.p_adjusted if t else 1.0,
                p_worse_adjusted=t.p_worse_adjusted if t else 1.0,
            )
        )
    return rows


def _garble_stats(t: PairedTest, pairs: list[tuple[bool, bool]], new_loops: int) -> GarbleStats:
    n = len(pairs)
    return GarbleStats(
        paired=n,
        new=t.lost,
        new_loops=new_loops,
        cleared=t.gained,
        a_rate=sum(a for a, _ in pairs) / n if n else 0.0,
        b_rate=sum(b for _, b in pairs) / n if n else 0.0,
        p_value=t.p_value,
        p_worse=t.p_worse,
        p_adjusted=t.p_adjusted,
        p_worse_adjusted=t.p_worse_adjusted,
    )


def _diagnoses(run_a: RunRecord, a: Side, run_b: RunRecord, b: Side) -> list[DiagnosisRow]:
    hints: dict[str, str] = {}
    for run in (run_a, run_b):
        for d in run.summary.diagnoses if run.summary else []:
            hints.setdefault(d.kind, d.hint)
    kinds = sorted(set(a.diagnoses) | set(b.diagnoses))
    return [
        DiagnosisRow(
            kind=k, a=a.diagnoses.get(k, 0), b=b.diagnoses.get(k, 0), hint=hints.get(k, "")
        )
        for k in kinds
    ]


def to_json(cmp: Comparison) -> JSONObject:
    """The comparison as plain JSON data, with each change's direction spelled out."""
    data = cmp.model_dump(mode="json")
    for key in ("flips", "other_changes"):
        for row, change in zip(data[key], getattr(cmp, key), strict=True):
            row["direction"] = change.direction
    return data

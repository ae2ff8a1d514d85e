"""Paired comparison of two runs of the same suite: tables, flips, exact tests, a verdict in words.

`compare_runs(store, "A", "B")` loads both runs (ids, `latest`, `latest:<label>` or tags), refuses
runs of different suites, pairs the items by id and returns a `Comparison`: per-category deltas,
pass->fail / fail->pass flips with both answers, error / garble / diagnosis deltas, an exact McNemar
test, a seeded paired-bootstrap interval for B - A, and the minimum detectable difference.

Only items graded in both runs enter the paired statistics: an item that errored (or was not run)
on either side is not a wrong answer, so it is counted apart (`excluded`) and listed as a change.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.compare.stats import (
    DEFAULT_ALPHA,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    mcnemar_exact,
    min_detectable_difference,
    paired_bootstrap_ci,
    wilson_interval,
)
from evalrun.errors import ConfigError, SuiteError
from evalrun.store import ItemRecord, RunRecord, RunStore

COMPARE_SCHEMA_VERSION = 1
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
    total: int = Field(description="Items in the run, including errors and items not run.")
    errors: int = Field(description="Items whose request failed.")
    missing: int = Field(description="Items of the run's total with no record (not run).")
    garbled: int
    garble_rate: float = Field(description="garbled / answered (non-error) items.")
    pct: float = Field(description="100 * passed / total.")
    wilson: tuple[float, float] = Field(description="Wilson interval of pct, in points.")
    diagnoses: dict[str, int] = Field(description="Diagnosis kind -> items showing it.")


class CategoryRow(BaseModel):
    """One category, A vs B."""

    model_config = ConfigDict(extra="forbid")

    category: str
    a_passed: int
    a_total: int
    b_passed: int
    b_total: int
    delta: int = Field(description="b_passed - a_passed, items.")
    a_pct: float
    b_pct: float
    delta_points: float = Field(description="b_pct - a_pct.")
    paired: int = Field(description="Items of the category graded in both runs.")
    lost: int = Field(description="Paired items pass in A, fail in B.")
    gained: int = Field(description="Paired items fail in A, pass in B.")
    p_value: float = Field(description="Two-sided exact McNemar within the category.")
    p_worse: float = Field(description="One-sided exact McNemar for 'B is worse' in the category.")


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


class PairedStats(BaseModel):
    """Exact and resampled statistics on the paired (graded in both runs) items."""

    model_config = ConfigDict(extra="forbid")

    paired: int = Field(description="Items graded in both runs.")
    excluded: int = Field(description="Items errored or missing in at least one run.")
    lost: int = Field(description="b of McNemar: pass in A, fail in B.")
    gained: int = Field(description="c of McNemar: fail in A, pass in B.")
    alpha: float
    p_value: float = Field(description="Two-sided exact McNemar p.")
    p_worse: float = Field(description="One-sided exact McNemar p for 'B is worse than A'.")
    significant: bool = Field(description="p_value < alpha.")
    ci_items: tuple[int, int] = Field(description="Paired bootstrap interval of B - A, items.")
    ci_points: tuple[float, float] = Field(
        description="The same interval in points of the paired items."
    )
    seed: int
    resamples: int
    mdd_items: int | None = Field(description="Smallest net difference significant at alpha.")
    mdd_points: float | None


class Comparison(BaseModel):
    """Everything `evalrun compare` reports; `--json` prints this object."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = COMPARE_SCHEMA_VERSION
    a: Side
    b: Side
    delta_items: int = Field(description="b.passed - a.passed.")
    delta_points: float = Field(description="b.pct - a.pct.")
    categories: list[CategoryRow]
    flips: list[Change] = Field(description="pass->fail and fail->pass items, suite order.")
    other_changes: list[Change] = Field(description="Items errored or missing on one side.")
    diagnoses: list[DiagnosisRow]
    stats: PairedStats
    verdict: str = Field(description="One line in plain words.")


def compare_runs(
    store: RunStore,
    ref_a: str,
    ref_b: str,
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Load two runs by reference and compare them (B against A)."""
    run_a = store.load_run(ref_a)
    run_b = store.load_run(ref_b)
    check_same_suite(run_a, run_b)
    return compare_records(
        run_a,
        _load_items(store, run_a.run_id),
        run_b,
        _load_items(store, run_b.run_id),
        alpha=alpha,
        seed=seed,
        resamples=resamples,
    )


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
    pairs: list[tuple[bool, bool]] = []
    pair_cats: list[str] = []
    for item_id in order:
        oa, ob = _outcome(by_a.get(item_id)), _outcome(by_b.get(item_id))
        if oa in ("passed", "failed") and ob in ("passed", "failed"):
            pairs.append((oa == "passed", ob == "passed"))
            pair_cats.append(category[item_id])
        if oa == ob:
            continue
        change = Change(
            id=item_id,
            category=category[item_id],
            a=oa,
            b=ob,
            a_answer=answer_text(by_a.get(item_id)),
            b_answer=answer_text(by_b.get(item_id)),
            a_detail=_detail(by_a.get(item_id)),
            b_detail=_detail(by_b.get(item_id)),
        )
        (flips if {oa, ob} == {"passed", "failed"} else others).append(change)

    side_a = _side(run_a, items_a, len(order), alpha)
    side_b = _side(run_b, items_b, len(order), alpha)
    stats = _paired_stats(pairs, len(order), alpha, seed, resamples)
    return Comparison(
        a=side_a,
        b=side_b,
        delta_items=side_b.passed - side_a.passed,
        delta_points=round(side_b.pct - side_a.pct, 1),
        categories=_categories(order, category, by_a, by_b, pairs, pair_cats),
        flips=flips,
        other_changes=others,
        diagnoses=_diagnoses(run_a, side_a, run_b, side_b),
        stats=stats,
        verdict=verdict_line(side_a, side_b, stats),
    )


def verdict_line(a: Side, b: Side, stats: PairedStats) -> str:
    """`B − A = +2 items (170 vs 168), McNemar p = 0.69: no significant difference`.

    When items errored or were not run on one side, the run totals are not paired, so the line
    also gives the delta on the items graded in both runs, which is what the test is about.
    """
    head = f"B − A = {_items(b.passed - a.passed)} ({b.passed} vs {a.passed})"
    if stats.excluded:
        head += (
            f"; on the {stats.paired} items graded in both runs {_items(stats.gained - stats.lost)}"
        )
    head += f", McNemar p = {fmt_p(stats.p_value)}"
    if not stats.significant:
        words = "no significant difference"
    elif stats.gained > stats.lost:
        words = f"B is significantly better (alpha {stats.alpha:g})"
    else:
        words = f"B is significantly worse (alpha {stats.alpha:g})"
    tail = (
        f"; {_items(stats.excluded, signed=False)} errored or not run in A or B left out"
        if stats.excluded
        else ""
    )
    return f"{head}: {words}{tail}"


def fmt_p(p: float) -> str:
    """Two decimals for ordinary p-values, two significant digits for small ones."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def answer_text(item: ItemRecord | None) -> str:
    """What an item's endpoint said, as one readable string (content, tool calls, or the error)."""
    if item is None:
        return "(not run)"
    if item.status == "error" or item.response is None:
        err = item.error or {}
        return _encodable(f"[error {err.get('kind', '?')}] {err.get('message', '')}".strip())
    resp = item.response
    parts = []
    content = resp.get("content")
    if content:
        parts.append(str(content))
    for call in resp.get("tool_calls") or []:
        args = json.dumps(call.get("arguments"), ensure_ascii=False)
        parts.append(f"[tool call] {call.get('name')}({args})")
    if not parts and resp.get("reasoning"):
        parts.append(f"[reasoning only] {resp['reasoning']}")
    if resp.get("finish_reason") == "length":
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
        return str((item.error or {}).get("kind", ""))
    return str((item.grade or {}).get("detail", ""))


def _suite_name(run: RunRecord) -> str:
    return f"{run.suite.name}-v{run.suite.version}"


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else ("0" if n == 0 else f"−{-n}")


def _items(n: int, *, signed: bool = True) -> str:
    """'+2 items', '−1 item', '0 items'."""
    return f"{_signed(n) if signed else n} item{'' if abs(n) == 1 else 's'}"


def _is_garbled(item: ItemRecord) -> bool:
    return bool(item.garble and item.garble.get("garbled"))


def _side(run: RunRecord, items: list[ItemRecord], universe: int, alpha: float) -> Side:
    """Figures of one run; `universe` is the number of item ids seen in either run."""
    passed = sum(i.status == "passed" for i in items)
    errors = sum(i.status == "error" for i in items)
    total = max(run.summary.total if run.summary else 0, universe)
    answered = len(items) - errors
    garbled = sum(_is_garbled(i) for i in items if i.status != "error")
    lo, hi = wilson_interval(passed, total, alpha=alpha)
    diag: Counter[str] = Counter(kind for i in items for kind in set(i.diagnoses))
    return Side(
        run_id=run.run_id,
        label=run.label,
        status=run.status,
        suite=_suite_name(run),
        suite_sha256=run.suite.sha256,
        passed=passed,
        total=total,
        errors=errors,
        missing=total - len(items),
        garbled=garbled,
        garble_rate=round(garbled / answered, 4) if answered else 0.0,
        pct=round(100 * passed / total, 2) if total else 0.0,
        wilson=(round(100 * lo, 1), round(100 * hi, 1)),
        diagnoses=dict(sorted(diag.items())),
    )


def _paired_stats(
    pairs: list[tuple[bool, bool]],
    total: int,
    alpha: float,
    seed: int,
    resamples: int,
) -> PairedStats:
    lost = sum(a and not b for a, b in pairs)
    gained = sum(b and not a for a, b in pairs)
    p = mcnemar_exact(lost, gained)
    lo, hi = paired_bootstrap_ci(
        [a for a, _ in pairs], [b for _, b in pairs], seed=seed, resamples=resamples, alpha=alpha
    )
    mdd = min_detectable_difference(lost + gained, alpha=alpha, limit=len(pairs))
    pts = 100 / len(pairs) if pairs else 0.0  # points of the paired items
    return PairedStats(
        paired=len(pairs),
        excluded=total - len(pairs),
        lost=lost,
        gained=gained,
        alpha=alpha,
        p_value=p,
        p_worse=mcnemar_exact(lost, gained, alternative="less"),
        significant=p < alpha,
        ci_items=(lo, hi),
        ci_points=(round(lo * pts, 1), round(hi * pts, 1)),
        seed=seed,
        resamples=resamples,
        mdd_items=mdd,
        mdd_points=round(mdd * pts, 1) if mdd is not None else None,
    )


def _categories(
    order: list[str],
    category: dict[str, str],
    by_a: dict[str, ItemRecord],
    by_b: dict[str, ItemRecord],
    pairs: list[tuple[bool, bool]],
    pair_cats: list[str],
) -> list[CategoryRow]:
    rows = []
    for cat in sorted(set(category.values())):
        ids = [i for i in order if category[i] == cat]
        ap = sum(by_a[i].status == "passed" for i in ids if i in by_a)
        bp = sum(by_b[i].status == "passed" for i in ids if i in by_b)
        cat_pairs = [p for p, c in zip(pairs, pair_cats, strict=True) if c == cat]
        lost = sum(a and not b for a, b in cat_pairs)
        gained = sum(b and not a for a, b in cat_pairs)
        n = len(ids)
        a_pct = round(100 * ap / n, 1) if n else 0.0
        b_pct = round(100 * bp / n, 1) if n else 0.0
        rows.append(
            CategoryRow(
                category=cat,
                a_passed=ap,
                a_total=n,
                b_passed=bp,
                b_total=n,
                delta=bp - ap,
                a_pct=a_pct,
                b_pct=b_pct,
                delta_points=round(b_pct - a_pct, 1),
                paired=len(cat_pairs),
                lost=lost,
                gained=gained,
                p_value=mcnemar_exact(lost, gained),
                p_worse=mcnemar_exact(lost, gained, alternative="less"),
            )
        )
    return rows


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


def to_json(cmp: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON data, with each change's direction spelled out."""
    data = cmp.model_dump(mode="json")
    for key in ("flips", "other_changes"):
        for row, change in zip(data[key], getattr(cmp, key), strict=True):
            row["direction"] = change.direction
    return data

"""Fidelity: does lane B compute the distribution lane A computes? Judged token by token.

On the greedy items both runs answered with tokens (tokens.jsonl, endpoint/logprobs.py), each item
is walked from its first token (tokens are one by their id where both lanes sent ids, else by
their bytes with engines' renderings of invisible tokens folded: `same_token`): the shared
prefix, then at the first differing position either a *near tie* (both picks in both sides'
top-K, their logprob gap under `delta` on both sides: a numeric wobble may flip it) or a *hard*
divergence (one side chose what the other thought unlikely); over the shared prefix, the drift
(mean |Δ logprob| of the same tokens). The lane verdict:

- `identical`: every compared token and its logprob equal (a knob with no observable effect);
- `equivalent`: only near ties, hard divergences no more often than healthy lanes show them, and
  the drift within the noise floor;
- `divergent`: more hard divergences than the healthy rate allows (one-sided exact binomial test,
  `p_value` < `alpha`), or drift above `drift_max`;
- `not comparable`, with the reason: a run without tokens, sampled runs, no shared item, or two
  tokenizers (the same text split into different tokens on most diverging items).

Thresholds are calibrated on real engines by bench/fidelity_calibration.py. The module is pure but
for `runs_fidelity`, which loads two stored runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import UsageError
from evalrun.compare.floor import Floor, FloorGrade, binom_sf, floor_of
from evalrun.compare.floor import grade as floor_grade
from evalrun.endpoint.logprobs import TokenTrace, TopK, same_token, token_id, token_key
from evalrun.store import ItemRecord, RunRecord, RunStore
from evalrun.store.tokens import load_traces
from evalrun.suite.load import Item, Suite, copy_item, derived_suite

Verdict = Literal[
    "identical",
    "equivalent",
    "within noise",
    "numerically different",
    "divergent",
    "not comparable",
]
Kind = Literal["identical", "near_tie", "hard", "retokenized"]
EXAMPLES = 10  # first divergences kept in the record, hard ones first


class Thresholds(BaseModel):
    """The numbers a verdict rests on (fitted by bench/fidelity_calibration.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    delta: float = Field(default=1.0, description="Largest logprob gap (nats) of a near tie.")
    healthy_hard_rate: float = Field(
        default=0.02, description="Share of items two healthy lanes diverge hard on."
    )
    alpha: float = Field(default=0.01, description="Hard divergences beyond chance below this p.")
    drift_max: float = Field(
        default=0.05, description="Mean |Δ logprob| a healthy pair stays under."
    )
    same: float = Field(default=0.0005, description="Drift up to this counts as equal logprobs.")


DEFAULTS = Thresholds()


class Divergence(BaseModel):
    """Where B left A on one item."""

    model_config = ConfigDict(extra="forbid")

    id: str
    position: int = Field(description="Index of the first differing token (0-based).")
    kind: Kind
    a_token: str | None = Field(description="A's token there (None: A had ended).")
    b_token: str | None
    a_top: list[tuple[str, float]] = Field(description="A's top-K there.")
    b_top: list[tuple[str, float]]
    prefix: str = Field(description="The last shared text before it.")
    a_logprob: float | None = Field(default=None, description="A's logprob of its own token.")
    b_logprob: float | None = None
    a_in_b: tuple[int, float] | None = Field(
        default=None, description="(rank, logprob) of A's token in B's top-K; None: not in it."
    )
    b_in_a: tuple[int, float] | None = Field(
        default=None, description="(rank, logprob) of B's token in A's top-K; None: not in it."
    )


class FidelityCounts(BaseModel):
    """The figures of a fidelity verdict, as compare and a bisect trial both record them."""

    model_config = ConfigDict(extra="forbid")

    verdict: Verdict
    reason: str = Field(default="", description="Why not comparable, or what decided the verdict.")
    items: int = Field(default=0, description="Items compared (greedy, answered in both).")
    of: int = Field(default=0, description="Items answered in either run.")
    identical: int = 0
    near_tie: int = 0
    hard: int = 0
    retokenized: int = 0
    tokens: int = Field(default=0, description="Shared-prefix tokens compared.")
    drift: float = Field(default=0.0, description="Mean |Δ logprob| over the shared prefixes.")
    p_value: float = Field(
        default=1.0, description="One-sided exact binomial: this many hard at the healthy rate."
    )
    floor: FloorGrade | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # a record written before floors reads back byte for byte
        description="The verdict against the good lane's own A/A floor (compare/floor.py); "
        "None: judged by the default thresholds.",
    )

    def floor_line(self) -> str:
        """Which floor judged it: `floor: defaults`, or the measured one and the distance."""
        if self.floor is None:
            return "floor: defaults"
        return f"{self.floor.units:g} floor units; {self.floor.floor.line()}"


class Fidelity(FidelityCounts):
    """compare's `fidelity`: B's tokens judged against A's."""

    thresholds: Thresholds = Field(default_factory=Thresholds)
    divergences: list[Divergence] = Field(default_factory=list)
    by_item: dict[str, Divergence] = Field(
        default_factory=dict,
        exclude=True,
        description="Every item's first divergence, for show and report (not serialized).",
    )
    item_drift: dict[str, tuple[float, int]] = Field(
        default_factory=dict,
        exclude=True,
        description="Per compared item: (sum of |Δ logprob|, shared tokens), for the floor's "
        "bootstrap (compare/floor.py; not serialized).",
    )

    def line(self) -> str:
        """One line for compare, bisect and sign-off."""
        if self.verdict == "not comparable":
            return f"fidelity: not comparable ({self.reason})"
        head = (
            f"fidelity: {self.verdict} on {self.items} of {self.of} items: {self.identical} "
            f"identical, {self.near_tie} near ties, {self.hard} hard"
        )
        if self.floor is None:
            head += (
                f" (p {self.p_value:.2g} at a healthy rate of "
                f"{self.thresholds.healthy_hard_rate:.0%})"
            )
        return f"{head}, drift {self.drift:.4f} over {self.tokens} tokens; {self.floor_line()}"


def divergence_parts(d: Divergence) -> tuple[str, str]:
    """A's and B's side of a first divergence in words, e.g. `A 'cat' -0.10 (B: rank 2,
    -0.50)` (token text raw: the caller escapes it for its medium)."""

    def side(name: str, other: str, token: str | None, lp: float | None, there: Any) -> str:
        if token is None:
            return f"{name} (ended)"
        where = f"rank {there[0]}, {there[1]:.2f}" if there else f"not in {other}'s top-K"
        return f"{name} {token!r} {lp:.2f} ({other}: {where})"

    return (
        side("A", "B", d.a_token, d.a_logprob, d.a_in_b),
        side("B", "A", d.b_token, d.b_logprob, d.b_in_a),
    )


def _top(token: list[Any] | None) -> list[tuple[str, float]]:
    if token is None:
        return []
    return [(str(a[0]), float(a[1])) for a in token[2] or []]


def _rank(token: list[Any] | None, other: list[Any] | None) -> tuple[int, float] | None:
    """(1-based rank, logprob) of `token` among the alternatives `other` stored."""
    if token is None or other is None:
        return None
    alts = TopK(other)
    lp = alts.get(token)
    if lp is None:
        return None
    return 1 + sum(1 for v in alts.values() if v > lp), lp


def first_divergence(item_id: str, a: TokenTrace, b: TokenTrace, delta: float) -> Divergence | None:
    """Where B first left A on one item (None: identical), with each side's token, its logprob
    and the other side's rank and logprob of it."""
    kind, at, bt, _ = compare_trace(a, b, delta)
    if kind == "identical":
        return None
    ta, tb = a.tokens, b.tokens
    xa = ta[at] if at < len(ta) else None
    xb = tb[bt] if bt < len(tb) else None
    return Divergence(
        id=item_id,
        position=at,
        kind=kind,
        a_token=str(xa[0]) if xa else None,
        b_token=str(xb[0]) if xb else None,
        a_top=_top(xa),
        b_top=_top(xb),
        prefix="".join(str(x[0]) for x in ta[max(0, at - 8) : at])[-60:],
        a_logprob=float(xa[1]) if xa else None,
        b_logprob=float(xb[1]) if xb else None,
        a_in_b=_rank(xa, xb),
        b_in_a=_rank(xb, xa),
    )


def _retokenized(a: list[list[Any]], b: list[list[Any]]) -> bool:
    """From the first differing tokens a[0], b[0] on: the same text split differently, one token
    a strict prefix of the other and the text after agreeing as far as both go; or, with ids, the
    same text under another id (another vocabulary)."""
    x, y = token_key(a[0]), token_key(b[0])
    if x == y:
        return bool(x) and token_id(a[0]) is not None and token_id(b[0]) is not None
    if not x or not y or not (x.startswith(y) or y.startswith(x)):
        return False
    ta = "".join(token_key(t) for t in a)
    tb = "".join(token_key(t) for t in b)
    n = min(len(ta), len(tb))
    return n > max(len(x), len(y)) and ta[:n] == tb[:n]


HELD = 3  # tokens of one character at most that a server may leave out of its logprobs


def _piece(x: list[Any], y: list[Any]) -> bool:
    """x is a piece of a character that sglang renders alone (U+FFFD) where y, from a server that
    renders a token with the pieces before it (vLLM, llama.cpp), is the character: sglang decodes
    every token by itself, so the pieces of a character are all U+FFFD."""
    text = x[0]
    if not text or text.strip("\ufffd") or (ix := token_id(x)) is not None and ix != token_id(y):
        return False
    key = token_key(y)
    return bool(key) and all(ord(c) > 127 for c in key)


def _match(x: list[Any], y: list[Any]) -> bool:
    return same_token(x, y) or _piece(x, y) or _piece(y, x)


def _held(side: list[list[Any]], at: int, other: list[Any]) -> int:
    """How many invisible tokens at `at` a server that drops them would not have listed before
    `other` (0: none). llama.cpp's server leaves out every token that ends inside a UTF-8
    character and lists the one that completes it with the whole character's text; vLLM and
    sglang list each (the first ones as nothing or U+FFFD)."""
    for n in range(1, HELD + 1):
        if at + n >= len(side) or token_key(side[at + n - 1]):
            return 0
        if _match(side[at + n], other):
            return n
    return 0


def _walk(ta: list[list[Any]], tb: list[list[Any]]) -> tuple[int, int, list[float]]:
    """(A's, B's index of the first differing token, |Δ logprob| over the shared prefix)."""
    drift: list[float] = []
    i = j = 0
    while i < len(ta) and j < len(tb):
        sa, sb = ta[i], tb[j]
        if not same_token(sa, sb):
            skip_b = _held(tb, j, sa)
            skip_a = 0 if skip_b else _held(ta, i, sb)
            if not (skip_a or skip_b or _match(sa, sb)):
                break
            i, j = i + skip_a, j + skip_b
            sa, sb = ta[i], tb[j]
        drift.append(abs(float(sa[1]) - float(sb[1])))
        i, j = i + 1, j + 1
    return i, j, drift


def compare_trace(a: TokenTrace, b: TokenTrace, delta: float) -> tuple[Kind, int, int, list[float]]:
    """(kind, A's and B's index of the first differing token, |Δ logprob| over the shared
    prefix) of one item."""
    cap = min(a.cap, b.cap)
    ta, tb = a.tokens[:cap], b.tokens[:cap]
    at, bt, drift = _walk(ta, tb)
    a_end, b_end = at == len(ta), bt == len(tb)
    # A side cut at the cap has not ended there: what both kept is the same.
    if (a_end and b_end) or (a_end and a.total > cap) or (b_end and b.total > cap):
        return "identical", at, bt, drift
    if a_end or b_end:  # one side ended here, the other went on
        went_on = tb[bt] if a_end else ta[at]
        alts = sorted(TopK(went_on).values(), reverse=True)
        unsure = len(alts) > 1 and alts[0] - alts[1] < delta
        return ("near_tie" if unsure else "hard"), at, bt, drift
    x, y = ta[at], tb[bt]
    if _retokenized(ta[at:], tb[bt:]):
        return "retokenized", at, bt, drift
    near = True
    for side in (TopK(x), TopK(y)):
        lx, ly = side.get(x), side.get(y)
        near = near and lx is not None and ly is not None and abs(lx - ly) < delta
    return ("near_tie" if near else "hard"), at, bt, drift


def judge(
    a: dict[str, TokenTrace],
    b: dict[str, TokenTrace],
    ids: Sequence[str],
    thresholds: Thresholds = DEFAULTS,
    *,
    answered: int | None = None,
) -> Fidelity:
    """The verdict of B against A over `ids` (greedy items both answered; those without a
    trace on either side are skipped and counted out)."""
    t = thresholds
    counts: dict[str, int] = {"identical": 0, "near_tie": 0, "hard": 0, "retokenized": 0}
    drift: list[float] = []
    found: list[Divergence] = []
    item_drift: dict[str, tuple[float, int]] = {}
    compared = 0
    for item_id in ids:
        if item_id not in a or item_id not in b:
            continue
        compared += 1
        kind, _, _, d = compare_trace(a[item_id], b[item_id], t.delta)
        counts[kind] += 1
        drift += d
        item_drift[item_id] = (sum(d), len(d))
        if kind != "identical":
            first = first_divergence(item_id, a[item_id], b[item_id], t.delta)
            assert first is not None
            found.append(first)
    by_item = {d.id: d for d in found}
    found.sort(key=lambda d: (d.kind != "hard", d.position))
    base = Fidelity(
        verdict="not comparable",
        items=compared,
        of=answered if answered is not None else len(ids),
        tokens=len(drift),
        drift=round(sum(drift) / len(drift), 5) if drift else 0.0,
        thresholds=t,
        divergences=found[:EXAMPLES],
        by_item=by_item,
        item_drift=item_drift,
        identical=counts["identical"],
        near_tie=counts["near_tie"],
        hard=counts["hard"],
        retokenized=counts["retokenized"],
    )
    if compared == 0:
        base.reason = "no item answered with tokens in both runs"
        return base
    diverged = compared - counts["identical"]
    if counts["retokenized"] and counts["retokenized"] * 2 >= diverged:
        base.reason = (
            f"the runs tokenize differently ({counts['retokenized']} of {compared} items split "
            "the same text into other tokens): compare lanes of one tokenizer"
        )
        return base
    hard = counts["hard"] + counts["retokenized"]
    base.p_value = round(binom_sf(hard, compared, t.healthy_hard_rate), 6)
    if base.p_value < t.alpha:
        base.verdict = "divergent"
        base.reason = f"{hard} hard divergences in {compared} items"
    elif base.drift > t.drift_max:
        base.verdict = "divergent"
        base.reason = f"logprob drift {base.drift:.4f} over the shared tokens"
    elif diverged == 0 and max(drift, default=0.0) <= t.same:
        base.verdict = "identical"
        base.reason = "every compared token equal"
    else:
        base.verdict = "equivalent"
        base.reason = "differences within what healthy lanes show"
    return base


def against_floor(f: Fidelity, floor: Floor | None, cand_floor: Floor | None = None) -> Fidelity:
    """`f` graded against the good lane's A/A floor (compare/floor.py), widened by the candidate's
    own floor when there is one: its verdict becomes the floor's grade. Without a floor, or not
    comparable, `f` stays as the defaults judged it."""
    if floor is None or f.verdict == "not comparable":
        return f
    t = f.thresholds
    g = floor_grade(
        f,
        floor,
        alpha=t.alpha,
        same=t.same,
        drift_max=t.drift_max,
        healthy_rate=t.healthy_hard_rate,
        cand_floor=cand_floor,
    )
    return f.model_copy(update={"floor": g, "verdict": g.grade, "reason": g.reason})


def not_comparable(reason: str) -> Fidelity:
    return Fidelity(verdict="not comparable", reason=reason)


def _advice(why: str | None) -> str:
    """Why a run has no tokens, and what to do about it."""
    if why is None:
        return "scored before token capture; re-score it to compare tokens"
    if "--no-logprobs" in why:
        return f"{why}; re-score it without --no-logprobs to compare tokens"
    return f"{why}; its endpoint sends none, so the runs compare by answers only"


def _greedy(record: RunRecord) -> bool:
    return record.sampling.get("temperature", 0.0) == 0.0


def _answered(items: Iterable[ItemRecord]) -> set[str]:
    return {r.id for r in items if r.response is not None}


def records_fidelity(
    run_a: RunRecord,
    items_a: list[ItemRecord],
    traces_a: dict[str, TokenTrace],
    run_b: RunRecord,
    items_b: list[ItemRecord],
    traces_b: dict[str, TokenTrace],
    thresholds: Thresholds = DEFAULTS,
    floor: Floor | None = None,
    cand_floor: Floor | None = None,
) -> Fidelity:
    """Fidelity of two loaded runs: the checks that make them comparable, then `judge`, graded
    against A's `floor` when there is one (widened by B's own `cand_floor`)."""
    for side, run, traces in (("A", run_a, traces_a), ("B", run_b, traces_b)):
        why = run.tokens_unavailable
        if why or not traces:
            return not_comparable(f"run {side} ({run.run_id}) has no tokens: {_advice(why)}")
        if not _greedy(run):
            return not_comparable(
                f"run {side} was sampled at temperature {run.sampling.get('temperature')}: "
                "tokens are comparable on greedy runs only"
            )
    both = _answered(items_a) & _answered(items_b)
    order = [r.id for r in items_a if r.id in both]
    f = judge(
        traces_a, traces_b, order, thresholds, answered=len(_answered(items_a) | _answered(items_b))
    )
    f = against_floor(f, floor, cand_floor)
    if _deterministic(run_a) and _deterministic(run_b) and f.verdict != "identical":
        f.reason += (
            "; both runs were deterministic (--deterministic), so identical was expected: "
            "the engine's batch-invariant switches leaked, or the lanes differ"
        )
    return f


def _deterministic(run: RunRecord) -> bool:
    """Whether the run booted its contract in deterministic mode (run.json's contract)."""
    return bool(run.contract and run.contract.get("deterministic"))


def runs_fidelity(
    store: RunStore,
    ref_a: str,
    ref_b: str,
    thresholds: Thresholds = DEFAULTS,
    floor: Floor | None = None,
    cand_floor: Floor | None = None,
) -> Fidelity:
    """Load two stored runs and judge B's tokens against A's (against A's floor, if given,
    widened by B's own)."""
    run_a, run_b = store.load_run(ref_a), store.load_run(ref_b)
    return records_fidelity(
        run_a,
        store.load_items(run_a.run_id),
        load_traces(store.run_dir(run_a.run_id)),
        run_b,
        store.load_items(run_b.run_id),
        load_traces(store.run_dir(run_b.run_id)),
        thresholds,
        floor,
        cand_floor,
    )


def runs_floor(
    store: RunStore,
    ref_a: str,
    partners: Sequence[str],
    thresholds: Thresholds = DEFAULTS,
    option: str = "--floor",
    side: str = "A",
) -> Floor:
    """A's floor from its A/A partners: stored runs of the same lane on the same items (a
    second score of the same contract, another boot); every pair with A pooled."""
    run_a = store.load_run(ref_a).run_id
    pairs: list[Fidelity] = []
    names: list[str] = []
    for ref in partners:
        partner = store.load_run(ref).run_id
        if partner == run_a:
            raise UsageError(
                f"{option} {ref} is run {side} itself; name another run of {side}'s lane"
            )
        f = runs_fidelity(store, run_a, partner, thresholds)
        if f.verdict == "not comparable":
            raise UsageError(f"{option} {ref} cannot give {side}'s floor: {f.reason}")
        pairs.append(f)
        names.append(partner)
    floor = floor_of(pairs, f"{run_a} vs {', '.join(names)}")
    if floor is None:
        raise UsageError(f"{option} {', '.join(partners)}: no item compared with run {side}")
    return floor


SERIAL = "serial"  # a probe's items asked again one at a time: the lane's own A/A pair


def serial_suite(suite: Suite, items: list[Item], suffix: str) -> Suite:
    """`items` again as `<id>~serial`, to be asked one at a time after the same items were
    asked at once: `serial_pair` judges the one against the other."""
    return derived_suite(suite, suffix, [copy_item(i, SERIAL) for i in items])


def serial_copies(traces: dict[str, TokenTrace]) -> dict[str, TokenTrace]:
    """The `id~serial` copies among `traces` (serial_suite's), by the original item's id."""
    suffix = f"~{SERIAL}"
    return {i[: -len(suffix)]: t for i, t in traces.items() if i.endswith(suffix)}


def serial_pair(traces: dict[str, TokenTrace]) -> Fidelity | None:
    """One boot's A/A pair: each probe item as asked in the burst against the same item asked
    again one at a time (`id~serial`); None without serial traces."""
    serial = serial_copies(traces)
    ids = [i for i in traces if i in serial]
    return judge(traces, serial, ids) if ids else None


def measure_floor(
    traces: dict[str, TokenTrace],
    second: dict[str, TokenTrace] | None = None,
    *,
    side: str = "the good side",
    knobs: str | None = None,
) -> Floor | None:
    """A lane's noise floor from its own probe (serial against the burst); with a second
    boot's probe (bisect --floor-boots 2), also that boot's serial pair and the two boots'
    bursts against each other, pooled. `knobs` names the harmless knobs the second boot ran
    with (--floor-knob): the floor is then what those knobs change, the
    two bursts against each other and the second boot's serial pair (the first side's own
    pair left out: on a lane that answers alike at any load it is 0 and would halve every
    rate). `side` names the lane in the floor's source."""
    first = serial_pair(traces)
    if first is None:
        return None
    if second is None:
        return floor_of([first], f"serial vs burst on {side}")
    ids = [i for i in first.item_drift if i in second]
    across = [judge(traces, second, ids)] + [f for f in [serial_pair(second)] if f is not None]
    if knobs is not None:
        return floor_of(
            across, f"{side} against itself with {knobs}, and that boot's serial vs burst"
        )
    return floor_of([first, *across], f"serial vs burst and across 2 boots of {side}")


def fit_thresholds(healthy: list[Fidelity], base: Thresholds = DEFAULTS) -> Thresholds:
    """Thresholds from healthy pairs: the hard rate they show (with one pseudo-count, so a
    calibration without any hard divergence still allows some) and their largest drift, x2."""
    items = sum(f.items for f in healthy)
    if not items:
        return base
    hard = sum(f.hard + f.retokenized for f in healthy)
    rate = max(base.healthy_hard_rate, (hard + 1) / (items + 2))
    drift = max((f.drift for f in healthy), default=0.0)
    return base.model_copy(
        update={
            "healthy_hard_rate": round(rate, 4),
            "drift_max": round(max(base.drift_max, 2 * drift), 4),
        }
    )

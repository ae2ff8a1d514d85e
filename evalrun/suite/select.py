"""Which items of a suite a run asks: explicit ids, categories, tags, then a stratified sample.

`--limit N` draws N items from every category in proportion to its size (each category gets at
least one while N allows), with a seeded `random.Random` per category, so the same seed picks the
same items on every machine and a short run still touches every category. The chosen items keep
suite-file order. run.json records the criteria and the chosen ids (`Selection.record`); resume
and summaries re-select from that record (`Selection.from_record`), so they never depend on how a
later evalrun would draw.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import UsageError
from evalrun.store.records import SelectionRecord
from evalrun.suite.load import Item, Suite

DEFAULT_SEED = 0


class Selection(BaseModel):
    """The criteria that pick a run's items (all optional: none means the whole suite)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: tuple[str, ...] | None = Field(default=None, description="Exactly these item ids.")
    categories: tuple[str, ...] | None = Field(default=None, description="Only these categories.")
    tags: tuple[str, ...] | None = Field(default=None, description="Items with one of these tags.")
    limit: int | None = Field(default=None, description="At most this many, drawn per category.")
    seed: int = Field(default=DEFAULT_SEED, description="Seed of the stratified draw.")
    stratified: bool = Field(
        default=True,
        description="False only for runs recorded before the stratified draw: "
        "their limit took the first N items in file order.",
    )

    @property
    def is_everything(self) -> bool:
        return not (self.items or self.categories or self.tags or self.limit is not None)

    def pick(self, suite: Suite) -> list[Item]:
        """The chosen items in suite order; UsageError when a criterion names nothing known."""
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"--limit must be at least 1, got {self.limit}")
        pool = list(suite.items)
        if self.items:
            known = {i.id for i in pool}
            unknown = [i for i in self.items if i not in known]
            if unknown:
                raise UsageError(
                    f"{suite.label} has no item {', '.join(unknown[:5])}"
                    f"{' ...' if len(unknown) > 5 else ''}; list ids with `evalrun suite show "
                    f"{suite.name} --json` or drop them from --items"
                )
            wanted = set(self.items)
            pool = [i for i in pool if i.id in wanted]
        if self.categories:
            names = sorted({i.category for i in suite.items})
            unknown = [c for c in self.categories if c not in names]
            if unknown:
                raise UsageError(
                    f"{suite.label} has no category {', '.join(unknown)}; "
                    f"use one of {', '.join(names)}"
                )
            pool = [i for i in pool if i.category in self.categories]
        if self.tags:
            pool = [i for i in pool if set(self.tags).intersection(i.tags)]
        if not pool:
            raise UsageError(
                f"no items of {suite.label} match {self.describe()}; widen the selection"
            )
        if self.limit is None or self.limit >= len(pool):
            return pool
        if not self.stratified:
            return pool[: self.limit]
        return stratified_sample(pool, self.limit, self.seed)

    def record(self, chosen: Sequence[Item]) -> SelectionRecord:
        """What run.json keeps: the criteria given plus the ids chosen (empty: the whole suite)."""
        out: SelectionRecord = {}
        if self.is_everything:
            return out
        if self.items is not None:
            out["items"] = list(self.items)
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.tags is not None:
            out["tags"] = list(self.tags)
        if self.limit is not None:
            out["limit"], out["seed"] = self.limit, self.seed
        out["ids"] = [i.id for i in chosen]
        return out

    @classmethod
    def from_record(cls, data: SelectionRecord) -> Selection:
        """The selection a stored run used: its chosen ids, or (older runs) its criteria."""
        if data.get("ids"):
            return cls(items=tuple(data["ids"]))
        return cls(
            tags=tuple(data["tags"]) if data.get("tags") else None,
            limit=data.get("limit"),
            stratified=False,
        )

    def describe(self) -> str:
        """In words, for messages and report headers: `limit 40 (seed 0), tags probe`."""
        parts = []
        if self.items:
            parts.append(f"{len(self.items)} listed item(s)")
        if self.categories:
            parts.append(f"categories {', '.join(self.categories)}")
        if self.tags:
            parts.append(f"tags {', '.join(self.tags)}")
        if self.limit is not None:
            how = f"drawn across categories, seed {self.seed}" if self.stratified else "file order"
            parts.append(f"limit {self.limit} ({how})")
        return ", ".join(parts) or "the whole suite"


def stratified_sample(pool: Sequence[Item], n: int, seed: int) -> list[Item]:
    """`n` items of `pool`, spread over its categories in proportion to their sizes, each
    category drawn with its own seeded generator; suite order kept."""
    by_cat: dict[str, list[Item]] = {}
    for item in pool:
        by_cat.setdefault(item.category, []).append(item)
    counts = allocate({c: len(v) for c, v in by_cat.items()}, n, seed)
    chosen: set[str] = set()
    for cat, k in counts.items():
        rng = random.Random(f"{seed}/{cat}")
        chosen.update(i.id for i in rng.sample(by_cat[cat], k))
    return [i for i in pool if i.id in chosen]


def allocate(sizes: dict[str, int], n: int, seed: int) -> dict[str, int]:
    """How many of `n` each category gets: at least one each while n allows, the rest by
    largest remainder of its proportional share (ties in category order). With fewer slots than
    categories, a seeded draw picks which categories get one."""
    cats = list(sizes)
    if n < len(cats):
        return {c: 1 for c in random.Random(f"{seed}/categories").sample(cats, n)}
    total = sum(sizes.values())
    share = {c: n * sizes[c] / total for c in cats}
    alloc = {c: min(sizes[c], max(1, math.floor(share[c]))) for c in cats}
    while sum(alloc.values()) > n:  # the minimum of one pushed us over: take from the richest
        c = max((c for c in cats if alloc[c] > 1), key=lambda c: alloc[c] - share[c])
        alloc[c] -= 1
    while sum(alloc.values()) < n:
        c = max((c for c in cats if alloc[c] < sizes[c]), key=lambda c: share[c] - alloc[c])
        alloc[c] += 1
    return alloc


def describe_record(data: SelectionRecord) -> str:
    """A stored run's selection in words: `limit 40 (drawn across categories, seed 0): 40 items`."""
    if not data:
        return "the whole suite"
    criteria = Selection(
        items=tuple(data["items"]) if data.get("items") else None,
        categories=tuple(data["categories"]) if data.get("categories") else None,
        tags=tuple(data["tags"]) if data.get("tags") else None,
        limit=data.get("limit"),
        seed=data.get("seed", DEFAULT_SEED),
        stratified="ids" in data,
    )
    ids = data.get("ids")
    return criteria.describe() + (f": {len(ids)} items" if ids else "")

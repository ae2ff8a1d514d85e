"""--limit draws across categories (seeded), --items / --category pick explicitly, run.json
records the choice, and resume re-asks exactly the recorded items."""

from __future__ import annotations

from collections import Counter

import pytest

from evalrun.base.errors import UsageError
from evalrun.suite.load import load_suite
from evalrun.suite.select import Selection, allocate, describe_record


@pytest.fixture(scope="module")
def core():
    return load_suite("core")


def test_limit_touches_every_category_in_proportion(core) -> None:
    picked = Selection(limit=40).pick(core)
    assert len(picked) == 40
    sizes = Counter(i.category for i in core.items)
    got = Counter(i.category for i in picked)
    assert set(got) == set(sizes)  # file order would give canary, math, logic only
    for cat, n in got.items():
        assert abs(n - 40 * sizes[cat] / len(core.items)) < 1.5, (cat, n)
    order = [i.id for i in core.items]
    assert [i.id for i in picked] == sorted((i.id for i in picked), key=order.index)


def test_limit_is_deterministic_by_seed(core) -> None:
    a = [i.id for i in Selection(limit=40, seed=7).pick(core)]
    assert a == [i.id for i in Selection(limit=40, seed=7).pick(core)]
    assert a != [i.id for i in Selection(limit=40, seed=8).pick(core)]


def test_fewer_slots_than_categories_and_more_than_items(core) -> None:
    three = Selection(limit=3, seed=1).pick(core)
    assert len(three) == 3 and len({i.category for i in three}) == 3
    assert len(Selection(limit=10_000).pick(core)) == len(core.items)


def test_allocate_sums_to_n_and_respects_sizes() -> None:
    sizes = {"a": 1, "b": 50, "c": 3}
    for n in range(1, 55):
        alloc = allocate(sizes, n, 0)
        assert sum(alloc.values()) == n
        assert all(alloc[c] <= sizes[c] for c in alloc)


def test_items_and_category(core) -> None:
    picked = Selection(items=("math-002", "canary-001")).pick(core)
    assert [i.id for i in picked] == ["canary-001", "math-002"]  # suite order
    cats = {i.category for i in Selection(categories=("tool", "code"), limit=5).pick(core)}
    assert cats <= {"tool", "code"}
    with pytest.raises(UsageError, match="no item nope-1"):
        Selection(items=("nope-1",)).pick(core)
    with pytest.raises(UsageError, match="no category maths; use one of .*math"):
        Selection(categories=("maths",)).pick(core)
    with pytest.raises(UsageError, match="at least 1"):
        Selection(limit=0).pick(core)


def test_record_roundtrip_and_legacy(core) -> None:
    sel = Selection(limit=20, seed=3, tags=None)
    picked = sel.pick(core)
    rec = sel.record(picked)
    assert rec["limit"] == 20 and rec["seed"] == 3 and rec["ids"] == [i.id for i in picked]
    assert Selection.from_record(rec).pick(core) == picked
    assert "limit 20 (drawn across categories, seed 3): 20 items" == describe_record(rec)
    assert Selection().record(core.items) == {}
    legacy = Selection.from_record({"limit": 5})  # a run recorded before the stratified draw
    assert [i.id for i in legacy.pick(core)] == [i.id for i in core.items[:5]]


def test_score_records_the_selection_and_resume_keeps_it(fake_server, make_suite, tmp_path):
    from fakeserver import simple_item

    from evalrun.cli import main
    from evalrun.store import RunStore

    items = [simple_item(n, category=c) for c in ("a", "b", "c") for n in range(6)]
    suite = make_suite(items)
    results = tmp_path / "results"
    base = ["--endpoint", fake_server.base_url, "--suite", str(suite), "--results", str(results)]
    rc = main(["score", *base, "--limit", "6", "--seed", "2", "--no-progress", "--name", "s"])
    assert rc == 0
    store = RunStore(results)
    record = store.load_run("latest")
    ids = record.selection["ids"]
    assert len(ids) == 6 and {i.split("-")[0] for i in ids} == {"a", "b", "c"}
    asked = sorted(r["messages"][0]["content"] for r in fake_server.requests)
    assert len(asked) == 6
    assert main(["score", *base, "--resume", record.run_id, "--limit", "3"]) == 2
    assert main(["score", *base, "--resume", record.run_id, "--no-progress"]) == 0
    assert len(fake_server.requests) == 6  # the recorded items were all done: nothing re-drawn
    pick = ["--items", "a-001,c-005", "--category", "c", "--name", "t", "--no-progress"]
    assert main(["score", *base, *pick]) == 0
    assert [r.id for r in store.load_items(store.resolve("latest:t"))] == ["c-005"]

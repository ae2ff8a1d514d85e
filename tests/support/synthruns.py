"""Synthetic run records for compare / signoff / plot tests, written through RunStore.

`core_like()` is the seeds' shape: 184 items in 8 categories. `items_for()` builds item records
from a category layout plus sets of ids that fail, error, garble or carry a diagnosis;
`write_run()` stores them with a run.json whose summary matches.
"""

from __future__ import annotations

from collections.abc import Iterable

from evalrun.store import (
    CategoryTally,
    Diagnosis,
    ItemRecord,
    RunRecord,
    RunStore,
    SuiteRef,
    Summary,
    dump_json_line,
)

SUITE_SHA = "a" * 64
OTHER_SHA = "b" * 64
SOUP = {"name": "soup", "family": "non-words", "score": 0.9, "reason": "token soup"}

CORE_LIKE = {
    "code": 20,
    "instruction": 20,
    "json": 20,
    "long-context": 20,
    "math": 30,
    "multilingual": 20,
    "reasoning": 30,
    "tools": 24,
}  # 184 items


def ids_of(categories: dict[str, int]) -> list[str]:
    """Item ids in suite order: <category>-000, <category>-001, ..."""
    return [f"{cat}-{k:03d}" for cat, n in categories.items() for k in range(n)]


def items_for(
    categories: dict[str, int] = CORE_LIKE,
    *,
    failing: Iterable[str] = (),
    errors: Iterable[str] = (),
    garbled: Iterable[str] = (),
    skip: Iterable[str] = (),
    diagnoses: dict[str, Iterable[str]] | None = None,
    answer: str = "ok",
) -> list[ItemRecord]:
    """Item records: passed unless listed in `failing` / `errors`; `skip` leaves an item out."""
    failing, errors, garbled, skip = set(failing), set(errors), set(garbled), set(skip)
    diag_of: dict[str, list[str]] = {}
    for kind, ids in (diagnoses or {}).items():
        for item_id in ids:
            diag_of.setdefault(item_id, []).append(kind)
    out = []
    for item_id in ids_of(categories):
        if item_id in skip:
            continue
        cat = item_id.rsplit("-", 1)[0]
        if item_id in errors:
            out.append(
                ItemRecord(
                    id=item_id,
                    category=cat,
                    status="error",
                    request={"model": "m"},
                    error={"kind": "timeout", "message": "read timed out after 120 s"},
                )
            )
            continue
        passed = item_id not in failing
        text = answer if passed else f"wrong answer to {item_id}"
        out.append(
            ItemRecord(
                id=item_id,
                category=cat,
                status="passed" if passed else "failed",
                request={"model": "m"},
                response={"content": text, "finish_reason": "stop", "tool_calls": []},
                grade={"passed": passed, "detail": "matched" if passed else "expected 42"},
                diagnoses=diag_of.get(item_id, []),
                garble={
                    "garbled": True,
                    "score": 0.9,
                    "kind": "non-words",
                    "signals": [SOUP],
                }
                if item_id in garbled
                else None,
            )
        )
    return out


def summarize(items: list[ItemRecord], total: int, hints: dict[str, str] | None = None) -> Summary:
    """A Summary consistent with the items (what the score owner's runner writes)."""
    cats: dict[str, CategoryTally] = {}
    for it in items:
        t = cats.setdefault(it.category, CategoryTally())
        t.total += 1
        t.passed += it.status == "passed"
        t.errors += it.status == "error"
        t.garbled += it.garbled
    passed = sum(i.status == "passed" for i in items)
    answered = sum(i.status != "error" for i in items)
    garbled = sum(t.garbled for t in cats.values())
    kinds: dict[str, int] = {}
    for it in items:
        for k in it.diagnoses:
            kinds[k] = kinds.get(k, 0) + 1
    return Summary(
        passed=passed,
        total=total,
        score=round(100 * passed / total) if total else 0,
        errors=sum(i.status == "error" for i in items),
        garbled=garbled,
        garble_rate=garbled / answered if answered else 0.0,
        diagnoses=[
            Diagnosis(kind=k, count=n, hint=(hints or {}).get(k, f"fix {k}"))
            for k, n in sorted(kinds.items())
        ],
        categories=cats,
    )


def write_run(
    store: RunStore,
    run_id: str,
    items: list[ItemRecord],
    *,
    sha: str = SUITE_SHA,
    status: str = "complete",
    total: int | None = None,
    started_at: str | None = None,
    summary: bool = True,
    version: int | None = None,
    trial: bool = False,
) -> RunRecord:
    """Store run.json + items.jsonl; label is the part of the id after the time; the suite
    version is 1 for SUITE_SHA and 2 for any other unless `version` says."""
    total = total if total is not None else len(items)
    label = run_id.split("_", 2)[-1]
    record = RunRecord(
        run_id=run_id,
        label=label,
        evalrun_version="0.1.0",
        suite=SuiteRef(name="core", version=version or (1 if sha == SUITE_SHA else 2), sha256=sha),
        endpoint="http://127.0.0.1:8000/v1",
        model_served=label,
        started_at=started_at or f"{run_id[:10]}T{run_id[11:13]}:{run_id[13:15]}:00+00:00",
        ended_at=None,
        status=status,
        summary=summarize(items, total) if summary else None,
        trial=trial,
    )
    store.write_run(record)
    # The store's own line format, written at once: append_item fsyncs every line (~7 ms each)
    with (store.run_dir(run_id) / "items.jsonl").open("w", encoding="utf-8", newline="") as fh:
        fh.writelines(dump_json_line(it) for it in items)
    return record


def seeds_pair(store: RunStore) -> tuple[RunRecord, RunRecord]:
    """The seeds' story: 168/184 then 170/184, with 2 pass->fail and 4 fail->pass flips."""
    ids = ids_of(CORE_LIKE)
    both = [ids[i] for i in (5, 27, 48, 66, 90, 101, 115, 130, 140, 150, 170, 183)]  # 12
    a_only = ["math-003", "tools-011", "json-004", "code-007"]  # fail->pass in B
    b_only = ["multilingual-002", "long-context-017"]  # pass->fail in B
    a = write_run(
        store, "2026-09-28_203145_vllm-kk-nightly-dflash", items_for(failing=both + a_only)
    )
    b = write_run(
        store, "2026-09-28_232811_vllm-sparkring-contract", items_for(failing=both + b_only)
    )
    return a, b


def core_earlier_and_now() -> tuple[dict, dict]:
    """write_run keywords for a run of the core suite's previous version and one of today's,
    with their real hashes."""
    from evalrun.suite.earlier import earlier_version
    from evalrun.suite.load import load_suite

    suite = load_suite("core")
    before = earlier_version(suite, suite.version - 1)
    assert before is not None
    return {"sha": before.sha256, "version": suite.version - 1}, {
        "sha": suite.sha256,
        "version": suite.version,
    }

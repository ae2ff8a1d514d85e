"""The shipped core suite: exactly 184 items, hash-verified, every example graded as labelled."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from evalrun.endpoint.response import example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.check import check_suite
from evalrun.suite.load import SUITES_DIR, file_sha256, load_suite

CORE = SUITES_DIR / "core"
PLAN = {
    "canary": 12,
    "math": 24,
    "logic": 22,
    "instruction": 22,
    "factual": 22,
    "multilingual": 20,
    "code": 16,
    "tool": 16,
    "long-context": 8,
    "structured": 22,
}
SUITE = load_suite("core")


def test_exactly_184_items_in_the_planned_categories_and_order():
    assert len(SUITE.items) == 184
    counts = Counter(i.category for i in SUITE.items)
    assert dict(counts) == PLAN
    order = list(dict.fromkeys(i.category for i in SUITE.items))
    assert order == list(PLAN)


def test_manifest_matches_items():
    manifest = json.loads((CORE / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "core"
    assert manifest["sha256"] == file_sha256(CORE / "items.jsonl")
    assert manifest["categories"] == PLAN
    assert SUITE.label == f"core-v{manifest['version']}"


def test_suite_check_passes():
    report = check_suite(CORE)
    assert report.ok, "\n".join(f"{p.item}: {p.message}" for p in report.problems)


@pytest.mark.parametrize("item", SUITE.items, ids=lambda i: i.id)
def test_accept_examples_pass_and_rejects_fail(item):
    assert len(item.accept) >= 2 and len(item.reject) >= 1
    for example in item.accept:
        g = grade(item, example_to_response(example))
        assert g.passed, f"accept {example!r}: {g.detail}"
    for example in item.reject:
        g = grade(item, example_to_response(example))
        assert not g.passed, f"reject {example!r}: {g.detail}"


def test_probe_set():
    probes = SUITE.select(tags={"probe"})
    assert 14 <= len(probes) <= 18
    cats = {i.category for i in probes}
    assert {"canary", "multilingual", "tool", "long-context"} <= cats
    assert any(i.max_tokens > 200 for i in probes), "a probe must ask for a >150-token answer"


def test_long_context_needles_are_stored_not_generated():
    long_items = [i for i in SUITE.items if i.category == "long-context"]
    sizes = sorted(sum(len(str(m.get("content", ""))) for m in i.messages) for i in long_items)
    assert sizes[-1] > 60_000  # the ~24K-token haystack is in the file

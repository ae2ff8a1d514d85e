"""The labeled garble corpus: its make-up, and the detector's targets measured on it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evalrun.grading.garble import detect

sys.path.insert(0, str(Path(__file__).parent))
from support.garble_corpus import CORPUS, holdout, load_corpus


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    return load_corpus()


# ------------------------------------------------------------------ the corpus and the targets


def test_corpus_rows_are_well_formed_and_sourced(corpus):
    for row in corpus:
        assert set(row) == {"text", "label", "expect", "source"}, row
        assert row["label"] in ("clean", "garbled"), row
        assert row["text"].strip(), row
        assert row["source"], row
        assert row["expect"] is None or all(isinstance(e, str) for e in row["expect"])
    assert sum(p.stat().st_size for p in CORPUS.glob("*.jsonl")) < 1_500_000


def test_corpus_has_the_required_mix(corpus):
    clean = [r for r in corpus if r["label"] == "clean"]
    garbled = [r for r in corpus if r["label"] == "garbled"]
    assert len(clean) >= 300 and len(garbled) >= 300
    assert sum(r["source"].startswith("smollm2-ref/") for r in clean) >= 100
    assert sum(r["source"].startswith("smollm2-mismap-") for r in garbled) >= 50
    kinds = {r["source"].split("/")[1] for r in garbled if r["source"].startswith("synthetic/")}
    assert {"multilingual-soup", "flood", "cycle", "mojibake", "fffd", "pad", "collapse"} <= kinds
    written = {r["source"].split("/")[1] for r in clean if r["source"].startswith("written/")}
    assert {"ru", "zh", "code", "json", "math", "table", "ramble", "wrong"} <= written


def _rates(rows: list[dict]) -> tuple[float, float, list[str]]:
    misses = []
    fp = fn = n_clean = n_garbled = 0
    for r in rows:
        v = detect(r["text"], r["expect"])
        if r["label"] == "clean":
            n_clean += 1
            if v.garbled:
                fp += 1
                misses.append(f"FP {r['source']}: {v.reasons}")
        else:
            n_garbled += 1
            if not v.garbled:
                fn += 1
                misses.append(f"FN {r['source']}: {v.score} {r['text'][:80]!r}")
    return fp / max(1, n_clean), 1 - fn / max(1, n_garbled), misses


def test_targets_on_the_whole_corpus(corpus):
    fp_rate, catch_rate, misses = _rates(corpus)
    print(f"false positives {fp_rate:.2%}, caught {catch_rate:.2%}")
    assert fp_rate <= 0.01, "\n".join(misses)
    assert catch_rate >= 0.98, "\n".join(misses)


def test_targets_on_the_holdout_quarter(corpus):
    rows = [r for r in corpus if holdout(r)]
    assert len(rows) > 100
    fp_rate, catch_rate, misses = _rates(rows)
    print(f"holdout: false positives {fp_rate:.2%}, caught {catch_rate:.2%}")
    assert fp_rate <= 0.02, "\n".join(misses)
    assert catch_rate >= 0.96, "\n".join(misses)  # measured 97.3% (3 misses)


def test_core_suite_accept_examples_are_never_garble():
    """Every answer the core suite accepts as correct passes the garble detector, judged with the
    languages the runner uses (the item's own, else its category's default)."""
    from evalrun.endpoint.response import example_to_response
    from evalrun.grading.garble import check_response, expected_for
    from evalrun.suite.load import load_suite

    suite = load_suite("core", verify=False)
    flagged = []
    for item in suite.items:
        for example in item.accept:
            verdict = check_response(
                example_to_response(example), expected_for(item.languages, item.category)
            )
            if verdict and verdict["garbled"]:
                flagged.append(f"{item.id}: {verdict['reasons']}")
    assert not flagged, "\n".join(flagged)

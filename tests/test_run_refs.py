"""One resolver for every run reference: ids, `latest`, `latest:<label>` and tags, for score and
slope runs alike; one way to claim a run folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.base.errors import RunNotFound
from evalrun.slope.record import resolve_slope
from evalrun.store import RunStore, claim_folder


def _store(root: Path) -> RunStore:
    for name, marker in [
        ("2026-11-30_100000_vllm", "run.json"),
        ("2026-11-30_110000_sglang", "run.json"),
        ("slope-2026-11-30_100500_vllm", "slope.json"),
        ("slope-2026-11-30_120000_sglang", "slope.json"),
    ]:
        (root / name).mkdir(parents=True)
        (root / name / marker).write_text("{}")
    return RunStore(root)


def test_latest_and_labels_resolve_within_a_kind(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.resolve("latest") == "2026-11-30_110000_sglang"
    assert store.resolve("latest:vllm") == "2026-11-30_100000_vllm"
    assert store.resolve("latest", kind="slope") == "slope-2026-11-30_120000_sglang"
    assert store.resolve("latest:vllm", kind="slope") == "slope-2026-11-30_100500_vllm"
    assert store.resolve("2026-11-30_100500_vllm", kind="slope") == "slope-2026-11-30_100500_vllm"
    with pytest.raises(RunNotFound, match="no slope run matches 'latest:llama'"):
        store.resolve("latest:llama", kind="slope")


def test_a_tagged_slope_run_is_found_by_slope_compare(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.set_tag("fp8-anchor", "latest:vllm")  # no score run is tagged: the slope run is not
    assert store.tags()["fp8-anchor"] == "2026-11-30_100000_vllm"
    store.set_tag("slope-anchor", "slope-2026-11-30_100500_vllm")
    path = resolve_slope("slope-anchor", tmp_path)
    assert path == tmp_path / "slope-2026-11-30_100500_vllm" / "slope.json"
    with pytest.raises(RunNotFound):
        store.set_tag("nothing", "no-such-run")


def test_claimed_folders_never_collide(tmp_path: Path) -> None:
    first = claim_folder(tmp_path, "2026-11-30_100000_x")
    second = claim_folder(tmp_path, "2026-11-30_100000_x")
    assert (first.name, second.name) == ("2026-11-30_100000_x", "2026-11-30_100000_x-2")
    assert first.is_dir() and second.is_dir()

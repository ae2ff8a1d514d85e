"""Shared fixtures: a fake OpenAI-compatible endpoint and small suites written to tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakeserver import FakeServer, simple_item, write_suite


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

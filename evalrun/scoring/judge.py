"""Grading beside the requests: a run of many items grades its answers in a second process.

Grading is CPU work: the graders' import and the garble detector's word lists cost ~0.5 s, loaded
before the first answer arrives, then grading takes ~3 ms an answer on the core suite. Done on the
event loop, every answer delays the next requests of every worker. A run with at least
`APART_FROM` answers to grade forks one grading process at its start (before the run starts a
thread or opens a connection), which imports the graders (and tells the run which kinds they
register) and loads what grading needs while the run imports its HTTP client, connects and asks,
then grades each answer as it arrives while the loop keeps asking; the run's own process never
imports the graders. The verdicts are the same function's (`grading.registry.grade`); a run with
fewer items, a process with threads already (fork would copy them half-way), or a grading process
that died, grades in this process instead.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from evalrun.base.jsondata import collector_paused

if TYPE_CHECKING:
    from evalrun.endpoint.response import Response
    from evalrun.grading.registry import Grade

APART_FROM = 64  # answers to grade; below this the process costs more than it saves


class Judge:
    """Grades answers for one run: in a forked grading process when `apart`, else inline."""

    def __init__(self, *, apart: bool, items: list[Any] | None = None) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._kinds: Future[frozenset[str]] | None = None
        self._specs = [(i.id, i.grader.kind, i.grader.params()) for i in items or []]
        self._problem: Future[str | None] | None = None
        if apart and threading.active_count() == 1:
            try:
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_in_child,
                    initargs=(os.getpid(),),
                )
                self._kinds = self._pool.submit(_registered)  # forks now: imports the graders
                self._problem = self._pool.submit(_params_problem, self._specs)
                self._pool.submit(_warm)  # then loads the word lists meanwhile
            except (OSError, ValueError):  # no fork here, or no process to be had
                self._pool, self._kinds = None, None

    @property
    def apart(self) -> bool:
        """Whether answers are graded in the grading process."""
        return self._pool is not None

    async def kinds(self, *, here: bool = False) -> frozenset[str]:
        """The grader kinds registered: the grading process's answer when apart (asked as it
        started), else, or with `here`, this process's (it then imports the graders)."""
        if self._kinds is not None and self._pool is not None and not here:
            try:
                return await asyncio.wrap_future(self._kinds)
            except BrokenProcessPool:  # the grading process died (killed, out of memory)
                self._pool = None
        return _registered()

    async def params_problem(self) -> str | None:
        """The first of the run's items whose grader parameters do not validate, in one line
        (what `suite check` reports), or None: checked before a run is created, in the grading
        process when apart (asked as it started: it has the graders imported), else here."""
        if self._problem is not None and self._pool is not None:
            try:
                return await asyncio.wrap_future(self._problem)
            except BrokenProcessPool:
                self._pool = None
        return _params_problem(self._specs)

    async def grade(self, item: Any, response: Response) -> Grade:
        """The item's verdict on this response (GradeTimeout as `grade` raises it)."""
        if self._pool is not None:
            try:
                return await asyncio.wrap_future(self._pool.submit(_grade, item, response))
            except BrokenProcessPool:  # the grading process died (killed, out of memory)
                self._pool = None
        return _grade(item, response)

    def close(self) -> None:
        """Let the grading process go (it exits once its queue closes); work not started is
        dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _grade(item: Any, response: Response) -> Grade:
    from evalrun.grading.registry import grade

    return grade(item, response)


def _params_problem(specs: list[tuple[str, str, Any]]) -> str | None:
    from evalrun.base.errors import SuiteError
    from evalrun.grading.registry import GRADERS, validate_params

    for item_id, kind, params in specs:
        if kind not in GRADERS:
            continue  # check_graders names unknown kinds
        try:
            validate_params(kind, params)
        except SuiteError as exc:
            return f"item {item_id}: {exc}"
    return None


def _registered() -> frozenset[str]:
    with collector_paused():  # an import makes no garbage; see _warm
        from evalrun.grading.registry import GRADERS

    return frozenset(GRADERS)


def _warm() -> None:
    """Import grading and load the word lists and pairs that nearly every run's answers need
    (garble.lexicon.preload), while the run imports its HTTP client and sends its first
    requests: the grading then keeps pace with the answers instead of trailing them.

    What is loaded lives as long as the grading process, so the collector is paused while it
    loads (a full collection in the middle walked the half-built lists: ~0.05-0.09 s) and it is
    frozen afterwards (gc.freeze): no collection while answers are graded walks it again."""
    with collector_paused():
        from evalrun.grading.garble import detect
        from evalrun.grading.garble.lexicon import preload

        preload()
        detect("The answer is in the text above, as the question says.", ["en"])
    gc.freeze()


def _in_child(parent: int) -> None:
    """The grading process leaves signals to the run (Ctrl-C reaches the whole process group:
    the run stops it; the run's event loop's wake-up pipe is not this process's), and ends when
    the run's process is gone, however it went (kill -9 too: the queue it waits on never closes,
    it holds both ends)."""
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_end_with, args=(parent,), name="evalrun-orphan", daemon=True).start()


def _end_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(0)


ORPHAN_CHECK_S = 0.5

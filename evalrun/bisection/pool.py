"""A pool of k lanes: up to k bisect trials at once, each booted on its own lane.

A lane is one place a trial boots: one host of an ssh pool (`launch.host: [gpu1, gpu2]`), one
more Slurm job, or one more engine on this machine. The driver hands the pool a batch of trials
(every value in one-knob mode, the k parts of a delta-debugging split, k commits of a k-section)
and gets the rows back in the batch's order; each batch is one round. The trial cache is the
runner's, shared by every lane, and each booted row says which lane ran it. One lane runs the
batch one trial after another in this thread: today's behaviour exactly.

Ctrl-C or SIGTERM while trials run in threads: the main thread marks the runner as stopping,
tears down every server still up (serving.process.stop_all_servers; a thread cannot be
interrupted), waits for the trials to unwind, and re-raises, so no engine is left and nothing
half-measured is cached.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from evalrun.bisection.trial import TrialResult, TrialRunner
from evalrun.bisection.variants import KnobValue
from evalrun.serving.contract import Contract
from evalrun.serving.signals import sigterm_raises


@dataclass(frozen=True)
class TrialJob:
    """One trial to run: the variant's contract and how the table names it."""

    contract: Contract
    variant: str
    applied: list[KnobValue] = field(default_factory=list)
    commit: str | None = None
    reference: bool = False  # the good side: its tokens judge the others (run it alone, first)


class LanePool:
    """Runs batches of trials on up to `lanes` lanes at once; counts rounds."""

    def __init__(
        self, runner: TrialRunner, lanes: int = 1, stop_all: Callable[[], None] | None = None
    ) -> None:
        self.runner = runner
        self.lanes = max(1, lanes)
        self.stop_all = stop_all
        self.rounds = 0

    def run(self, jobs: list[TrialJob]) -> list[TrialResult]:
        """The rows of `jobs`, in order; up to `lanes` of them booted at once."""
        if not jobs:
            return []
        if self.lanes == 1:
            self.rounds += len(jobs)
            return [self._one(job, None) for job in jobs]
        self.rounds += 1
        free: queue.Queue[int] = queue.Queue()
        for lane in range(self.lanes):
            free.put(lane)

        def on_a_lane(job: TrialJob) -> TrialResult:
            lane = free.get()
            try:
                return self._one(job, lane)
            finally:
                free.put(lane)

        pool = ThreadPoolExecutor(max_workers=min(self.lanes, len(jobs)), thread_name_prefix="lane")
        with sigterm_raises():
            try:
                futures = [pool.submit(on_a_lane, job) for job in jobs]
                rows = [f.result() for f in futures]
            except BaseException:
                self.runner.stopping.set()
                if self.stop_all is not None:
                    self.stop_all()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        pool.shutdown(wait=True)
        return rows

    def _one(self, job: TrialJob, lane: int | None) -> TrialResult:
        return self.runner.run(
            job.contract,
            variant=job.variant,
            applied=job.applied,
            commit=job.commit,
            reference=job.reference,
            lane=lane,
        )

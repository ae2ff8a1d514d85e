"""What a caller hands the runner: the run asked for (`ScoreRequest`) and its callbacks
(`ScoreHooks`, `Progress`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from evalrun.endpoint.client import RetryPolicy
from evalrun.endpoint.http import HttpOptions
from evalrun.serving.target import BootWatch, Target
from evalrun.store import ItemRecord
from evalrun.suite.load import Suite
from evalrun.suite.select import Selection

if TYPE_CHECKING:
    from evalrun.scoring.options import ScoreOptions


@dataclass(frozen=True)
class ScoreRequest:
    """One scoring run: the target, the suite and how much of it (the hooks are separate)."""

    target: Target
    suite: Suite
    label: str | None = None
    concurrency: int = HttpOptions.concurrency  # requests in flight
    selection: Selection = Selection()  # which items (default: the whole suite)
    repeats: int = 1  # ask every item this many times (score --repeats K)
    resume: str | None = None  # a run id to finish
    run_id: str | None = None  # fixes the id of a new run
    retry: RetryPolicy = RetryPolicy()
    trial: bool = False  # a bisect trial's probe: `runs` and `latest` skip it


class Progress(Protocol):
    """What the runner reports progress to (scoring.report.ProgressBar is one)."""

    def start(self, *, total: int, done: int = 0, passed: int = 0, errors: int = 0) -> None: ...
    def advance(self, status: str) -> None: ...
    def finish(self) -> None: ...


@dataclass(frozen=True)
class ScoreHooks:
    """Callbacks into a run. `server_exited` says whether the booted server died (the run then
    stops at once instead of retrying into a dead port); `stop_when` sees each finished item and
    may end the run early by returning why (bisect does once garble is certain)."""

    progress: Progress | None = None
    server_exited: Callable[[], bool] | None = None  # default: the target's own
    stop_when: Callable[[ItemRecord], str | None] | None = None
    notice: Callable[[str], None] | None = None  # one line when the run waits on the server
    boot: BootWatch | None = None  # told the name of a booted contract: its boot progress

    @classmethod
    def of(cls, options: ScoreOptions) -> ScoreHooks:
        """What the options ask to watch: a progress bar on stderr with `progress`."""
        from evalrun.scoring.report import ProgressBar

        return cls(progress=ProgressBar() if options.progress else None)


NO_HOOKS = ScoreHooks()  # a run nobody watches: the default of score_suite

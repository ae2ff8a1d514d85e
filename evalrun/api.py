"""The Python API, what `evalrun score` does: `evalrun.score(...)`, `await evalrun.ascore(...)`.

    run = evalrun.score("http://127.0.0.1:8000/v1", limit=20, temperature=0.6)
    run = await evalrun.ascore(endpoint=url)      # inside a running event loop (a notebook)

The keywords are `evalrun score`'s flags with their defaults (`evalrun.scoring.ScoreOptions`;
`options=` takes a ready one); both return the stored `RunRecord` and raise the CLI's errors.
"""

from __future__ import annotations

from typing import Any

from evalrun.scoring import run as runner
from evalrun.scoring.options import ScoreOptions
from evalrun.scoring.request import ScoreHooks
from evalrun.store import RunRecord

__all__ = ["ScoreOptions", "ascore", "run", "score"]


def score(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """Score a suite against an endpoint (or a contract booted for it: `contract=`,
    `reference=True`); from sync code and inside a running event loop alike."""
    return run(ScoreOptions.given(endpoint, kw))


async def ascore(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """`score` awaited: an endpoint is asked in the caller's loop (cancelling leaves the run
    `interrupted`, resumable); a contract boots in a worker thread."""
    options = ScoreOptions.given(endpoint, kw)
    return (await runner.ascore(options, ScoreHooks.of(options)))[0]


def run(options: ScoreOptions, hooks: ScoreHooks | None = None) -> RunRecord:
    """Score as the options say, through the score path `evalrun score` takes too."""
    return runner.score(options, hooks or ScoreHooks.of(options))[0]

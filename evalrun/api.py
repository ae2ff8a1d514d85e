"""The Python API: `evalrun.score(...)` and `await evalrun.ascore(...)`, what `evalrun score` does.

    import evalrun
    run = evalrun.score("http://127.0.0.1:8000/v1", limit=20, temperature=0.6)
    print(run.summary.score, run.run_id)

    run = await evalrun.ascore(endpoint=url)      # inside a running event loop (a notebook)

The keywords are `evalrun score`'s flags, with the same defaults (`evalrun.scoring.ScoreOptions`
lists them: `request_seed=` is `--request-seed`, `seed=` the `--limit` draw's, `label=` is
`--name`, `categories=` is `--category`); `api_key=` passes a key directly. Both return the
stored run record (`evalrun.store.RunRecord`; its items are in `results/<run_id>/items.jsonl`).
`endpoint` defaults to `OPENAI_BASE_URL`, the key to `api_key=`, else `api_key_env=`, else
`OPENAI_API_KEY`. Errors are the same `EvalrunError`s the CLI prints.
"""

from __future__ import annotations

from typing import Any

from evalrun.base.errors import EvalrunError
from evalrun.scoring import runner
from evalrun.scoring.options import ScoreOptions
from evalrun.scoring.report import ProgressBar
from evalrun.scoring.request import ScoreHooks
from evalrun.store import RunRecord, RunStore

__all__ = ["ScoreOptions", "ascore", "run", "score"]


def score(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """Score a suite against an endpoint (or a contract booted for the purpose: `contract=` or
    `reference=True`) and return the stored run record. Keyword arguments as `evalrun score`'s
    flags (`ScoreOptions`); `options=` takes a ready ScoreOptions instead. Works from sync code
    and from inside a running event loop alike."""
    return run(_options(endpoint, kw))


async def ascore(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """`score` awaited, for a caller inside an event loop (a notebook cell, an async service);
    the same arguments. A booted contract boots in a worker thread; cancelling the await leaves
    the run `interrupted` and resumable."""
    options = _options(endpoint, kw)
    try:
        record, _ = await runner.ascore(options, _hooks(options))
    except EvalrunError as exc:
        _junit(options, exc.run_id)
        raise
    _junit(options, record.run_id)
    return record


def run(options: ScoreOptions, hooks: ScoreHooks | None = None) -> RunRecord:
    """Score as the options say (`evalrun score` does too); with `junit`, the run is also
    written there as JUnit XML, a run that stopped early too (the error names it: `run_id`)."""
    try:
        record, _ = runner.score(options, hooks or _hooks(options))
    except EvalrunError as exc:
        _junit(options, exc.run_id)
        raise
    _junit(options, record.run_id)
    return record


def _hooks(options: ScoreOptions) -> ScoreHooks:
    return ScoreHooks(progress=ProgressBar() if options.progress else None)


def _options(endpoint: str | None, kw: dict[str, Any]) -> ScoreOptions:
    given = kw.pop("options", None)
    if given is not None:
        if kw or endpoint is not None:
            raise TypeError("pass either options= or keyword arguments, not both")
        if not isinstance(given, ScoreOptions):
            raise TypeError(f"options= takes a ScoreOptions, not {type(given).__name__}")
        return given
    return ScoreOptions.from_keywords(endpoint=endpoint, **kw)


def _junit(options: ScoreOptions, run_id: str | None) -> None:
    """The one place a score writes its JUnit XML (the export lives above scoring)."""
    if options.junit and run_id:
        from evalrun.viewing.export import write_export

        write_export(RunStore(options.results), run_id, "junit", str(options.junit))

"""The Python API: `evalrun.score(...)` and `await evalrun.ascore(...)`, what `evalrun score` does.

    import evalrun
    run = evalrun.score("http://127.0.0.1:8000/v1", limit=20, temperature=0.6)
    print(run.summary.score, run.run_id)

    run = await evalrun.ascore(endpoint=url)      # inside a running event loop (a notebook)

Both return the stored run record (`evalrun.store.RunRecord`; its items are in
`results/<run_id>/items.jsonl`). `endpoint` defaults to `OPENAI_BASE_URL`, the key to `api_key=`,
else `api_key_env=`, else `OPENAI_API_KEY`. Errors are the same `EvalrunError`s the CLI prints.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalrun.endpoint.client import ApiKey, resolve_api_key
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.options import build_options
from evalrun.scoring.runner import (
    ScoreHooks,
    ScoreRequest,
    ascore_suite,
    score_target,
)
from evalrun.serving.target import Target, TargetSpec
from evalrun.store import RunRecord, RunStore
from evalrun.suite.load import load_suite
from evalrun.suite.select import Selection


@dataclass(frozen=True)
class _Call:
    """One API call, resolved: the target, the request, the store."""

    spec: TargetSpec
    req: ScoreRequest
    store: RunStore
    hooks: ScoreHooks = field(default_factory=ScoreHooks)


def _prepare(
    endpoint: str | None = None,
    *,
    suite: str = "core",
    model: str | None = None,
    contract: str | Path | None = None,
    reference: bool = False,
    sets: Iterable[str] = (),
    unsets: Iterable[str] = (),
    temperature: float | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    max_tokens_scale: float | None = None,
    extra_body: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    ca_bundle: str | None = None,
    insecure: bool = False,
    concurrency: int = 16,
    timeout: float = 120.0,
    limit: int | None = None,
    tags: Iterable[str] | None = None,
    label: str | None = None,
    results: str | Path = "results",
    progress: bool = False,
    repeats: int = 1,
) -> _Call:
    """The keyword arguments of score()/ascore(), as the CLI flags of `evalrun score` read."""
    key = ApiKey(api_key, "api_key=") if api_key else resolve_api_key(api_key_env)
    options = build_options(
        temperature=temperature,
        top_p=top_p,
        seed=seed,
        max_tokens_scale=max_tokens_scale,
        extra_body=dict(extra_body) if extra_body else None,
        headers=dict(headers) if headers else None,
    )
    spec = TargetSpec(
        endpoint=endpoint,
        contract=contract,
        reference=reference,
        sets=tuple(sets),
        unsets=tuple(unsets),
        model=model,
        api_key=key,
        options=options,
        http=HttpOptions(
            timeout=timeout, concurrency=concurrency, ca_bundle=ca_bundle, insecure=insecure
        ),
    ).check()
    req = ScoreRequest(
        target=Target(base_url=spec.endpoint or ""),
        suite=load_suite(suite),
        label=label,
        concurrency=concurrency,
        selection=Selection(limit=limit, tags=tuple(tags) if tags else None),
        repeats=repeats,
    )
    hooks = ScoreHooks()
    if progress:
        from evalrun.scoring.report import ProgressBar

        hooks = ScoreHooks(progress=ProgressBar())
    return _Call(spec, req, RunStore(results), hooks)


def score(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """Score a suite against an endpoint (or a contract booted for the purpose: `contract=` or
    `reference=True`) and return the stored run record. Keyword arguments as `evalrun score`'s
    flags: suite, model, contract, reference, sets, unsets, temperature, top_p, seed,
    max_tokens_scale, extra_body, headers, api_key, api_key_env, ca_bundle, insecure,
    concurrency, timeout, limit, tags, label, results, progress. Works from sync code and from
    inside a running event loop alike."""
    call = _prepare(endpoint, **kw)
    record, _ = score_target(call.spec, call.req, call.store, call.hooks)
    return record


async def ascore(endpoint: str | None = None, **kw: Any) -> RunRecord:
    """`score` awaited, for a caller inside an event loop (a notebook cell, an async service);
    the same arguments. A booted contract boots in a worker thread; cancelling the await leaves
    the run `interrupted` and resumable."""
    call = _prepare(endpoint, **kw)
    if call.spec.booted:
        return await asyncio.to_thread(score, endpoint, **kw)
    spec = call.spec
    target = Target.endpoint(
        spec.endpoint or "",
        model=spec.model,
        api_key=spec.api_key,
        options=spec.options,
        http=spec.http,
    )
    record, _ = await ascore_suite(replace(call.req, target=target), call.store, call.hooks)
    return record


score.__signature__ = inspect.signature(_prepare).replace(  # type: ignore[attr-defined]
    return_annotation=RunRecord
)
ascore.__signature__ = score.__signature__  # type: ignore[attr-defined]

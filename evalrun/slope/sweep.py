"""`evalrun slope`: decode throughput against context depth, and the long-context cliff.

For each depth d the sweep sends a prompt of about d tokens of stored filler plus `pp` new tokens,
asks for `tg` streamed tokens, at each concurrency level (streams sent together), `runs` times.
Token counts come from the server's own `usage.prompt_tokens` (calibration requests), never from a
local tokenizer, and each point records the depth actually reached. Every request starts with a
fresh nonce, so no prefix cache serves a depth unless `warm_cache` asks for it.

Results land in `results/slope-<run_id>/`: `streams.jsonl` (one line per stream, appended and
fsynced as it finishes) and `slope.json` (the record, rewritten after every point); the models,
store and analysis are in evalrun.slope.record.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from evalrun.base.errors import EndpointError, EvalrunError, Interrupted, UsageError
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.client import pick_model, run_sync
from evalrun.endpoint.http import async_client
from evalrun.endpoint.options import RequestOptions
from evalrun.provenance import collect
from evalrun.serving.target import BootWatch, Launcher, Target, TargetSpec, open_target
from evalrun.slope.record import (
    Calibration,
    SlopePoint,
    SlopeRecord,
    SlopeSettings,
    append_stream,
    depth_label,
    write_record,
)
from evalrun.slope.wire import Probe, StreamTiming, Wire, prompt_text
from evalrun.store import DEFAULT_RESULTS, claim_folder, new_run_id, now_iso, slug


def summarize(
    target: int,
    concurrency: int,
    runs: list[list[StreamTiming]],
    *,
    tg: int,
    base_tokens: int,
    probed_depth: int | None,
) -> SlopePoint:
    """Medians over runs of one (depth, concurrency) cell."""
    ok = [t for run in runs for t in run if t.error is None]
    ttfts = [t.ttft_s for t in ok if t.ttft_s is not None]
    decodes = [t.decode_tps for t in ok if t.decode_tps is not None]
    aggregates = []
    for run in runs:
        spans = [(t.first, t.last, t) for t in run if t.error is None]
        good = [
            (first, last, t) for first, last, t in spans if first is not None and last is not None
        ]
        if good:
            window = max(last for _, last, _ in good) - min(first for first, _, _ in good)
            tokens = sum(max(t.tokens - 1, 0) for _, _, t in good)
            if window > 0 and tokens:
                aggregates.append(tokens / window)
    reached = [t.usage_prompt - base_tokens for t in ok if t.usage_prompt is not None]
    depth = int(statistics.median(reached)) if reached else probed_depth
    return SlopePoint(
        depth_target=target,
        depth=depth,
        concurrency=concurrency,
        ttft_s=_median(ttfts),
        decode_tps=_median(decodes),
        aggregate_tps=_median(aggregates),
        tokens=int(statistics.median([t.tokens for t in ok])) if ok else None,
        streams=len(ok),
        short=sum(t.tokens < tg for t in ok),
        errors=sum(len(run) for run in runs) - len(ok),
        error=next((t.error for run in runs for t in run if t.error), None),
    )


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


# -- the sweep ------------------------------------------------------------------------------
class _Sweep:
    """One measurement sweep over an endpoint; writes streams.jsonl as it goes."""

    def __init__(
        self,
        wire: Wire,
        settings: SlopeSettings,
        folder: Path,
        *,
        seed: str,
        progress: Callable[[str], None],
    ) -> None:
        self.wire = wire
        self.s = settings
        self.folder = folder
        self.rng = random.Random(seed)
        self.calibration: Calibration | None = None
        self.say = progress

    def nonce(self) -> str:
        return f"{self.rng.randrange(10**12):012d}"

    def text(self, depth_chars: int, pp_chars: int, head: str | None = None) -> str:
        return prompt_text(
            head=head or self.nonce(), depth_chars=depth_chars, tail=self.nonce(), pp_chars=pp_chars
        )

    async def calibrate(self, max_context: int | None) -> Calibration:
        empty = await self.wire.probe(self.text(0, 0))
        if empty.prompt_tokens is None:
            raise EndpointError(f"even an empty prompt does not fit: {empty.message}")
        chars = 4 * min(max(max(self.s.depths), self.s.pp, 256), 512)  # each depth is probed
        while True:
            sized = await self.wire.probe(self.text(chars, 0))
            if sized.prompt_tokens is not None:
                break
            chars //= 2
            if chars < 256:
                raise EndpointError(f"the endpoint rejects any filler: {sized.message}")
        per_char = (sized.prompt_tokens - empty.prompt_tokens) / chars
        if per_char <= 0:
            raise EndpointError(
                "usage.prompt_tokens does not grow with the prompt",
                hint="the endpoint's usage counts are unusable for calibration",
            )
        pp_chars = round(self.s.pp / per_char)
        base = await self.wire.probe(self.text(0, pp_chars))
        got = (base.prompt_tokens or 0) - empty.prompt_tokens
        if (
            base.prompt_tokens is not None
            and got > 0
            and abs(got - self.s.pp) > max(0.05 * self.s.pp, 4)
        ):
            pp_chars = round(pp_chars * self.s.pp / got)  # one correction, as for depths
            base = await self.wire.probe(self.text(0, pp_chars))
        if base.prompt_tokens is None:
            raise UsageError(
                f"--pp {self.s.pp} alone exceeds the context ({base.message}); lower --pp"
            )
        cal = Calibration(
            overhead_tokens=empty.prompt_tokens,
            tokens_per_char=round(per_char, 6),
            pp_chars=pp_chars,
            pp_tokens=base.prompt_tokens - empty.prompt_tokens,
            base_tokens=base.prompt_tokens,
            max_context=max_context,
        )
        self.say(
            f"calibrated: {1 / per_char:.2f} chars/token, pp {cal.pp_tokens} tokens, "
            f"overhead {cal.overhead_tokens}"
        )
        return cal

    async def place(self, cal: Calibration, target: int, head: str | None) -> tuple[int, Probe]:
        """Filler characters for `target` tokens, checked (and corrected once) by a probe."""
        chars = round(target / cal.tokens_per_char)
        probe = await self.wire.probe(self.text(chars, cal.pp_chars, head))
        reached = (probe.prompt_tokens or 0) - cal.base_tokens
        if (
            probe.prompt_tokens is not None
            and target
            and reached > 0
            and abs(reached - target) > max(0.02 * target, 32)
        ):
            chars = round(chars * target / reached)
            probe = await self.wire.probe(self.text(chars, cal.pp_chars, head))
        return chars, probe

    async def run(self, on_point: Callable[[SlopePoint], None]) -> Calibration:
        served = await self.wire.models()
        if served or not self.wire.model:
            self.wire.model = pick_model(self.wire.model, list(served), self.wire.base_url)
        max_context = served.get(self.wire.model)
        cal = self.calibration = await self.calibrate(max_context)
        blocked: str | None = None
        for target in self.s.depths:
            need = cal.base_tokens + target + self.s.tg
            if blocked is None and max_context and need > max_context:
                blocked = f"beyond max context {max_context} (needs {need})"
            head = f"{target:012d}" if self.s.warm_cache else None
            probe = Probe()
            if blocked is None and target == 0 and head is None:
                chars, probe = 0, Probe(prompt_tokens=cal.base_tokens)  # calibration measured it
            elif blocked is None:
                chars, probe = await self.place(cal, target, head)
                if probe.context_exceeded:
                    blocked = f"exceeds the context: {probe.message}"
            if blocked is not None:
                self.say(f"{depth_label(target)}: skipped ({blocked})")
                for c in self.s.concurrency:
                    on_point(
                        SlopePoint(
                            depth_target=target,
                            depth=None,
                            concurrency=c,
                            skipped=True,
                            skip_reason=blocked,
                        )
                    )
                continue
            reached = max((probe.prompt_tokens or 0) - cal.base_tokens, 0) if target else 0
            for c in self.s.concurrency:
                point = await self.measure(cal, target, c, chars, head, reached)
                if point.skipped:
                    blocked = point.skip_reason
                on_point(point)
        return cal

    async def measure(
        self, cal: Calibration, target: int, c: int, chars: int, head: str | None, reached: int
    ) -> SlopePoint:
        runs: list[list[StreamTiming]] = []
        for r in range(self.s.runs):
            texts = [self.text(chars, cal.pp_chars, head) for _ in range(c)]
            timings = await asyncio.gather(
                *(self.wire.stream(t, max_tokens=self.s.tg) for t in texts)
            )
            for i, t in enumerate(timings):
                append_stream(self.folder, _stream_row(target, c, r, i, t, cal, reached))
            if any(t.context_exceeded for t in timings):
                reason = next(t.error for t in timings if t.context_exceeded)
                self.say(f"{depth_label(target)} c{c}: skipped (prompt + tg exceed the context)")
                return SlopePoint(
                    depth_target=target,
                    depth=reached,
                    concurrency=c,
                    skipped=True,
                    skip_reason=f"prompt + tg exceed the context: {reason}",
                )
            runs.append(list(timings))
            decodes = [f"{t.decode_tps:.1f}" for t in timings if t.decode_tps]
            self.say(
                f"{depth_label(target)} c{c} run {r + 1}/{self.s.runs}: decode "
                f"{'/'.join(decodes) or '-'} t/s, ttft "
                f"{max((t.ttft_s or 0) for t in timings):.2f}s"
            )
        return summarize(
            target, c, runs, tg=self.s.tg, base_tokens=cal.base_tokens, probed_depth=reached
        )


def _stream_row(
    target: int, c: int, run: int, stream: int, t: StreamTiming, cal: Calibration, reached: int
) -> JSONObject:
    return {
        "depth_target": target,
        "concurrency": c,
        "run": run,
        "stream": stream,
        "depth": t.usage_prompt - cal.base_tokens if t.usage_prompt is not None else reached,
        "ttft_s": t.ttft_s,
        "decode_tps": t.decode_tps,
        "tokens": t.tokens,
        "finish_reason": t.finish_reason,
        "error": t.error,
        "context_exceeded": t.context_exceeded,
    }


@dataclass(frozen=True)
class SlopeRequest:
    """One slope sweep: depths, sizes, concurrency levels and repetitions."""

    depths: tuple[int, ...]
    pp: int = 2048  # prompt tokens after the context
    tg: int = 128  # tokens generated per stream
    concurrency: tuple[int, ...] = (1, 2)
    runs: int = 2
    label: str | None = None
    warm_cache: bool = False


@dataclass(frozen=True)
class SlopeHooks:
    """Callbacks into a sweep: progress lines, the boot timer, the clock streams are timed by."""

    progress: Callable[[str], None] | None = None
    boot: BootWatch | None = None  # told the contract's name: its boot progress
    clock: Callable[[], float] = time.perf_counter


def _sent_extras(options: RequestOptions) -> JSONObject:
    """What slope sends beyond its defaults (temperature 0): sampling options and extra body."""
    sampling = {k: v for k, v in options.body(None).items() if k != "temperature" or v != 0}
    return {**sampling, **options.extra_body}


def run_slope(
    spec: TargetSpec,
    req: SlopeRequest,
    results: Path = DEFAULT_RESULTS,
    hooks: SlopeHooks = SlopeHooks(),
    *,
    launcher: Launcher | None = None,
) -> SlopeRecord:
    """Measure a slope against the spec's endpoint, or a server booted from its contract.

    Writes results/slope-<run_id>/ as it goes and returns the final record. Raises EndpointError
    when the endpoint is unusable, BootError when the contract does not boot, Interrupted on
    Ctrl-C (after writing status=interrupted).
    """
    spec, contract = spec.resolved()
    if req.pp < 1 or req.tg < 2 or req.runs < 1:
        raise UsageError("--pp needs 1 or more tokens, --tg 2 or more, --runs 1 or more")
    settings = SlopeSettings(
        depths=sorted(set(req.depths)),
        pp=req.pp,
        tg=req.tg,
        concurrency=sorted(set(req.concurrency)),
        runs=req.runs,
        warm_cache=req.warm_cache,
    )
    label = slug(req.label or (contract.name if contract else None) or spec.model or "slope")
    run_id, folder = _claim_folder(Path(results), label)
    say = hooks.progress or (lambda _msg: None)
    record = SlopeRecord(
        run_id=run_id,
        label=label,
        endpoint=spec.endpoint or "",
        settings=settings,
        model_requested=spec.model,
        provenance=collect(),
        started_at=now_iso(),
    )
    if contract is not None:
        say(f"booting {contract.name} (log: {folder / 'server.log'})")
    http = replace(spec.http, concurrency=max(settings.concurrency) + 2)
    with open_target(
        replace(spec, http=http),
        contract,
        folder / "server.log",
        watch=hooks.boot,
        launcher=launcher,
    ) as target:
        record.contract, record.server = target.contract, target.server
        record.endpoint = target.base_url
        record.model_requested = target.model
        record.request_extra = _sent_extras(target.options)
        return _measure(record, results, target, hooks.clock, say)


def _claim_folder(results: Path, label: str) -> tuple[str, Path]:
    """A new slope run id and its folder (`slope-<run_id>`)."""
    folder = claim_folder(results, f"slope-{new_run_id(label)}")
    return folder.name.removeprefix("slope-"), folder


def _measure(
    record: SlopeRecord,
    results: Path,
    target: Target,
    clock: Callable[[], float],
    say: Callable[[str], None],
) -> SlopeRecord:
    folder = write_record(results, record)

    async def go() -> None:
        headers = dict(target.options.headers)
        if target.api_key.value:
            headers["Authorization"] = f"Bearer {target.api_key.value}"
        async with async_client(target.base_url, target.http) as client:
            client.headers.update(headers)
            wire = Wire(
                client,
                record.endpoint,
                record.model_requested,
                request_extra=record.request_extra,
                clock=clock,
                api_key=target.api_key,
            )
            sweep = _Sweep(wire, record.settings, folder, seed=record.run_id, progress=say)

            def sync() -> None:
                record.calibration = sweep.calibration
                record.model_served = wire.model
                record.extras_dropped = list(wire.dropped)

            def on_point(point: SlopePoint) -> None:
                record.points.append(point)
                sync()
                write_record(results, record)

            try:
                await sweep.run(on_point)
            finally:
                sync()

    try:
        run_sync(go)
    except KeyboardInterrupt as exc:
        _finish(results, record, "interrupted", "interrupted by the user")
        raise Interrupted(f"slope interrupted; partial results in {folder}") from exc
    except EvalrunError as exc:
        _finish(results, record, "incomplete", str(exc))
        raise
    _finish(results, record, "complete", None)
    return record


def _finish(results: Path, record: SlopeRecord, status: str, error: str | None) -> None:
    record.status = status  # type: ignore[assignment]
    record.error = error
    record.ended_at = now_iso()
    write_record(results, record)

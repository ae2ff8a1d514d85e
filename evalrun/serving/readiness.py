"""Whether a server being booted is ready, and what went wrong when it is not.

Readiness is the health path answering 200 *and* a one-token chat completion succeeding (sglang
answers /v1/models before warm-up; vLLM's /health can be 200 while the engine core hangs). A failed
boot raises BootError with a kind and a one-line hint, classified from the log tail
(serving/bootfail.py), or by a remote target that knows better (a refused ssh key, a Slurm time
limit).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Protocol

import httpx2 as httpx

from evalrun.base.errors import BootError
from evalrun.base.jsondata import JSONObject
from evalrun.serving.bootfail import LogWatch, classify
from evalrun.serving.contract import Contract
from evalrun.serving.remote.engine import BootProgress


class Polled(Protocol):
    """A running engine as the readiness loop sees it: a local process, or one elsewhere
    (serving/remote/) that may also explain its own failures."""

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...


def _chat_probe(
    client: httpx.Client, root: str, model: str, extra: JSONObject, timeout: float
) -> tuple[int | None, str]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 1,
        "temperature": 0,
        **extra,
    }
    try:
        resp = client.post(f"{root}/v1/chat/completions", json=body, timeout=timeout)
    except httpx.HTTPError as exc:
        return None, type(exc).__name__
    if resp.status_code == 200:
        try:
            ok = bool(resp.json().get("choices"))
        except ValueError:
            ok = False
        return (200, "") if ok else (502, "200 without choices: not an OpenAI-compatible answer")
    return resp.status_code, resp.text[:200].replace("\n", " ")


def _health(client: httpx.Client, url: str) -> int | None:
    try:
        return client.get(url, timeout=3.0).status_code
    except httpx.HTTPError:
        return None


def probe_version(client: httpx.Client, root: str) -> tuple[str | None, str | None]:
    """The engine version the server reports: /version (vLLM, sglang), llama-server's /props
    build_info, else its OpenAPI info."""
    with contextlib.suppress(httpx.HTTPError, ValueError, AttributeError):
        resp = client.get(f"{root}/version", timeout=3.0)
        if resp.status_code == 200:
            version = resp.json().get("version")
            if version:
                return str(version), "/version"
    with contextlib.suppress(httpx.HTTPError, ValueError, AttributeError):
        resp = client.get(f"{root}/props", timeout=3.0)
        if resp.status_code == 200:
            build = resp.json().get("build_info")
            if build:
                return str(build), "/props build_info"
    with contextlib.suppress(httpx.HTTPError, ValueError, AttributeError):
        resp = client.get(f"{root}/openapi.json", timeout=5.0)
        if resp.status_code == 200:
            info = resp.json().get("info", {})
            title, version = str(info.get("title", "")), info.get("version")
            if version and title and title != "FastAPI":  # FastAPI's default says nothing
                return str(version), f"/openapi.json ({title})"
    return None, None


def embedded_version(
    argv: list[str], version: str | None, source: str | None
) -> tuple[str | None, str | None]:
    """The llama.cpp build of evalrun's embedded launcher, which reports itself as build 0
    (`b0-unknown`): the build the xllamacpp wheel in this interpreter ships, when argv runs it."""
    from evalrun.serving.reference import LAUNCHER_MODULE, engine_version

    if LAUNCHER_MODULE not in argv:
        return version, source
    wheel = engine_version()
    return (wheel, "xllamacpp wheel version") if wheel else (version, source)


def _fail(kind: str, message: str, hint: str, watch: LogWatch) -> BootError:
    return BootError(
        message, kind=kind, hint=f"{hint}; log: {watch.path}", log_tail=watch.tail_text()
    )


def poll_delay(polls: int, poll: float) -> float:
    """Seconds to wait before readiness poll number `polls`: fast at first (a warm server is up in
    50 ms), growing by half each time up to `poll`. The exponent stops growing once the delay has
    reached `poll`, so a boot that takes many minutes never overflows the float."""
    return min(poll, 0.01 * 1.5 ** min(polls, 64))


@dataclass(frozen=True)
class Booting:
    """A server being booted, as readiness and the failure classifiers see it: its contract,
    its process, its log, its environment and argv, and when it was started (monotonic)."""

    contract: Contract
    proc: Polled
    watch: LogWatch
    env: dict[str, str]
    argv: list[str]
    started: float

    def classify(self, code: int | None) -> tuple[str, str, str]:
        """(kind, line, hint) of an engine that ended: what a remote target knows first (a
        refused ssh key, a Slurm time limit), else what the log says."""
        explain = getattr(self.proc, "explain", None)
        known = explain(code) if explain is not None else None
        return known or classify(
            self.watch, code, contract=self.contract, env=self.env, argv=self.argv
        )

    def died_in_use(self) -> BootError:
        proc, watch = self.proc, self.watch
        watch.feed()
        kind, line, hint = self.classify(proc.returncode)
        why = "" if kind == "crashed" else f" ({kind})"
        return _fail(
            "crashed",
            f"{self.contract.name} died with code {proc.returncode} after boot, while in use"
            f"{why}: {line}",
            hint,
            watch,
        )


# A BootProgress hears (seconds since start, phase): starting | loading (health not 200 yet) | warming (waiting for the
# one-token completion) | ready (called once, at the end)
def wait_ready(
    booting: Booting,
    client: httpx.Client,
    root: str,
    model: str,
    on_progress: BootProgress | None,
    poll: float,
) -> tuple[float, str]:
    contract, proc, watch = booting.contract, booting.proc, booting.watch
    start = booting.started  # the boot counts from the engine's start, not from the first poll
    health_url = root + contract.health_path
    was_healthy = flaps = refusals = polls = 0
    last_refusal = ""
    phase = "starting"
    while True:
        elapsed = time.monotonic() - start
        watch.feed()
        code = proc.poll()
        if code is not None:
            watch.feed()
            kind, line, hint = booting.classify(code)
            raise _fail(
                kind,
                f"{contract.name} exited with code {code} during boot after {elapsed:.1f}s: {line}",
                hint,
                watch,
            )
        if watch.crash_loop() or flaps >= 3:
            raise _fail(
                "crash_loop",
                f"{contract.name} keeps crashing and restarting during boot "
                f"(the same error {watch.repeats()} times, {flaps} health drops): "
                f"{watch.key_line()}",
                "fix the first error in server.log; restarting will not help",
                watch,
            )
        if elapsed > contract.boot_timeout:
            raise _fail(
                "timeout",
                f"{contract.name} not ready after {contract.boot_timeout:.0f}s "
                f"(stuck while {phase}); last log line: {watch.last_line()}",
                f"if server.log shows progress raise boot_timeout (--set boot_timeout="
                f"{int(contract.boot_timeout * 2)}), else fix what it waits for",
                watch,
            )
        status = _health(client, health_url)
        if status == 200 and not model:
            model = _served_model(client, root)  # the contract names none: ask, as --endpoint does
        if status == 200 and model:
            was_healthy = 1
            phase = "warming"
            code_chat, detail = _chat_probe(
                client,
                root,
                model,
                contract.request,
                timeout=max(5.0, min(60.0, contract.boot_timeout - elapsed)),
            )
            if code_chat == 200:
                ready = time.monotonic() - start
                if on_progress is not None:
                    on_progress(ready, "ready")
                return ready, model
            if code_chat is not None and 400 <= code_chat < 500 and code_chat not in (408, 429):
                refusals += 1
                last_refusal = f"HTTP {code_chat}: {detail}"
                if refusals >= 3:
                    raise _fail(
                        "chat_refused",
                        f"{contract.name} is healthy but refuses a "
                        f"one-token chat completion ({last_refusal})",
                        "the engine wants an API key: put the one it expects in the contract's "
                        "args.api-key (or env VLLM_API_KEY)"
                        if code_chat in (401, 403)
                        else "check served_model_name and the request extras in the contract",
                        watch,
                    )
        else:
            if was_healthy and status is None:
                flaps += 1
                was_healthy = 0
            phase = "loading" if status is not None else phase
        if on_progress is not None:
            on_progress(elapsed, phase)
        polls += 1
        time.sleep(poll_delay(polls, poll))


def _served_model(client: httpx.Client, root: str) -> str:
    """The only model /v1/models lists ("" until it lists exactly one)."""
    with contextlib.suppress(httpx.HTTPError, ValueError, AttributeError, KeyError, TypeError):
        resp = client.get(f"{root}/v1/models", timeout=3.0)
        if resp.status_code == 200:
            ids = [str(m["id"]) for m in resp.json().get("data") or []]
            if len(ids) == 1:
                return ids[0]
    return ""

"""Boot the server under test from a contract, wait until it really answers, tear it down.

The server runs in its own process group with stdout+stderr in server.log; on every exit path
(normal, error, Ctrl-C, SIGTERM) the whole group gets SIGTERM, then SIGKILL, and the port is
verified free. A failed boot raises BootError with a kind and a one-line hint. The parts: ports.py
(a free port, a port in use and its holder), process.py (the process group's teardown, the servers
still up), readiness.py (health and a one-token completion, a failure classified), serverlog.py
(the boot's header line, secrets scrubbed from the log); this module installs the contract's
engine build when it names one (lanes/builds.py), starts the engine, here or through
serving/remote/, and holds them together.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from evalrun.base.errors import BootError, Interrupted
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.http import sync_client
from evalrun.serving.bootfail import LogWatch, find_elsewhere
from evalrun.serving.contract import (
    Contract,
    contract_hash,
    effective_env,
    engine_api_key,
    redact_argv,
    redact_env,
    render_argv,
    secret_values,
)
from evalrun.serving.ports import check_port, free_port
from evalrun.serving.process import teardown, track, untrack
from evalrun.serving.readiness import Booting, Polled, embedded_version, probe_version, wait_ready
from evalrun.serving.reaper import watch_parent
from evalrun.serving.remote.engine import Boot, BootProgress, RemoteEngine
from evalrun.serving.remote.spec import PORT_HERE
from evalrun.serving.serverlog import log_header, scrub_log
from evalrun.serving.signals import shielded, sigterm_raises

DEATH_GRACE_S = 1.0
# How long a target that says its engine is ending (a Slurm job COMPLETING: signalled, its final
# state not yet recorded) is waited for, so the failure is classified by what ended it.
ENDING_WAIT_S = 60.0


@dataclass
class Server:
    """A booted server: where to send requests and what was started."""

    base_url: str
    model: str
    boot_seconds: float
    engine_version: str | None
    argv: list[str]
    env_redacted: dict[str, str]
    log_path: Path
    host: str
    port: int
    pid: int
    contract_hash: str  # the booted contract's key (serving.contract.contract_hash)
    version_source: str | None = None
    process: Polled | None = field(default=None, repr=False)
    launch: str = "local"
    image: dict[str, str] | None = None  # a container's image: reference, id, digest, runtime
    build: JSONObject | None = None  # the engine build it booted from, as run.json records it

    def exited(self) -> bool:
        """Whether the server process has died (False when there is no process to watch)."""
        return self.process is not None and self.process.poll() is not None


# The context manager -------------------------------------------------------------------------------


@contextlib.contextmanager
def boot_server(
    contract: Contract,
    log_path: Path,
    *,
    on_progress: BootProgress | None = None,
    poll_interval: float = 0.25,
    lane: int = 0,
) -> Iterator[Server]:
    """Start the contract's server, wait until ready, yield a Server, and always tear it down.

    The contract's `launch:` block says where: here as a child process (local), or on another
    machine over ssh or in a Slurm job (serving/remote/; `lane` picks the host of an ssh pool).
    Raises BootError (kind + hint) when the boot fails, when the server dies while in use, or when
    its port is still held after teardown. SIGTERM raises KeyboardInterrupt inside the block.
    The contract's engine build is installed first unless it is there.
    """
    build = install_build(contract)
    env = effective_env(contract)
    if not contract.remote or contract.launch.kind in PORT_HERE:  # a port of this machine
        port = contract.effective_port or free_port(contract.host)
        check_port(contract.host, port)
    else:
        port = contract.effective_port  # 0: the far side picks a free port
    argv = render_argv(contract, port=port)
    model = request_model(contract, argv)
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with sigterm_raises(), log_path.open("ab") as log:
        secrets = secret_values(contract)
        start = log.tell()
        watch = LogWatch(log_path, start=start, secrets=secrets)  # this boot's part of the log
        log_header(log, argv, contract)
        proc: Polled
        if contract.remote:  # the boot counts from the engine's start: after a job's queue wait
            engine = _start_remote(contract, argv, port, log_path, log, lane, on_progress)
            started = time.monotonic()
            proc, host, port, root = engine, engine.host, engine.port, engine.root
            stop: Callable[[], str | None] = engine.stop
        else:
            started = time.monotonic()
            local = _spawn(contract, argv, env, log)
            proc, host, root = local, contract.host, f"http://{contract.host}:{port}"
            stop = functools.partial(teardown, local, host, port)
        clean = False
        problem: str | None = None
        track(id(proc), stop)
        try:
            with sync_client(root) as client:
                key = engine_api_key(contract)
                if key is not None:  # the engine requires it: probe as the scoring client asks
                    client.headers["Authorization"] = f"Bearer {key[0]}"
                booting = Booting(contract, proc, watch, env, argv, started)
                boot_s, model = wait_ready(booting, client, root, model, on_progress, poll_interval)
                version, source = probe_version(client, root)
            if not contract.remote and (version or "b0-").startswith("b0-"):
                version, source = embedded_version(argv, version, source)
            server = Server(
                base_url=f"{root}/v1",
                model=model,
                boot_seconds=round(boot_s, 2),
                engine_version=version,
                version_source=source,
                argv=redact_argv(argv),
                env_redacted=redact_env(contract.env),
                log_path=log_path,
                host=host,
                port=port,
                pid=int(getattr(proc, "pid", 0) or 0),
                contract_hash=contract_hash(contract),
                process=proc,
                launch=contract.launch.kind,
                image=getattr(proc, "facts", None),
                build=build,
            )
            try:
                yield server
            except (BootError, Interrupted, KeyboardInterrupt):
                raise
            except Exception as exc:  # the caller's error: explain it if the server died under it
                _settle(proc)  # a dying server may take a moment to exit
                if proc.poll() is not None:
                    raise booting.died_in_use() from exc
                raise
            _settle(proc, grace=0.0)  # only waits while a remote target says it is ending
            if proc.poll() is not None:
                raise booting.died_in_use()
            clean = True
        finally:
            with shielded():
                problem = stop()
                scrub_log(log_path, secrets, start)
            untrack(id(proc))
            if problem and not clean:
                print(f"evalrun: warning: {problem}", file=sys.stderr)
        if problem:
            raise BootError(
                problem,
                kind="teardown",
                hint="kill that process by its pid; evalrun started it in its own group",
            )


def install_build(contract: Contract) -> JSONObject | None:
    """Install the contract's engine build unless it is there (one venv per build, reused), so
    the boot finds it first on PATH; what run.json records of it. A build that cannot install
    is a boot that failed (kind `install`): a bisect skips it rather than blaming it."""
    if contract.engine_build is None or contract.remote:
        return None
    from evalrun.base.errors import LaneError
    from evalrun.serving.lanes.builds import ensure_build

    try:
        record, _ = ensure_build(contract.engine_build)
    except LaneError as exc:
        raise BootError(exc.message, kind="install", hint=exc.hint) from exc
    return record.model_dump(
        mode="json",
        include={"pip", "extra", "override", "key", "installer", "install_seconds", "versions"},
    )


def _start_remote(
    contract: Contract,
    argv: list[str],
    port: int,
    log_path: Path,
    log: IO[bytes],
    lane: int,
    on_progress: BootProgress | None,
) -> RemoteEngine:
    """Start the engine on the machine the launch block names (serving/remote/targets.py)."""
    from evalrun.serving.remote.targets import start_remote

    boot = Boot(
        contract=contract,
        argv=argv,
        port=port,
        log_path=log_path,
        lane=lane,
        tag=f"evalrun-{contract_hash(contract)[:10]}",
    )
    with shielded():  # a Ctrl-C between submitting and learning the job id would orphan it
        return start_remote(boot, log, local_port=free_port(), on_progress=on_progress)


def _settle(proc: Polled, grace: float = DEATH_GRACE_S) -> None:
    """Give a dying engine `grace` seconds to finish exiting, and up to ENDING_WAIT_S while its
    target says it is ending: a Slurm job killed at its time limit stays listed as COMPLETING for
    Slurm's KillWait, and reading it as alive would lose the reason it died."""
    ending = getattr(proc, "ending", None)
    start = time.monotonic()
    while proc.poll() is None:
        waited = time.monotonic() - start
        if waited >= grace and (ending is None or waited >= ENDING_WAIT_S or not ending()):
            return
        time.sleep(0.05 if waited < grace else 0.5)


def request_model(contract: Contract, argv: list[str]) -> str:
    """The model name to send: served_model_name, else the model as passed on the command line;
    "" when the contract names neither (readiness then asks /v1/models)."""
    if contract.served_model_name:
        return contract.served_model_name
    if contract.engine == "llama.cpp" and "--model" in argv:
        return argv[argv.index("--model") + 1]
    if contract.engine == "sglang" and "--model-path" in argv:
        return argv[argv.index("--model-path") + 1]
    return contract.model or ""


def _spawn(
    contract: Contract, argv: list[str], env: dict[str, str], log: IO[bytes]
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=watch_parent(),  # a SIGKILLed evalrun leaves no orphan (reaper.py)
        )
    except FileNotFoundError as exc:
        where = find_elsewhere(argv[0], contract=contract, env=env, argv=argv)
        hint = (
            f"{argv[0]!r} exists in {where[0]}: add it to path_prepend (or use the full path)"
            if where
            else f"install it, or fix command[0] in the contract (PATH: {env.get('PATH')})"
        )
        raise BootError(
            f"{contract.name}: executable {argv[0]!r} not found",
            kind="executable_not_found",
            hint=hint,
        ) from exc
    except PermissionError as exc:
        raise BootError(
            f"{contract.name}: {argv[0]!r} is not executable",
            kind="executable_not_found",
            hint="chmod +x it or fix command[0]",
        ) from exc


def stderr_progress(name: str, stream: IO[str] | None = None) -> BootProgress:
    """A live boot timer for the CLI: `booting <name> … 12s (loading)` on stderr."""
    out = stream or sys.stderr
    tty = out.isatty()
    last = [-1]

    def show(elapsed: float, phase: str) -> None:
        if phase == "ready":
            out.write(
                ("\r" if tty else "")
                + f"booted {name} in {elapsed:.1f}s"
                + ("\033[K" if tty else "")
                + "\n"
            )
            out.flush()
            return
        second = int(elapsed)
        if second == last[0] or (not tty and second % 15):
            return
        last[0] = second
        text = f"booting {name} … {second}s ({phase})"
        out.write(f"\r{text}\033[K" if tty else text + "\n")
        out.flush()

    return show

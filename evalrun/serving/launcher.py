"""Boot the server under test from a contract, wait until it really answers, tear it down.

Readiness is the health path answering 200 *and* a one-token chat completion succeeding (sglang
answers /v1/models before warm-up; vLLM's /health can be 200 while the engine core hangs). The
server runs in its own process group with stdout+stderr in server.log; on every exit path (normal,
error, Ctrl-C, SIGTERM) the whole group gets SIGTERM, then SIGKILL, and the port is verified free.
A failed boot raises BootError with a kind and a one-line hint, classified from the log tail
(serving/bootfail.py).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import httpx2 as httpx

from evalrun.base.errors import BootError, Interrupted
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.http import sync_client
from evalrun.provenance import RenderedContract, ServerFacts
from evalrun.serving.bootfail import LogWatch, classify, find_elsewhere
from evalrun.serving.contract import (
    REDACTED,
    Contract,
    contract_hash,
    effective_env,
    engine_api_key,
    redact_args,
    redact_argv,
    redact_env,
    render_argv,
    secret_values,
)
from evalrun.serving.reaper import watch_parent
from evalrun.serving.remote.engine import Boot, BootProgress, RemoteEngine
from evalrun.serving.remote.spec import PORT_HERE
from evalrun.serving.signals import shielded, sigterm_raises

# (seconds since start, phase): starting | loading (health not 200 yet) | warming (waiting for the
# one-token completion) | ready (called once, at the end)
TERM_GRACE_S = 10.0
KILL_WAIT_S = 5.0
PORT_FREE_WAIT_S = 5.0
DEATH_GRACE_S = 1.0
# How long a target that says its engine is ending (a Slurm job COMPLETING: signalled, its final
# state not yet recorded) is waited for, so the failure is classified by what ended it.
ENDING_WAIT_S = 60.0


class Polled(Protocol):
    """A running engine as the readiness loop sees it: a local process, or one elsewhere
    (serving/remote/) that may also explain its own failures."""

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...


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
    version_source: str | None = None
    process: Polled | None = field(default=None, repr=False)
    launch: str = "local"
    image: dict[str, str] | None = None  # a container's image: reference, id, digest, runtime

    def exited(self) -> bool:
        """Whether the server process has died (False when there is no process to watch)."""
        return self.process is not None and self.process.poll() is not None


# Ports --------------------------------------------------------------------------------------------


def port_probe(host: str = "127.0.0.1") -> socket.socket:
    """A socket bound to a port the OS picks, with SO_REUSEADDR. A child that another thread
    forks while this socket is open (the lanes of a bisect pool boot engines at once) holds a
    copy of it until the child execs; without the flag that copy keeps the port "in use" for
    check_port and for the engine's own bind, and the boot fails for nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


# The ports free_port handed out lately in this process. Two lanes of a bisect pool ask for a port
# at once and the engine binds it seconds later, so the OS can offer the same free port to both;
# a port handed out is not offered again while it is among the last _RECENT_PORTS.
_RECENT_PORTS = 512
_handed_out: dict[int, None] = {}
_handed_out_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it), not one this process handed out
    lately to another server that may not have bound it yet."""
    with _handed_out_lock:
        for _ in range(64):
            with port_probe(host) as sock:
                port = int(sock.getsockname()[1])
            if port not in _handed_out:
                break
        _handed_out[port] = None
        while len(_handed_out) > _RECENT_PORTS:
            del _handed_out[next(iter(_handed_out))]
        return port


def port_in_use(host: str, port: int) -> bool:
    """Whether something holds host:port: a bind with SO_REUSEADDR fails with EADDRINUSE, as a
    server's would. IPv6 hosts (`::1`) are bound as IPv6; other bind errors (an address this host
    lacks, a privileged port) are not a port in use, and the server's own start says why."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def port_holder(port: int) -> str | None:
    """'pid 123 (cmdline)' of the process listening on a TCP port, best effort (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(parts[9])
    if not inodes:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    cmd = (
                        (proc / "cmdline")
                        .read_bytes()
                        .replace(b"\0", b" ")
                        .decode(errors="replace")
                    )
                    return f"pid {proc.name} ({' '.join(cmd.split())[:80]})"
    return None


PORT_BUSY_HINT = (
    "stop that server, or pick another port with --set port=N (port 0 picks a free one)"
)


def busy_port(host: str, port: int) -> str | None:
    """`port 8000 on 127.0.0.1 is already in use by pid 123 (...)` when something holds the port, else
    None: the one check the launcher (before a boot) and `evalrun lint` both make."""
    if not port_in_use(host, port):
        return None
    holder = port_holder(port)
    return f"port {port} on {host} is already in use" + (f" by {holder}" if holder else "")


def check_port(host: str, port: int) -> None:
    """BootError(kind=port_in_use) when something already holds the port."""
    busy = busy_port(host, port)
    if busy:
        raise BootError(busy, kind="port_in_use", hint=PORT_BUSY_HINT)


# Teardown -----------------------------------------------------------------------------------------

# Servers booted in this process and not yet torn down: a pool of lanes boots them in threads,
# which a Ctrl-C cannot reach, so the main thread stops them all (stop_all_servers) instead.
_LIVE: dict[int, Callable[[], str | None]] = {}
_LIVE_LOCK = threading.Lock()


def stop_all_servers() -> None:
    """Tear down every server this process booted that is still up (each teardown runs again,
    harmlessly, when its own boot_server block unwinds)."""
    with _LIVE_LOCK:
        stops = list(_LIVE.values())
    threads = [threading.Thread(target=stop, daemon=True) for stop in stops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def _group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process remains in the group; zombies hold no port or memory."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _wait_group_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return True
        time.sleep(0.05)
    return not _group_alive(pgid)


def teardown(proc: subprocess.Popen[bytes], host: str, port: int) -> str | None:
    """Kill the process group (TERM, then KILL), reap it, check the port; a problem line or None."""
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=TERM_GRACE_S)
    if not _wait_group_gone(pgid, 0.5 if proc.returncode is not None else 0):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_WAIT_S)
    # Grandchildren re-parented elsewhere may linger as zombies for a moment; they hold no port.
    _wait_group_gone(pgid, KILL_WAIT_S)
    deadline = time.monotonic() + PORT_FREE_WAIT_S
    while port_in_use(host, port):
        if time.monotonic() > deadline:
            holder = port_holder(port) or "an unknown process"
            return f"port {port} is still held by {holder} after teardown"
        time.sleep(0.1)
    return None


# Readiness ----------------------------------------------------------------------------------------


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
    its process, its log, its environment and argv."""

    contract: Contract
    proc: Polled
    watch: LogWatch
    env: dict[str, str]
    argv: list[str]

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


def _wait_ready(
    booting: Booting,
    client: httpx.Client,
    root: str,
    model: str,
    on_progress: BootProgress | None,
    poll: float,
) -> tuple[float, str]:
    contract, proc, watch = booting.contract, booting.proc, booting.watch
    start = time.monotonic()
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
    """
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
        _header(log, argv, contract)
        proc: Polled
        if contract.remote:
            engine = _start_remote(contract, argv, port, log_path, log, lane, on_progress)
            proc, host, port, root = engine, engine.host, engine.port, engine.root
            stop: Callable[[], str | None] = engine.stop
        else:
            local = _spawn(contract, argv, env, log)
            proc, host, root = local, contract.host, f"http://{contract.host}:{port}"
            stop = functools.partial(teardown, local, host, port)
        clean = False
        problem: str | None = None
        with _LIVE_LOCK:
            _LIVE[id(proc)] = stop
        try:
            with sync_client(root) as client:
                key = engine_api_key(contract)
                if key is not None:  # the engine requires it: probe as the scoring client asks
                    client.headers["Authorization"] = f"Bearer {key[0]}"
                booting = Booting(contract, proc, watch, env, argv)
                boot_s, model = _wait_ready(
                    booting, client, root, model, on_progress, poll_interval
                )
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
                process=proc,
                launch=contract.launch.kind,
                image=getattr(proc, "facts", None),
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
            with _LIVE_LOCK:
                _LIVE.pop(id(proc), None)
            if problem and not clean:
                print(f"evalrun: warning: {problem}", file=sys.stderr)
        if problem:
            raise BootError(
                problem,
                kind="teardown",
                hint="kill that process by its pid; evalrun started it in its own group",
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


def scrub_log(path: Path, secrets: list[str], start: int = 0) -> None:
    """Replace the contract's secret values in what the server wrote to its log (from `start`)."""
    if not secrets:
        return
    with contextlib.suppress(OSError), path.open("rb+") as fh:
        fh.seek(start)
        data = fh.read()
        clean = data
        for value in secrets:
            clean = clean.replace(value.encode(), REDACTED.encode())
        if clean != data:
            fh.seek(start)
            fh.write(clean)
            fh.truncate()


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


def _served_model(client: httpx.Client, root: str) -> str:
    """The only model /v1/models lists ("" until it lists exactly one)."""
    with contextlib.suppress(httpx.HTTPError, ValueError, AttributeError, KeyError, TypeError):
        resp = client.get(f"{root}/v1/models", timeout=3.0)
        if resp.status_code == 200:
            ids = [str(m["id"]) for m in resp.json().get("data") or []]
            if len(ids) == 1:
                return ids[0]
    return ""


def _header(log: IO[bytes], argv: list[str], contract: Contract) -> None:
    line = (
        f"# evalrun boot {contract.name} [{contract_hash(contract)[:12]}]: "
        f"{shlex.join(redact_argv(argv))}\n"
    )
    log.write(line.encode())
    log.flush()


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


def record_for_run(contract: Contract, server: Server) -> tuple[RenderedContract, ServerFacts]:
    """(contract, server) for run.json: rendered argv, redacted env, version, boot time."""
    contract_doc: RenderedContract = {
        "name": contract.name,
        "engine": contract.engine,
        "hash": contract_hash(contract),
        "argv": server.argv,
        "env": server.env_redacted,
        "path_prepend": contract.expanded_path_prepend(),
        "request": contract.request,
        "health": contract.health_path,
        "model": contract.model,
        "args": redact_args(contract.args),
        "deterministic": contract.deterministic,
    }
    if contract.by_design:
        contract_doc["by_design"] = dict(contract.by_design)
    server_doc: ServerFacts = {
        "base_url": server.base_url,
        "model": server.model,
        "engine_version": server.engine_version,
        "version_source": server.version_source,
        "boot_seconds": server.boot_seconds,
        "log_path": str(server.log_path),
        "port": server.port,
    }
    if server.image:
        server_doc["image"] = server.image
    return contract_doc, server_doc


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

"""Boot a contract inside a container on this machine (`launch: {kind: container, ...}`).

evalrun runs the contract's command and args inside the image with `RUNTIME run` (docker or
podman: both speak the same CLI), the command as the entrypoint, attached so the engine's output
lands in the boot log, a name and labels carrying evalrun's pid and the run (or trial) folder, the
port published on the contract's host (or `--network host`), and the contract's env passed by
name only (`-e NAME`, the value in the client's environment: never on a command line). Readiness
is the launcher's, as for any engine.

Nothing is left running:
- every exit path evalrun sees (normal end, error, Ctrl-C, SIGTERM) stops and removes the
  container (`stop -t`, then `rm -f`) and checks that it is gone;
- `kill -9` of evalrun: a watchdog started beside the container (this interpreter, standard
  library only, its own session) removes it as soon as evalrun is gone;
- and if the watchdog died too: every container boot first sweeps containers whose labels name an
  evalrun process on this host that no longer runs.

No `--rm`: the container is removed by evalrun after its state is read, so a container the kernel
killed for memory is classified as such (OOMKilled), not as a bare exit code.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from evalrun.base.errors import BootError
from evalrun.serving.contract import REDACTED, SECRET_NAME, resolve_model
from evalrun.serving.remote.engine import Boot, run_quiet
from evalrun.serving.remote.runtime import (
    CLIENT_TIMEOUT_S,
    LABEL,
    find_runtime,
    gpu_flags,
    image_facts,
    owner_label,
    sweep,
)
from evalrun.serving.remote.spec import ContainerLaunch

__all__ = ["ContainerEngine", "ContainerLaunch", "run_argv"]

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_names = iter(range(1, 1 << 30))
_names_lock = threading.Lock()

# Stops the container when evalrun is gone: its parent changed (evalrun died, even by kill -9) or
# its stdin ended without evalrun's "done" (evalrun stops the container itself, then says done).
WATCHDOG = r"""
import os, select, subprocess, sys
parent, seen = os.getppid(), b""
while True:
    ready, _, _ = select.select([0], [], [], 0.5)
    if ready:
        chunk = os.read(0, 64)
        seen += chunk
        if b"done" in seen:
            sys.exit(0)
        if not chunk:
            break
    if os.getppid() != parent:
        break
subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, timeout=120)
"""

# What a failed `run` (exit code 125: the runtime's own error) or the image said, by pattern.
RUN_FAILURES: tuple[tuple[str, str, str], ...] = (
    (
        r"address already in use|port is already allocated|bind: address",
        "port_in_use",
        "stop what holds the port, or set port: 0 (a free one)",
    ),
    (
        r"image not known|manifest unknown|pull access denied|No such image|short-name"
        r"|unable to find image|repository does not exist",
        "image_not_found",
        "load the image here (`RT load -i FILE`, `RT pull IMAGE`, or `podman import`)",
    ),
    (
        r"could not select device driver|nvidia|CDI|gpu",
        "gpus_unavailable",
        "install the NVIDIA container toolkit (podman: `nvidia-ctk cdi generate "
        "--output=/etc/cdi/nvidia.yaml`), or drop launch.gpus on a host without GPUs",
    ),
    (
        r"OCI runtime|crun|runc|cgroup|setrlimit",
        "runtime_broken",
        "the OCI runtime failed: for podman try runc (containers.conf [engine] runtime = "
        '"runc", cgroup_manager = "cgroupfs", [containers] default_ulimits = [])',
    ),
)


# The image lacks the command: runc's own words, and those of the --init process (podman's
# catatonit, docker's tini) that execs it.
NO_COMMAND = (
    r"executable file .* not found|not found in \$PATH|invoke a command that was not found"
    r"|catatonit.*failed to exec|tini.*exec .* failed|exec format error"
)


def container_name(boot: Boot) -> str:
    with _names_lock:
        n = next(_names)
    base = re.sub(r"[^A-Za-z0-9_.-]", "-", boot.contract.name)[:40] or "engine"
    return f"evalrun-{base}-{os.getpid()}-{boot.lane}-{n}"


# The run command -------------------------------------------------------------------------------------


def _replace_flag(argv: list[str], flag: str, value: str) -> list[str]:
    """argv with the value after the last `flag` replaced."""
    if flag not in argv:
        return argv
    at = len(argv) - 1 - argv[::-1].index(flag) + 1
    return [*argv[:at], value, *argv[at + 1 :]]


def _volume(spec: str) -> str:
    """HOST:CONTAINER[:OPTS] with `~` expanded here on both sides: a mount at the same path
    (a lane's venv, a model folder) reads the same in the contract and in the container."""
    parts = spec.split(":")
    return ":".join([os.path.expanduser(p) for p in parts[:2]] + parts[2:])


def run_argv(
    runtime: str,
    boot: Boot,
    name: str,
    image_env_path: str | None,
    launch: ContainerLaunch | None = None,
    more_env: dict[str, str] | None = None,
) -> list[str]:
    """`RUNTIME run ...` for the boot: labels, network, GPUs, mounts, env names, the image, then
    the contract's argv (its first word as the entrypoint). `launch` is the contract's block, or
    the one a compose service reads as (compose.py), with the service's environment in
    `more_env` (passed by name, as the contract's)."""
    contract = boot.contract
    launch = launch or contract.launch  # type: ignore[assignment]
    assert isinstance(launch, ContainerLaunch)
    argv = [runtime, "run", "--name", name, "--label", f"{LABEL}={owner_label()}"]
    argv += ["--label", f"evalrun.run={boot.log_path.parent.name}"]
    argv += ["--label", f"evalrun.contract={contract.name}", "--label", f"evalrun.tag={boot.tag}"]
    engine = list(boot.argv)
    if launch.network == "host":
        argv += ["--network", "host"]
    else:
        argv += ["-p", f"{contract.host}:{boot.port}:{boot.port}"]
        engine = _replace_flag(engine, "--host", "0.0.0.0")
    argv += ["--stop-timeout", str(int(launch.stop_timeout))]  # also for the watchdog's rm -f
    if launch.init:
        argv.append("--init")
    argv += gpu_flags(runtime, launch.gpus)
    if launch.shm_size:
        argv += ["--shm-size", launch.shm_size]
    mounts = [_volume(v) for v in launch.volumes]
    if (contract.model or "").startswith("@"):  # a file shipped with evalrun: its folder, read-only
        shipped = Path(resolve_model(contract) or "").parent
        mounts.append(f"{shipped}:{shipped}:ro")
    for mount in mounts:
        argv += ["-v", mount]
    for key in {**(more_env or {}), **contract.env}:
        argv += ["-e", key]  # the value travels in the client's environment
    if contract.path_prepend:
        path = [*contract.expanded_path_prepend(), image_env_path or DEFAULT_PATH]
        argv += ["-e", "PATH=" + ":".join(path)]
    argv += launch.options
    return [*argv, "--entrypoint", engine[0], launch.image, *engine[1:]]


def _redacted(argv: list[str]) -> str:
    from shlex import join

    return join(argv)  # env values never appear here: `-e NAME` only


# The engine ------------------------------------------------------------------------------------------


class ContainerEngine:
    """A container running the contract; the engine is alive while the attached client runs."""

    def __init__(
        self,
        boot: Boot,
        log: IO[bytes],
        launch: ContainerLaunch | None = None,
        more_env: dict[str, str] | None = None,
    ) -> None:
        launch = launch or boot.contract.launch  # type: ignore[assignment]
        assert isinstance(launch, ContainerLaunch)
        self.launch, self.boot = launch, boot
        env = {**(more_env or {}), **boot.contract.env}
        # a compose service's secret-looking values: scrubbed from the log as the contract's are
        self._secrets = sorted(
            (v for k, v in (more_env or {}).items() if SECRET_NAME.search(k) and len(v) >= 4),
            key=len,
            reverse=True,
        )
        self.runtime = find_runtime(launch)
        swept = sweep(self.runtime)
        if swept:
            log.write(f"# evalrun removed {len(swept)} stale container(s): {swept}\n".encode())
        facts = image_facts(self.runtime, launch.image)
        if facts is None:
            rt = Path(self.runtime).name
            raise BootError(
                f"image {launch.image} is not present in {rt}'s local storage",
                kind="image_not_found",
                hint=f"`{rt} pull {launch.image}`, `{rt} load -i FILE` or `{rt} import "
                "rootfs.tar NAME:TAG` first; evalrun never pulls",
            )
        self.facts = facts
        self.name = container_name(boot)
        self.host = (
            "127.0.0.1" if boot.contract.host in ("0.0.0.0", "::", "") else boot.contract.host
        )
        self.port = boot.port
        self.root = f"http://{self.host}:{self.port}"
        argv = run_argv(self.runtime, boot, self.name, self._image_path(), launch, more_env)
        log.write(f"# evalrun container {self.name}: {_redacted(argv)}\n".encode())
        log.flush()
        self._start = log.tell()
        self._state: dict[str, object] | None = None
        self._stopping = False
        self.proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
            start_new_session=True,  # Ctrl-C reaches evalrun, which stops the container in order
        )
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, self.runtime, "rm", "-f", self.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives a kill of evalrun's process group
        )

    def _image_path(self) -> str | None:
        if not self.boot.contract.path_prepend:
            return None
        done = run_quiet(
            [
                self.runtime,
                "image",
                "inspect",
                "--format",
                "{{json .Config.Env}}",
                self.launch.image,
            ],
            CLIENT_TIMEOUT_S,
        )
        with contextlib.suppress(ValueError, TypeError):
            for item in json.loads(done.stdout or "null") or []:
                if str(item).startswith("PATH="):
                    return str(item)[5:]
        return None

    # What the launcher calls -----------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The attached client's pid (the container runs under the runtime, not as our child)."""
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def ending(self) -> bool:
        return False

    def state(self) -> dict[str, object]:
        """The container's State (OOMKilled, ExitCode, Error), read once after it ended."""
        if self._state is None:
            done = run_quiet(
                [self.runtime, "inspect", "--format", "{{json .State}}", self.name],
                CLIENT_TIMEOUT_S,
            )
            try:
                self._state = dict(json.loads(done.stdout)) if done.returncode == 0 else {}
            except (ValueError, TypeError):
                self._state = {}
        return self._state

    def explain(self, code: int | None) -> tuple[str, str, str] | None:
        """What the runtime knows and the engine's log does not: the runtime's own errors (exit
        125), a command the image lacks (126, 127), the kernel's OOM kill (137)."""
        text = _log_text(self.boot.log_path, self._start)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        rt = Path(self.runtime).name
        if code == 125:
            errors = [ln for ln in lines if ln.startswith(("Error", "docker:", "Error:"))] or lines
            line = errors[-1][:240] if errors else f"{rt} run failed"
            for pattern, kind, hint in RUN_FAILURES:
                if re.search(pattern, line, re.IGNORECASE):
                    return kind, f"{rt} run: {line}", hint.replace("RT", rt)
            return "container_failed", f"{rt} run: {line}", "run the command in the log by hand"
        if code in (1, 126, 127) and any(re.search(NO_COMMAND, ln) for ln in lines):
            return (
                "executable_not_found",
                f"the image {self.launch.image} cannot run {self.boot.argv[0]!r}",
                "fix command[0] for the image's filesystem, or mount it in with launch.volumes",
            )
        state = self.state()
        limited = any(o.startswith(("--memory", "-m")) for o in self.launch.options)
        if state.get("OOMKilled") or (code == 137 and limited and not self._stopping):
            return (
                "oom_killed",
                f"container {self.name} was killed for memory (exit code {code})",
                "raise the memory limit (--memory in launch.options) or lower the engine's "
                "memory use (max-model-len, gpu-memory-utilization)",
            )
        return None

    def stop(self) -> str | None:
        """Stop and remove the container, wait for the client, tell the watchdog; a problem
        line when the container is still there afterwards."""
        self._stopping = True
        rt = self.runtime
        wait = self.launch.stop_timeout
        if self.proc.poll() is None:
            run_quiet([rt, "stop", "-t", str(int(wait)), self.name], wait + CLIENT_TIMEOUT_S)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        run_quiet([rt, "rm", "-f", self.name], CLIENT_TIMEOUT_S)
        left = run_quiet([rt, "container", "inspect", "--format", "{{.Id}}", self.name], 30.0)
        with contextlib.suppress(OSError, ValueError):
            assert self.watchdog.stdin is not None
            self.watchdog.stdin.write(b"done")
            self.watchdog.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.watchdog.wait(timeout=5)
        self._scrub()
        if left.returncode == 0:
            return f"container {self.name} is still there after teardown; `{rt} rm -f {self.name}`"
        return None

    def _scrub(self) -> None:
        if not self._secrets:
            return
        with contextlib.suppress(OSError), self.boot.log_path.open("rb+") as fh:
            fh.seek(self._start)
            data = clean = fh.read()
            for value in self._secrets:
                clean = clean.replace(value.encode(), REDACTED.encode())
            if clean != data:
                fh.seek(self._start)
                fh.write(clean)
                fh.truncate()


def _log_text(path: Path, start: int) -> str:
    with contextlib.suppress(OSError), path.open("rb") as fh:
        fh.seek(start)
        return fh.read().decode(errors="replace")
    return ""

"""Boot a contract on another host over ssh (`launch: {kind: ssh, ...}`).

One short connection first (the preflight): it proves the key is accepted and, when the contract
asks for any port, picks a free one on the host. Then one long connection runs the wrapper
(wrapper.py) with its settings on stdin, and, with `forward: true`, carries an `ssh -L` from a
free local port to the engine. Its output (the engine's log) goes to the trial log. Stopping
closes the wrapper's stdin: it stops the engine's group and exits, and so does the connection.
If evalrun dies (even kill -9), the ssh client's stdin closes with it and the wrapper sees the
same end-of-file; a lost connection closes the session and the wrapper's stdin too.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import IO

from evalrun.base.errors import BootError
from evalrun.serving.remote.engine import (
    STOP_WAIT_S,
    WRAPPER_SOURCE,
    Boot,
    read_mark,
    run_quiet,
    wrapper_config,
)
from evalrun.serving.remote.spec import SshLaunch

PREFLIGHT_TIMEOUT_S = 30.0
FREE_PORT = (
    "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])"
)
# (pattern in ssh's own error output, kind, hint)
SSH_FAILURES = (
    (
        r"Permission denied|Too many authentication failures|no such identity",
        "ssh_auth",
        "the host refused the key: check launch.user and launch.identity, or add the public key "
        "to the host's ~/.ssh/authorized_keys",
    ),
    (
        r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED",
        "ssh_host_key",
        "the host key is unknown or changed: ssh to it once by hand, or set "
        "launch.options: {StrictHostKeyChecking: accept-new}",
    ),
    (
        r"Could not resolve hostname|Connection refused|Connection timed out|No route to host"
        r"|Network is unreachable|Connection closed by|Connection reset",
        "ssh_unreachable",
        "sshd does not answer there: check launch.host and launch.port",
    ),
)


def ssh_argv(launch: SshLaunch, host: str, *extra: str) -> list[str]:
    """The ssh client's command line up to the destination (no command yet)."""
    argv = ["ssh", "-p", str(launch.port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=15"]
    argv += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]
    if launch.identity:
        argv += ["-i", os.path.expanduser(launch.identity), "-o", "IdentitiesOnly=yes"]
    if launch.user:
        argv += ["-l", launch.user]
    for name, value in launch.options.items():
        argv += ["-o", f"{name}={value}"]
    return [*argv, *extra, host]


def _failure(text: str, host: str, code: int) -> BootError:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern, kind, hint in SSH_FAILURES:
        match = next((ln for ln in lines if re.search(pattern, ln)), None)
        if match:
            return BootError(f"ssh to {host} failed: {match[:200]}", kind=kind, hint=hint)
    if code == 127:
        return BootError(
            f"ssh to {host}: {lines[-1][:200] if lines else 'command not found'}",
            kind="remote_python",
            hint="the wrapper needs Python 3 on the host: set launch.python to its path",
        )
    last = lines[-1][:200] if lines else f"exit code {code}"
    return BootError(
        f"ssh to {host} failed: {last}", kind="ssh_failed", hint="run the same ssh by hand"
    )


def preflight(launch: SshLaunch, host: str, listen: str, port: int) -> int:
    """Check the host takes the key and runs Python; the port to use (a free one for port 0)."""
    code = f"{launch.python} -c {shlex.quote(FREE_PORT)} {shlex.quote(listen)}"
    done = run_quiet([*ssh_argv(launch, host), code], PREFLIGHT_TIMEOUT_S)
    if done.returncode != 0:
        raise _failure(done.stderr + done.stdout, host, done.returncode)
    return port or int(done.stdout.split()[-1])


class SshEngine:
    """The wrapper's ssh connection: the engine is alive while the connection is."""

    def __init__(
        self,
        boot: Boot,
        log: IO[bytes],
        local_port: int,
    ) -> None:
        launch = boot.contract.launch
        assert isinstance(launch, SshLaunch)
        self.launch = launch
        self.boot = boot
        self.remote_host = launch.lane_host(boot.lane)
        listen = boot.contract.host
        self.remote_port = preflight(launch, self.remote_host, listen, boot.port)
        self._start = log.tell()
        extra: list[str] = []
        if launch.forward:
            target = "127.0.0.1" if listen in ("0.0.0.0", "::", "localhost") else listen
            extra = ["-o", "ExitOnForwardFailure=yes"]
            extra += ["-L", f"127.0.0.1:{local_port}:{target}:{self.remote_port}"]
            self.host, self.port = "127.0.0.1", local_port
        else:
            self.host, self.port = self.remote_host, self.remote_port
        self.root = f"http://{self.host}:{self.port}"
        command = f"{launch.python} -c {shlex.quote(WRAPPER_SOURCE)}"
        self.proc = subprocess.Popen(
            [*ssh_argv(launch, self.remote_host, *extra), command],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches evalrun, which stops the engine in order
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(wrapper_config(boot, port=self.remote_port).encode())
        self.proc.stdin.flush()

    @property
    def pid(self) -> int:
        """The engine's process group on the host (0 until the wrapper has reported it)."""
        return self.remote_pgid() or 0

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def ending(self) -> bool:
        """Never: the ssh session ends with the engine, so poll() already tells."""
        return False

    def remote_pgid(self) -> int | None:
        mark = read_mark(self.boot.log_path, self._start)
        return int(mark["pgid"]) if mark and mark.get("pgid", "").isdigit() else None

    def explain(self, code: int | None) -> tuple[str, str, str] | None:
        """A failure of ssh itself (exit code 255), named from ssh's own words in the log."""
        if code != 255:
            return None
        text = _log_text(self.boot.log_path, self._start)
        exc = _failure(text, self.remote_host, code)
        if exc.kind == "ssh_failed" and self.remote_pgid() is not None:
            return (
                "ssh_lost",
                f"the ssh connection to {self.remote_host} was lost",
                "the wrapper on the host stops the engine when the connection drops; "
                "check the network and sshd",
            )
        return exc.kind, exc.message, exc.hint or ""

    def stop(self) -> str | None:
        """Hang up (the wrapper stops the engine's group and exits); if the connection does not
        end, stop the group by its recorded pgid over a new connection."""
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=STOP_WAIT_S)
            return None
        except subprocess.TimeoutExpired:
            pass
        pgid = self.remote_pgid()
        problem = None
        if pgid is not None:
            kill = f"kill -KILL -- -{pgid}"
            done = run_quiet([*ssh_argv(self.launch, self.remote_host), kill], 30.0)
            if done.returncode not in (0, 1):
                problem = (
                    f"could not stop engine group {pgid} on {self.remote_host}: "
                    f"{done.stderr.strip()[:200]}; ssh there and run `{kill}`"
                )
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 9)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        return problem


def _log_text(path: Path, start: int) -> str:
    with contextlib.suppress(OSError), path.open("rb") as fh:
        fh.seek(start)
        return fh.read().decode(errors="replace")
    return ""

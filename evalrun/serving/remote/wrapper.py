"""The program evalrun runs beside the engine on another machine (standard library only).

It is sent as source text (`python3 -c` over ssh, a here-document in a Slurm batch script), reads
its settings as one JSON object (the first line of stdin over ssh, a file in a Slurm job), and:

- picks a free port on the listen address when the contract asks for any (port 0);
- starts the engine in its own process group, its output on this program's stdout;
- records `<pgid> <own pid> <port>` in a pid file under `pid_dir` and prints one line
  `EVALRUN-REMOTE pgid=<pgid> port=<port> host=<hostname>` that evalrun reads from the log;
- stops the whole group (TERM, then KILL) when evalrun hangs up: over ssh, its stdin reaches
  end-of-file (evalrun closed it, or evalrun or the connection died); in a Slurm job, the
  heartbeat file evalrun touches grows older than `stale` seconds; and on SIGTERM/SIGHUP/SIGINT
  (scancel, sshd closing the session);
- first of all, stops the groups of earlier wrappers on this machine that died without cleaning
  up (their pid file names a wrapper pid that no longer runs): the next run's clean-up.

It exits with the engine's exit code when the engine exits by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

GRACE_S = 10.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_alive(pgid: int) -> bool:
    # process._group_alive, repeated on purpose: this file runs alone on the remote host with
    # the standard library only, so it cannot import evalrun.
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
    return not os.path.isdir("/proc")


def stop_group(pgid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """TERM the group, wait up to GRACE_S, then KILL what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()
        if not _group_alive(pgid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def sweep(pid_dir: str) -> None:
    """Stop engines whose wrapper died without stopping them (kill -9 of the wrapper itself)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(pid_dir):
            if not name.endswith(".pid"):
                continue
            path = os.path.join(pid_dir, name)
            with contextlib.suppress(OSError, ValueError):
                with open(path) as fh:
                    pgid, owner = (int(x) for x in fh.read().split()[:2])
                if _alive(owner):
                    continue
                if _group_alive(pgid):
                    with contextlib.suppress(OSError):
                        print(f"EVALRUN-REMOTE stopping stale engine group {pgid}", flush=True)
                    stop_group(pgid)
                os.unlink(path)


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def main() -> int:
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as fh:
            cfg = json.load(fh)
    else:
        cfg = json.loads(sys.stdin.buffer.readline() or b"{}")
    pid_dir = os.path.expanduser(cfg.get("pid_dir") or "~/.cache/evalrun/remote")
    os.makedirs(pid_dir, exist_ok=True)
    sweep(pid_dir)
    argv = list(cfg["argv"])
    port = int(cfg.get("port") or 0) or free_port(cfg.get("host") or "127.0.0.1")
    argv[int(cfg["port_index"])] = str(port)
    env = dict(os.environ)
    env.update(cfg.get("env") or {})
    prepend = [os.path.expanduser(p) for p in cfg.get("path_prepend") or []]
    if prepend:
        env["PATH"] = os.pathsep.join([*prepend, env.get("PATH", "")]).rstrip(os.pathsep)
    if cfg.get("srun"):
        argv = ["srun", *cfg["srun"], *argv]
    why: list[str] = []

    def hang_up(signum: int, frame: object) -> None:
        why.append(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, hang_up)
    try:
        proc = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        print(f"{argv[0]}: {exc.strerror}: '{argv[0]}'", flush=True)
        return 127
    pgid = proc.pid
    pid_file = os.path.join(pid_dir, f"{cfg.get('tag') or 'engine'}-{pgid}.pid")
    with open(pid_file, "w") as fh:
        fh.write(f"{pgid} {os.getpid()} {port}\n")
    print(f"EVALRUN-REMOTE pgid={pgid} port={port} host={socket.gethostname()}", flush=True)
    heartbeat, stale = cfg.get("heartbeat"), float(cfg.get("stale") or 60)
    code: int | None = None
    try:
        while code is None and not why:
            code = proc.poll()
            if heartbeat is None:
                with contextlib.suppress(InterruptedError):
                    ready, _, _ = select.select([sys.stdin], [], [], 0.2)
                    if ready and not os.read(sys.stdin.fileno(), 4096):
                        why.append("evalrun hung up (stdin closed)")
            else:
                time.sleep(0.5)
                try:
                    age = time.time() - os.stat(heartbeat).st_mtime
                except OSError:
                    age = stale + 1
                if age > stale:
                    why.append(f"evalrun's heartbeat is {age:.0f}s old")
    finally:
        if code is None:
            # say why first, but stop the group even when nobody reads stdout any more (a lost
            # connection: the write fails with a broken pipe)
            with contextlib.suppress(OSError):
                print(f"EVALRUN-REMOTE stopping engine group {pgid}: {', '.join(why)}", flush=True)
            stop_group(pgid, proc)
        elif _group_alive(pgid):
            stop_group(pgid, proc)  # the leader exited; its children must not outlive it
        with contextlib.suppress(OSError):
            os.unlink(pid_file)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    if code is None:
        return 143
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())

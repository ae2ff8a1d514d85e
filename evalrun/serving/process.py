"""A local engine's process group, ended whole: SIGTERM, then SIGKILL, the group reaped and its port
seen free; and the servers this process booted and has not torn down yet (`stop_all_servers`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from evalrun.serving.ports import port_holder, port_in_use

TERM_GRACE_S = 10.0
KILL_WAIT_S = 5.0
PORT_FREE_WAIT_S = 5.0

# Servers booted in this process and not yet torn down: a pool of lanes boots them in threads,
# which a Ctrl-C cannot reach, so the main thread stops them all (stop_all_servers) instead.
_LIVE: dict[int, Callable[[], str | None]] = {}
_LIVE_LOCK = threading.Lock()


def track(key: int, stop: Callable[[], str | None]) -> None:
    """Remember a booted server's teardown until `untrack`, for `stop_all_servers`."""
    with _LIVE_LOCK:
        _LIVE[key] = stop


def untrack(key: int) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(key, None)


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

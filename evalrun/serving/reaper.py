"""A local engine never outlives the evalrun that booted it.

The launcher ends the engine's process group on every exit path it sees (launcher.py), but a
SIGKILL (a CI timeout, the OOM killer, `kill -9`) leaves it no path: the engine, in a session of
its own, would run on as an orphan holding its port, its memory and, on a GPU host, the card.

So each local engine gets a watchdog in its own process group: `watch_parent(pid)` is the
`preexec_fn` of the engine's Popen. It runs in the engine's process after the new session is
made and before the engine's command is executed, forks once, and the fork executes a fresh
Python running `WATCHDOG` (nothing of evalrun's state is used after the fork). The watchdog
waits on evalrun's pid (a pidfd; polling where the kernel has none) and on its own parent (the
engine):

- evalrun gone: SIGTERM to the group, SIGKILL `GRACE_S` later to whatever is left (itself too);
- the engine gone (its normal teardown, or a crash): it leaves at once, holding nothing.

It ignores SIGTERM, so the launcher's own teardown (TERM to the group) ends the engine first; the
watchdog follows within a poll. ssh and Slurm lanes have their own guards (the wrapper's
hang-up, the heartbeat) and get no watchdog here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

GRACE_S = 3.0  # from SIGTERM to SIGKILL once evalrun is gone
POLL_S = 0.2

WATCHDOG = r"""
import os, select, signal, sys, time
evalrun, engine, grace, poll = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
try:
    fd = os.pidfd_open(evalrun)
except ProcessLookupError:
    fd = None  # gone already
except (AttributeError, OSError):
    fd = -1  # no pidfd: poll the pid
def evalrun_gone():
    if fd is None:
        return True
    if fd >= 0:
        return bool(select.select([fd], [], [], poll)[0])
    time.sleep(poll)
    try:
        os.kill(evalrun, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
while True:
    if os.getppid() != engine:
        sys.exit(0)  # the engine is gone: evalrun's teardown (or a crash) ended it
    if evalrun_gone():
        break
group = os.getpgid(0)
def others():
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False
try:
    os.killpg(group, signal.SIGTERM)
except ProcessLookupError:
    pass
ends = time.monotonic() + grace
while time.monotonic() < ends and others():
    time.sleep(0.1)
os.killpg(group, signal.SIGKILL)
"""


def watch_parent(parent: int | None = None) -> Callable[[], None]:
    """The engine Popen's `preexec_fn`: start the watchdog of the engine about to be executed,
    guarding against the death of `parent` (default: this process)."""
    evalrun = os.getpid() if parent is None else parent
    python = sys.executable
    argv = [python, "-I", "-S", "-c", WATCHDOG, str(evalrun), "", str(GRACE_S), str(POLL_S)]

    def start() -> None:  # in the engine's process, between fork and exec: C calls only
        engine = os.getpid()
        argv[6] = str(engine)
        if os.fork() == 0:
            try:
                os.execv(python, argv)
            finally:
                os._exit(0)

    return start

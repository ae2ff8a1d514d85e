"""One writer a run: an exclusive lock on results/<run_id>/.lock while a run is scored.

Two `--resume` of one run at once both asked every remaining item (300 requests for 150 items)
and wrote each item twice. `RunLock.acquire` takes a non-blocking `flock` on the run's lock file
and writes its pid and host there; a second writer gets a one-line ConfigError naming the first's
pid. The kernel drops the lock when its process ends however it ends (kill -9 too), so a crashed
run can be resumed at once; a copied folder copies the file's text, not the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from pathlib import Path

from evalrun.base.errors import ConfigError

LOCK_NAME = ".lock"


class RunLock:
    """The lock of one run folder, held from `acquire` until `release`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock, or raise ConfigError naming the process that holds it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise ConfigError(
                f"run {self.folder.name} is being written by {holder}; wait for it to end "
                f"(or stop it), then --resume {self.folder.name}"
            ) from None
        with contextlib.suppress(OSError):  # the text only names the holder (a full disk: none)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

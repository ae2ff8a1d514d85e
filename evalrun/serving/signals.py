"""SIGTERM acts like Ctrl-C, in each of the three places evalrun takes signals.

- `sigterm_raises`: around a boot and a scored run in plain (sync) code, SIGTERM raises
  KeyboardInterrupt so context managers unwind and the server is torn down;
- `sigterm_cancels`: inside the runner's own event loop, SIGTERM cancels the run's task (a
  KeyboardInterrupt raised in the middle of the loop would leave it half-closed); the handler it
  replaces (e.g. sigterm_raises') is put back after;
- `shielded`: teardown must finish, so a second Ctrl-C or SIGTERM meanwhile waits until it has.

Signal handlers can only be set in the main thread; elsewhere these do nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt so context managers unwind."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def sigterm_cancels(task: asyncio.Task[Any]) -> Iterator[None]:
    """Within the block, SIGTERM cancels `task` (of the running loop), as Ctrl-C does."""
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Within the block, Ctrl-C and SIGTERM are held back; the first one held is raised as
    KeyboardInterrupt once the block is done."""
    if not _in_main_thread():
        yield
        return
    got: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda s, f: got.append(s))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if got:
        raise KeyboardInterrupt(f"signal {got[0]} during teardown")

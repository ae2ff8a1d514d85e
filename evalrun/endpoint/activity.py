"""How long the server has sent nothing while requests wait on it: the measure of a dead server.

The transport wrapper (limits.py) tells an `Activity` when a request goes out, when any byte of an
answer arrives (the status line and headers, each chunk of a body) and when the request is over.
`silent_for()` is the time since the last byte, counted only while at least one request was in
flight: a wait between tries (a Retry-After) or a pause with nothing asked is no silence of the
server's. It is wall-clock time, like an item's own deadline: a loop too busy to read counts,
and the items waiting would time out anyway. The runner calls the server dead once it reaches
the run's `--timeout` (scoring/run.py).

It also keeps the run's connection policy, for servers that take fewer connections than the run
asks with (a proxy or a small threaded server with a connection cap; a busy engine queueing):

- `answered()` marks each complete answer: a request waiting while others are answered is queued
  at the server, not facing a dead one (client.py extends its deadline while answers come);
- `slot()` admits requests up to `limit`, None (no cap) until a connection is refused or reset
  while others are being served: then the cap drops to what the server was holding, and climbs
  back by one after each `limit` answers in a row (a server that accepts 4 settles at 4 or 5).
  A request waiting for a slot is not in flight: its wait is no silence of the server's.

Everything happens on one event loop, so no lock is needed. Of evalrun, nothing is imported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

OVERLOAD_WINDOW_S = 10.0  # refusals count as a connection limit while answers came this recently


class Activity:
    """The server's silence, as seen by the requests sent to it through one client."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.in_flight = 0
        self._quiet = 0.0  # silence from spans already over (since the last byte)
        self._since = clock()  # start of the current span: the last byte, or the first request
        self._answered: float | None = None  # when the last whole answer arrived
        self.limit: int | None = None  # requests admitted at once; None: no cap (yet)
        self.holding = 0  # requests admitted now
        self._run = 0  # answers in a row at the current cap
        self._free: asyncio.Condition | None = None

    def begin(self) -> None:
        """A request goes out."""
        if self.in_flight == 0:
            self._since = self._clock()
        self.in_flight += 1

    def heard(self) -> None:
        """A byte of an answer arrived."""
        self._quiet = 0.0
        self._since = self._clock()

    def end(self) -> None:
        """A request is over (answered, failed or given up)."""
        if self.in_flight == 1:
            now = self._clock()
            self._quiet += now - self._since
            self._since = now
        self.in_flight = max(0, self.in_flight - 1)

    def silent_for(self) -> float:
        """Seconds of waiting on the server since it last sent a byte."""
        if self.in_flight == 0:
            return self._quiet
        return self._quiet + self._clock() - self._since

    def answered(self) -> None:
        """A whole answer (a 2xx body) arrived."""
        self._answered = self._clock()

    def since_answer(self) -> float | None:
        """Seconds since the last whole answer (None: none yet)."""
        return None if self._answered is None else self._clock() - self._answered

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the `limit` request slots while the block runs."""
        if self.limit is not None and self.holding >= self.limit:
            if self._free is None:
                self._free = asyncio.Condition()
            async with self._free:
                await self._free.wait_for(lambda: self.limit is None or self.holding < self.limit)
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
            if self._free is not None:
                async with self._free:
                    self._free.notify(1)

    def refused(self) -> bool:
        """A connection was refused or reset. True when the server is at its connection limit:
        it holds others of ours now and has answered within OVERLOAD_WINDOW_S; the cap drops to
        what it holds, and the request should wait for a slot and go again. False: it holds
        none, has answered nothing yet (a server that resets every connection), or nothing for
        that long (one that died with a request of ours hanging): a failed try like any other,
        retried after its backoff."""
        ago = self.since_answer()
        if self.holding == 0 or ago is None or ago > OVERLOAD_WINDOW_S:
            return False
        self.limit = max(1, min(self.limit or self.holding, self.holding))
        self._run = 0
        return True

    async def served(self) -> None:
        """An admitted request was answered: after `limit` of those in a row, one slot more."""
        if self.limit is None:
            return
        self._run += 1
        if self._run >= self.limit:
            self.limit += 1
            self._run = 0
            if self._free is not None:
                async with self._free:
                    self._free.notify(1)

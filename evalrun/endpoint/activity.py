"""How long the server has sent nothing while requests wait on it: the measure of a dead server.

The transport wrapper (limits.py) tells an `Activity` when a request goes out, when any byte of an
answer arrives (the status line and headers, each chunk of a body) and when the request is over.
`silent_for()` is the time since the last byte, counted only while at least one request was in
flight: a wait between tries (a Retry-After) or a pause with nothing asked is no silence of the
server's. It is wall-clock time, like an item's own deadline: a loop too busy to read counts,
and the items waiting would time out anyway. The runner calls the server dead once it reaches
the run's `--timeout` (runner.py).

Everything happens on one event loop, so no lock is needed. Of evalrun, nothing is imported here.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Activity:
    """The server's silence, as seen by the requests sent to it through one client."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.in_flight = 0
        self._quiet = 0.0  # silence from spans already over (since the last byte)
        self._since = clock()  # start of the current span: the last byte, or the first request

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

"""A lane's garble over its answers: token soup apart from repetition loops, and when the loops
are the lane's fault.

A healthy small model loops on a few of its answers (1-5% on the core suite: whole words or lines
repeated, the detector's `loop` kind); mis-mapped weights and `--load-format dummy` loop on
nearly every answer from the first token. `LaneGarble` counts both over the same answers, for
bisect, compare and sign-off alike, and holds the two rates they judge by:

- `rate`, a bisect trial's: soup, plus the loops once at least `LOOPING_LANE` of the answers
  loop. A trial is judged alone against a fixed threshold (25% by default) on a probe of a few
  dozen answers, where a healthy model's few loops would read as engine damage.
- `flagged_rate`, every flagged answer (loops included): what a run shows and what sign-off's
  absolute ceiling judges. Sign-off also has the baseline: its paired garble test lets loops on
  both sides cancel, and the ceiling counting loops is what catches an engine that garbles 12%
  more answers at least 95% of the time (bench/signoff_calibration.py; counted by `rate` it
  caught 92%). A lane bisect calls garbled (rate >= 25%) is always above that ceiling.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalrun.grading.garble.verdict import GarbleVerdict
from evalrun.tables import fmt_points

# The fraction of a lane's answers that loop from which its loops count as garble: healthy lanes
# loop on 1-5% of their answers, a mis-mapped GGUF on llama-server on nearly all of them.
LOOPING_LANE = 0.5


@dataclass(frozen=True)
class LaneGarble:
    """Garble counts over a lane's answered items."""

    garbled: int  # answers the detector flagged, loops included
    loops: int  # of those, repetition loops
    answered: int  # answers judged (requests that got one)

    @classmethod
    def of(cls, verdicts: Iterable[GarbleVerdict | None]) -> LaneGarble:
        """Counts over the verdicts of a lane's answers, one per answer (None: not judged)."""
        garbled = loops = answered = 0
        for v in verdicts:
            answered += 1
            if v is not None and v.garbled:
                garbled += 1
                loops += v.loop
        return cls(garbled=garbled, loops=loops, answered=answered)

    @property
    def soup(self) -> int:
        """Garbled answers that are not loops: token soup, floods, mojibake (engine damage)."""
        return self.garbled - self.loops

    @property
    def looping(self) -> bool:
        """Most answers loop: the loops are the lane's fault, not the model's habit."""
        return self.answered > 0 and self.loops / self.answered >= LOOPING_LANE

    @property
    def counted(self) -> int:
        """The garbled answers the lane is judged by: its soup, and its loops when it loops."""
        return self.garbled if self.looping else self.soup

    @property
    def rate(self) -> float:
        """counted / answered: the garble rate a bisect trial is judged by."""
        return self.counted / self.answered if self.answered else 0.0

    @property
    def flagged_rate(self) -> float:
        """garbled / answered: every flagged answer, loops included (the rate a run shows and
        sign-off's ceiling judges)."""
        return self.garbled / self.answered if self.answered else 0.0

    def describe(self) -> str:
        """'4 of 184 answered items garbled (2.2%: 0 token soup, 4 loops)', the flagged rate; a
        lane whose loops count says so."""
        looping = ", most answers loop" if self.looping else ""
        return (
            f"{self.garbled} of {self.answered} answered items garbled "
            f"({fmt_points(100 * self.flagged_rate)}%: {self.soup} token soup, "
            f"{self.loops} loops{looping})"
        )

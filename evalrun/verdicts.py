"""The verdicts a run keeps: a grader's `Grade`, the garble detector's `GarbleVerdict` (made of
`GarbleSignal`s, each with the garble family it speaks for) and `LaneGarble`, a lane's garble over
its answers; and `GradeTimeout`, a grader that could not reach a verdict in time.

They sit below grading/ (which produces them) so that reading a stored run (store/records.py,
compare, sign-off) does not load the graders and the garble detector's word lists, nor does a run
whose answers a grading process grades (scoring/judge.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.jsondata import JSONObject
from evalrun.base.tables import fmt_points

Family = Literal["multi-script", "non-words", "salad", "loop", "flood", "collapse", "mojibake"]
FAMILIES: tuple[Family, ...] = (
    "multi-script",
    "non-words",
    "salad",
    "loop",
    "flood",
    "collapse",
    "mojibake",
)

# Every signal the detector has. A Signal (words.Signal) is typed with this name, so mypy refuses
# a signal that is not declared here, and SIGNAL_FAMILY must give each one its family
# (tests/test_garble_signals.py checks the two name the same signals).
SignalName = Literal[
    "script",
    "soup",
    "fragments",
    "tail",
    "collapse",
    "prefix",
    "lexicon",
    "function-words",
    "salad",
    "capitals",
    "word-order",
    "grammar",
    "glued",
    "doubled",
    "sprinkle",
    "stubs",
    "syntax",
    "scattered",
    "marks-only",
    "mark-lines",
    "hollow-lines",
    "number-soup",
    "capital-runs",
    "brackets",
    "code-words",
    "code-names",
    "json",
    "clusters",
    "flood",
    "diversity",
    "punctuation",
    "bangs",
    "special",
    "short-loop",
    "dashes",
    "line-loop",
    "loop",
    "repetition",
    "replacement",
    "control",
    "mojibake",
    "decoder",
    "symbols",
    "scatter",
    "stray",
    "blank",
    "glitches",
    "run-on",
]

# Which garble family each signal speaks for: one entry a SignalName.
SIGNAL_FAMILY: dict[SignalName, Family] = {
    "script": "multi-script",
    "soup": "non-words",
    "fragments": "non-words",
    "tail": "collapse",
    "collapse": "collapse",
    "prefix": "non-words",
    "lexicon": "non-words",
    "function-words": "salad",
    "salad": "salad",
    "capitals": "salad",
    "word-order": "salad",
    "grammar": "salad",
    "glued": "non-words",
    "doubled": "collapse",
    "sprinkle": "multi-script",
    "stubs": "salad",
    "syntax": "collapse",
    "scattered": "flood",
    "marks-only": "flood",
    "mark-lines": "flood",
    "hollow-lines": "flood",
    "number-soup": "flood",
    "capital-runs": "non-words",
    "brackets": "collapse",
    "code-words": "collapse",
    "code-names": "multi-script",
    "json": "collapse",
    "clusters": "non-words",
    "flood": "flood",
    "diversity": "flood",
    "punctuation": "flood",
    "bangs": "flood",
    "special": "flood",
    "short-loop": "loop",
    "dashes": "non-words",
    "line-loop": "loop",
    "loop": "loop",
    "repetition": "loop",
    "replacement": "mojibake",
    "control": "mojibake",
    "mojibake": "mojibake",
    "decoder": "mojibake",
    "symbols": "collapse",
    "scatter": "collapse",
    "stray": "salad",
    "blank": "flood",
    "glitches": "non-words",
    "run-on": "salad",
}


class GarbleSignal(BaseModel):
    """One signal that fired on the text (score at least 0.1)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The signal: soup, flood, line-loop, script, ...")
    family: Family = Field(description="The garble family it speaks for.")
    score: float = Field(description="0 clean .. 1 certainly garbled, this signal alone.")
    reason: str = Field(description="What it saw, for a person to read.")

    @property
    def text(self) -> str:
        """`name (0.83): reason`, the way a verdict's reasons show it."""
        return f"{self.name} ({self.score:.2f}): {self.reason}"


JSON_STRINGS = "in JSON strings: "


class GarbleVerdict(BaseModel):
    """The detector's call on one text (or on a response: its worst channel)."""

    model_config = ConfigDict(extra="forbid")

    garbled: bool = Field(description="The text is degenerate: token soup, a flood or a loop.")
    score: float = Field(description="0 clean .. 1 certainly garbled")
    kind: str = Field(
        default="",
        description=(
            "What the strongest signal says it is: multi-script, non-words, salad, flood, collapse, "
            "mojibake (engine damage) or loop (whole words or lines repeated: small healthy models do "
            "this too, so sign-off may count it apart); '' when clean."
        ),
    )
    signals: list[GarbleSignal] = Field(
        default_factory=list, description="The signals that fired, strongest first."
    )
    json_strings: int = Field(
        default=0,
        description="How many levels of JSON string values the signals were read in (the prose "
        "inside a JSON answer or tool call judged as prose); 0: the text itself.",
    )
    note: str = Field(default="", description="How the text was read, when not whole.")
    channel: str | None = Field(
        default=None,
        description="The response channel judged (content, reasoning, tool_calls.<name>), for a "
        "response's verdict.",
    )

    @property
    def loop(self) -> bool:
        """Garbled only as a repetition loop of real words, the way a healthy small model loops."""
        return self.garbled and self.kind == "loop"

    @property
    def reasons(self) -> list[str]:
        """The verdict explained, one line a signal, strongest first (and the note, if any)."""
        prefix = JSON_STRINGS * self.json_strings
        return [prefix + s.text for s in self.signals] + ([self.note] if self.note else [])


_REASON = re.compile(r"(\S+) \((\d+\.\d\d)\): (.*)", re.DOTALL)
_LEGACY_LOOP_SIGNALS = frozenset({"flood", "repetition", "loop"})


def upgrade_v1(data: JSONObject) -> JSONObject:
    """A schema-1 verdict ({garbled, score, kind, reasons: ["name (0.83): why", ...], channel})
    in this model's shape: the reasons read back into signals. A garbled verdict written before
    verdicts had a kind counts as a loop when its every signal is a flood or a repetition, as
    compare counted it then."""
    out = {k: v for k, v in data.items() if k != "reasons"}
    signals: list[JSONObject] = []
    notes: list[str] = []
    depth = 0
    for reason in data.get("reasons") or []:
        text = str(reason)
        n = 0
        while text.startswith(JSON_STRINGS):
            text, n = text[len(JSON_STRINGS) :], n + 1
        m = _REASON.fullmatch(text)
        if m is None:
            notes.append(str(reason))
            continue
        depth = n
        name = m.group(1)
        signals.append(
            {
                "name": name,
                # a schema-1 record may name a signal this detector no longer has
                "family": SIGNAL_FAMILY.get(cast(SignalName, name), "non-words"),
                "score": float(m.group(2)),
                "reason": m.group(3),
            }
        )
    out["signals"] = signals
    out["json_strings"] = depth
    out["note"] = "; ".join(notes)
    if out.get("garbled") and not out.get("kind"):
        names = {s["name"] for s in signals}
        if names and names <= _LEGACY_LOOP_SIGNALS:
            out["kind"] = "loop"
        else:
            out["kind"] = next((s["family"] for s in signals if s["family"] != "loop"), "non-words")
    return out


class Grade(BaseModel):
    """The verdict on one response."""

    model_config = ConfigDict(extra="forbid")

    passed: bool = Field(description="The answer passed the item's grader.")
    detail: str = Field(default="", description="Why, in a few words.")
    span: str | None = Field(
        default=None,
        description="The part of the answer the grader read, when it read one part of it (the "
        "boxed answer, the sentence after 'the answer is', ...).",
    )
    garble: GarbleVerdict | None = Field(
        default=None,
        exclude=True,
        description="The garble detector's verdict on the response, when grade() ran it (an "
        "item record keeps it in its own `garble` field, not in its grade).",
    )

    @property
    def garbled(self) -> bool:
        """The response was judged garbled (and so failed)."""
        return self.garble is not None and self.garble.garbled


# A lane's garble over its answers: token soup apart from repetition loops, and when the loops
# are the lane's fault.
#
# A healthy small model loops on a few of its answers (1-5% on the core suite: whole words or lines
# repeated, the detector's `loop` kind); mis-mapped weights and `--load-format dummy` loop on
# nearly every answer from the first token. `LaneGarble` counts both over the same answers, for
# bisect, compare and sign-off alike, and holds the two rates they judge by:
#
# - `rate`, a bisect trial's: soup, plus the loops once at least `LOOPING_LANE` of the answers
#   loop. A trial is judged alone against a fixed threshold (25% by default) on a probe of a few
#   dozen answers, where a healthy model's few loops would read as engine damage.
# - `flagged_rate`, every flagged answer (loops included): what a run shows and what sign-off's
#   absolute ceiling judges. Sign-off also has the baseline: its paired garble test lets loops on
#   both sides cancel, and the ceiling counting loops is what catches an engine that garbles 12%
#   more answers at least 95% of the time (bench/signoff_calibration.py; counted by `rate` it
#   caught 92%). A lane bisect calls garbled (rate >= 25%) is always above that ceiling.
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


class GradeTimeout(Exception):
    """A grader's pattern took longer than its time budget on one text (grading/pattern.py)."""

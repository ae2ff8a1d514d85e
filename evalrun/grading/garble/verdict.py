"""What the garble detector says about a text: a `GarbleVerdict` made of `GarbleSignal`s, each
with the garble family it speaks for."""

from __future__ import annotations

import re
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from evalrun.jsondata import JSONObject

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

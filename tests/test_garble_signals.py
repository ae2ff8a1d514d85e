"""Every garble signal is declared once with its family: a signal without one cannot exist.

`verdict.SignalName` lists the detector's signals and `words.Signal` is typed with it, so mypy
(CI runs it on evalrun/) refuses a signal whose name is not declared; `SIGNAL_FAMILY` must give
each declared name its family. Before this table was typed, a name missing from it silently
counted as `non-words`.
"""

from __future__ import annotations

from typing import get_args

import pytest
from support.garble_corpus import load_corpus

from evalrun.grading.garble import detect
from evalrun.grading.garble.words import Signal
from evalrun.verdicts import FAMILIES, SIGNAL_FAMILY, SignalName, upgrade_v1


def test_every_declared_signal_has_exactly_one_family():
    declared = get_args(SignalName)
    assert len(declared) == len(set(declared))
    assert set(declared) == set(SIGNAL_FAMILY)
    assert set(SIGNAL_FAMILY.values()) == set(FAMILIES)


def test_an_undeclared_signal_has_no_family_rather_than_non_words():
    with pytest.raises(KeyError):
        Signal("made-up", 0.5, "why").family  # type: ignore[arg-type]  # noqa: B018
    assert Signal("loop", 0.5, "why").family == "loop"


def test_the_detector_names_only_declared_signals_with_their_family():
    rows = load_corpus()[::7]
    seen: set[str] = set()
    for row in rows:
        for s in detect(row["text"], row.get("expect")).signals:
            assert s.family == SIGNAL_FAMILY[s.name]  # type: ignore[index]
            seen.add(s.name)
    assert len(seen) >= 30, sorted(seen)  # the sample exercises most of the table


def test_a_schema_1_reason_gets_its_family_from_the_table():
    v = upgrade_v1({"garbled": True, "score": 0.9, "reasons": ["line-loop (0.90): 12 lines"]})
    assert v["signals"][0]["family"] == "loop"

"""The labelled grading sets under tests/data/grading/ and their fixed tuning/held-out split.

Each row is {id, answer, passed, style, why}: an answer to one core item in the shape of an item's
`accept` example, labelled with what a careful human grader would say. `answers.jsonl` was written
alongside the graders; `blind.jsonl` by writers who saw only the prompts and a list of styles
(tests/data/grading/README.md). The graders were tuned on the tuning halves only; the held-out
halves are what tests/test_grading_set.py holds to its budget.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from evalrun.suite.load import read_jsonl

DATA = Path(__file__).resolve().parent.parent / "data" / "grading"
ANSWERS = DATA / "answers.jsonl"
BLIND = DATA / "blind.jsonl"
BLIND2 = DATA / "blind2.jsonl"
BLIND3 = DATA / "blind3.jsonl"  # tuning rows only: every row was read while tuning
BLIND4 = DATA / "blind4.jsonl"  # the shapes core-v5's graders still misjudged
WRITTEN5 = DATA / "written5.jsonl"  # tuning rows only: written for the shapes, not blind
BLIND5 = DATA / "blind5.jsonl"  # blind, four personas, every non-tool item
BLIND6 = DATA / "blind6.jsonl"  # blind, two writers, every item
BLIND7 = DATA / "blind7.jsonl"  # blind, three writers, every item
SETS = {
    "existing": ANSWERS,
    "blind": BLIND,
    "blind2": BLIND2,
    "blind3": BLIND3,
    "blind4": BLIND4,
    "written5": WRITTEN5,
    "blind5": BLIND5,
    "blind6": BLIND6,
    "blind7": BLIND7,
}
# The blind sets whose held-out half was never read while tuning (blind3 and written5 were)
BLINDS = ("blind", "blind2", "blind4", "blind5", "blind6", "blind7")


def load_rows(path: Path = ANSWERS) -> list[dict[str, Any]]:
    """Every labelled row of one set, in file order."""
    return read_jsonl(path)


def held_out(row: dict[str, Any]) -> bool:
    """A fixed half of the rows, by a hash of the item id and the answer (never of the label)."""
    key = row["id"] + "\x00" + json.dumps(row["answer"], sort_keys=True, ensure_ascii=False)
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 2 == 1

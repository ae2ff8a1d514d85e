"""docs/garble.md's examples run as written: each `evalrun garble "TEXT"  # exit N: ... (kind)`
line exits N with that kind, and the --json line names the fields the verdict has."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.grading.garble import GarbleVerdict

GARBLE_MD = Path(__file__).resolve().parent.parent / "docs" / "garble.md"
_EXAMPLE = re.compile(
    r'^evalrun garble "(?P<text>[^"]+)"\s+# exit (?P<code>\d)(?:: garbled \((?P<kind>[a-z-]+)\))?',
    re.M,
)


EXAMPLES = [m.groupdict() for m in _EXAMPLE.finditer(GARBLE_MD.read_text(encoding="utf-8"))]


def test_the_readme_has_garble_examples():
    assert len(EXAMPLES) >= 4
    assert {e["code"] for e in EXAMPLES} == {"0", "1"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["text"][:24] for e in EXAMPLES])
def test_readme_example_runs_as_documented(example, capsys):
    assert main(["garble", example["text"], "--json"]) == int(example["code"])
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["kind"] == (example["kind"] or "")


def test_readme_json_fields_are_the_printed_ones(capsys):
    fields = re.search(r"--json\s+# exit 0: \{([^}]*)\}", GARBLE_MD.read_text(encoding="utf-8"))
    assert fields is not None
    main(["garble", "yondyondyondyond Mut", "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert [f.strip() for f in fields.group(1).split(",")] == list(printed)
    assert set(printed) <= set(GarbleVerdict.model_fields) | {"reasons"}

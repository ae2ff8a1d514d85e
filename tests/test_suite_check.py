"""`evalrun suite check` / `show` on small suites built in a temp folder."""

from __future__ import annotations

import json

import pytest

from evalrun.base.errors import SuiteError
from evalrun.cli import main
from evalrun.suite.check import check_suite
from evalrun.suite.load import load_suite


def item(ident: str, **over) -> dict:
    base = {
        "id": ident,
        "category": ident.rsplit("-", 1)[0],
        "messages": [{"role": "user", "content": "What is 6 times 7?"}],
        "max_tokens": 32,
        "grader": {"kind": "numeric", "answer": 42},
        "tags": [],
        "accept": ["42", "The answer is 42."],
        "reject": ["41"],
    }
    return {**base, **over}


def write_suite(folder, rows, *, fix=True):
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "items.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    if fix:
        check_suite(folder, fix_hash=True)
    return folder


def kinds(report):
    return sorted({p.kind for p in report.problems})


def test_good_suite_passes_and_fix_hash_writes_counts(tmp_path):
    folder = write_suite(tmp_path / "s", [item("math-001"), item("math-002", tags=["probe"])])
    report = check_suite(folder)
    assert report.ok, report.problems
    assert report.examples == 6
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["categories"] == {"math": 2}
    assert load_suite(str(folder)).label == "s-v1"


@pytest.mark.parametrize(
    "row,kind",
    [
        (item("math-002", accept=["42", "41"]), "accept"),
        (item("math-002", reject=["It is 42."]), "reject"),
        (item("math-002", accept=["42"]), "examples"),
        (item("math-002", reject=[]), "examples"),
        (item("math-002", grader={"kind": "numeric", "answer": 42, "tol": 1}), "grader"),
        (item("math-002", grader={"kind": "nonesuch"}), "grader"),
        (item("math-001"), "duplicate"),
        (item("math-002", extra_field=1), "schema"),
        (item("math-002", category="logic"), "schema"),
        (item("math-2"), "schema"),
        (item("maths-002", category="math"), "schema"),
    ],
)
def test_each_problem_is_reported(tmp_path, row, kind):
    folder = write_suite(tmp_path / "s", [item("math-001"), row])
    assert kind in kinds(check_suite(folder))


def test_modified_items_are_refused_until_rehashed(tmp_path):
    folder = write_suite(tmp_path / "s", [item("math-001")])
    with (folder / "items.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(item("math-002")) + "\n")
    assert "manifest" in kinds(check_suite(folder))
    with pytest.raises(SuiteError, match="bump"):
        load_suite(str(folder))
    check_suite(folder, fix_hash=True)
    assert check_suite(folder).ok


def test_cli_check_exit_codes_and_json(tmp_path, capsys):
    folder = write_suite(tmp_path / "s", [item("math-001")])
    assert main(["suite", "check", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["items"] == 1
    write_suite(folder, [item("math-001", reject=["42"])], fix=False)
    assert main(["suite", "check", str(folder)]) == 1
    assert "reject[0] passes" in capsys.readouterr().out


def test_cli_check_a_parts_file(tmp_path, capsys):
    part = tmp_path / "math.jsonl"
    part.write_text(json.dumps(item("math-001")) + "\n", encoding="utf-8")
    assert main(["suite", "check", str(part)]) == 0


def test_cli_show_lists_categories_and_probes(tmp_path, capsys):
    folder = write_suite(tmp_path / "s", [item("math-001", tags=["probe"]), item("logic-001")])
    assert main(["suite", "show", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["categories"] == {"math": 1, "logic": 1}
    assert [p["id"] for p in out["probes"]] == ["math-001"]

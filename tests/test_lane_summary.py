"""What every summary says about a lane: loops apart from token soup (score, show, runs, report),
and what a booted lane does not do by its design said once instead of a hint to reconfigure it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from fakeserver import simple_item
from support.synthruns import items_for, write_run

from evalrun.cli import main
from evalrun.scoring.report import score_text
from evalrun.serving.contract import load_contract
from evalrun.store import RunStore, summarize
from evalrun.verdicts import GarbleSignal, GarbleVerdict

ENGINE = Path(__file__).parent / "fake_engines" / "engine.py"
LOOP = {"name": "loop", "family": "loop", "score": 1.0, "reason": "'ciel' repeated 15 times"}
RUN = "2026-12-07_031114_reference"


def _with_loops(store: RunStore, *, contract: dict | None = None) -> None:
    """A run of 184 items: two token soup, five loops, 13 no_tool_call and 6 context_length."""
    items = items_for(
        failing=[f"reasoning-{k:03d}" for k in range(10)] + [f"tools-{k:03d}" for k in range(13)],
        garbled=[f"reasoning-{k:03d}" for k in range(7)],
        diagnoses={
            "no_tool_call": [f"tools-{k:03d}" for k in range(13)],
            "context_length": [f"reasoning-{k:03d}" for k in range(7, 10)],
        },
    )
    for it in items[:]:
        if it.garble is not None and it.id >= "reasoning-002":
            it.garble = GarbleVerdict(
                garbled=True, score=1.0, kind="loop", signals=[GarbleSignal(**LOOP)]
            )
    record = write_run(store, RUN, items)
    record.summary = summarize(items, items)
    if contract is not None:
        record.contract = contract
    store.write_run(record)


REFERENCE_LIKE = {
    "name": "reference",
    "engine": "llama.cpp",
    "by_design": {
        "no_tool_call": "tool calls (its chat template has no tools)",
        "context_length": "prompts longer than a slot",
    },
}


def test_every_summary_shows_loops_apart_from_soup(tmp_path, capsys):
    store = RunStore(tmp_path)
    _with_loops(store)
    record = store.load_run(RUN)
    assert record.summary and record.summary.garble_loops == 5
    assert "garbled: 7 item(s), rate 3.8%: 2 token soup, 5 loops" in score_text(record)

    assert main(["show", RUN, "--results", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "2 token soup, 5 loops" in shown and "garbled (a loop):" in shown

    assert main(["runs", "--results", str(tmp_path)]) == 0
    assert "7 (5 loops)" in capsys.readouterr().out
    assert main(["runs", "--results", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["garble_loops"] == 5

    assert main(["report", RUN, "--results", str(tmp_path)]) == 0
    capsys.readouterr()
    page = (tmp_path / RUN / "report.html").read_text()
    assert "2 token soup, 5 loops" in page


def test_a_run_written_before_loops_were_counted_shows_its_garbled_count(tmp_path):
    store = RunStore(tmp_path)
    _with_loops(store)
    data = json.loads((tmp_path / RUN / "run.json").read_text())
    del data["summary"]["garble_loops"]
    (tmp_path / RUN / "run.json").write_text(json.dumps(data))
    text = score_text(store.load_run(RUN))
    assert "garbled: 7 item(s), rate 3.8%\n" in text and "loops" not in text


def test_an_endpoints_diagnoses_keep_their_hints(tmp_path):
    store = RunStore(tmp_path)
    _with_loops(store)
    text = score_text(store.load_run(RUN))
    assert "! no_tool_call (13 items): a tool call was expected" in text
    assert "! context_length (3 items)" in text and "by design" not in text


def test_the_lanes_own_design_is_said_once_without_a_hint_to_reconfigure(tmp_path, capsys):
    store = RunStore(tmp_path)
    _with_loops(store, contract=REFERENCE_LIKE)
    text = score_text(store.load_run(RUN))
    assert "! " not in text, text
    design = [line for line in text.splitlines() if "by design" in line]
    assert design == [
        "the reference lane does not do, by design: tool calls (its chat template has no "
        "tools) (13 items); prompts longer than a slot (3 items); those items fail as its "
        "design, not a setup fault"
    ]
    assert main(["show", RUN, "--results", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "! " not in shown and shown.count("by design") == 1
    assert main(["report", RUN, "--results", str(tmp_path)]) == 0
    page = (tmp_path / RUN / "report.html").read_text()
    assert "by design" in page and "tool-call-parser" not in page


def test_the_reference_contract_declares_what_it_does_not_do():
    contract = load_contract(Path(__file__).parent.parent / "bisect/contracts/reference.yaml")
    assert set(contract.by_design) == {"no_tool_call", "context_length"}


TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


@pytest.mark.slow
def test_a_booted_lanes_design_reaches_the_end_of_score(tmp_path, make_suite, capsys):
    """A lane without tools by design (the fake engine answers every request in prose): the
    run records its by_design, and score's summary says it once instead of the hint."""
    path = tmp_path / "contract.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "no-tools",
                "engine": "vllm",
                "command": [sys.executable, str(ENGINE)],
                "model": "fake-model",
                "port": 0,
                "boot_timeout": 30,
                "by_design": {"no_tool_call": "tool calls (no parser, on purpose)"},
            }
        )
    )
    tool_item = simple_item(
        1,
        category="tool",
        tools=[TOOL],
        grader={"kind": "tool_call", "name": "get_weather"},
        accept=[{"tool_calls": [{"name": "get_weather", "arguments": {}}]}],
        reject=["It is sunny."],
    )
    suite = make_suite([simple_item(0, answer="OK"), tool_item])
    base = ["--suite", str(suite), "--results", str(tmp_path / "r"), "--no-progress"]
    assert main(["score", "--contract", str(path), *base]) == 0
    out = capsys.readouterr().out
    assert "! no_tool_call" not in out
    assert (
        "the no-tools lane does not do, by design: tool calls (no parser, on purpose) (1 item)"
        in out
    )
    record = json.loads(next((tmp_path / "r").glob("*/run.json")).read_text())
    assert record["contract"]["by_design"] == {"no_tool_call": "tool calls (no parser, on purpose)"}

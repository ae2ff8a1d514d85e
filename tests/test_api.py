"""The Python API and the CLI build one `ScoreOptions`: every flag has a keyword, the defaults
are the same, and the same options store the same run."""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import fields
from pathlib import Path

import pytest
from fakeserver import simple_item

import evalrun
from evalrun.cli import build_parser, main
from evalrun.scoring.options import ScoreOptions
from evalrun.scoring.plan import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    REFERENCE_TIMEOUT_S,
    Limits,
    plan,
)
from evalrun.serving.target import TargetSpec
from evalrun.store import RunStore

# Flags about what the CLI prints or exits with: an API caller reads the returned record instead.
CLI_ONLY = {"json", "fail_below", "fail_on_garble", "no_progress"}


def _score_actions() -> list[argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in sub.choices["score"]._actions if a.dest != "help"]


def test_every_score_flag_is_a_keyword_of_the_api():
    names = {f.name for f in fields(ScoreOptions)}
    missing = []
    for action in _score_actions():
        if action.dest in CLI_ONLY:
            continue
        if action.dest not in names:
            missing.append(action.dest)
        flag = action.option_strings[0].lstrip("-").replace("-", "_")
        ScoreOptions.from_keywords(**{flag: action.default})  # the flag's own spelling works
    assert not missing, f"flags without a ScoreOptions field: {missing}"
    assert "progress" in names  # --no-progress, the other way round


def test_deterministic_is_a_keyword_as_it_is_a_flag():
    """--deterministic is --set deterministic=true; the API's keyword says the same."""
    options = ScoreOptions.from_keywords(contract="c.yaml", set=["a=1"], deterministic=True)
    assert options.sets == ("a=1", "deterministic=true")
    assert ScoreOptions.from_keywords(deterministic=False).sets == ()


def test_unknown_keywords_are_a_type_error_naming_the_known_ones():
    with pytest.raises(TypeError, match="temprature.*known: .*temperature"):
        evalrun.score("http://127.0.0.1:1/v1", temprature=1)


def test_the_cli_and_the_api_share_their_defaults():
    parsed = build_parser().parse_args(["score"])
    from evalrun.commands.score import options_from_args

    cli = options_from_args(parsed)
    assert cli == ScoreOptions(progress=True)  # the bar is the only difference, and on purpose
    assert Limits.of(ScoreOptions()) == Limits(DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S)
    assert Limits.of(ScoreOptions(reference=True), _reference()) == Limits(4, REFERENCE_TIMEOUT_S)


def _reference(*sets: str):
    return TargetSpec(reference=True, sets=sets).load_contract()


def test_the_reference_sends_as_many_requests_as_it_has_slots():
    def slots(*sets: str, **kw) -> int:
        options = ScoreOptions(reference=True, sets=sets, **kw)
        return Limits.of(options, _reference(*sets)).concurrency

    assert slots("parallel=8") == 8
    assert slots("ctx-size=4096") == 4
    assert slots("parallel=8", concurrency=2) == 2
    assert Limits.of(ScoreOptions(contract="c.yaml", sets=("parallel=8",))).concurrency == 16


def test_picking_keywords_select_like_the_flags(make_suite, tmp_path):
    cats = [simple_item(i, category=c) for i, c in enumerate(["a", "a", "b", "c"])]
    suite = str(make_suite(cats))
    opts = ScoreOptions.from_keywords(
        endpoint="http://127.0.0.1:1/v1", suite=suite, category=["a", "b"], items="a-000,b-002"
    )
    settled = plan(opts, RunStore(tmp_path / "results"))
    assert [i.id for i in settled.items] == ["a-000", "b-002"]


_VOLATILE = {"run_id", "started_at", "ended_at", "pid", "host", "provenance", "server"}


def _run_json(results: Path) -> dict:
    (path,) = results.glob("*/run.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in _VOLATILE}


def _items(results: Path) -> list[dict]:
    (path,) = results.glob("*/items.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    for row in rows:
        row.pop("finished_at"), row.pop("latency_s"), row["response"].pop("latency_s")
    return sorted(rows, key=lambda r: r["id"])


def test_the_api_and_the_cli_store_the_same_run(fake_server, make_suite, tmp_path, capsys):
    items = [simple_item(i, category=c) for i, c in enumerate(["a", "a", "b", "b", "c"])]
    items.append(simple_item(9, answer="no", category="c"))
    suite = str(make_suite(items))
    flags = {
        "suite": suite,
        "label": "same",
        "limit": 4,
        "seed": 3,
        "repeats": 2,
        "temperature": 0.3,
        "request_seed": 7,
        "max_tokens_scale": 2.0,
        "extra_body": '{"top_k": 5}',
        "concurrency": 2,
    }
    argv = ["score", "--endpoint", fake_server.base_url, "--no-progress"]
    for key, value in flags.items():
        argv += [f"--{'name' if key == 'label' else key.replace('_', '-')}", str(value)]
    assert main([*argv, "--results", str(tmp_path / "cli")]) == 0
    capsys.readouterr()

    async def in_a_notebook() -> None:  # the API inside a running event loop
        evalrun.score(fake_server.base_url, results=tmp_path / "api", **flags)

    asyncio.run(in_a_notebook())
    assert _run_json(tmp_path / "api") == _run_json(tmp_path / "cli")
    assert _items(tmp_path / "api") == _items(tmp_path / "cli")
    assert _run_json(tmp_path / "cli")["sampling"]["seed"] == 7  # request_seed is the sampling's
    assert _run_json(tmp_path / "cli")["selection"]["seed"] == 3  # seed is the --limit draw's

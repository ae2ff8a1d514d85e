"""`evalrun score --contract/--reference`: boot, score, tear down; server.log in the run folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from fakeserver import simple_item

from evalrun.cli import main

ENGINE = Path(__file__).parent / "fake_engines" / "engine.py"


def contract_file(tmp_path: Path, **args: object) -> Path:
    path = tmp_path / "contract.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "fake-engine",
                "engine": "vllm",
                "command": [sys.executable, str(ENGINE)],
                "model": "fake-model",
                "port": 0,
                "boot_timeout": 30,
                "args": args,
            }
        )
    )
    return path


@pytest.mark.slow
def test_score_a_contract_end_to_end(tmp_path, make_suite, capsys):
    results = tmp_path / "results"
    suite = make_suite([simple_item(i, answer="OK") for i in range(3)])
    code = main(
        [
            "score",
            "--contract",
            str(contract_file(tmp_path, **{"boot-delay": 0.0})),
            "--set",
            "args.boot-delay=0.2",
            "--suite",
            str(suite),
            "--results",
            str(results),
            "--json",
            "--no-progress",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["passed"] == 3 and data["model"] == "fake-model"
    folder = Path(data["path"])
    assert data["run_id"].endswith("_fake-engine")
    assert "fake engine starting" in (folder / "server.log").read_text()
    record = json.loads((folder / "run.json").read_text())
    assert "0.2" in record["contract"]["argv"]  # --set reached the rendered command
    assert record["server"]["engine_version"] == "0.0.fake"
    assert record["endpoint"].startswith("http://127.0.0.1:")
    # resuming needs the contract again: the booted server is gone
    assert main(["score", "--resume", data["run_id"], "--results", str(results)]) == 2
    assert "resume with --contract FILE" in capsys.readouterr().err
    code = main(
        [
            "score",
            "--contract",
            str(tmp_path / "contract.yaml"),
            "--resume",
            data["run_id"],
            "--results",
            str(results),
            "--no-progress",
        ]
    )
    assert code == 0 and f"{data['run_id']}: mini-v1: 3/3" in capsys.readouterr().out
    assert len(list(folder.glob("server*.log"))) == 2


@pytest.mark.slow
def test_boot_failure_exit_3_or_125(tmp_path, make_suite, capsys):
    contract = contract_file(tmp_path, mode="crash", message="oom")
    base = [
        "score",
        "--contract",
        str(contract),
        "--suite",
        str(make_suite(n=1)),
        "--results",
        str(tmp_path / "results"),
        "--no-progress",
    ]
    assert main(base) == 3
    assert "out of memory" in capsys.readouterr().err.lower()
    assert main([*base, "--fail-below", "50"]) == 125


def test_unset_unknown_knob_exit_2(tmp_path, make_suite, capsys):
    code = main(
        [
            "score",
            "--contract",
            str(contract_file(tmp_path)),
            "--unset",
            "args.nope",
            "--suite",
            str(make_suite(n=1)),
            "--results",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2 and "no such knob" in capsys.readouterr().err


@pytest.mark.integration
def test_score_reference_endpoint(tmp_path, make_suite, capsys):
    pytest.importorskip("xllamacpp")
    suite = make_suite([simple_item(i) for i in range(3)])
    code = main(
        [
            "score",
            "--reference",
            "--set",
            "port=0",
            "--suite",
            str(suite),
            "--results",
            str(tmp_path / "results"),
            "--json",
            "--no-progress",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 4) and data["total"] == 3 and data["errors"] == 0
    record = json.loads((Path(data["path"]) / "run.json").read_text())
    assert record["contract"]["name"] == "reference" and record["server"]["boot_seconds"] > 0
    assert (Path(data["path"]) / "server.log").stat().st_size > 0


@pytest.mark.slow
def test_contract_without_a_model_asks_v1_models(tmp_path, make_suite, capsys):
    """No model/served_model_name: the model is the one /v1/models lists (not the contract's
    name); the contract's request: block is read as request options, a flag winning over it."""
    path = tmp_path / "nomodel.yaml"
    contract = {
        "name": "lane-without-model",
        "engine": "vllm",
        "command": [sys.executable, str(ENGINE), "served-by-engine"],
        "port": 0,
        "boot_timeout": 30,
        "request": {"temperature": 0.5, "seed": 9, "top_k": 3},
    }
    path.write_text(yaml.safe_dump(contract))
    suite = make_suite([simple_item(0, answer="OK")])
    args = ["--suite", str(suite), "--results", str(tmp_path / "r"), "--json", "--no-progress"]
    code = main(["score", "--contract", str(path), "--request-seed", "1", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["model"] == "served-by-engine" and data["passed"] == 1
    record = json.loads((Path(data["path"]) / "run.json").read_text())
    assert record["sampling"] == {
        "temperature": 0.5,
        "seed": 1,
        "extra": {"top_k": 3},
        "top_logprobs": 5,
    }


def test_a_bad_request_block_fails_before_anything_boots(tmp_path, make_suite, capsys):
    """The plan folds the contract's request: block into the options it will send: a bad value
    there is a one-line usage error (exit 2) before the engine is started."""
    path = tmp_path / "bad-request.yaml"
    contract = {
        "name": "lane-bad-request",
        "engine": "vllm",
        "command": [sys.executable, str(ENGINE)],
        "model": "fake-model",
        "port": 0,
        "boot_timeout": 30,
        "request": {"temperature": "hot"},
    }
    path.write_text(yaml.safe_dump(contract))
    suite = make_suite([simple_item(0, answer="OK")])
    results = tmp_path / "results"
    args = ["--suite", str(suite), "--results", str(results), "--no-progress"]
    code = main(["score", "--contract", str(path), *args])
    err = capsys.readouterr().err
    assert code == 2 and "request option temperature" in err, err
    assert not list(results.glob("*/server.log"))  # the engine never started


_OPENED: list[str] = []
_WATCHING: list[bool] = [False]


def _count_opens(event: str, args: tuple) -> None:
    if _WATCHING[0] and event == "open" and args and isinstance(args[0], (str, Path)):
        _OPENED.append(str(args[0]))


sys.addaudithook(_count_opens)


@pytest.mark.slow
def test_a_booted_score_reads_its_contract_once(tmp_path, make_suite, capsys):
    """The plan loads the contract and keeps it: the boot timer's label, the run's name and the
    boot itself all use that one parse (counted as opens of the file, seen by an audit hook)."""
    contract = contract_file(tmp_path, **{"boot-delay": 0.0})
    suite = make_suite([simple_item(i, answer="OK") for i in range(2)])
    _OPENED.clear()
    _WATCHING[0] = True
    try:
        code = main(
            ["score", "--contract", str(contract), "--suite", str(suite)]
            + ["--results", str(tmp_path / "results"), "--json"]
        )
    finally:
        _WATCHING[0] = False
    assert code == 0, capsys.readouterr().err
    assert _OPENED.count(str(contract)) == 1, _OPENED


@pytest.mark.slow
@pytest.mark.parametrize("where", ["args", "env"], ids=["args.api-key", "env VLLM_API_KEY"])
def test_a_contract_whose_engine_requires_a_key_boots_and_scores(
    where, tmp_path, make_suite, capsys, monkeypatch
):
    """The engine answers 401 on /v1 without the contract's key: the readiness chat and the
    scoring client both send it (the user's own OPENAI_API_KEY is for other endpoints)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")
    path = contract_file(tmp_path, **({"api-key": "sk-engine-7"} if where == "args" else {}))
    if where == "env":
        doc = yaml.safe_load(path.read_text())
        path.write_text(yaml.safe_dump({**doc, "env": {"VLLM_API_KEY": "sk-engine-7"}}))
    results = tmp_path / "results"
    suite = make_suite([simple_item(i, answer="OK") for i in range(3)])
    argv = ["score", "--contract", str(path), "--suite", str(suite), "--results", str(results)]
    code = main([*argv, "--json", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["passed"] == 3
    folder = Path(data["path"])
    for name in ("run.json", "server.log", "items.jsonl"):
        assert "sk-engine-7" not in (folder / name).read_text()


@pytest.mark.slow
def test_a_key_the_contract_does_not_name_is_a_one_line_boot_error(
    tmp_path, make_suite, capsys, monkeypatch
):
    """The engine wants a key the contract does not carry (set outside it): the boot error says
    where to put it."""
    monkeypatch.setenv("VLLM_API_KEY", "sk-outside")
    results = tmp_path / "results"
    suite = make_suite([simple_item(0, answer="OK")])
    path = contract_file(tmp_path)
    code = main(
        ["score", "--contract", str(path), "--suite", str(suite), "--results", str(results)]
    )
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "HTTP 401" in err and "args.api-key" in err

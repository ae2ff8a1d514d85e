"""`evalrun score/runs/show` as a user runs them: exit codes, one-line errors, --json."""

from __future__ import annotations

import json
import socket

import pytest
from fakeserver import Fault, http_error, last_user, reply, simple_item

from evalrun.cli import main
from evalrun.grading import garble
from evalrun.grading.garble import GarbleSignal, GarbleVerdict


@pytest.fixture
def results(tmp_path):
    return str(tmp_path / "results")


def score(capsys, *argv):
    code = main(["score", "--no-progress", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_json_object_has_the_fields(fake_server, make_suite, results, capsys):
    items = [simple_item(0), simple_item(1, answer="x", category="other")]
    fake_server.rule = lambda req: reply("ok")
    code, out, _ = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(items)),
        "--results",
        results,
        "--json",
        "--name",
        "t",
    )
    assert code == 0
    data = json.loads(out)
    for key in (
        "run_id",
        "path",
        "suite",
        "suite_version",
        "suite_sha256",
        "model",
        "passed",
        "total",
        "score",
        "errors",
        "garbled",
        "diagnoses",
        "categories",
    ):
        assert key in data
    assert (data["passed"], data["total"], data["score"]) == (1, 2, 50)
    assert data["categories"] == {
        "basic": {"passed": 1, "total": 1, "errors": 0, "garbled": 0},
        "other": {"passed": 0, "total": 1, "errors": 0, "garbled": 0},
    }
    assert data["run_id"].endswith("_t") and data["suite"] == "mini"


def test_text_output_has_table_and_headline(fake_server, make_suite, results, capsys):
    code, out, _ = score(
        capsys,
        "--endpoint",
        fake_server.host_url,
        "--suite",
        str(make_suite(n=3)),
        "--results",
        results,
    )
    assert code == 0
    last = out.strip().splitlines()[-1]
    assert last.endswith(": mini-v1: 3/3 (100/100)")
    assert "category" in out and "basic" in out


def test_items_in_error_exit_4(fake_server, make_suite, results, capsys):
    fake_server.rule = lambda req: (
        http_error(400, "bad request") if "question 0:" in last_user(req) else reply("ok")
    )
    code, out, _ = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=3)),
        "--results",
        results,
    )
    assert code == 4 and "--resume" in out


def test_diagnosis_hint_printed(fake_server, make_suite, results, capsys):
    fake_server.rule = lambda req: reply(None, reasoning="ok")
    code, out, _ = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=2)),
        "--results",
        results,
    )
    assert code == 0 and "reasoning_only (2 items)" in out and "enable_thinking" in out


@pytest.mark.parametrize(
    "setup,needle",
    [
        (
            lambda f: setattr(f, "models_fault", Fault(200, kind="html", message="Open WebUI")),
            "HTML",
        ),
        (
            lambda f: setattr(f, "models_fault", Fault(200, kind="nonjson", message="hello")),
            "not the OpenAI API",
        ),
        (
            lambda f: setattr(f, "models_fault", Fault(404, kind="html", message="nginx")),
            "HTTP 404",
        ),
    ],
)
def test_not_openai_compatible_exit_3(fake_server, make_suite, results, capsys, setup, needle):
    setup(fake_server)
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=1)),
        "--results",
        results,
    )
    assert code == 3 and needle in one_line(err) and "--endpoint" in err
    assert fake_server.chat_requests == 0


def test_unreachable_endpoint_exit_3(make_suite, results, capsys):
    code, _, err = score(
        capsys,
        "--endpoint",
        f"127.0.0.1:{closed_port()}",
        "--suite",
        str(make_suite(n=1)),
        "--results",
        results,
    )
    assert code == 3 and "cannot reach" in one_line(err) and "is the server up" in err


def test_several_models_exit_2_names_them(fake_server, make_suite, results, capsys):
    fake_server.models = ["qwen", "llama"]
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=1)),
        "--results",
        results,
    )
    assert code == 2 and "qwen, llama" in one_line(err) and "--model" in err


def test_unknown_suite_exit_2(fake_server, results, capsys):
    code, _, err = score(
        capsys, "--endpoint", fake_server.base_url, "--suite", "no-such-suite", "--results", results
    )
    assert code == 2 and "unknown suite 'no-such-suite'" in one_line(err)


def test_malformed_suite_exit_2(fake_server, make_suite, results, capsys):
    folder = make_suite(n=2)
    items = folder / "items.jsonl"
    items.write_bytes(items.read_bytes() + b'{"id": broken\n')
    code, _, err = score(
        capsys, "--endpoint", fake_server.base_url, "--suite", str(folder), "--results", results
    )
    assert code == 2 and "manifest" in one_line(err)  # hash no longer matches
    import hashlib

    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["sha256"] = hashlib.sha256(items.read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = score(
        capsys, "--endpoint", fake_server.base_url, "--suite", str(folder), "--results", results
    )
    assert code == 2 and "items.jsonl:3: not valid JSON" in one_line(err)
    assert fake_server.chat_requests == 0


def test_unwritable_results_dir_exit_2(fake_server, make_suite, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=1)),
        "--results",
        str(blocker / "results"),
    )
    assert code == 2 and "not writable" in one_line(err) and "--results" in err
    assert fake_server.chat_requests == 0


@pytest.mark.parametrize(
    "argv,needle",
    [
        ([], "pass --endpoint"),
        (["--endpoint", "http://x/v1", "--set", "args.a=1"], "--set/--unset"),
        (["--endpoint", "http://x/v1", "--contract", "c.yaml"], "exclude each other"),
        (
            ["--endpoint", "http://x/v1", "--api-key-env", "EVALRUN_TEST_NO_VAR"],
            "is empty or unset",
        ),
        (["--endpoint", "http://x/v1", "--fail-on-garble", "5"], "between 0 and 1"),
        (["--endpoint", "ftp://x", "--suite", "SUITE"], "not an http(s) URL"),
        (["--resume", "no-such-run"], "no run 'no-such-run'"),
    ],
)
def test_usage_errors_exit_2(make_suite, results, capsys, argv, needle):
    argv = [str(make_suite(n=1)) if a == "SUITE" else a for a in argv]
    code, _, err = score(capsys, *argv, "--results", results)
    assert code == 2 and needle in one_line(err)


def test_api_key_from_env(fake_server, make_suite, results, capsys, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sekrit")
    code, _, _ = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=1)),
        "--results",
        results,
        "--api-key-env",
        "MY_KEY",
    )
    assert code == 0 and fake_server.headers[-1]["authorization"] == "Bearer sekrit"


def test_bisect_exit_codes(fake_server, make_suite, results, capsys, monkeypatch):
    suite = str(make_suite([simple_item(0), simple_item(1, answer="no")]))  # scores 50
    base = ["--endpoint", fake_server.base_url, "--suite", suite, "--results", results]
    assert score(capsys, *base, "--fail-below", "50")[0] == 0
    assert score(capsys, *base, "--fail-below", "51")[0] == 1
    monkeypatch.setattr(
        garble,
        "check_response",
        lambda r, e=None: GarbleVerdict(
            garbled=True,
            score=1.0,
            kind="non-words",
            signals=[GarbleSignal(name="soup", family="non-words", score=1.0, reason="soup")],
            channel="content",
        ),
    )
    assert score(capsys, *base, "--fail-on-garble", "0.5")[0] == 1
    code, _, err = score(
        capsys,
        "--endpoint",
        f"127.0.0.1:{closed_port()}",
        "--suite",
        suite,
        "--results",
        results,
        "--fail-below",
        "50",
    )
    assert code == 125 and "untestable" in one_line(err)
    monkeypatch.undo()
    fake_server.rule = lambda req: (
        http_error(400, "tool_choice auto requires --enable-auto-tool-choice")
        if "question 1:" in last_user(req)
        else reply("ok")
    )
    assert score(capsys, *base, "--fail-on-garble", "0.5")[0] == 1  # an item in error is bad


def test_runs_and_show(fake_server, make_suite, results, capsys):
    fake_server.rule = lambda req: (
        reply("wrong\u2028answer") if "question 1:" in last_user(req) else reply("ok")
    )
    score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=2)),
        "--results",
        results,
        "--name",
        "first",
    )
    assert main(["runs", "--results", results]) == 0
    out = capsys.readouterr().out
    assert "_first" in out and "1/2 (50)" in out and "complete" in out
    assert main(["runs", "--results", results, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert runs[0]["score"] == 50 and runs[0]["status"] == "complete"
    assert main(["show", "latest", "--results", results]) == 0
    out = capsys.readouterr().out
    assert "basic-001 [basic] failed" in out and "wrong\u2028answer" in out
    assert "basic-000" not in out  # passed items are not listed
    assert main(["show", runs[0]["run_id"], "--results", results, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [i["id"] for i in data["failed_items"]] == ["basic-001"]
    assert main(["show", "nope", "--results", results]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_runs_on_empty_store(tmp_path, capsys):
    assert main(["runs", "--results", str(tmp_path / "none")]) == 0
    assert "no runs" in capsys.readouterr().out


def test_chat_answering_html_stops_early_exit_3(fake_server, make_suite, results, capsys):
    fake_server.rule = lambda req: Fault(200, kind="html", message="Open WebUI")
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=12)),
        "--results",
        results,
        "--concurrency",
        "1",
    )
    line = one_line(err)
    assert code == 3 and "HTML" in line and "--resume" in line
    assert fake_server.chat_requests == 8  # not retried, and no more items after the 8th
    code, out, _ = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=12)),
        "--results",
        results,
        "--concurrency",
        "1",
        "--json",
    )
    data = json.loads(out)  # --json still prints the stored (incomplete) run
    assert code == 3 and data["status"] == "incomplete" and data["errors"] == 8


def test_wrong_model_name_stops_at_once_exit_2(fake_server, make_suite, results, capsys):
    fake_server.rule = lambda req: http_error(404, f"The model `{req['model']}` does not exist.")
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=20)),
        "--results",
        results,
        "--model",
        "qwen",
        "--concurrency",
        "1",
    )
    line = one_line(err)
    assert code == 2 and "does not serve model 'qwen'" in line and "fake-model" in line
    assert fake_server.chat_requests == 1


def test_concurrency_must_be_positive(fake_server, make_suite, results, capsys):
    code, _, err = score(
        capsys,
        "--endpoint",
        fake_server.base_url,
        "--suite",
        str(make_suite(n=1)),
        "--results",
        results,
        "--concurrency",
        "0",
    )
    assert code == 2 and "--concurrency must be at least 1" in one_line(err)


def test_model_with_a_contract_is_a_usage_error(results, capsys):
    code, _, err = score(capsys, "--reference", "--model", "x", "--results", results)
    assert code == 2 and "served_model_name" in one_line(err)

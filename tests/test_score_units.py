"""Small pieces of score: credentials stripped from provenance, diagnosis texts of each engine,
the progress bar, the summary arithmetic."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from evalrun.endpoint.diagnose import HINTS, diagnose_error, diagnose_response
from evalrun.endpoint.response import ItemError, Response, ToolCall
from evalrun.provenance import collect, git_facts, strip_credentials
from evalrun.scoring.report import ProgressBar


@pytest.mark.parametrize(
    "url,clean",
    [
        ("https://user:ghp_token@github.com/o/r.git", "https://github.com/o/r.git"),
        ("https://oauth2:glpat-x@gitlab.example/o/r", "https://gitlab.example/o/r"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("https://github.com/o/r", "https://github.com/o/r"),
    ],
)
def test_strip_credentials(url, clean):
    assert strip_credentials(url) == clean


def test_git_facts_of_a_repo(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "f").write_text("1")
    git("add", "f")
    git("commit", "-qm", "one")
    git("remote", "add", "origin", "https://me:s3cret@example.com/r.git")
    facts = git_facts(tmp_path)
    assert len(facts["commit"]) == 40 and facts["branch"] == "main" and facts["dirty"] is False
    assert facts["remotes"] == {"origin": "https://example.com/r.git"}
    (tmp_path / "f").write_text("2")
    assert git_facts(tmp_path)["dirty"] is True
    assert "s3cret" not in str(collect(tmp_path))


def test_git_facts_outside_a_repo(tmp_path):
    assert git_facts(tmp_path) == {} and git_facts(tmp_path / "missing") == {}


@pytest.mark.parametrize(
    "status,message,kind",
    [
        (
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            "tool_choice_400",
        ),
        (
            400,
            "This model's maximum context length is 4096 tokens. However, you requested 5000 "
            "tokens (4900 in the messages, 100 in the completion).",
            "context_length",
        ),
        (
            400,
            "The input (40000 tokens) is longer than the model's context length (32768 tokens).",
            "context_length",
        ),  # sglang
        (
            400,
            "Requested tokens (40000) exceed context window of 32768",
            "context_length",
        ),  # llama-cpp-python
        (
            400,
            "the request exceeds the available context size, try increasing it",
            "context_length",
        ),
        (404, "The model `qwen` does not exist.", "model_not_found"),
    ],
)
def test_error_texts_of_each_engine(status, message, kind):
    assert diagnose_error(ItemError(kind="http", message=message, http_status=status)) == [kind]


def test_unrelated_400_is_not_diagnosed():
    assert (
        diagnose_error(ItemError(kind="http", message="temperature must be >= 0", http_status=400))
        == []
    )
    assert diagnose_error(None) == []


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        '[TOOL_CALLS][{"name": "f", "arguments": {}}]',
        '<|python_tag|>{"name": "f", "parameters": {}}',
        'Sure! {"name": "get_weather", "arguments": {"city": "Paris"}}',
        '<function=get_weather>{"city": "Paris"}</function>',
    ],
)
def test_raw_tool_call_shapes(content):
    resp = Response(content=content, finish_reason="stop")
    assert "raw_tool_call" in diagnose_response(resp, tools_offered=True)
    assert "raw_tool_call" not in diagnose_response(resp, tools_offered=False)


def test_parsed_tool_call_is_clean():
    resp = Response(
        content=None, tool_calls=[ToolCall(name="f", arguments={})], finish_reason="tool_calls"
    )
    assert diagnose_response(resp, tools_offered=True) == []


def test_every_diagnosis_has_a_one_line_hint():
    assert all(hint and "\n" not in hint for hint in HINTS.values())


def test_progress_bar_line():
    out = io.StringIO()
    bar = ProgressBar(out, interval=0)
    bar.start(total=4, done=1, passed=1)
    bar.advance("passed")
    bar.advance("error")
    line = out.getvalue().strip().splitlines()[-1]
    assert "3/4" in line and "passed 2" in line and "errors 1" in line and "ETA" in line
    bar.finish()
    bar.finish()
    lines = out.getvalue().splitlines()
    assert 2 <= len(lines) <= 3 and len(set(lines)) == len(lines)  # never the same line twice


def test_empty_string_is_the_model_not_the_server():
    assert diagnose_response(Response(content="", finish_reason="stop")) == []
    assert diagnose_response(Response(content=None, finish_reason="stop")) == ["empty_response"]


def test_provenance_records_evalruns_own_checkout(tmp_path):
    facts = collect(tmp_path)  # the working dir is no repo; evalrun runs from its checkout
    assert facts["git"] == {} and facts["evalrun"]
    if git_facts(Path(__file__).parent):  # tests run from a git checkout of evalrun
        assert len(facts["evalrun_git"]["commit"]) == 40

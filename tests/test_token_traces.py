"""Token traces as untrusted input: tokens.jsonl is read in one place (store/tokens.py) that
skips and counts what is malformed and sets aside traces that are not the run's own; capture
names why an endpoint's logprobs were unusable (fake endpoints, real processes' files)."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from fakeserver import reply, simple_item
from test_fidelity import HEALTHY, lane
from test_score import run

from evalrun.base.jsondata import json_text
from evalrun.cli import main
from evalrun.store import RunStore
from evalrun.store.tokens import TOKENS_FILE, load_traces


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity, as every other JSON parser does."""

    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _tokens_lines(store: RunStore, run_id: str) -> list[dict]:
    path = store.run_dir(run_id) / TOKENS_FILE
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_lines(store: RunStore, run_id: str, rows: list[dict]) -> None:
    path = store.run_dir(run_id) / TOKENS_FILE
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


MALFORMED = [
    [[]],
    [["The"]],
    [["ok", "abc", []]],
    [[None, None, None]],
    [["ok", 1e308, []]],  # a positive logprob: no log-probability
    [["ok", -0.1, [["ok"]]]],  # an alternative without its logprob
    [["ok", -0.1, [], "zz"]],  # hex that is no hex
]


def _pair(fake_server, make_suite, tmp_path, n=20):
    suite = make_suite([simple_item(i) for i in range(n)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite, n=n)
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite, n=n)
    return RunStore(tmp_path / "results"), a, b


def test_malformed_trace_lines_are_skipped_and_counted(fake_server, make_suite, tmp_path, capsys):
    store, a, b = _pair(fake_server, make_suite, tmp_path)
    rows = _tokens_lines(store, b.run_id)
    for row, tokens in zip(rows, MALFORMED, strict=False):
        row["tokens"] = tokens
    _write_lines(store, b.run_id, rows)
    traces = load_traces(store.run_dir(b.run_id))
    assert traces.skipped == len(MALFORMED) and len(traces) == 20 - len(MALFORMED)
    res = str(store.root)
    assert main(["compare", a.run_id, b.run_id, "--results", res, "--json"]) == 0
    fid = strict_json(capsys.readouterr().out)["fidelity"]
    assert (fid["verdict"], fid["items"]) == ("identical", 20 - len(MALFORMED))
    assert main(["signoff", "--candidate", b.run_id, "--baseline", a.run_id, "--results", res]) in (
        0,
        1,
    )
    assert "Traceback" not in capsys.readouterr().err
    assert main(["report", a.run_id, b.run_id, "--results", res]) == 0


def test_a_positive_logprob_never_reaches_the_json(fake_server, make_suite, tmp_path, capsys):
    """A logprob of 1e308 made the drift infinite and `--json` print `Infinity`."""
    store, a, b = _pair(fake_server, make_suite, tmp_path)
    rows = _tokens_lines(store, b.run_id)
    for row in rows:
        row["tokens"][0][1] = 1e308
    _write_lines(store, b.run_id, rows)
    res = str(store.root)
    for argv in (
        ["compare", a.run_id, b.run_id, "--results", res, "--json"],
        ["signoff", "--candidate", b.run_id, "--baseline", a.run_id, "--results", res, "--json"],
    ):
        main(argv)
        out = capsys.readouterr().out
        strict_json(out)
        assert "Infinity" not in out and "NaN" not in out


def test_json_text_writes_json_only():
    text = json_text({"drift": math.inf, "p": [math.nan, -math.inf, 0.5], "t": (1.0,)})
    assert strict_json(text) == {"drift": None, "p": [None, None, 0.5], "t": [1.0]}


def test_a_tokens_file_copied_from_another_run_is_not_comparable(
    fake_server, make_suite, tmp_path, capsys
):
    suite = make_suite([simple_item(i) for i in range(20)])
    a, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    other = [("yes", -0.01, [("yes", -0.01)]), (" indeed", -0.2, [(" indeed", -0.2)])]
    b, _ = lane(fake_server, make_suite, tmp_path, lambda i: other, suite=suite)
    c, _ = lane(fake_server, make_suite, tmp_path, lambda i: HEALTHY, suite=suite)
    store = RunStore(tmp_path / "results")
    shutil.copy(store.run_dir(b.run_id) / TOKENS_FILE, store.run_dir(c.run_id) / TOKENS_FILE)
    res = str(store.root)
    assert main(["compare", a.run_id, c.run_id, "--results", res]) == 0
    out = capsys.readouterr().out
    assert "fidelity: not comparable" in out
    assert "do not spell the stored answers" in out and "run B" in out
    assert "divergent" not in out


def _capture_reason(fake_server, make_suite, tmp_path, rule) -> str:
    fake_server.rule = rule
    record, recs = run(fake_server, make_suite([simple_item(i) for i in range(3)]), tmp_path)
    assert [r.status for r in recs] == ["passed"] * 3  # the answers themselves are fine
    return record.tokens_unavailable or ""


@pytest.mark.parametrize(
    ("lp", "named"), [(math.nan, "NaN logprobs"), (math.inf, "infinite logprobs")]
)
def test_nan_or_infinite_logprobs_are_named(fake_server, make_suite, tmp_path, lp, named):
    why = _capture_reason(
        fake_server, make_suite, tmp_path, lambda req: reply("ok", tokens=[("ok", lp, [])])
    )
    assert named in why and "numerics" in why and "ignores the logprobs field" not in why


def test_a_logprobs_object_of_the_wrong_type_is_named(fake_server, make_suite, tmp_path):
    def rule(req):
        body = reply("ok").body(req, "fake-model", 0)
        body["choices"][0]["logprobs"] = ["not", "an", "object"]
        return reply(raw=body)

    why = _capture_reason(fake_server, make_suite, tmp_path, rule)
    assert "logprobs is a list, not an object" in why
    assert "ignores the logprobs field" not in why

"""Numbers that broke whole runs: bodies no float or stack holds, and fidelity's binomial on a
large suite. Each ends as an item in error or a verdict, never a traceback."""

from __future__ import annotations

import json
import math

import pytest
from rawserver import CHAT, RawServer, http
from test_reliability import assert_agrees, score

from evalrun.compare.fidelity import DEFAULTS, binom_sf, judge
from evalrun.endpoint.logprobs import TokenTrace

HUGE_LOGPROB = (
    b'{"model": "fake-model", "choices": [{"message": {"content": "ok"}, "finish_reason": "stop",'
    b' "logprobs": {"content": [{"token": "ok", "logprob": '
    + b"1" * 401
    + b', "top_logprobs": []}]}}]}'
)
DEEP = b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # 200 KB, 100,000 deep


@pytest.mark.parametrize("body", [HUGE_LOGPROB, DEEP], ids=["401-digit-logprob", "100k-deep"])
def test_a_hostile_body_is_one_bad_response_and_the_run_goes_on(body, make_suite, tmp_path, capsys):
    asked = []

    def shape(path: str):
        asked.append(path)
        return [http(body if len(asked) == 1 else CHAT)]

    with RawServer(shape) as server:
        code = score(server, make_suite(n=4), tmp_path / "r", "--concurrency", "1")
    err = capsys.readouterr().err
    assert code == 4 and "Traceback" not in err, err
    record, rows = assert_agrees(tmp_path / "r")
    assert record["status"] == "complete" and len(rows) == 4
    errors = [r for r in rows.values() if r["status"] == "error"]
    assert [e["error"]["kind"] for e in errors] == ["bad_response"]
    assert sum(r["status"] == "passed" for r in rows.values()) == 3


def _reference_sf(k: int, n: int, p: float) -> float:
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


@pytest.mark.parametrize(
    ("k", "n", "p"), [(0, 10, 0.02), (1, 10, 0.02), (3, 100, 0.02), (10, 200, 0.02), (5, 5, 0.5)]
)
def test_binom_sf_agrees_with_the_direct_sum_where_that_works(k, n, p):
    assert binom_sf(k, n, p) == pytest.approx(_reference_sf(k, n, p), rel=1e-9, abs=1e-15)


def test_binom_sf_on_five_thousand_items():
    """comb(1030, i) * 0.02**i overflowed a float from 1,030 items with any hard divergence."""
    assert binom_sf(1, 1030, 0.02) == pytest.approx(1.0)
    assert binom_sf(100, 5000, 0.02) == pytest.approx(0.5137, abs=1e-3)  # the mean: about half
    assert 0.0 < binom_sf(300, 5000, 0.02) < 1e-50
    assert binom_sf(5001, 5000, 0.02) == 0.0


def test_judge_on_five_thousand_items_gives_a_verdict():
    ok = [["ok", -0.01, [["ok", -0.01], ["no", -5.0]]]]
    wrong = [["no", -0.2, [["no", -0.2], ["ok", -1.9]]]]

    def trace(i: int, tokens) -> TokenTrace:
        return TokenTrace(id=f"i{i}", top_k=5, total=1, cap=128, tokens=tokens)

    ids = [f"i{i}" for i in range(5000)]
    a = {f"i{i}": trace(i, ok) for i in range(5000)}
    b = {f"i{i}": trace(i, wrong if i < 400 else ok) for i in range(5000)}
    f = judge(a, b, ids, DEFAULTS)
    assert (f.verdict, f.hard, f.items) == ("divergent", 400, 5000)
    json.loads(f.model_dump_json())

"""Where the candidate left the baseline, in `compare --show-responses` and the HTML pair
report: each side's token, its logprob, the other side's rank and logprob of it. Token text is
model output: escaped for the terminal and for HTML (fake endpoints that serve logprobs)."""

from __future__ import annotations

from fakeserver import simple_item
from test_fidelity import lane

from evalrun.cli import main
from evalrun.compare.fidelity import runs_fidelity
from evalrun.store import RunStore

HOSTILE = "<u>\x1b[2J"  # markup and a terminal escape that clears the screen
GOOD = [("ok", -0.01, [("ok", -0.01), (HOSTILE, -3.0), ("no", -4.0)])]
LEFT = [(HOSTILE, -0.5, [(HOSTILE, -0.5), ("ok", -0.9)]), (" now", -0.1, [(" now", -0.1)])]


def _pair(fake, make_suite, tmp_path):
    suite = make_suite([simple_item(i) for i in range(6)])
    a, _ = lane(fake, make_suite, tmp_path, lambda i: GOOD, suite=suite)
    b, _ = lane(fake, make_suite, tmp_path, lambda i: LEFT if i == 2 else GOOD, suite=suite)
    return RunStore(tmp_path / "results"), a.run_id, b.run_id


def test_the_divergence_carries_both_sides_ranks(fake_server, make_suite, tmp_path):
    store, a, b = _pair(fake_server, make_suite, tmp_path)
    d = runs_fidelity(store, a, b).by_item["basic-002"]
    assert (d.position, d.a_token, d.b_token) == (0, "ok", HOSTILE)
    assert (d.a_logprob, d.a_in_b) == (-0.01, (2, -0.9))  # B ranked A's pick second
    assert (d.b_logprob, d.b_in_a) == (-0.5, (2, -3.0))


def test_show_responses_prints_the_first_divergence_escaped(
    fake_server, make_suite, tmp_path, capsys
):
    store, a, b = _pair(fake_server, make_suite, tmp_path)
    assert main(["compare", a, b, "--results", str(store.root), "--show-responses"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out  # the escape is shown, never sent to the terminal
    line = next(x for x in out.splitlines() if x.startswith("  basic-002 token 0"))
    assert "A 'ok' -0.01 (B: rank 2, -0.90)" in line
    assert "B '<u>\\x1b[2J' -0.50 (A: rank 2, -3.00)" in line


def test_pair_report_marks_where_the_candidate_left(fake_server, make_suite, tmp_path):
    store, a, b = _pair(fake_server, make_suite, tmp_path)
    out = tmp_path / "pair.html"
    assert main(["report", a, b, "-o", str(out), "--results", str(store.root)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<u>" not in page  # model markup never becomes markup
    assert "\x1b" not in page
    assert "Tokens against the baseline" in page and "fidelity: " in page
    block = page[page.index('id="item-basic-002"') :]
    block = block[: block.index("</details>")]
    assert "first divergence: token 0 (hard)" in block
    assert "<mark>&lt;u&gt;" in block
    assert "rank 2, -0.90" in block and "rank 2, -3.00" in block
    other = page[page.index('id="item-basic-001"') :]
    assert "first divergence" not in other[: other.index("</details>")]

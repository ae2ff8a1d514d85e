"""A user suite's faults are found before a run is created: wrong-typed grader parameters (what
`suite check` finds) end `score` with one line naming the item, nothing asked, nothing written;
a suite name with control characters reaches no terminal raw."""

from __future__ import annotations

import pytest
from fakeserver import simple_item

from evalrun.cli import main


@pytest.mark.parametrize("n", [5, 70], ids=["graded-here", "graded-apart"])
def test_wrong_typed_grader_params_stop_score_before_a_run(
    n, fake_server, make_suite, tmp_path, capsys
):
    items = [simple_item(i) for i in range(n)]
    items[3]["grader"] = {"kind": "exact", "answer": "ok", "strip": "maybe"}
    results = tmp_path / "results"
    code = main(
        ["score", "--endpoint", fake_server.base_url, "--suite", str(make_suite(items))]
        + ["--results", str(results), "--no-progress"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "basic-003" in err and "strip" in err and "suite check" in err
    assert fake_server.chat_requests == 0
    assert not results.exists() or not any(results.iterdir())


def test_a_suite_name_with_escape_codes_reaches_no_terminal_raw(fake_server, tmp_path, capsys):
    from fakeserver import write_suite

    name = "evil\x1b]0;pwned\x07\x1b[2J"
    suite = write_suite(tmp_path / "suite", [simple_item(i) for i in range(2)], name=name)
    res = str(tmp_path / "results")
    runs = [
        ["score", "--endpoint", fake_server.base_url, "--suite", str(suite), "--results", res],
        ["runs", "--results", res],
        ["show", "latest", "--results", res],
        ["suite", "show", str(suite)],
    ]
    for argv in runs:
        assert main(argv) == 0, argv
        out = capsys.readouterr()
        shown = out.out + out.err
        assert "\x1b" not in shown and "\x07" not in shown, argv
        assert "evil\\x1b]0;pwned\\x07" in shown, argv  # shown, escaped

"""The HTML report without a browser: what the page is made of (no markup from answers, one
script allowed by the CSP), prompts collapsed around the needle, the pair's sign-off, and `show`
with prompts. The browser test (test_report_browser.py) checks the same page in Chromium."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from support.viewruns import HOSTILE_ID, MODEL, baseline_run, hostile_run

from evalrun.cli import main
from evalrun.suite.load import load_suite
from evalrun.suite.prompt import collapse, find_needle, message_text, prompt_line
from evalrun.viewing.page import SCRIPT, script_hash

ALLOWED = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h4", "p", "b", "span",
    "dl", "dt", "dd", "table", "tr", "th", "td", "a", "ul", "li", "form", "input", "select",
    "option", "label", "button", "div", "details", "summary", "pre", "figure", "script", "svg",
    "line", "text", "polyline", "circle", "mark",
}  # fmt: skip


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


@pytest.fixture
def runs(tmp_path: Path, fake_server) -> tuple[Path, str, str]:
    store, candidate = hostile_run(tmp_path, fake_server)
    return store.root, baseline_run(tmp_path, fake_server), candidate


def _page(results: Path, *refs: str, out: Path) -> str:
    assert main(["report", *refs, "-o", str(out), "--results", str(results)]) == 0
    return out.read_text(encoding="utf-8")


def test_page_holds_no_markup_from_answers(runs, tmp_path: Path) -> None:
    from evalrun.store import RunStore

    results, baseline, candidate = runs
    store = RunStore(results)
    record = store.load_run(candidate)
    record.contract = {"name": "lane", "engine": "vllm", "hash": "f" * 64, "argv": ["vllm", MODEL]}
    record.server = {"engine_version": MODEL, "boot_seconds": 12.25}  # the server says what it is
    store.write_run(record)
    for refs in ((candidate,), (baseline, candidate)):
        page = _page(results, *refs, out=tmp_path / "r.html")
        parser = Tags()
        parser.feed(page)
        names = {t for t, _ in parser.tags}
        assert names <= ALLOWED, names - ALLOWED
        handlers = [(t, k) for t, a in parser.tags for k in a if k.startswith("on")]
        assert handlers == []
        assert [t for t, _ in parser.tags].count("script") == 1 and parser.scripts == [SCRIPT]
        csp = next(a["content"] for t, a in parser.tags if a.get("http-equiv"))
        assert csp and f"script-src {script_hash()}" in csp and "default-src 'none'" in csp
        assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned" in page
        assert "\u2028" not in page and "\u202e" not in page  # shown as U+2028 / U+202E marks
        assert not any(a.get("src") for _, a in parser.tags)  # nothing loads from anywhere
        assert MODEL not in page
    assert "vllm, hash ffffffffffff" in page and "12.2 s" in page


def test_hundred_kilobyte_answer_is_clipped_and_export_has_it_all(runs, tmp_path: Path) -> None:
    results, _, candidate = runs
    page = _page(results, candidate, out=tmp_path / "r.html")
    assert len(page) < 80_000
    assert "more characters: see `evalrun export --format jsonl`" in page
    assert f'id="item-{HOSTILE_ID}"' in page


def test_default_paths_and_bad_refs(runs, capsys) -> None:
    results, baseline, candidate = runs
    assert main(["report", candidate, "--results", str(results)]) == 0
    assert (results / candidate / "report.html").exists()
    assert main(["report", baseline, candidate, "--results", str(results)]) == 0
    assert (results / candidate / f"report-vs-{baseline}.html").exists()
    assert main(["report", "nope", "--results", str(results)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_pair_page_shows_the_recorded_signoff(runs, tmp_path: Path) -> None:
    from evalrun.signoff.gate import signoff
    from evalrun.store import RunStore

    results, baseline, candidate = runs
    page = _page(results, baseline, candidate, out=tmp_path / "p.html")
    assert "no sign-off recorded for this pair" in page
    result = signoff(RunStore(results), candidate, baseline)
    assert result.verdict == "fail"
    page = _page(results, baseline, candidate, out=tmp_path / "p.html")
    assert "sign-off: FAIL" in page and "McNemar" in page
    assert all(r.split(" (")[0][:40] in page for r in result.reasons)


def test_history_svg_draws_the_label_runs(tmp_path: Path, fake_server) -> None:
    store, first = hostile_run(tmp_path, fake_server, label="lane")
    from support.viewruns import answer_for

    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target

    fake_server.rule = lambda body: answer_for(body, first_pass=False)
    req = ScoreRequest(
        target=Target.endpoint(fake_server.base_url),
        suite=load_suite(str(tmp_path / "suite")),
        label="lane",
    )
    second, _ = score_suite(req, store)
    page = _page(store.root, second.run_id, out=tmp_path / "h.html")
    assert "Score history of lane" in page and page.count("<circle") == 2


def test_core_long_prompts_collapse_around_their_needle() -> None:
    suite = load_suite("core")
    long = [i for i in suite.items if i.category == "long-context"]
    assert len(long) == 8
    for item in long:
        text = message_text(item.messages[-1])
        assert find_needle(text, item) is not None, item.id
        parts = collapse(text, item)
        kinds = [p.kind for p in parts]
        assert "needle" in kinds and "gap" in kinds, item.id
        assert sum(len(p.text) for p in parts) < 4000
        question = text.rsplit("</document>", 1)[1].strip()
        assert "Reply briefly." in question and parts[-1].text.endswith(question)  # it stays
        assert len(prompt_line(item)) < 900
        assert prompt_line(item, full=True).endswith(text)


def test_show_prints_prompts_full_and_items(runs, capsys) -> None:
    results, _, candidate = runs
    base = ["show", candidate, "--results", str(results)]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "    prompt: user: question 4: reply 42" in out  # math-004 failed
    assert "basic-000" not in out  # passed items stay out
    hostile = next(line for line in out.split("\n") if line.startswith("    content: Sure!"))
    assert len(hostile) < 400
    assert main([*base, "--full", "--items", f"{HOSTILE_ID},long-000"]) == 0
    out = capsys.readouterr().out
    assert "A" * 100_000 in out and "long-000 [long] passed" in out
    assert "The vault code is ORCHID-7731." in out
    assert main([*base, "--items", "nope"]) == 2


def test_a_run_whose_suite_changed_still_renders(runs, tmp_path: Path) -> None:
    from evalrun.store import RunStore

    results, _, candidate = runs
    store = RunStore(results)
    record = store.load_run(candidate)
    record.suite.sha256 = "0" * 64  # the suite on disk is no longer the one scored
    store.write_run(record)
    page = _page(results, candidate, out=tmp_path / "r.html")
    assert "prompts unavailable: suite mini-v1" in page and page.count('class="item"') == 12
    assert "prompt unavailable" in page


def test_page_names_the_commits_of_evalrun_and_the_working_repo(runs, tmp_path: Path) -> None:
    from evalrun.store import RunStore

    results, _, candidate = runs
    store = RunStore(results)
    record = store.load_run(candidate)
    git = {"commit": "a" * 40, "branch": "main", "dirty": True, "remotes": {}, "root": "/w"}
    own = {"commit": "b" * 40, "branch": None, "dirty": False, "remotes": {}, "root": "/e"}
    record.provenance = {
        "evalrun": "0.1.0", "python": "3.11.7", "platform": "Linux", "git": git, "evalrun_git": own
    }  # fmt: skip
    store.write_run(record)
    page = _page(results, candidate, out=tmp_path / "page.html")
    assert f"<dd>{record.evalrun_version} {'b' * 12} (detached)</dd>" in page
    assert f"<dt>working repo</dt><dd>{'a' * 12} (main, dirty)</dd>" in page

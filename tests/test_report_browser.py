"""The HTML report in a real browser (headless Chromium from Debian's packages, via Playwright).

A run whose answers carry `<script>`, `<img onerror>`, a closing-tag breakout, U+2028, an RTL
override and 100 KB of text is rendered; the browser must show them as text, run none of them,
filter the items as asked, and paint a page that is not blank. `.ci/run` installs Chromium; in CI
(CI=true) a missing browser fails the test instead of skipping it.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.viewruns import GARBLED_ID, HOSTILE_ID, baseline_run, hostile_run

from evalrun.cli import main

pytestmark = pytest.mark.slow


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The hostile candidate run and an all-right baseline (built before the browser starts:
    Playwright's sync API holds an event loop that scoring's asyncio.run must not run inside)."""
    from fakeserver import FakeServer

    root = tmp_path_factory.mktemp("runs")
    with FakeServer() as server:
        store, candidate = hostile_run(root, server)
        baseline = baseline_run(root, server)
    return store.root, baseline, candidate


@pytest.fixture(scope="module")
def browser(pair: tuple[Path, str, str]) -> Iterator[Any]:
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        exe = None
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test: .ci/run installs chromium and playwright")
        pytest.skip("no chromium here (apt-get install chromium) or no playwright")
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=exe,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    events: list[str] = []
    page.on("dialog", lambda d: (events.append(f"dialog {d.message}"), d.dismiss()))
    page.on("pageerror", lambda e: events.append(f"page error {e}"))
    page.on(
        "request",
        lambda r: (
            events.append(f"request {r.url}") if not r.url.startswith(("file:", "data:")) else None
        ),
    )
    page.goto(path.as_uri())
    return page, events


def _visible_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "details.item:not([hidden])", "els => els.map(e => e.id.slice(5))"
    )


def _assert_nothing_ran(page: Any, events: list[str]) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert "PWNED" not in page.title()
    assert events == []  # no alert, no script error, no network request
    # the answer's markup stayed text: no element carries an event handler, no image exists
    assert page.evaluate("document.querySelectorAll('[onerror],[onload],[onclick]').length") == 0
    assert page.evaluate("document.images.length") == 0
    assert page.evaluate("document.scripts.length") == 1  # the page's own


def _assert_not_blank(page: Any, png: Path) -> None:
    from PIL import Image

    page.screenshot(path=str(png))
    image = Image.open(io.BytesIO(png.read_bytes())).convert("L")
    dark = sum(image.histogram()[:160])  # pixels darker than light grey: text, lines
    assert dark > 0.01 * image.width * image.height, "the page painted (almost) nothing"
    assert page.is_visible("h1") and page.is_visible("#filters")


def test_hostile_run_renders_as_text_and_filters_work(browser, pair, tmp_path, capsys) -> None:
    results, baseline, candidate = pair
    out = tmp_path / "report.html"
    assert main(["report", candidate, "-o", str(out), "--results", str(results)]) == 0
    page, events = _open(browser, out)
    _assert_nothing_ran(page, events)
    assert page.inner_text("#shown") == "12 of 12 items shown"

    page.select_option("#f-status", "failed")
    failed = _visible_ids(page)
    assert HOSTILE_ID in failed and "basic-000" not in failed and len(failed) == 5
    page.select_option("#f-category", "math")
    assert _visible_ids(page) == ["math-004"]
    assert page.inner_text("#shown") == "1 of 12 items shown"
    page.click("#f-reset")
    page.check("#f-garbled")
    assert set(_visible_ids(page)) == {HOSTILE_ID, GARBLED_ID}
    page.click("#f-reset")
    page.fill("#f-search", "orchid")  # the needle in the long prompts
    assert _visible_ids(page) == ["long-000", "long-001"]
    page.fill("#f-search", "")
    page.click('a[data-filter-category="long"]')
    assert _visible_ids(page) == ["long-000", "long-001"]
    page.click("#f-reset")

    page.click(f"#item-{HOSTILE_ID} > summary")
    shown = page.inner_text(f"#item-{HOSTILE_ID} .item-body")
    assert "<script>window.__pwned = 'script'" in shown and "<img src=x onerror=" in shown
    assert "U+2028" in shown and "U+202E" in shown  # invisible characters made visible
    assert "more characters" in shown  # 100 KB clipped, with a pointer to the export
    page.click("#item-long-000 > summary")
    prompt = page.inner_text("#item-long-000 .item-body")
    assert (
        "The vault code is ORCHID-7731." in prompt
        and "characters of the prompt not shown" in prompt
    )
    _assert_nothing_ran(page, events)
    png = tmp_path / "report.png"
    page.evaluate("window.scrollTo(0, 0)")
    _assert_not_blank(page, png)
    with capsys.disabled():
        print(f"\nreport screenshot: {png} (page {out}, {out.stat().st_size:,} bytes)")
    page.close()


def test_pair_report_shows_flips_and_filters_them(browser, pair, tmp_path) -> None:
    results, baseline, candidate = pair
    out = tmp_path / "pair.html"
    assert main(["report", baseline, candidate, "-o", str(out), "--results", str(results)]) == 0
    page, events = _open(browser, out)
    _assert_nothing_ran(page, events)
    page.check("#f-flipped")
    flipped = set(_visible_ids(page))
    assert flipped == {HOSTILE_ID, GARBLED_ID, "basic-003", "math-004", "long-001"}
    page.click(f"#item-{HOSTILE_ID} > summary")
    sides = page.inner_text(f"#item-{HOSTILE_ID} .sides")
    assert "baseline" in sides and "candidate" in sides and "<script>" in sides
    # where the candidate's tokens left the baseline's: its token marked, both sides' logprobs
    diverge = page.inner_text(f"#item-{HOSTILE_ID} .diverge")
    assert "first divergence: token 0" in diverge and "'ok'" in diverge and "'Sure!'" in diverge
    assert page.inner_text(f"#item-{HOSTILE_ID} .diverge mark") == "Sure!"
    assert "Tokens against the baseline" in page.inner_text("main")
    assert "McNemar" in page.inner_text("main")
    _assert_nothing_ran(page, events)
    png = tmp_path / "pair.png"
    page.evaluate("window.scrollTo(0, 0)")
    _assert_not_blank(page, png)
    page.close()


def test_the_check_would_catch_an_unescaped_answer(browser, tmp_path) -> None:
    """The detectors above are live: the same payload, unescaped and without the CSP, is seen."""
    from support.viewruns import IMG, SCRIPT

    bad = tmp_path / "bad.html"
    bad.write_text(f"<!DOCTYPE html><html><body><h1>x</h1><pre>{SCRIPT}{IMG}</pre></body></html>")
    page, events = _open(browser, bad)
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.__pwned") != "undefined"
    page.close()

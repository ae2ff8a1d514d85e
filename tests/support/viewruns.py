"""A real run with hostile answers, scored against the fake server: for the report and exports.

`hostile_run()` scores a 12-item suite (basic, math, long-context with a 9,000-character haystack)
twice: the first pass leaves two items in error, `--resume` answers them, so items.jsonl holds
those two ids twice. One answer is hostile: `<script>`, `<img onerror>`, U+2028, an RTL override
and 100 KB of text; another is garbled token soup; one calls a tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakeserver import FakeServer, http_error, last_user, reply, simple_item, write_suite

from evalrun.endpoint.client import RetryPolicy
from evalrun.store import RunStore
from evalrun.suite.load import load_suite

# Each payload sets a marker the browser test looks for: if any of them runs, the page is unsafe.
SCRIPT = "<script>window.__pwned = 'script'; document.title = 'PWNED';</script>"
IMG = "<img src=x onerror=\"window.__pwned = 'img'; document.body.innerHTML = 'PWNED'\">"
CLOSE = "</pre></details></main><svg onload=\"window.__pwned = 'svg'\"></svg>"
HOSTILE = (
    f"Sure! {SCRIPT} {IMG} {CLOSE} line\u2028separator \u202eevil reversed\u202c "
    "javascript:alert(1) " + "A" * 100_000
)
HOSTILE_ID = "basic-001"
GARBLED_ID = "basic-002"
ERRORED_IDS = ("math-001", "math-003")
NEEDLE = "The vault code is ORCHID-7731."
# the server names its model: untrusted too
MODEL = "evil<script>window.__pwned = 'model'</script><img src=x onerror=\"window.__pwned=1\">"


def _items() -> list[dict[str, Any]]:
    basic = [simple_item(n) for n in range(5)]
    math = [simple_item(n, answer="42", category="math") for n in range(5)]
    filler = "".join(f"Line {k}: the storeroom was quiet that day. " for k in range(120))
    haystack = f"{filler}{NEEDLE} {filler}\n\nWhat is the vault code? Reply briefly."
    long_ = [
        simple_item(
            0,
            answer="ORCHID-7731",
            category="long",
            messages=[{"role": "user", "content": haystack}],
        ),
        simple_item(
            1,
            answer="ORCHID-7731",
            category="long",
            messages=[{"role": "user", "content": haystack.replace("storeroom", "cellar")}],
        ),
    ]
    long_[0]["grader"] = {"kind": "regex", "pattern": "ORCHID-?7731"}
    long_[1]["grader"] = {"kind": "regex", "pattern": "ORCHID-?7731"}
    return basic + math + long_


def answer_for(request: dict[str, Any], *, first_pass: bool) -> Any:
    text = last_user(request)
    if "question 1:" in text and "reply ok" in text:
        return reply(HOSTILE)
    if "question 2:" in text and "reply ok" in text:
        return reply("Mh giàu され rodas reliablyacheteurδε Są " * 6)
    if "question 3:" in text and "reply ok" in text:
        return reply(None, tool_calls=[{"name": "lookup", "arguments": {"q": "<b>x</b>"}}])
    if "reply 42" in text:
        n = int(text.split("question ")[1].split(":")[0])
        if first_pass and n in (1, 3):
            return http_error(400, "bad request: <i>unsupported</i> parameter")
        return reply("41" if n == 4 else "42", reasoning="6 times 7 is 42")
    if "vault code" in text:
        return reply("ORCHID-7731" if "storeroom" in text else "I do not know.")
    return reply("ok")


def hostile_run(root: Path, server: FakeServer, *, label: str = "hostile") -> tuple[RunStore, str]:
    """Score the suite, resume it; return the store and the run id."""
    from evalrun.base.errors import EvalrunError
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target

    suite = load_suite(str(write_suite(root / "suite", _items(), name="mini")))
    store = RunStore(root / "results")
    retry = RetryPolicy(attempts=1, base_delay=0.0)
    server.models = [MODEL]
    server.rule = lambda body: answer_for(body, first_pass=True)
    try:
        target = Target.endpoint(server.base_url)
        req = ScoreRequest(target=target, suite=suite, label=label, concurrency=2, retry=retry)
        record, _ = score_suite(req, store)
        run_id = record.run_id
    except EvalrunError as exc:  # pragma: no cover - the errors are items, not a stopped run
        raise AssertionError(f"the first pass stopped: {exc}") from exc
    server.rule = lambda body: answer_for(body, first_pass=False)
    target = Target.endpoint(server.base_url)
    score_suite(
        ScoreRequest(target=target, suite=suite, resume=run_id, concurrency=2, retry=retry), store
    )
    return store, run_id


def baseline_run(root: Path, server: FakeServer, *, label: str = "baseline") -> str:
    """The same suite with every answer right (after hostile_run): a baseline to pair with."""
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target

    def right(body: dict[str, Any]) -> Any:
        text = last_user(body)
        if "vault code" in text:
            return reply("ORCHID-7731")
        return reply("42" if "reply 42" in text else "ok")

    server.rule = right
    suite = load_suite(str(root / "suite"))
    req = ScoreRequest(
        target=Target.endpoint(server.base_url),
        suite=suite,
        label=label,
        concurrency=2,
        retry=RetryPolicy(attempts=1, base_delay=0.0),
    )
    record, _ = score_suite(req, RunStore(root / "results"))
    return record.run_id

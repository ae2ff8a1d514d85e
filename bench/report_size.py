"""How big the HTML report of a 184-item run is, and how long it takes to render. Prints figures.

Setup: the core suite scored against the fake server on 127.0.0.1, which answers each item with
one of its `accept` examples (seeded: about 80%) or one of its `reject` examples, so the page
carries real prompts (the long-context haystacks included) and a realistic mix of outcomes.
Then `evalrun report` for the run alone and for a pair (the same run against a second draw).

    python -m bench.report_size
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
from evalrun.endpoint.response import example_to_response  # noqa: E402
from evalrun.scoring.run import ScoreRequest, score_suite  # noqa: E402
from evalrun.serving.target import Target  # noqa: E402
from evalrun.store import RunStore  # noqa: E402
from evalrun.suite.load import load_suite  # noqa: E402
from evalrun.viewing.html import write_report  # noqa: E402
from tests.fakeserver import FakeServer, last_user, reply


def main() -> None:
    suite = load_suite("core")
    by_prompt = {item.messages[-1].get("content"): item for item in suite.items}

    def rule_for(seed: int) -> Any:
        rng = random.Random(seed)
        picks = {i.id: rng.random() < 0.8 for i in suite.items}

        def rule(body: dict[str, Any]) -> Any:
            item = by_prompt.get(last_user(body))
            if item is None:
                return reply("ok")
            pool = item.accept if picks[item.id] else item.reject
            resp = example_to_response(pool[0])
            calls = [{"name": c.name, "arguments": c.arguments} for c in resp.tool_calls]
            return reply(resp.content, reasoning=resp.reasoning, tool_calls=calls)

        return rule

    with tempfile.TemporaryDirectory() as tmp, FakeServer() as server:
        store = RunStore(Path(tmp) / "results")
        ids = []
        for seed, label in ((1, "baseline"), (2, "candidate")):
            server.rule = rule_for(seed)
            req = ScoreRequest(target=Target.endpoint(server.base_url), suite=suite, label=label)
            record, _ = score_suite(req, store)
            ids.append(record.run_id)
            print(f"{label}: {record.summary.passed}/{record.summary.total}")  # type: ignore[union-attr]
        for refs in ((ids[1], None), (ids[0], ids[1])):
            started = time.perf_counter()
            path = Path(write_report(store, refs[0], refs[1], None))
            took = time.perf_counter() - started
            size = path.stat().st_size
            what = "one run" if refs[1] is None else "pair"
            print(
                f"{what}: {len(suite.items)} items, {size:,} bytes ({size / 1024:.0f} KiB), "
                f"rendered in {took:.2f} s"
            )


if __name__ == "__main__":
    main()

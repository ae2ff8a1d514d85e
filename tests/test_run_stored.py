"""A run of fixed options against the fake endpoint writes the same run.json and items.jsonl as
the stored run in tests/data/stored_run/, made by an earlier evalrun: how a run is planned,
opened and run may change, what it keeps may not.

What differs from one run to the next by nature (the clock, the run id, the port, the host,
the pid, latencies, git and package facts) is written as `<...>` before the texts are compared;
everything else, keys and their order included, is compared byte for byte.

Regenerate (only when run.json's schema changes on purpose):
    python tests/test_run_stored.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STORED = HERE / "data" / "stored_run"
sys.path.insert(0, str(HERE))

from fakeserver import FakeServer, http_error, last_user, reply, simple_item, write_suite  # noqa: E402

VOLATILE_RUN = ("run_id", "started_at", "ended_at", "pid", "host", "provenance")
VOLATILE_ITEM = ("latency_s", "ttft_s", "finished_at")


def _answer(request: dict[str, Any]) -> Any:
    """A fixed answer per question: right, wrong, garbled, and one the server refuses."""
    text = last_user(request)
    if "question 1:" in text:
        return reply("no")
    if "question 2:" in text:
        return reply("ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok", finish_reason="length")
    if "question 3:" in text:
        return http_error(400, "bad request: no such field")
    return reply("ok")


def _items() -> list[dict[str, Any]]:
    return [simple_item(i) for i in range(5)] + [simple_item(7, answer="yes", category="other")]


def make_run(folder: Path) -> tuple[str, str]:
    """Score the fixed options against the fake endpoint; (run.json, items.jsonl) as stored,
    with what varies by nature written as `<...>`."""
    import evalrun

    suite = write_suite(folder / "suite", _items(), name="stored", version=3)
    server = FakeServer(rule=_answer).start()
    host = server.host_url
    try:
        record = evalrun.score(
            server.base_url,
            suite=str(suite),
            results=str(folder / "results"),
            label="stored run",
            concurrency=1,
            temperature=0.0,
            request_seed=7,
            top_logprobs=2,
            timeout=30,
        )
    finally:
        server.stop()
    run_dir = folder / "results" / record.run_id
    swap = {host: "<endpoint>", str(folder): "<folder>"}
    run = _volatile(json.loads((run_dir / "run.json").read_text()), VOLATILE_RUN)
    items = [
        json.dumps(_volatile(json.loads(line), VOLATILE_ITEM), ensure_ascii=False)
        for line in (run_dir / "items.jsonl").read_text().splitlines()
    ]
    return _swap(json.dumps(run, indent=2, ensure_ascii=False), swap), _swap(
        "\n".join(items) + "\n", swap
    )


def _volatile(obj: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(obj, dict):
        return {k: "<...>" if k in keys else _volatile(v, keys) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_volatile(v, keys) for v in obj]
    return obj


def _swap(text: str, swap: dict[str, str]) -> str:
    for old, new in swap.items():
        text = text.replace(old, new)
    return re.sub(r"evalrun_version\": \"[^\"]+\"", 'evalrun_version": "<...>"', text)


def test_a_run_keeps_what_the_stored_run_kept(tmp_path: Path) -> None:
    run, items = make_run(tmp_path)
    assert run == (STORED / "run.json").read_text()
    assert items == (STORED / "items.jsonl").read_text()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run, items = make_run(Path(tmp))
    STORED.mkdir(parents=True, exist_ok=True)
    (STORED / "run.json").write_text(run)
    (STORED / "items.jsonl").write_text(items)
    print(f"wrote {STORED}")

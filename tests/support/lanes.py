"""The lane tiers' common step: build a lane with the CLI, as a user would, once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def setup_lane(name: str) -> Path:
    """`evalrun lane setup NAME` (idempotent: seconds when the lane is there); its contract."""
    done = subprocess.run(
        [sys.executable, "-m", "evalrun", "lane", "setup", name],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"evalrun lane setup {name} failed ({done.returncode}):\n{done.stdout}")
    return REPO / "bisect" / "contracts" / f"{name}.yaml"


def score_on(
    server: Any,
    suite: Any,
    results: Path,
    *,
    tags: tuple[str, ...] | None = None,
    items: tuple[str, ...] | None = None,
    extra: dict[str, Any] | None = None,
    label: str | None = None,
) -> tuple[Any, list[Any]]:
    """Score `suite` (or the items with `tags`, or `items`) against a server booted in the test
    (one boot, several runs); `extra` is sent in every request body."""
    from evalrun.endpoint.http import HttpOptions
    from evalrun.endpoint.options import RequestOptions
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.store import RunStore
    from evalrun.suite.select import Selection

    target = Target(
        base_url=server.base_url,
        model=server.model,
        options=RequestOptions(extra_body=extra or {}),
        http=HttpOptions(timeout=300.0, proxies=False),
        exited=server.exited,
    )
    selection = Selection(tags=tags, items=items)
    request = ScoreRequest(target=target, suite=suite, label=label, selection=selection)
    return score_suite(request, RunStore(results))

"""The prompts of a suite's earlier versions, by hash: which items a stored run of an older
version can be graded again on.

A run's items.jsonl keeps the answers, not the messages (the suite's sha256 pins those), so the
suite folder keeps `earlier.json`: for each earlier version, its items.jsonl sha256 and the
prompt hash of every item. An item whose prompt hash is the same in both versions asked the model
the same thing, and its stored answer can be graded under today's graders; any other item's
answer was to another question.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import SuiteError
from evalrun.suite.load import Item, Suite


class EarlierVersion(BaseModel):
    """One earlier version of a suite, as `earlier.json` records it."""

    model_config = ConfigDict(extra="forbid")

    sha256: str = Field(description="sha256 of that version's items.jsonl.")
    prompts: dict[str, str] = Field(description="Item id -> prompt_sha256 in that version.")


def prompt_sha256(item: Item) -> str:
    """Hex sha256 of what the model is asked: messages, tools, tool_choice and max_tokens."""
    asked = {
        "messages": item.messages,
        "tools": item.tools,
        "tool_choice": item.tool_choice,
        "max_tokens": item.max_tokens,
    }
    text = json.dumps(asked, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def earlier_version(suite: Suite, version: int) -> EarlierVersion | None:
    """What `earlier.json` records of `version` of this suite, or None when it records nothing."""
    path = Path(suite.path) / "earlier.json"
    if not path.exists():
        return None
    try:
        versions = json.loads(path.read_text(encoding="utf-8"))
        entry = versions.get(str(version))
        return EarlierVersion.model_validate(entry) if entry is not None else None
    except (ValueError, AttributeError, ValidationError) as exc:
        raise SuiteError(f"{path}: not a valid record of earlier versions ({exc})") from exc


def unchanged_prompts(suite: Suite, earlier: EarlierVersion) -> set[str]:
    """Ids of the items whose prompt is the same in `earlier` as in `suite`."""
    return {i.id for i in suite.items if earlier.prompts.get(i.id) == prompt_sha256(i)}


def record_current(suite: Suite) -> None:
    """Add the suite's current version to its earlier.json: run it before editing items.jsonl,
    so runs of this version can be graded again on the items the next version keeps."""
    path = Path(suite.path) / "earlier.json"
    versions = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    prompts = {i.id: prompt_sha256(i) for i in suite.items}
    versions[str(suite.version)] = {"sha256": suite.sha256, "prompts": prompts}
    path.write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":  # python -m evalrun.suite.earlier SUITE
    import sys

    from evalrun.suite.load import load_suite

    record_current(load_suite(sys.argv[1] if len(sys.argv) > 1 else "core"))

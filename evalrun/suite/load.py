"""Suites: items, manifest, loading and sha256 verification.

A suite is a folder with `items.jsonl` (one item per line) and `manifest.json` (name, version,
sha256 of items.jsonl, category counts). Loading refuses a suite whose items no longer match the
manifest's hash: a score is only comparable if the instrument did not change underneath it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import SuiteError
from evalrun.base.jsondata import JSONObject

# The shipped suites: evalrun/data/suites links to the repository's suites/ (one copy; a wheel
# carries the files themselves).
SUITES_DIR = (Path(__file__).resolve().parents[1] / "data" / "suites").resolve()


class GraderSpec(BaseModel):
    """Which grader judges an item, plus that grader's own parameters (checked by the grader)."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description="Grader name in the registry, e.g. numeric, choice, json.")

    def params(self) -> JSONObject:
        """The grader's parameters: every field but `kind`."""
        return dict(self.model_extra or {})


class Item(BaseModel):
    """One suite item: the request to send and how to grade the answer."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Stable unique id, e.g. math-007.")
    category: str = Field(description="Category name used in tables.")
    messages: list[JSONObject] = Field(description="Chat messages sent as-is.")
    tools: list[JSONObject] | None = Field(default=None, description="OpenAI tools array.")
    tool_choice: str | JSONObject | None = Field(default=None, description="tool_choice.")
    max_tokens: int = Field(default=256, description="max_tokens for the request.")
    grader: GraderSpec = Field(description="Grader kind and parameters.")
    tags: list[str] = Field(default_factory=list, description="Tags such as probe, long-context.")
    languages: list[str] | None = Field(
        default=None,
        description="Languages or scripts the answer may use (en, ru, zh, fr, de, code, ...); "
        "the garble detector treats others as suspicious. None means the category default.",
    )
    accept: list[str | JSONObject] = Field(description="Example responses that must pass.")
    reject: list[str | JSONObject] = Field(description="Example responses that must fail.")


class Manifest(BaseModel):
    """manifest.json of a suite folder."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Suite name, e.g. core.")
    version: int = Field(description="Bumped whenever items.jsonl changes.")
    sha256: str = Field(description="sha256 of items.jsonl, hex.")
    description: str = Field(default="", description="One line on what the suite measures.")
    categories: dict[str, int] = Field(description="Item count per category.")


class Suite(BaseModel):
    """A loaded, verified suite."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    sha256: str
    path: str
    items: list[Item]

    @property
    def label(self) -> str:
        """The headline prefix, e.g. core-v1."""
        return f"{self.name}-v{self.version}"

    def select(self, *, tags: set[str] | None = None, limit: int | None = None) -> list[Item]:
        """Items in file order, optionally only those with one of `tags`, at most `limit`."""
        chosen = [i for i in self.items if not tags or tags.intersection(i.tags)]
        return chosen[:limit] if limit is not None else chosen


def copy_item(item: Item, tag: str) -> Item:
    """The item under the id `<id>~<tag>`: the same request asked again as another item."""
    return item.model_copy(update={"id": f"{item.id}~{tag}"})


def derived_suite(suite: Suite, suffix: str, items: list[Item]) -> Suite:
    """A suite of `items` (the suite's own or copies) named `<name>-<suffix>`, hashed by them."""
    blob = json.dumps([i.model_dump(mode="json") for i in items], sort_keys=True).encode()
    return Suite(
        name=f"{suite.name}-{suffix}",
        version=suite.version,
        sha256=hashlib.sha256(blob).hexdigest(),
        path=suite.path,
        items=items,
    )


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_jsonl(path: Path) -> list[JSONObject]:
    """Read JSON Lines, splitting on \\n only (never str.splitlines, which splits at U+2028)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as fh:
        for lineno, line in enumerate(fh, 1):  # file iteration splits on \n only
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SuiteError(
                    f"{path}:{lineno}: not valid JSON ({exc.msg}); fix the line or restore the file"
                ) from exc
    return rows


def resolve_suite_dir(name_or_path: str) -> Path:
    """A suite folder from a name under suites/ (or $EVALRUN_SUITES_DIR) or a path."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_file():
        candidate = candidate.parent
    if candidate.is_dir() and (candidate / "items.jsonl").exists():
        return candidate
    base = Path(os.environ.get("EVALRUN_SUITES_DIR", SUITES_DIR))
    named = base / name_or_path
    if named.is_dir() and (named / "items.jsonl").exists():
        return named
    known = sorted(p.name for p in base.glob("*") if (p / "items.jsonl").exists())
    raise SuiteError(
        f"unknown suite {name_or_path!r}; use one of {', '.join(known) or '(none)'} "
        "or a path to a folder with items.jsonl and manifest.json"
    )


def load_suite(name_or_path: str = "core", *, verify: bool = True) -> Suite:
    """Load a suite by name or path and check items.jsonl against the manifest's sha256."""
    folder = resolve_suite_dir(name_or_path)
    items_path = folder / "items.jsonl"
    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():
        raise SuiteError(
            f"{folder} has no manifest.json; run `evalrun suite check {folder} --fix-hash`"
        )
    try:
        manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    except ValidationError as exc:
        raise SuiteError(f"{manifest_path}: invalid manifest: {_first_error(exc)}") from exc
    digest = file_sha256(items_path)
    if verify and digest != manifest.sha256:
        raise SuiteError(
            f"{items_path} does not match its manifest (sha256 {digest[:12]} != "
            f"{manifest.sha256[:12]}); a changed suite is a new version: bump `version` in "
            f"manifest.json and set `sha256` (`evalrun suite check {folder} --fix-hash`)"
        )
    items = []
    for n, row in enumerate(read_jsonl(items_path), 1):
        try:
            items.append(Item.model_validate(row))
        except ValidationError as exc:
            raise SuiteError(f"{items_path}: item {n}: {_first_error(exc)}") from exc
    for item in items:
        where = lone_surrogates(item)
        if where:
            raise SuiteError(f"{items_path}: item {item.id}: {where[0]}; fix the item")
    ids = [i.id for i in items]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SuiteError(f"{items_path}: duplicate item ids {', '.join(dupes)}; ids must be unique")
    return Suite(
        name=manifest.name, version=manifest.version, sha256=digest, path=str(folder), items=items
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogates(item: Item) -> list[str]:
    """Where an item's request holds a lone surrogate (a `\\ud800` escape without its pair).

    Such text cannot be encoded as UTF-8, so no endpoint could be sent it; accept/reject examples
    are never sent and may hold them.
    """
    found = []
    sent = {"messages": item.messages, "tools": item.tools, "tool_choice": item.tool_choice}
    for where, text in _strings(sent, ""):
        m = _SURROGATE.search(text)
        if m:
            found.append(
                f"{where.lstrip('.')} holds a lone surrogate U+{ord(m.group()):04X} at character "
                f"{m.start()} (JSON escapes \\ud800-\\udfff must come in high-low pairs)"
            )
    return found


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [s for n, v in enumerate(value) for s in _strings(v, f"{where}[{n}]")]
    return []


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(root)"
    return f"{where}: {err['msg']}"

"""`evalrun suite check` and `suite show`: validate a suite end to end and describe it.

check_suite() reads a suite folder (items.jsonl + manifest.json) or a bare .jsonl file of items
and lists every problem: schema, unique ids, grader parameters, example counts, accept/reject
agreement, and (for folders) the manifest's sha256 and category counts.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalrun.base.errors import SuiteError
from evalrun.base.text_safety import terminal_text
from evalrun.endpoint.response import example_to_response
from evalrun.grading.pattern import GradeTimeout
from evalrun.grading.registry import grade, validate_params
from evalrun.suite.load import (
    Item,
    Manifest,
    file_sha256,
    load_suite,
    lone_surrogates,
    read_jsonl,
    resolve_suite_dir,
)

MIN_ACCEPT = 2
MIN_REJECT = 1
_ID_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d{3}")


class Problem(BaseModel):
    """One thing wrong with a suite."""

    model_config = ConfigDict(extra="forbid")

    item: str | None = Field(default=None, description="Item id (or line number) it concerns.")
    kind: str = Field(description="schema, duplicate, grader, examples, accept, reject, manifest.")
    message: str = Field(description="What is wrong, in one line.")


class CheckReport(BaseModel):
    """The outcome of checking one suite."""

    model_config = ConfigDict(extra="forbid")

    path: str
    items: int = Field(description="Items that parsed.")
    categories: dict[str, int] = Field(description="Item count per category, in file order.")
    sha256: str = Field(description="sha256 of the items file.")
    examples: int = Field(default=0, description="accept + reject examples graded.")
    problems: list[Problem] = Field(default_factory=list)
    fixed_manifest: bool = Field(default=False, description="--fix-hash rewrote manifest.json.")

    @property
    def ok(self) -> bool:
        return not self.problems


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(root)"
    return f"{where}: {err['msg']}"


def check_item(item: Item) -> tuple[list[Problem], int]:
    """Problems of one item (grader params, example counts, accept/reject agreement)."""
    problems: list[Problem] = []

    def add(kind: str, message: str) -> None:
        problems.append(Problem(item=item.id, kind=kind, message=message))

    if not _ID_RE.fullmatch(item.id):
        add("schema", "id should look like <prefix>-NNN, e.g. math-007")
    if not item.messages:
        add("schema", "no messages")
    for where in lone_surrogates(item):
        add("schema", where)
    if item.grader.kind == "tool_call" and not item.tools:
        add("schema", "a tool_call item needs `tools`")
    try:
        validate_params(item.grader.kind, item.grader.params())
    except SuiteError as exc:
        add("grader", str(exc))
        return problems, 0
    if len(item.accept) < MIN_ACCEPT:
        add("examples", f"{len(item.accept)} accept examples, need at least {MIN_ACCEPT}")
    if len(item.reject) < MIN_REJECT:
        add("examples", f"{len(item.reject)} reject examples, need at least {MIN_REJECT}")
    keys = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in item.accept]
    if len(set(keys)) != len(keys):
        add("examples", "duplicate accept examples")
    for side, examples in (("accept", item.accept), ("reject", item.reject)):
        for n, example in enumerate(examples):
            try:
                g = grade(item, example_to_response(example))
            except GradeTimeout as exc:
                add("grader", f"{side}[{n}]: {exc}")
                continue
            if g.passed != (side == "accept"):
                how = "fails" if side == "accept" else "passes"
                add(side, f"{side}[{n}] {how}: {g.detail} ({_short(example)})")
    return problems, len(item.accept) + len(item.reject)


def _short(example: str | Mapping[str, object]) -> str:
    text = example if isinstance(example, str) else json.dumps(example, ensure_ascii=False)
    return repr(text[:50])


def check_suite(path: str | Path, *, fix_hash: bool = False) -> CheckReport:
    """Check a suite folder, a suite name, or a .jsonl file of items; optionally fix the hash."""
    target = Path(path)
    if target.is_file() and target.suffix == ".jsonl" and target.name != "items.jsonl":
        folder, items_path = None, target
    else:
        folder = resolve_suite_dir(str(path))
        items_path = folder / "items.jsonl"
    problems: list[Problem] = []
    items: list[Item] = []
    try:
        rows = read_jsonl(items_path)
    except SuiteError as exc:
        rows = []
        problems.append(Problem(kind="schema", message=str(exc)))
    for n, row in enumerate(rows, 1):
        try:
            items.append(Item.model_validate(row))
        except ValidationError as exc:
            ident = row.get("id") if isinstance(row, dict) else None
            problems.append(
                Problem(item=ident or f"line {n}", kind="schema", message=_first_error(exc))
            )
    for ident, count in Counter(i.id for i in items).items():
        if count > 1:
            problems.append(Problem(item=ident, kind="duplicate", message=f"id used {count} times"))
    prefixes: dict[str, set[str]] = {}
    for item in items:
        prefixes.setdefault(item.category, set()).add(item.id.rsplit("-", 1)[0])
    for cat, found in prefixes.items():
        if len(found) > 1:
            problems.append(
                Problem(
                    item=None,
                    kind="schema",
                    message=(f"category {cat} mixes id prefixes {sorted(found)}; use one"),
                )
            )
        others = [c for c, f in prefixes.items() if c != cat and f & found]
        if others and cat < others[0]:
            problems.append(
                Problem(
                    item=None,
                    kind="schema",
                    message=(
                        f"categories {cat} and {others[0]} share an id prefix; give each its own"
                    ),
                )
            )
    examples = 0
    for item in items:
        item_problems, graded = check_item(item)
        problems += item_problems
        examples += graded
    categories = dict(Counter(i.category for i in items))
    digest = file_sha256(items_path)
    fixed = False
    if folder is not None:
        fixed = _check_manifest(folder, digest, categories, problems, fix_hash=fix_hash)
    return CheckReport(
        path=str(folder or items_path),
        items=len(items),
        categories=categories,
        sha256=digest,
        examples=examples,
        problems=problems,
        fixed_manifest=fixed,
    )


def _check_manifest(
    folder: Path,
    digest: str,
    categories: dict[str, int],
    problems: list[Problem],
    *,
    fix_hash: bool,
) -> bool:
    path = folder / "manifest.json"
    manifest: Manifest | None = None
    if path.exists():
        try:
            manifest = Manifest.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            problems.append(Problem(kind="manifest", message=f"invalid: {_first_error(exc)}"))
            return False
    if fix_hash:
        fixed = manifest or Manifest(name=folder.name, version=1, sha256="", categories={})
        fixed = fixed.model_copy(update={"sha256": digest, "categories": categories})
        path.write_text(
            json.dumps(fixed.model_dump(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        return True
    if manifest is None:
        problems.append(Problem(kind="manifest", message="no manifest.json; run with --fix-hash"))
        return False
    if manifest.sha256 != digest:
        problems.append(
            Problem(
                kind="manifest",
                message=(
                    f"sha256 {digest[:12]} != manifest {manifest.sha256[:12]}: items changed; bump "
                    "`version` in manifest.json, then run `evalrun suite check --fix-hash`"
                ),
            )
        )
    if manifest.categories != categories:
        problems.append(
            Problem(
                kind="manifest",
                message=(
                    f"category counts {categories} != manifest {manifest.categories}; "
                    "run with --fix-hash"
                ),
            )
        )
    return False


def render_check(report: CheckReport) -> str:
    """Human summary of a check: counts, then one line per problem."""
    cats = ", ".join(f"{k} {v}" for k, v in report.categories.items())
    head = (
        f"{report.path}: {report.items} items ({cats}); {report.examples} examples graded; "
        f"sha256 {report.sha256[:12]}"
    )
    lines = [head]
    if report.fixed_manifest:
        lines.append("manifest.json: sha256 and category counts rewritten")
    for p in report.problems:
        lines.append(f"  {p.item or '-'}: [{p.kind}] {p.message}")
    lines.append("ok" if report.ok else f"{len(report.problems)} problem(s)")
    return "\n".join(lines)


class SuiteOverview(BaseModel):
    """What `suite show` prints."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    sha256: str
    path: str
    items: int
    categories: dict[str, int]
    probes: list[dict[str, str]] = Field(description="Probe items: id, category, prompt start.")


def describe_suite(name_or_path: str = "core") -> SuiteOverview:
    """Load (and verify) a suite and summarise it."""
    suite = load_suite(name_or_path)
    probes = []
    for item in suite.select(tags={"probe"}):
        last = next(
            (m.get("content") for m in reversed(item.messages) if m.get("role") == "user"), ""
        )
        text = " ".join(str(last or "").split())
        probes.append(
            {
                "id": item.id,
                "category": item.category,
                "prompt": text[:70] + ("…" if len(text) > 70 else ""),
            }
        )
    return SuiteOverview(
        name=suite.name,
        version=suite.version,
        sha256=suite.sha256,
        path=suite.path,
        items=len(suite.items),
        categories=dict(Counter(i.category for i in suite.items)),
        probes=probes,
    )


def render_overview(view: SuiteOverview) -> str:
    """Human summary for `suite show`."""
    head = terminal_text(
        f"{view.name}-v{view.version}  {view.items} items  sha256 {view.sha256[:12]}  ({view.path})"
    )
    lines = [head, "", "category        items"]
    lines += [f"{cat:<15} {n:>5}" for cat, n in view.categories.items()]
    lines += ["", f"probe items ({len(view.probes)}):"]
    lines += [f"  {p['id']:<18} {p['prompt']}" for p in view.probes]
    return "\n".join(lines)

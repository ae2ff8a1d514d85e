"""Built-in graders over answers with structure: numeric, choice, json, tool_call."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator

from evalrun.endpoint.response import Response
from evalrun.grading.extract import extract_answer_number, extract_json, nfkc, normalize
from evalrun.grading.registry import Grade, GraderParams, answer_text, grader, verdict

# ---------------------------------------------------------------- numeric / choice


class NumericParams(GraderParams):
    answer: float | list[float] = Field(description="The expected number (or acceptable numbers).")
    tolerance: float = Field(default=1e-6, ge=0, description="Absolute tolerance.")
    rel_tolerance: float = Field(default=0.0, ge=0, description="Relative tolerance.")
    decimal_comma: bool = Field(default=False, description="Read 3,5 as 3.5 (and 1.000 as 1000).")
    fractions: bool = Field(default=True, description="Read a/b as a fraction.")
    ignore: list[float] = Field(
        default_factory=list,
        description="Givens of the question an answer may restate after the result "
        "('10 800 seconds in 3 hours'); never read as the answer.",
    )
    pick: Literal["final", "first"] = Field(
        default="final",
        description="Without a marker, read the final number (worked answers) or the first "
        "(short factual answers that ramble on after the answer).",
    )


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.6g}"


@grader("numeric", NumericParams)
def _numeric(response: Response, p: NumericParams) -> Grade:
    value, how = extract_answer_number(
        answer_text(response),
        decimal_comma=p.decimal_comma,
        fractions=p.fractions,
        ignore=tuple(p.ignore),
        first=p.pick == "first",
    )
    wanted = [p.answer] if isinstance(p.answer, (int, float)) else p.answer
    if value is None:
        return verdict(False, f"no number in the answer (expected {_fmt(wanted[0])})")
    hit = any(math.isclose(value, w, abs_tol=p.tolerance, rel_tol=p.rel_tolerance) for w in wanted)
    return verdict(hit, f"read {_fmt(value)} ({how}); expected {_fmt(wanted[0])}")


class ChoiceParams(GraderParams):
    options: dict[str, str] | list[str] = Field(
        description="Options by letter ({'A': 'Paris', ...}) or a list lettered A, B, C, ..."
    )
    answer: str = Field(description="The correct letter.")
    when_several: Literal["fail", "first", "last"] = Field(
        default="fail", description="Several option texts named: fail, or take the first/last."
    )
    letters: bool = Field(
        default=True, description="Read a letter (B, (B), Answer: B); off when no letters shown."
    )

    def lettered(self) -> dict[str, str]:
        if isinstance(self.options, dict):
            return {k.upper(): v for k, v in self.options.items()}
        return {chr(ord("A") + i): v for i, v in enumerate(self.options)}

    @field_validator("answer")
    @classmethod
    def _upper(cls, v: str) -> str:
        return v.strip().upper()


def _letters_chosen(text: str, letters: str) -> set[str]:
    cls = f"[{letters}]"
    t = nfkc(text).replace("*", "").strip()
    if re.fullmatch(rf"\(?({cls})\)?[.:)]?", t, re.IGNORECASE):
        return {t.strip("().:").upper()}
    found: set[str] = set()
    patterns = [
        rf"^\(?({cls})\)?(?:[.:)]|\s*$|\s+[-–—]\s)",
        rf"\(({cls})\)",
        rf"(?<![\w(])({cls})\)\s",
        rf"(?:^|\s)({cls})[.!]?$",
        rf"\b(?:answer|option|choice)\s*(?:is|:|=)?\s*(?:option\s*)?\(?({cls})\b(?![a-z'])",
        rf"\b(?:answer|option|choice)\s*(?:is|:|=)?\s*\(?({cls.lower()})\)",
    ]
    for pat in patterns:
        for m in re.finditer(pat, t, re.MULTILINE):
            found.add(m.group(1).upper())
    return found


def _option_spans(norm: str, options: dict[str, str]) -> list[tuple[int, int, str]]:
    """(first, last mention, letter) of each option named; "5" inside "15" is not named."""
    found = []
    for k, v in options.items():
        want = normalize(v)
        hits = [
            m.start()
            for m in re.finditer(re.escape(want), norm)
            if (m.start() == 0 or not norm[m.start() - 1].isalnum())
            and (m.end() == len(norm) or not norm[m.end()].isalnum())
        ]
        if hits:
            found.append((hits[0], hits[-1], k))
    return found


@grader("choice", ChoiceParams)
def _choice(response: Response, p: ChoiceParams) -> Grade:
    options = p.lettered()
    letters = "".join(options)
    text = answer_text(response)
    chosen = _letters_chosen(text, letters) if p.letters else set()
    if not chosen:
        norm = normalize(text)
        spans = _option_spans(norm, options)
        if len(spans) > 1 and p.when_several == "first":
            spans = [min(spans, key=lambda s: s[0])]
        elif len(spans) > 1 and p.when_several == "last":
            spans = [max(spans, key=lambda s: s[1])]
        chosen = {k for _, _, k in spans}
    if len(chosen) != 1:
        return verdict(False, f"picked {sorted(chosen) or 'nothing'}; expected {p.answer}")
    got = chosen.pop()
    return verdict(got == p.answer, f"picked {got}; expected {p.answer}")


# ---------------------------------------------------------------- json

JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null", "any"]
_PY_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
    "any": lambda v: True,
}


class JsonParams(GraderParams):
    root: Literal["object", "array", "any"] = Field(default="object", description="Top-level type.")
    required: dict[str, JsonType] = Field(
        default_factory=dict, description="Key path (dots for nesting) -> JSON type."
    )
    values: dict[str, Any] = Field(
        default_factory=dict,
        description="Key path -> expected value (strings compared normalized).",
    )
    no_extra_keys: bool = Field(
        default=False, description="Top-level keys must be `required` only."
    )
    min_items: int | None = Field(default=None, description="Minimum length of a root array.")
    max_items: int | None = Field(default=None, description="Maximum length of a root array.")
    allow_prose: bool = Field(
        default=False, description="Accept JSON embedded in prose (else only bare or one fence)."
    )


def _lookup(value: Any, path: str) -> tuple[bool, Any]:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def same_value(got: Any, want: Any) -> bool:
    """Equal after normalizing: strings by NFKC/case/space, numbers by value, containers deeply."""
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want if isinstance(got, bool) and isinstance(want, bool) else False
    if isinstance(want, (int, float)):
        if isinstance(got, str):
            try:
                got = float(got.strip().replace(",", ""))
            except ValueError:
                return False
        return isinstance(got, (int, float)) and math.isclose(got, want, abs_tol=1e-9)
    if isinstance(want, str):
        if isinstance(got, (int, float)):
            got = f"{got:g}"
        return isinstance(got, str) and normalize(got) == normalize(want)
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(same_value(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and set(got) == set(want)
            and all(same_value(got[k], w) for k, w in want.items())
        )
    return bool(got == want)


@grader("json", JsonParams)
def _json(response: Response, p: JsonParams) -> Grade:
    try:
        value, how = extract_json(answer_text(response), allow_prose=p.allow_prose)
    except ValueError as exc:
        return verdict(False, f"not JSON: {exc}")
    if p.root != "any" and not _PY_TYPES[p.root](value):
        return verdict(False, f"top level is {type(value).__name__}, expected {p.root}")
    for path, kind in p.required.items():
        present, got = _lookup(value, path)
        if not present:
            return verdict(False, f"missing key {path!r}")
        if not _PY_TYPES[kind](got):
            return verdict(False, f"{path!r} is {type(got).__name__}, expected {kind}")
    for path, want in p.values.items():
        present, got = _lookup(value, path)
        if not present or not same_value(got, want):
            return verdict(False, f"{path!r} is {got!r}, expected {want!r}")
    if p.no_extra_keys and isinstance(value, dict):
        extra = set(value) - {k.split(".")[0] for k in p.required}
        if extra:
            return verdict(False, f"unexpected keys {sorted(extra)}")
    if isinstance(value, list):
        if p.min_items is not None and len(value) < p.min_items:
            return verdict(False, f"{len(value)} items, need at least {p.min_items}")
        if p.max_items is not None and len(value) > p.max_items:
            return verdict(False, f"{len(value)} items, at most {p.max_items}")
    return verdict(True, f"valid JSON ({how})")


# ---------------------------------------------------------------- tool calls


class ToolCallParams(GraderParams):
    name: str | None = Field(default=None, description="Expected function; None = no tool call.")
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="Expected arguments; a value {'one_of': [...]} accepts any of several.",
    )
    allow_extra_args: bool = Field(default=True, description="Tolerate arguments not listed.")
    max_calls: int = Field(default=1, ge=1, description="Most calls allowed.")


@grader("tool_call", ToolCallParams)
def _tool_call(response: Response, p: ToolCallParams) -> Grade:
    calls = response.tool_calls
    if p.name is None:
        if calls:
            return verdict(False, f"called {calls[0].name} when no tool was needed")
        if not (response.content or "").strip():
            return verdict(False, "no tool call and no content")
        return verdict(True, "answered without a tool")
    if not calls:
        raw = "; a tool call was left as raw text" if p.name in (response.content or "") else ""
        return verdict(False, f"no tool call (expected {p.name}){raw}")
    if len(calls) > p.max_calls:
        return verdict(False, f"{len(calls)} calls, at most {p.max_calls}")
    call = next((c for c in calls if c.name == p.name), None)
    if call is None:
        return verdict(False, f"called {calls[0].name}, expected {p.name}")
    args = call.arguments
    if not isinstance(args, dict):
        return verdict(False, f"arguments are not a JSON object: {str(args)[:60]!r}")
    for key, want in p.arguments.items():
        if key not in args:
            return verdict(False, f"missing argument {key!r}")
        alts = want["one_of"] if isinstance(want, dict) and set(want) == {"one_of"} else [want]
        if not any(same_value(args[key], w) for w in alts):
            return verdict(False, f"argument {key!r} is {args[key]!r}, expected {alts[0]!r}")
    extra = set(args) - set(p.arguments)
    if extra and not p.allow_extra_args:
        return verdict(False, f"unexpected arguments {sorted(extra)}")
    return verdict(True, f"called {p.name} with the expected arguments")

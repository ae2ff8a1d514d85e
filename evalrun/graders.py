"""Grader registry and the built-in graders.

`grade(item, response) -> Grade` judges `response.content` only (tool_call judges the parsed tool
calls): a correct answer that sits only in the reasoning channel fails, and the detail says so.
Each grader declares a pydantic model for its parameters (extra="forbid"), so a typo in a suite
item is an error at `evalrun suite check`, not a silently lenient grader.

Register a grader the way the built-ins do:

    class MyParams(GraderParams):
        answer: str

    @grader("mine", MyParams)
    def _mine(response: Response, p: MyParams) -> Grade: ...
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from rapidfuzz import fuzz

from evalrun.errors import SuiteError
from evalrun.extract import (
    extract_answer_number,
    extract_json,
    mixed_script_words,
    nfkc,
    normalize,
    script_counts,
    words_of,
)
from evalrun.response import Response


class Grade(BaseModel):
    """The verdict on one response."""

    passed: bool
    detail: str = ""


class GraderParams(BaseModel):
    """Base of every grader's parameter model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


GraderFn = Callable[[Response, Any], Grade]
GRADERS: dict[str, GraderFn] = {}
PARAMS: dict[str, type[BaseModel] | None] = {}


def grader(kind: str, params: type[BaseModel] | None = None) -> Callable[[GraderFn], GraderFn]:
    """Register a grader under `kind`; with `params`, it receives a validated params model."""

    def wrap(fn: GraderFn) -> GraderFn:
        GRADERS[kind] = fn
        PARAMS[kind] = params
        return fn

    return wrap


def validate_params(kind: str, params: dict[str, Any]) -> Any:
    """The validated parameters for `kind`; raises SuiteError saying what is wrong."""
    return _validated(kind, json.dumps(params, sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=4096)
def _validated(kind: str, params_json: str) -> Any:
    if kind not in GRADERS:
        raise SuiteError(f"unknown grader kind {kind!r}; use one of {', '.join(sorted(GRADERS))}")
    params = json.loads(params_json)
    model = PARAMS[kind]
    if model is None:
        return params
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise SuiteError(f"grader {kind}: {where}: {err['msg']}") from exc


def grade_spec(kind: str, params: dict[str, Any], response: Response) -> Grade:
    """Grade a response against a grader kind + parameters (used by `all`/`any` too)."""
    validated = validate_params(kind, params)
    if kind != "tool_call" and not (response.content or "").strip():
        why = "no content"
        if (response.reasoning or "").strip():
            why += "; the answer is only in the reasoning channel"
        if response.tool_calls:
            why += "; the model called a tool instead of answering"
        return Grade(passed=False, detail=why)
    return GRADERS[kind](response, validated)


def grade(item: Any, response: Response) -> Grade:
    """Grade one response against an item's grader spec."""
    return grade_spec(item.grader.kind, item.grader.params(), response)


def _content(response: Response) -> str:
    return response.content or ""


def _ok(passed: bool, detail: str) -> Grade:
    return Grade(passed=passed, detail=detail)


Answers = str | list[str]


def _as_list(value: Answers) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# ---------------------------------------------------------------- exact / normalized / fuzzy


class ExactParams(GraderParams):
    answer: Answers = Field(description="The expected text, or a list of acceptable texts.")
    strip: bool = Field(default=True, description="Ignore leading/trailing whitespace.")


@grader("exact", ExactParams)
def _exact(response: Response, p: ExactParams) -> Grade:
    got = _content(response).strip() if p.strip else _content(response)
    wanted = [a.strip() if p.strip else a for a in _as_list(p.answer)]
    return _ok(got in wanted, f"expected exactly {wanted[0]!r}, got {got[:60]!r}")


class NormalizedParams(GraderParams):
    answer: Answers = Field(description="Expected text(s), compared after normalization.")
    match: Literal["full", "contains", "starts"] = Field(
        default="full", description="Whole answer, anywhere as whole words, or at the start."
    )
    case_sensitive: bool = Field(default=False, description="Keep case when comparing.")
    ignore_punct: bool = Field(default=False, description="Drop all punctuation before comparing.")


def _contains_words(haystack: str, needle: str) -> bool:
    if not needle:
        return False
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    return re.search(left + re.escape(needle) + right, haystack) is not None


@grader("normalized", NormalizedParams)
def _normalized(response: Response, p: NormalizedParams) -> Grade:
    kw = {"case": p.case_sensitive, "punct": p.ignore_punct}
    got = normalize(_content(response), **kw)
    for want in (normalize(a, **kw) for a in _as_list(p.answer)):
        if p.match == "full" and got == want:
            return _ok(True, f"matches {want!r}")
        if p.match == "starts" and (
            got == want
            or got.startswith(want + " ")
            or (got.startswith(want) and not got[len(want)].isalnum())
        ):
            return _ok(True, f"starts with {want!r}")
        if p.match == "contains" and _contains_words(got, want):
            return _ok(True, f"contains {want!r}")
    return _ok(False, f"expected {p.match} {_as_list(p.answer)[0]!r}, got {got[:60]!r}")


class FuzzyParams(GraderParams):
    answer: Answers = Field(description="Expected text(s).")
    threshold: float = Field(default=85, ge=0, le=100, description="Minimum rapidfuzz score.")
    scorer: Literal["ratio", "partial_ratio", "token_set_ratio", "token_sort_ratio"] = Field(
        default="ratio", description="rapidfuzz.fuzz scorer."
    )


@grader("fuzzy", FuzzyParams)
def _fuzzy(response: Response, p: FuzzyParams) -> Grade:
    score_fn = getattr(fuzz, p.scorer)
    got = normalize(_content(response))
    best = max(score_fn(got, normalize(a)) for a in _as_list(p.answer))
    return _ok(best >= p.threshold, f"{p.scorer} {best:.0f} (need {p.threshold:.0f})")


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
        _content(response),
        decimal_comma=p.decimal_comma,
        fractions=p.fractions,
        ignore=tuple(p.ignore),
        first=p.pick == "first",
    )
    wanted = [p.answer] if isinstance(p.answer, (int, float)) else p.answer
    if value is None:
        return _ok(False, f"no number in the answer (expected {_fmt(wanted[0])})")
    hit = any(math.isclose(value, w, abs_tol=p.tolerance, rel_tol=p.rel_tolerance) for w in wanted)
    return _ok(hit, f"read {_fmt(value)} ({how}); expected {_fmt(wanted[0])}")


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
    text = _content(response)
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
        return _ok(False, f"picked {sorted(chosen) or 'nothing'}; expected {p.answer}")
    got = chosen.pop()
    return _ok(got == p.answer, f"picked {got}; expected {p.answer}")


# ---------------------------------------------------------------- regex / contains


class RegexParams(GraderParams):
    pattern: str = Field(description="Python regular expression searched in the content.")
    ignore_case: bool = Field(default=True, description="re.IGNORECASE.")
    full: bool = Field(default=False, description="The whole stripped content must match.")
    negate: bool = Field(default=False, description="Pass when the pattern does NOT match.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v


@grader("regex", RegexParams)
def _regex(response: Response, p: RegexParams) -> Grade:
    flags = re.IGNORECASE | re.MULTILINE if p.ignore_case else re.MULTILINE
    text = nfkc(_content(response)).strip()
    hit = (re.fullmatch if p.full else re.search)(p.pattern, text, flags) is not None
    return _ok(hit != p.negate, f"pattern {'' if hit else 'not '}found")


class ContainsParams(GraderParams):
    items: list[Answers] = Field(
        description="Texts to look for; an entry that is a list means any one of its synonyms."
    )
    case_sensitive: bool = Field(default=False, description="Keep case.")
    whole_word: bool = Field(default=True, description="Match whole words (off for CJK).")


def _present(text: str, entry: Answers, p: ContainsParams) -> bool:
    for alt in _as_list(entry):
        needle = normalize(alt, case=p.case_sensitive)
        if _contains_words(text, needle) if p.whole_word else needle in text:
            return True
    return False


@grader("contains_all", ContainsParams)
def _contains_all(response: Response, p: ContainsParams) -> Grade:
    text = normalize(_content(response), case=p.case_sensitive)
    missing = [_as_list(e)[0] for e in p.items if not _present(text, e, p)]
    return _ok(not missing, f"missing {missing}" if missing else "all present")


@grader("contains_none", ContainsParams)
def _contains_none(response: Response, p: ContainsParams) -> Grade:
    text = normalize(_content(response), case=p.case_sensitive)
    found = [_as_list(e)[0] for e in p.items if _present(text, e, p)]
    return _ok(not found, f"contains {found}" if found else "none present")


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
        value, how = extract_json(_content(response), allow_prose=p.allow_prose)
    except ValueError as exc:
        return _ok(False, f"not JSON: {exc}")
    if p.root != "any" and not _PY_TYPES[p.root](value):
        return _ok(False, f"top level is {type(value).__name__}, expected {p.root}")
    for path, kind in p.required.items():
        present, got = _lookup(value, path)
        if not present:
            return _ok(False, f"missing key {path!r}")
        if not _PY_TYPES[kind](got):
            return _ok(False, f"{path!r} is {type(got).__name__}, expected {kind}")
    for path, want in p.values.items():
        present, got = _lookup(value, path)
        if not present or not same_value(got, want):
            return _ok(False, f"{path!r} is {got!r}, expected {want!r}")
    if p.no_extra_keys and isinstance(value, dict):
        extra = set(value) - {k.split(".")[0] for k in p.required}
        if extra:
            return _ok(False, f"unexpected keys {sorted(extra)}")
    if isinstance(value, list):
        if p.min_items is not None and len(value) < p.min_items:
            return _ok(False, f"{len(value)} items, need at least {p.min_items}")
        if p.max_items is not None and len(value) > p.max_items:
            return _ok(False, f"{len(value)} items, at most {p.max_items}")
    return _ok(True, f"valid JSON ({how})")


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
            return _ok(False, f"called {calls[0].name} when no tool was needed")
        if not (response.content or "").strip():
            return _ok(False, "no tool call and no content")
        return _ok(True, "answered without a tool")
    if not calls:
        raw = "; a tool call was left as raw text" if p.name in (response.content or "") else ""
        return _ok(False, f"no tool call (expected {p.name}){raw}")
    if len(calls) > p.max_calls:
        return _ok(False, f"{len(calls)} calls, at most {p.max_calls}")
    call = next((c for c in calls if c.name == p.name), None)
    if call is None:
        return _ok(False, f"called {calls[0].name}, expected {p.name}")
    args = call.arguments
    if not isinstance(args, dict):
        return _ok(False, f"arguments are not a JSON object: {str(args)[:60]!r}")
    for key, want in p.arguments.items():
        if key not in args:
            return _ok(False, f"missing argument {key!r}")
        alts = want["one_of"] if isinstance(want, dict) and set(want) == {"one_of"} else [want]
        if not any(same_value(args[key], w) for w in alts):
            return _ok(False, f"argument {key!r} is {args[key]!r}, expected {alts[0]!r}")
    extra = set(args) - set(p.arguments)
    if extra and not p.allow_extra_args:
        return _ok(False, f"unexpected arguments {sorted(extra)}")
    return _ok(True, f"called {p.name} with the expected arguments")


# ---------------------------------------------------------------- language / script

_SCRIPT_OF_LANG = {
    "ru": {"cyrillic"},
    "uk": {"cyrillic"},
    "bg": {"cyrillic"},
    "sr": {"cyrillic"},
    "zh": {"han"},
    "ja": {"han", "kana"},
    "ko": {"hangul"},
    "el": {"greek"},
    "ar": {"arabic"},
}
_STOPWORDS = {
    "en": {"the", "is", "and", "of", "to", "in", "it", "a", "that", "are", "was", "for", "with"},
    "fr": {
        "le",
        "la",
        "les",
        "est",
        "et",
        "des",
        "une",
        "un",
        "du",
        "que",
        "en",
        "dans",
        "pour",
        "je",
        "vous",
        "il",
        "ce",
        "sont",
        "pas",
        "au",
        "avec",
    },
    "de": {
        "der",
        "die",
        "das",
        "ist",
        "und",
        "ein",
        "eine",
        "nicht",
        "zu",
        "mit",
        "den",
        "ich",
        "sie",
        "es",
        "auf",
        "für",
        "im",
        "von",
        "dem",
        "sind",
        "wir",
    },
    "es": {
        "el",
        "la",
        "los",
        "las",
        "es",
        "y",
        "de",
        "que",
        "en",
        "un",
        "una",
        "por",
        "con",
        "para",
        "del",
        "se",
        "no",
        "son",
    },
}


class LanguageParams(GraderParams):
    language: str = Field(description="Expected language code: en, ru, zh, fr, de, es, ja, ko, ...")
    min_ratio: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Share of letters that must be in the language's script.",
    )

    @field_validator("language")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in _SCRIPT_OF_LANG and v not in _STOPWORDS:
            known = sorted(set(_SCRIPT_OF_LANG) | set(_STOPWORDS))
            raise ValueError(f"unknown language {v!r}; use one of {', '.join(known)}")
        return v


@grader("language", LanguageParams)
def _language(response: Response, p: LanguageParams) -> Grade:
    text = _content(response)
    counts = script_counts(text)
    letters = sum(counts.values())
    if not letters:
        return _ok(False, "no letters in the answer")
    mixed = mixed_script_words(text)
    if mixed:
        return _ok(False, f"words mixing Latin and Cyrillic look-alikes: {mixed[:3]}")
    scripts = _SCRIPT_OF_LANG.get(p.language, {"latin"})
    share = sum(counts.get(s, 0) for s in scripts) / letters
    if share < p.min_ratio:
        return _ok(False, f"{share:.0%} of letters in {'/'.join(sorted(scripts))} script")
    if p.language == "ja" and not counts.get("kana"):
        return _ok(False, "no kana: reads as Chinese, not Japanese")
    if p.language in _STOPWORDS:
        words = [w.casefold() for w in words_of(text)]
        if len(words) >= 4:
            hits = {lang: sum(w in sw for w in words) for lang, sw in _STOPWORDS.items()}
            best = max(hits.values())
            if hits[p.language] < best or best == 0:
                top = max(hits, key=lambda k: hits[k])
                return _ok(False, f"reads as {top}, not {p.language} (function words {hits})")
    return _ok(True, f"{share:.0%} {'/'.join(sorted(scripts))} letters")


# ---------------------------------------------------------------- format checks

_LIST_LINE = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+\S")


class FormatParams(GraderParams):
    bullets: int | None = Field(default=None, description="Exact number of list lines (-, *, 1.).")
    min_bullets: int | None = Field(default=None, description="At least this many list lines.")
    max_bullets: int | None = Field(default=None, description="At most this many list lines.")
    min_words: int | None = Field(default=None, description="At least this many words.")
    max_words: int | None = Field(default=None, description="At most this many words.")
    lines: int | None = Field(default=None, description="Exact number of non-empty lines.")
    sentences: int | None = Field(default=None, description="Exact number of sentences.")
    all_caps: bool = Field(default=False, description="No lowercase letters.")
    all_lower: bool = Field(default=False, description="No uppercase letters.")
    starts_with: str | None = Field(default=None, description="Required opening (normalized).")
    ends_with: str | None = Field(default=None, description="Required closing phrase (normalized).")
    forbid: list[str] = Field(default_factory=list, description="Characters/strings not allowed.")

    @model_validator(mode="after")
    def _some_check(self) -> FormatParams:
        if not any(v not in (None, False, []) for v in self.model_dump().values()):
            raise ValueError("format grader needs at least one check")
        return self


def _sentence_count(text: str) -> int:
    parts = re.split(r"(?<=[.!?。！？])\s+", text.strip())
    return len([s for s in parts if re.search(r"\w", s)])


@grader("format", FormatParams)
def _format(response: Response, p: FormatParams) -> Grade:
    text = nfkc(_content(response)).strip()
    lines = [ln for ln in text.split("\n") if ln.strip()]
    n_list = sum(bool(_LIST_LINE.match(ln)) for ln in lines)
    n_words = len(words_of(text))
    fails = []
    if p.bullets is not None and n_list != p.bullets:
        fails.append(f"{n_list} list lines, need {p.bullets}")
    if p.min_bullets is not None and n_list < p.min_bullets:
        fails.append(f"{n_list} list lines, need >= {p.min_bullets}")
    if p.max_bullets is not None and n_list > p.max_bullets:
        fails.append(f"{n_list} list lines, need <= {p.max_bullets}")
    if p.min_words is not None and n_words < p.min_words:
        fails.append(f"{n_words} words, need >= {p.min_words}")
    if p.max_words is not None and n_words > p.max_words:
        fails.append(f"{n_words} words, need <= {p.max_words}")
    if p.lines is not None and len(lines) != p.lines:
        fails.append(f"{len(lines)} lines, need {p.lines}")
    if p.sentences is not None and _sentence_count(text) != p.sentences:
        fails.append(f"{_sentence_count(text)} sentences, need {p.sentences}")
    if p.all_caps and (any(c.islower() for c in text) or not any(c.isupper() for c in text)):
        fails.append("not all caps")
    if p.all_lower and any(c.isupper() for c in text):
        fails.append("not all lowercase")
    if p.starts_with is not None and not normalize(text).startswith(normalize(p.starts_with)):
        fails.append(f"does not start with {p.starts_with!r}")
    if p.ends_with is not None and not normalize(text).endswith(normalize(p.ends_with)):
        fails.append(f"does not end with {p.ends_with!r}")
    fails += [f"contains {s!r}" for s in p.forbid if s in text]
    return _ok(not fails, "; ".join(fails) or "format ok")


# ---------------------------------------------------------------- combinators


class SubGrader(BaseModel):
    """One grader inside `all`/`any`: a kind plus that grader's parameters."""

    model_config = ConfigDict(extra="allow")

    kind: str

    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class CombineParams(GraderParams):
    graders: list[SubGrader] = Field(min_length=1, description="Sub-graders, each {kind, ...}.")

    @model_validator(mode="after")
    def _subs_valid(self) -> CombineParams:
        for sub in self.graders:
            try:
                validate_params(sub.kind, sub.params())
            except SuiteError as exc:
                raise ValueError(str(exc)) from exc
        return self


@grader("all", CombineParams)
def _all(response: Response, p: CombineParams) -> Grade:
    details = []
    for sub in p.graders:
        g = grade_spec(sub.kind, sub.params(), response)
        if not g.passed:
            return _ok(False, f"{sub.kind}: {g.detail}")
        details.append(f"{sub.kind}: {g.detail}")
    return _ok(True, "; ".join(details))


@grader("any", CombineParams)
def _any(response: Response, p: CombineParams) -> Grade:
    details = []
    for sub in p.graders:
        g = grade_spec(sub.kind, sub.params(), response)
        if g.passed:
            return _ok(True, f"{sub.kind}: {g.detail}")
        details.append(f"{sub.kind}: {g.detail}")
    return _ok(False, "; ".join(details))

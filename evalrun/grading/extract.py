"""Text helpers the graders share: normalization, number and JSON extraction, script counting.

Kept apart from graders.py so each grader reads as a few lines of policy over these mechanics.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

# Characters that separate thousands: comma, space, no-break space, narrow no-break, thin space,
# apostrophe (Swiss style). Only a group of exactly three digits after one counts.
_SEP = "[,\u0020\u00a0\u202f\u2009']"
_MINUS = "-\u2212\u2013"
NUMBER_RE = re.compile(
    rf"(?<![\w.])(?P<sign>[{_MINUS}])?"
    rf"(?P<num>\d{{1,3}}(?:{_SEP}\d{{3}})+(?![\d])(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?:/(?P<den>\d+)(?![\d.]))?"
)
_DECIMAL_COMMA_RE = re.compile(
    rf"(?<![\w.,])(?P<sign>[{_MINUS}])?(?P<num>\d{{1,3}}(?:[.\u00a0\u202f\u2009 ]\d{{3}})+(?!\d)"
    r"(?:,\d+)?|\d+(?:,\d+)?)(?P<den>)"
)

_WORD_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
}
_WORD_RE = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)

_BOXED_RE = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_MARKER_RE = re.compile(
    r"(?:\banswer\b\s*(?:is|:|=|\*\*:?)|\bresult\b\s*(?:is|:)|\btotal\b\s*(?:is|:)|####"
    r"|\boutputs?\b\s*(?:is|will be|would be|:)|\bprints?\s*:)",
    re.IGNORECASE,
)
_MARKDOWN_RE = re.compile(r"[*_`]+")
_WS_RE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n\r\"'“”‘’«»„()[]{}<>.,;:!?。，！？：；"


def nfkc(text: str) -> str:
    """Unicode NFKC: full-width digits, ligatures and compatibility forms become plain ones."""
    return unicodedata.normalize("NFKC", text)


def normalize(text: str, *, case: bool = False, punct: bool = False) -> str:
    """Compare-friendly text: NFKC, no markdown emphasis, collapsed whitespace, trimmed edges.

    `case=True` keeps case; `punct=True` removes all punctuation (not just at the edges).
    """
    out = nfkc(text)
    out = _MARKDOWN_RE.sub("", out)
    out = out.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    if punct:
        out = "".join(" " if unicodedata.category(c).startswith("P") else c for c in out)
    out = _WS_RE.sub(" ", out).strip(_EDGE_PUNCT)
    return out if case else out.casefold()


def _to_float(num: str, sign: str | None, den: str | None, decimal_comma: bool) -> float:
    if decimal_comma:
        num = re.sub(r"[.\u00a0\u202f\u2009 ]", "", num).replace(",", ".")
    else:
        num = re.sub(_SEP, "", num)
    value = float(num)
    if den:
        value = value / float(den) if float(den) else value
    return -value if sign else value


_NEG_WORD_RE = re.compile(r"(?<![\d.])(?<![\d.] )\b(?:negative|minus)\s+(?=\d)", re.IGNORECASE)


def numbers_in(text: str, *, decimal_comma: bool = False, fractions: bool = True) -> list[float]:
    """Every number in `text`, in order: separators, signs (incl. U+2212, "negative 8"), a/b."""
    text = _NEG_WORD_RE.sub("-", nfkc(text).replace("\u2212", "-"))
    pattern = _DECIMAL_COMMA_RE if decimal_comma else NUMBER_RE
    out = []
    for m in pattern.finditer(text):
        den = m.group("den") if fractions else None
        out.append(_to_float(m.group("num"), m.group("sign"), den, decimal_comma))
    return out


def word_numbers_in(text: str) -> list[float]:
    """Spelled-out small numbers (zero..hundred), used only when a text has no digits."""
    return [float(_WORD_NUMBERS[w.lower()]) for w in _WORD_RE.findall(text)]


def extract_answer_number(
    text: str,
    *,
    decimal_comma: bool = False,
    fractions: bool = True,
    ignore: tuple[float, ...] = (),
    first: bool = False,
) -> tuple[float | None, str]:
    """The number a text gives as its answer, and how it was found.

    Priority: the last `\\boxed{}`; else the first number after the last answer marker
    ("Answer:", "the answer is", "####"); else the final number; else a spelled-out number.
    Numbers in `ignore` (givens an answer tends to restate: "... in 3 hours") are skipped.
    `first=True` takes the first number instead of the final one: short factual answers state
    the answer first and ramble after it ("A hexagon has 6 sides ... angles of 180 degrees").
    """

    def keep(nums: list[float]) -> list[float]:
        return [n for n in nums if not any(abs(n - i) < 1e-9 for i in ignore)]

    kw = {"decimal_comma": decimal_comma, "fractions": fractions}
    boxed = _BOXED_RE.findall(text)
    if boxed:
        nums = numbers_in(boxed[-1], **kw)
        if nums:
            return nums[-1], "boxed"
    markers = list(_MARKER_RE.finditer(text))
    if markers:
        nums = keep(numbers_in(text[markers[-1].end() :], **kw))
        if nums:
            return nums[0], "marked"
    nums = keep(numbers_in(text, **kw))
    if nums:
        return (nums[0], "first") if first else (nums[-1], "final")
    words = keep(word_numbers_in(text))
    if words:
        return words[0] if first else words[-1], "word"
    return None, "none"


_FENCE_RE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)```", re.DOTALL)


def extract_json(text: str, *, allow_prose: bool) -> tuple[Any, str]:
    """Parse JSON from a reply: bare, inside a ``` fence, or (if allowed) embedded in prose.

    Returns (value, how) where how is bare|fence|embedded; raises ValueError when none parses.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped), "bare"
    except json.JSONDecodeError as exc:
        bare_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    fences = _FENCE_RE.findall(stripped)
    only_fence = len(fences) == 1 and _FENCE_RE.sub("", stripped).strip() == ""
    if fences and (only_fence or allow_prose):
        for body in fences:
            try:
                return json.loads(body.strip()), "fence"
            except json.JSONDecodeError:
                continue
    if allow_prose:
        decoder = json.JSONDecoder()
        for m in re.finditer(r"[\[{]", stripped):
            try:
                value, _ = decoder.raw_decode(stripped[m.start() :])
            except json.JSONDecodeError:
                continue
            if isinstance(value, (dict, list)):
                return value, "embedded"
    if fences:
        raise ValueError("the fenced block is not valid JSON")
    if stripped.startswith("```"):
        raise ValueError("a ``` fence that never closes (cut off by max_tokens?)")
    if stripped[:1] in "[{":
        raise ValueError(bare_error)
    raise ValueError("no JSON value found")


def script_of(char: str) -> str | None:
    """Script bucket of one letter: latin, cyrillic, han, kana, hangul, greek, arabic, other."""
    if not char.isalpha():
        return None
    code = ord(char)
    if code < 0x250 or 0x1E00 <= code <= 0x1EFF:
        return "latin"
    if 0x400 <= code <= 0x52F:
        return "cyrillic"
    if 0x370 <= code <= 0x3FF:
        return "greek"
    if 0x3040 <= code <= 0x30FF:
        return "kana"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return "han"
    if 0xAC00 <= code <= 0xD7AF:
        return "hangul"
    if 0x600 <= code <= 0x6FF:
        return "arabic"
    return "other"


def script_counts(text: str) -> dict[str, int]:
    """How many letters of each script a text holds."""
    counts: dict[str, int] = {}
    for ch in nfkc(text):
        s = script_of(ch)
        if s:
            counts[s] = counts.get(s, 0) + 1
    return counts


def mixed_script_words(text: str) -> list[str]:
    """Words mixing Latin and Cyrillic letters, e.g. 'Mосква' with a Latin M (look-alikes)."""
    out = []
    for word in re.findall(r"\w+", nfkc(text)):
        scripts = {script_of(c) for c in word} - {None}
        if {"latin", "cyrillic"} <= scripts:
            out.append(word)
    return out


def words_of(text: str) -> list[str]:
    """Words as a person counts them: runs of letters/digits, with inner ' and - kept."""
    return re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", nfkc(text))


def contains_words(haystack: str, needle: str) -> bool:
    """`needle` occurs in `haystack` as whole words (no letter or digit glued on either side)."""
    if not needle:
        return False
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    return re.search(left + re.escape(needle) + right, haystack) is not None

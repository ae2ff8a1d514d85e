"""Built-in graders over answers with structure: numeric, choice, json, tool_call."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, field_validator

from evalrun.base.jsondata import SCHEMA_TYPES, JSONObject
from evalrun.endpoint.response import Response
from evalrun.grading.extract import (
    NumberReading,
    extract_answer_number,
    extract_json,
    fmt_number,
    fold_accents,
    is_bare_expression,
    normalize,
    numbers_in,
    unit_forms,
    units_key,
    with_digits,
)
from evalrun.grading.registry import (
    Grade,
    GraderParams,
    answer_text,
    current_question,
    grader,
    verdict,
)
from evalrun.grading.span import (
    FUNCTION_WORDS,
    answer_spans,
    is_believed,
    is_denied,
    is_hedge,
    is_negated,
    plain_text,
    question_focus,
)

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
    units: list[str] = Field(
        default_factory=list,
        description="Units the answer is written in; without a marker, the first/final number "
        "written with one of them is read ('At 1 atm, water boils at 100 °C' reads 100).",
    )
    reject_units: list[str] = Field(
        default_factory=list,
        description="Units that make the answer wrong when written right after the number "
        "(a °C item rejects '°F', 'fahrenheit'); compared case-blind, word by word.",
    )


@grader("numeric", NumericParams, reads_claim=True)
def _numeric(response: Response, p: NumericParams) -> Grade:
    """The number the reply gives as its answer equals the expected one."""
    read = extract_answer_number(
        answer_text(response),
        decimal_comma=p.decimal_comma,
        fractions=p.fractions,
        ignore=tuple(p.ignore),
        first=p.pick == "first",
        units=tuple(p.units),
        givens=tuple(numbers_in(current_question())),
    )
    if _number_list(answer_text(response)):
        return verdict(False, "the reply lists numbers and concludes none")
    labelled = _labelled_value(answer_text(response), current_question(), p)
    if labelled is not None:
        read = labelled
    wanted = [p.answer] if isinstance(p.answer, (int, float)) else p.answer
    if _PRINTS.search(current_question()) and not _as_printed(answer_text(response)):
        return verdict(False, "a program's output is written in digits, as it prints them")
    if _PRINTS.search(current_question()) and _FRACTION.fullmatch(read.span.strip(" .")):
        return verdict(False, f"a program prints a quotient as a decimal, not as {read.span!r}")
    if is_bare_expression(answer_text(response)):
        return verdict(False, f"the computation restated, not its value ({fmt_number(wanted[0])})")
    if read.value is None:
        return verdict(False, f"no number in the answer (expected {fmt_number(wanted[0])})")
    seen = f"read {fmt_number(read.value)} ({read.how}); expected {fmt_number(wanted[0])}"
    span = " ".join(read.span.split()) or None
    if read.problem:
        return Grade(
            passed=False, detail=f"{read.problem}; expected {fmt_number(wanted[0])}", span=span
        )
    value, thousands = read.value, read.thousands
    other = _asked_unit_instead(answer_text(response), value, p)
    if other is not None:
        value, thousands = other[0], None
        read = read._replace(unit=other[1])
        seen = f"read {fmt_number(value)} (in the asked unit, {other[1]!r}); "
        seen += f"expected {fmt_number(wanted[0])}"
    if unit_forms(read.unit) & units_key(p.reject_units):
        return Grade(
            passed=False, detail=f"{seen}, but in {read.unit!r}, the wrong unit", span=span
        )
    readings = [value] + ([thousands] if thousands is not None else [])
    close = (
        math.isclose(got, w, abs_tol=p.tolerance, rel_tol=p.rel_tolerance)
        for got in readings
        for w in wanted
    )
    return Grade(passed=any(close), detail=seen, span=span)


# "What does this Python code print?": the output is what the program prints, in digits
# ("11", never "eleven")
_PRINTS = re.compile(
    r"\bwhat (?:does|will) (?:this|the following) (?:\w+ )?(?:code|program|snippet) "
    r"(?:print|output)",
    re.IGNORECASE,
)


# "5/2" read as the value: a fraction, which a program printing a number never writes
_FRACTION = re.compile(r"[-−]?\d{1,20}\s{0,3}/\s{0,3}\d{1,20}")


def _as_printed(text: str) -> bool:
    """Whether the reply writes its output's numbers in digits, as a program prints them."""
    return bool(re.search(r"\d", plain_text(text)))


# "Red: 9, green: 6." for "How many red balls are there?": values under labels, one of which
# the question asks for
_LABELLED = re.compile(
    r"(?:^|[,;\n])[\s*•-]*\**([^\W\d_][^\W\d_ ]{0,20}(?: [^\W\d_]+){0,2})\**\s*[:=]\s*\**"
    r"(-?\d[\d,]*(?:\.\d+)?)\b"
)
_HOW_MANY = re.compile(
    r"\bhow (?:many|much)\s+((?:[^\W\d_]+\s+){0,3}?[^\W\d_]+)\s+(?:are|is|do|does|did|will|"
    r"would|can|could|has|have|were|was)\b",
    re.IGNORECASE,
)


# "9 red, 6 green (9 + 6 = 15)": values each followed by a word of the question naming its kind
_VALUE_LABELLED = re.compile(
    r"(?:^|[,;\n]|\band\b)[\s*•-]*\**(?P<value>-?\d[\d,]*(?:\.\d+)?)\**\s+"
    r"(?P<label>[^\W\d_]+)(?:\s+[^\W\d_]+)?\s*(?=[,;\n]|\band\b|$)"
)


# "Red = 9, green = 6: 9 + 6 = 15 and 9 − 6 = 3": the pairs' check after a colon or a dash
_ARITHMETIC_AFTER = re.compile(
    r"[:(—–]\s*[\d\s+\-−×x*/÷=.,()]+(?:\s+and\s+[\d\s+\-−×x*/÷=.,()]+)*\)?"
)


def _labelled_value(text: str, question: str, p: NumericParams) -> NumberReading | None:
    """The value under the label the question asks for, when the reply is two or more
    "label: value" pairs and exactly one label is a word of "how many <...>"; or two or more
    "value label" pairs ("9 red, 6 green", an aside in brackets after them) whose labels are all
    words of the question, exactly one of them of "how many <...>"."""
    plain = plain_text(text).strip()
    asked = _HOW_MANY.search(question)
    if asked is None:
        return None
    words = {w.casefold().rstrip("s") for w in asked.group(1).split()}
    pairs = list(_LABELLED.finditer(plain))
    rest = _LABELLED.sub("", plain).strip(" .,;\n")
    if len(pairs) >= 2 and (rest == "" or _ARITHMETIC_AFTER.fullmatch(rest)):
        hits = [m for m in pairs if {w.casefold().rstrip("s") for w in m.group(1).split()} & words]
        value = hits[0].group(2) if len(hits) == 1 else None
    else:
        # "9 (red), 6 (green)": a one-word label in brackets is the label
        labelled = re.sub(r"(\d)\s*\(([^\W\d_]+)\)", r"\1 \2", plain)
        bare = re.sub(r"\([^()]*\)", " ", labelled).strip().rstrip(".!")
        pairs = list(_VALUE_LABELLED.finditer(bare))
        said = {w.casefold().rstrip("s") for w in re.findall(r"[^\W\d_]+", question)}
        labels = [m.group("label").casefold().rstrip("s") for m in pairs]
        if len(pairs) < 2 or _VALUE_LABELLED.sub("", bare).strip(" .,;\n") != "":
            return None
        if not set(labels) <= said or len(set(labels)) != len(labels):
            return None
        hits = [m for m in pairs if m.group("label").casefold().rstrip("s") in words]
        value = hits[0].group("value") if len(hits) == 1 else None
    if value is None:
        return None
    read = extract_answer_number(value, decimal_comma=p.decimal_comma)
    return read._replace(how="labelled") if read.value is not None else None


# "0.0126 m² (126 cm²)", "1,920 seconds (32 minutes)", "2,900 cents ($29 each)": a value, then
# the same value in another unit in brackets right after it.
_IN_OTHER_UNIT = re.compile(
    r"(?P<c1>[$€£]?)(?P<n1>[-−]?\d[\d,.]*|\d*\s*π(?:\s*/\s*\d+)?)\s*"
    r"(?P<u1>[^\s\d()](?:\^\d|[^\d()\n]){0,24}?)\s*"
    r"\(\s*(?:[^\d()$€£\n]{0,24}?\s)?(?P<c2>[$€£]?)\s*(?P<n2>[-−]?\d[\d,.]*)\s*"
    r"(?P<u2>(?:\^\d|[^\d()\n]){0,30})\)"
)
_UNIT_WORD = re.compile(r"[^\W\d_]+")
# "2 hours 35 minutes": a number and its unit word just before another number
_COMPOUND_BEFORE = re.compile(r"\d\s*[^\W\d_]+\.?\s+(?:and\s+)?$")
_SUBUNITS = {"cents", "cent", "¢", "pence", "p"}
# a unit's short form and the words a question asks for it with
_ABBREVIATED = {
    "°": {"degrees", "degree"},
    "min": {"minutes", "minute"},
    "mins": {"minutes", "minute"},
    "s": {"seconds", "second"},
    "sec": {"seconds", "second"},
    "secs": {"seconds", "second"},
    "h": {"hours", "hour"},
    "hr": {"hours", "hour"},
    "hrs": {"hours", "hour"},
}
_RESTATED = re.compile(
    r"(?<![\d.,])(?P<n1>\d[\d,.]*)\s*(?P<u1>°?\s*[^\W\d_]+),?\s+(?:or|i\.e\.|that is|that's|which is)"
    r"\s+(?:(?:about|roughly|around|approximately|almost|nearly|just (?:over|under))\s+)?"
    r"(?P<n2>\d[\d,.]*)\s*(?P<u2>°?\s*[^\W\d_]+)\W*$"
)


def _asked_unit_instead(
    text: str, value: float | None, p: NumericParams
) -> tuple[float, str] | None:
    """The value in brackets when the number read is in a unit the question did not ask for and
    the bracketed one is in the asked unit: `0.0126 m² (126 cm²)` to "area in square
    centimetres" reads 126, `0 °C (32 °F)` to a °F item reads 32. A unit is asked when the item
    lists it in `units` or the question writes it (`cm`, `km/h`, `minutes`, `$`); a unit in
    `reject_units` is never asked."""
    if value is None:
        return None
    question = current_question().casefold()
    words = set(_UNIT_WORD.findall(question))

    def asked(currency: str, unit: str) -> bool | None:
        unit = unit.strip(" .,;:*_").removesuffix(" each").strip()
        if currency:
            return currency in question or "dollar" in question and currency == "$"
        if not unit:
            return None
        forms = unit_forms(unit)
        if forms & units_key(p.reject_units):
            return False
        if forms & units_key(p.units):
            return True
        if "/" in unit:  # km/h, m/s: the pair as written
            return unit.casefold() in question
        if words & _ABBREVIATED.get(unit.casefold(), set()):  # "°" for "in degrees"
            return True
        got = _UNIT_WORD.findall(re.sub(r"[²³]|\^\d", "", unit.casefold()))
        return bool(got) and all(w in words for w in got)

    plain = plain_text(text)
    for m in _RESTATED.finditer(plain):  # "155 minutes, or about 2.6 hours": the first is asked
        first, second = numbers_in(m.group("n1")), numbers_in(m.group("n2"))
        if first and second and abs(second[0] - value) < 1e-9 and m.group("u1") != m.group("u2"):
            if asked("", m.group("u2")) is False and asked("", m.group("u1")):
                return first[0], m.group("u1")
        # "0 °C, which is 32 °F" to a °F item: the value on the other scale, then the asked one
        if first and second and abs(first[0] - value) < 1e-9 and m.group("u1") != m.group("u2"):
            if asked("", m.group("u1")) is False and asked("", m.group("u2")):
                return second[0], m.group("u2")
    for m in _IN_OTHER_UNIT.finditer(plain):
        first = numbers_in(m.group("n1"))
        second = numbers_in(m.group("n2"))
        if not first or not second or abs(first[0] - value) > 1e-9:
            continue
        if asked("", m.group("u2")) and (
            # "π/2 rad (90°)": the first is no number; "2 hours 35 minutes (155 min)": the first
            # is one part of a quantity in two units
            "π" in m.group("n1")
            or (_COMPOUND_BEFORE.search(plain[: m.start()]) and m.group("u1") != m.group("u2"))
        ):
            return second[0], m.group("u2").strip()
        # "1,500 cents ($15)" to "in dollars": the bracket's bare number, its $ dropped as
        # LaTeX's, is the amount in the asked currency
        if (
            not m.group("u2").strip()
            and m.group("u1").strip().casefold() in _SUBUNITS
            and ("$" in question or "dollar" in question)
        ):
            return second[0], "$"
        if m.group("c1") == m.group("c2") and m.group("u1").strip() == m.group("u2").strip():
            continue
        if any(len(m.group(u).removesuffix(" each").split()) > 2 for u in ("u1", "u2")):
            continue  # "4 jars remain unbroken (and 5 are broken)": another count, not a unit
        if asked(m.group("c1"), m.group("u1")) is False and asked(m.group("c2"), m.group("u2")):
            sign = -1 if m.group("n2").startswith(("-", "−")) and second[0] > 0 else 1
            return sign * second[0], (m.group("c2") or m.group("u2")).strip()
    return None


class ChoiceParams(GraderParams):
    options: dict[str, str] | list[str] = Field(
        description="Options by letter ({'A': 'Paris', ...}) or a list lettered A, B, C, ..."
    )
    answer: str = Field(description="The correct letter.")
    when_several: Literal["fail", "first", "last"] = Field(
        default="fail",
        description="Several options still named after reading the answer span and dropping "
        "negated ones: fail, or take the first/last.",
    )
    letters: bool | None = Field(
        default=None,
        description="Read a letter (B, (B), Answer: B). Default: only when the options are "
        "given by letter, i.e. the prompt shows lettered options.",
    )

    def lettered(self) -> dict[str, str]:
        if isinstance(self.options, dict):
            return {k.upper(): v for k, v in self.options.items()}
        return {chr(ord("A") + i): v for i, v in enumerate(self.options)}

    def reads_letters(self) -> bool:
        return isinstance(self.options, dict) if self.letters is None else self.letters

    @field_validator("answer")
    @classmethod
    def _upper(cls, v: str) -> str:
        return v.strip().upper()


def _letter_hits(text: str, letters: str) -> list[tuple[str, int, int]]:
    """(letter, start, end) of each option letter written as a choice: B, (B), B), Answer: B."""
    cls = f"[{letters}]"
    t = text.replace("*", " ")
    if re.fullmatch(rf"\W*\(?({cls})\)?\W*", t, re.IGNORECASE):
        m = re.search(rf"({cls})", t, re.IGNORECASE)
        assert m is not None
        return [(m.group(1).upper(), m.start(1), m.end(1))]
    patterns = [
        rf"^\W*\(?({cls})\)?(?:[.:)]|\s*$|\s+[-–—]\s)",
        rf"\(({cls})\)",
        rf"(?<![\w(])({cls})\)\s",
        rf"(?:^|\s)({cls})[.!]?$",
        rf"\b(?:answer|option|choice)\s*(?:is|:|=)?\s*(?:option\s*)?\(?({cls})\b(?![a-z'])",
        rf"\b(?:answer|option|choice)\s*(?:is|:|=)?\s*\(?({cls.lower()})\)",
        rf"(?:^|\s)(?:not|or)\s+\(?({cls})\)?(?=[\s.,;:!]|$)",
        rf"^\W*\(?({cls})\)?\s+or\s",
    ]
    found: dict[int, tuple[str, int, int]] = {}
    for pat in patterns:
        for m in re.finditer(pat, t, re.MULTILINE):
            found[m.start(1)] = (m.group(1).upper(), m.start(1), m.end(1))
    return sorted(found.values(), key=lambda h: h[1])


def _name_hits(norm: str, options: dict[str, str]) -> list[tuple[str, int, int]]:
    """(letter, start, end) of each option text named; "5" inside "15" is not named. Accents
    are not compared: "Bresil" names "Brésil", "Montréal" names "Montreal"."""
    found = []
    norm = fold_accents(norm)
    for k, v in options.items():
        want = fold_accents(normalize(v))
        for m in re.finditer(re.escape(want), norm):
            # "-9" is another number than the option 9 (a range "5-9" still names it)
            glued = m.start() > 0 and norm[m.start() - 1] in "-−" and want[:1].isdigit()
            glued = glued and (m.start() == 1 or not norm[m.start() - 2].isalnum())
            if (
                (m.start() == 0 or not norm[m.start() - 1].isalnum())
                and (m.end() == len(norm) or not norm[m.end()].isalnum())
                and not glued
            ):
                found.append((k, m.start(), m.end()))
    # an option inside a longer one ("Bronte" in "Charlotte Bronte") counts once, as the longer
    found.sort(key=lambda h: (h[1], -(h[2] - h[1])))
    kept: list[tuple[str, int, int]] = []
    for h in found:
        if not kept or h[1] >= kept[-1][2]:
            kept.append(h)
    return kept


# A verdict written in another of the suite's languages ("Нет.", "Oui.", "Nein, es hat nicht
# geregnet."), for yes/no items answered in another language than the question's, and the
# casual English ones ("Yep.", "Nope — only some cats are grey.").
_VERDICT_WORDS = re.compile(
    r"(?<!\w)(?:(да|oui|ja|sí|yep|yup|yeah)|(нет|non|nein|nope|nah))(?!\w)", re.IGNORECASE
)


# Days and compass points in the suite's other languages (French, German, Spanish, Russian
# stems, Chinese): "Samedi.", "Es ist Samstag.", "В субботу.", "Nord." name the English option
_LEXICON = {
    "monday": r"lundi|montag|lunes|понедельник\w*|星期一|周一",
    "tuesday": r"mardi|dienstag|martes|вторник\w*|星期二|周二",
    "wednesday": r"mercredi|mittwoch|miércoles|miercoles|сред[аыуе]|星期三|周三",
    "thursday": r"jeudi|donnerstag|jueves|четверг\w*|星期四|周四",
    "friday": r"vendredi|freitag|viernes|пятниц\w*|星期五|周五",
    "saturday": r"samedi|samstag|sonnabend|sábado|sabado|суббот\w*|星期六|周六",
    "sunday": r"dimanche|sonntag|domingo|воскресень\w*|星期日|星期天|周日",
    "north": r"nord|norden|nördlich|norte|север\w*|北",
    "south": r"sud|süden|südlich|юг\w*|南",
    "east": r"osten|östlich|восток\w*|东",
    "west": r"ouest|westen|westlich|oeste|запад\w*|西",
}


def _in_english(span: str, options: dict[str, str]) -> str:
    """The span with the days and compass points it names in another language written in
    English, when the options are such words."""
    for word in {normalize(v) for v in options.values()} & set(_LEXICON):
        cjk = "|".join(f for f in _LEXICON[word].split("|") if not f.isascii() and len(f) <= 3)
        words = "|".join(f for f in _LEXICON[word].split("|") if f not in cjk.split("|"))
        pattern = rf"(?<!\w)(?:{words})(?!\w)" + (f"|{cjk}" if cjk else "")
        span = re.sub(pattern, word, span, flags=re.IGNORECASE)
    return span


def _choices_in(span: str, p: ChoiceParams) -> tuple[list[tuple[str, int, int]], str]:
    """The options a span chooses (negated ones dropped) and the text they were found in."""
    options = p.lettered()
    span = _in_english(span, options)
    if {normalize(v) for v in options.values()} == {"yes", "no"}:
        span = _VERDICT_WORDS.sub(lambda m: "yes" if m.group(1) else "no", span)
    if all(re.fullmatch(r"[\d.,\s]+", v) for v in options.values()):
        span = with_digits(span)  # "nineteen eighty-nine" names the option 1989
    norm = normalize(plain_text(span))
    bare = normalize(_drop_asides(plain_text(span), options))  # asides are not picks
    if bare != norm and _name_hits(bare, options):
        norm = bare
    hits = _name_hits(norm, options)
    if p.reads_letters():
        hits += [h for h in _letter_hits(norm.upper(), "".join(options)) if h[0] in options]
    return sorted(hits, key=lambda h: h[1]), norm


def _last_line_pick(text: str, p: ChoiceParams) -> str | None:
    """The one option the last line of a several-line reply names, when it names one.

    "Ottawa is in Ontario.\nThe capital of Canada is Toronto." claims Toronto: a reply's last
    line is its last claim.
    """
    lines = [
        ln
        for ln in text.strip().split("\n")
        if re.search(r"\w", ln) and not re.fullmatch(r"\s*\(.*\)\W*", ln)  # not an aside
    ]
    verdicts = {normalize(v) for v in p.lettered().values()} == {"yes", "no"}
    if len(lines) < 2 or verdicts:  # "Yes would need more information" is no verdict
        return None
    named, norm = _choices_in(lines[-1], p)
    picked = {h[0] for h in named if not is_negated(norm, h[1])}
    return picked.pop() if len(picked) == 1 else None


def _compared(norm: str, start: int) -> bool:
    """Whether the option at `start` is what another is compared with: "shorter than Leo".
    Not when the comparison goes the other way from the question's superlative: "Jupiter is
    smaller than Saturn" answers "the largest planet" with Saturn."""
    m = re.search(
        r"(?:\b(\w+)\s+)?(?:\b(\w+)\s+)?\b(?:than|als|que|чем)\s+(?:the\s+)?$", norm[:start]
    )
    if not m:
        return False
    least = _asks_least(current_question())
    way = _comparison_way(m.group(1), m.group(2))
    return least is None or way is None or way == least


def _comparison_way(before: str | None, word: str | None) -> bool | None:
    """Whether "<before> <word> than" compares downwards ("smaller than", "less dense than"),
    upwards ("larger than", "more massive than"), or None when it is no such comparison."""
    if before in ("less", "fewer", "more"):
        return before != "more"
    if word is None or word in ("rather", "other") or not re.search(r"er$|^less$", word):
        return None
    return _is_lesser(word)


# "smaller", "shortest": comparisons that go downwards, against "larger", "longest"
_LESSER = set(
    "small short low light soft weak young few slow narrow thin tiny cold close near cheap "
    "shallow".split()
)
_NOT_SUPERLATIVE = set("test rest west nest forest interest honest modest guest chest".split())


def _is_lesser(word: str) -> bool:
    w = word.casefold()
    if w in ("less", "least", "worse", "worst", "lesser"):
        return True
    stem = re.sub(r"(?:i?er|i?est)$", "", w)
    return stem in _LESSER or stem + "y" in _LESSER or stem[:-1] in _LESSER


def _asks_least(question: str) -> bool | None:
    """Whether the question's superlative goes downwards ("the shortest", "the fewest"),
    upwards ("the largest"), or None when it has none."""
    found = [
        w
        for w in re.findall(r"\b(\w+est|least|most|best|worst)\b", question.casefold())
        if w not in _NOT_SUPERLATIVE
    ]
    return _is_lesser(found[0]) if found else None


# "The Pacific is only the second-largest ocean", "Jupiter is smaller than Saturn", "Priya has
# more than Omar" to "who has the fewest?": what follows the option puts it on the other side of
# the superlative asked
_DEMOTED = re.compile(
    r"\s*(?:is|are|was|were|has|have|had|owns|holds|gets|got|earns|scored|weighs)\s+"
    r"(?:(?:only|just|merely|actually|much|far|slightly|a bit)\s+)?"
    r"(?:(?:the\s+)?(?P<rank>second|third|2nd|3rd)\b|(?:(?P<adv>less|more|fewer)\s+)?(?P<cmp>\w+)\s+than\b)",
    re.IGNORECASE,
)


# "Jane Austen's sister, Cassandra", "Einstein's student": the option names the one this
# other person is related to, not the answer
_KIN = re.compile(
    r"['’]s\s+(?:(?:own|younger|older|elder|eldest|little|big|twin|half|step|late)\s+)?(?:sister|"
    r"brother|sibling|wife|husband|spouse|son|daughter|father|mother|parent|niece|nephew|"
    r"cousin|uncle|aunt|friend|rival|teacher|tutor|student|pupil|assistant|secretary|"
    r"colleague|contemporary|editor|publisher|biographer|successor|predecessor)s?\b",
    re.IGNORECASE,
)


_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
    "last": 0,
}
_ORDINAL = "|".join(_ORDINALS)
_PLACED = re.compile(
    rf"\s*(?:came|comes|finished|finishes|placed|is|was|ranked)\s+(?:in\s+)?(?:the\s+)?"
    rf"({_ORDINAL})\b(?!\s+(?:to|after|before|behind)\b)",
    re.IGNORECASE,
)


def _demoted(norm: str, end: int) -> bool:
    """Whether the option ending at `end` is said to be second to, or less than, another in
    the sense the question's superlative asks for."""
    question = current_question()
    # "Jo came third" to "Who came second?": another place than the one asked
    placed = _PLACED.match(norm, end)
    asked = re.search(rf"\b({_ORDINAL})\b", question, re.IGNORECASE)
    if placed and asked:
        return _ORDINALS.get(placed.group(1).casefold()) != _ORDINALS.get(asked.group(1).casefold())
    m = _DEMOTED.match(norm, end)
    if not m:
        return False
    if m.group("rank"):
        return _asks_least(question) is not None and not re.search(
            r"\b(?:second|third)\b", question, re.IGNORECASE
        )
    # "has more than Omar": the bare "more", "fewer" or "less" is the comparison's way
    cmp = m.group("cmp").casefold()
    adv = m.group("adv") or (cmp if cmp in ("more", "fewer", "less") else None)
    least, way = _asks_least(question), _comparison_way(adv, m.group("cmp"))
    return least is not None and way is not None and way != least


# ", while Bohr developed ..." opens a clause of its own: the comma goes with the conjunction
_CLAUSE_SPLIT = re.compile(r"[.;!?\n。；]+\s*|,?\s+(?:but|whereas|while)\s+|,\s+", re.IGNORECASE)
_AND_SPLIT = re.compile(
    r",?\s+and\s+(?=(?:was|were|then|later|\w+ed|fell|came|went|rose)\b)|\s+(?:before|after)\s+"
)


def _focus_pick(text: str, p: ChoiceParams) -> str | None:
    """The option named by the clause that answers the question, when the reply's clauses name
    different options: "K2 is the second highest; Everest is the highest" answers "the highest
    mountain" with Everest, "Ravi came first; Jo came second" answers "who came second" with Jo.

    Each clause naming exactly one option (not negated, not compared with) is weighed by the
    question's words it repeats (span.question_focus); the heaviest clause wins, if one does.
    """
    question = current_question()
    verdicts = {normalize(v) for v in p.lettered().values()} == {"yes", "no"}
    if not question or verdicts or p.reads_letters():
        return None
    names = {w for v in p.lettered().values() for w in normalize(v).split()}
    # "The Pacific is not the largest ocean": a denied option answers no question but a
    # question asking which one is not
    asks_not = re.search(r"\bnot\b|n['’]t\b", question, re.IGNORECASE)
    weighed = []
    timed: list[str] = []
    # "North — A is north of B, and C is south of B": a bare option opening the reply, set
    # apart by a dash, a stop or a colon, is its answer; the clauses after it explain
    opening = re.match(r"\W*([^\W\d_][\w ]{0,30}?)\W*(?:\s[—–-]\s|[.:!]\s|$)", plain_text(text))
    if opening and opening.group(1).casefold() in {v.casefold() for v in p.lettered().values()}:
        return None
    clauses = _clauses_of(text, p)
    # an option set aside by the sentence around its clause ("Mars is often mistaken for the
    # Red Planet; that title belongs to Jupiter") is set aside in the clause too
    everywhere, whole = _choices_in(text, p)
    kept = {h[0] for h in everywhere if not is_believed(whole, h[1])}
    aside = _qualified_otherwise(clauses, p)
    kept -= aside
    several = bool(aside)
    for n, clause in enumerate(clauses):
        named, norm = _choices_in(clause, p)
        # "Jupiter has the Great Red Spot but isn't called the Red Planet": a clause whose
        # predicate the next one denies
        if n + 1 < len(clauses) and _DENIED_PREDICATE.match(clauses[n + 1]) and not asks_not:
            several = several or bool(named)
            continue
        several = several or len({h[0] for h in named}) > 1
        picked = {
            h[0]
            for h in named
            if h[0] in kept
            and not is_negated(norm, h[1])
            and not _compared(norm, h[1])
            and not _demoted(norm, h[2])
            and (asks_not or not is_denied(norm, h[2]))
        }
        if len(picked) == 1:
            weight = question_focus(question, norm, names)
            if _about_another(question, clause, names) or _of_another(question, clause, names):
                weight = (-1, -1.0)
            weighed.append((weight, picked.pop()))
            timed.append("now" if _NOW.search(clause) else "then" if _THEN.search(clause) else "")
    if not weighed:
        return None
    # "The capital used to be Ottawa, but today it is Toronto": to a question in the present,
    # the clause saying what is now answers, over those saying what was
    if re.match(r"\W*(?:what|which|who)\s+(?:is|are)\b", question, re.IGNORECASE):
        now = {letter for (w, letter), c in zip(weighed, timed, strict=True) if c == "now"}
        then = {letter for (w, letter), c in zip(weighed, timed, strict=True) if c == "then"}
        if len(now) == 1 and then - now:
            return now.pop()
    best = max(w for w, _ in weighed)
    if len({letter for _, letter in weighed}) < 2:
        # "1961–1989: the Wall stood 28 years and fell in 1989": the one clause naming a
        # single option answers, when the others name several at once
        return weighed[0][1] if several and best > (0, 0) else None
    winners = {letter for w, letter in weighed if w == best}
    return winners.pop() if len(winners) == 1 and best > (0, 0) else None


_NOW = re.compile(
    r"\b(?:today|now|currently|nowadays|these days|at present|since then|since \d{3,4})\b",
    re.IGNORECASE,
)
_THEN = re.compile(
    r"\b(?:used to be|was once|once was|formerly|previously|until \d{3,4}|in the past|"
    r"no longer|originally)\b",
    re.IGNORECASE,
)
_DENIED_PREDICATE = re.compile(
    r"\s*(?:isn['’]t|is not|wasn['’]t|was not|aren['’]t|are not|doesn['’]t|does not|didn['’]t|"
    r"did not|never)\b",
    re.IGNORECASE,
)


def _clauses_of(text: str, p: ChoiceParams) -> list[str]:
    """The reply's clauses, asides and checks dropped, an option alone after a comma joined to
    the clause before it."""
    clauses = _appositives_joined(
        _CLAUSE_SPLIT.split(_without_asides(plain_text(text), p.lettered())), p
    )
    # "The Wall went up in 1961 and came down in 1989": two options in one clause, each
    # with its own verb after "and", are two clauses
    return [
        part
        for clause in clauses
        for part in (_AND_SPLIT.split(clause) if len(_choices_in(clause, p)[0]) > 1 else [clause])
    ]


_DETERMINERS = set(
    "his her their its my our your this that these those some any every each no another other "
    "such own".split()
)


def _qualified_otherwise(clauses: list[str], p: ChoiceParams) -> set[str]:
    """The options named only in clauses that put another qualifier before a word of the
    question where another clause keeps the question's own: "Einstein developed special
    relativity, but general relativity is Bohr's work" to "Which scientist developed the
    general theory of relativity?" sets Einstein aside (his clause is about special
    relativity)."""
    question = current_question()
    if not question:
        return set()
    names = {w for v in p.lettered().values() for w in normalize(v).split()}
    asked = {w for w in re.findall(r"\w+", question.casefold())}
    content = {w for w in asked if w not in FUNCTION_WORDS and w not in names and w.isalpha()}

    def pairs(clause: str) -> list[tuple[str, str]]:
        words = re.findall(r"\w+", clause.casefold())
        return [(a, b) for a, b in zip(words, words[1:], strict=False) if b in content]

    # "...; he developed general relativity too", "general relativity, in 1915, was also
    # his": a sentence speaking of the option by a pronoun is about the same one
    sentences = re.split(r"[.!?;\n。；]+", plain_text(" ".join(clauses)))
    pronoun = re.compile(r"\b(?:he|she|they|him|his|her|hers|their|it|its)\b", re.IGNORECASE)
    own = [
        set()
        if any(c.strip() and c.strip() in t and pronoun.search(t) for t in sentences)
        else {b for a, b in pairs(c) if a in content and a != b}
        for c in clauses
    ]
    aside: set[str] = set()
    plain: set[str] = set()
    for n, clause in enumerate(clauses):
        named = {h[0] for h in _choices_in(clause, p)[0]}
        if not named:
            continue
        other = {
            b
            for a, b in pairs(clause)
            if a not in asked
            and a not in FUNCTION_WORDS
            and a not in _DETERMINERS
            and a not in names
            and a.isalpha()
        }
        elsewhere = set().union(*(o for m, o in enumerate(own) if m != n))
        if other - own[n] & elsewhere:
            aside |= named
        else:
            plain |= named
    return aside - plain


def _appositives_joined(clauses: list[str], p: ChoiceParams) -> list[str]:
    """The clauses with one that is only an option after a comma joined to the clause before it:
    in "the Wall itself fell the following year, 1990" the year is what the clause says."""
    names = {normalize(v) for v in p.lettered().values()}
    out: list[str] = []
    for clause in clauses:
        if out and normalize(clause.strip(" .!")) in names and out[-1].strip():
            out[-1] = f"{out[-1]} {clause}"
        else:
            out.append(clause)
    return out


# "Jo. (Ravi came first, Kim third.)", "Saturday. Check: 7 days later is Wednesday again":
# an aside in brackets, and a check after its label, support the answer; they do not give it
_CHECK = re.compile(r"(?<=\W)(?:check|checking|verification|verify|proof)\s*[:：—–]", re.IGNORECASE)


def _drop_asides(text: str, options: dict[str, str] | None = None) -> str:
    """The text without its asides in brackets; a bracket holding one option right after a word
    ("a year after the Wall fell (1989)") is the value of that word, and stays."""
    names = {normalize(v) for v in (options or {}).values()}

    def drop(m: re.Match[str]) -> str:
        inner = m.group(1)
        after_word = re.search(r"[^\W\d_]\s*$", text[: m.start()])
        return f" {inner} " if after_word and normalize(inner) in names else " "

    return re.sub(r"\(([^()]*)\)", drop, text)


def _without_asides(text: str, options: dict[str, str] | None = None) -> str:
    bare = _drop_asides(text, options)
    m = _CHECK.search(bare)
    return bare[: m.start()] if m and re.search(r"\w", bare[: m.start()]) else bare


def _lists_options(text: str, p: ChoiceParams) -> bool:
    """Whether the reply is a printed list of three or more options and nothing else
    ("Canadian cities: Ottawa, Toronto, Montreal, Vancouver", "A) 36\nB) 30\nC) 42\nD) 48"):
    the right one is read out of a list, not chosen."""
    body = re.sub(r"^[^\n:]{0,40}:\s*", "", plain_text(text).strip())
    lines = body.split("\n")
    label = re.compile(r"\s*(?:[-*•]|[A-Za-z][.)]|\([A-Za-z]\)|\d+[.)])\s")
    if re.search(r"\n\s*\n", body) or (
        len(lines) > 1 and bool(label.match(lines[0])) != bool(label.match(lines[-1]))
    ):
        return False  # a list of the working, then the answer alone: a conclusion
    parts = [
        re.sub(r"^(?:[A-Za-z][.)]|\([A-Za-z]\)|\d+[.)])\s+", "", x.strip(" \t-*•.!"))
        for x in re.split(r"[,;\n]|\s(?:and|or)\s", body)
    ]
    parts = [x for x in parts if x]
    options = {normalize(v): k for k, v in p.lettered().items()}
    named = [options.get(normalize(x)) for x in parts]
    if len(parts) >= 3 and None not in named and len(set(named)) >= 3:
        return True
    # "Planets by size: Jupiter, Saturn, Uranus, Neptune": a list of short names, two or more
    # of them options, under a heading or as bullets
    listed = body != plain_text(text).strip() or all(label.match(ln) for ln in lines)
    short = all(len(x.split()) <= 3 and not re.search(r"[=→]", x) for x in parts)
    return listed and short and len(parts) >= 3 and len({n for n in named if n}) >= 2


def _bare_last(text: str, p: ChoiceParams) -> str | None:
    """The option a reply ends on alone, after the last stop of its working ("Mia is the
    tallest and Sam the shortest. Sam"), or None. Not for yes/no items."""
    options = {normalize(v): k for k, v in p.lettered().items()}
    if set(options) == {"yes", "no"}:
        return None
    m = re.search(
        r"\w[^\n]*?(?:[.!?]\s+|\n\s*)([^\W\d_][^\n.!?]{0,30}?)[.!]?\s*$", plain_text(text)
    )
    return options.get(normalize(m.group(1))) if m else None


def _number_list(text: str) -> bool:
    """Whether the reply is a list of three or more bare numbers under a heading ("Primes: 2,
    3, 5, 7, 11"): the asked one is read out of a list, not answered."""
    plain = plain_text(text).strip()
    # the heading may hold a number of its own ("Multiples of 12: 12, 24, 36")
    body = re.sub(r"^(?:[^\n:\d]|(?<=\w )\d)[^\n:]{0,39}:\s*", "", plain)
    if body == plain:
        return False
    parts = [x.strip(" \t-*•.") for x in re.split(r"[,;\n]", body)]
    bare = [x for x in parts if re.fullmatch(r"[-−]?\d[\d.]*(?:\s*[^\W\d_°]{1,8}|\s*°\s*[CF])?", x)]
    return len(parts) >= 3 and len(bare) == len(parts)


_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([a-z]+)\s+([A-Z][a-z]{2,})\b")


def _about_another(question: str, clause: str, names: set[str]) -> bool:
    """Whether a clause speaks of another place or person where the question names one: "What
    is the main language spoken in Brazil?" is not answered by "Portuguese is spoken in
    Portugal" ("in Portugal" where the question has "in Brazil"). A date ("on 9 November") or a
    name after another word is no such clause."""
    asked = {(w.casefold(), n.casefold()) for w, n in _NAME.findall(question.strip())}
    asked = {(w, n) for w, n in asked if n not in names and w not in ("the", "a", "an")}
    if not asked:
        return False
    said = {w.casefold() for w in re.findall(r"\b[A-Z][a-z]{2,}\b", clause)}
    if said & {n for _, n in asked}:
        return False
    before = {w for w, _ in asked}
    return any(
        w.casefold() in before and n.casefold() not in names
        for w, n in re.findall(r"\b([a-z]+)\s+([A-Z][a-z]{2,})\b", clause)
    )


_PREP = re.compile(r"\b(?:of|for|in|on)\s+((?:[\w'’]+[^\S\n]+){0,2}[\w'’]+)", re.IGNORECASE)


def _of_phrases(text: str) -> list[tuple[set[str], set[str]]]:
    """(the two words before, the words of the thing named) for each "<head> of/for/in/on
    <thing>" phrase: "the chemical symbol for gold" gives ({chemical, symbol}, {gold}), "the
    longest bone in the human body" ({longest, bone}, {human, body}); "silver's symbol" gives
    ({symbol}, {silver})."""
    low = text.casefold()
    out = []
    for m in _PREP.finditer(low):
        words = {w for w in m.group(1).split() if w not in FUNCTION_WORDS and w not in _DETERMINERS}
        heads = re.findall(r"\w+", low[max(0, m.start() - 40) : m.start()])[-2:]
        if words and heads:
            out.append((set(heads), words))
    for m in re.finditer(r"\b(\w+)['’]s\s+(\w+)", low):
        out.append(({m.group(2)}, {m.group(1)}))
    return out


def _of_another(question: str, clause: str, names: set[str]) -> bool:
    """Whether a clause speaks of the asked thing's kind for another thing than the question's:
    "Au is silver's symbol" to "What is the chemical symbol for gold?", "the femur is the
    longest bone of the arm" to "... bone in the human body?", "Canberra is the capital of the
    ACT" to "What is the capital city of Australia?"."""
    asked = [
        (heads - FUNCTION_WORDS - names, thing)
        for heads, thing in _of_phrases(question)
        if not thing & names
    ]
    said = set(re.findall(r"\w+", question.casefold()))
    return any(
        heads & q_heads and not thing & (said | names)
        for q_heads, _ in asked
        for heads, thing in _of_phrases(clause)
    )


# "Probably yes.", "Yes, most likely.", "Yes, though not necessarily.": a yes/no verdict given
# as a guess, to a question whose premises settle it. ("No, not necessarily" is the answer to
# "Must Tom be grey?", not a guess.)
_GUESS = r"(?:probably|maybe|perhaps|possibly|(?:most\s|very\s)?likely|presumably|i\sguess)"
_GUESSED_VERDICT = re.compile(
    rf"\W{{0,6}}{_GUESS}\W{{1,6}}(?:yes|no)\b"
    rf"|\W{{0,6}}(?:yes|no)\W{{1,6}}(?:but\s|though\s)?{_GUESS}\b"
    r"|\W{0,6}yes\b[^.!?\n]{0,40}\bnot\s(?:necessarily|always|certainly)\b",
    re.IGNORECASE,
)


@grader("choice", ChoiceParams, reads_claim=True)
def _choice(response: Response, p: ChoiceParams) -> Grade:
    """The reply chooses the expected option, by letter or by name, and only that one."""
    if _lists_options(answer_text(response), p):
        return verdict(False, f"lists the options and chooses none; expected {p.answer}")
    yes_no = {v.casefold() for v in p.lettered().values()} == {"yes", "no"}
    if yes_no and (guess := _GUESSED_VERDICT.match(plain_text(answer_text(response)))):
        return verdict(False, f"offers {guess[0].strip()!r} as a guess; expected {p.answer}")
    last = _bare_last(answer_text(response), p)
    if last is not None:
        return verdict(last == p.answer, f"picked {last} (alone at the end); expected {p.answer}")
    # "Sydney isn't the capital; Canberra is." sets Sydney aside; when every option named is
    # denied, the denial is the claim ("9 is not prime" answers "which is not prime?")
    everywhere, whole = _choices_in(answer_text(response), p)
    deny = any(not is_negated(whole, h[1]) and not is_denied(whole, h[2]) for h in everywhere)
    # an option the reply denies ("**Diamond** is not the hardest; **quartz** is") is not the
    # pick of a bold or opening span that names it alone
    denied = {h[0] for h in everywhere if is_denied(whole, h[2])} if deny else set()
    spans = answer_spans(answer_text(response))
    # "Einstein developed special relativity; general relativity is Bohr's" to a question on
    # the general theory: an option named only about another kind of the asked thing
    aside = _qualified_otherwise(_clauses_of(answer_text(response), p), p)
    # bold on two options ("Built: **1961**, fell: **1989**") marks no one answer
    bold = {h[0] for how, span in spans if how == "bold" for h in _choices_in(span, p)[0]}
    for how, span in spans:
        if how == "bold" and len(bold) > 1:
            continue
        named, norm = _choices_in(span, p)
        for a, b in itertools.pairwise(named):
            if a[0] != b[0] and is_hedge(norm, a[2], b[1]) and not is_negated(norm, a[1]):
                return verdict(False, f"hedges between {a[0]} and {b[0]}; expected {p.answer}")
        rejected = {
            h[1]
            for h in named
            if is_negated(norm, h[1])
            or _compared(norm, h[1])
            or _demoted(norm, h[2])
            or _KIN.match(norm, h[2])
            or h[0] in aside
        }
        if deny:
            rejected |= {h[1] for h in named if is_denied(norm, h[2])}
        for a, b in itertools.pairwise(named):  # "not Go or Gd": both are rejected
            if a[1] in rejected and is_hedge(norm, a[2], b[1]):
                rejected.add(b[1])
        hits = [h for h in named if h[1] not in rejected]
        picked = sorted({h[0] for h in hits})
        focus = _focus_pick(answer_text(response), p) if how in ("first", "whole") else None
        if focus:
            return Grade(
                passed=focus == p.answer,
                detail=f"picked {focus} (the clause answering the question); expected {p.answer}",
            )
        if len(picked) > 1 and how == "whole" and p.when_several != "fail":
            picked = [hits[0][0] if p.when_several == "first" else hits[-1][0]]
        if len(picked) == 1 and how in ("first", "whole"):
            later = _last_line_pick(answer_text(response), p)
            picked = [later] if later else picked
        if len(picked) == 1 and how != "whole" and picked[0] in denied:
            continue
        if len(picked) == 1:
            got = picked[0]
            return Grade(
                passed=got == p.answer,
                detail=f"picked {got} ({how}); expected {p.answer}",
                span=span.strip() if how != "whole" else None,
            )
        if len(picked) > 1 and how == "whole":
            return verdict(False, f"picked {picked}; expected {p.answer}")
    return verdict(False, f"picked nothing; expected {p.answer}")


# ---------------------------------------------------------------- json

JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null", "any"]


class JsonParams(GraderParams):
    root: Literal["object", "array", "any"] = Field(default="object", description="Top-level type.")
    required: dict[str, JsonType] = Field(
        default_factory=dict, description="Key path (dots for nesting) -> JSON type."
    )
    values: JSONObject = Field(
        default_factory=dict,
        description="Key path -> expected value (strings compared normalized), or a rule: "
        '{"one_of": [...]}, {"min": 0, "max": 1}, {"pattern": "regex"}.',
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
        return isinstance(got, str) and fold_accents(normalize(got)) == fold_accents(
            normalize(want)
        )
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


def matches_expected(got: Any, want: Any, *, place: bool = False) -> bool:
    """Whether `got` is what an item expects: a value (compared by `same_value`), or a rule
    {"one_of": [...]}, {"min": x, "max": y} (numbers, either bound optional) or {"pattern": re}
    (searched in the string form). With `place`, "Chicago, IL, USA" matches "Chicago"."""
    if isinstance(want, dict) and want and set(want) <= {"one_of", "min", "max", "pattern"}:
        if "one_of" in want:
            return any(matches_expected(got, w, place=place) for w in want["one_of"])
        if "pattern" in want:
            return (
                got is not None and re.search(want["pattern"], str(got), re.IGNORECASE) is not None
            )
        try:
            value = float(str(got).strip().replace(",", "")) if not isinstance(got, bool) else None
        except ValueError:
            value = None
        return value is not None and want.get("min", -math.inf) <= value <= want.get(
            "max", math.inf
        )
    if same_value(got, want):
        return True
    if place and isinstance(got, str) and isinstance(want, str) and "," not in want:
        return normalize(got.split(",")[0]) == normalize(want)
    return False


def _shown(want: Any) -> Any:
    return want["one_of"][0] if isinstance(want, dict) and "one_of" in want else want


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(key path, value) of every scalar in a JSON value, paths written as in `values`. (A
    stack, not recursion: a deeply nested reply must not overflow Python's.)"""
    stack = [(path, value)]
    while stack:
        at, inner = stack.pop()
        if isinstance(inner, (dict, list)):
            pairs = inner.items() if isinstance(inner, dict) else enumerate(inner)
            stack.extend((f"{at}.{key}" if at else str(key), v) for key, v in pairs)
        else:
            yield at, inner


def _stems4(text: str) -> set[str]:
    """Content words cut to four letters ("rainy" and "rain" share "rain")."""
    words = re.findall(r"[^\W\d_]{3,}", text.casefold())
    return {w[:4] for w in words if w not in FUNCTION_WORDS}


def _invented_text(
    value: Any, values: JSONObject, question: str, required: dict[str, JsonType] | None = None
) -> tuple[str, str] | None:
    """(path, text) of a value the reply's JSON holds that the prompt's data never gives, when
    the item's JSON is built from data the prompt gives (every expected string is in the
    prompt); else None. Items answered from knowledge ("chien" for "dog" in French) are left
    alone. A string under a key the item asks for must share a word with the prompt
    ("conditions": "sunny" for a note that says "light rain" fails); a key the item does not
    ask for must hold what the prompt gives, word for word or number for number ("street":
    "12 Elm Row" for a contact at 12 Elm Row passes; "country": "Portugal" for a person in
    Porto, "humidity": 80 for a note without one, and a true/false under a key the prompt
    never names, "passed", fail)."""
    wanted = [w for w in values.values() if isinstance(w, str)]
    folded = fold_accents(normalize(question))
    if not wanted or not all(fold_accents(normalize(w)) in folded for w in wanted):
        return None
    asked = _stems4(question)
    # every expected number in the prompt too: the JSON is the prompt's data and nothing more
    # ("legs": 2 for an owl comes from knowledge, and so may a key beside it)
    extracted = all(
        _given(w, "", question)
        for w in values.values()
        if isinstance(w, (int, float)) and not isinstance(w, bool)
    )
    for path, got in _leaves(value):
        if path in values:
            continue
        unasked = extracted and not _asked_path(path, values, required or {})
        if unasked and not _given(got, path, question):
            return path, json.dumps(got, ensure_ascii=False)
        if not isinstance(got, str):
            continue
        said = _stems4(got)
        if said and not said & asked:
            return path, got
    return None


def _general(path: str) -> str:
    """A key path with its array indices as "*" ("items.1.name" -> "items.*.name")."""
    return ".".join("*" if part.isdigit() else part for part in path.split("."))


def _asked_path(path: str, values: JSONObject, required: dict[str, JsonType]) -> bool:
    """Whether the item asks for this leaf: its path (any array index) is in `required` or
    `values`, or it lies within an array or a value the item names whole ("squares.2" of
    "squares")."""
    named = {_general(p) for p in values} | {_general(p) for p in required}
    whole = {_general(p) for p in values} | {
        _general(p) for p, kind in required.items() if kind == "array"
    }
    at = _general(path)
    parts = at.split(".")
    prefixes = {".".join(parts[:n]) for n in range(1, len(parts))}
    return at in named or bool(prefixes & whole)


def _given(got: Any, path: str, question: str) -> bool:
    """Whether the prompt gives a leaf of an unasked key: every word and number of a string
    in the prompt, a number in the prompt, a true/false under a key whose words the prompt
    uses ("in_stock" for "in stock"); a null gives nothing and is let be."""
    prompt = fold_accents(question.casefold())
    words = set(re.findall(r"[^\W\d_]+", prompt))
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", prompt.replace(",", ""))]

    def said(word: str) -> bool:
        return word in words or word.removesuffix("s") in words or word + "s" in words

    if got is None:
        return True
    if isinstance(got, bool):
        key = path.split(".")[-1]
        return all(said(w) for w in re.findall(r"[^\W\d_]+", fold_accents(key.casefold())))
    if isinstance(got, (int, float)):
        return any(math.isclose(got, n, abs_tol=1e-9) for n in numbers)
    text = fold_accents(str(got).casefold())
    nums = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))]
    return all(said(w) for w in re.findall(r"[^\W\d_]+", text)) and all(
        any(math.isclose(x, n, abs_tol=1e-9) for n in numbers) for x in nums
    )


@grader("json", JsonParams)
def _json(response: Response, p: JsonParams) -> Grade:
    """The reply is JSON with the required keys, types and values."""
    try:
        value, how = extract_json(answer_text(response), allow_prose=p.allow_prose)
    except ValueError as exc:
        return verdict(False, f"not JSON: {exc}")
    if p.root != "any" and not SCHEMA_TYPES[p.root](value):
        return verdict(False, f"top level is {type(value).__name__}, expected {p.root}")
    for path, kind in p.required.items():
        present, got = _lookup(value, path)
        if not present:
            return verdict(False, f"missing key {path!r}")
        if not SCHEMA_TYPES[kind](got):
            return verdict(False, f"{path!r} is {type(got).__name__}, expected {kind}")
    for path, want in p.values.items():
        present, got = _lookup(value, path)
        if not present or not matches_expected(got, want):
            return verdict(False, f"{path!r} is {got!r}, expected {_shown(want)!r}")
    if p.no_extra_keys and isinstance(value, dict):
        extra = set(value) - {k.split(".")[0] for k in p.required}
        if extra:
            return verdict(False, f"unexpected keys {sorted(extra)}")
    invented = _invented_text(value, p.values, current_question(), p.required)
    if invented is not None:
        return verdict(False, f"{invented[0]!r} is {invented[1]!r}, which the prompt never says")
    if isinstance(value, list):
        if p.min_items is not None and len(value) < p.min_items:
            return verdict(False, f"{len(value)} items, need at least {p.min_items}")
        if p.max_items is not None and len(value) > p.max_items:
            return verdict(False, f"{len(value)} items, at most {p.max_items}")
    return verdict(True, f"valid JSON ({how})")


# ---------------------------------------------------------------- tool calls


class ToolCallParams(GraderParams):
    name: str | None = Field(default=None, description="Expected function; None = no tool call.")
    arguments: JSONObject = Field(
        default_factory=dict,
        description="Expected arguments: a value, or a rule {'one_of': [...]}, {'min': x, "
        "'max': y}, {'pattern': regex}. A place also matches with a region after a comma.",
    )
    allow_extra_args: bool = Field(default=True, description="Tolerate arguments not listed.")
    max_calls: int = Field(default=1, ge=1, description="Most calls allowed.")


# A bound written into a text argument ("under $80", "less than 80 dollars", "max 200 €"): what
# a numeric argument of the same call says on its own.
_BOUND_WORDS = (
    r"under|below|less than|lower than|cheaper than|at most|up to|no more than|not more than|"
    r"max(?:imum)?|over|above|more than|at least|min(?:imum)?|within|around|about"
)
_CURRENCY = r"\$|€|£|us\$|dollars?|usd|euros?|eur|pounds?|gbp|bucks"


def _restates_a_bound(args: dict[str, Any], key: str, want: Any) -> bool:
    """Whether a text argument is the expected one once the bounds it repeats from the call's
    own numeric arguments are taken out: search_products(query="running shoes under $80",
    max_price=80) searches for "running shoes" under 80. Only a bound (a limit word or a
    currency beside the number) is taken out, so "top 10 songs" keeps its 10."""
    got = args[key]
    if not isinstance(got, str):
        return False
    rest = got
    for other, value in args.items():
        if other == key or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        number = rf"(?<![\d.,]){re.escape(fmt_number(value))}(?:\.0+)?(?![\d.,]*\d)"
        money = rf"(?:{_CURRENCY})\s*{number}|{number}\s*(?:{_CURRENCY})(?!\w)"
        bound = rf"(?:\b(?:{_BOUND_WORDS})\s*|[<≤>≥]\s*)(?:{money}|{number})"
        rest = re.sub(rf"{bound}|{money}", " ", rest, flags=re.IGNORECASE)
    rest = " ".join(rest.split()).strip(" ,.;:-–—")
    return rest != " ".join(got.split()) and bool(rest) and matches_expected(rest, want, place=True)


# "I've emailed you a summary.", "I have booked it for you", "I ran the calculator tool": a reply
# that calls no tool says it has done what only a tool could do, a false claim whatever else it
# says
_CLAIMED_ACTION = re.compile(
    r"\bI(?:['’]ve|\s{1,3}have)?\s{1,3}(?:just\s{1,3}|now\s{1,3}|already\s{1,3}|also\s{1,3})?"
    r"(?:e-?mailed|sent|booked|scheduled|reserved|ordered|purchased|forwarded|texted|messaged|"
    r"saved|cancell?ed|set\s{1,3}(?:up\s{1,3})?(?:a|an|the|your)\s{1,3}(?:timer|alarm|reminder)|"
    # "I ran the calculator tool", "I've used the math function"
    r"(?:used|called|ran|run|queried)\s{1,3}(?:the|a|my)\s{1,3}(?:[\w-]{1,20}\s{1,3})?"
    r"(?:tool|function|api))\b",
    re.IGNORECASE,
)


@grader("tool_call", ToolCallParams)
def _tool_call(response: Response, p: ToolCallParams) -> Grade:
    """The reply calls the expected function with the expected arguments (or no tool)."""
    calls = response.tool_calls
    if p.name is None:
        if calls:
            return verdict(False, f"called {calls[0].name} when no tool was needed")
        if not (response.content or "").strip():
            return verdict(False, "no tool call and no content")
        if (done := _CLAIMED_ACTION.search(response.content or "")) is not None:
            return verdict(False, f"claims an action no tool call made: {done[0]!r}")
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
        if not matches_expected(args[key], want, place=True) and not _restates_a_bound(
            args, key, want
        ):
            return verdict(False, f"argument {key!r} is {args[key]!r}, expected {_shown(want)!r}")
    extra = set(args) - set(p.arguments)
    if extra and not p.allow_extra_args:
        return verdict(False, f"unexpected arguments {sorted(extra)}")
    return verdict(True, f"called {p.name} with the expected arguments")

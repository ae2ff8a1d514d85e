"""Text helpers the graders share: normalization, number and JSON extraction, script counting.

Kept apart from graders.py so each grader reads as a few lines of policy over these mechanics.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, NamedTuple

from evalrun.grading.span import (
    CALLED_WRONG,
    after_working_list,
    boxed,
    concluded,
    is_denied,
    is_hedge,
    is_negated,
    marked,
    plain_text,
    sentence_at,
)

# Characters that separate thousands: comma, space, no-break space, narrow no-break, thin space,
# apostrophe, straight or curly (Swiss style). Only a group of exactly three digits after one counts.
_SEP = "[,\u0020\u00a0\u202f\u2009'\u2019]"
_MINUS = "-\u2212\u2013"
# A number does not start inside a word ("x2", "H2O"); after a Chinese, Japanese or Korean
# character it does ("答案是72"), as those scripts put no space before it.
_NOT_IN_WORD = r"(?<![.^]|[^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"
NUMBER_RE = re.compile(
    rf"{_NOT_IN_WORD}(?P<sign>[{_MINUS}])?"
    rf"(?P<num>\d{{1,3}}(?:{_SEP}\d{{3}})+(?![\d])(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"|(?<![\d,])\.\d+)"
    r"(?:/(?P<den>\d+)(?![\d.]))?"
)
_DECIMAL_COMMA_RE = re.compile(
    rf"(?<![\w.,])(?P<sign>[{_MINUS}])?(?P<num>\d{{1,3}}(?:[.\u00a0\u202f\u2009 ]\d{{3}})+(?!\d)"
    r"(?:,\d+)?|\d+(?:,\d+)?)(?P<den>)"
)

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SMALL = {w: n for n, w in enumerate(_UNITS)} | {w: 10 * (n + 2) for n, w in enumerate(_TENS)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORD = "|".join(sorted([*_SMALL, *_SCALES], key=len, reverse=True))
# A run of number words: "one hundred fifty-five", "a hundred and five", "nineteen eighty-nine".
_WORD_RUN_RE = re.compile(
    rf"(?<![\w-])(?:(?:negative|minus)\s+)?(?:an?\s+(?=hundred|thousand|million))?"
    rf"(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*(?![\w-])",
    re.IGNORECASE,
)

_MARKDOWN_RE = re.compile(r"[*_`]+")
_WS_RE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n\r\"'“”‘’«»„()[]{}<>.,;:!?。，！？：；"


class _PunctToSpace(dict[int, str]):
    """A `str.translate` table: every punctuation mark or symbol (`_punct_or_symbol`) to a space,
    every other character to itself. Filled as characters are met, so a long prompt costs one C-level
    pass instead of a Python call a character."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        out = " " if _punct_or_symbol(char) else char
        self[code] = out
        return out


_PUNCT_TO_SPACE = _PunctToSpace()


def nfkc(text: str) -> str:
    """Unicode NFKC: full-width digits, ligatures and compatibility forms become plain ones."""
    return unicodedata.normalize("NFKC", text)


def fold_accents(text: str) -> str:
    """`text` with the accents taken off its Latin letters ("Genève" -> "Geneve", "Tōkyō" ->
    "Tokyo", "Brésil" -> "Bresil"), one character for one so positions stay. Other scripts keep
    their marks ("й" is not "и"), and letters without a decomposition ("ß", "ø") are kept."""
    if text.isascii():
        return text
    out = []
    for c in text:
        d = unicodedata.normalize("NFD", c)
        plain = len(d) > 1 and d[0].isascii() and all(unicodedata.combining(x) for x in d[1:])
        out.append(d[0] if plain else c)
    return "".join(out)


def normalize(text: str, *, case: bool = False, punct: bool = False) -> str:
    """Compare-friendly text: NFKC, no markdown emphasis, collapsed whitespace, trimmed edges.

    `case=True` keeps case; `punct=True` removes all punctuation (not just at the edges).
    """
    out = nfkc(text)
    out = _MARKDOWN_RE.sub("", out)
    out = out.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    if punct:  # an emoji or other symbol is punctuation here too ("Hello, world! 👋")
        out = out.translate(_PUNCT_TO_SPACE)
    out = _WS_RE.sub(" ", out).strip(_EDGE_PUNCT)
    return out if case else out.casefold()


# Emoji and pictographs (with their joiners, variation selectors and keycaps): decoration a
# chat model adds to an answer ("OK 👍", "8 🕷️", "- Italy 🇮🇹"), not words of it. "°" and other
# symbols outside these blocks are kept.
_EMOJI_RE = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\u20e3]+"
)


def without_emoji(text: str) -> str:
    """`text` with its emoji removed and the spaces they leave at line ends trimmed."""
    if not _EMOJI_RE.search(text):
        return text
    out = _EMOJI_RE.sub("", text)
    return re.sub(r"[ \t]+(?=\n|$)|(?<=^)[ \t]+|(?<=\n)[ \t]+", "", out)


def _punct_or_symbol(c: str) -> bool:
    cat = unicodedata.category(c)
    return cat[0] == "P" or cat in ("So", "Sk") or c in "\ufe0f\u200d"


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
_BELOW_ZERO_RE = re.compile(
    r"(?<![-\d.])(\d+(?:\.\d+)?)(\s*(?:°\s*[CF]?|degrees?(?:\s+(?:celsius|fahrenheit))?)?\s+below\s+zero)",
    re.IGNORECASE,
)


def _signed(text: str) -> str:
    """Signs spelled out become signs: U+2212, "negative 8", "7 degrees below zero"."""
    text = _NEG_WORD_RE.sub("-", nfkc(text).replace("\u2212", "-"))
    return _BELOW_ZERO_RE.sub(r"-\1\2", text)


# "0,4", "5,75", "15,00 $": a comma followed by one or two digits is a decimal comma (a thousands
# separator is followed by three), unless the number is one of a list written without spaces
# ("2,4,6").
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d{1,2})(?![\d,]|\.\d)")
# "5 3/4" (after "5¾"): a whole number and a proper fraction are one mixed number
_MIXED_GAP = re.compile(r"[ \u00a0]")


def number_matches(
    text: str, *, decimal_comma: bool = False, fractions: bool = True
) -> list[tuple[float, int, int]]:
    """(value, start, end) of every number in `text` (already passed through `_signed`)."""
    pattern = _DECIMAL_COMMA_RE if decimal_comma else NUMBER_RE
    if not decimal_comma:  # same length, so positions still index `text`
        text = _DECIMAL_COMMA.sub(r"\1.\2", text)
    out: list[tuple[float, int, int]] = []
    dens: list[bool] = []
    for m in pattern.finditer(text):
        den = m.group("den") if fractions else None
        value = _to_float(m.group("num"), m.group("sign"), den, decimal_comma)
        if (
            den
            and out
            and not dens[-1]
            and _MIXED_GAP.fullmatch(text[out[-1][2] : m.start()])
            and float(out[-1][0]).is_integer()
            and 0 < value < 1
            and not m.group("sign")
        ):
            whole = out.pop()
            dens.pop()
            value = whole[0] + (value if whole[0] >= 0 else -value)
            out.append((value, whole[1], m.end()))
            dens.append(True)
            continue
        out.append((value, *m.span()))
        dens.append(bool(den))
    return out


def numbers_in(text: str, *, decimal_comma: bool = False, fractions: bool = True) -> list[float]:
    """Every number in `text`, in order: separators, signs (incl. U+2212, "negative 8"), a/b."""
    kw = {"decimal_comma": decimal_comma, "fractions": fractions}
    return [v for v, _, _ in number_matches(_signed(text), **kw)]


def spelled_numbers(text: str) -> list[tuple[float, int, int]]:
    """(value, start, end) of each spelled-out number in `text`."""
    out = []
    for m in _WORD_RUN_RE.finditer(text):
        words = re.findall(r"[a-z]+", m.group(0).lower())
        sign = -1 if words[0] in ("negative", "minus") else 1
        values = _word_values([w for w in words if w not in ("negative", "minus", "and")])
        out += [(float(sign * v), m.start(), m.end()) for v in values]
    return out


def _word_values(words: list[str]) -> list[int]:
    """The numbers a run of number words spells: usually one, several when they cannot join
    ("one two three" is 1, 2, 3; "nineteen eighty" is 1980, the way years are said)."""
    out: list[int] = []
    total = current = 0
    started = False
    for w in words:
        if w in ("a", "an"):
            current, started = 1, True
        elif w in _SCALES:
            scale = _SCALES[w]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total, current = total + (current or 1) * scale, 0
            started = True
        else:
            v = _SMALL[w]
            if (
                not started
                or (current % 10 == 0 and v < 10 and current % 100 != 0)
                or (current % 100 == 0 and (current or total))
            ):
                current += v
            elif 10 <= current < 100 and v >= 10 and not total:
                current = current * 100 + v  # "nineteen eighty(-nine)"
            else:
                out.append(total + current)
                total, current = 0, v
            started = True
    if started:
        out.append(total + current)
    return out


# Small numbers spelled in the suite's other languages ("Sieben.", "Sept.", "Семь."), for answers
# written in another language than the question's. Words that are also common words of another
# sense are left out: articles (un, une, ein, uno), "once", "elf", "null".
_FOREIGN_NUMBERS = {
    w: n
    for words in (
        "- eins zwei drei vier fünf sechs sieben acht neun zehn - zwölf dreizehn vierzehn "
        "fünfzehn sechzehn siebzehn achtzehn neunzehn zwanzig",
        "zéro - deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze "
        "seize dix-sept dix-huit dix-neuf vingt",
        "cero - dos tres cuatro cinco seis siete ocho nueve diez - doce trece catorce quince "
        "dieciséis diecisiete dieciocho diecinueve veinte",
        "ноль один два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать "
        "тринадцать четырнадцать пятнадцать шестнадцать семнадцать восемнадцать девятнадцать "
        "двадцать",
    )
    for n, w in enumerate(words.split())
    if w != "-"
} | {"одна": 1, "две": 2}
_FOREIGN_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(sorted(_FOREIGN_NUMBERS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)


def with_digits(text: str) -> str:
    """`text` with its spelled-out numbers written in digits, when it has no digits of its own
    ("In nineteen eighty-nine." -> "In 1989.", "Sieben." -> "7."). With digits of its own, only
    an opening number before its explanation ("Three (7 chairs, she sits in the 4th).")."""
    if re.search(r"\d", text):
        m = _WORD_RUN_RE.match(text.lstrip(" *\"'“"))
        if not m or not re.match(r"\s*(?:[(:;—–]|\s-\s|$)", text.lstrip(" *\"'“")[m.end() :]):
            return text
        values = [v for v, _, _ in spelled_numbers(m.group(0))]
        start = len(text) - len(text.lstrip(" *\"'“"))
        if len(values) != 1:
            return text
        return text[:start] + fmt_number(values[0]) + text[start + m.end() :]
    out, last = [], 0
    for m in _WORD_RUN_RE.finditer(text):
        values = [v for v, _, _ in spelled_numbers(m.group(0))]
        out += [text[last : m.start()], ", ".join(fmt_number(v) for v in values)]
        last = m.end()
    text = "".join(out) + text[last:]
    return _FOREIGN_RE.sub(lambda m: str(_FOREIGN_NUMBERS[m.group(0).casefold()]), text)


class NumberReading(NamedTuple):
    """The number an answer gives, how it was found, and what is wrong with it if anything."""

    value: float | None
    how: str
    problem: str = ""
    unit: str = ""
    span: str = ""
    # "10.800" read the way German or French writes thousands (10800), when it may be meant so
    thousands: float | None = None


_OPERATOR_RE = re.compile(r"[=×x*+÷/^·]|(?<=\s)[-−](?=\s)")
_PAREN_RE = re.compile(r"\([^()]*\)")
_UNIT_AFTER_RE = re.compile(r"[ \t]*(°[ \t]*[CF]\b|°|%|[A-Za-z/]+(?:\^\d)?(?:[ \t]+[A-Za-z]+)?)")


_EXPRESSION_RE = re.compile(
    r"\W*[-−]?\d[\d.,]*(?:\s*[×x*+÷−-]\s*[-−]?\d[\d.,]*)+[\s.!]*", re.IGNORECASE
)


def is_bare_expression(text: str) -> bool:
    """Whether `text` is only arithmetic with no result ("144 ÷ 12", "120 − 37"): the question
    restated, not answered."""
    return bool(_EXPRESSION_RE.fullmatch(plain_text(text).strip()))


def extract_answer_number(
    text: str,
    *,
    decimal_comma: bool = False,
    fractions: bool = True,
    ignore: tuple[float, ...] = (),
    first: bool = False,
    units: tuple[str, ...] = (),
    givens: tuple[float, ...] = (),
) -> NumberReading:
    """The number a text gives as its answer, read the way a careful grader reads it.

    In order: the last `\\boxed{}` (braces balanced); the sentence after the last answer marker
    ("Answer:", "the answer is", "It prints"), where working such as `6 × $2.50 = $15.00` is read
    after its last `=`; a reply that opens with a bare number and explains after it
    (`14 (because 14² = 196)`); the clause after a closing "so"/"therefore"; else the final
    number (`first=True`: the first, for short factual answers that ramble on after it). Numbers
    named only to be rejected ("not 8") and the givens in `ignore` are never the answer. Two
    candidates offered together ("13 or 14") are reported as a hedge. Without a marker, a number
    written with one of `units` is preferred ("At 1 atm, water boils at 100 °C" reads 100).
    """
    kw = {"decimal_comma": decimal_comma, "fractions": fractions}
    text = with_digits(text)
    text = _before_check(text, kw)
    text = _before_verification(text, givens, kw)

    def given(span: str) -> list[tuple[float, int, int]]:
        return [
            n
            for n in number_matches(span, **kw)
            if not any(abs(n[0] - i) < 1e-9 for i in ignore) and not is_negated(span, n[1])
        ]

    # "1 is not prime. It's 2." sets 1 aside; when every number is denied, the denial is the
    # claim ("9 is not prime" answers "which is not prime?")
    whole = _signed(plain_text(text))
    deny = any(not is_denied(whole, n[2]) for n in given(whole))

    def usable(span: str) -> list[tuple[float, int, int]]:
        return [n for n in given(span) if not (deny and is_denied(span, n[2]))]

    def read(span: str, how: str) -> NumberReading | None:
        bare = _PAREN_RE.sub(" ", span)
        if not usable(bare):
            bare = span
        nums = usable(bare)
        if not nums:
            return None
        eq = bare.rfind("=")
        after = [n for n in nums if n[1] > eq] if eq >= 0 else nums
        if eq < 0 and how != "boxed":
            for clause in concluded(bare, which_is=True):
                got = read(clause, "concluded") if clause != bare else None
                if got:
                    return got
        pick = (after or nums)[-1 if how == "concluded" else 0]
        return _finish(bare, nums, pick, how)

    for box in reversed(boxed(text)):
        got = read(_signed(plain_text(box)), "boxed")
        if got:
            return got
    plain = _signed(plain_text(text))
    last = after_working_list(text)
    got = read(_signed(plain_text(last)), "last line") if last else None
    if got:
        return got
    for span in marked(plain):
        # "The answer is −8, since 23 − 15 = 8": the reason given after the answer is not it
        head = _BECAUSE.split(span, maxsplit=1)[0]
        got = read(head, "marked") if head != span and usable(head) else None
        got = got or read(span, "marked")
        if got:
            return got
    bold = _bold_number(text, givens, kw)
    if bold is not None:
        got = read(_signed(plain_text(bold)), "bold")
        if got:
            return got
    lead = _leading_number(plain, kw, givens)
    if lead is not None:
        got = read(*lead)
        later = _later_claim(plain, got, givens, kw) if got and lead[1] == "leading" else None
        if later is not None:
            got = _finish(later[0], number_matches(later[0], **kw), later[1], "last line")
        if got:
            return got
    if not first:
        for span in concluded(plain, which_is=True):
            got = read(span, "concluded")
            if got:
                return got
    # a closing aside ("71. (At first I wrote 81, but 7 × 13 is 91.)") is not the answer
    bare = _PAREN_RE.sub(" ", plain)
    plain = bare if usable(bare) else plain
    nums = usable(plain)
    with_unit = [
        n for n in nums if units and unit_forms(unit_after(plain, n[2])) & units_key(units)
    ]
    if nums:
        pool = with_unit or nums
        pick = pool[0] if first else pool[-1]
        return _finish(plain, nums, pick, "first" if first else "final")
    return NumberReading(None, "none")


# "x = 8. Check: 3·8 + 7 = 31 ✓": the answer, then its check, whose numbers are not the answer
_CHECK = re.compile(
    r"(?:^|(?<=\n)|(?<=[.!?)])[ \t]+)[\W_]*(?:(?:a\s+)?(?:quick|final|double|last)\s+)?"
    r"(?:check(?:ing)?|verif(?:y|ication|ying)|sanity check|"
    r"proof|kontrolle|probe|vérification|проверка)\b[\W_]*?[:：]",
    re.IGNORECASE,
)


def _before_check(text: str, kw: dict[str, bool]) -> str:
    """The text before a check of the answer it has already given ("Check:", "Verification:"),
    when the check concludes nothing of its own; else the whole text."""
    m = _CHECK.search(text)
    if m is None or not number_matches(plain_text(text[: m.start()]), **kw):
        return text
    if _CONCLUSION_LATER.search(re.sub(r"\btotal\b", " ", text[m.end() :], flags=re.I)):
        return text
    return text[: m.start()]


# A closing equation that ends on one of the question's givens ("... and 14 × 14 = 196.",
# "It's 12: 12 × 12 = 144", "x = 8. That's because 3 × 8 + 7 = 31."): a check of the answer
# stated before it, when a number on its left side was stated there
_CLOSING_EQUATION = re.compile(
    r"(?P<lead>(?:^|[.:;,\n—–]|\band\b|\bbecause\b|\bsince\b|\bas\b)\s*)"
    r"(?P<eq>(?:(?!\b(?:and|because|since|as)\b)[^=\n.;:,—–])*?=\s*"
    r"(?P<result>[-−]?\d[\d,]*(?:\.\d+)?))[\s.!✓]*$",
    re.IGNORECASE,
)


def _before_verification(text: str, givens: tuple[float, ...], kw: dict[str, bool]) -> str:
    """The text before a closing equation that checks the answer already given, or the text."""
    plain = plain_text(text)
    found = list(_CLOSING_EQUATION.finditer(plain))
    m = found[-1] if found else None
    if m is None or not givens:
        return text
    result = number_matches(m["result"], **kw)
    if not result or not any(abs(result[0][0] - g) < 1e-9 for g in givens):
        return text
    head = plain[: m.start("eq")]
    stated = {n[0] for n in number_matches(head, **kw)}
    used = {n[0] for n in number_matches(m["eq"].split("=")[0], **kw)}
    if not used & stated:
        return text
    head = re.sub(
        r"(?:\s|[.:;,—–]|\b(?:and|because|since|as|that'?s|this is)\b)*$", "", head, flags=re.I
    )
    return head if re.search(r"\d", head) else text


_EXPLAINS = re.compile(
    r",?\s+(?:since|because|as|given that|leaving|from|da|car|parce que|weil|denn)\s|\s[—–]\s|;"
    # "126 cm², the product of 14 and 9": an appositive naming where the value comes from
    r"|,\s+(?:the|a|an)\s+(?:product|sum|difference|quotient|result|total|average|mean|"
    r"square|cube|power)\s+of\b"
    # "−7 °C, 11 degrees below the dawn reading": an appositive relating it to another value
    r"|,\s+[-−]?\d[\d.,]*\s*°?\s*[^\W\d_]*\s+(?:below|above|less|more|fewer|lower|higher|"
    r"under|over|colder|warmer|after|before|short of)\b",
    re.IGNORECASE,
)
# What opens the reason for an answer already stated ("−8, since 23 − 15 = 8"); a dash between
# numbers ("120 – 37 = 83") is a minus sign, not the opening of a reason.
_BECAUSE = re.compile(
    r",?\s+(?:since|because|as|given that|da|car|parce que|weil|denn)\s|\s[—–]\s(?![-\d(])",
    re.IGNORECASE,
)
# "A common guess is 13, which is wrong": the opening names a candidate only to reject it
_CALLED_WRONG = re.compile(rf",\s*which\s+{CALLED_WRONG}", re.IGNORECASE)
# "32 °F, which is 0 °C": after a lone number, "which is" restates it in other terms
_RESTATES = re.compile(r",\s+(?:which|that)\s+(?:is|equals|makes)\s", re.IGNORECASE)
_COPULA = re.compile(
    r"(?:\b(?:is|are|was|were|equals|makes|gives|has|have|keeps|pays|gets|comes to|takes|"
    r"costs|lasts|weighs|reads|prints|returns|outputs|holds|contains|leaves|"
    r"will be|ist|sind|haben|hat|wird|est|sont|fait|dure|font|aura|sera)\b|(?<=\w)['’]s\b|=|:\s|—|–)",
    re.IGNORECASE,
)
_UNIT_POWER_RE = re.compile(r"([A-Za-z])\^\d|(?<=[A-Za-z])/(?=[A-Za-z])")  # cm^2, km/h: units
# "3 hours is 180 minutes, so 10,800 seconds": the sentence goes on to its conclusion
_CONCLUDES_IN = re.compile(r"[,;]\s*(?:so|therefore|thus|hence)\b", re.IGNORECASE)
_CONCLUSION_LATER = re.compile(
    r"\b(?:so|therefore|thus|hence|answer|total|result|in all|altogether)\b", re.IGNORECASE
)


# "**90°**, a quarter of 360°.", "Six muffins cost **$15.00** in total at $2.50 each.": the one
# number the reply sets in bold, alone in its bold span (a unit or currency aside), is the
# answer its other numbers explain
_BOLD_NUMBER = re.compile(r"\*\*([^*\n]{1,40})\*\*|__([^_\n]{1,40})__")
_NUMBER_ONLY = re.compile(
    r"[\s$€£~≈]*[-−]?\d[\d,.\u00a0\u202f]*\s?(?:[^\W\d_]{1,12}|°\s?[CF]?|%|²|[/\w²]{1,8})?"
    r"(?:\s[^\W\d_]{1,12})?\s*"
)
_LATER_CONCLUSION = re.compile(r"\b(?:so|therefore|thus|hence|answer)\b", re.IGNORECASE)


def _bold_number(text: str, givens: tuple[float, ...], kw: dict[str, bool]) -> str | None:
    """The bold span holding the reply's one bold number, when that number is no given of the
    question, is not negated, and no "so"/"answer" after it concludes anew; else None."""
    spans = [m for m in _BOLD_NUMBER.finditer(text) if _NUMBER_ONLY.fullmatch(m[1] or m[2])]
    values = {n[0] for m in spans for n in number_matches(m[1] or m[2], **kw)}
    if len(values) != 1 or any(abs(v - g) < 1e-9 for v in values for g in givens):
        return None
    m = spans[-1]
    if is_negated(text, m.start()) or _LATER_CONCLUSION.search(text, m.end()):
        return None
    return m[1] or m[2]


def _worked(left: str, right: str, givens: tuple[float, ...], kw: dict[str, bool]) -> bool:
    """Whether the side of an opening claim before its "=" is working rather than the question's
    own quantity: "√196 = 14" names the one given it is asked about, "9 × 8 = 72" works; a
    value given as "±14" is two values, left to the hedge reading."""
    nums = number_matches(left, **kw)
    if len(nums) == 1 and not _OPERATOR_RE.search(left) and "±" not in right:
        return not any(abs(nums[0][0] - g) < 1e-9 for g in givens)
    return any(ch.isdigit() for ch in left)


_CONCLUDING_VERB = re.compile(
    r"\b(?:will|would|so|therefore|thus|hence|makes|gives|comes to|in all|altogether)\b|=",
    re.IGNORECASE,
)


def _concludes_after(head: str, tail: str, givens: tuple[float, ...], kw: dict[str, bool]) -> bool:
    """Whether the clause after a semicolon concludes rather than explains: it says what will
    be or follows ("will", "so", "="), and ends on a new number, neither one of the opening nor
    a given of the question."""
    if not tail.lstrip().startswith(";") or not _CONCLUDING_VERB.search(tail):
        return False
    nums = number_matches(tail, **kw)
    # the number ends the clause, a unit word after it at most ("17 years.")
    if not nums or not re.fullmatch(r"\s*(?:[^\W\d_]+)?[\s.!]*", tail[nums[-1][2] :]):
        return False
    last = nums[-1][0]
    seen = [n[0] for n in number_matches(head, **kw)] + list(givens)
    return not any(abs(last - v) < 1e-9 for v in seen)


def _leading_number(
    plain: str, kw: dict[str, bool], givens: tuple[float, ...] = ()
) -> tuple[str, str] | None:
    """The opening claim when a reply states its number first and explains after it.

    `14 (because 14² = 196)`, `The total is 42 (6 × 7).`, `Each pays $29 (3 × 29 = 87).`,
    `The square root of 196 is 14, because ...`: the opening sentence, its asides (brackets,
    "because ...", a dash) dropped, states one number with no arithmetic in it, or one after
    "is"/"=". Only when the reply has nothing after it that concludes ("so", "the answer"), and
    the opening has an aside or is the whole reply; working that merely starts with a given
    (`5 boxes of 24, which is 120. ...`) is read later.
    """
    text = plain.strip()
    head = sentence_at(text, 0)
    rest = text[text.find(head) + len(head) :] if head else text
    bare = _bare_leading(head, kw)
    if bare is not None:
        # "13. Hmm, 13 × 13 = 169, so it's 14.": the opening was a guess the working overturns
        return None if _CONCLUSION_LATER.search(rest) else (bare, "leading")
    claim = _PAREN_RE.sub(" ", head)
    cut = _EXPLAINS.split(claim, maxsplit=1)
    tail = claim[len(cut[0]) :] if len(cut) > 1 else rest
    if _concludes_after(cut[0], tail, givens, kw):
        return None  # "Tom is 14; in three years Tom will be 17": what follows concludes
    # "It takes 32 minutes; the tank loses ...": what follows a semicolon explains
    aside = claim != head or len(cut) > 1 or rest.lstrip().startswith(";")
    claim = cut[0]
    if _CALLED_WRONG.search(claim):
        return None  # "A common guess is 13, which is wrong: it's 14": read on
    restated = _RESTATES.split(claim, maxsplit=1)
    if len(restated) > 1 and len(number_matches(restated[0], **kw)) == 1:
        claim, aside = restated[0], True
    label, colon, after = claim.partition(": ")  # "155 min: 20 min to 10:00, then ..."
    # "$34.00 → rounded: $30": the label leads on to the value after it, which is the claim
    leads_on = re.search(r"(?:→|->|≈|~|\brounded\b|\bapprox\w*|\babout)\W*$", label, re.I)
    if colon and re.match(r"[\s\"'“$€£#]*[-\d.]", label) and after.strip() and not leads_on:
        claim, aside = label, True
    concludes = _CONCLUDES_IN.search(head)
    if concludes and not _CONCLUSION_LATER.search(rest):
        return head[concludes.end() :], "concluded"  # the sentence's own conclusion
    if not (aside or not re.search(r"\w", rest)) or _CONCLUSION_LATER.search(rest):
        return None
    nums = [n for n in number_matches(claim, **kw) if not is_negated(claim, n[1])]
    if not nums:
        return None
    plain_claim = _UNIT_POWER_RE.sub(lambda m: m.group(1) or " ", claim)
    eq = plain_claim.rfind("=")
    if eq < 0 and _OPERATOR_RE.search(plain_claim):
        return None
    if eq >= 0 and (
        _worked(plain_claim[:eq], plain_claim[eq + 1 :], givens, kw)
        or _OPERATOR_RE.search(plain_claim[eq + 1 :])
    ):
        return None
    if len(nums) == 1:
        # the number opens the claim or is stated ("The total is 42"); "falling 11 degrees
        # from 4 ..." is working, not a claim
        stated = any(c.end() <= nums[0][1] for c in _COPULA.finditer(claim))
        opens = re.match(r"[\s\"'“$€£#~≈]*[-\d.]", claim)
        return (claim, "leading") if stated or opens else None
    cops = list(_COPULA.finditer(claim))
    after = [n for n in nums if cops and n[1] >= cops[-1].end()]
    return (claim[after[0][1] : after[0][2]], "leading") if after else None


def _later_claim(
    plain: str, lead: NumberReading, givens: tuple[float, ...], kw: dict[str, bool]
) -> tuple[str, tuple[float, int, int]] | None:
    """The last line of a several-line reply when it states a result of its own after the
    opening number ("21\nAverage = 84 / 4 = 22", "$29\n\nPlus tip, each pays $33."): a
    number right after "=" or a verb and last on its line, neither the opening one nor one of the
    question's givens, nor the opening restated in another unit ("-7 °C\n\nThat's 19 °F.").
    That line and its number are the claim."""
    lines = [ln for ln in plain.strip().split("\n") if re.search(r"\w", ln)]
    if len(lines) < 2:
        return None
    last = lines[-1]
    nums = number_matches(last, **kw)
    if not nums:
        return None
    value, start, end = nums[-1]
    known = [lead.value, *givens]
    if any(v is not None and abs(value - v) < 1e-9 for v in known):
        return None
    # the result is what the "=" or the verb states, right after it
    stated = [c for c in _COPULA.finditer(last) if c.end() <= start]
    if not stated or not re.fullmatch(r"[\s$€£#~≈]*", last[stated[-1].end() : start]):
        return None
    unit = unit_after(last, end)
    if unit and lead.unit and not unit_forms(unit) & unit_forms(lead.unit):
        return None
    return last, nums[-1]


def _bare_leading(head: str, kw: dict[str, bool]) -> str | None:
    """The opening sentence when it states a bare number and explains nothing in it."""
    m = re.match(r"[\s\"'“”$€£#]*(?=[-\d.])", head)
    nums = number_matches(head, **kw)
    if not m or not nums or nums[0][1] != m.end():
        return None
    rest = _UNIT_POWER_RE.sub(lambda m: m.group(1) or " ", _PAREN_RE.sub(" ", head[nums[0][2] :]))
    if _OPERATOR_RE.search(rest) or any(ch.isdigit() for ch in rest):
        return None
    return head


def _finish(
    span: str, nums: list[tuple[float, int, int]], pick: tuple[float, int, int], how: str
) -> NumberReading:
    value, start, end = pick
    for other, o_start, o_end in nums:
        if abs(other - value) < 1e-9:
            continue
        first_end, second_start = (end, o_start) if o_start > start else (o_end, start)
        if is_hedge(span, first_end, second_start):
            return NumberReading(
                value, how, f"hedges between {fmt_number(value)} and {fmt_number(other)}", "", span
            )
    raw = span[start:end]
    thousands = None
    if re.fullmatch(r"\D?\d{1,3}(?:\.\d{3})+", raw):
        thousands = float(re.sub(r"\D", "", raw)) * (-1 if value < 0 else 1)
    return NumberReading(value, how, "", unit_after(span, end), span, thousands)


def unit_after(text: str, end: int) -> str:
    """The unit written right after a number ending at `end` ('°C', 'km/h', 'degrees Celsius')."""
    m = _UNIT_AFTER_RE.match(text, end)
    return m.group(1).strip() if m else ""


def unit_forms(unit: str) -> set[str]:
    """A written unit as compared: the whole and each word, case-blind, spaces dropped
    ('degrees Celsius' -> {'degreescelsius', 'degrees', 'celsius'})."""
    if not unit:
        return set()
    return {nfkc(w).casefold() for w in unit.split()} | {nfkc(unit).casefold().replace(" ", "")}


def units_key(units: tuple[str, ...] | list[str]) -> set[str]:
    """Units listed in an item, in the form `unit_forms` compares."""
    return {nfkc(u).casefold().replace(" ", "") for u in units}


def fmt_number(x: float) -> str:
    """A number as a person writes it: 8, not 8.0; 0.75; 1.5e+20."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.6g}"


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
    """Words as a person counts them: runs of letters/digits, with inner ' and - kept. A chain
    of five or more words joined by hyphens ("vast-salty-restless-blue-wave-tossed") is its
    words, not one: it is written to slip under a word limit ("state-of-the-art" is one)."""
    out: list[str] = []
    for w in re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", nfkc(text)):
        out.extend(w.split("-") if w.count("-") >= 4 else [w])
    return out


def contains_words(haystack: str, needle: str, *, skip_negated: bool = False) -> bool:
    """`needle` occurs in `haystack` as whole words (no letter or digit glued on either side);
    with `skip_negated`, an occurrence right after a negation ("not X") does not count."""
    if not needle:
        return False
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    hits = re.finditer(left + re.escape(needle) + right, haystack)
    return any(not (skip_negated and is_negated(haystack, m.start())) for m in hits)

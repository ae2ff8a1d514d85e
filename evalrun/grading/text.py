"""Built-in graders over free text: exact, normalized, fuzzy, regex, contains_all, contains_none,
language, format, sequence."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from typing import Literal

from pydantic import Field, field_validator, model_validator
from rapidfuzz import fuzz

from evalrun.endpoint.response import Response
from evalrun.grading.extract import (
    contains_words,
    fold_accents,
    mixed_script_words,
    nfkc,
    normalize,
    script_counts,
    with_digits,
    without_emoji,
    words_of,
)
from evalrun.grading.pattern import IGNORECASE, compile_pattern, find, match_spans
from evalrun.grading.registry import (
    Answers,
    Grade,
    GraderParams,
    answer_text,
    as_list,
    current_question,
    grader,
    verdict,
)
from evalrun.grading.span import (
    FUNCTION_WORDS,
    concluded,
    is_negated,
    plain_text,
    without_closing_offer,
    without_lead_in,
)

# ---------------------------------------------------------------- exact / normalized / fuzzy


class ExactParams(GraderParams):
    answer: Answers = Field(description="The expected text, or a list of acceptable texts.")
    strip: bool = Field(default=True, description="Ignore leading/trailing whitespace.")


@grader("exact", ExactParams)
def _exact(response: Response, p: ExactParams) -> Grade:
    """The reply equals the answer exactly (whitespace at the edges ignored)."""
    got = answer_text(response).strip() if p.strip else answer_text(response)
    wanted = [a.strip() if p.strip else a for a in as_list(p.answer)]
    return verdict(got in wanted, f"expected exactly {wanted[0]!r}, got {got[:60]!r}")


class NormalizedParams(GraderParams):
    answer: Answers = Field(description="Expected text(s), compared after normalization.")
    match: Literal["full", "reply", "contains", "starts"] = Field(
        default="full",
        description="full: the whole answer; reply: the whole answer after a short lead-in "
        "('Sure! Here it is:'), quotes and markdown (for 'repeat exactly' items: a loop, a flood "
        "or appended words fail); contains: anywhere as whole words, not after a negation; "
        "starts: at the start.",
    )
    case_sensitive: bool = Field(default=False, description="Keep case when comparing.")
    ignore_punct: bool = Field(default=False, description="Drop all punctuation before comparing.")
    inner_punct: bool = Field(
        default=False,
        description="With ignore_punct and match reply: the answer's own punctuation marks must "
        "still be there, in order ('Hello world!' and 'Hello, world.' are not 'Hello, world!'); "
        "only its final mark may be left off. Quotes, markup and emoji around it are aside.",
    )


_QUOTES = '"“”«»„'  # around a copy, or inside it: not its punctuation ("'" is, as in o'clock)


def _marks(text: str) -> list[str]:
    """The punctuation marks of a text in order, quotes aside (curly or straight alike)."""
    flat = nfkc(text).replace("’", "'").replace("‘", "'")
    return [
        c
        for c in flat.strip().strip(_QUOTES + "'")
        if unicodedata.category(c).startswith("P") and c not in _QUOTES
    ]


def _same_marks(body: str, answer: str) -> bool:
    """Whether `body` keeps `answer`'s punctuation, its final mark possibly left off."""
    got, want = _marks(body), _marks(answer)
    final = answer.rstrip().strip(_QUOTES + "'")[-1:]
    return got == want or (bool(want) and final == want[-1] and got == want[:-1])


@grader("normalized", NormalizedParams, reads_claim=True)
def _normalized(response: Response, p: NormalizedParams) -> Grade:
    """The reply matches the answer after Unicode, case, markdown (and optionally punctuation) normalization."""
    kw = {"case": p.case_sensitive, "punct": p.ignore_punct}
    plain = plain_text(answer_text(response))
    got = normalize(plain, **kw)
    # a closing offer after the copy ("Let me know if you'd like anything else!") is set
    # aside like a lead-in before it
    closed = without_closing_offer(plain) if p.match == "reply" else None
    raw = without_lead_in(plain) + (without_lead_in(closed) if closed else [])
    bodies = [normalize(b, **kw) for b in raw]
    other_marks = ""
    for answer in as_list(p.answer):
        want = normalize(answer, **kw)
        if p.match == "full" and got == want:
            return verdict(True, f"matches {want!r}")
        if p.match == "reply" and want in bodies:
            kept = [b for b, n in zip(raw, bodies, strict=True) if n == want]
            if not p.inner_punct or any(_same_marks(b, answer) for b in kept):
                return verdict(True, f"the reply is {want!r}")
            other_marks = f"the words of {answer!r} with other punctuation"
            continue
        if p.match == "starts" and (
            got == want
            or got.startswith(want + " ")
            or (got.startswith(want) and not got[len(want)].isalnum())
        ):
            return verdict(True, f"starts with {want!r}")
        if p.match == "contains" and contains_words(got, want, skip_negated=True):
            return verdict(True, f"contains {want!r}")
    if other_marks:
        return verdict(False, other_marks)
    return verdict(False, f"expected {p.match} {as_list(p.answer)[0]!r}, got {got[:60]!r}")


class FuzzyParams(GraderParams):
    answer: Answers = Field(description="Expected text(s).")
    threshold: float = Field(default=85, ge=0, le=100, description="Minimum rapidfuzz score.")
    scorer: Literal["ratio", "partial_ratio", "token_set_ratio", "token_sort_ratio"] = Field(
        default="ratio", description="rapidfuzz.fuzz scorer."
    )


@grader("fuzzy", FuzzyParams)
def _fuzzy(response: Response, p: FuzzyParams) -> Grade:
    """The reply is close to the answer by a rapidfuzz score."""
    score_fn = getattr(fuzz, p.scorer)
    got = normalize(answer_text(response))
    best = max(score_fn(got, normalize(a)) for a in as_list(p.answer))
    return verdict(best >= p.threshold, f"{p.scorer} {best:.0f} (need {p.threshold:.0f})")


# ---------------------------------------------------------------- regex / contains


class RegexParams(GraderParams):
    pattern: str = Field(
        description="Python regular expression searched in the content, with LaTeX and markdown "
        "markup removed. ^ and $ anchor the whole reply (add (?m) for line anchors); a match "
        "right after a negation ('not 0', 'не спит', 'nicht verspätet') does not count."
    )
    ignore_case: bool = Field(default=True, description="re.IGNORECASE.")
    full: bool = Field(default=False, description="The whole stripped content must match.")
    negate: bool = Field(
        default=False, description="Pass when the pattern does NOT match (negated or not)."
    )
    whole_reply: bool = Field(
        default=False,
        description="Search the whole reply, including what a later retraction takes back "
        "(for text the prompt says not to write at all, such as another record's value).",
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        compile_pattern(v)  # ValueError when it is not one
        return v


_END_ANCHOR = re.compile(r"(?<!\\)\$")
# Past this, the reply's end is out of reach of any pattern's `$`.
_NO_END = "\n_"  # a word character: `\W*$` cannot reach past it


def _answer_line(text: str) -> str | None:
    """The first line of a several-line reply when it is a bare answer (a few words, no lead-in
    such as "Sure!" or "Let me trace it:"): what the lines after it explain, not replace."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2 or len(lines[0].split()) > 4 or lines[0][-1] in ":!?":
        return None
    return lines[0] if len(without_lead_in(lines[0])) == 1 else None


def _regex_hit(pattern: str, text: str, flags: int) -> bool:
    spans = match_spans(pattern, text, flags)
    # a match across a blank line joins two paragraphs' words ("... is `False`:\n\nTrue"),
    # unless the pattern asks for line breaks itself
    joins = "\\n" not in pattern and "(?s" not in pattern
    other = _other_scale(current_question())
    return any(
        not is_negated(text, a)
        and not _denied_for_another(text, b)
        and not (joins and _joins_paragraphs(text, a, b))
        and not (other and other.match(text, b))
        and not _inside_longer(text, a, b)
        and not _said_of_another(text, a, b)
        for a, b in spans
    )


def _inside_longer(text: str, a: int, b: int) -> bool:
    """Whether the match text[a:b] is part of a longer number, code or word than it names:
    "AMBER-HERON-420" for AMBER-HERON-42, "5-8-1-9-3-7" for 5-8-1-9-3, "-4471" (a negative
    number) for 4471, "ultraviolet" for violet. A match that ends in a digit goes on in a
    digit, or in its own separator and a digit; one that starts with a digit has a digit or a
    minus sign glued before it; one that starts with a letter (Latin or Cyrillic) has a letter
    before it."""
    got = text[a:b]
    if not got:
        return False
    if got[-1].isdigit():
        seps = set(re.findall(r"(?<=\d)([-./:])(?=\d)", got))
        after = text[b : b + 2]
        if after[:1].isdigit() or (after[:1] in seps and after[1:2].isdigit()):
            return True
    if got[0].isdigit():
        before = text[max(0, a - 2) : a]
        if before[-1:].isdigit() or re.fullmatch(r"(?:^|[^\w.,])?[-−]", before or "x"):
            return True
    if _WORD_LETTER.match(got[0]) and a > 0 and _WORD_LETTER.match(text[a - 1]):
        return True
    return False


_WORD_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f\u0400-\u04ff]")


# "The fuel tap is not violet; violet is the compressor drain valve.", "H2O2; H2O is hydrogen
# peroxide.": the match opens a later clause as the subject of "is", and what it is said to be
# shares no word with the question, or belongs to a thing with a word the question lacks ("the
# colour of the compressor drain valve", "the drain valve's colour"); the reply defines it as
# another thing, it does not answer with it. (Said of the question's own words, "violet is the
# colour of the tap", it answers; so does a bare verdict, "Violet is correct.")
_CLAUSE_BEFORE = re.compile(r"\w[^\w\n]{0,6}[;.!?—–][\s\"'“”«»*_`]{0,6}$")
_SUBJECT_OF = re.compile(
    r"[\"'”»*_`]{0,3}[^\S\n]{1,3}(?:is|was)[^\S\n]{1,3}(?!not\b|never\b)(?P<what>[^.;!?\n—–]{1,80})",
    re.IGNORECASE,
)
_VERDICT_PREDICATE = re.compile(
    r"\W*(?:it|its|this|that|the\s+(?:correct\s+|right\s+)?(?:answer|one)|correct|right|true)\b",
    re.IGNORECASE,
)


def _stems(text: str) -> set[str]:
    """The content words of `text`, cut to five letters ("painted" and "paint" share "paint")."""
    words = re.findall(r"[^\W\d_]{3,}", text.casefold())
    return {w[:5] for w in words if w not in FUNCTION_WORDS}


def _said_of_another(text: str, a: int, b: int) -> bool:
    """Whether the match text[a:b] opens a later clause that says it is something the question
    (its last paragraph: a long document is not what it asks) does not name."""
    if not _CLAUSE_BEFORE.search(text, max(0, a - 14), a):
        return False
    m = _SUBJECT_OF.match(text, b)
    if m is None or _VERDICT_PREDICATE.match(m["what"]):
        return False
    asked = _stems(current_question().strip().rsplit("\n\n", 1)[-1])
    # "violet is the colour of the compressor drain valve", "the formula for heavy water": the
    # question's kind of thing, of a thing it does not name
    owner = re.search(
        r"\b(?:of|for)\s(?P<thing>.+)|^(?P<whose>.+?)['’]s?\s", m["what"], re.IGNORECASE
    )
    if owner and _stems(owner["thing"] or owner["whose"]) - asked:
        return True
    return not _stems(m["what"]) & asked


# A temperature asked on one scale ("in degrees Celsius") and given on another ("0 °F"): the
# number is not the asked value
_SCALES = {
    "celsius": r"\s*(?:°\s*|degrees?\s+)?(?:F\b|fahrenheit|K\b|kelvin)",
    "fahrenheit": r"\s*(?:°\s*|degrees?\s+)?(?:C\b|celsius|centigrade|K\b|kelvin)",
}


def _other_scale(question: str) -> re.Pattern[str] | None:
    m = re.search(r"\b(?:in\s+)?(?:degrees\s+)?(celsius|fahrenheit)\b", question, re.IGNORECASE)
    return re.compile(_SCALES[m.group(1).lower()], re.IGNORECASE) if m else None


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
# "The output is:\n\n0": a label ending in a colon, then the block it introduces
_LABEL_BEFORE = re.compile(
    r"\b(?:output|result|answer|prints?|returns?|outputs|is|are|shows?)\s*:\s*$", re.IGNORECASE
)


def _joins_paragraphs(text: str, a: int, b: int) -> bool:
    """Whether the match text[a:b] runs across a blank line from one paragraph's words into
    the next's; not when the line before the blank is a label introducing what follows."""
    blank = _BLANK_LINE.search(text, a, b)
    return blank is not None and not _LABEL_BEFORE.search(text, a, blank.start())


# "« Pomme » ne veut pas dire apple ; c'est « poire »", "Diamond is not the hardest — quartz
# is": the match is the subject of a denial that goes on to name something else
_DENIED_AFTER = re.compile(
    r"[\s»\"”’'*_`]*(?:(?:is|was)\s+not\b|(?:isn|wasn)['’]t\b|(?:ne|n['’])\s*\w+(?:\s+\w+)?\s+pas\b|"
    r"(?:ist|war)\s+nicht\b)",
    re.IGNORECASE,
)
_SOMETHING_ELSE = re.compile(r"[;—–]|\b(?:but|mais|sondern|it['’]s|c['’]est|es ist)\b", re.I)


def _denied_for_another(text: str, end: int) -> bool:
    """Whether what ends at `end` is denied in favour of something the sentence names after."""
    m = _DENIED_AFTER.match(text, end)
    if m is None:
        return False
    rest = re.split(r"(?<=[.!?])\s|\n", text[m.end() :], maxsplit=1)[0]
    return bool(_SOMETHING_ELSE.search(rest))


@grader("regex", RegexParams, reads_claim=True)
def _regex(response: Response, p: RegexParams) -> Grade:
    """A regular expression is found (or, with negate, not found) in the reply.

    `$` is the end of the answer: after a bare first line ("1\n\nThe loop never changes count,
    so it stays 0"), a match that needs the reply's end counts only within that line.
    """
    flags = IGNORECASE if p.ignore_case else 0
    text = without_emoji(plain_text(answer_text(response))).strip()
    readings = _readings(text, fold=not p.negate)
    # accents are not compared either way: "Bresil" matches a pattern written "Brésil"
    folded = fold_accents(p.pattern) if not p.negate else p.pattern
    patterns = [p.pattern] + ([folded] if folded != p.pattern else [])
    if p.full or p.negate:
        hit = any(find(pat, t, flags, full=p.full) for pat in patterns for t in readings)
    else:
        hit = any(_regex_hit_in(pat, t, flags) for pat in patterns for t in readings)
    return verdict(hit != p.negate, f"pattern {'' if hit else 'not '}found")


# "9h00", "14h30": the French way of writing a time, read also as "9 h 00"
_FRENCH_TIME = re.compile(r"(?<![\w:])(\d{1,2})\s?[hH](\d{2})(?!\w)")


def _readings(text: str, *, fold: bool = False) -> list[str]:
    """The reply as written and, when it writes times the French way, with "h" set apart; with
    `fold`, also with its accents taken off ("Tōkyō" matches Tokyo). A pattern that must not
    match is searched in the reply as written only."""
    out = [text]
    spaced = _FRENCH_TIME.sub(r"\1 h \2", text)
    out += [spaced] if spaced != text else []
    folded = fold_accents(text) if fold else text
    return out + ([folded] if folded != text else [])


def _regex_hit_in(pattern: str, text: str, flags: int) -> bool:
    hit = _regex_hit(pattern, text, flags)
    line = _answer_line(text) if hit and _END_ANCHOR.search(pattern) else None
    if line is not None and "(?m)" not in pattern:
        hit = _regex_hit(pattern, text + _NO_END, flags) or _regex_hit(pattern, line, flags)
    return hit


class ContainsParams(GraderParams):
    items: list[Answers] = Field(
        description="Texts to look for; an entry that is a list means any one of its synonyms."
    )
    case_sensitive: bool = Field(default=False, description="Keep case.")
    whole_word: bool = Field(default=True, description="Match whole words (off for CJK).")


def _contains_text(response: Response, p: ContainsParams) -> str:
    """The reply as the contains graders search it: plain, normalized, accents folded ("Tokyo"
    is present in "Tōkyō")."""
    return fold_accents(normalize(plain_text(answer_text(response)), case=p.case_sensitive))


def _present(text: str, entry: Answers, p: ContainsParams) -> bool:
    """Whether one of the entry's texts occurs in `text` (accents folded: `_contains_text`)
    other than right after a negation."""
    for alt in as_list(entry):
        needle = fold_accents(normalize(alt, case=p.case_sensitive))
        if p.whole_word and contains_words(text, needle, skip_negated=True):
            return True
        if not p.whole_word and any(
            not is_negated(text, m.start()) for m in re.finditer(re.escape(needle), text)
        ):
            return True
    return False


@grader("contains_all", ContainsParams, reads_claim=True)
def _contains_all(response: Response, p: ContainsParams) -> Grade:
    """Every listed text occurs in the reply, other than right after a negation."""
    text = _contains_text(response, p)
    missing = [as_list(e)[0] for e in p.items if not _present(text, e, p)]
    return verdict(not missing, f"missing {missing}" if missing else "all present")


@grader("contains_none", ContainsParams, reads_claim=True)
def _contains_none(response: Response, p: ContainsParams) -> Grade:
    """None of the listed texts occurs in the reply."""
    text = _contains_text(response, p)
    found = [as_list(e)[0] for e in p.items if _present(text, e, p)]
    return verdict(not found, f"contains {found}" if found else "none present")


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
    """The reply is written in the expected language and script."""
    text = without_lead_in(answer_text(response))[-1]  # "Sure! зима, снег, холод"
    counts = script_counts(text)
    letters = sum(counts.values())
    if not letters:
        return verdict(False, "no letters in the answer")
    mixed = mixed_script_words(text)
    if mixed:
        return verdict(False, f"words mixing Latin and Cyrillic look-alikes: {mixed[:3]}")
    scripts = _SCRIPT_OF_LANG.get(p.language, {"latin"})
    share = sum(counts.get(s, 0) for s in scripts) / letters
    if share < p.min_ratio and "latin" not in scripts:
        share = max(share, _share_without_gloss(text, scripts))
    if share < p.min_ratio:
        return verdict(False, f"{share:.0%} of letters in {'/'.join(sorted(scripts))} script")
    if p.language == "ja" and not counts.get("kana"):
        return verdict(False, "no kana: reads as Chinese, not Japanese")
    if p.language in _STOPWORDS:
        words = [w.casefold() for w in words_of(text)]
        if len(words) >= 4:
            hits = {lang: sum(w in sw for w in words) for lang, sw in _STOPWORDS.items()}
            best = max(hits.values())
            if hits[p.language] < best or best == 0:
                top = max(hits, key=lambda k: hits[k])
                return verdict(False, f"reads as {top}, not {p.language} (function words {hits})")
    return verdict(True, f"{share:.0%} {'/'.join(sorted(scripts))} letters")


# Words quoted from another language beside an answer in its own script: "Париж (Paris)",
# "**Понедельник** (англ. *Monday*)". At most this many, and never more than the answer's own.
GLOSS_WORDS = 2


def _share_without_gloss(text: str, scripts: set[str]) -> float:
    """The share of letters in `scripts` once a gloss is set aside: the few words of other
    scripts (GLOSS_WORDS at most) that an answer with at least as many words of its own
    quotes."""
    words = [w for w in words_of(text) if script_counts(w)]  # "12" is no language's
    own = [w for w in words if set(script_counts(w)) <= scripts]
    other = [w for w in words if not set(script_counts(w)) & scripts]
    # the prompt's own words beside their translation ("winter — зима, snow — снег") are the
    # words asked about, not an answer in their language
    asked = {w.casefold() for w in words_of(current_question())}
    glossed = [w for w in other if w.casefold() not in asked]
    if not own or not other or len(glossed) > GLOSS_WORDS or len(glossed) > len(own):
        return 0.0
    kept = sum(script_counts(w).get(s, 0) for w in own for s in scripts)
    letters = sum(sum(script_counts(w).values()) for w in words if w not in other)
    return kept / letters if letters else 0.0


# ---------------------------------------------------------------- format checks

# A list line: "-", "*", "+", "1." / "1)", and the bullets typed as characters ("•", "–", "·",
# "◦", "▪", "‣")
_LIST_MARKER = r"^\s*(?:[-*+•–·◦▪‣]|\d+[.)])\s+"  # "- ", "• ", "1. ", "2) "
_LIST_LINE = re.compile(_LIST_MARKER + r"\S")


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
    min_sentences: int | None = Field(default=None, description="At least this many sentences.")
    max_sentences: int | None = Field(default=None, description="At most this many sentences.")
    starts_with: str | None = Field(default=None, description="Required opening (normalized).")
    ends_with: str | None = Field(
        default=None,
        description="Required closing phrase, compared as words (case, quotes and markup "
        "aside) and with its own closing punctuation when the reply writes one; word and "
        "sentence counts leave it out.",
    )
    ends_with_exact: bool = Field(
        default=False,
        description="The closing phrase as written, for a prompt that asks for the exact "
        "phrase: its case and its closing mark too ('Over and Out.' and 'Over and out' are "
        "not 'Over and out.').",
    )
    forbid: list[str] = Field(default_factory=list, description="Characters/strings not allowed.")
    only_list: bool = Field(
        default=False, description="Every non-empty line is a list line ('no other text')."
    )
    distinct: bool = Field(default=False, description="No list line repeats another.")
    list_items_match: str | None = Field(
        default=None, description="A regex every list line must contain (each bullet a fruit)."
    )
    list_items_whole: bool = Field(
        default=False,
        description="Each list line is one item and nothing else: list_items_match must match "
        "the whole line after its marker (markup, emoji and a final mark aside), so "
        "'- Apple – crisp and sweet' or '- Green (or yellow)' fail.",
    )
    table_rows: int | None = Field(
        default=None, description="Exact number of markdown table body rows (header excluded)."
    )

    @model_validator(mode="after")
    def _some_check(self) -> FormatParams:
        if not any(v not in (None, False, []) for v in self.model_dump().values()):
            raise ValueError("format grader needs at least one check")
        return self


def _sentence_count(text: str) -> int:
    parts = re.split(r"(?<=[.!?。！？])\s+", text.strip())
    return len([s for s in parts if re.search(r"\w", s)])


# The rule under a table's header: "|---|---|", "| :-- | --: |", "|-|-|" (one dash a column
# is enough where the pipes show the columns)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


def _table_rows(lines: list[str]) -> int:
    """Body rows of the first markdown table: lines with a | after the header's rule line."""
    for n, ln in enumerate(lines):
        if _TABLE_RULE.match(ln) and ("|" in ln or "--" in ln) and n > 0:
            body = 0
            for row in lines[n + 1 :]:
                if "|" not in row:
                    break
                body += 1
            return body
    return 0


def _closing_phrase(text: str, phrase: str, case: bool = False) -> re.Match[str] | None:
    """Where `text` closes with `phrase`, read as words: case (unless `case`), and the quotes
    and markup the phrase is shown in, aside ('... "Over and out."', "**Have a nice day!**"). Group `close`
    holds what follows its last word, so the phrase's own punctuation can be checked: "Over and
    out!" is another phrase than "Over and out.", though a closing mark left off is a slip. (An
    emoji after the phrase is more text after it: the reply no longer ends with the phrase.)"""
    words = [re.escape(w) for w in words_of(phrase)]
    if not words:
        return None
    pattern = r"(?<!\w)" + r"[\W_]+".join(words) + r"(?P<close>[.!?…,;:]*)[\s\"'“”«»*_`]*$"
    return re.search(pattern, text.rstrip(), 0 if case else re.IGNORECASE)


# What may sit around a list line's one item: markup, emoji, a closing mark
_ITEM_EDGES = " \t*_`.!;,"


def _list_item(line: str) -> str:
    """A list line's item: the line after its marker, without markup, emoji or a final mark."""
    return without_emoji(re.sub(_LIST_MARKER, "", line)).strip(_ITEM_EDGES)


@grader("format", FormatParams)
def _format(response: Response, p: FormatParams) -> Grade:
    """The reply meets countable constraints: list lines, words, sentences, case, table rows."""
    text = nfkc(answer_text(response)).strip()
    lines = [ln for ln in text.split("\n") if ln.strip()]
    list_lines = [ln for ln in lines if _LIST_LINE.match(ln)]
    n_list = len(list_lines)
    body = plain_text(text)
    closing = (
        _closing_phrase(body, p.ends_with, p.ends_with_exact) if p.ends_with is not None else None
    )
    if closing is not None:
        body = body[: closing.start()]
    n_words = len(words_of(body))
    n_sentences = _sentence_count(body)
    fails = []
    if p.only_list and n_list != len(lines):
        fails.append(f"{len(lines) - n_list} lines besides the list")
    if p.distinct and len({normalize(ln) for ln in list_lines}) < n_list:
        fails.append("a list line repeats")
    if p.list_items_match is not None:
        whole = p.list_items_whole
        off = [
            ln.strip()
            for ln in list_lines
            if not find(p.list_items_match, _list_item(ln) if whole else ln, full=whole)
        ]
        fails += [f"list line {off[0][:40]!r} does not match"] if off else []
    if p.table_rows is not None and _table_rows(lines) != p.table_rows:
        fails.append(f"{_table_rows(lines)} table rows, need {p.table_rows}")
    if p.min_sentences is not None and n_sentences < p.min_sentences:
        fails.append(f"{n_sentences} sentences, need >= {p.min_sentences}")
    if p.max_sentences is not None and n_sentences > p.max_sentences:
        fails.append(f"{n_sentences} sentences, need <= {p.max_sentences}")
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
    if p.sentences is not None and n_sentences != p.sentences:
        fails.append(f"{n_sentences} sentences, need {p.sentences}")
    if p.all_caps and (any(c.islower() for c in text) or not any(c.isupper() for c in text)):
        fails.append("not all caps")
    if p.all_lower and any(c.isupper() for c in text):
        fails.append("not all lowercase")
    if p.starts_with is not None and not normalize(text).startswith(normalize(p.starts_with)):
        fails.append(f"does not start with {p.starts_with!r}")
    if p.ends_with is not None:
        own = re.sub(r"^.*?(?=[.!?…]*$)", "", p.ends_with.strip())  # the phrase's "." or "!"
        close = re.sub(r"[^.!?…]", "", closing.group("close")) if closing else ""
        if closing is None:
            fails.append(f"does not end with {p.ends_with!r}")
        elif own and (close or p.ends_with_exact) and close != own:
            fails.append(f"ends with {close!r}, not the phrase's {own!r}")
    fails += [f"contains {s!r}" for s in p.forbid if s in text]
    counted = (p.bullets, p.min_bullets, p.max_bullets) != (None, None, None)
    question = current_question()
    if counted and _BULLETS_ASKED.search(question) and not _NUMBERS_ASKED.search(question):
        numbered = [ln for ln in list_lines if _NUMBERED.match(ln)]
        if numbered:
            fails.append(f"numbered line {numbered[0].strip()[:30]!r} where bullets are asked")
    if p.bullets is not None and _steps_out_of_order(list_lines):
        fails.append("a step that finishes comes before one that starts")
    if p.max_words is not None and _says_only_the_subject(body):
        fails.append("says only the prompt's subject back")
    return verdict(not fails, "; ".join(fails) or "format ok")


# "as a bulleted list", "8 bullet points" (and no numbers asked): a numbered list ("1. Apple") is
# another kind of list than the one asked
_BULLETS_ASKED = re.compile(r"\bbullet", re.IGNORECASE)
_NUMBERS_ASKED = re.compile(r"\bnumbered\b", re.IGNORECASE)
_NUMBERED = re.compile(r"\s{0,8}\d{1,3}[.)]\s")


# Steps of a procedure: one that finishes it ("drink", "remove the bag", "serve") before one
# that starts it ("boil the water", "put the bag in the cup") is out of order
_FINISHING = re.compile(r"\b(?:drink|sip|enjoy|serve|remove|discard|take out)\b", re.IGNORECASE)
_STARTING = re.compile(r"\b(?:boil|heat|fill|put|place|add)\b", re.IGNORECASE)


def _steps_out_of_order(steps: list[str]) -> bool:
    ends = [n for n, s in enumerate(steps) if _FINISHING.search(s)]
    return any(_STARTING.search(s) for s in steps[ends[0] + 1 :]) if ends else False


_STOP_WORDS = set(
    "a an the is are was were be it its this that of in on at to and or yes no not".split()
)


def _says_only_the_subject(body: str) -> bool:
    """Whether a short reply's only word with content is one of a short prompt's own: "Sea."
    and "The sea is the sea." to "Describe the sea" describe nothing. (A long prompt, a
    document to answer from, holds the answer's words.)"""
    prompt = words_of(current_question())
    said = {w.casefold() for w in words_of(body)} - _STOP_WORDS
    return len(prompt) <= 40 and len(said) == 1 and said <= {w.casefold() for w in prompt}


# ---------------------------------------------------------------- sequences (canaries)


class SequenceParams(GraderParams):
    items: list[str] = Field(
        min_length=1,
        description="The expected items in order (1..10, Thursday..Wednesday, A..H).",
    )
    given: list[str] = Field(
        default_factory=list,
        description="Items the prompt already shows; a reply may restate them all first, or "
        "the last few in a sentence ('After 8 comes 10').",
    )
    min_items: int | None = Field(
        default=None, ge=1, description="Fewest expected items a reply must give (default all)."
    )
    abbreviated: bool = Field(
        default=False,
        description="With tokens 'words': an item may be written as its first three letters "
        "or more, with or without a period ('Jan, Feb, Mar', 'Sept.').",
    )
    tokens: Literal["numbers", "letters", "words"] = Field(
        default="words",
        description="What counts as an item in the reply: any whole number, any single letter, "
        "or (words) only the items and givens themselves. Anything else is ignored.",
    )


def _sequence_tokens(
    text: str, p: SequenceParams, *, asides: bool = False
) -> tuple[list[str], bool, list[str], tuple[str, str]]:
    """The reply's items in order (negated ones dropped), whether two were hedged ("or"), the
    text between each two items, and the last item as written with the text after it.
    Bracketed asides are left out unless `asides`."""
    t = plain_text(text) if asides else re.sub(r"\([^()]*\)", " ", plain_text(text))
    expand: dict[str, str] = {}  # an abbreviation -> the item it stands for
    if p.tokens == "numbers":
        t = with_digits(t)  # "One, two, three, ..." counts as well as "1, 2, 3, ..."
        # digits right after CJK text are a number of their own ("下一个数是10")
        pattern = r"(?<![.\d])(?<![^\W\u2e80-\u9fff\uac00-\ud7af])\d+(?![\w])"
        # a minus glued to a number ("-10", "−7") makes it another number; "1-10" is a range
        pattern = r"(?:(?<![\w.\-−])[-−](?=\d))?" + pattern
    elif p.tokens == "letters":
        pattern = r"(?<![\w'])[A-Za-z](?![\w'])"
    else:
        vocab = sorted({normalize(w) for w in p.items + p.given}, key=len, reverse=True)
        words = [re.escape(w) for w in vocab]
        if p.abbreviated:  # "Jan", "Sept.": three letters or more of an item, a period or not
            short = [(w[:k], w) for w in vocab for k in range(len(w) - 1, 2, -1)]
            words += [re.escape(a) + r"\.?" for a, _ in short]
            seen = Counter(a for a, _ in short)  # a prefix two items share stands for neither
            expand = {a: w for a, w in short if seen[a] == 1 and a not in vocab}
        pattern = r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)"
    hits = [m for m in re.finditer(pattern, t, re.IGNORECASE) if not is_negated(t, m.start())]
    if p.tokens == "letters":  # "a" the article ("Here is a list") is not an item
        hits = [
            m
            for m in hits
            if m.group(0) != "a" or re.match(r"[\W_]*[A-Za-z](?![\w'])", t[m.end() :])
        ]
    hedged = any(
        re.fullmatch(r"\s*[,?]?\s*or\s*", t[a.end() : b.start()], re.IGNORECASE)
        for a, b in itertools.pairwise(hits)
    )
    gaps = [t[a.end() : b.start()] for a, b in itertools.pairwise(hits)]
    tokens = [normalize(m.group(0)) for m in hits]
    end = (hits[-1].group(0), t[hits[-1].end() :]) if hits else ("", "")
    return [expand.get(tok, tok) for tok in tokens], hedged, gaps, end


def _item_past_the_end(gaps: list[str], tail: str, last: str) -> str | None:
    """The word a list of items set out alike ("A, B, C", "1. A\n2. B") adds after its last
    item in the same way (", Undecember", "\n13. Smarch"): one word, capitalised as the last
    item is, ending the reply or followed by the same separator. A remark after the list
    (", in that order.", "\n\nThat's all.") is no item."""
    shapes = {re.sub(r"\d+", "#", g) for g in gaps}
    if len(gaps) < 2 or len(shapes) != 1 or not last[:1].isalpha():
        return None
    sep = shapes.pop()
    after = re.sub(r"\d+", "#", tail)
    if not sep.strip(" ") or not after.startswith(sep):
        return None
    m = re.match(r"([^\W\d_]+)[.!]?\s*(?:$|" + re.escape(sep) + ")", after[len(sep) :])
    if m is None or m.group(1)[0].isupper() != last[0].isupper():
        return None
    return m.group(1)


# "1, 2, ... 9... and 10. So: 1, 2, ..., 10": the reply restates its whole answer after a
# concluding "So:" / "That is:" / "In full:", and the restatement is what it answers.
_RESTATED = re.compile(
    r"(?:\bso|\bthat is|\bin full|\bcorrected|\bfinal(?:\s+answer)?|\bi\.e\.)\s*:\s*",
    re.IGNORECASE,
)


# "10 — the sequence goes up by 2.", "Thursday, because ...": the reason after the answer
_REASON_AFTER = re.compile(r"\s[—–]\s+(?=[^\W\d])|,?\s+(?:because|since|as)\s", re.IGNORECASE)
# A question that fixes the separator ("Count from 1 to 10, separated by commas.", "... in
# order, separated by spaces.")
_COMMAS_ASKED = re.compile(r"\bseparated by commas\b|\bcomma-separated\b", re.IGNORECASE)
_COMMA_GAP = re.compile(r".*[,、].*|\s+(?:and|&)\s+", re.DOTALL)  # 、 the CJK list comma
_SPACES_ASKED = re.compile(r"\bseparated by (?:a )?spaces?\b|\bspace-separated\b", re.IGNORECASE)
_SPACE_GAP = re.compile(r"[^\S\n]+")  # one line: a comma or a line break is another separator
Separator = tuple[str, re.Pattern[str]]  # its name, and what may stand between two items


def _separator(question: str) -> Separator | None:
    """The separator the question asks for between the items, if it names one."""
    if _COMMAS_ASKED.search(question):
        return "commas", _COMMA_GAP
    return ("spaces", _SPACE_GAP) if _SPACES_ASKED.search(question) else None


# "Counting eight letters from the start gives:\n\nA B C D E F G H": the answer set out on
# lines of its own after the working that leads to it
_SET_OUT = re.compile(r":[^\S\n]*\n\s*")


@grader("sequence", SequenceParams, reads_claim=True)
def _sequence(response: Response, p: SequenceParams) -> Grade:
    """The reply continues or copies a sequence exactly: no loops, floods or overshoot; with
    the separator the question asks for ("separated by commas") between its items."""
    sep = _separator(current_question())
    text = answer_text(response)
    if _denies(text, p.items[0]):
        return verdict(False, f"names {p.items[0]} only to deny it")
    # "12 is wrong; the next number is 10": the clause denying another item is set aside
    text = _DENIED_CLAUSE.sub(" ", text).strip() or text
    got = _sequence_reading(text, p, sep)
    if got.passed:
        return got
    marks = list(_RESTATED.finditer(text))
    if marks:
        again = _sequence_reading(text[marks[-1].end() :], p, sep)
        return again if again.passed else got
    # after a lead-in naming an item ("oops, I skipped 9: 1, 2, ...", "no, H: A B C ..."); the
    # result of working that ends in it ("Adding 2 each time: 8 + 2 = 10.", "The step is +2,
    # so after 8 comes 10."): what follows the last "=" or the closing "so"
    eq = text.rfind("=")
    readings = without_lead_in(text)[1:] + ([text[eq + 1 :]] if eq >= 0 else [])
    set_out = list(_SET_OUT.finditer(text))
    readings += [text[set_out[-1].end() :]] if set_out else []
    for reading in readings + concluded(text)[:1]:
        again = _sequence_reading(reading, p, sep)
        if again.passed:
            return again
    explained = _explained(text, p, sep)
    if explained is not None:
        return explained
    reason = _REASON_AFTER.search(text)
    # a reason names an item or two ("goes up by 2"); a loop or a flood after a dash is no reason
    if reason and len(_sequence_tokens(text[reason.end() :], p)[0]) <= 2:
        head = _sequence_reading(text[: reason.start()], p, sep)
        return head if head.passed else got
    return got


_CLAUSES = re.compile(r"[.;:\n]+\s*|\s[—–]\s")


_DENIAL = (
    r"\s+(?:(?:is|was)\s+(?:not|wrong|incorrect)\b|isn['’]t\b|"
    r"would\s+(?:be|come|follow)\b[^.;\n]*\bbut\b)"
)
_DENIED_CLAUSE = re.compile(r"(?:^|(?<=[.;\n]))[^.;\n]*?(?<!\w)\w+" + _DENIAL + r"[^.;\n]*[.;]?")


def _denies(text: str, item: str) -> bool:
    """Whether the reply names the sequence's next item only to deny it: "10 is wrong; ...",
    "Thursday is not next; ...", "Thursday would be next, but ..."."""
    pattern = rf"(?<!\w){re.escape(item)}(?!\w){_DENIAL}"
    return bool(re.search(pattern, plain_text(text), re.IGNORECASE))


def _explained(text: str, p: SequenceParams, sep: Separator | None) -> Grade | None:
    """The first or last clause when it answers and the others explain it from the question's
    sequence: "10\n\nEach number is 2 more: 2 → 4 → 6 → 8 → 10", "It increases by 2; next is
    10". The explanation names one of the givens and no item but the givens and the ones the
    answer gave (a flood, a repeat or a second answer does not)."""
    clauses = [c for c in _CLAUSES.split(text) if re.search(r"\w", c)]
    given = {normalize(w) for w in p.given}
    for n in (0, len(clauses) - 1) if len(clauses) > 1 else ():
        got = _sequence_reading(clauses[n], p, sep)
        if not got.passed:
            continue
        known = set(_sequence_tokens(clauses[n], p)[0]) | given
        others = {t for c in clauses[:n] + clauses[n + 1 :] for t in _sequence_tokens(c, p)[0]}
        if others & given and others <= known:
            return got
    return None


def _sequence_reading(text: str, p: SequenceParams, sep: Separator | None = None) -> Grade:
    got, hedged, gaps, (last, tail) = _sequence_tokens(text, p)
    vocab = {normalize(w) for w in p.items + p.given}
    beyond = [t for t in _sequence_tokens(text, p, asides=True)[0] if t not in vocab]
    if beyond and re.search(r"\(", text) and not [t for t in got if t not in vocab]:
        # "1, ..., 10 (and then 11, 12, 13, ...)": an overshoot put in brackets is one still
        return verdict(False, f"an aside goes on past the sequence ({', '.join(beyond[:3])})")
    if hedged:
        return verdict(False, "offers alternatives ('or')")
    if sep is not None and any(not sep[1].fullmatch(g) for g in gaps):
        return verdict(False, f"the items are not separated by {sep[0]}, as the question asks")
    items = [normalize(w) for w in p.items]
    given = [normalize(w) for w in p.given]
    least = p.min_items or len(items)
    text = text.casefold()
    restated = [given] + (
        [given[-j:] for j in range(1, len(given))]
        if re.search(r"\b(?:after|comes|follows|following|next)\b", text)
        else []
    )
    for head in [[], *restated]:
        if got[: len(head)] != head:
            continue
        rest = got[len(head) :]
        if least <= len(rest) <= len(items) and rest == items[: len(rest)]:
            extra = _item_past_the_end(gaps, tail, last)
            if extra is not None:
                return verdict(False, f"lists {extra!r} past the sequence's end")
            return verdict(True, f"{len(rest)} items in order")
    shown = ", ".join(got[:14]) + (" ..." if len(got) > 14 else "")
    return verdict(False, f"read {len(got)} items [{shown}]; expected {', '.join(p.items[:least])}")

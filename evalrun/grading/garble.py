"""Garble detector: tell token soup from merely wrong answers.

A weak model answers badly in fluent language; a broken serving stack (mis-mapped weights, a bad
attention backend, a quantized KV cache, speculative decoding with CUDA graphs) produces token soup,
floods of one token, mixed scripts, or text that collapses into junk after a correct start. This
module scores one text with a handful of cheap signals (pure Python, well under 1 ms for a typical
answer) and explains the verdict with reasons a person can read:

- script mixing against the scripts the item expects (``expect``: en, ru, zh, code, json, ...);
- token soup: the share of words that do not look like words (mixed scripts or case inside a word,
  impossible consonant runs, run-together fragments);
- floods: one short unit repeated many times (``!!!!``, ``####``, ``<pad><pad>``, ``carecare``);
- replacement characters (U+FFFD), mojibake (UTF-8 read as Latin-1) and control characters;
- collapse after a correct prefix: the soup and script signals are also scored on windows, so a
  junk tail is not diluted by a long clean start; odd words at the very end weigh more (a clean
  answer cut at the token limit ends in an ordinary word), and so does a loop running to the end;
- spelling plausibility (English items only): long lower-case words whose letter sequences a
  character trigram model of English finds unlikely (glued BPE fragments such as noqarapists).

Sentence-level repetition (small models ramble and loop) only adds a little to the score and never
flags a text on its own. A correct Russian or Chinese answer, code, JSON, math and markdown tables
are clean.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources

from pydantic import BaseModel, Field

from evalrun.endpoint.response import Response

THRESHOLD = 0.5  # a score at or above this is garbled

# ---------------------------------------------------------------- expected scripts

_LATIN_LANGS = [
    "en",
    "fr",
    "de",
    "es",
    "it",
    "pt",
    "nl",
    "sv",
    "no",
    "da",
    "fi",
    "is",
    "pl",
    "cs",
    "sk",
    "sl",
    "hr",
    "bs",
    "ro",
    "hu",
    "tr",
    "az",
    "vi",
    "id",
    "ms",
    "tl",
    "sw",
    "ca",
    "eu",
    "gl",
    "et",
    "lv",
    "lt",
    "sq",
    "mt",
    "ga",
    "cy",
    "af",
    "uz",
]
LANG_SCRIPTS: dict[str, frozenset[str]] = {lang: frozenset({"latin"}) for lang in _LATIN_LANGS}
LANG_SCRIPTS.update(
    {
        "ru": frozenset({"cyrillic"}),
        "uk": frozenset({"cyrillic"}),
        "bg": frozenset({"cyrillic"}),
        "sr": frozenset({"cyrillic"}),
        "be": frozenset({"cyrillic"}),
        "kk": frozenset({"cyrillic"}),
        "mk": frozenset({"cyrillic"}),
        "mn": frozenset({"cyrillic"}),
        "zh": frozenset({"han"}),
        "ja": frozenset({"han", "hiragana", "katakana"}),
        "ko": frozenset({"hangul", "han"}),
        "el": frozenset({"greek"}),
        "ar": frozenset({"arabic"}),
        "fa": frozenset({"arabic"}),
        "ur": frozenset({"arabic"}),
        "he": frozenset({"hebrew"}),
        "hi": frozenset({"devanagari"}),
        "mr": frozenset({"devanagari"}),
        "ne": frozenset({"devanagari"}),
        "bn": frozenset({"bengali"}),
        "ta": frozenset({"tamil"}),
        "te": frozenset({"telugu"}),
        "th": frozenset({"thai"}),
        "ka": frozenset({"georgian"}),
        "hy": frozenset({"armenian"}),
        "am": frozenset({"ethiopic"}),
    }
)
# Structured answers: Latin identifiers plus anything inside strings; judged with code rules.
STRUCTURED = frozenset({"code", "json", "yaml", "sql", "table", "markdown", "csv", "regex"})
# Math answers are prose with formulas: judged as prose (Greek letters count as symbols).
OTHER_KINDS = frozenset({"math"})
# Short function words of the Latin- and Cyrillic-script languages above: running text in any of
# them is full of these (30-50% of words); token soup almost never is.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "but",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "not",
        "no",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "them",
        "what",
        "which",
        "who",
        "when",
        "where",
        "how",
        "if",
        "then",
        "than",
        "so",
        "all",
        "any",
        "some",
        "one",
        "two",
        "also",
        "just",
        "only",
        "very",
        "about",
        "into",
        "over",
        "after",
        "before",
        "up",
        "out",
        "more",
        "most",
        "such",
        "le",
        "la",
        "les",
        "de",
        "des",
        "du",
        "un",
        "une",
        "et",
        "ou",
        "est",
        "sont",
        "dans",
        "pour",
        "par",
        "sur",
        "avec",
        "ce",
        "cette",
        "qui",
        "que",
        "ne",
        "pas",
        "il",
        "elle",
        "nous",
        "vous",
        "ils",
        "au",
        "aux",
        "en",
        "se",
        "sa",
        "son",
        "ses",
        "leur",
        "plus",
        "mais",
        "comme",
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "einem",
        "und",
        "oder",
        "ist",
        "sind",
        "war",
        "nicht",
        "zu",
        "im",
        "mit",
        "von",
        "auf",
        "für",
        "es",
        "ich",
        "du",
        "er",
        "sie",
        "wir",
        "ihr",
        "auch",
        "als",
        "wie",
        "aus",
        "bei",
        "nach",
        "noch",
        "nur",
        "so",
        "dass",
        "wird",
        "werden",
        "hat",
        "haben",
        "el",
        "los",
        "las",
        "del",
        "y",
        "o",
        "es",
        "son",
        "una",
        "uno",
        "por",
        "para",
        "con",
        "lo",
        "al",
        "pero",
        "su",
        "sus",
        "más",
        "muy",
        "como",
        "está",
        "il",
        "lo",
        "gli",
        "di",
        "da",
        "che",
        "non",
        "per",
        "una",
        "sono",
        "è",
        "con",
        "o",
        "os",
        "as",
        "do",
        "da",
        "dos",
        "das",
        "em",
        "um",
        "uma",
        "com",
        "não",
        "para",
        "que",
        "é",
        "se",
        "het",
        "een",
        "en",
        "van",
        "op",
        "te",
        "dat",
        "niet",
        "zijn",
        "voor",
        "met",
        "ook",
        "er",
        "och",
        "att",
        "det",
        "som",
        "är",
        "på",
        "för",
        "inte",
        "med",
        "jag",
        "ett",
        "av",
        "i",
        "w",
        "z",
        "na",
        "się",
        "nie",
        "do",
        "że",
        "jest",
        "od",
        "po",
        "ve",
        "bir",
        "bu",
        "da",
        "de",
        "için",
        "ile",
        "çok",
        "olan",
        "và",
        "là",
        "của",
        "có",
        "được",
        "những",
        "một",
        "các",
        "cho",
        "trong",
        "không",
        "này",
        "người",
        "với",
        "yang",
        "dan",
        "di",
        "ini",
        "itu",
        "dengan",
        "untuk",
        "dari",
        "ke",
        "tidak",
        "ada",
        "je",
        "v",
        "se",
        "na",
        "to",
        "že",
        "s",
        "z",
        "do",
        "и",
        "в",
        "не",
        "на",
        "что",
        "с",
        "по",
        "это",
        "как",
        "а",
        "к",
        "но",
        "из",
        "у",
        "о",
        "за",
        "от",
        "для",
        "то",
        "же",
        "ты",
        "я",
        "он",
        "она",
        "мы",
        "вы",
        "они",
        "его",
        "ее",
        "её",
        "их",
        "без",
        "при",
        "через",
        "под",
        "над",
        "про",
        "который",
        "которые",
        "которая",
        "которое",
        "также",
        "может",
        "этот",
        "эта",
        "эти",
        "этого",
        "ней",
        "него",
        "нему",
        "ним",
        "них",
        "нам",
        "нас",
        "вам",
        "вас",
        "мне",
        "меня",
        "себя",
        "свой",
        "своей",
        "там",
        "тут",
        "здесь",
        "где",
        "чем",
        "очень",
        "можно",
        "нужно",
        "будет",
        "быть",
        "до",
        "после",
        "между",
        "перед",
        "всех",
        "всего",
        "был",
        "была",
        "было",
        "были",
        "есть",
        "бы",
        "ли",
        "или",
        "так",
        "все",
        "всё",
        "уже",
        "только",
        "еще",
        "ещё",
        "когда",
        "если",
        "і",
        "та",
        "що",
        "як",
        "від",
        "це",
    ]
)
_SCRIPT_NAMES = frozenset(s for v in LANG_SCRIPTS.values() for s in v) | {
    "syriac",
    "thaana",
    "gurmukhi",
    "gujarati",
    "oriya",
    "kannada",
    "malayalam",
    "sinhala",
    "lao",
    "tibetan",
    "myanmar",
    "khmer",
    "mongolian",
    "bopomofo",
    "cherokee",
    "yi",
}
_CJK = frozenset({"han", "hiragana", "katakana", "hangul", "bopomofo"})
_COMPANIONS = {
    "han": {"hiragana", "katakana", "bopomofo"},
    "hiragana": {"han", "katakana"},
    "katakana": {"han", "hiragana"},
    "hangul": {"han"},
}
# First words of Unicode names that are typography, not a writing system.
_NOT_A_SCRIPT = frozenset(
    [
        "combining",
        "modifier",
        "micro",
        "fullwidth",
        "halfwidth",
        "superscript",
        "subscript",
        "mathematical",
        "script",
        "double-struck",
        "black-letter",
        "planck",
        "ohm",
        "kelvin",
        "angstrom",
        "feminine",
        "masculine",
        "circled",
        "parenthesized",
        "negative",
        "squared",
        "roman",
        "small",
        "variation",
    ]
)


def expected_scripts(expect: list[str] | None) -> frozenset[str] | None:
    """Scripts an answer may use for these languages (Latin is always allowed); None if unknown."""
    if not expect:
        return None
    out = {"latin"}
    for raw in expect:
        key = raw.strip().lower().replace("_", "-")
        base = key.split("-")[0]
        if base in LANG_SCRIPTS:
            out |= LANG_SCRIPTS[base]
        elif key == "math":
            out.add("greek")  # α, β, π, Σ, λ
        elif key in _SCRIPT_NAMES:
            out.add(key)
    for s in list(out):
        out |= _COMPANIONS.get(s, set())
    return frozenset(out)


def _english_only(expect: list[str] | None) -> bool:
    """English is expected and no other Latin-script language is (code, math, ru, zh may be)."""
    bases = {e.strip().lower().replace("_", "-").split("-")[0] for e in expect or ()}
    return "en" in bases and not any(LANG_SCRIPTS.get(b) == _LATIN_ONLY for b in bases - {"en"})


_LATIN_ONLY = frozenset({"latin"})


def is_structured(expect: list[str] | None) -> bool:
    """True when the item expects code-like output (code, json, math, tables, ...)."""
    return bool(expect) and any(e.strip().lower() in STRUCTURED for e in expect or ())


_script_cache: dict[str, str] = {chr(c): "latin" if chr(c).isalpha() else "" for c in range(128)}
# Stripped from both ends of a whitespace-separated token to get the word.
_PUNCT = (
    "".join(chr(c) for c in range(33, 128) if not chr(c).isalnum())
    + "".join(
        chr(c)
        for lo, hi in (
            (0xA0, 0xBF),
            (0x2010, 0x2027),
            (0x2030, 0x205E),
            (0x3000, 0x3011),
            (0xFF01, 0xFF0F),
            (0xFF1A, 0xFF20),
        )
        for c in range(lo, hi + 1)
    )
    + "\u00d7\u00f7\u061f\u060c\u0964"
)


def char_script(ch: str) -> str:
    """Writing system of a letter or mark ('latin', 'cyrillic', 'han', ...) or '' for none."""
    got = _script_cache.get(ch)
    if got is not None:
        return got
    script = ""
    if unicodedata.category(ch)[0] in "LM":
        first = unicodedata.name(ch, "").split(" ", 1)[0].lower()
        if first == "cjk":
            script = "han"
        elif first == "katakana-hiragana":
            script = "katakana"
        elif first and first not in _NOT_A_SCRIPT:
            script = first
    _script_cache[ch] = script
    return script


# ---------------------------------------------------------------- results


class GarbleVerdict(BaseModel):
    garbled: bool
    score: float = Field(description="0 clean .. 1 certainly garbled")
    reasons: list[str] = Field(default_factory=list)


@dataclass
class _Signal:
    name: str
    score: float
    reason: str


@dataclass(slots=True)
class _Word:
    start: int
    scripts: frozenset[str]
    letters: int
    key: str = ""  # the word without edge punctuation, lower case
    comma: bool = False  # followed by a comma (enumerations)
    code: bool = False  # on a code-like line of a structured answer
    weird: str = ""  # why this word does not look like a word ('' when it does)
    fw: bool | None = None  # a function word? None outside running text


@dataclass
class _Text:
    text: str
    expected: frozenset[str] | None
    structured: bool
    compounding: bool = True
    english: bool = False  # English is the only Latin-script language expected: spelling counts
    words: list[_Word] = field(default_factory=list)


# ---------------------------------------------------------------- signals

_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]{1,40}`", re.DOTALL)
_TOKEN = re.compile(r"\S+")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāēīōūăęąěůőű")
_CYR_VOWELS = frozenset("аеёиоуыэюяіїєў")
_CONS_RUN = re.compile(r"[bcdfghjklmnpqrstvwxzß]{6,}")
_CONS_RUN_LONG = re.compile(r"[bcdfghjklmnpqrstvwxzß]{9,}")
_LATIN = frozenset({"latin"})
_LATIN_CYR = frozenset({"latin", "cyrillic"})
_PUNCT_RUN = re.compile(r"[,;!?]{3,}|[\[\](){}]{3,}")  # ,,,, or ([( inside a word
_BRACKETS = re.compile(r"[\[\]{}()<>|\"'`]")
_MD_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)")
_CODE_CHARS = re.compile(r"[=(){}\[\]<>;|`_/\\#*$@^~&]")
_CAMEL = re.compile(r"(?:[A-Z][a-z]{2,})+")
_PROSE_LIKE = re.compile(r"[^\W\d_]+")  # letters only: camelCase aside, code rarely looks like this
_NONE: frozenset[str] = frozenset()
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff]")
# Languages that glue words into long compounds with long consonant runs.
_COMPOUNDING = frozenset({"de", "nl", "sv", "da", "no", "fi", "is", "pl", "cs", "hu", "et"})
_CASE_FLIP_INNER = re.compile(
    r"^[a-zà-ÿ]*[a-zà-ÿ]{3}[A-ZÀ-Þ]|[a-zà-ÿ]{4}[A-ZÀ-Þ][a-zà-ÿ]|[A-Z]{2}[a-z]{3,}[A-Z]"
)
_INNER_PUNCT = re.compile(r"[^\w.,'’\-:&+]")
# UTF-8 read as Latin-1/cp1252: a lead byte shown as Ã Â Ð Ñ Ø Ù â ã-é, then a continuation byte
# (U+0080-U+00BF, or the cp1252 punctuation those bytes become).
_MOJIBAKE = re.compile(
    "[\u00c2\u00c3\u00d0\u00d1\u00d8\u00d9\u00e2][\u0080-\u00bf\u0152\u0153\u0160\u0161"
    "\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030"
    "\u2039\u203a\u20ac\u2122]|[\u00e3-\u00e9][\u0080-\u00bf]"
)
_FLOOD = re.compile(r"(.{1,12}?)\1{3,}", re.DOTALL)
_CHAR_RUN = re.compile(r"(.)\1{3,}", re.DOTALL)
_BENIGN_UNIT = frozenset("-=_*~.|:+<>/\\ \t\n─━│┃═")
_SPECIAL = re.compile(
    r"<(?:pad|unk|mask|eos|bos|/?s|0x[0-9A-Fa-f]{2})>|<\|[A-Za-z_]{2,20}\|>|\[(?:PAD|UNK|CLS|SEP|MASK)\]"
)


def _words(t: _Text) -> None:
    """Split the prose part of the text into words with their scripts and weirdness."""
    # Inline and fenced code is not prose: blank it out (keeping offsets) unless the whole answer
    # is code anyway, in which case identifiers are judged by code rules in _weird_reason.
    prose = t.text if t.structured else _FENCE.sub(lambda m: " " * len(m.group()), t.text)
    cache = _script_cache
    offset = 0
    for line in prose.split("\n"):
        # In a structured answer, symbol-dense lines are code/JSON/table rows: identifiers there
        # follow code rules. Lines of plain words (comments, explanations, soup) are prose.
        code = t.structured and (
            line.startswith(("  ", "\t")) or _CODE_CHARS.search(line) is not None
        )
        for m in _TOKEN.finditer(line):
            tok = m.group()
            core = tok.strip(_PUNCT)
            if (
                not code
                and len(tok) >= 5
                and not (core.isalnum() and len(tok) - len(core) < 5)
                and len(_BRACKETS.findall(tok)) >= 5
                and not _MD_LINK.search(tok)
                and not any(c in tok for c in "/=:")
            ):
                junk = _Word(offset + m.start(), _NONE, 0, tok, False, code, "symbol junk")
                t.words.append(junk)
                if not core:
                    continue
            if not core:
                continue
            if core.isascii():
                letters = len(core) if core.isalpha() else sum(map(str.isalpha, core))
                scripts = _LATIN if letters else _NONE
            else:
                found: set[str] = set()
                letters = 0
                for ch in core:
                    s = cache.get(ch)
                    if s is None:
                        s = char_script(ch)
                    if s:
                        found.add(s)
                        letters += 1
                scripts = frozenset(found)
            w = _Word(offset + m.start(), scripts, letters, core.lower(), tok.endswith(","), code)
            if letters >= 6 or (letters and (len(scripts) > 1 or not core.isalpha())):
                w.weird = _weird_reason(core, scripts, letters, t, code)
                if (
                    not w.weird
                    and t.english
                    and not code
                    and letters >= SPELL_MIN_LETTERS
                    and core.isascii()
                    and core.isalpha()
                    and core.islower()
                ):
                    w.weird = _spelling_reason(w.key)
            t.words.append(w)
        offset += len(line) + 1


def _weird_reason(core: str, scripts: frozenset[str], letters: int, t: _Text, code: bool) -> str:
    """Why a word is not word-like, or ''."""
    if letters < 6 and len(scripts) == 1 and core.isalpha():
        return ""  # short plain words: the checks below need six letters or mixed content
    if len(scripts) > 1:
        non_cjk = scripts - _CJK
        # CJK runs carry no spaces, so Latin words glued to Han are normal; anything else is not.
        if len(non_cjk) > 1 or (non_cjk and non_cjk != {"latin"}):
            if not (scripts <= {"greek", "latin"} and _greek_symbol(core)):
                return "mixed scripts"
    if code and not _PROSE_LIKE.fullmatch(core):
        return ""  # identifiers, paths, literals
    if scripts == _LATIN and letters >= 4:
        if _PUNCT_RUN.search(core):
            return "punctuation inside"
        if "/" in core or "@" in core or "_" in core or "=" in core:
            return ""  # paths, URLs, e-mail addresses, identifiers
        low = core.lower()
        if letters >= 6 and not any(c in _VOWELS for c in low) and not core.isupper():
            return "no vowels"
        if _CONS_RUN.search(low) and not (t.compounding and not _CONS_RUN_LONG.search(low)):
            return "consonant run"
        if not code and _CASE_FLIP_INNER.search(core):
            return "case flip inside"  # camelCase is normal in code, JSON and tables
        if (
            letters >= (28 if t.compounding else 18)
            and "-" not in core
            and not _CAMEL.fullmatch(core)
        ):
            return "run-together"  # CamelCase names (PermissionDeniedError) are not
        if len(_INNER_PUNCT.findall(core)) >= 2:
            return "punctuation inside"
        if letters >= 8 and not code and _repeats_fragment(low):
            return "repeated fragment"
    elif scripts == {"cyrillic"} and letters >= 6:
        if not any(c in _CYR_VOWELS for c in core.lower()):
            return "no vowels"
    return ""


def _repeats_fragment(low: str) -> bool:
    """A word that holds the same four letters twice: yondmutyond, Mutyondyond (not banana)."""
    grams = [low[i : i + 4] for i in range(len(low) - 3)]
    return len(set(grams)) < len(grams) and any(
        g.isalpha() and low.find(g, i + 4) >= 0 for i, g in enumerate(grams)
    )


# ---------------------------------------------------------------- spelling plausibility
# Mis-mapped weights glue BPE fragments of unrelated words (noqarapists, Russianrapistsisbury,
# isticsplotlib). A character trigram model of English, trained once from a stored sample of clean
# prose (evalrun/data/garble_english.txt, ~60 KB of project prose), scores how English a lower-case word is spelled.
# No lexicon: real words the sample never saw still score well when their letter sequences are
# ordinary. Only applied to lower-case words (names are often foreign) when English is the one
# Latin-script language expected, outside code.

SPELL_MIN_LETTERS = 10
SPELL_MEAN = -3.8  # mean log-probability per letter below this: not spelled like English
SPELL_WORST = -99.0  # one transition this unlikely (rapistsisb): not spelled like English


@cache
def _trigram_model() -> tuple[dict[str, int], dict[str, float]]:
    """Counts of letter bigrams and trigrams (with ^ and $ word edges), of their contexts
    ("|" + context) and of distinct letters after each context ("#" + context), and unigram
    probabilities."""
    text = resources.files("evalrun").joinpath("data/garble_english.txt").read_text("utf-8")
    counts: dict[str, int] = {}
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        for word in re.findall(r"[a-z]+", line.lower()):
            s = "^^" + word + "$"
            for i in range(2, len(s)):
                grams = (
                    s[i],
                    s[i - 1 : i + 1],
                    s[i - 2 : i + 1],
                    "|" + s[i - 1],
                    "|" + s[i - 2 : i],
                )
                for gram in grams:
                    if gram not in counts and len(gram) > 1 and gram[0] != "|":
                        counts["#" + gram[:-1]] = counts.get("#" + gram[:-1], 0) + 1
                    counts[gram] = counts.get(gram, 0) + 1
    total = sum(n for g, n in counts.items() if len(g) == 1)
    uni = {g: (n + 1) / (total + 28) for g, n in counts.items() if len(g) == 1}
    uni[""] = 1 / (total + 28)
    return counts, uni


def _witten_bell(counts: dict[str, int], gram: str, lower: float) -> float:
    """P(last letter | context) interpolated with the lower-order estimate (Witten-Bell)."""
    ctx = gram[:-1]
    seen = counts.get("|" + ctx, 0)
    types = counts.get("#" + ctx, 0)
    if not seen:
        return lower
    return (counts.get(gram, 0) + types * lower) / (seen + types)


@lru_cache(maxsize=1 << 16)
def _spelling(word: str) -> tuple[float, float]:
    """(mean, worst) log-probability per letter of a lower-case ASCII word under the model."""
    counts, uni = _trigram_model()
    s = "^^" + word + "$"
    total, worst = 0.0, 0.0
    for i in range(2, len(s)):
        p2 = _witten_bell(counts, s[i - 1 : i + 1], uni.get(s[i], uni[""]))
        lp = math.log(_witten_bell(counts, s[i - 2 : i + 1], p2))
        total += lp
        worst = min(worst, lp)
    return total / (len(s) - 2), worst


def _spelling_reason(key: str) -> str:
    mean, worst = _spelling(key)
    return "implausible spelling" if mean < SPELL_MEAN or worst < SPELL_WORST else ""


def _tail_signal(t: _Text) -> tuple[float, str]:
    """A fluent answer that ends in a few odd words: generation collapsed and ran to the token
    limit (`... designed noqarapists`). Odd words at the very end weigh more than anywhere else,
    because a clean answer cut at the limit ends in a truncated but ordinary word."""
    prose = [w for w in t.words if w.letters and not w.code]
    if len(prose) < 4:
        return 0.0, ""
    tail = prose[-TAIL_WORDS:]
    if not (tail[-1].weird in _TAIL_ODD or tail[-2].weird in _TAIL_ODD):
        return 0.0, ""  # (the very last word may be a fragment cut at the token limit)
    odd = [w for w in tail if w.weird in _TAIL_ODD]
    if len(odd) == 1 and _FINISHED.search(t.text):
        return 0.0, ""  # a finished sentence: one rare word before its full stop is vocabulary
    head = prose[:-TAIL_WORDS]
    if head and _soup_signal(head)[0] >= 0.2:
        return 0.0, ""  # not a clean start: the soup signal judges the whole
    score = min(1.0, TAIL_BASE + TAIL_STEP * (len(odd) - 1))
    kinds = ", ".join(sorted({w.weird for w in odd}))
    return score, (
        f"ends in {len(odd)} odd word(s) of the last {len(tail)} ({kinds}) at char {odd[0].start}"
    )


TAIL_WORDS = 4
# The answer ends its last sentence (closing quotes and brackets aside): generation stopped by
# itself, it did not collapse and run to the token limit mid-word.
_FINISHED = re.compile(r"[.!?。！？]['\"’”»)\]*_]*\s*\Z")
# Odd words that a clean answer hardly ever ends in. Case flips (TensorFlow, iPhone) and
# punctuation inside a word (LaTeX: \\frac{x^3}{3}) are common in clean text: not counted here.
_TAIL_ODD = frozenset(
    {
        "implausible spelling",
        "run-together",
        "repeated fragment",
        "mixed scripts",
        "no vowels",
        "consonant run",
    }
)
TAIL_BASE = 0.5
TAIL_STEP = 0.15


def _greek_symbol(core: str) -> bool:
    """Greek letters used as math symbols (π, α2, Δx) rather than words."""
    greek = sum(1 for c in core if char_script(c) == "greek")
    return greek <= 2


def _script_signal(t: _Text, words: list[_Word]) -> tuple[float, str]:
    """Letters outside the expected scripts, and how many scripts are interleaved."""
    counts: dict[str, int] = {}
    for w in words:
        if len(w.scripts) == 1:
            (s,) = w.scripts
            if s == "greek" and w.letters <= 2:
                continue  # math symbols
            counts[s] = counts.get(s, 0) + w.letters
        else:
            for s in w.scripts:
                counts[s] = counts.get(s, 0) + max(1, w.letters // len(w.scripts))
    total = sum(counts.values())
    if total < 8:
        return 0.0, ""
    # Unknown expectations, and data (JSON values, table cells, string literals), may be in any
    # one script besides Latin: the most common one.
    lenient = t.expected is None or t.structured
    allowed = t.expected or _LATIN
    others = {s: n for s, n in counts.items() if s not in allowed}
    if lenient and others:
        top = max(others, key=lambda s: others[s])
        allowed = allowed | {top} | frozenset(_COMPANIONS.get(top, ()))
    unexpected = {s: n for s, n in counts.items() if s not in allowed and n >= 2}
    n_unexp = sum(unexpected.values())
    share = n_unexp / total
    n_scripts = sum(1 for n in counts.values() if n >= 2)
    if not unexpected:
        return 0.0, ""
    score = 0.0
    if share >= 0.02:
        score = min(1.0, (share - 0.02) / 0.18)
    if n_scripts >= 3 and share >= 0.01:
        score = max(score, min(1.0, 0.4 + 0.2 * (n_scripts - 3) + share * 3))
    if lenient and sum(1 for w in words if w.weird == "mixed scripts") < 2:
        score = min(score, 0.45)  # a list of words in many languages, each intact: not soup
    names = ", ".join(sorted(unexpected, key=lambda s: -unexpected[s])[:4])
    exp = "/".join(sorted(allowed))
    if t.expected is None:
        exp = f"no languages given, so Latin plus the commonest other script: {exp}"
    return score, f"{share:.0%} of letters in unexpected scripts ({names}; expected {exp})"


def _soup_signal(words: list[_Word]) -> tuple[float, str]:
    """Share of words that do not look like words."""
    lettered = [w for w in words if w.letters or w.weird]
    if len(lettered) < 4:
        return 0.0, ""
    weird = [w for w in lettered if w.weird]
    if len(weird) < 3:
        return 0.0, ""
    rate = len(weird) / len(lettered)
    score = min(1.0, max(0.0, (rate - 0.06) / 0.19))
    kinds: dict[str, int] = {}
    for w in weird:
        kinds[w.weird] = kinds.get(w.weird, 0) + 1
    detail = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return score, f"{rate:.0%} of words are not word-like ({detail})"


def _mark_function_words(t: _Text) -> None:
    """Flag the words of running-text lines as function words or not (others stay None)."""
    if t.expected and not t.expected & _LATIN_CYR:
        return
    text, words = t.text, t.words
    line_start = 0
    while line_start < len(words):
        end = text.find("\n", words[line_start].start)
        end = len(text) if end < 0 else end
        line_end = line_start
        while line_end < len(words) and words[line_end].start < end:
            line_end += 1
        line = words[line_start:line_end]
        line_start = line_end
        lettered = [
            w
            for w in line
            if w.scripts and w.scripts <= _LATIN_CYR and (w.letters >= 2 or w.key in FUNCTION_WORDS)
        ]
        if len(lettered) < 8:
            continue  # headings, list items, table rows
        span = text[line[0].start : end]
        if sum(map(str.isalpha, span)) + span.count(" ") < 0.8 * len(span):
            continue  # code, JSON, tables: symbols everywhere
        if sum(w.comma for w in lettered) >= 0.4 * len(lettered):
            continue  # an enumeration: apples, pears, ...
        for w in lettered:
            w.fw = w.key in FUNCTION_WORDS


def _function_word_signal(words: list[_Word]) -> tuple[float, str]:
    """Running text with almost no function words (the, of, и, der, ...) is a pile of tokens."""
    marked = [w for w in words if w.fw is not None]
    if len(marked) < 10 or len({w.key for w in marked}) < 8:
        return 0.0, ""  # too little text, or one phrase repeated (the flood signal's business)
    rate = sum(bool(w.fw) for w in marked) / len(marked)
    score = min(1.0, max(0.0, (0.07 - rate) / 0.05))
    return score, (
        f"only {rate:.0%} function words (the, of, и, der, ...) in {len(marked)} "
        "words of running text"
    )


def _windowed(t: _Text) -> list[_Signal]:
    """Script and soup signals over the whole text and over windows (catches a junk tail)."""
    out = []
    ws = t.words
    spans = [(0, len(ws))]
    size = 30
    if len(ws) > size + 10:
        spans += [(i, min(len(ws), i + size)) for i in range(0, len(ws) - size // 2, size // 2)]
    # Only the signals that can fire anywhere are windowed (Latin is always allowed; soup needs
    # three odd words; function words need ten words of running text).
    signals = []
    if any(w.scripts - _LATIN for w in ws):
        signals.append(("script", lambda chunk: _script_signal(t, chunk)))
    if sum(1 for w in ws if w.weird) >= 3:
        signals.append(("soup", _soup_signal))
    if sum(1 for w in ws if w.fw is not None) >= 10:
        signals.append(("function-words", _function_word_signal))
    best: dict[str, tuple[float, str, int]] = {}
    for lo, hi in spans:
        chunk = ws[lo:hi]
        for name, fn in signals:
            score, reason = fn(chunk)
            if score > best.get(name, (0.0, "", 0))[0] + 1e-9:
                best[name] = (score, reason, lo)
    for name, (score, reason, lo) in best.items():
        if lo > 0 and ws:
            start = ws[lo].start
            reason = (
                f"{reason}, from char {start} on (clean before)"
                if _clean_head(t, lo)
                else (f"{reason} (around char {start})")
            )
        out.append(_Signal(name, score, reason))
    return out


def _clean_head(t: _Text, lo: int) -> bool:
    head = t.words[:lo]
    return (
        _soup_signal(head)[0] < 0.2
        and _script_signal(t, head)[0] < 0.2
        and _function_word_signal(head)[0] < 0.2
    )


def _flood_signal(text: str, structured: bool) -> tuple[float, str]:
    """The worst run of one short unit repeated (!!!!, ####, <pad><pad>, carecare, 'the the')."""
    best = (0.0, "")
    n = len(text)
    toks = []
    # glued floods inside one whitespace-free token: yondyondyond, !!!!!!, <pad><pad>, 't't't
    for tm in _TOKEN.finditer(text):
        tok = tm.group()
        toks.append(tok)
        if len(tok) < 6 or (len(tok) < 10 and tok.isalpha() and len(set(tok)) > 3):
            continue
        # a cheap filter: most tokens hold neither a cycle nor a run of one character
        finder = _FLOOD if len(set(tok)) * 2.5 <= len(tok) else _CHAR_RUN
        pos = tm.start()
        for m in finder.finditer(tok):
            unit, span = m.group(1), m.end() - m.start()
            where = (
                "end"
                if pos + m.end() == n
                else (
                    "line"
                    if _rule_line(text, tm)
                    else "word"
                    if 0 < m.start()
                    and m.end() < len(tok)
                    and tok[m.start() - 1].isalpha()
                    and tok[m.end()].isalpha()
                    else "inline"
                )
            )
            score = _glued_score(unit, span, span / n, structured, where)
            if score > best[0]:
                shown = unit if len(unit) <= 8 else unit[:8] + "…"
                best = (
                    score,
                    f"{shown!r} repeated {span // len(unit)} times at char {pos + m.start()}",
                )
    # the same token (or pair, or triple) over and over: opacity opacity ..., <pad> <pad>
    in_runs = 0  # tokens in runs of 3+ of one token, all runs together
    for period in (1, 2, 3):
        run = 0
        for i in range(period, len(toks) + 1):
            if i < len(toks) and toks[i] == toks[i - period]:
                run += 1
                continue
            if period == 1 and run >= 2:
                in_runs += run + 1
            if run + period >= 8 or (i == len(toks) and run // period + 1 >= END_LOOP_REPEATS):
                best = _token_run(best, toks, i, period, run)
            run = 0
    if in_runs > 10:
        score = min(1.0, (in_runs - 10) / 15)
        if score > best[0]:
            best = (score, f"{in_runs} tokens in runs of one token repeated back to back")
    return best


def _rule_line(text: str, tm: re.Match) -> bool:
    """The token sits on a line of rule characters only (a rule, underline or table border)."""
    before = text.rfind("\n", 0, tm.start())
    after = text.find("\n", tm.end())
    line = text[before + 1 : len(text) if after < 0 else after]
    return all(c in _BENIGN_UNIT for c in line)


def _glued_score(unit: str, span: int, cover: float, structured: bool, where: str) -> float:
    reps = span // len(unit)
    if any(c.isalpha() for c in unit):
        if len(unit) == 1:  # ĊĊĊĊĊĊĊĊĊĊ (but Hmmmmm, zzzzzz stay clean)
            return min(1.0, max(0.0, (span - 6) / 10))
        return 0.0 if reps < 4 else min(1.0, max(0.0, (span - 8) / 24))
    if span >= 16 and cover >= 0.9:
        return 1.0  # the whole answer is one unit repeated
    if all(c in _BENIGN_UNIT for c in unit):
        # rules, underlines, table borders, code banners: fine on a line of their own; a long run
        # glued to text or ending the answer (generation stopped inside it) is a flood
        if span >= 200 or (where == "end" and span >= 32):
            return 1.0
        if where == "line" or structured:
            return 0.0
        return min(1.0, max(0.0, (span - 16) / 24))
    if any(c.isdigit() for c in unit) and all(c.isdigit() or c in " ,." for c in unit):
        low = 12 if where == "end" else 20  # 0.3333333333333333 is fine, 27 zeros at the end not
        return min(1.0, max(0.0, (span - low) / low))
    if "#" in unit:
        low = 40 if structured else 12
        return min(1.0, max(0.0, (span - low) / low))
    if reps < 6:
        return 0.0
    if structured and where != "word" and not (unit == "," and span >= 8):
        return min(1.0, max(0.0, (span - 5) / 15))
    return min(1.0, max(0.0, (span - 3) / 8))  # in prose, or glued inside a word: ab,,,,,,cd


END_LOOP_REPEATS = 6  # one word or phrase 6 times back to back, up to the very end


def _token_run(
    best: tuple[float, str], toks: list[str], end: int, period: int, run: int
) -> tuple[float, str]:
    """Score `run` repeats of a `period`-token unit ending at token `end`. A loop that reaches the
    end of the answer never stopped (the token limit cut it): fewer repeats suffice there."""
    total = run + period
    at_end = end == len(toks) and total // period >= END_LOOP_REPEATS
    if total < 8 and not at_end:
        return best
    unit = toks[end - period : end]
    if total < 40 and all(c in _BENIGN_UNIT for tok in unit for c in tok):
        return best  # | --- | --- | --- |
    wordy = all(_EDGE.sub("", t).isalpha() for t in unit)
    score = min(1.0, max(0.0, (total - 6) / 10)) if wordy else min(1.0, (total - 4) / 8)
    if at_end:
        score = max(score, min(1.0, 0.5 + 0.1 * (total // period - END_LOOP_REPEATS)))
    if score > best[0]:
        shown = " ".join(unit)
        shown = shown if len(shown) <= 16 else shown[:16] + "…"
        best = (score, f"{shown!r} repeated {total // period} times (token {end - total} on)")
    return best


def _diversity_signal(words: list[_Word], text: str) -> tuple[float, str]:
    """Windows of 30 tokens with at most 3 distinct tokens (gen,gen,ß,gen ...)."""
    toks = _TOKEN.findall(text)
    if len(toks) < 30:
        return 0.0, ""
    for i in range(0, len(toks) - 29, 10):
        window = toks[i : i + 30]
        distinct = len(set(window))
        if distinct <= 3 and not all(all(c in _BENIGN_UNIT for c in w) for w in window):
            return 0.8, f"{distinct} distinct tokens in 30 (token {i} on)"
    return 0.0, ""


_SUFFIXES = frozenset(
    [
        "s",
        "es",
        "ed",
        "d",
        "ing",
        "er",
        "ers",
        "ly",
        "al",
        "ally",
        "ness",
        "ment",
        "ments",
        "ion",
        "ions",
        "able",
        "ful",
        "less",
    ]
)


def _fragment_signal(t: _Text) -> tuple[float, str]:
    """A few fragments recombined: the commonest word also glued inside many others
    (Mut, Mutmutyond, MutLeave, Ledmut). A fluent loop repeats whole words, not this."""
    # identifiers embed each other (request, send_request, RequestError): code lines stay out
    # identifiers embed each other (request, send_request, RequestError): code lines stay out
    keys = [
        w.key
        for w in t.words
        if w.letters >= 2 and not w.code and "_" not in w.key and "." not in w.key
    ]
    if len(keys) < 12:
        return 0.0, ""
    counts: dict[str, int] = {}
    for k in keys:
        if k not in FUNCTION_WORDS:
            counts[k] = counts.get(k, 0) + 1
    if not counts:
        return 0.0, ""
    top = max(counts, key=lambda k: counts[k])
    if counts[top] < 4 or counts[top] < 0.12 * len(keys) or len(top) < 2:
        return 0.0, ""
    glued = sum(
        1
        for k in keys
        if k != top
        and top in k
        and not (k.startswith(top) and k[len(top) :].lstrip("'’") in _SUFFIXES)
    )
    if glued < 3 or glued < 0.1 * len(keys):
        return 0.0, ""
    score = min(1.0, 0.3 + glued / len(keys) * 2)
    return score, (
        f"{top!r} appears {counts[top]} times alone and {glued} times glued inside other words"
    )


def _chars_signal(text: str) -> list[_Signal]:
    """Replacement characters, control characters and mojibake."""
    out = []
    n = max(1, len(text))
    fffd = text.count("\ufffd")
    if fffd:
        score = min(1.0, 0.35 + 0.25 * (fffd - 1) + 20 * fffd / n)
        out.append(_Signal("replacement", score, f"{fffd} replacement characters (U+FFFD)"))
    ctrl = len(_CONTROL.findall(text))
    if ctrl:
        out.append(_Signal("control", min(1.0, 0.3 * ctrl), f"{ctrl} control or private-use chars"))
    moji = len(_MOJIBAKE.findall(text))
    if moji >= 2:
        out.append(
            _Signal(
                "mojibake",
                min(1.0, 0.25 * moji),
                f"{moji} mojibake sequences (UTF-8 read as Latin-1, e.g. 'Ã©')",
            )
        )
    specials = len(_SPECIAL.findall(text))
    if specials >= 3:
        out.append(
            _Signal(
                "special",
                min(1.0, 0.2 * specials),
                f"{specials} special-token markers such as <pad> or <|endoftext|>",
            )
        )
    return out


def _repetition_signal(text: str) -> tuple[float, str]:
    """Compression ratio: loops of whole sentences. Never enough to flag a text on its own."""
    raw = text.encode("utf-8", "surrogatepass")  # servers may send lone surrogates
    if len(raw) < 300:
        return 0.0, ""
    ratio = len(zlib.compress(raw, 6)) / len(raw)
    if ratio >= 0.2:
        return 0.0, ""
    return min(0.3, (0.2 - ratio) * 2.5), f"repetitive (compresses to {ratio:.0%})"


# ---------------------------------------------------------------- public API


def detect(text: str, expect: list[str] | None = None) -> GarbleVerdict:
    """Judge one text; `expect` lists languages/scripts the answer may use."""
    if not text or not text.strip():
        return GarbleVerdict(garbled=False, score=0.0)
    t = _Text(
        text,
        expected_scripts(expect),
        is_structured(expect),
        compounding=not expect or any(e.split("-")[0].lower() in _COMPOUNDING for e in expect),
        english=_english_only(expect),
    )
    _words(t)
    _mark_function_words(t)
    signals = _windowed(t)
    signals += _chars_signal(text)
    for name, (score, reason) in (
        ("flood", _flood_signal(text, t.structured)),
        ("diversity", _diversity_signal(t.words, text)),
        ("fragments", _fragment_signal(t)),
        ("tail", _tail_signal(t)),
        ("repetition", _repetition_signal(text)),
    ):
        signals.append(_Signal(name, score, reason))
    keep = 1.0
    for s in signals:
        keep *= 1.0 - s.score
    score = round(1.0 - keep, 3)
    shown = sorted((s for s in signals if s.score >= 0.1), key=lambda s: -s.score)
    reasons = [f"{s.name} ({s.score:.2f}): {s.reason}" for s in shown]
    return GarbleVerdict(garbled=score >= THRESHOLD, score=score, reasons=reasons)


def check_response(response: Response, expect: list[str] | None = None) -> dict | None:
    """Verdict for content and reasoning channels: {garbled, score, reasons, channel} or None."""
    worst: dict | None = None
    for channel in ("content", "reasoning"):
        text = getattr(response, channel)
        if not text or not text.strip():
            continue
        v = detect(text, expect)
        if worst is None or v.score > worst["score"]:
            worst = {
                "garbled": v.garbled,
                "score": v.score,
                "reasons": v.reasons,
                "channel": channel,
            }
    return worst


# Languages and kinds an answer in each core category may use when the item does not say.
CATEGORY_EXPECT: dict[str, list[str]] = {
    "code": ["en", "code"],
    "structured": ["en", "json"],
    "math": ["en", "math"],
    "tool": ["en", "json"],
}


def expected_for(item_languages: list[str] | None, category: str | None) -> list[str] | None:
    """What `detect` should expect for a suite item: its own `languages` when it states them,
    else its category's default (English, plus code/json/math where the category implies it).
    Multilingual items without languages stay lenient (None): any one script plus Latin."""
    if item_languages:
        return list(item_languages)
    if category == "multilingual":
        return None
    return list(CATEGORY_EXPECT.get(category or "", ["en"]))


def parse_expect(spec: str | None) -> list[str] | None:
    """`en,ru` -> ['en', 'ru']; UsageError on a code the detector does not know."""
    from evalrun.errors import UsageError

    if spec is None or not spec.strip():
        return None
    codes = [c.strip().lower() for c in spec.split(",") if c.strip()]
    unknown = [
        c
        for c in codes
        if c.split("-")[0] not in LANG_SCRIPTS
        and c not in STRUCTURED | OTHER_KINDS
        and c not in _SCRIPT_NAMES
    ]
    if unknown:
        raise UsageError(
            f"--expect: unknown language or script {', '.join(unknown)}; use codes "
            "such as en, ru, zh, ja, fr, de, code, json, math, table, or a script "
            "name such as cyrillic"
        )
    return codes


def explain_text(text: str, verdict: GarbleVerdict, expect: list[str] | None) -> str:
    """A person's view of a verdict: the call, the score, and one line per signal that fired."""
    scripts = expected_scripts(expect)
    where = ", ".join(sorted(scripts)) if scripts else "any one script plus Latin"
    call = "GARBLED" if verdict.garbled else "clean"
    lines = [
        f"{call}: score {verdict.score:.2f} (garbled at >= {THRESHOLD:.2f}); "
        f"{len(text)} chars; expected scripts: {where}"
    ]
    if not text.strip():
        lines.append("  (empty text: nothing to judge)")
    lines += [f"  - {r}" for r in verdict.reasons] or ["  (no signal fired)"]
    return "\n".join(lines)

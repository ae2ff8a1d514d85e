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

import json
import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from evalrun.endpoint.response import Response
from evalrun.grading import garble_structure as structure
from evalrun.grading.garble_lexicon import (
    LATIN_DEFAULT,
    SCRIPT_LANGS,
    guess_languages,
    known,
    mojibake_badness,
    starts_a_word,
    wordfreq_code,
    zipf,
)

THRESHOLD = 0.5  # a score at or above this is garbled

# ---------------------------------------------------------------- expected scripts

_LATIN_LANGS = (
    "en fr de es it pt nl sv no da fi is pl cs sk sl hr bs ro hu tr az vi id ms tl sw ca eu gl "
    "et lv lt sq mt ga cy af uz"
).split()
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
    """
a an the of and or but to in on at by for with from as is are was were be been it its this that
these those there here not no do does did have has had will would can could should may i you he
she we they me my your his her our their them what which who when where how if then than so
all any some one two also just only very about into over after before up out more most such
le la les de des du un une et ou est sont dans pour par sur avec ce cette qui que ne pas il elle
nous vous ils au aux en se sa son ses leur plus mais comme
der die das den dem des ein eine einen einem und oder ist sind war nicht zu im mit von auf für
es ich du er sie wir ihr auch als wie aus bei nach noch nur so dass wird werden hat haben
el los las del y o es son una uno por para con lo al pero su sus más muy como está
il lo gli di da che non per una sono è con
o os as do da dos das em um uma com não para que é se
het een en van op te dat niet zijn voor met ook er
och att det som är på för inte med jag ett av
i w z na się nie do że jest od po
ve bir bu da de için ile çok olan
và là của có được những một các cho trong không này người với
yang dan di ini itu dengan untuk dari ke tidak ada
je v se na to že s z do
и в не на что с по это как а к но из у о за от для то же ты я он она мы вы они его ее её их
без при через под над про который которые которая которое также может этот эта эти этого
ней него нему ним них нам нас вам вас мне меня себя свой своей там тут здесь где чем очень можно
нужно будет быть до после между перед всех всего
был была было были есть бы ли или так все всё уже только еще ещё когда если
і та що як від це
""".split()
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
    "combining modifier micro fullwidth halfwidth superscript subscript mathematical script "
    "double-struck black-letter planck ohm kelvin angstrom feminine masculine circled "
    "parenthesized negative squared roman small variation".split()
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


_LATIN_ONLY = frozenset({"latin"})


# Signs of code, JSON, YAML or a table: a line opening with a keyword, ending in ; { }, assigning
# or keying a value, a table row, a fence, a call. Soup answered to a code item has none of them
# and is judged as prose.
_LOOKS_STRUCTURED = re.compile(
    r"^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|with|function|const|"
    r"let|var|public|private|static|fn|func|package|#include|select|insert|update|create)\b"
    r"|[;{}]\s*$|^\s*[-\w.\[\]\"'$]+\s*[:=]\s*\S|^\s*\|.*\|\s*$|```|\w\(.*\)|\A\s*[{\[<]",
    re.MULTILINE | re.IGNORECASE,
)


def _looks_structured(text: str) -> bool:
    return _LOOKS_STRUCTURED.search(text) is not None


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


KINDS = ("multi-script", "non-words", "salad", "loop", "flood", "collapse", "mojibake")


class GarbleVerdict(BaseModel):
    """The detector's call on one text."""

    garbled: bool = Field(description="The text is degenerate: token soup, a flood or a loop.")
    score: float = Field(description="0 clean .. 1 certainly garbled")
    kind: str = Field(
        default="",
        description=(
            "What the strongest signal says it is: multi-script, non-words, salad, flood, collapse, "
            "mojibake (engine damage) or loop (whole words or lines repeated: small healthy models do "
            "this too, so sign-off may count it apart); '' when clean."
        ),
    )
    reasons: list[str] = Field(default_factory=list)

    @property
    def loop(self) -> bool:
        """Garbled only as a repetition loop of real words, the way a healthy small model loops."""
        return self.garbled and self.kind == "loop"


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
    listed: bool | None = None  # in a candidate language's word list? None when not looked up
    per_script: dict[str, int] | None = None  # letters per script, for words of several
    fw: bool | None = None  # a function word? None outside running text


@dataclass
class _Text:
    text: str
    expected: frozenset[str] | None
    structured: bool
    compounding: bool = True
    langs: tuple[str, ...] = ()  # wordfreq codes Latin words are checked against; () = no lexicon
    english_text: bool = False  # English expected, or no language given and the text reads English
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
# Latin-1 supplement letters and the cp1252 punctuation that UTF-8 bytes turn into: only texts
# with one of these can be mojibake, so only they pay for ftfy.
_LATIN1_RANGE = re.compile(
    "[\u00c0-\u00ff\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2020\u2021\u2030\u2039\u203a\u20ac\u2122]"
)
_FLOOD = re.compile(r"(.{1,12}?)\1{3,}", re.DOTALL)
_CHAR_RUN = re.compile(r"(.)\1{3,}", re.DOTALL)
_BENIGN_UNIT = frozenset("-=_*~.|:+<>/\\ \t\n─━│┃═")
_SPECIAL = re.compile(
    r"<(?:pad|unk|mask|eos|bos|/?s|0x[0-9A-Fa-f]{2})>|<\|[A-Za-z_]{2,20}\|>|\[(?:PAD|UNK|CLS|SEP|MASK)\]"
)


_LATEX = re.compile(r"\$[^$\n]{1,200}\$|\\[a-zA-Z]+(?:\{[^}\n]{0,80}\}|\[[^\]\n]{0,80}\])*")


def _blank(m: re.Match) -> str:
    return " " * len(m.group())


def _words(t: _Text) -> None:
    """Split the prose part of the text into words with their scripts and weirdness."""
    # Inline and fenced code is not prose: blank it out (keeping offsets) unless the whole answer
    # is code anyway, in which case identifiers are judged by code rules in _weird_reason.
    prose = t.text
    if not t.structured:  # LaTeX commands and $math$ are not prose either
        prose = _LATEX.sub(_blank, _FENCE.sub(_blank, prose))
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
                found: dict[str, int] = {}
                letters = 0
                for ch in core:
                    s = cache.get(ch)
                    if s is None:
                        s = char_script(ch)
                    if s:
                        found[s] = found.get(s, 0) + 1
                        letters += 1
                scripts = frozenset(found)
            w = _Word(offset + m.start(), scripts, letters, core.lower(), tok.endswith(","), code)
            if len(scripts) > 1:
                w.per_script = found
            if letters >= 6 or (letters and (len(scripts) > 1 or not core.isalpha())):
                w.weird = _weird_reason(core, scripts, letters, t, code)
            if not w.weird and t.english_text and not code and core.isalpha() and core.islower():
                w.listed = _listed(w.key, scripts, letters, t.langs)
                if w.listed is False:
                    w.weird = NOT_A_WORD
            t.words.append(w)
        offset += len(line) + 1


def _weird_reason(core: str, scripts: frozenset[str], letters: int, t: _Text, code: bool) -> str:
    """Why a word is not word-like, or ''."""
    if letters < 6 and len(scripts) == 1 and core.isalpha():
        return ""  # short plain words: the checks below need six letters or mixed content
    if len(scripts) > 1 and _glued_scripts(core, scripts):
        return "mixed scripts"
    if code and not _PROSE_LIKE.fullmatch(core):
        return ""  # identifiers, paths, literals
    if scripts == _LATIN and letters >= 4:
        if _PUNCT_RUN.search(core):
            return PUNCT_RUN  # routersrapists,,,,,,,,isburyadays
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
    elif (
        scripts == {"cyrillic"} and letters >= 6 and not any(c in _CYR_VOWELS for c in core.lower())
    ):
        return "no vowels"
    return ""


def _glued_scripts(core: str, scripts: frozenset[str]) -> bool:
    """Letters of two writing systems glued into one word. CJK runs carry no spaces, so Latin
    words glued to Han are normal; so are Greek math symbols (Δx, sinθ) and hyphenated
    compounds with one script each side (API-ключ, JSON/данные)."""
    non_cjk = scripts - _CJK
    if not (len(non_cjk) > 1 or (non_cjk and non_cjk != _LATIN)):
        return False
    per = Counter(char_script(c) for c in core if c.isalpha()).most_common()
    if len(per) < 2 or (per[1][1] < 2 and per[0][0] != "latin"):
        return False  # one stray letter in a Russian word (праכмных): a small model's odd token
    if scripts <= {"greek", "latin"} and _greek_symbol(core):
        return False
    return not all(
        len({char_script(c) for c in part if c.isalpha()} - _CJK) <= 1
        for part in re.split(r"[-/]", core)
    )


NOT_A_WORD = "not a word"
PUNCT_RUN = "punctuation run inside"
LEXICON_LOW = 0.35  # share of listed-word misses that starts to count
LEXICON_SPAN = 0.2  # ... and how much more makes it certain (55%: "mostly non-words")
LEXICON_MIN = 5  # unlisted words needed before that share counts (a line of transliteration)


def _listed(key: str, scripts: frozenset[str], letters: int, langs: tuple[str, ...]) -> bool | None:
    """Is this lower-case word in a candidate language's word list? None when not looked up."""
    if scripts != _LATIN or letters < (3 if key.isascii() else 2):
        return None  # a small model's Russian or Spanish is full of made-up words: no say there
    return known(key, langs)


def _repeats_fragment(low: str) -> bool:
    """A word that holds the same four letters twice: yondmutyond, Mutyondyond (not banana)."""
    grams = [low[i : i + 4] for i in range(len(low) - 3)]
    return len(set(grams)) < len(grams) and any(
        g.isalpha() and low.find(g, i + 4) >= 0 for i, g in enumerate(grams)
    )


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
    if len(odd) > 1 and len({w.key for w in odd}) == 1:
        return 0.0, ""  # one odd word over and over: a loop (the loop signals' business)
    if _FINISHED.search(t.text):  # words no list holds, ending a sentence: rare words, not junk
        odd = [w for w in odd if w.weird != NOT_A_WORD]
    elif tail[-1].weird == NOT_A_WORD and starts_a_word(tail[-1].key):
        odd = odd[:-1]  # a word cut at the token limit (carbohydr) is in no word list
    elif tail[-1].weird == NOT_A_WORD and len(tail[-1].key) >= 12:
        odd.append(tail[-1])  # ... but no word starts like noqarapistsisbury
    if not odd or all(w.weird == NOT_A_WORD for w in odd) and len(odd) < 2:
        return 0.0, ""  # one word no list holds is a rare word or a small model's misspelling
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
        "run-together",
        "repeated fragment",
        "mixed scripts",
        "no vowels",
        "consonant run",
        NOT_A_WORD,
        PUNCT_RUN,
    }
)
TAIL_BASE = 0.5
TAIL_STEP = 0.15


COLLAPSE_TAIL = 12  # words at the end compared with the rest


def _junk(w: _Word, english: bool) -> bool:
    """Odd in any way: not word-like, unlisted, or (English) a short fragment (ov, ith, ek)."""
    if w.weird or w.listed is False:
        return True
    return (
        english
        and 2 <= len(w.key) <= 3
        and w.key.isascii()
        and w.key.isalpha()
        and w.key not in FUNCTION_WORDS
        and not _common_english(w.key)
    )


def _collapse_signal(t: _Text) -> tuple[float, str]:
    """Readable words, then a tail of odd ones: the answer collapsed and ran on to the limit."""
    prose = [w for w in t.words if w.letters and not w.code]
    if len(prose) < COLLAPSE_TAIL + 6:
        return 0.0, ""
    head, tail = prose[:-COLLAPSE_TAIL], prose[-COLLAPSE_TAIL:]
    tail_junk = sum(_junk(w, t.english_text) for w in tail) / len(tail)
    head_junk = sum(_junk(w, t.english_text) for w in head) / len(head)
    if tail_junk < 0.45 or head_junk > 0.12:
        return 0.0, ""
    return min(1.0, 0.5 + (tail_junk - 0.45)), (
        f"{tail_junk:.0%} of the last {len(tail)} words are odd after {len(head)} readable ones "
        f"(from char {tail[0].start} on)"
    )


def _prefix_signal(t: _Text) -> tuple[float, str]:
    """One fragment starting most words (wisacke wislished wisStackAs wisOr): recombined pieces."""
    words = [w for w in t.words if w.letters >= 3 and not w.code and w.key not in FUNCTION_WORDS]
    keys = [w.key for w in words]
    if len(keys) < 4:
        return 0.0, ""
    counts: dict[str, int] = {}
    for k in keys:
        counts[k[:3]] = counts.get(k[:3], 0) + 1
    stem = max(counts, key=lambda k: counts[k])
    sharing = [k for k in keys if k.startswith(stem)]
    share = len(sharing) / len(keys)
    unlisted = {w.key for w in words if w.key.startswith(stem) and w.weird}
    # eight words of one stem, or a short text whose shared stem starts words no list holds
    many = len(sharing) >= 8 and share >= 0.5 and len(set(sharing)) >= 4
    few = len(sharing) >= 4 and share >= 0.6 and len(unlisted) >= 2
    if not (many or few):
        return 0.0, ""
    return min(1.0, 0.5 + (share - 0.5)), (
        f"{len(sharing)} of {len(keys)} words start with {stem!r} ({len(set(sharing))} different)"
    )


def _greek_symbol(core: str) -> bool:
    """Greek letters used as math symbols (π, α2, Δx, sinθ) rather than glued to a word."""
    greek = sum(1 for c in core if char_script(c) == "greek")
    return greek <= 2 and sum(1 for c in core if c.isalpha()) - greek <= 3


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
                counts[s] = counts.get(s, 0) + (w.per_script or {}).get(s, 1)
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
    intact = _intact_share(words, frozenset(unexpected))
    glued = sum(1 for w in words if w.weird == "mixed scripts")
    returns = _script_returns(words, allowed & _LATIN or _LATIN)
    isolated = lenient or _longest_run(words, frozenset(unexpected)) <= 2
    foreign = [w.letters for w in words if len(w.scripts) == 1 and not w.scripts <= allowed]
    scraps = n_scripts >= 4 and sum(foreign) <= 3 * len(foreign)  # 了 ত ครับ: letters, not words
    if (
        glued == 0
        and returns < 2
        and isolated
        and not scraps
        and intact >= (INTACT_SHARE if lenient else 0.8)
    ):
        score = min(score, 0.45)  # a list of words in many languages, each intact: not soup
    names = ", ".join(sorted(unexpected, key=lambda s: -unexpected[s])[:4])
    exp = "/".join(sorted(allowed))
    if t.expected is None:
        exp = f"no languages given, so Latin plus the commonest other script: {exp}"
    return score, f"{share:.0%} of letters in unexpected scripts ({names}; expected {exp})"


INTACT_SHARE = 0.6  # of the other-script words that must be real words for a text to be a glossary


def _longest_run(words: list[_Word], scripts: frozenset[str]) -> int:
    """The most words in a row written in `scripts`: a name or a quoted word is one or two, a
    sentence drifting into another language is more."""
    best = run = 0
    for w in words:
        run = run + 1 if w.scripts and w.scripts <= scripts else 0
        best = max(best, run)
    return best


def _script_returns(words: list[_Word], frame: frozenset[str]) -> int:
    """How often the text goes back to another script after a third one: soup hops between
    scripts (了 ности 了 ত ść ত), a glossary visits each once (спасибо, ありがとう, 谢谢)."""
    seen: list[str] = []
    returns = 0
    for w in words:
        if len(w.scripts) != 1 or w.scripts <= frame:
            continue
        (script,) = w.scripts
        group = "cjk" if script in _CJK else script
        if seen and seen[-1] != group and group in seen:
            returns += 1
        if not seen or seen[-1] != group:
            seen.append(group)
    return returns


def _intact_share(words: list[_Word], scripts: frozenset[str]) -> float:
    """Of the words written in `scripts`, the share that are whole words of a language of that
    script (in its word list; CJK runs of two or more; no list: three letters or more).
    Soup scatters fragments (ности, ংলা, ত); a glossary lists words (спасибо, 谢谢)."""
    seen = intact = 0
    for w in words:
        if len(w.scripts) != 1 or not w.scripts <= scripts:
            continue
        (script,) = w.scripts
        seen += 1
        langs = SCRIPT_LANGS.get(script)
        if (
            script in _CJK
            and w.letters >= 2
            or not langs
            and w.letters >= 3
            or langs
            and known(w.key, langs)
        ):
            intact += 1
    return intact / seen if seen else 1.0


def _soup_signal(words: list[_Word]) -> tuple[float, str]:
    """Share of words that do not look like words."""
    lettered = [w for w in words if w.letters or w.weird]
    if len(lettered) < 4:
        return 0.0, ""
    weird = [w for w in lettered if w.weird]
    if len({w.key for w in weird}) < 3:
        return 0.0, ""  # one odd word over and over is a loop, not soup
    rate = len(weird) / len(lettered)
    # A word no list holds is weaker evidence than a malformed one (names, transliterations, rare
    # terms): a text is soup on that count alone only when most of its checked words are.
    shape = sum(1 for w in weird if w.weird != NOT_A_WORD) / len(lettered)
    listed = [w for w in lettered if w.listed is not None]
    missing = sum(1 for w in listed if not w.listed) / len(listed) if len(listed) >= 4 else 0.0
    n_missing = sum(1 for w in listed if not w.listed)
    lexicon = (missing - LEXICON_LOW) / LEXICON_SPAN if n_missing >= LEXICON_MIN else 0.0
    unlisted = (rate - shape) / 2 if n_missing >= LEXICON_MIN else 0.0
    score = min(1.0, max(0.0, (shape + unlisted - 0.06) / 0.19, lexicon))
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
        if t.structured and text[text.rfind("\n", 0, line[0].start) + 1 :].startswith(("  ", "\t")):
            continue  # an indented line of code: its strings and names are not running text
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
    rate = sum(1 for w in marked if w.fw) / len(marked)
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
        if t.english_text:
            signals.append(
                (
                    "salad",
                    lambda chunk: structure.salad(
                        [(w.key, w.fw is not None and not w.code) for w in chunk if w.letters],
                        _common_english,
                    ),
                )
            )
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


def _flood_signal(text: str, structured: bool) -> tuple[tuple[float, str], tuple[float, str]]:
    """The worst run of one short unit glued to itself (!!!!, ####, <pad><pad>, carecare): a
    flood; and the worst run of whole tokens repeated (opacity opacity ..., ciel, ciel): a loop."""
    best = (0.0, "")
    n = len(text)
    toks = []
    # glued floods inside one whitespace-free token: yondyondyond, !!!!!!, <pad><pad>, 't't't
    for tm in _TOKEN.finditer(text):
        tok = tm.group()
        toks.append(tok.rstrip(",.;:") or tok)  # ciel, ciel, ciel.: one word over and over
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
                    (f"{shown!r} repeated {span // len(unit)} times at char {pos + m.start()}"),
                )
    glued, best = best, (0.0, "")
    # the same token (or pair, or triple) over and over: opacity opacity ..., <pad> <pad>
    finished = _FINISHED.search(text) is not None
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
                best = _token_run(best, toks, i, period, run, finished)
            run = 0
    if in_runs > 10:
        score = min(1.0, (in_runs - 10) / 15)
        if score > best[0]:
            best = (score, f"{in_runs} tokens in runs of one token repeated back to back")
    return glued, best


def _rule_line(text: str, tm: re.Match) -> bool:
    """The token sits on a line of rule characters only (a rule, underline or table border)."""
    before = text.rfind("\n", 0, tm.start())
    after = text.find("\n", tm.end())
    line = text[before + 1 : len(text) if after < 0 else after]
    return all(c in _BENIGN_UNIT or c == "#" for c in line)


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
        if where == "line" and span < 200:
            return 0.0  # a banner of # on a line of its own
        low = 40 if structured else 12
        return min(1.0, max(0.0, (span - low) / low))
    if reps < 6:
        return 0.0
    if structured and where != "word" and not (unit == "," and span >= 8):
        return min(1.0, max(0.0, (span - 5) / 15))
    return min(1.0, max(0.0, (span - 3) / 8))  # in prose, or glued inside a word: ab,,,,,,cd


END_LOOP_REPEATS = 6  # one word or phrase 6 times back to back, up to the very end


def _token_run(
    best: tuple[float, str], toks: list[str], end: int, period: int, run: int, finished: bool
) -> tuple[float, str]:
    """Score `run` repeats of a `period`-token unit ending at token `end`. A loop that reaches the
    end of the answer never stopped (the token limit cut it): fewer repeats suffice there."""
    total = run + period
    # (a finished sentence, "yes, yes, yes.", stopped by itself: no shortcut)
    at_end = end == len(toks) and total // period >= END_LOOP_REPEATS and not finished
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
    "s es ed d ing er ers ly al ally ness ment ments ion ions able ful less".split()
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
    badness = mojibake_badness(text) if _LATIN1_RANGE.search(text) else 0
    if moji >= 2 or badness:
        out.append(
            _Signal(
                "mojibake",
                min(1.0, max(0.25 * moji, 0.5 + badness / 20 if badness else 0.0)),
                f"{moji} mojibake sequences (UTF-8 read as Latin-1 or cp1252, e.g. 'Ã©'); "
                f"ftfy's badness {badness}",
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
        is_structured(expect) and _looks_structured(text),
        compounding=not expect or any(e.split("-")[0].lower() in _COMPOUNDING for e in expect),
    )
    t.langs, t.english_text = _lexicon_langs(text, expect)
    _words(t)
    _mark_function_words(t)
    signals = _windowed(t)
    signals += _chars_signal(text)
    toks = _TOKEN.findall(text)
    flood, loop = _flood_signal(text, t.structured)
    for name, (score, reason) in (
        ("flood", flood),
        ("loop", loop),
        ("diversity", _diversity_signal(t.words, text)),
        ("fragments", _fragment_signal(t)),
        ("tail", _tail_signal(t)),
        ("collapse", _collapse_signal(t)),
        ("prefix", _prefix_signal(t)),
        ("repetition", _repetition_signal(text)),
        ("punctuation", structure.punctuation_flood(text)),
        ("bangs", structure.bang_flood(toks)),
        ("short-loop", structure.short_unit_loop(toks, text.strip().count("\n") + 1)),
        ("line-loop", structure.line_loop(text)),
        ("dashes", structure.dash_soup(text)),
        ("capitals", _salad_signal(t)),
        ("clusters", structure.punctuation_clusters(toks) if not t.structured else (0.0, "")),
        ("symbols", structure.symbol_tail(text) if not t.structured else (0.0, "")),
    ):
        signals.append(_Signal(name, score, reason))
    keep = 1.0
    for s in signals:
        keep *= 1.0 - s.score
    score = round(1.0 - keep, 3)
    shown = sorted((s for s in signals if s.score >= 0.1), key=lambda s: -s.score)
    reasons = [f"{s.name} ({s.score:.2f}): {s.reason}" for s in shown]
    garbled = score >= THRESHOLD
    verdict = GarbleVerdict(
        garbled=garbled, score=score, reasons=reasons, kind=_kind(shown) if garbled else ""
    )
    strings = _json_strings(text) if t.structured else ""
    if strings:
        inner = detect(strings, None)  # data may be in any language: judged as such
        if inner.score > verdict.score:
            return inner.model_copy(
                update={"reasons": [f"in JSON strings: {r}" for r in inner.reasons]}
            )
    return verdict


# Which garble family each signal speaks for.
_SIGNAL_KIND = {
    "script": "multi-script",
    "soup": "non-words",
    "fragments": "non-words",
    "tail": "collapse",
    "collapse": "collapse",
    "prefix": "non-words",
    "function-words": "salad",
    "salad": "salad",
    "capitals": "salad",
    "clusters": "non-words",
    "flood": "flood",
    "diversity": "flood",
    "punctuation": "flood",
    "bangs": "flood",
    "special": "flood",
    "short-loop": "loop",
    "dashes": "non-words",
    "line-loop": "loop",
    "loop": "loop",
    "repetition": "loop",
    "replacement": "mojibake",
    "control": "mojibake",
    "mojibake": "mojibake",
    "symbols": "collapse",
}
_ENGINE_ONLY = frozenset({"multi-script", "non-words", "mojibake"})
_TIE_FIRST = ("loop", "flood")  # on equal scores, the loop explains the rest (no function words)


def _kind(shown: list[_Signal]) -> str:
    """The family of the strongest signal; a loop is only a loop when no sign of engine damage
    (soup, scripts, mojibake) comes close, and a window that was clean before it is a collapse."""
    kinds = sorted(
        ((_SIGNAL_KIND.get(s.name, "non-words"), s) for s in shown),
        key=lambda ks: (-ks[1].score, ks[0] not in _TIE_FIRST),
    )
    kind, top = kinds[0]
    if kind == "loop" and any(k in _ENGINE_ONLY and s.score >= 0.5 for k, s in kinds[1:]):
        kind = next(k for k, s in kinds[1:] if k in _ENGINE_ONLY and s.score >= 0.5)
    if kind != "loop" and "(clean before)" in top.reason:
        return "collapse"
    return kind


def _common_english(word: str) -> bool:
    return zipf(word, "en") >= COMMON_SHORT_ZIPF


COMMON_SHORT_ZIPF = (
    4.5  # a short word this frequent is a word (am, he, ai), not a fragment (ov, ux)
)


def _salad_signal(t: _Text) -> tuple[float, str]:
    """Capitalised words strung together on a line of prose."""
    lines = [line.split() for line in t.text.split("\n")] if not t.structured else []
    return structure.capitalised_run(lines)


def _lexicon_langs(text: str, expect: list[str] | None) -> tuple[tuple[str, ...], bool]:
    """Languages whose word lists judge the Latin-script words (English, the expected ones, and
    when the item names no Latin-script language, the ones pycld2 finds in the text); and
    whether the text is English (expected, or found)."""
    named = [c for c in (wordfreq_code(e) for e in expect or ()) if c]
    langs = ["en", *named]
    guessed: tuple[str, ...] = ()
    if not expect or not any(LANG_SCRIPTS.get(c, _NONE) == _LATIN_ONLY for c in named):
        guessed = guess_languages(text)
        langs += guessed or LATIN_DEFAULT[1:]
    latin = [c for c in named if LANG_SCRIPTS.get(c) == _LATIN_ONLY]
    english = latin == ["en"] if latin else guessed[:1] == ("en",) and not named
    return tuple(dict.fromkeys(langs)), english


def check_response(response: Response, expect: list[str] | None = None) -> dict | None:
    """The worst verdict over content, reasoning and tool-call arguments:
    {garbled, score, kind, reasons, channel} or None when there is no text at all."""
    worst: dict | None = None
    channels: list[tuple[str, str | None, list[str] | None]] = [
        ("content", response.content, expect),
        ("reasoning", response.reasoning, expect),
    ]
    for call in response.tool_calls:
        args = call.arguments
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        channels.append((f"tool_calls.{call.name}", raw, [*(expect or ["en"]), "json"]))
    for channel, text, want in channels:
        if not text or not text.strip():
            continue
        v = detect(text, want)
        if worst is None or v.score > worst["score"]:
            worst = {
                "garbled": v.garbled,
                "score": v.score,
                "kind": v.kind,
                "reasons": v.reasons,
                "channel": channel,
            }
    return worst


def _json_strings(text: str) -> str:
    """The string values of a JSON document that hold a space, one a line; '' when `text` is not
    JSON. Prose inside strings is judged as prose: tool-call arguments and JSON answers hold it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
    if not body.startswith(("{", "[")):
        return ""
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    out: list[str] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str) and " " in node.strip():
            out.append(node)
    return "\n".join(out)


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
    call = f"GARBLED ({verdict.kind})" if verdict.garbled else "clean"
    lines = [
        (
            f"{call}: score {verdict.score:.2f} (garbled at >= {THRESHOLD:.2f}); "
            f"{len(text)} chars; expected scripts: {where}"
        )
    ]
    if not text.strip():
        lines.append("  (empty text: nothing to judge)")
    lines += [f"  - {r}" for r in verdict.reasons] or ["  (no signal fired)"]
    if verdict.loop:
        lines.append(
            "  (a loop of real words: healthy small models loop too, engine damage seldom)"
        )
    return "\n".join(lines)

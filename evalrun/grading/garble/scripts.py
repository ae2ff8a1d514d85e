"""Writing systems and languages for the garble detector: which scripts a language's text may
use, which letters belong to which script, which answers are code-like, and the function words
of the Latin- and Cyrillic-script languages."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

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
yang dan di ini itu dengan untuk dari ke tidak ada pada oleh akan juga sudah bisa atau adalah
saat karena jika kami kita saya anda mereka dia sebagai dalam bahwa telah lebih harus agar seperti
je v se na to že s z do
и в не на что с по это как а к но из у о за от для то же ты я он она мы вы они его ее её их
без при через под над про который которые которая которое также может этот эта эти этого
ней него нему ним них нам нас вам вас мне меня себя свой своей там тут здесь где чем очень можно
нужно будет быть до после между перед всех всего
был была было были есть бы ли или так все всё уже только еще ещё когда если
і та що як від це
""".split()
)


# A syllable of one or two letters said over and over: laughter (hahaha, jajaja, kkkk, wkwkwk).
LAUGH = re.compile(r"(\w{1,2})\1{2,}", re.I)


def closing_rule(text: str) -> int:
    """Where the answer's last line starts when it is a rule that closes a layout: a caption
    between two rules (`==== 6 passed in 0.84s ====`), or a line of one mark after a line of
    words (release notes, a banner); -1 when it is not (a flood run to the token limit)."""
    stripped = text.rstrip()
    start = stripped.rfind("\n") + 1
    last = stripped[start:].strip()
    if CAPTIONED_RULE.fullmatch(last):
        return start
    if not (RULE.fullmatch(last) and len(last) <= RULE_MAX):
        return -1
    lines = [line for line in stripped[:start].split("\n") if line.strip()]
    return start if lines and len(_WORDS.findall(lines[-1])) >= 2 else -1


RULE = re.compile(r"([=*~#_-])\1{2,}")
CAPTIONED_RULE = re.compile(r"([=*~#_-])\1{2,} [^\n]{0,60}?\w[^\n]{0,60}? \1{3,}")
RULE_MAX = 80  # a rule closing an answer is a line of this many marks at most, not a flood
_WORDS = re.compile(r"[^\W\d_]{2,}")


# The languages FUNCTION_WORDS speaks for (wordfreq codes where they differ: fil, nb). Not
# Turkish: like Finnish or Hungarian it puts in suffixes what these put in words (sinemaya gittim).
FUNCTION_WORD_LANGS = frozenset("en fr de es it pt nl sv pl vi id ms cs sk ru uk be bg".split())


SCRIPT_NAMES = frozenset(s for v in LANG_SCRIPTS.values() for s in v) | {
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


CJK = frozenset({"han", "hiragana", "katakana", "hangul", "bopomofo"})


COMPANIONS = {
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
        elif key in SCRIPT_NAMES:
            out.add(key)
        elif key in STRUCTURED:
            pass  # a kind of text (code, json, table), written in Latin letters: no lookup
        else:
            out |= likely_scripts(key)
    for s in list(out):
        out |= COMPANIONS.get(s, set())
    return frozenset(out)


LATIN_ONLY = frozenset({"latin"})


# ISO 15924 script codes -> the script names `char_script` gives (first word of Unicode names).
_ISO15924 = {
    "Latn": "latin", "Cyrl": "cyrillic", "Grek": "greek", "Arab": "arabic", "Hebr": "hebrew",
    "Deva": "devanagari", "Beng": "bengali", "Guru": "gurmukhi", "Gujr": "gujarati",
    "Orya": "oriya", "Taml": "tamil", "Telu": "telugu", "Knda": "kannada", "Mlym": "malayalam",
    "Sinh": "sinhala", "Thai": "thai", "Laoo": "lao", "Tibt": "tibetan", "Mymr": "myanmar",
    "Geor": "georgian", "Armn": "armenian", "Ethi": "ethiopic", "Khmr": "khmer",
    "Mong": "mongolian", "Hang": "hangul", "Kore": "hangul", "Hani": "han", "Hans": "han",
    "Hant": "han", "Jpan": "han", "Thaa": "thaana", "Syrc": "syriac", "Cher": "cherokee",
    "Yiii": "yi", "Cans": "canadian", "Tfng": "tifinagh", "Nkoo": "nko", "Vaii": "vai",
    "Olck": "ol", "Adlm": "adlam", "Java": "javanese", "Bali": "balinese", "Bugi": "buginese",
}  # fmt: skip


@functools.cache
def likely_scripts(code: str) -> frozenset[str]:
    """The script a language tag is usually written in, from CLDR's likely subtags (the
    `langcodes` library, a wordfreq dependency): pa -> gurmukhi, si -> sinhala, sr -> cyrillic.
    Empty for a tag that names no known language."""
    import langcodes  # imported only for a language this module does not list itself

    try:
        lang = langcodes.Language.get(code)
    except (LookupError, ValueError):
        return frozenset()
    if not lang.is_valid() or not lang.language:
        return frozenset()
    script = _ISO15924.get(lang.maximize().script or "")
    return frozenset({script}) if script else frozenset()


# Signs of code, JSON, YAML or a table: a line opening with a keyword, ending in ; { }, assigning
# or keying a value, a table row, a fence, a call. Soup answered to a code item has none of them
# and is judged as prose.
_LOOKS_STRUCTURED = re.compile(
    r"^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|with|function|const|"
    r"let|var|public|private|static|fn|func|package|#include|select|insert|update|create)\b"
    r"|[;{}]\s*$|^\s*[-\w.\[\]\"'$]+\s*[:=]\s*\S|^\s*\|.*\|\s*$|```|\w\(.*\)|\A\s*[{\[<]",
    re.MULTILINE | re.IGNORECASE,
)


def looks_structured(text: str) -> bool:
    return _LOOKS_STRUCTURED.search(text) is not None


_QUOTED = re.compile(r'"[^"\n]*"')


_HEX_OFFSET = re.compile(r"^[0-9a-fA-F]{4,16}:?\s", re.MULTILINE)


def looks_like_code(text: str) -> bool:
    """Most lines of a text of three or more read as code whatever the item expects: they end in
    { } ; ( or :, open with a keyword or indentation, assign, call or pipe. Soup has the symbols
    but not the line shapes."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 3:  # one or two lines: a shell command line (grep -Eiw 'the|a' f | wc -l)
        return bool(lines) and all(_SHELL_LINE.match(line) for line in lines)
    code = sum(1 for line in lines if _CODE_LINE.search(line))
    return code >= 0.6 * len(lines)


_SHELL_LINE = re.compile(
    r"\s*(?:\$\s*)?(?:sudo\s+)?(?:grep|egrep|sed|awk|find|curl|wget|git|docker|kubectl|pip3?|npm|"
    r"ls|cat|tar|ssh|scp|rsync|python3?|make|apt(?:-get)?|brew|systemctl|journalctl|chmod|chown|"
    r"cp|mv|rm|mkdir|head|tail|sort|uniq|wc|xargs|jq|helm|ffmpeg|openssl)\s+(?:-{1,2}\w|\S+\s*\|)"
)


_CODE_LINE = re.compile(
    r"[{};(\[]\s*$|^\s*[}\])]|^(?:\s{2,}|\t)\S|^\s*(?:def|class|import|from|return|if|elif|"
    r"else|for|while|try|except|with|function|const|let|var|val|public|private|static|fn|func|"
    r"package|struct|object|impl|use|module|#include|select|insert|update|create|FROM|RUN|COPY|"
    r"WORKDIR|ENV|CMD|Host|server|location)\b|^\s*[-\w.$@]+\s*(?:=|:=|<-|->|=>|\+=)\s*\S"
    r"|\w\(.*\)\s*$|\s\|\s*[\w-]+|^\s*(?:\$|>>>|PS>|#!)\s*\S"
)


def looks_tabular(text: str) -> bool:
    """CSV, TSV, pipe tables and hex dumps whatever the item expects: three or more lines, most
    with the same number (two or more) of one delimiter, or opening with a hex offset. Soup
    scatters its commas and bars; data repeats its columns line after line."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 3:
        return False
    if len(_HEX_OFFSET.findall(text)) >= 3:
        return True
    for delim in ",\t|;":
        counts = Counter(_QUOTED.sub("", line).count(delim) for line in lines)
        width, n = counts.most_common(1)[0]
        if width >= 2 and n >= max(3, 0.7 * len(lines)):
            return True
    return False


def is_structured(expect: list[str] | None) -> bool:
    """True when the item expects code-like output (code, json, math, tables, ...)."""
    return bool(expect) and any(e.strip().lower() in STRUCTURED for e in expect or ())


script_cache: dict[str, str] = {chr(c): "latin" if chr(c).isalpha() else "" for c in range(128)}


# Punctuation and symbols at either end of a token (a regex: EDGE.sub("", token) is its core).
EDGE = re.compile(r"^[\W_]+|[\W_]+$")

# Kana and Han, for a regex character class: Chinese and Japanese, written without spaces.
KANA_HAN = "\u3040-\u30ff\u3400-\u9fff"


def is_box(c: str) -> bool:
    """Box drawing and block elements: diagrams, bars, trees."""
    return "\u2500" <= c <= "\u259f"


# Stripped from both ends of a whitespace-separated token to get the word.
PUNCT = (
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
    got = script_cache.get(ch)
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
    script_cache[ch] = script
    return script

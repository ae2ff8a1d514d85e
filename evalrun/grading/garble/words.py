"""The garble detector's view of a text: its words, each with its scripts, whether it is a word
(shape rules, then the word lists of `lexicon`) and whether it is running text."""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from evalrun.grading.garble.lexicon import (
    LATIN_LISTS,
    known,
    pair_association,
)
from evalrun.grading.garble.romanized import ARABIZI, romanized_language, transliterated
from evalrun.grading.garble.scripts import (
    CJK,
    FUNCTION_WORDS,
    LANG_SCRIPTS,
    LAUGH,
    PUNCT,
    char_script,
    script_cache,
)
from evalrun.verdicts import SIGNAL_FAMILY, Family, SignalName


@dataclass
class Signal:
    name: SignalName  # declared in verdict.SIGNAL_FAMILY with its family
    score: float
    reason: str

    @property
    def family(self) -> Family:
        return SIGNAL_FAMILY[self.name]


@dataclass(slots=True)
class Word:
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
    caps: bool = False  # written in capitals: an acronym, a code, a sequence (PO, ATG, HTTP)
    title: bool = False  # starts with a capital (a name, a weekday, a sentence's first word)
    stop: bool = False  # punctuation ends it (, ; . : ! ? ) and dashes): a list or clause ends


@dataclass
class Text:
    text: str
    expected: frozenset[str] | None
    structured: bool
    compounding: bool = True
    tabular: bool = False  # CSV, TSV, a pipe table or a hex dump: every line is data
    langs: tuple[str, ...] = ()  # wordfreq codes Latin words are checked against; () = no lexicon
    english_text: bool = False  # English expected, or no language given and the text reads English
    function_words: bool = True  # its languages are ones FUNCTION_WORDS speaks for
    check_words: bool = False  # its Latin words are looked up in the word lists of `langs`
    reads_english: bool = False  # English, or pycld2 sure it is English whatever was asked:
    # English's word pairs judge it (never romanized text)
    headline: bool = False  # the answer opens with a title in title case
    romanized: str = ""  # the language it is written in romanized (hi: Hinglish), if one is
    lang: str | None = None  # the language of its running text (pycld2 sure, or the one expected)
    words: list[Word] = field(default_factory=list)


_INLINE_CODE = re.compile(r"`[^`\n]{1,40}`")


_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


TOKEN = re.compile(r"\S+")


def _prose_tokens(line: str) -> Iterator[re.Match[str]]:
    """Words of a prose line: split at spaces, and at a comma glued between two words of four
    letters or more in a run of long pieces (soup glues words so: standcritics,muscletransport);
    1,000, a,b and `get deploy,sts,ds` stay whole."""
    for m in TOKEN.finditer(line):
        pieces = m.group().split(",")
        if len(pieces) < 2 or len(m.group()) < 7 * len(pieces):
            yield m  # short pieces: a list of names or flags (deploy,sts,ds,rs)
            continue
        start = m.start()
        for cut in _GLUED_COMMA.finditer(line, m.start(), m.end()):
            yield from TOKEN.finditer(line, start, cut.start())
            start = cut.end()
        yield from TOKEN.finditer(line, start, m.end())


_GLUED_COMMA = re.compile(r"(?<=[^\W\d_]{4}),(?=[^\W\d_]{4})")


_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāēīōūăęąěůőű")


_CYR_VOWELS = frozenset("аеёиоуыэюяіїєў")


_CONS_RUN = re.compile(r"[bcdfghjklmnpqrstvwxzß]{6,}")


_CONS_RUN_LONG = re.compile(r"[bcdfghjklmnpqrstvwxzß]{9,}")


LATIN = frozenset({"latin"})


_LATIN_CYR = frozenset({"latin", "cyrillic"})


_PUNCT_RUN = re.compile(r"[,;!?]{3,}|[\[\](){}]{3,}")  # ,,,, or ([( inside a word


_BRACKETS = re.compile(r"[\[\]{}()<>|\"'`]")


_MD_LINK = re.compile(r"!?\[[^\]]{0,200}\]\([^)]{0,400}\)")


_CODE_CHARS = re.compile(r"[=(){}\[\]<>;|`_/\\#*$@^~&]")


# Hashes, hex and base64 blobs, keys: long runs of letters and digits with many digits.
_BLOB = re.compile(r"(?=(?:[A-Za-z]*\d){4})[A-Za-z0-9+]{16,}={0,2}")


# No path segment, identifier or key has thirty letters in a row; soup glued into one does.
_LONG_LETTERS = re.compile(r"[^\W\d_]{30,}")


# The one-letter codes of amino acids (a superset of DNA's ACGT and N).
_SEQUENCE = re.compile(r"[ACDEFGHIKLMNPQRSTVWY]+")


_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")  # URL-encoded: evalrun%20garble%20corpus


_QUALIFIED = re.compile(r"[A-Za-z]\w*(?:(?:\.|::)[A-Za-z]\w*)+")


_CAMEL = re.compile(r"(?:[A-Z][a-z]{2,})+")


_PROSE_LIKE = re.compile(r"[^\W\d_]+")  # letters only: camelCase aside, code rarely looks like this


NONE: frozenset[str] = frozenset()


# Languages that glue words into long compounds with long consonant runs.
COMPOUNDING = frozenset({"de", "nl", "sv", "da", "no", "fi", "is", "pl", "cs", "hu", "et"})


_CASE_FLIP_INNER = re.compile(
    r"^[a-zà-ÿ]*[a-zà-ÿ]{3}[A-ZÀ-Þ]|[a-zà-ÿ]{4}[A-ZÀ-Þ][a-zà-ÿ]|[A-Z]{2}[a-z]{3,}[A-Z]"
)


_INNER_PUNCT = re.compile(r"[^\w.,'’\-:&+]")


_LATEX = re.compile(r"\$[^$\n]{1,200}\$|\\[a-zA-Z]+(?:\{[^}\n]{0,80}\}|\[[^\]\n]{0,80}\])*")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


STOPS = frozenset(",;.:!?)]—–…")


# A short phrase of two words or more in quotes or brackets, where prose cites another language:
# its words need be in no list. (Not a docstring, nor one-word strings in a JSON list.)
_SET_APART = re.compile(
    r'(?<!["\w])"[^"\n ]{1,60} [^"\n]{1,40}"(?!")|“[^”\n]{1,40}”|«[^»\n]{1,40}»'
    r"|\([^)\n ]{1,60} [^)\n]{1,40}\)"
)


# Quoted, bracketed or emphasised stretches: where a glossary, a language lesson or a lesson on
# word order sets words apart to speak about them.
QUOTED = re.compile(
    r'"[^"\n]{1,200}"|“[^”\n]{1,200}”|«[^»\n]{1,200}»|\([^)\n]{1,200}\)|\*[^*\n]{1,200}\*|_[^_\n]{1,200}_'
)


def read_words(t: Text) -> None:
    """Split the prose part of the text into words with their scripts and weirdness."""
    # Inline code is not prose: blank it out (keeping offsets) unless the whole answer is code
    # anyway. Inside fenced blocks and structured answers, symbol-dense lines are code, JSON or
    # table rows whose identifiers follow code rules (_weird_reason); lines of plain words there
    # (comments, explanations, and the junk a collapse leaves inside a block) are read as prose.
    prose = t.text
    if not t.structured:  # LaTeX commands and $math$ are not prose either
        prose = _LATEX.sub(_blank, _INLINE_CODE.sub(_blank, prose))
    cache = script_cache
    quoted = [m.span() for m in _SET_APART.finditer(prose)]
    offset = 0
    fenced = False
    for line in prose.split("\n"):
        if _FENCE_LINE.match(line):
            fenced = not fenced
            offset += len(line) + 1
            continue
        code = (
            t.tabular
            or (t.structured or fenced)
            and (_code_line(line) or fenced and len(line.split()) < 8)
        )  # (a short line in a fenced block is code: USER nonroot:nonroot)
        sentences = _string_sentences(line) if code else ()
        for m in TOKEN.finditer(line) if code else _prose_tokens(line):
            tok = m.group()
            core = tok.strip(PUNCT)
            word_code = code and (  # (a placeholder in an f-string stays code: {exc.errors()})
                _CODE_CHARS.search(tok) is not None
                or not any(lo <= m.start() < hi for lo, hi in sentences)
            )
            if (
                not word_code
                and len(tok) >= 5
                and not (core.isalnum() and len(tok) - len(core) < 5)
                and len(_BRACKETS.findall(tok)) >= 5
                and not _MD_LINK.search(tok)
                and not any(c in tok for c in "/=:")
                and not _bracketed_name(core)
            ):
                junk = Word(offset + m.start(), NONE, 0, tok, False, word_code, "symbol junk")
                t.words.append(junk)
                if not core:
                    continue
            if not core:
                continue
            if core.isascii():
                letters = len(core) if core.isalpha() else sum(map(str.isalpha, core))
                scripts = LATIN if letters else NONE
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
            w = Word(
                offset + m.start(), scripts, letters, core.lower(), tok.endswith(","), word_code
            )
            w.caps = letters > 1 and core.isupper()
            w.title = core[:1].isupper() and not w.caps
            w.stop = tok[-1] in STOPS or tok[0] in "(—–"
            if len(scripts) > 1:
                w.per_script = found
            if letters >= 6 or (letters and (len(scripts) > 1 or not core.isalpha())):
                w.weird = _weird_reason(core, scripts, letters, t, word_code)
            if (
                not w.weird
                and t.check_words
                and not word_code
                and core.isalpha()
                and core.islower()
            ):
                w.listed = _listed(w.key, scripts, letters, t.langs)
                if w.listed is False and any(a <= w.start < b for a, b in quoted):
                    w.listed = None  # a phrase set apart: "kya scene hai", (no te preocupes)
                if w.listed is False:
                    w.weird = NOT_A_WORD
            t.words.append(w)
        offset += len(line) + 1
    t.romanized = romanized_language(
        [w.key for w in t.words if w.scripts == LATIN and not w.code and w.key.isalnum()]
    ) or transliterated([w.key for w in t.words if w.listed is False])
    if t.romanized:  # (Hinglish that pycld2 calls English is no English for the word lists)
        t.english_text = t.function_words = t.reads_english = False
    if t.romanized == "ar":
        for w in t.words:
            if ARABIZI.match(w.key):
                w.weird, w.listed = "", None  # (its digits are letters: 3ala, 7aga)
    if t.check_words and (t.romanized or not t.english_text):
        _only_with_odd_shapes(t)
    _second_language(t)
    _cited(t)


def _cited(t: Text) -> None:
    """Latin words a glossary cites rather than uses: a romanization in brackets right after a
    word in another script (გამარჯობა (gamarjoba), Բարեւ (barev)), and the words before a
    language tag (wau wau (de), ouaf ouaf (fr)). They are no word of the answer's language and
    not looked up."""
    text = t.text
    starts = [w.start for w in t.words]
    for m in _BRACKETED.finditer(text):
        end = _last_char(text, m.start())
        if m.group(1).strip().lower() in LANG_SCRIPTS:  # back to the separator: `, wau wau (de)`
            lo = max(text.rfind(c, 0, m.start()) for c in ",;:\n") + 1
            hi = m.start()
        elif end and char_script(text[end - 1]) not in ("", "latin"):
            lo, hi = m.start(), m.end()  # the romanization itself
        else:
            continue
        for w in t.words[bisect.bisect_left(starts, lo) : bisect.bisect_left(starts, hi)]:
            if w.listed is False:
                w.listed, w.weird = None, ""


def _last_char(text: str, pos: int) -> int:
    """The end of the text before `pos` without its trailing whitespace."""
    while pos and text[pos - 1].isspace():
        pos -= 1
    return pos


_BRACKETED = re.compile(r"\(([^()\n]{1,40})\)")


def _only_with_odd_shapes(t: Text) -> None:
    """A text pycld2 cannot place has its words looked up only when some are odd in shape too
    (glued punctuation, runs of consonants: `dellaitersLow,:")Envracti`), or when its unlisted
    words hardly ever come back. Romanized Hindi or Quechua is unlisted word after word, but
    shaped like words, and its small words recur (aur, ki, hai)."""
    if sum(1 for w in t.words if w.weird not in ("", NOT_A_WORD, CASE_FLIP)) >= ODD_SHAPES:
        return  # (a case flip is a brand as often as not: WhatsApp, YouTube)
    # (a romanized language's small words are known: that they recur need not be shown)
    unlisted = [] if t.romanized else [w.key for w in t.words if w.listed is False]
    seen: set[str] = set()
    recurring = 0
    for key in unlisted:
        recurring += key in seen
        seen.add(key)
    if len(unlisted) >= 5 and recurring < RECURRING * len(unlisted):
        return  # unlisted words that never come back: soup (a language repeats aur, ki, hai)
    for w in t.words:
        if w.listed is not None:
            w.listed = None
            if w.weird == NOT_A_WORD:
                w.weird = ""


ODD_SHAPES = 2
RECURRING = 0.1  # share of unlisted words met before in the text, under which they are soup
CASE_FLIP = "case flip inside"


def _second_language(t: Text) -> None:
    """Words no list of `langs` holds, most of them in one other language's list: the answer
    switches into that language (`Le call de ce matin était un peu chaotique` read as English
    by pycld2), and they are words. Soup's fragments are in no one language's list."""
    missing = [w for w in t.words if w.listed is False]
    if len(missing) < 4:
        return
    for lang in LATIN_LISTS:
        if lang in t.langs:
            continue
        found = [w for w in missing if known(w.key, (lang,))]
        if len(found) >= SECOND_LANGUAGE_SHARE * len(missing):
            t.langs = (*t.langs, lang)
            for w in found:
                w.listed, w.weird = True, ""
            return


SECOND_LANGUAGE_SHARE = 0.6  # of the unlisted words, in one other language's list


def _headline(line: list[Word]) -> bool:
    """Words in title case (small function words may stay lower case), none twice, sixteen at
    most, and pairs English writes together (`council backs`, `bike lane`): a headline. Capitalised
    nouns strung at random repeat some and pair with nothing (Vienna Vienna Copper Meadow)."""
    keys = [w.key for w in line]
    if not 4 <= len(line) <= HEADLINE_WORDS or len(set(keys)) < len(keys):
        return False
    if not all(w.title or w.key in FUNCTION_WORDS and len(w.key) <= 4 for w in line):
        return False
    pairs = [pair_association(a, b) for a, b in itertools.pairwise(keys)]
    judged = [p for p in pairs if p is not None]
    return len(judged) >= 2 and sum(judged) / len(judged) >= 0


HEADLINE_WORDS = 16


def _string_sentences(line: str) -> list[tuple[int, int]]:
    """Spans of a code line's string literals that hold a sentence (four spaces or more, closed
    or running to the end of the line): print("Hello, how are you today?") is prose inside code,
    and so is the soup a collapse leaves in a literal."""
    return [
        m.span(2)
        for m in _STRING_LITERAL.finditer(line)
        if m.group(2).count(" ") >= 4 and not _class_list(m.group(2))
    ]


def _class_list(literal: str) -> bool:
    """Most of its words are hyphenated or carry digits or colons: CSS classes (`inline-flex
    px-4 hover:bg-indigo-500`), flags or keys, not a sentence."""
    words = literal.split()
    return sum(1 for w in words if any(c in w for c in "-:_") or any(c.isdigit() for c in w)) > (
        len(words) / 2
    )


_STRING_LITERAL = re.compile(r"([\"'])((?:(?!\1)[^\\\n]|\\.)+)(?:\1|$)")


def _code_line(line: str) -> bool:
    """A line of code, JSON or a table in a structured answer or a fenced block: indented or
    symbol-dense. A comment or docstring line that reads as words is prose (it is written for
    people, and it is where a collapse inside code shows)."""
    comment = _COMMENT.match(line)
    body = line[comment.end() :] if comment else line.strip()
    words = len(body.split())
    if words >= (4 if comment or line.startswith(("  ", "\t")) else 8):
        if sum(c.isalpha() or c == " " for c in body) >= 0.85 * len(body) and not (
            _CODE_SIGN.search(body)
        ):
            return False  # (a line of eight words or more that reads as words is prose anywhere)
    return line.startswith(("  ", "\t")) or _CODE_CHARS.search(line) is not None


# A call, an assignment or arrow, or a line ending as code lines end: not prose however wordy.
_CODE_SIGN = re.compile(r"\w\(|[=<>]|[{;(\[,]\s*$")


_COMMENT = re.compile(r"^\s*(?:#+|//+|/\*+|\*+|--|\"\"\"|\'\'\'|;+)\s*")


def _weird_reason(core: str, scripts: frozenset[str], letters: int, t: Text, code: bool) -> str:
    """Why a word is not word-like, or ''."""
    if letters < 6 and len(scripts) == 1 and core.isalpha():
        return ""  # short plain words: the checks below need six letters or mixed content
    if len(scripts) > 1 and _glued_scripts(core, scripts, code):
        return "mixed scripts"
    if code and not _PROSE_LIKE.fullmatch(core):
        return ""  # identifiers, paths, literals
    if scripts == LATIN and letters >= 4:
        if _PUNCT_RUN.search(core):
            return PUNCT_RUN  # routersrapists,,,,,,,,isburyadays
        if not _LONG_LETTERS.search(core) and (
            "/" in core
            or "@" in core
            or "_" in core
            or "=" in core
            or _QUALIFIED.fullmatch(core)
            or _BLOB.fullmatch(core)
            or _PERCENT_ESCAPE.search(core)
        ):
            return ""  # paths, URLs, e-mail addresses, identifiers, gl.glBindBuffer, AWS::EC2::VPC
        low = core.lower()
        laugh = LAUGH.fullmatch(low) is not None  # hahaha, jajajaja, wkwkwk, kkkkkk
        if letters >= 6 and not any(c in _VOWELS for c in low) and not core.isupper():
            return "" if laugh else "no vowels"
        if (
            _CONS_RUN.search(low)
            and not (t.compounding and not _CONS_RUN_LONG.search(low))
            and not core.isupper()  # MVLSPADKTNVKAAW: a protein sequence, an acronym
        ):
            return "consonant run"
        if not code and _CASE_FLIP_INNER.search(core):
            return CASE_FLIP  # camelCase is normal in code, JSON and tables
        if (
            letters >= (28 if t.compounding else 18)
            and "-" not in core
            and not _CAMEL.fullmatch(core)
            and not (core.isupper() and (letters < 18 or _SEQUENCE.fullmatch(core)))
        ):
            return "run-together"  # (not CamelCase names, nor protein or DNA sequences)
        if len(_INNER_PUNCT.findall(core)) >= 2 and not _bracketed_name(core):
            return "punctuation inside"
        if letters >= 8 and not code and _repeats_fragment(low) and not laugh:
            return "repeated fragment"
    elif (
        scripts == {"cyrillic"} and letters >= 6 and not any(c in _CYR_VOWELS for c in core.lower())
    ):
        return "no vowels"
    return ""


_NOT_LETTERS = re.compile(r"[\W\d_]+")
_HYPHEN_SLASH = re.compile(r"[-/]")


def _bracketed_name(core: str) -> bool:
    """A name built with balanced brackets, hyphens and locants: (RS)-2-(4-(2-methylpropyl)
    phenyl)propanoic, N-(4-hydroxyphenyl)acetamide, f(x), a[i][j]. Soup leaves brackets open."""
    depth = 0
    for c in core:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return False
        elif not (c.isalnum() or c in "-,'′"):
            return False
    return depth == 0 and any(c in "([{" for c in core)


def _glued_scripts(core: str, scripts: frozenset[str], code: bool = False) -> bool:
    """Letters of two writing systems glued into one word. CJK runs carry no spaces, so Latin
    words glued to Han are normal; so are Greek math symbols (Δx, sinθ) and hyphenated
    compounds with one script each side (API-ключ, JSON/данные)."""
    non_cjk = scripts - CJK
    if not (len(non_cjk) > 1 or (non_cjk and non_cjk != LATIN)):
        return False
    per = Counter(char_script(c) for c in core if c.isalpha()).most_common()
    if len(per) < 2 or (per[1][1] < 2 and per[0][0] != "latin"):
        return False  # one stray letter in a Russian word (праכмных): a small model's odd token
    if scripts <= {"greek", "latin"} and _greek_symbol(core):
        return False
    return not all(
        len({char_script(c) for c in part if c.isalpha()} - CJK) <= 1
        for part in (_NOT_LETTERS if code else _HYPHEN_SLASH).split(core)
    )  # (API-ключ; in code, sum(βαθμοί.values()): one script between separators)


NOT_A_WORD = "not a word"


PUNCT_RUN = "punctuation run inside"


def _listed(key: str, scripts: frozenset[str], letters: int, langs: tuple[str, ...]) -> bool | None:
    """Is this lower-case word in a candidate language's word list? None when not looked up."""
    if scripts != LATIN or letters < (3 if key.isascii() else 2):
        return None  # a small model's Russian or Spanish is full of made-up words: no say there
    if any(c in _TONE_MARKS for c in key):
        return None  # pinyin (nǐ hǎo), rōmaji (Tōkyō), Māori, Latvian: not in these lists
    if LAUGH.fullmatch(key):
        return None  # hahaha, jajaja, kkkk, wkwkwk, rsrs: laughter, not a word of any list
    if known(key, langs):
        return True
    if _DRAWN_OUT.search(key):  # sooooo goooood, insaaane: a word drawn out for effect
        return any(known(_DRAWN_OUT.sub(n, key), langs) for n in (r"\1\1", r"\1"))
    return False


_DRAWN_OUT = re.compile(r"(\w)\1{2,}")


_TONE_MARKS = frozenset("āēīōūǖǎěǐǒǔǚǘǜ")


def _repeats_fragment(low: str) -> bool:
    """A word that holds the same four letters twice: yondmutyond, Mutyondyond (not banana)."""
    grams = [low[i : i + 4] for i in range(len(low) - 3)]
    return len(set(grams)) < len(grams) and any(
        g.isalpha() and low.find(g, i + 4) >= 0 for i, g in enumerate(grams)
    )


# The answer ends its last sentence (closing quotes and brackets aside): generation stopped by
# itself, it did not collapse and run to the token limit mid-word.
FINISHED = re.compile(r"[.!?。！？]['\"’”»)\]*_]*\s*\Z")


def _greek_symbol(core: str) -> bool:
    """Greek letters used as math symbols (π, α2, Δx, sinθ) rather than glued to a word."""
    greek = sum(1 for c in core if char_script(c) == "greek")
    return greek <= 2 and sum(1 for c in core if c.isalpha()) - greek <= 3


_PUNCT_REPEAT = re.compile(r"([^\w\s])\1{2,}")


# A label that opens a line (sixty characters at most, then a colon, an arrow or a dash): the
# rest of the line is a list of words when no sentence ends in it.
_LIST_LABEL = re.compile(r"[^\n.!?:→]{1,60}?(?::|\s?(?:→|->|—|–)|\s-)\s")
_SENTENCE_BREAK = re.compile(r"[.!?]\s")


def mark_function_words(t: Text) -> None:
    """Flag the words of running-text lines as function words or not (others stay None)."""
    if t.expected and not t.expected & _LATIN_CYR or not t.function_words:
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
            if w.scripts
            and w.scripts <= _LATIN_CYR
            and (w.letters >= 2 or w.key in FUNCTION_WORDS)
            and not w.code
        ]
        if len(lettered) < 8:
            continue  # headings, list items, table rows
        if sum(text[w.start] in "#@" for w in lettered) >= 0.5 * len(lettered):
            continue  # hashtags and mentions: #travel #sunset @friend
        first = line[0] is words[0] and (end == len(text) or text.startswith("\n\n", end))
        if first and _headline(line):
            t.headline = True
            continue  # a title heading the answer: Tiny Town Council Backs Bold Bike Lane Plan
        span = text[line[0].start : end]
        if t.structured and text[text.rfind("\n", 0, line[0].start) + 1 :].startswith(("  ", "\t")):
            continue  # an indented line of code: its strings and names are not running text
        if _class_list(span):
            continue  # CSS classes, flags, keys: inline-flex px-4 hover:bg-indigo-500
        span = _PUNCT_REPEAT.sub("", span)  # a flood of backslashes between words is not code
        if sum(map(str.isalpha, span)) + span.count(" ") < 0.8 * len(span):
            continue  # code, JSON, tables: symbols everywhere
        if sum(w.comma for w in lettered) >= 0.4 * len(lettered):
            continue  # an enumeration: apples, pears, ...
        label = _LIST_LABEL.match(text, line[0].start, end)
        if label and not _SENTENCE_BREAK.search(text, label.end(), end):
            # `tags: travel kyoto temples`, `Einkaufsliste: Milch Eier`: a list after its label
            lettered = [w for w in lettered if w.start < label.end()]
        for w in lettered:
            w.fw = w.key in FUNCTION_WORDS
        for w, nxt in zip(line, line[1:]):
            if nxt.scripts and not nxt.scripts <= _LATIN_CYR:
                w.stop = True  # a word in another script ends the run: Tbilisi თბილისი, Kyiv
    if _letters_as_variables(t):
        for w in words:
            if w.key == "a" and t.text[w.start] == "a":
                w.fw = None  # `let a and b be integers`: a variable, not the article


def _letters_as_variables(t: Text) -> bool:
    """The text names things by single letters (`a and b`, `if a is even`): a lowercase `a`
    where no article stands, and another letter standing alone as a word (b, n, x: not the
    text-speak u and r)."""
    keys = [w.key for w in t.words]
    if "a" not in keys or not _VARIABLES & set(keys):
        return False
    return any(a == "a" and b in _NO_NOUN_AFTER for a, b in zip(keys, keys[1:]))


_VARIABLES = frozenset("bcdfghjkmnpqxyz")
_NO_NOUN_AFTER = frozenset("and or is are was equals to plus minus times".split())

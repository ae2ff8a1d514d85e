"""Function words out of order: what a salad of real words breaks that no writer does.

A word salad of one language keeps its words real and often its word pairs too (phrases of right
sentences spliced together), but it puts an article where no noun phrase can follow (`a the`,
`la un`, `its of`) and ends sentences on an article or a conjunction (`... after one the.`,
`cuando magma se el.`). Writers of any level avoid both; transcripts stutter (`the, the`) with a
comma or a dash between, which these rules skip.

The word classes are small and hand-picked per language (en fr es it pt de nl). Articles that
are also pronouns where it matters are left out: German der/die/das (relative pronouns: `bei dem
die Pflanzen`), Spanish and Portuguese el/la/o/a before `de` and `que` (`la de Juan`, `lo que`),
indefinite articles before a conjunction (they are numbers too: `una y otra vez`).
"""

from __future__ import annotations

from evalrun.grading.garble.words import QUOTED, Text, Word

# Words that open a noun phrase: the next word cannot be one of these or a preposition or
# conjunction (FOLLOW), and no sentence ends on them.
_ARTICLES = {
    "en": "the an its their our your my every",
    "fr": "le la les un une des du au aux cette ces mon ma mes ton ta tes sa ses notre nos "
    "votre vos",
    "es": "el la los las un una unos unas del al mis tus sus",
    "it": "il gli un uno una del dello della dei degli delle al allo alla ai agli alle nel "
    "nello nella nei negli nelle",
    "pt": "os um uma uns umas do da dos das na nas ao aos pelo pela pelos pelas",
    "de": "ein eine einen einem einer eines zum zur im vom beim",
    "nl": "de een",
}

# What cannot follow one of the articles: another article, a preposition, a conjunction.
_FOLLOW = {
    "en": "the a an its their our your my of to in on at by for with from and or but is are "
    "was were",
    "fr": "le la les un une des du au aux de à en dans sur par pour avec sans et ou mais cette ces",
    "es": "el la los las un una del al de en con por para sin sobre y o pero",
    "it": "il lo la gli le un uno una di da in con su per tra fra e o ma del della",
    "pt": "o a os as um uma do da dos das de em com por para sem sobre e ou mas",
    "de": "der die das den dem des ein eine einen einem einer eines von zu in an auf mit für "
    "aus bei nach und oder aber",
    "nl": "de het een van in op aan met voor uit bij naar en of maar",
}

# Indefinite articles are numbers too (`un et un font deux`, `una y otra vez`): no conjunction
# counts after them. Spanish and Portuguese articles before `de` name a thing left out (`la de
# Juan`, `o de sempre`).
_NUMBERS = frozenset("un une uno una um uma ein eine een".split())
_CONJUNCTIONS = frozenset(
    "and or but et ou mais y o pero e ma ou mas und oder aber en of maar".split()
)
# Words that may stand twice in a row: `that that is is`, `Leute die die Regeln kennen`.
_TWICE_OK = frozenset("is are was were der die das den dem des".split())
_OF_OK = {"es": frozenset({"de"}), "pt": frozenset({"de"})}
# English `a` is a letter and a variable too (`from a to z`, `a and b`, `vitamin a or d`): only
# what no letter comes before counts after it (`a the`, `a of`, `a its`; not `replace a with b`).
_AFTER_A = frozenset("the a an its their our your my of".split())

# Words no sentence ends on, beyond the articles: conjunctions and prepositions that need what
# follows them.
_NEVER_LAST = {
    "en": "and or but of",  # (not `my.`: oh my.)
    "fr": "de et ou mais dans avec pour sur",
    "es": "de y o pero en con",
    "it": "di e ma con della",
    "pt": "de e mas com em",
    "de": "und oder des",
    "nl": "en van",
}

_ARTICLE_SETS = {lang: frozenset(words.split()) for lang, words in _ARTICLES.items()}
_FOLLOW_SETS = {lang: frozenset(words.split()) for lang, words in _FOLLOW.items()}
_LAST_SETS = {  # (not `al.`: et al.)
    lang: _ARTICLE_SETS[lang] - _NUMBERS - {"my", "al"} | frozenset(words.split())
    for lang, words in _NEVER_LAST.items()
}

BREAKS_MIN = 2  # breaks in one text before it is a salad
BREAKS_RATE = 1 / 40  # and at least one in this many words of running text


def breaks(t: Text, lang: str) -> list[str]:
    """The places where running text in `lang` puts a function word where none can go:
    `a the`, `la un`, `de de`, a sentence ending on `de` or `their`. Words quoted, bracketed,
    emphasised or in code, and pairs with punctuation between, are not read."""
    articles, follow, last = _ARTICLE_SETS[lang], _FOLLOW_SETS[lang], _LAST_SETS[lang]
    quoted = [m.span() for m in QUOTED.finditer(t.text)]
    out = []
    words = t.words
    for i, a in enumerate(words):
        if a.fw is None or a.code or not _as_written(t.text, a):
            continue
        if any(lo < a.start < hi for lo, hi in quoted):
            continue  # an example quoted: "mat the on sat cat the" gets the same vector
        if a.stop:
            if a.key in last and t.text[a.start + len(a.key)] in ".!?":
                out.append(f"{a.key}.")
            continue
        b = words[i + 1] if i + 1 < len(words) else None
        if b is None or b.fw is None or b.code or not _as_written(t.text, b):
            continue
        if t.text[a.start + len(a.key) : b.start].strip():
            continue  # a dash, a comma, a full stop between: `At the - in the car park`
        if a.key == b.key and a.key in follow - _TWICE_OK and t.text[a.start] == t.text[b.start]:
            out.append(f"{a.key} {b.key}")  # a word said twice: `de de`, `of of` (not `10 A a`)
        elif a.key in articles and b.key in follow - _OF_OK.get(lang, frozenset()):
            if not (a.key in _NUMBERS and b.key in _CONJUNCTIONS):
                out.append(f"{a.key} {b.key}")
        elif lang == "en" and a.key == "a" and t.text[a.start] == "a" and b.key in _AFTER_A:
            out.append(f"a {b.key}")
    return out


def _as_written(text: str, w: Word) -> bool:
    """The word as written, not quoted or marked: `"the"`, *la*, 'de' are words spoken about."""
    end = w.start + len(w.key)
    return text[w.start : end].lower() == w.key and text[end : end + 1] not in ("'", '"', "’", "*")


def grammar_signal(t: Text) -> tuple[float, str]:
    """Running text in one of the languages above (`t.lang`) whose function words break noun
    phrases and sentences in two different ways or more (and once in forty words): a salad of
    that language's words. The more different breaks, the surer; the same breaks over and over
    are a loop's (`La cette pays est la cette pays.`)."""
    lang = t.lang
    if lang not in _ARTICLE_SETS or t.structured:
        return 0.0, ""
    running = sum(1 for w in t.words if w.fw is not None)
    found = breaks(t, lang)
    distinct = list(dict.fromkeys(found))
    if len(distinct) < BREAKS_MIN or len(found) < BREAKS_RATE * running:
        return 0.0, ""
    if len(found) > 3 * len(distinct):
        return 0.0, ""
    shown = ", ".join(f"`{b}`" for b in distinct)
    return min(1.0, 0.3 + 0.1 * len(distinct)), (
        f"{len(found)} function words where no {lang} sentence has them (an article before "
        f"another, a sentence ending on one): {shown}"
    )

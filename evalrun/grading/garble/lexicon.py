"""Is this a word, and which languages is this text in: the field's libraries, loaded lazily.

- `wordfreq` (word frequencies of ~40 languages, lists inside its wheel): a word is *known* when it
  is in the list of a candidate language: English's full list, the "small" list (the ~30-60k
  commonest words) of any other. Token soup from broken weights is made of glued fragments
  (`wisacke`, `opacityarers`) that no list holds; rare real words (`enzymes`, `bandwidth`) are in
  them, which the project's own letter-trigram model got wrong.
- `ftfy` (the mojibake fixer wordfreq itself uses) counts the character sequences that UTF-8
  read as Latin-1 or cp1252 leaves, in every script; asked only about texts with such letters.
- `pycld2` (Chromium's compact language detector, model inside its wheel, ~30 µs a text) guesses
  which languages an answer is in when the item does not say, so that a Polish or Vietnamese
  answer is checked against Polish or Vietnamese words rather than flagged.

Nothing here is imported or loaded until a text needs it: `evalrun --help` stays fast, and a run
pays each list's load (0.1-1 s) once. Nothing is downloaded at run time.
"""

from __future__ import annotations

import bisect
import math
import unicodedata
from functools import cache, lru_cache

# evalrun's language codes -> wordfreq's, where they differ.
_WORDFREQ_CODE = {"no": "nb", "tl": "fil", "sr": "sh", "bs": "sh", "hr": "sh"}
WORDFREQ_LANGS = frozenset(
    [
        "ar",
        "bg",
        "bn",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "es",
        "fa",
        "fi",
        "fil",
        "fr",
        "he",
        "hi",
        "hu",
        "id",
        "is",
        "it",
        "ja",
        "ko",
        "lt",
        "lv",
        "mk",
        "ms",
        "nb",
        "nl",
        "pl",
        "pt",
        "ro",
        "ru",
        "sh",
        "sk",
        "sl",
        "sv",
        "ta",
        "tr",
        "uk",
        "ur",
        "vi",
        "zh",
    ]
)
# Languages whose words a script's letters may spell (checked when a word is in that script).
SCRIPT_LANGS: dict[str, tuple[str, ...]] = {
    "cyrillic": ("ru", "uk", "bg", "mk"),
    "greek": ("el",),
    "arabic": ("ar", "fa", "ur"),
    "hebrew": ("he",),
    "devanagari": ("hi",),
    "bengali": ("bn",),
    "tamil": ("ta",),
    "han": ("zh", "ja"),
    "hiragana": ("ja",),
    "katakana": ("ja",),
    "hangul": ("ko",),
}
# Latin-script languages every Latin word is checked against when the item names none.
LATIN_DEFAULT = ("en", "fr", "de", "es", "it", "pt", "nl")


def wordfreq_code(lang: str) -> str | None:
    """evalrun/ISO code ('en', 'pt-BR', 'no') -> wordfreq's ('en', 'pt', 'nb'), None if it has none."""
    base = lang.strip().lower().replace("_", "-").split("-")[0]
    code = _WORDFREQ_CODE.get(base, base)
    return code if code in WORDFREQ_LANGS else None


@cache
def _wordlist(lang: str, size: str = "small") -> dict[str, float]:
    import wordfreq  # ~1 s import: kept out of evalrun's start-up

    return wordfreq.get_frequency_dict(lang, wordlist=size)


RARE_MIN_LETTERS = 6  # shorter words must be common (top ~30k): rare short "words" are fragments


@lru_cache(maxsize=1 << 17)
def known(word: str, langs: tuple[str, ...]) -> bool:
    """The lower-case word is a word of one of `langs` (wordfreq codes): in its list of common
    words, or, six letters or longer, in English's full list (enzymes, organelle)."""
    word = unicodedata.normalize("NFC", word.replace("’", "'")).casefold()  # as wordfreq stores
    stems = (word, word[:-2]) if word.endswith("'s") else (word,)
    if any(s in _wordlist(lang) for lang in langs for s in stems):
        return True
    return (
        "en" in langs
        and len(word) >= RARE_MIN_LETTERS
        and any(s in _wordlist("en", "best") for s in stems)
    )


@lru_cache(maxsize=1 << 14)
def zipf(word: str, lang: str) -> float:
    """wordfreq's Zipf frequency of a word (log10 per billion words; 0 when unlisted)."""
    freq = _wordlist(lang).get(unicodedata.normalize("NFC", word).casefold(), 0.0)
    return math.log10(freq) + 9 if freq > 0 else 0.0


@cache
def _sorted_english() -> list[str]:
    return sorted(_wordlist("en", "best"))


@lru_cache(maxsize=1 << 12)
def starts_a_word(fragment: str) -> bool:
    """Some English word starts with this lower-case fragment (a word cut at the token limit)."""
    words = _sorted_english()
    i = bisect.bisect_left(words, fragment)
    return i < len(words) and words[i].startswith(fragment)


def mojibake_badness(text: str) -> int:
    """ftfy's count of character sequences that mojibake makes and text seldom has (0 when it
    sees none): UTF-8 read as Latin-1 or cp1252 in any script (Ð¿Ñ€Ð¸, Î•Î»Î», ä½\xa0)."""
    from ftfy.badness import badness, is_bad

    return badness(text) if is_bad(text) else 0


def guess_languages(text: str) -> tuple[str, ...]:
    """The languages pycld2 finds in `text` (most text first): wordfreq's codes where it has
    lists, pycld2's own otherwise (uz, sw, yo); () if none."""
    import pycld2

    try:
        _, _, details = pycld2.detect(text.encode("utf-8", "replace"), bestEffort=True)
    except pycld2.error:  # text it cannot take (control bytes and the like)
        return ()
    out = []
    for _name, code, percent, _score in details:
        if percent < 10 or code in ("un", "xx", "xxx"):  # (pycld2's "unknown")
            continue
        wf = wordfreq_code(code) or code.lower()
        if wf not in out:
            out.append(wf)
    return tuple(out)

"""Is this a word, and which languages is this text in: the field's libraries, loaded lazily.

- `wordfreq` (word frequencies of ~40 languages, lists inside its wheel): a word is *known* when it
  is in the list of a candidate language: English's full list, the "small" list (the ~30-60k
  commonest words) of any other. Token soup from broken weights is made of glued fragments
  (`wisacke`, `opacityarers`) that no list holds; rare real words (`enzymes`, `bandwidth`) are in
  them, which the project's own letter-trigram model got wrong.
- `ftfy` (the mojibake fixer wordfreq itself uses) counts the character sequences that UTF-8
  read as Latin-1 or cp1252 leaves, in every script; asked only about texts with such letters.
- `symspellpy` (a spelling corrector) ships English word and word-pair counts from Google Books
  (82,765 words, 242,342 pairs); `pair_association` reads them to tell word order that English
  has (`of the`, `can create`) from order it avoids (`the of`, `he than`): the word-salad signal.
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
from itertools import repeat
from pathlib import Path

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


def wordlist(lang: str) -> dict[str, float]:
    """wordfreq's small list of a language: its commonest words and their frequencies."""
    return _wordlist(lang)


@cache
def _wordlist(lang: str, size: str = "small") -> dict[str, float]:
    """`wordfreq.get_frequency_dict(lang, wordlist=size)`: each word of the list and its
    frequency, the band at index i holding the words of frequency 10**(-i/100)."""
    freqs: dict[str, float] = {}
    for index, band in enumerate(_bands(lang, size)):
        # A later band wins, as ever; pairs straight from zip, with no dict a band between
        # (a quarter less time: English's full list is 321,180 words).
        freqs.update(zip(band, repeat(10 ** (-index / 100))))
    return freqs


@cache
def _bands(lang: str, size: str) -> list[list[str]]:
    """`wordfreq.get_frequency_list(lang, size)` (one sorted list of words per centibel of
    frequency), read straight from wordfreq's data files: importing wordfreq costs more than the
    lists a run needs (langcodes, its tokenizer's regexes, a walk of the stack to find its own
    folder). "best" is the large list where there is one, else the small one, as in wordfreq; a
    code without a file of its own, or a file in another format, goes through wordfreq itself."""
    import gzip

    import msgpack

    folder = _package_folder("wordfreq") / "data"
    names = ("large", "small") if size == "best" else (size,)
    path = next((p for n in names if (p := folder / f"{n}_{lang}.msgpack.gz").is_file()), None)
    if path is not None:
        header, *bands = msgpack.unpackb(gzip.decompress(path.read_bytes()), raw=False)
        if isinstance(header, dict) and header.get("format") == "cB" and header.get("version") == 1:
            return bands
    import wordfreq

    return wordfreq.get_frequency_list(lang, size)  # type: ignore[no-any-return]


def _package_folder(name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is a dependency"
    return Path(next(iter(spec.submodule_search_locations)))


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


# Latin-script languages a stray word may come from (`qualquer`, `gelegentlich`, `görevden`),
# and a whole answer may switch into: the commonest on the web, the lists loaded when asked.
LATIN_LISTS = (*LATIN_DEFAULT[1:], "pl", "tr", "sv", "id", "fil", "vi", "ro", "cs")


@lru_cache(maxsize=1 << 14)
def common_elsewhere(word: str, floor: float) -> str:
    """The Latin-script language (other than English) in which this word is commonest, when its
    Zipf frequency there reaches `floor`; '' otherwise."""
    best = max(LATIN_LISTS, key=lambda lang: zipf(word, lang))
    return best if zipf(word, best) >= floor else ""


@lru_cache(maxsize=1 << 12)
def starts_a_word(fragment: str) -> bool:
    """Some English word starts with this lower-case fragment (a word cut at the token limit):
    searched band by band of English's full list (each band is sorted; one search a band costs
    less than sorting its 321,180 words)."""
    for band in _bands("en", "best"):
        i = bisect.bisect_left(band, fragment)
        if i < len(band) and band[i].startswith(fragment):
            return True
    return False


PAIRS_FILE = "frequency_bigramdictionary_en_243_342.txt"


@cache
def _english_pairs() -> tuple[dict[str, int], dict[str, str], float]:
    """symspellpy's English counts: words, word pairs ("of the") with their counts as written
    (a pair's is read when asked: a run asks a few hundred of the 242,342), and the total of
    the words. Read from its package folder without importing it (its import pulls in a
    compiled module). Each line is `word count` or `first second count`, fields split by
    single spaces."""
    folder = _package_folder("symspellpy")

    def read(name: str) -> str:
        return (folder / name).read_text(encoding="utf-8")

    fs = read("frequency_dictionary_en_82_765.txt").split()
    words = dict(zip(fs[0::2], map(int, fs[1::2]), strict=True))
    pairs = dict(line.rsplit(" ", 1) for line in read(PAIRS_FILE).splitlines())
    return words, pairs, float(sum(words.values()))


# The pair counts come from a corpus about PAIR_SCALE times the words' (measured: a frequent word's
# pairs add up to 37-53 times its own count), and list no pair seen fewer than PAIR_FLOOR times.
PAIR_SCALE = 50
PAIR_FLOOR = 6_400_000
PMI_CLAMP = 6.0


@lru_cache(maxsize=1 << 16)
def pair_association(first: str, second: str) -> float | None:
    """How much more often English writes `first second` than two words at random would be:
    log2 of observed over expected (pointwise mutual information), clamped to ±6. For a pair the
    counts do not list, the most it could be (when even that is below 0, English avoids the
    pair: `the of`); None when the counts cannot tell (a word they lack, or a pair too rare to
    be listed either way)."""
    words, pairs, total = _english_pairs()
    a, b = words.get(first), words.get(second)
    if not a or not b:
        return None
    expected = a * b / total
    seen = pairs.get(f"{first} {second}")
    if seen is None:
        bound = PAIR_FLOOR / PAIR_SCALE / expected
        if bound > 0.5:
            return None  # rare enough that missing from the list says nothing
        return max(-PMI_CLAMP, math.log2(bound))
    return max(-PMI_CLAMP, min(PMI_CLAMP, math.log2(int(seen) / PAIR_SCALE / expected)))


def preload() -> None:
    """Load, before the answers arrive, what a run's answers nearly always need: English's small
    and full lists, the English word-pair counts, ftfy's tables, and the Latin-script lists a
    stray word in an English answer is looked up in (a grading process does this while its run
    connects and asks: ~0.45 s of CPU that would otherwise delay its first answers)."""
    for lang in ("en", *LATIN_LISTS):
        _wordlist(lang)
    _wordlist("en", "best")
    _english_pairs()
    import ftfy.badness  # noqa: F401


def mojibake_badness(text: str) -> int:
    """ftfy's count of character sequences that mojibake makes and text seldom has (0 when it
    sees none): UTF-8 read as Latin-1 or cp1252 in any script (Ð¿Ñ€Ð¸, Î•Î»Î», ä½\xa0)."""
    from ftfy.badness import badness, is_bad

    return badness(text) if is_bad(text) else 0


def guess_languages(text: str) -> tuple[tuple[str, ...], bool]:
    """The languages pycld2 finds in `text` (most text first): wordfreq's codes where it has
    lists, pycld2's own otherwise (uz, sw, yo); () if none. And whether pycld2 is sure: real
    text in any of its 80+ languages is (Basque, Swahili, Latin prose); token soup is not,
    whatever language its best guess names."""
    import pycld2

    data = text.encode("utf-8", "replace")
    try:
        sure = pycld2.detect(data)[0]  # (bestEffort calls soup reliable too, and its guesses
        _, _, details = pycld2.detect(data, bestEffort=True)  # differ: both calls are needed)
    except pycld2.error:  # text it cannot take (control bytes and the like)
        return (), False
    out = []
    for _name, code, percent, _score in details:
        if percent < 10 or code in ("un", "xx", "xxx"):  # (pycld2's "unknown")
            continue
        wf = wordfreq_code(code) or code.lower()
        if wf not in out:
            out.append(wf)
    return tuple(out), sure

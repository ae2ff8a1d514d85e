"""The garble detector's word lists, read from the packages' data files without importing them,
are the lists the packages themselves give (same words, frequencies and order)."""

from __future__ import annotations

import bisect
import random

import pytest

from evalrun.grading.extract import normalize
from evalrun.grading.garble import lexicon


@pytest.mark.parametrize(
    ("lang", "size"),
    [
        ("en", "small"),
        ("en", "best"),
        ("fr", "small"),
        ("ja", "small"),
        ("ar", "small"),
        ("fil", "small"),
    ],
)
def test_wordlists_are_wordfreqs_own(lang: str, size: str) -> None:
    import wordfreq

    ours = lexicon._wordlist(lang, size)
    theirs = wordfreq.get_frequency_dict(lang, wordlist=size)
    assert ours == theirs
    assert list(ours) == list(theirs)


def test_every_language_has_its_own_small_list() -> None:
    # (a code without a file of its own would go through wordfreq's slower lookup)
    folder = lexicon._package_folder("wordfreq") / "data"
    assert all((folder / f"small_{lang}.msgpack.gz").is_file() for lang in lexicon.WORDFREQ_LANGS)


def test_starts_a_word_matches_a_search_of_the_sorted_list() -> None:
    words = sorted(lexicon._wordlist("en", "best"))
    rng = random.Random(0)
    fragments = [w[: rng.randint(1, len(w))] for w in rng.sample(words, 500)]
    fragments += [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz'") for _ in range(4)) for _ in range(500)
    ]
    fragments += ["zzzzzz", "qxq", "ÿ"]

    def searched(fragment: str) -> bool:
        i = bisect.bisect_left(words, fragment)
        return i < len(words) and words[i].startswith(fragment)

    got = [lexicon.starts_a_word(f) for f in fragments]
    assert got == [searched(f) for f in fragments]
    assert 0 < sum(got) < len(got)


def test_english_pairs_are_symspells_lines() -> None:
    folder = lexicon._package_folder("symspellpy")

    def lines(name: str) -> dict[str, int]:
        text = (folder / name).read_text(encoding="utf-8")
        return {
            k: int(n) for k, _, n in (line.rpartition(" ") for line in text.splitlines() if line)
        }

    words, pairs, total = lexicon._english_pairs()
    assert words == lines("frequency_dictionary_en_82_765.txt")
    # a pair's count stays as written until asked for
    assert {k: int(n) for k, n in pairs.items()} == lines(
        "frequency_bigramdictionary_en_243_342.txt"
    )
    assert total == sum(words.values())
    assert int(pairs["of the"]) > 0


def test_normalize_turns_every_punctuation_mark_into_a_space() -> None:
    from evalrun.grading.extract import _PUNCT_TO_SPACE, _punct_or_symbol

    rng = random.Random(1)
    text = "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(20_000))
    spaced = "".join(" " if _punct_or_symbol(c) else c for c in text)
    assert text.translate(_PUNCT_TO_SPACE) == spaced
    assert normalize("«Hello», world!  —  ok?", punct=True) == "hello world ok"

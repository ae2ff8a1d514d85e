"""What the seeded garble builders share: their hand-written material, word lists, SmolLM2's
vocabulary and the row writers.

The material (sentences, answers, code, records, word lists) lives in bench/data/garble/<set>.yaml,
one entry a line; `material(set)` reads it. Every random draw of a builder comes from its own
seeded `random.Random`, so a builder writes the same bytes on every run (tests/test_bench_data.py
checks the committed files against them).
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import wordfreq
import yaml

from bench.mismap import reference_gguf
from evalrun.suite.load import read_jsonl

ROOT = Path(__file__).resolve().parent.parent
MATERIAL = ROOT / "bench" / "data" / "garble"
CORPUS = ROOT / "tests" / "data" / "garble"


def material(name: str) -> dict[str, Any]:
    """The hand-written material of one builder: bench/data/garble/<name>.yaml."""
    with (MATERIAL / f"{name}.yaml").open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


class FieldRows:
    """The labelled rows one field builder collects: each row's source is
    `<prefix>/<shape>/<n> <url>`, n counting the rows of that shape from 0."""

    def __init__(self, prefix: str, rng: random.Random, *, unique: bool = False) -> None:
        self.prefix = prefix
        self.rng = rng
        self.unique = unique  # keep each text once (small pools of sentences can repeat)
        self.rows: list[dict[str, object]] = []
        self.counts: Counter[str] = Counter()
        self._seen: set[str] = set()

    def add(
        self,
        family: str | None,
        shape: str,
        url: str,
        text: str,
        expect: list[str] | None,
        label: str = "garbled",
    ) -> None:
        """One row (without a family key when `family` is None)."""
        if self.unique:
            if text in self._seen:
                return
            self._seen.add(text)
        n = self.counts[shape]
        self.counts[shape] += 1
        row: dict[str, object] = {
            "text": text,
            "label": label,
            "expect": expect,
            "source": f"{self.prefix}/{shape}/{n} {url}",
        }
        if family is not None:
            row["family"] = family
        self.rows.append(row)

    def maybe(self, expect: list[str]) -> list[str] | None:
        """`expect` half the time, else None (a row that names no language)."""
        return expect if self.rng.random() < 0.5 else None


def write_rows(rows: list[dict], out: Path) -> None:
    """Write `rows` as JSON Lines, UTF-8 as is (the corpus format)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_new_rows(rows: list[dict], out: Path) -> list[dict]:
    """Write `rows` to `out`, less those whose text another committed corpus file holds (a file of
    another name in tests/data/garble), a repeat, or text `decent` refuses; the rows kept."""
    existing = {
        r["text"]
        for path in CORPUS.glob("*.jsonl")
        if path.name != out.name
        for r in read_jsonl(path)
    }
    seen, kept = set(), []
    for r in rows:
        if r["text"] in existing or r["text"] in seen or not decent(r["text"]):
            continue
        seen.add(r["text"])
        kept.append(r)
    write_rows(kept, out)
    return kept


def byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode (byte-level BPE token spelling)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


@cache
def _vocab_spellings() -> tuple[str, ...]:
    """The reference model's tokens as its GGUF spells them (byte-level BPE letters)."""
    from gguf import (
        GGUFReader,
    )  # test dependency: only the builders that use the vocabulary need it

    field = GGUFReader(str(reference_gguf())).fields["tokenizer.ggml.tokens"]
    return tuple(bytes(field.parts[idx]).decode("utf-8") for idx in field.data)


def vocab_tokens() -> list[bytes]:
    """The reference model's vocabulary, as bytes."""
    dec = byte_decoder()
    out = []
    for spelled in _vocab_spellings():
        if spelled.startswith("<|") or not all(ch in dec for ch in spelled):
            continue
        out.append(bytes(dec[ch] for ch in spelled))
    return out


def fix_sigma(word: str) -> str:
    """wordfreq folds Greek final sigma to σ; put ς back at word ends."""
    return word[:-1] + "ς" if word.endswith("σ") else word


# Frequency lists carry slurs and obscenities; the corpus has no need of them.
RUDE_PARTS = (
    "shit fuck whore cunt nigg bitch porn pussy retard suicid racis penis vagin slut horny "
    "бля хуй хуя хуе пизд ебан ебат ебал сука шлюх"
).split()
RUDE_WORDS = set("rape raped rapist cum tit tits ass anal sex sexy dick cock fag nude boob".split())


def decent(word: str) -> bool:
    low = word.lower().strip()
    return low not in RUDE_WORDS and not any(part in low for part in RUDE_PARTS)


def top(lang: str, n: int, lo: int = 0, min_len: int = 1) -> list[str]:
    """wordfreq's `n` most frequent words of `lang` from rank `lo`, less digits, short and rude
    words (a new list on every call: callers may change theirs)."""
    return list(_top(lang, n, lo, min_len))


@cache
def _top(lang: str, n: int, lo: int, min_len: int) -> tuple[str, ...]:
    words = wordfreq.top_n_list(lang, n)[lo:]
    return tuple(
        fix_sigma(w)
        for w in words
        if len(w) >= min_len and not any(c.isdigit() for c in w) and decent(w)
    )


class CharModel:
    """A character trigram model of a word list: draws pronounceable words that are not words."""

    def __init__(self, words: list[str], real: set[str], order: int = 3) -> None:
        self.order = order
        self.real = real
        self.next: dict[str, Counter] = defaultdict(Counter)
        for w in words:
            padded = "^" * order + w + "$"
            for i in range(order, len(padded)):
                self.next[padded[i - order : i]][padded[i]] += 1

    def word(self, rng: random.Random, lo: int = 5, hi: int = 12) -> str:
        for _ in range(200):
            ctx, out = "^" * self.order, ""
            while True:
                options = self.next[ctx]
                ch = rng.choices(list(options), weights=list(options.values()))[0]
                if ch == "$" or len(out) > hi:
                    break
                out += ch
                ctx = ctx[1:] + ch
            if lo <= len(out) <= hi and out not in self.real:
                return out
        return out


def vocab_pieces() -> tuple[list[str], list[str], list[str]]:
    """SmolLM2's vocabulary as text: (word-initial pieces, word-inner pieces, raw spellings)."""
    dec = byte_decoder()
    lead, inner, raw = [], [], []
    for spelled in _vocab_spellings():
        if spelled.startswith("<") or not all(ch in dec for ch in spelled):
            continue
        raw.append(spelled)
        try:
            text = bytes(dec[ch] for ch in spelled).decode("utf-8")
        except UnicodeDecodeError:
            continue
        body = text[1:] if text.startswith(" ") else text
        if not body.isalpha() or not body.isascii() or not decent(body):
            continue
        (lead if text.startswith(" ") else inner).append(text)
    return lead, inner, raw

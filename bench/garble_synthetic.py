"""Synthetic garbled rows for tests/data/garble/garbled_synthetic.jsonl (seeded, reproducible).

Covers the garble shapes from the field notes that the mis-mapped reference engine does not
produce by itself: multilingual token soup, soup of random real SmolLM2 vocabulary tokens, single
token floods (`!!!!`, `####`), short cycles (`carecarecare`, `'t't't`), mojibake and U+FFFD,
`<pad>` runs, control characters, and clean text (a real reference answer) that turns to junk after
N tokens. Clean material comes from clean_written.jsonl and clean_reference.jsonl.

    /work/venv/bin/python bench/garble_synthetic.py      # rewrites garbled_synthetic.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.mismap import reference_gguf

DATA = ROOT / "tests" / "data" / "garble"
SEED = 20261130


def _byte_decoder() -> dict[str, int]:
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


def vocab_tokens() -> list[bytes]:
    """The reference model's vocabulary, as bytes."""
    from gguf import GGUFReader

    reader = GGUFReader(str(reference_gguf()))
    field = reader.fields["tokenizer.ggml.tokens"]
    dec = _byte_decoder()
    out = []
    for idx in field.data:
        spelled = bytes(field.parts[idx]).decode("utf-8")
        if spelled.startswith("<|") or not all(ch in dec for ch in spelled):
            continue
        out.append(bytes(dec[ch] for ch in spelled))
    return out


def load(name: str) -> list[dict]:
    with (DATA / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> int:
    rng = random.Random(SEED)
    written = load("clean_written.jsonl")
    reference = load("clean_reference.jsonl")
    vocab = vocab_tokens()
    rows: list[dict] = []

    def add(kind: str, text: str, expect: list[str] | None, n: int) -> None:
        rows.append(
            {"text": text, "label": "garbled", "expect": expect, "source": f"synthetic/{kind}/{n}"}
        )

    def vocab_soup(n_tokens: int) -> str:
        return b"".join(rng.choice(vocab) for _ in range(n_tokens)).decode("utf-8", "replace")

    multilingual = [
        r["text"]
        for r in written
        if r["source"].split("/")[1] not in ("code", "json", "math", "table", "short", "markdown")
    ]
    words = [w for t in multilingual for w in t.split() if len(w) > 1]

    def multi_soup(n_pieces: int) -> str:
        out = []
        for _ in range(n_pieces):
            w = rng.choice(words)
            i = rng.randrange(len(w))
            out.append(w[i : i + rng.randint(1, 5)])
            out.append(rng.choice([" ", "", "", " ", "\n" if rng.random() < 0.05 else ""]))
        return "".join(out)

    def prefix_of(text: str, n_words: int) -> str:
        return " ".join(text.split(" ")[:n_words])

    floods = [
        "!",
        "#",
        "?",
        ",",
        ".",
        "0",
        "*",
        "ß",
        "\u3002",
        "-",
        "@",
        "$",
        "\u2581",
        "<pad>",
        "<unk>",
        "<|endoftext|>",
        "[PAD]",
        "</s>",
        "<0x00>",
        "!!",
        "#\n",
        " !",
        "<|im_end|>",
        "\u00a0!",
        "�",
    ]
    cycles = [
        "care",
        "'t",
        "gen,",
        "ing",
        "the ",
        "and",
        "ation",
        "lancel",
        "yond",
        " of the",
        "aaa",
        "ers",
        "ub",
        "tion",
        "Ċ",
        "C# | ",
        "ly",
        ".s",
        "ß,",
        "ovi",
        "ии",
        "的",
        "ная",
        "ement",
        "zz",
    ]
    for n in range(30):
        add(
            "vocab-soup",
            vocab_soup(rng.randint(15, 120)),
            rng.choice([["en"], None, ["en", "code"]]),
            n,
        )
    for n in range(30):
        add(
            "multilingual-soup",
            multi_soup(rng.randint(12, 90)),
            rng.choice([["en"], ["ru"], ["zh"], None, ["fr"]]),
            n,
        )
    for n, unit in enumerate(floods):
        text = unit * rng.randint(12, 200)
        if n % 3 == 1:
            text = prefix_of(rng.choice(reference + written)["text"], rng.randint(3, 30)) + text
        add("flood", text, rng.choice([["en"], None]), n)
    for n, unit in enumerate(cycles):
        text = unit * rng.randint(8, 80)
        if n % 3 == 2:
            text = (
                prefix_of(rng.choice(reference + written)["text"], rng.randint(3, 30)) + " " + text
            )
        add("cycle", text, rng.choice([["en"], None, ["ru"], ["zh"]]), n)
    non_ascii = [r for r in written if sum(ord(c) > 127 for c in r["text"]) > 8]
    for n in range(20):
        r = rng.choice(non_ascii)
        raw = r["text"].encode("utf-8")
        text = raw.decode("cp1252", "replace") if n % 2 else raw.decode("latin-1")
        add("mojibake", text, r["expect"], n)
    for n in range(15):
        r = rng.choice(non_ascii)
        raw = bytearray(r["text"].encode("utf-8"))
        for _ in range(rng.randint(3, 12)):
            raw[rng.randrange(len(raw))] = rng.randrange(0x80, 0x100)
        add("fffd", raw.decode("utf-8", "replace"), r["expect"], n)
    for n in range(15):
        pad = rng.choice(["<pad>", "<pad> ", "[PAD]", "<unk>", "<|endoftext|>", "<s>"])
        head = (
            prefix_of(rng.choice(reference + written)["text"], rng.randint(0, 25)) if n % 2 else ""
        )
        add("pad", head + pad * rng.randint(5, 60), ["en"], n)
    for n in range(10):
        r = rng.choice(written + reference)
        chars = list(r["text"])
        for _ in range(rng.randint(3, 20)):
            chars.insert(
                rng.randrange(len(chars) + 1),
                chr(rng.choice([0, 1, 2, 3, 7, 8, 11, 12, 14, 27, 31, 127, 0x85, 0x9B])),
            )
        add("control", "".join(chars), r["expect"], n)
    long_ref = [r for r in reference + written if len(r["text"].split()) > 40]
    tails = [
        lambda: vocab_soup(rng.randint(20, 80)),
        lambda: multi_soup(rng.randint(20, 60)),
        lambda: rng.choice(floods) * rng.randint(15, 80),
        lambda: rng.choice(cycles) * rng.randint(10, 40),
    ]
    for n in range(40):
        r = rng.choice(long_ref)
        head = prefix_of(r["text"], rng.randint(10, 120))
        add("collapse", head + tails[n % len(tails)](), r["expect"], n)
    with (DATA / "garbled_synthetic.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

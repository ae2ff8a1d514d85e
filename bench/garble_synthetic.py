"""Synthetic garbled rows for tests/data/garble/garbled_synthetic.jsonl (seeded, reproducible).

Covers the garble shapes from the field notes that the mis-mapped reference engine does not
produce by itself: multilingual token soup, soup of random real SmolLM2 vocabulary tokens, single
token floods (`!!!!`, `####`), short cycles (`carecarecare`, `'t't't`), mojibake and U+FFFD,
`<pad>` runs, control characters, and clean text (a real reference answer) that turns to junk after
N tokens. Clean material comes from clean_written.jsonl and clean_reference.jsonl.

    python -m bench.build_data garble-synthetic      # rewrites garbled_synthetic.jsonl
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.garble_material import CORPUS, material, vocab_tokens, write_rows
from evalrun.suite.load import read_jsonl

MATERIAL = material("synthetic")
OUTPUTS = ("garbled_synthetic.jsonl",)
# The batch was drawn from the first 108 rows of clean_reference.jsonl; rows appended to that file
# since (answers of full `evalrun score --reference` runs) would move every later draw.
REFERENCE_ROWS = 108
# The garble family of each kind of row (tests/data/garble/README.md names the families).
FAMILY = {
    "vocab-soup": "non-words",
    "multilingual-soup": "multi-script",
    "flood": "flood",
    "cycle": "loop",
    "mojibake": "mojibake",
    "fffd": "mojibake",
    "pad": "flood",
    "control": "mojibake",
    "collapse": "collapse",
}
SEED = 20261130


def build(out_dir: Path) -> list[Path]:
    """Write garbled_synthetic.jsonl into `out_dir`; the paths written."""
    rng = random.Random(SEED)
    written = read_jsonl(CORPUS / "clean_written.jsonl")
    reference = read_jsonl(CORPUS / "clean_reference.jsonl")[:REFERENCE_ROWS]
    vocab = vocab_tokens()
    rows: list[dict] = []

    def add(kind: str, text: str, expect: list[str] | None, n: int) -> None:
        source = f"synthetic/{kind}/{n}"
        rows.append(
            {
                "text": text,
                "label": "garbled",
                "expect": expect,
                "source": source,
                "family": FAMILY[kind],
            }
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

    floods = MATERIAL["floods"]
    cycles = MATERIAL["cycles"]
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
    out = out_dir / OUTPUTS[0]
    write_rows(rows, out)
    print(f"{out.name}: {len(rows)} rows")
    return [out]

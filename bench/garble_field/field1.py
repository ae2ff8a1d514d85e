"""Garbled and looping rows in the shapes that public engine issues report (seeded, reproducible).

Each shape is a fact taken from a public issue of an inference engine (vLLM, sglang, llama.cpp and
the tools built on them): what the broken output looked like (multilingual fragments glued into
identifiers, a hyphenated token repeated to the token limit, words with no syntax, `!` between
every word, a digit run after a correct start, UTF-8 shown as Latin-1 ...). The texts here are
made up in those shapes from our own word lists; no third-party text is copied. `source` names the
issue the shape comes from; `family` is the garble family the row belongs to.

Also written: garbled replies users reported the detector missing, as quoted (source tag
`issue-15/...`), and `loop` rows, the natural repetition loops of a small healthy model
(`... ciel, ciel, ciel`), which the detector must report as their own kind, apart from engine soup.

    python -m bench.build_data garble-field      # rewrites garbled_field.jsonl and loop_field.jsonl
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.garble_material import FieldRows, material, write_rows

MATERIAL = material("field1")
OUTPUTS = ("garbled_field.jsonl", "loop_field.jsonl")
SEED = 15_2026

GH = "https://github.com/"
VLLM_SYMBOL_LOOP = GH + "vllm-project/vllm/issues/9409"  # table pipes, then X-X-X-... to the limit
Q4_SALAD = GH + "hc20k/LLMChat/issues/25"  # Q4_0 GGUF: short words and fragments, no syntax
KIMI_MULTI = (
    GH + "vllm-project/vllm/issues/35718"
)  # multilingual fragments in reasoning after a while
STARCODER = GH + "vllm-project/vllm/issues/665"  # code completion turned to symbol soup
QWEN_MATH = GH + "vllm-project/vllm/issues/9183"  # fragments, emoji, CJK and code punctuation
TINYLLAMA = GH + "jzhang38/TinyLlama/issues/24"  # "Step 1:1200000..."; reference loops a list line
LITERT = GH + "google-ai-edge/litert-torch/issues/109"  # glued fragment floods mixing scripts
SINGLE_TOKEN = GH + "anthropics/claude-code/issues/82803"  # one word repeated to the limit
GEMMA_DOUBLING = GH + "google-deepmind/gemma/issues/622"  # doubled words, then a one-token collapse
KOBOLD = GH + "LostRuins/koboldcpp/issues/1038"  # after 1-2k tokens one word/fragment repeats
GPTQ_BANG = GH + "ModelCloud/GPTQModel/issues/1305"  # `!` glued between the words
SPEC_DECODE = GH + "vllm-project/vllm/issues/36872"  # coherent, then Unicode junk and symbols
SPEC_NONSENSE = GH + "vllm-project/vllm/issues/8071"  # capitalised real words, no syntax; <s><s>
SGLANG_FP8 = GH + "sgl-project/sglang/issues/20820"  # fp8 KV + fa3: one word over and over
CODEX_SOUP = GH + "openai/codex/issues/17452"  # identifiers glued to Indic/Armenian/Georgian runs
KIRO_SOUP = GH + "kirodotdev/Kiro/issues/1591"  # short mixed-script soup of real and broken words
FP16_BANG = GH + "QwenLM/Qwen3/issues/761"  # fp16 overflow: a line of exclamation marks
MOJIBAKE_CJK = GH + "vercel-labs/just-bash/issues/247"  # 世界 shown as UTF-8 read as cp1252
MOJIBAKE_DASH = GH + "Miosa-osa/OSA/pull/234"  # streamed em-dashes and quotes as cp1252 mojibake
SPEC_EAGER = (
    GH + "vllm-project/vllm/issues/10559"
)  # spec decoding w/o eager: junk after some tokens

# Our own material to build shapes from.
STARTS = MATERIAL["STARTS"]
SHORT_WORDS = MATERIAL["SHORT_WORDS"]
FRAGMENTS = "ux ist em Sh cas ed ing ux ur ov ek ith al ol".split()
CAP_WORDS = MATERIAL["CAP_WORDS"]
ID_PARTS = "toggle attach hookup compiler topics jobs slice rollout trigger fw sdk npm".split()
SCRIPT_RUNS = MATERIAL["SCRIPT_RUNS"]
REAL_WORDS = MATERIAL["REAL_WORDS"]
EMOJI = ["🌈", "😊", "🔥", "✨"]
CODE_PUNCT = ["*/)", "')));", ';"', ")>", "(Be", "$\n\n", "|\n\n", '…"\n\n', "])"]
JUNK_WORDS = "isor afi uellen ponsored ebx legate icast witty Leone cdr SEEK NPCs".split()


def build(out_dir: Path) -> list[Path]:
    """Write garbled_field.jsonl and loop_field.jsonl into `out_dir`; the paths written."""
    rng = random.Random(SEED)
    garbled = FieldRows("field", rng)
    loops = FieldRows("field", rng)
    add = garbled.add

    def add_loop(shape: str, url: str, text: str, expect: list[str] | None) -> None:
        loops.add("loop", shape, url, text, expect, label="loop")

    def langs() -> list[str] | None:
        return rng.choice([None, ["en"]])

    # ---- multi-script soup
    for _ in range(12):  # identifiers glued to runs of other scripts
        parts = []
        for _ in range(rng.randint(18, 40)):
            word = "_".join(rng.sample(ID_PARTS, rng.randint(1, 2)))
            if rng.random() < 0.5:
                word += rng.choice(SCRIPT_RUNS)
            if rng.random() < 0.2:
                word = rng.choice(SCRIPT_RUNS) + word
            parts.append(word)
        add("multi-script", "identifiers-scripts", CODEX_SOUP, " ".join(parts), langs())
    for _ in range(12):  # short soup of real words, broken words and other scripts
        parts = [
            rng.choice(REAL_WORDS + SCRIPT_RUNS + ["getP" + rng.choice(REAL_WORDS)])
            for _ in range(rng.randint(6, 14))
        ]
        add("multi-script", "short-mixed", KIRO_SOUP, " ".join(parts), langs())
    for _ in range(12):  # a correct start, then multilingual fragments in the reasoning
        tail = " ".join(rng.choice(SCRIPT_RUNS + JUNK_WORDS) for _ in range(rng.randint(10, 30)))
        add(
            "multi-script",
            "start-then-multilingual",
            KIMI_MULTI,
            rng.choice(STARTS) + " " + tail,
            langs(),
        )
    for _ in range(10):  # fragments, emoji, CJK and code punctuation
        parts = []
        for _ in range(rng.randint(20, 50)):
            r = rng.random()
            parts.append(
                rng.choice(JUNK_WORDS)
                if r < 0.5
                else rng.choice(EMOJI)
                if r < 0.65
                else rng.choice(CODE_PUNCT)
                if r < 0.85
                else rng.choice("蹩朦遊邨")
            )
        add(
            "multi-script",
            "fragments-emoji-cjk",
            QWEN_MATH,
            " ".join(parts),
            rng.choice([None, ["en"], ["en", "math"]]),
        )

    # ---- non-words
    for _ in range(12):  # fragments glued to real words: yondmut-style, no syntax
        parts = []
        for _ in range(rng.randint(12, 30)):
            w = rng.choice(JUNK_WORDS)
            if rng.random() < 0.6:
                w += rng.choice(JUNK_WORDS + FRAGMENTS)
            parts.append(w)
        add("non-words", "glued-fragments", QWEN_MATH, " ".join(parts), langs())
    for _ in range(10):  # code completion turned to symbol soup
        toks = MATERIAL["toks"]
        text = "".join(
            rng.choice(toks) + rng.choice(["", " ", "\n"]) for _ in range(rng.randint(10, 24))
        )
        add("non-words", "code-soup", STARCODER, "def main():\n    " + text, ["en", "code"])

    # ---- function-word salad
    for _ in range(14):  # short words and fragments without syntax
        words = [rng.choice(SHORT_WORDS + FRAGMENTS) for _ in range(rng.randint(30, 90))]
        for i in range(0, len(words), rng.randint(7, 13)):
            words[i] += rng.choice([".", "", ""])
        add("salad", "short-words", Q4_SALAD, " ".join(words), langs())
    for _ in range(12):  # capitalised real words with no syntax at all
        words = [rng.choice(CAP_WORDS) for _ in range(rng.randint(8, 20))]
        add("salad", "capitalised-words", SPEC_NONSENSE, " ".join(words), langs())

    # ---- loops (engine loops: a token or hyphenated unit repeated until the limit)
    for _ in range(10):
        unit = rng.choice(["SIP", "API", "RFC", "TOC", "LOG"])
        head = f"The field is now | Required. | {' |' * rng.randint(4, 12)} Required ("
        text = head + "-".join([unit] * rng.randint(40, 120)) + " | Required." * rng.randint(5, 15)
        add("loop", "hyphen-unit", VLLM_SYMBOL_LOOP, text, ["en", "table"])
    for _ in range(10):
        word = rng.choice(["claus", "court", "pered", "alto", "(rr", "opacity"])
        text = " ".join([word] * rng.randint(20, 200))
        add("loop", "one-word-from-start", SGLANG_FP8, text, langs())
    for _ in range(8):  # C# | C# | C32 style: a short token loop with junk between
        units = ["C#", "|", "C32.", "C#的.", "(C#", "C# |", "C#的"]
        text = " 42.\n" + " ".join(rng.choice(units) for _ in range(rng.randint(20, 60)))
        add("loop", "short-token-loop", "issue-15", text, langs())

    # ---- floods
    for _ in range(10):
        add("flood", "bang-line", FP16_BANG, "!" * rng.randint(30, 400), langs())
    for _ in range(10):  # ! glued between the words
        words = rng.choice(STARTS).split()
        text = " ".join(w + "!" * rng.randint(1, 4) for w in words for _ in range(1))
        text += " " + " ".join(w + "!" * rng.randint(1, 4) for w in rng.choice(STARTS).split())
        add("flood", "bang-between-words", GPTQ_BANG, text, langs())
    for _ in range(8):  # a correct start, then a digit run
        text = f"Step 1:{rng.randint(1, 9)}" + "0" * rng.randint(60, 200)
        add(
            "flood",
            "digit-run",
            TINYLLAMA,
            rng.choice(["Building a website:\n", ""]) + text,
            langs(),
        )
    for _ in range(8):  # glued fragments and other-script runs, flooding
        a, b = rng.choice(["agy", "yond", "mut", "logupload"]), rng.choice(["ść", "iro", "ści"])
        text = a * rng.randint(10, 25) + b * rng.randint(10, 40) + (a + b) * rng.randint(3, 9)
        add("flood", "glued-flood", LITERT, text, langs())
    for _ in range(8):  # punctuation floods with letters mixed in
        parts = [
            rng.choice([",", ",,", ".", "..", ",,,,", "ß", "s", "gen", "en"])
            for _ in range(rng.randint(25, 70))
        ]
        add("flood", "punct-letters", "issue-15", "".join(parts), langs())
    for _ in range(6):
        add("flood", "bos-run", SPEC_NONSENSE, "<s>" * rng.randint(10, 60), langs())

    # ---- collapse after a correct start
    for _ in range(12):
        start = " ".join(rng.sample(STARTS, 2))
        junk = "".join(
            rng.choice(["\ufffd", "##", "%%", "ÿ", "¤", "∂", "⁂", "|", "\u200b", "▒"])
            + rng.choice(["", " "])
            for _ in range(rng.randint(15, 60))
        )
        add("collapse", "unicode-junk-tail", SPEC_DECODE, start + " " + junk, langs())
    for _ in range(12):
        start = " ".join(rng.sample(STARTS, 2))
        junk = " ".join(
            rng.choice(JUNK_WORDS + FRAGMENTS) + rng.choice(["", "", ".", ","])
            for _ in range(rng.randint(10, 30))
        )
        add("collapse", "fragment-tail", SPEC_EAGER, start + " " + junk, langs())

    # ---- mojibake
    cjk = ["世界", "你好", "中国的首都是北京。", "日本語のテキスト", "こんにちは"]
    for _ in range(8):
        good = rng.choice(cjk)
        bad = good.encode("utf-8").decode("cp1252", "replace")
        add(
            "mojibake",
            "cjk-as-cp1252",
            MOJIBAKE_CJK,
            f"Greeting: {rng.choice(cjk)}: {bad}",
            rng.choice([["en", "zh"], None]),
        )
    prose = MATERIAL["prose"]
    for i in range(12):
        text = prose[i % len(prose)]
        if i % 3 == 2:
            text = text + " " + prose[(i + 1) % len(prose)]
        bad = text.encode("utf-8").decode("cp1252", "replace")
        add("mojibake", "cp1252-punctuation", MOJIBAKE_DASH, bad, rng.choice([None, ["en"]]))

    # ---- reported misses, as quoted (their source tag is fixed data)
    issue = MATERIAL["issue"]
    for n, (family, text, expect) in enumerate(issue):
        garbled.rows.append(
            {
                "text": text,
                "label": "garbled",
                "expect": expect,
                "source": f"issue-15/{family}/{n}",
                "family": family,
            }
        )

    # ---- natural loops of a healthy small model: their own kind
    for _ in range(6):
        word = rng.choice(["ciel", "yes", "Paris", "blue", "the end", "again"])
        head = rng.choice(["Le ciel est bleu et", "The answer is", "Sure:", ""])
        text = (head + " " + ", ".join([word] * rng.randint(12, 60))).strip()
        add_loop("word-list-loop", "issue-15", text, rng.choice([["en"], ["fr"], None]))
    for _ in range(6):
        line = rng.choice(["A:", "Q:", "Answer:", "- Add a contact form."])
        text = rng.choice(["", "Here is the answer.\n"]) + "\n".join([line] * rng.randint(8, 40))
        add_loop("line-loop", "issue-15", text, ["en"])
    for _ in range(6):
        steps = "\n".join(
            f"Step {i}: {rng.choice(['Create a page.', 'Add a logo.'])}" for i in range(1, 4)
        )
        rep = "\n".join(f"Step {i}: Add a contact form." for i in range(4, rng.randint(10, 30)))
        add_loop("numbered-line-loop", TINYLLAMA, steps + "\n" + rep, ["en"])
    for _ in range(6):
        start = rng.choice(STARTS)
        word = rng.choice(["peaceful", "waves", "sapphire", "court"])
        text = start + f" The {word} {word} " + " ".join([word] * rng.randint(15, 80))
        add_loop("doubling-then-one-word", GEMMA_DOUBLING, text, ["en"])
    for _ in range(6):
        start = rng.choice(STARTS)
        word = rng.choice(["alto", "Manners", "pered"])
        text = start + " " + " ".join([word] * rng.randint(20, 60))
        add_loop("late-one-word", KOBOLD, text, ["en"])
    for _ in range(4):
        add_loop(
            "one-word-to-limit", SINGLE_TOKEN, " ".join(["court"] * rng.randint(60, 300)), ["en"]
        )

    for name, rows in zip(OUTPUTS, (garbled.rows, loops.rows)):
        write_rows(rows, out_dir / name)
        print(f"{name}: {len(rows)} rows")
    return [out_dir / name for name in OUTPUTS]

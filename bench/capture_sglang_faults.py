"""Real sglang output under faults it was not measured on before, for labelling by hand.

The vLLM fault run (bench/capture_vllm_faults.py) on the second real engine: the
`evalrun lane setup sglang-cpu` lane (sglang 0.5.23 on CPU, SmolLM2-135M-Instruct bf16
safetensors) serves, one boot per fault, a tensor-edited copy of the model folder (the same edits,
made in the lane's venv) or the healthy model with engine flags, and answers the same prompts
(ASKED): greedy, every third one also seeded at 0.8, and collapse rows continuing the healthy
lane's first 12/30/60 tokens. garbled_sglang.jsonl already holds sglang's q-out/k-v/gate-up
mis-maps and `--load-format dummy`; these are the other faults. Rows go to
results/sglang-faults-candidates.jsonl (the healthy answers to results/sglang-faults-healthy.jsonl);
a fault that does not boot leaves its log in results/sglang-fault-<name>.log. The whole run:
18 boots (3 refused at boot), about 23 minutes on 2 shared cores.

`--build` turns the candidates and the hand labels (bench/sglang_faults_labels.tsv) into
tests/data/garble/garbled_sglang2.jsonl (garbled, fluent) and clean_sglang2.jsonl (clean, loop).

    .venv/bin/python -m bench.capture_sglang_faults [--only healthy,rope-100,...]
    .venv/bin/python -m bench.capture_sglang_faults --build
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.capture_garble_corpus import ROOT
from bench.capture_vllm_faults import FaultRun, main

# The vLLM run's tensor edits (capture_vllm_faults._EDIT), the same copies of the model folder.
TENSOR_EDITS = (
    "zero-down-L15",
    "input-norm-x10",
    "zero-post-norm-L0",
    "swap-q-o-L3-8",
    "embed-perm-10pct",
    "noise-down-0.4",
)
# sglang reads the rope base of a transformers-5 config from rope_parameters (models/llama.py) and
# merges a partial rope_parameters override into it; `rope-theta-flat-100` sets the old flat key
# (what vLLM silently ignored) to see whether sglang ignores it too.
FAULTS: list[tuple[str, str | None, tuple[str, ...]]] = [
    ("rope-100", None, ("--json-model-override-args", '{"rope_parameters": {"rope_theta": 100}}')),
    (
        "rope-1000",
        None,
        ("--json-model-override-args", '{"rope_parameters": {"rope_theta": 1000}}'),
    ),
    ("rope-theta-flat-100", None, ("--json-model-override-args", '{"rope_theta": 100}')),
    *((edit, edit, ()) for edit in TENSOR_EDITS),
    ("kv-fp8_e5m2", None, ("--kv-cache-dtype", "fp8_e5m2")),
    ("kv-fp8_e4m3", None, ("--kv-cache-dtype", "fp8_e4m3")),
    ("temp-2-3", None, ()),  # sampling extremes: the healthy model, top_p 1, top_k off, min_p 0
    # config overrides a deployment could get wrong: an lm_head the checkpoint lacks (left as the
    # engine allocated it), linear rope scaling, a large RMSNorm epsilon, another activation. An int
    # `"factor": 4` does not boot (LinearScalingRotaryEmbedding: 'int' object is not iterable).
    ("untied-lm-head", None, ("--json-model-override-args", '{"tie_word_embeddings": false}')),
    (
        "rope-linear-4",
        None,
        (
            "--json-model-override-args",
            '{"rope_parameters": {"rope_type": "linear", "factor": 4.0}}',
        ),
    ),
    ("rms-eps-1", None, ("--json-model-override-args", '{"rms_norm_eps": 1.0}')),
    ("hidden-act-gelu", None, ("--json-model-override-args", '{"hidden_act": "gelu"}')),
    ("dtype-float16", None, ("--dtype", "float16")),
]
BIN = Path(__file__).resolve().parent
SGLANG = FaultRun(
    "sglang",
    FAULTS,
    ROOT / "results" / "sglang-faults-healthy.jsonl",
    ROOT / "results" / "sglang-faults-candidates.jsonl",
    BIN / "sglang_faults_labels.tsv",
    "garbled_sglang2.jsonl",
    "clean_sglang2.jsonl",
    settings={"temp-2-3": ((2.0, 0, 96), (3.0, 7, 96))},
)

if __name__ == "__main__":
    sys.exit(main(None, SGLANG, __doc__))

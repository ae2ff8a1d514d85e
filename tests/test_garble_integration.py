"""Garble end to end on the REAL reference engine: its own answers are clean, and the same engine
serving a mis-mapped copy of its weights (tests/support/mismap.py) answers in garble."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from evalrun.contract import contract_from_data, read_contract_data, reference_contract_path
from evalrun.garble import check_response
from evalrun.response import Response

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.integration

PROMPTS = [
    (["en"], "What is the capital of France?"),
    (["ru"], "Расскажи сказку про кота."),
    (["en", "code"], "Write a Python function that reverses a string."),
]


def _answers(model: Path, log: Path) -> list[Response]:
    from evalrun.launcher import boot_server

    data = read_contract_data(reference_contract_path())
    data.update(model=str(model), port=0)
    data["args"]["n_ctx"] = 2048  # short prompts; a small KV cache boots faster
    out = []
    with boot_server(contract_from_data(data), log) as server, httpx.Client(timeout=600) as http:
        for _, prompt in PROMPTS:
            body = {"model": server.model, "max_tokens": 32, "temperature": 0,
                    "messages": [{"role": "user", "content": prompt}]}
            resp = http.post(f"{server.base_url}/chat/completions", json=body)
            resp.raise_for_status()
            out.append(Response(content=resp.json()["choices"][0]["message"]["content"]))
    return out


@pytest.mark.timeout(1500)  # two boots and a 98 MB copy; about a minute on an idle machine
def test_reference_answers_are_clean_and_mismapped_answers_are_garbled(tmp_path):
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gguf")
    from support.mismap import reference_gguf, write_mismapped_gguf

    good = _answers(reference_gguf(), tmp_path / "good.log")
    bad = _answers(write_mismapped_gguf(reference_gguf(), tmp_path / "mismapped.gguf"),
                   tmp_path / "bad.log")
    for (expect, _), g, b in zip(PROMPTS, good, bad):
        verdict = check_response(g, expect)
        assert verdict is not None and not verdict["garbled"], (g.content, verdict)
        verdict = check_response(b, expect)
        assert verdict is not None and verdict["garbled"], (b.content, verdict)
        assert verdict["reasons"] and verdict["channel"] == "content"

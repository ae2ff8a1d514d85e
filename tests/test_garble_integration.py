"""Garble end to end on the REAL reference engine: its own answers are clean, and the same engine
serving a mis-mapped copy of its weights (tests/support/mismap.py) answers in garble.

Kept lean for CI: one mis-mapped copy per session, two boots with a small context, three short
prompts, 32 tokens each."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
import pytest

from evalrun.endpoint.response import Response
from evalrun.grading.garble import check_response, expected_for
from evalrun.serving.contract import contract_from_data, read_contract_data, reference_contract_path

pytestmark = pytest.mark.integration

PROMPTS = [  # (item languages, category, prompt)
    (None, "factual", "What is the capital of France?"),
    (["ru"], "multilingual", "Расскажи сказку про кота."),
    (None, "code", "Write a Python function that reverses a string."),
]
MAX_TOKENS = 32  # at 24 the first mis-mapped answer was still a near miss (in the corpus)


@pytest.fixture(scope="session")
def mismapped_gguf() -> Path:
    pytest.importorskip("xllamacpp")
    pytest.importorskip("gguf")
    from support.mismap import shared_mismapped_gguf

    return shared_mismapped_gguf()


def _answers(model: Path, log: Path) -> list[Response]:
    from evalrun.serving.launcher import boot_server

    data = read_contract_data(reference_contract_path())
    data.update(model=str(model), port=0)
    data["args"]["ctx-size"] = 2048  # short prompts; a small KV cache boots faster
    out = []
    with boot_server(contract_from_data(data), log) as server, httpx.Client(timeout=600) as http:
        for _, _, prompt in PROMPTS:
            body = {
                "model": server.model,
                "max_tokens": MAX_TOKENS,
                "temperature": 0,
                "messages": [{"role": "user", "content": prompt}],
            }
            resp = http.post(f"{server.base_url}/chat/completions", json=body)
            resp.raise_for_status()
            out.append(Response(content=resp.json()["choices"][0]["message"]["content"]))
    return out


@pytest.mark.timeout(900)  # two boots; well under a minute on an idle machine
def test_reference_answers_are_clean_and_mismapped_answers_are_garbled(tmp_path, mismapped_gguf):
    from support.mismap import reference_gguf

    good = _answers(reference_gguf(), tmp_path / "good.log")
    bad = _answers(mismapped_gguf, tmp_path / "bad.log")
    for (languages, category, _), g, b in zip(PROMPTS, good, bad):
        expect = expected_for(languages, category)  # what the runner judges with
        verdict = check_response(g, expect)
        assert verdict is not None and not verdict.garbled, (g.content, verdict)
        verdict = check_response(b, expect)
        assert verdict is not None and verdict.garbled, (b.content, verdict)
        assert verdict.reasons and verdict.channel == "content"

"""The fake endpoint itself: other tests (score, slope, bisect) lean on it behaving like vLLM."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from fakeserver import FakeServer, Fault, per_prompt_token, reply, tool_choice_400


def post(url: str, body: dict) -> tuple[int, dict | str]:
    req = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raw = exc.read().decode()
        try:
            return exc.code, json.loads(raw)
        except json.JSONDecodeError:
            return exc.code, raw


def chat(text: str) -> dict:
    return {"model": "fake-model", "messages": [{"role": "user", "content": text}]}


def test_sustains_32_concurrent_requests(fake_server):
    arrived = threading.Barrier(32, timeout=10)  # all 32 must be inside the server at once

    def rule(req):
        arrived.wait()
        return reply("ok")

    fake_server.rule = rule
    fake_server.latency = 0.1
    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(lambda i: post(fake_server.base_url, chat(f"q{i}")), range(32)))
    assert all(status == 200 for status, _ in results)
    assert fake_server.max_in_flight == 32


def test_capacity_limits_in_flight():
    with FakeServer(latency=0.05, capacity=4) as fake:
        with ThreadPoolExecutor(12) as pool:
            list(pool.map(lambda i: post(fake.base_url, chat("x")), range(12)))
        assert fake.max_in_flight == 4


def test_script_then_rule_and_reasoning(fake_server):
    fake_server.rule = lambda req: reply(None, reasoning="thinking", reasoning_key="reasoning")
    fake_server.script(tool_choice_400())
    status, body = post(fake_server.base_url, chat("a"))
    # vLLM 0.32's envelope, as the real engine sends it (the vllm tier checks the real one)
    assert status == 400 and "--enable-auto-tool-choice" in body["error"]["message"]
    status, body = post(fake_server.base_url, chat("b"))
    msg = body["choices"][0]["message"]
    assert status == 200 and msg["content"] is None and msg["reasoning"] == "thinking"


def test_tool_calls_and_html_fault(fake_server):
    fake_server.script(
        reply(None, tool_calls=[{"name": "f", "arguments": {"x": 1}}]),
        Fault(502, kind="html", message="Bad Gateway"),
    )
    _, body = post(fake_server.base_url, chat("a"))
    call = body["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call == {"name": "f", "arguments": '{"x": 1}'}
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    status, page = post(fake_server.base_url, chat("b"))
    assert status == 502 and "<html>" in page


def test_drop_closes_without_answer(fake_server):
    fake_server.script(Fault(kind="drop"))
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        post(fake_server.base_url, chat("a"))


def test_latency_as_function_of_prompt_length(fake_server):
    lat = per_prompt_token(base=0.01, per_token=0.001)
    assert lat(chat("one two three")) == pytest.approx(0.013)


def test_models_listing(fake_server):
    fake_server.models = ["a", "b"]
    with urllib.request.urlopen(fake_server.base_url + "/models", timeout=5) as resp:
        ids = [m["id"] for m in json.loads(resp.read())["data"]]
    assert ids == ["a", "b"]

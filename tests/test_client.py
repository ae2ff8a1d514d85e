"""evalrun.endpoint.client against the fake endpoint: retries and their limits, parsing, preflight."""

from __future__ import annotations

import asyncio

import pytest
from fakeserver import Fault, context_length_400, http_error, rate_limited, reply

from evalrun.base.errors import EndpointError, UsageError
from evalrun.endpoint.client import (
    RequestFailed,
    RetryPolicy,
    chat_attempt,
    list_models,
    make_client,
    parse_completion,
    parse_retry_after,
    pick_model,
)
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.options import normalise_endpoint

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02)
PARAMS = {
    "model": "fake-model",
    "messages": [{"role": "user", "content": "hi"}],
    "temperature": 0,
    "max_tokens": 8,
}


def send(fake, *, retry=FAST, timeout=5.0, delays=None):
    async def go():
        client = make_client(fake.base_url, http=HttpOptions(timeout=timeout))
        slept = delays if delays is not None else []

        async def sleep(s):
            slept.append(s)

        try:
            return await chat_attempt(client, PARAMS, retry=retry, sleep=sleep)
        finally:
            await client.close()

    return asyncio.run(go())


@pytest.mark.parametrize(
    "fault",
    [
        Fault(500),
        Fault(502, kind="html", message="Bad Gateway"),
        Fault(503),
        http_error(408, "t"),
        Fault(kind="drop"),
    ],
    ids=["500", "502-html", "503", "408", "drop"],
)
def test_retryable_failure_then_success(fake_server, fault):
    fake_server.script(fault, fault)
    got = send(fake_server)
    assert got.response.content == "ok" and got.attempts == 3
    assert fake_server.chat_requests == 3


def test_retries_are_bounded(fake_server):
    fake_server.rule = lambda req: Fault(500, message="engine core died")
    with pytest.raises(RequestFailed) as info:
        send(fake_server)
    assert info.value.attempts == 3 and fake_server.chat_requests == 3
    assert info.value.kind == "http" and info.value.http_status == 500
    assert "engine core died" in info.value.message


@pytest.mark.parametrize(
    "fault",
    [
        context_length_400(),
        http_error(401, "bad key"),
        http_error(404, "The model `x` does not exist."),
    ],
)
def test_other_4xx_not_retried(fake_server, fault):
    fake_server.rule = lambda req: fault
    with pytest.raises(RequestFailed) as info:
        send(fake_server)
    assert fake_server.chat_requests == 1 and info.value.attempts == 1
    assert info.value.http_status == fault.status


def test_429_honours_retry_after(fake_server):
    fake_server.script(rate_limited(0.25))
    delays: list[float] = []
    got = send(fake_server, delays=delays)
    assert got.attempts == 2 and delays == [0.25]


def test_backoff_grows_with_jitter():
    import random

    policy = RetryPolicy(base_delay=1.0, max_delay=3.0)
    rng = random.Random(1)
    waits = [policy.delay(n, rng) for n in (1, 2, 3, 4)]
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0
    assert 1.5 <= waits[2] <= 3.0 and 1.5 <= waits[3] <= 3.0  # capped


def test_a_timeout_spends_the_item_budget_then_is_reported(fake_server):
    fake_server.latency = 1.0
    with pytest.raises(RequestFailed) as info:
        send(fake_server, timeout=0.2, retry=RetryPolicy(attempts=2, base_delay=0.01))
    assert info.value.kind == "timeout" and info.value.attempts == 1  # no budget left to retry


def test_a_quick_failure_is_retried_within_the_budget(fake_server):
    fake_server.script(Fault(status=503, message="busy"))
    got = send(fake_server, timeout=5.0, retry=RetryPolicy(attempts=2, base_delay=0.01))
    assert got.attempts == 2


def test_html_200_is_not_a_completion(fake_server):
    fake_server.rule = lambda req: reply(raw=None)
    fake_server.script(Fault(200, kind="html", message="Open WebUI"))
    with pytest.raises(RequestFailed) as info:
        send(fake_server)
    assert info.value.kind == "bad_response" and "HTML" in info.value.message
    assert fake_server.chat_requests == 1


def test_full_response_parse(fake_server):
    fake_server.rule = lambda req: reply(
        "answer",
        reasoning="because",
        tool_calls=[{"name": "f", "arguments": {"a": 1}}],
        finish_reason="tool_calls",
        prompt_tokens=7,
        completion_tokens=3,
    )
    resp = send(fake_server).response
    assert resp.content == "answer" and resp.reasoning == "because"
    assert resp.tool_calls[0].name == "f" and resp.tool_calls[0].arguments == {"a": 1}
    assert resp.finish_reason == "tool_calls"
    assert resp.usage.prompt_tokens == 7 and resp.usage.completion_tokens == 3
    assert resp.latency_s is not None and resp.latency_s >= 0


def test_reasoning_field_name_variants():
    for key in ("reasoning_content", "reasoning"):
        body = {
            "model": "m",
            "choices": [{"message": {"content": None, key: "think"}, "finish_reason": "stop"}],
        }
        resp, model = parse_completion(body)
        assert resp.reasoning == "think" and resp.content is None and model == "m"
    with pytest.raises(ValueError):
        parse_completion({"detail": "Not Found"})


def test_retry_after_forms():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


@pytest.mark.parametrize(
    "given,expected",
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://h:8000/", "http://h:8000/v1"),
        ("http://h:8000/v1/", "http://h:8000/v1"),
        ("https://h/v1/chat/completions", "https://h/v1"),
        ("http://h:30000/proxy/v1", "http://h:30000/proxy/v1"),
    ],
)
def test_normalise_endpoint(given, expected):
    assert normalise_endpoint(given) == expected


def test_bad_endpoint_urls():
    for bad in ("", "ftp://h/v1"):
        with pytest.raises(UsageError):
            normalise_endpoint(bad)


def test_model_pick(fake_server):
    async def models():
        client = make_client(fake_server.base_url)
        try:
            return await list_models(client, fake_server.base_url)
        finally:
            await client.close()

    fake_server.models = ["a", "b"]
    served = asyncio.run(models())
    assert served == ["a", "b"]
    with pytest.raises(UsageError, match="a, b"):
        pick_model(None, served, fake_server.base_url)
    assert pick_model("b", served, "x") == "b"
    assert pick_model(None, ["only"], "x") == "only"
    with pytest.raises(EndpointError):
        pick_model(None, [], "x")

"""tests/fakeserver.py's FakeServer, taught to stream: the engine `evalrun slope` measures.

Prefill takes `fake.latency` (a function of the request, e.g. per_prompt_token), then `max_tokens`
SSE chunks arrive `token_latency(prompt_tokens)` seconds apart, so a test chooses exactly where
decode slows down (the cliff). Knobs, all changeable while it runs:

    max_context   prompts of this many tokens (whitespace words) or more get vLLM's 400
    rejects       body keys answered with OpenAI's "Unrecognized request argument" 400
    eos_after     stop after N tokens unless min_tokens/ignore_eos say otherwise
    honours_min   False: ignore min_tokens/ignore_eos (llama.cpp ignores unknown keys)
    stream_usage  send usage (prompt/completion tokens) in the last chunk when asked
    cut_after     end streams after N tokens without a finish_reason (llama-cpp-python's
                  interrupt_requests does this when another request arrives)
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from typing import Any

from fakeserver import FakeServer, Fault, _Handler, context_length_text, http_error, prompt_tokens


class StreamingFake(FakeServer):
    def __init__(
        self,
        *,
        token_latency: Callable[[int], float] | float = 0.0,
        max_context: int | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.token_latency = token_latency
        self.max_context = max_context
        self.rejects: set[str] = set()
        self.eos_after: int | None = None
        self.honours_min = True
        self.stream_usage = True
        self.cut_after: int | None = None  # end the stream with [DONE] after N tokens, no finish

    def start(self) -> StreamingFake:
        super().start()
        assert self._httpd is not None
        self._httpd.RequestHandlerClass = type("Handler", (_StreamHandler,), {"fake": self})
        return self

    def delay_per_token(self, n_prompt: int) -> float:
        lat = self.token_latency
        return float(lat(n_prompt)) if callable(lat) else float(lat)


class _StreamHandler(_Handler):
    fake: StreamingFake

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = json.loads(raw or b"{}")
        rejected = sorted(k for k in fake.rejects if k in request)
        if rejected:
            fake.requests.append(request)
            return self._fault(
                http_error(
                    400, "Unrecognized request argument supplied: " + rejected[0], envelope="openai"
                )
            )
        n_prompt = prompt_tokens(request)
        if fake.max_context and n_prompt >= fake.max_context:
            fake.requests.append(request)
            text = context_length_text(fake.max_context, n_prompt, request.get("max_tokens", 0))
            return self._fault(http_error(400, text))
        if not request.get("stream"):
            wire, self.rfile = self.rfile, io.BytesIO(raw)  # let the base handler read the body
            try:
                return super().do_POST()
            finally:
                self.rfile = wire
        answer = fake._next_answer(request)
        if isinstance(answer, Fault):
            return self._fault(answer)
        time.sleep(fake._latency_for(request))
        self._stream(request, n_prompt)

    def _stream(self, request: dict[str, Any], n_prompt: int) -> None:
        fake = self.fake
        max_tokens = int(request.get("max_tokens") or 16)
        n_out = max_tokens
        forced = fake.honours_min and (
            request.get("ignore_eos") or request.get("min_tokens", 0) >= max_tokens
        )
        if fake.eos_after is not None and not forced:
            n_out = min(max_tokens, fake.eos_after)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def send(obj: Any) -> None:
            data = obj if isinstance(obj, str) else json.dumps(obj)
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

        delay = fake.delay_per_token(n_prompt)
        for i in range(n_out):
            if i:
                time.sleep(delay)
            send(
                {
                    "object": "chat.completion.chunk",
                    "choices": [
                        {"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}
                    ],
                }
            )
        if fake.cut_after is not None and fake.cut_after < n_out:
            for i in range(fake.cut_after):
                send(
                    {
                        "object": "chat.completion.chunk",
                        "choices": [
                            {"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}
                        ],
                    }
                )
            return send("[DONE]")
        finish = "length" if n_out == max_tokens else "stop"
        send(
            {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            }
        )
        if fake.stream_usage and (request.get("stream_options") or {}).get("include_usage"):
            send(
                {
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": n_prompt,
                        "completion_tokens": n_out,
                        "total_tokens": n_prompt + n_out,
                    },
                }
            )
        send("[DONE]")

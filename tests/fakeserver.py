"""A scriptable fake OpenAI-compatible server on 127.0.0.1, run in a thread.

Shaped after what vLLM, sglang and llama.cpp really send: chat completions with `content`,
`reasoning` (vLLM 0.32, checked on the real engine in the vllm tier) or `reasoning_content`
(sglang, older vLLM), `tool_calls` and `usage`; errors in the `{"error": {"message", "type",
"param", "code"}}` envelope of vLLM 0.32 (or older vLLM's flat `{"object": "error", ...}`);
`/v1/models`, `/health`, `/version`.

Use it from a test (the `fake_server` fixture in conftest.py starts one per test):

    fake.rule = lambda body: reply("42")                  # answer by rule (function of request)
    fake.rule = lambda body: reply(None, reasoning="..")  # answer only in the reasoning channel
    fake.script(Fault(500), Fault(500))                   # the next two requests fail, then rule
    fake.latency = 0.1                                     # seconds, or a function of the request
    fake.latency = per_prompt_token(base=0.01, per_token=0.001)   # latency grows with prompt
    fake.models = ["a", "b"]                               # /v1/models lists two models
    fake.down = True                                       # every request: connection dropped

Token logprobs, as vLLM sends them (`choices[0].logprobs.content[]`), come with every answer to a
request that asks `logprobs: true`: by default the content split at spaces, each token at logprob
-0.05 with made-up alternatives; `reply("a b", tokens=[("a", -0.1, [("a", -0.1), ("x", -0.2)]), ...])`
sends exact ones. `fake.logprobs = "off"` ignores the request field (no logprobs in the body);
`fake.logprobs = "refuse"` answers such requests 400 the way a hosted reasoning model does.
`reply("..", tokens=engine_tokens("llama.cpp", [(Tok(59, b"K"), -0.1, [(Tok(59, b"K"), -0.1)])]))`
renders tokens the way one engine does (ids, end-of-turn token, half characters: `engine_tokens`);
vLLM-rendered tokens also come with `choices[0].token_ids` when the request asks `return_token_ids`.
`fake.strict_fields = {"return_token_ids"}` rejects those fields with a 400, as the OpenAI API
rejects fields it does not know.

Everything the server received is in `fake.requests` (parsed bodies, in arrival order);
`fake.max_in_flight` is the highest number of chat requests it served at once.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Real error texts, as engines send them (checked against vLLM / llama.cpp / sglang reports).
TOOL_CHOICE_AUTO_TEXT = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)


LOGPROBS_REFUSED_TEXT = "logprobs are not supported with reasoning models"


def context_length_text(limit: int = 4096, prompt: int = 5000, completion: int = 256) -> str:
    """Older vLLM's context-length rejection (prompt + completion over the limit)."""
    return (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
        "Please reduce the length of the messages or completion."
    )


def prompt_too_long_text(limit: int = 4096, prompt: int = 4097) -> str:
    """vLLM 0.32's rejection of a prompt that alone exceeds --max-model-len (real engine)."""
    return (
        f"This model's maximum context length is {limit} tokens. However, your prompt contains "
        f"at least {prompt} input tokens, which exceeds this limit even without any output "
        "tokens. Please reduce the length of the input prompt. "
        f"(parameter=input_tokens, value={prompt})"
    )


@dataclass
class Fault:
    """A failure to serve instead of an answer.

    kind: "http" (status + JSON error body), "html" (status + an HTML page), "nonjson" (200 with
    a text body), "drop" (close the connection without answering), "hang" (sleep `delay` then drop).
    Hostile shapes: "raw" (`status` + `body` bytes as application/json), "gzip" (Content-Encoding
    gzip over bytes that are not gzip), "short" (Content-Length promises more than is sent, then
    close), "trickle" (`body` one byte every `delay` seconds; chunked, or close-delimited with
    `chunked=False`).
    """

    status: int = 500
    kind: str = "http"
    message: str = "Internal Server Error"
    headers: dict[str, str] = field(default_factory=dict)
    envelope: str = "openai"  # "openai": {"error": {...}} (vLLM 0.32); "vllm": older flat body
    delay: float = 0.0
    body: bytes = b""
    chunked: bool = True


def http_error(
    status: int, message: str, *, retry_after: float | None = None, envelope: str = "openai"
) -> Fault:
    """An HTTP error with a JSON body in vLLM's (or OpenAI's) shape."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return Fault(status=status, message=message, headers=headers, envelope=envelope)


@dataclass(frozen=True)
class Tok:
    """One token of the vocabulary: its id and bytes; `end` for the end-of-turn token."""

    id: int
    data: bytes
    end: bool = False


END_TOKEN = Tok(2, b"", end=True)  # SmolLM2's <|im_end|>
ENGINES = ("vllm", "llama.cpp", "sglang")


def _render(engine: str, tok: Tok) -> dict[str, Any]:
    """`{token, bytes[, id]}` of one token as the engine's chat API renders it (checked on vLLM
    0.32, llama.cpp's server from xllamacpp 2026.10 and sglang 0.5's serving code): vLLM and
    sglang write the end-of-turn token as `<|im_end|>`, llama.cpp as nothing; half of a UTF-8
    character is nothing on vLLM, U+FFFD on sglang, its bytes under an empty text on llama.cpp
    (among the alternatives: `EngineTokens.content`), which alone sends an `id` with every
    token."""
    if tok.end:
        text = "" if engine == "llama.cpp" else "<|im_end|>"
        data = b"" if engine == "llama.cpp" else text.encode()
    else:
        try:
            text = tok.data.decode("utf-8")
        except UnicodeDecodeError:
            text = "\ufffd" if engine == "sglang" else ""
        data = tok.data if engine == "llama.cpp" else text.encode()
    out: dict[str, Any] = {"token": text, "bytes": list(data)}
    if engine == "llama.cpp":
        out["id"] = tok.id
    return out


def engine_tokens(engine: str, steps: list[tuple[Tok, float, list[tuple[Tok, float]]]]) -> Any:
    """Reply.tokens for `steps` as `engine` renders them (its ids kept for choices[0].token_ids)."""
    assert engine in ENGINES, engine
    return EngineTokens(engine, steps)


@dataclass
class EngineTokens:
    engine: str
    steps: list[tuple[Tok, float, list[tuple[Tok, float]]]]

    def content(self, k: int) -> list[dict[str, Any]]:
        """choices[0].logprobs.content. A chosen token that ends inside a UTF-8 character: left
        out by llama.cpp's server (as xllamacpp 2026.10 answers), which lists the token completing
        it with the whole character as its text and bytes; vLLM lists it as nothing and the
        completing token as the whole character; sglang decodes every token alone (U+FFFD). The
        alternatives are rendered alone on every engine."""
        out = []
        held = b""
        for t, lp, alts in self.steps:
            shown = _render(self.engine, t)
            if self.engine != "sglang" and not t.end:
                try:
                    text = (held + t.data).decode("utf-8")
                except UnicodeDecodeError:
                    held += t.data
                    if self.engine == "llama.cpp":
                        continue
                else:
                    whole = held + t.data if self.engine == "llama.cpp" else text.encode()
                    shown.update(token=text, bytes=list(whole))
                    held = b""
            tops = [{**_render(self.engine, a), "logprob": alp} for a, alp in alts[:k]]
            out.append({**shown, "logprob": lp, "top_logprobs": tops})
        return out


def tool_choice_400() -> Fault:
    """vLLM launched without --enable-auto-tool-choice, asked for tool_choice 'auto'."""
    return http_error(400, TOOL_CHOICE_AUTO_TEXT)


def context_length_400(limit: int = 4096) -> Fault:
    """vLLM rejecting a prompt longer than --max-model-len."""
    return http_error(400, context_length_text(limit))


def rate_limited(retry_after: float = 0.05) -> Fault:
    """HTTP 429 with a Retry-After header."""
    return http_error(429, "Too many requests", retry_after=retry_after)


@dataclass
class Reply:
    """A chat completion to send back."""

    content: str | None = ""
    reasoning: str | None = None
    reasoning_key: str = "reasoning"  # vLLM 0.32 (real); sglang and older vLLM: reasoning_content
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{name, arguments}]
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    raw: dict[str, Any] | None = None  # send this body verbatim instead
    # [(text, logprob, [(alt, logprob), ...])]: the logprobs to send (default: from the content),
    # or an engine's rendering of tokens (engine_tokens)
    tokens: Any = None

    def logprobs(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """choices[0].logprobs for a request that asked for them."""
        if not request.get("logprobs"):
            return None
        k = int(request.get("top_logprobs") or 0)
        if isinstance(self.tokens, EngineTokens):
            return {"content": self.tokens.content(k)}
        steps = self.tokens
        if steps is None:
            words = re.findall(r"\s*\S+|\s+", self.content or "")
            steps = [(w, -0.05, [(w, -0.05), ("zz", -4.0), ("yy", -5.0)]) for w in words]

        def entry(text: str, lp: float) -> dict[str, Any]:
            return {
                "token": text,
                "logprob": lp,
                "bytes": list(text.encode("utf-8", "surrogatepass")),
            }

        return {
            "content": [
                {**entry(t, lp), "top_logprobs": [entry(a, alp) for a, alp in alts[:k]]}
                for t, lp, alts in steps
            ]
        }

    def body(self, request: dict[str, Any], model: str, n: int) -> dict[str, Any]:
        if self.raw is not None:
            return self.raw
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            message[self.reasoning_key] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": c["name"],
                        "arguments": c["arguments"]
                        if isinstance(c.get("arguments"), str)
                        else json.dumps(c.get("arguments", {})),
                    },
                }
                for i, c in enumerate(self.tool_calls)
            ]
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": finish,
            "logprobs": self.logprobs(request),
        }
        rendered = self.tokens if isinstance(self.tokens, EngineTokens) else None
        if rendered and rendered.engine == "vllm" and request.get("return_token_ids"):
            choice["token_ids"] = [t.id for t, _, _ in rendered.steps]
        completion = self.completion_tokens
        if completion is None:
            completion = len(((self.content or "") + (self.reasoning or "")).split()) or 1
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model") or model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": self.prompt_tokens
                if self.prompt_tokens is not None
                else prompt_tokens(request),
                "completion_tokens": completion,
                "total_tokens": (self.prompt_tokens or prompt_tokens(request)) + completion,
            },
        }


def reply(content: str | None = "", **kw: Any) -> Reply:
    """Shorthand for Reply(content, ...)."""
    return Reply(content=content, **kw)


def prompt_text(request: dict[str, Any]) -> str:
    """All message text of a chat request, joined."""
    parts = []
    for m in request.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(parts)


def prompt_tokens(request: dict[str, Any]) -> int:
    """A rough token count of the prompt (whitespace words)."""
    return len(prompt_text(request).split())


def last_user(request: dict[str, Any]) -> str:
    """The text of the last user message."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return ""


def per_prompt_token(base: float = 0.0, per_token: float = 0.001) -> Callable[[dict], float]:
    """Latency = base + per_token * prompt tokens (for slope and long-context tests)."""
    return lambda request: base + per_token * prompt_tokens(request)


Answer = Reply | Fault | str | None
Rule = Callable[[dict[str, Any]], Answer]


class FakeServer:
    """The fake endpoint. Attributes can be changed while it runs."""

    def __init__(
        self,
        *,
        models: list[str] | None = None,
        rule: Rule | None = None,
        latency: float | Callable[[dict], float] = 0.0,
        capacity: int | None = None,
    ) -> None:
        self.models = models if models is not None else ["fake-model"]
        self.rule: Rule = rule or (lambda request: reply("ok"))
        self.latency = latency
        self.capacity = capacity
        self.down = False  # drop every connection: the endpoint stopped answering
        self.logprobs = "on"  # "on": as asked; "off": never sent; "refuse": 400 when asked
        self.strict_fields: set[str] = set()  # request fields answered with a 400
        self.models_fault: Fault | None = None  # serve this instead of /v1/models
        self.api_key: str | None = None  # when set: 401 unless `Authorization: Bearer <key>`
        self.scheme = "http"
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # request headers, same order as `requests`
        self.gets: list[str] = []  # paths of every GET (/v1/models, /health, ...)
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(capacity) if capacity else None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------
    def script(self, *answers: Answer) -> None:
        """Serve these to the next requests, in order, before falling back to `rule`."""
        with self._lock:
            self._script.extend(answers)

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def host_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.host_url}/v1"

    @property
    def chat_requests(self) -> int:
        return len(self.requests)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> FakeServer:
        """Listen on 127.0.0.1:`port` (0: any free port; a port to come back on after stop());
        https with `tls` (a server-side context)."""
        handler = type("Handler", (_Handler,), {"fake": self})
        httpd = _QuietServer(("127.0.0.1", port), handler, bind_and_activate=False)
        httpd.request_queue_size = 256
        httpd.daemon_threads = True
        httpd.allow_reuse_address = True
        httpd.server_bind()
        httpd.server_activate()
        if tls is not None:
            httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
            self.scheme = "https"
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------
    def _next_answer(self, request: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        return self.rule(request)

    def _latency_for(self, request: dict[str, Any]) -> float:
        lat = self.latency
        return float(lat(request)) if callable(lat) else float(lat)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout tests) is expected; anything else is printed."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeServer
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as uvicorn, llama-server and aiohttp set it: the head and the body go out as
    # two writes, and with Nagle's algorithm the body of a keep-alive answer waited for the
    # client's delayed ACK of the head, 40 ms an answer that no real server adds
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        try:  # raw UTF-8 like FastAPI servers send (U+2028 unescaped) ...
            data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # ... unless a lone surrogate forces \udXXX escapes
            data = json.dumps(obj).encode("ascii")
        self._send(status, data, headers=headers)

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _fault(self, fault: Fault) -> None:
        if fault.kind in ("raw", "gzip", "short", "trickle"):
            return self._hostile(fault)
        if fault.delay:
            time.sleep(fault.delay)
        if fault.kind in ("drop", "hang"):
            self._drop()
        elif fault.kind == "html":
            page = f"<html><head><title>{fault.status}</title></head><body><h1>{fault.message}"
            self._send(
                fault.status, (page + "</h1></body></html>").encode(), "text/html", fault.headers
            )
        elif fault.kind == "nonjson":
            self._send(fault.status, fault.message.encode(), "text/plain", fault.headers)
        else:
            err = {
                "message": fault.message,
                "type": _error_type(fault.status),
                "param": None,
                "code": fault.status,
            }
            body = {"object": "error", **err} if fault.envelope == "vllm" else {"error": err}
            self._json(fault.status, body, fault.headers)

    def _hostile(self, fault: Fault) -> None:
        if fault.kind == "raw":
            return self._send(fault.status, fault.body, headers=fault.headers)
        if fault.kind == "gzip":
            body = fault.body or b"not gzip at all"
            return self._send(fault.status, body, headers={"Content-Encoding": "gzip"})
        self.close_connection = True
        self.send_response(fault.status)
        self.send_header("Content-Type", "application/json")
        if fault.kind == "short":
            self.send_header("Content-Length", str(len(fault.body) + 1000))
            self.end_headers()
            self.wfile.write(fault.body)
            return self._drop()
        if fault.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for byte in fault.body:
                chunk = bytes([byte])
                self.wfile.write(b"1\r\n" + chunk + b"\r\n" if fault.chunked else chunk)
                self.wfile.flush()
                time.sleep(fault.delay)
            if fault.chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client gave up: what a deadline is for

    def _refused(self) -> bool:
        """401 in OpenAI's envelope when the fake wants a key and this request lacks it."""
        key = self.fake.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return False
        self._json(401, {"error": {"message": "Incorrect API key provided", "code": 401}})
        return True

    def do_GET(self) -> None:
        fake = self.fake
        if fake.down:
            return self._drop()
        if self._refused():
            return None
        path = self.path.split("?", 1)[0].rstrip("/")
        with fake._lock:
            fake.gets.append(path)
        if path in ("/v1/models", "/models"):
            if fake.models_fault is not None:
                return self._fault(fake.models_fault)
            data = [
                {
                    "id": m,
                    "object": "model",
                    "created": 0,
                    "owned_by": "vllm",
                    "max_model_len": 4096,
                }
                for m in fake.models
            ]
            return self._json(200, {"object": "list", "data": data})
        if path == "/health":
            return self._send(200, b"")
        if path == "/version":
            return self._json(200, {"version": "0.0.0-fake"})
        self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if fake.down:
            return self._drop()
        if self._refused():
            return None
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            return self._json(404, {"detail": "Not Found"})
        try:
            request = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return self._json(400, {"object": "error", "message": "invalid JSON", "code": 400})
        with fake._lock:
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        answer = fake._next_answer(request)
        if fake._slots is not None:
            fake._slots.acquire()
        try:
            with fake._lock:
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
            delay = fake._latency_for(request)
            if delay > 0:
                time.sleep(delay)
        finally:
            with fake._lock:
                fake.in_flight -= 1
            if fake._slots is not None:
                fake._slots.release()
        if isinstance(answer, Fault):
            return self._fault(answer)
        if request.get("logprobs") and fake.logprobs == "refuse":
            return self._fault(http_error(400, LOGPROBS_REFUSED_TEXT))
        unknown = sorted(fake.strict_fields & set(request))
        if unknown:
            return self._fault(
                http_error(400, f"Unrecognized request argument supplied: {unknown[0]}")
            )
        if answer is None or isinstance(answer, str):
            answer = Reply(content=answer)
        if fake.logprobs == "off":
            request = {k: v for k, v in request.items() if k != "logprobs"}
        model = fake.models[0] if fake.models else "fake"
        self._json(200, answer.body(request, model, len(fake.requests)))


def _error_type(status: int) -> str:
    return {
        400: "BadRequestError",
        401: "UnauthorizedError",
        404: "NotFoundError",
        429: "RateLimitError",
    }.get(status, "InternalServerError")


def simple_item(n: int, *, answer: str = "ok", category: str = "basic", **extra: Any) -> dict:
    """A suite item asking question `n` whose `exact` answer is `answer`."""
    item = {
        "id": f"{category}-{n:03d}",
        "category": category,
        "messages": [{"role": "user", "content": f"question {n}: reply {answer}"}],
        "max_tokens": 16,
        "grader": {"kind": "exact", "answer": answer},
        "accept": [answer],
        "reject": [answer + "!"],
    }
    item.update(extra)
    return item


def write_suite(folder: Any, items: list[dict], *, name: str = "mini", version: int = 1) -> Any:
    """Write items.jsonl + manifest.json (with the right sha256) into `folder`; return it."""
    import hashlib
    from collections import Counter
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items).encode("utf-8")
    (folder / "items.jsonl").write_bytes(data)
    manifest = {
        "name": name,
        "version": version,
        "sha256": hashlib.sha256(data).hexdigest(),
        "description": "test suite",
        "categories": dict(Counter(i["category"] for i in items)),
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder

"""A fake inference server for launcher tests: behaves like an engine that boots, fails or crashes.

    python engine.py MODEL --host H --port P [--mode ok|crash|crashloop|hang] [--boot-delay S]
        [--die-after N] [--spawn-child] [--pidfile F] [--ignore-term] [--message TEXT]
        [--no-version] [--refuse-chat] [--reply-delay S] [--print-env VAR] [--api-key KEY]

With --api-key (or VLLM_API_KEY in its environment) every /v1 path answers 401 unless the
request carries `Authorization: Bearer KEY`, as vLLM does; /health and /version stay open. A chat
request that asks `logprobs: true` gets its one token's logprobs, as vLLM sends them.

Standard library only. Prints a few log lines like a real engine would.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NINJA_TRACE = """Traceback (most recent call last):
  File "/root/vllm-env/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 2871, in profile_run
    self._dummy_sampler_run(hidden_states)
  File "/root/vllm-env/lib/python3.12/site-packages/flashinfer/jit/core.py", line 120, in build
    subprocess.run(["ninja", "-C", build_dir], check=True)
  File "/usr/lib/python3.12/subprocess.py", line 1955, in _execute_child
    raise child_exception_type(errno_num, err_msg, err_filename)
FileNotFoundError: [Errno 2] No such file or directory: 'ninja'"""

MESSAGES = {
    "ninja": NINJA_TRACE,
    "import": 'Traceback (most recent call last):\n  File "x.py", line 1\n'
    "ModuleNotFoundError: No module named 'vllm_flash_attn'",
    "oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "validator": "ValueError: KV cache layout LBNHC does not support mixed page sizes",
    "port": "OSError: [Errno 98] error while attempting to bind: address already in use",
}


def engine_parser(prog: str) -> argparse.ArgumentParser:
    """The arguments every fake engine takes, as a real engine's launcher passes them."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--boot-delay", type=float, default=0.0)
    return parser


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that answers in JSON."""

    def _send(self, code: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _logprobs(body: dict[str, object]) -> dict[str, object] | None:
    """choices[0].logprobs of the answer `OK` when the request asked for them."""
    if not body.get("logprobs"):
        return None
    k = body.get("top_logprobs")
    alts = [("OK", -0.01), ("Ok", -5.0), ("ok", -6.0)][: k if isinstance(k, int) else 0]
    tops = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alts]
    return {"content": [{"token": "OK", "logprob": -0.01, "bytes": [79, 75], "top_logprobs": tops}]}


def main() -> int:
    parser = engine_parser("engine.py")
    parser.add_argument("--served-model-name")
    parser.add_argument("--mode", default="ok", choices=["ok", "crash", "crashloop", "hang"])
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--spawn-child", action="store_true")
    parser.add_argument("--pidfile")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--message", default="")
    parser.add_argument("--exit-code", type=int, default=1)
    parser.add_argument("--no-version", action="store_true")
    parser.add_argument("--print-env")
    parser.add_argument("--refuse-chat", action="store_true")
    parser.add_argument("--reply-delay", type=float, default=0.0)
    parser.add_argument("--api-key")
    args = parser.parse_args()
    print(f"INFO fake engine starting: model={args.model} port={args.port}", flush=True)
    if args.api_key:  # vLLM logs its non-default args, secrets included
        print(f"INFO non-default args: {{'api_key': {args.api_key!r}}}", flush=True)
    if args.print_env:
        print(f"ENV {args.print_env}={os.environ.get(args.print_env)}", flush=True)
        print(f"PATH0 {os.environ.get('PATH', '').split(os.pathsep)[0]}", flush=True)
    pids = [os.getpid()]
    if args.spawn_child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pids.append(child.pid)
    if args.pidfile:
        with open(args.pidfile, "w") as fh:
            fh.write(" ".join(map(str, pids)))
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.mode == "crash":
        time.sleep(args.boot_delay)
        print(MESSAGES.get(args.message, args.message), file=sys.stderr, flush=True)
        return args.exit_code
    if args.mode == "crashloop":
        while True:
            print("INFO starting worker", flush=True)
            print(NINJA_TRACE.replace("ninja", "segv"), file=sys.stderr, flush=True)
            print("WARNING worker died, restarting", flush=True)
            time.sleep(0.2)
    started = time.monotonic()
    served = {"n": 0}
    key = args.api_key or os.environ.get("VLLM_API_KEY")
    name = args.served_model_name or args.model

    class Handler(JSONHandler):
        def log_message(self, fmt: str, *a: object) -> None:
            print("ACCESS " + fmt % a, flush=True)

        def _refused(self) -> bool:
            """vLLM's check: a /v1 path without the bearer token is a 401."""
            if not key or not self.path.startswith("/v1"):
                return False
            if self.headers.get("Authorization") == f"Bearer {key}":
                return False
            self._send(401, {"error": "Unauthorized"})
            return True

        def do_GET(self) -> None:
            if self._refused():
                return
            ready = time.monotonic() - started >= args.boot_delay
            if self.path == "/health":
                self._send(200 if ready and args.mode == "ok" else 503, {"status": "loading"})
            elif self.path == "/version" and not args.no_version:
                self._send(200, {"version": "0.0.fake"})
            elif self.path == "/v1/models":
                self._send(200, {"data": [{"id": name}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self._refused():
                return
            if time.monotonic() - started < args.boot_delay:
                self._send(503, {"error": "loading"})
                return
            if args.refuse_chat:
                self._send(400, {"error": '"auto" tool choice requires --enable-auto-tool-choice'})
                return
            if body.get("model") != name:
                self._send(404, {"error": f"model {body.get('model')} not found"})
                return
            served["n"] += 1
            time.sleep(args.reply_delay)
            if args.die_after and served["n"] > args.die_after:
                print("Fatal Python error: Segmentation fault", file=sys.stderr, flush=True)
                os._exit(139)
            self._send(
                200,
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": name,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "OK"},
                            "logprobs": _logprobs(body),
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                },
            )

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"INFO listening on {args.host}:{args.port}", flush=True)
    if args.mode == "hang":
        args.boot_delay = 10**9
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())

"""A fake engine with releases, for ordered bisects (standard library only, self-contained: the
fake engine builds in tests/support/fake_builds.py ship this file as their package).

    python releases.py MODEL --host H --port P [--release N] [--bad-from K] [--crash-at N,...]
        [--flaky-at N,...]

Release N answers every chat request with the probe's "ok" while N < K and garble from K on.
A release in --crash-at exits at boot (installs but does not boot). A release in --flaky-at
garbles every third answer (a third of a probe: near the garble line), and every sixth when the
environment's EVALRUN_REPROBE is 2 (a re-probe that lands on the other side). GET /version
answers the release. Flags it does not know are accepted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RELEASE = "1"  # a fake engine build's package sets its own
GARBLE = "carecarecarecarecarecarecarecarecarecare"


def _numbers(text: str) -> set[int]:
    return {int(x) for x in text.split(",") if x.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(prog="fake-engine")
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--release", default=RELEASE)
    parser.add_argument("--bad-from", type=int, default=10**6)
    parser.add_argument("--crash-at", default="")
    parser.add_argument("--flaky-at", default="")
    args, _ = parser.parse_known_args()
    release = int(args.release)
    if release in _numbers(args.crash_at):
        print(f"ERROR release {release}: ImportError: cannot import name 'kernel'", flush=True)
        sys.exit(1)
    every = 0
    if release in _numbers(args.flaky_at):
        every = 6 if os.environ.get("EVALRUN_REPROBE") == "2" else 3
    counter = itertools.count(1)
    lock = threading.Lock()

    def answer() -> str:
        if release >= args.bad_from and not every:
            return GARBLE
        with lock:
            n = next(counter)
        return GARBLE if every and n % every == 0 else "ok"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _send(self, body: dict[str, object]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.startswith("/version"):
                self._send({"version": f"{release}.0"})
                return
            self._send({"object": "list", "data": [{"id": args.model, "object": "model"}]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            message = {"role": "assistant", "content": answer()}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            self._send({"id": "x", "object": "chat.completion", "model": args.model,
                        "choices": [choice]})  # fmt: skip

    print(f"INFO fake engine release {release} on {args.host}:{args.port}", flush=True)
    backend = "B" if release >= args.bad_from else "A"  # logged the way vLLM logs
    print(f"INFO 12-07 03:20:11 [fake.py:1] resolved attention backend: {backend}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()

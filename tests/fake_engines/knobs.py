"""A fake engine whose answers depend on its flags, for bisects (standard library only).

    python knobs.py MODEL --host H --port P [--load-format F] [--boot-delay S] [--any-flag V ...]

It answers every chat request with the probe's expected "ok", except with
`--load-format instanttensor`, where every answer is garble. Flags it does not know are accepted
(the knobs a bisect varies). With --boot-delay it is unhealthy for that many seconds first.
"""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GARBLE = "carecarecarecarecarecarecarecarecarecare"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--load-format", default="auto")
    parser.add_argument("--boot-delay", type=float, default=0.0)
    args, _ = parser.parse_known_args()
    text = GARBLE if args.load_format == "instanttensor" else "ok"
    started = time.monotonic()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _ready(self) -> bool:
            return time.monotonic() - started >= args.boot_delay

        def do_GET(self) -> None:
            if not self._ready():
                self._send(503, {"error": "loading"})
                return
            self._send(200, {"object": "list", "data": [{"id": args.model, "object": "model"}]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if not self._ready():
                self._send(503, {"error": "loading"})
                return
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            self._send(
                200,
                {"id": "x", "object": "chat.completion", "model": args.model, "choices": [choice]},
            )

    print(f"INFO knobs engine on {args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()

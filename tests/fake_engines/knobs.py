"""A fake engine whose answers depend on its flags, for bisects (standard library only).

    python knobs.py MODEL --host H --port P [--load-format F] [--boot-delay S] [--any-flag V ...]

It answers every chat request with the probe's expected "ok", except with
`--load-format instanttensor`, where every answer is garble. Flags it does not know are accepted
(the knobs a bisect varies). With --boot-delay it is unhealthy for that many seconds first.
"""

from __future__ import annotations

import time
from http.server import ThreadingHTTPServer

# engine.py sits beside this script (a copy of this script needs it copied beside it too):
# the script's own folder is the first entry of sys.path.
from engine import JSONHandler, engine_parser

GARBLE = "carecarecarecarecarecarecarecarecarecare"


def main() -> None:
    parser = engine_parser("knobs.py")
    parser.add_argument("--load-format", default="auto")
    args, _ = parser.parse_known_args()
    text = GARBLE if args.load_format == "instanttensor" else "ok"
    started = time.monotonic()

    class Handler(JSONHandler):
        def log_message(self, *a: object) -> None:
            pass

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

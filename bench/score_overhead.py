"""How much time evalrun adds on top of the endpoint, against the bare asyncio + openai floor.

Setup: a fake OpenAI-compatible server in its own process, 100 ms per request, capacity 32
concurrent requests; a 184-item suite. The floor is what a user would write by hand: asyncio, a
semaphore and `openai.AsyncOpenAI().chat.completions.create` (the SDK's defaults), run in this
same process, in turns with evalrun so a change in load hits both. Figures:

- request phase at C = 1/8/32: in-process `score_suite` (model listing, provenance, run.json
  included) vs the floor's requests, and vs the ideal ceil(184/C) * 0.1 s;
- whole command at C = 32: `evalrun score` as a subprocess vs a `python -c` floor script
  (interpreter, `import openai`, the same 184 requests). Target: ratio <= 1.3;
- `evalrun --help` (target < 0.3 s).

    python bench/score_overhead.py [--repeat 3] [--levels 1,8,32]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

ITEMS, CONCURRENCY, LATENCY, CAPACITY = 184, 32, 0.1, 32
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def serve() -> None:
    """Child mode: a lean asyncio fake endpoint (so the bench measures evalrun, not the fake).

    HTTP/1.1 keep-alive, 100 ms per chat request, at most 32 in service at once; answers "ok".
    Prints its base URL, serves until stdin closes, then prints its own CPU seconds.
    """
    import asyncio
    import json

    async def main() -> None:
        slots = asyncio.Semaphore(CAPACITY)
        models = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]})
        answer = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "bench",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "ok"},
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1},
            }
        )

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    length = 0
                    for line in lines[1:]:
                        if line.lower().startswith("content-length:"):
                            length = int(line.split(":", 1)[1])
                    if length:
                        await reader.readexactly(length)
                    if lines[0].startswith("POST"):
                        async with slots:
                            await asyncio.sleep(LATENCY)
                        body = answer
                    else:
                        body = models
                    data = body.encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
                    )
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        server.close()

    asyncio.run(main())
    print(f"{time.process_time():.3f}", flush=True)


FLOOR = """
import asyncio, sys, openai
async def main(base, n, c):
    client = openai.AsyncOpenAI(base_url=base, api_key="x")
    sem = asyncio.Semaphore(c)
    async def one(i):
        async with sem:
            await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": f"q{i}"}],
                max_tokens=16, temperature=0)
    await asyncio.gather(*(one(i) for i in range(n)))
    await client.close()
asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""


def floor_phase(base_url: str, suite, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    """The bare asyncio + openai request phase, in this process."""
    import asyncio

    import openai

    async def go() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x")
        sem = asyncio.Semaphore(concurrency)

        async def one(item) -> None:  # type: ignore[no-untyped-def]
            async with sem:
                await client.chat.completions.create(
                    model="bench", messages=item.messages, max_tokens=item.max_tokens, temperature=0
                )

        await asyncio.gather(*(one(i) for i in suite.items))
        await client.close()

    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=ENV, cwd=str(ROOT))
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levels", default="1,8,32", help="concurrency levels of the phase")
    args = parser.parse_args()
    if args.serve:
        return serve()

    from fakeserver import simple_item, write_suite

    from evalrun.scoring.runner import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.store import RunStore
    from evalrun.suite.load import load_suite

    tmp = Path(tempfile.mkdtemp(prefix="evalrun-bench-"))
    suite_dir = write_suite(tmp / "suite", [simple_item(i) for i in range(ITEMS)], name="bench")
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    base_url = server.stdout.readline().strip()
    levels = [int(x) for x in args.levels.split(",")]
    try:
        py = sys.executable
        helps = [timed([py, "-m", "evalrun", "--help"]) for _ in range(5)]
        suite = load_suite(str(suite_dir))
        store = RunStore(tmp / "results-inproc")
        phases: dict[int, tuple[list[float], list[float], list[float]]] = {}
        for c in levels:
            ours, floors, cpus = [], [], []
            reps = 1 if c == 1 else args.repeat
            for n in range(reps + 1):  # the first pass warms imports and connections
                req = ScoreRequest(
                    target=Target.endpoint(base_url), suite=suite, concurrency=c, label=f"c{c}-{n}"
                )
                start, cpu = time.perf_counter(), time.process_time()
                record, _ = score_suite(req, store)
                took, cpu = time.perf_counter() - start, time.process_time() - cpu
                assert record.summary and record.summary.passed == ITEMS, record.summary
                floor = floor_phase(base_url, suite, c)
                if n:
                    ours.append(took)
                    cpus.append(cpu)
                    floors.append(floor)
            phases[c] = (ours, floors, cpus)
        wholes, floor_wholes = [], []
        for n in range(args.repeat):  # in turns, so a change in load hits both
            floor_wholes.append(timed([py, "-c", FLOOR, base_url, str(ITEMS), str(CONCURRENCY)]))
            wholes.append(
                timed(
                    [
                        *(py, "-m", "evalrun", "score", "--endpoint", base_url),
                        *("--suite", str(suite_dir), "--concurrency", str(CONCURRENCY)),
                        *("--results", str(tmp / "results-cli"), "--no-progress"),
                        *("--name", f"cli{n}"),
                    ]
                )
            )
    finally:
        server.stdin.close()
        server_cpu = server.stdout.readline().strip()
        server.wait(timeout=10)
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"evalrun --help: median {statistics.median(helps):.3f}s (target < 0.3 s)")
    for c, (ours, floors, cpus) in phases.items():
        ideal = math.ceil(ITEMS / c) * LATENCY
        ratios = [o / f for o, f in zip(ours, floors)]
        print(
            f"request phase C={c}: evalrun {statistics.median(ours):.3f}s, "
            f"bare asyncio+openai {statistics.median(floors):.3f}s, ratio "
            f"{statistics.median(ratios):.2f} (paired); ideal {ideal:.2f}s "
            f"(evalrun/ideal {statistics.median(ours) / ideal:.2f}); evalrun CPU "
            f"{1000 * statistics.median(cpus) / ITEMS:.2f} ms/item"
        )
    ratios = [w / f for w, f in zip(wholes, floor_wholes)]
    print(
        f"whole command C={CONCURRENCY}: evalrun score {statistics.median(wholes):.3f}s, "
        f"bare asyncio+openai script {statistics.median(floor_wholes):.3f}s, ratio "
        f"{statistics.median(ratios):.2f} (median of {len(ratios)} paired runs; target <= 1.3)"
    )
    print(f"fake server CPU over the whole bench: {server_cpu}s")


if __name__ == "__main__":
    main()

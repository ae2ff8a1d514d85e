"""How much time evalrun adds on top of the endpoint (issue 2, item 10). Prints figures and ratios.

Setup: a fake OpenAI-compatible server in its own process, 100 ms per request, capacity 32
concurrent requests; a 184-item suite; `--concurrency 32`. Ideal request phase:
ceil(184/32) * 0.1 s = 0.6 s. Targets: request phase <= 1.3x ideal; the whole command <= 1.3x
(ideal + start-up); `evalrun --help` < 0.3 s. The request phase is timed as the whole in-process
`score_suite` call (model listing, provenance and run.json included), and once more with the
openai client's default transport for comparison with evalrun's (evalrun/transport.py).

    python bench/score_overhead.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

ITEMS, CONCURRENCY, LATENCY, CAPACITY = 184, 32, 0.1, 32
IDEAL = math.ceil(ITEMS / CONCURRENCY) * LATENCY
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


@contextlib.contextmanager
def default_transport() -> Iterator[None]:
    """Score with the openai client's own transport, for comparison with evalrun's lean one."""
    from evalrun.scoring import runner

    lean = runner.make_client
    runner.make_client = functools.partial(lean, lean=False)
    try:
        yield
    finally:
        runner.make_client = lean


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
    args = parser.parse_args()
    if args.serve:
        return serve()

    from fakeserver import simple_item, write_suite

    from evalrun.scoring.runner import score_suite
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
    try:
        py = sys.executable
        helps = [timed([py, "-m", "evalrun", "--help"]) for _ in range(5)]
        bare = statistics.median(timed([py, "-c", "pass"]) for _ in range(5))
        imports = [
            py,
            "-c",
            (
                "import evalrun.cli, evalrun.commands.score, evalrun.scoring.runner, "
                "evalrun.scoring.report, evalrun.grading.registry, evalrun.grading.garble, "
                "evalrun.provenance, evalrun.endpoint.transport, openai, "
                "tabulate, git"
            ),
        ]
        suite = load_suite(str(suite_dir))

        def phase_runs(tag: str) -> tuple[list[float], list[float]]:
            phases, cpus = [], []
            for n in range(args.repeat + 1):  # the first run warms imports and connections
                start, cpu = time.perf_counter(), time.process_time()
                record, _ = score_suite(
                    endpoint=base_url,
                    suite=suite,
                    concurrency=CONCURRENCY,
                    store=RunStore(tmp / "results-inproc"),
                    progress=False,
                    label=f"{tag}{n}",
                )
                if n:
                    phases.append(time.perf_counter() - start)
                    cpus.append(time.process_time() - cpu)
                assert record.summary and record.summary.passed == ITEMS, record.summary
            return phases, cpus

        phases, cpus = phase_runs("bench")
        with default_transport():
            default_phases, _ = phase_runs("default")
        # start-up and the whole command are timed in turns, so a change in load hits both
        startups, wholes = [], []
        for n in range(args.repeat):
            startups.append(timed(imports))
            wholes.append(
                timed(
                    [
                        py,
                        "-m",
                        "evalrun",
                        "score",
                        "--endpoint",
                        base_url,
                        "--suite",
                        str(suite_dir),
                        "--concurrency",
                        str(CONCURRENCY),
                        "--results",
                        str(tmp / "results-cli"),
                        "--no-progress",
                        "--name",
                        f"cli{n}",
                    ]
                )
            )
    finally:
        server.stdin.close()
        server_cpu = server.stdout.readline().strip()
        server.wait(timeout=10)
    phase = statistics.median(phases)
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f} on {os.cpu_count()} cores")
    print(
        f"evalrun --help: median {statistics.median(helps):.3f}s (min {min(helps):.3f}s), "
        f"target < 0.3 s (a bare `python -c pass` takes {bare:.3f}s here)"
    )
    startup, whole = statistics.median(startups), statistics.median(wholes)
    print(f"start-up (interpreter + all imports of score): {startup:.3f}s")
    print(
        f"request phase: {phase:.3f}s for {ITEMS} items, ideal {IDEAL:.2f}s, "
        f"ratio {phase / IDEAL:.2f} (target <= 1.3)"
    )
    cpu = statistics.median(cpus)
    default = statistics.median(default_phases)
    print(
        f"  the same with openai's default httpx transport: {default:.3f}s, "
        f"ratio {default / IDEAL:.2f} (evalrun/transport.py is {default / phase:.2f}x faster)"
    )
    print(
        f"scorer CPU in the request phase: {cpu:.3f}s ({1000 * cpu / ITEMS:.2f} ms/item); "
        f"on an idle core the phase cannot beat max(ideal, CPU) = {max(IDEAL, cpu):.2f}s"
    )
    print(f"fake server CPU over the whole bench: {server_cpu}s")
    ratios = [w / (IDEAL + s) for w, s in zip(wholes, startups)]
    print(
        f"whole command: {whole:.3f}s, ideal + start-up {IDEAL + startup:.3f}s, "
        f"ratio {statistics.median(ratios):.2f} (median of {len(ratios)} paired runs; "
        "target <= 1.3)"
    )


if __name__ == "__main__":
    main()

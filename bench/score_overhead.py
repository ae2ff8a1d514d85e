"""How much time evalrun adds on top of the endpoint (issue 2, item 10). Prints figures and ratios.

Setup: a fake OpenAI-compatible server in its own process, 100 ms per request, capacity 32
concurrent requests; a 184-item suite; `--concurrency 32`. Ideal request phase:
ceil(184/32) * 0.1 s = 0.6 s. Targets: request phase <= 1.3x ideal; the whole command <= 1.3x
(ideal + start-up); `evalrun --help` < 0.3 s.

    python bench/score_overhead.py [--repeat 3]
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
IDEAL = math.ceil(ITEMS / CONCURRENCY) * LATENCY
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def serve() -> None:
    """Child mode: run the fake server until stdin closes."""
    from fakeserver import FakeServer

    with FakeServer(latency=LATENCY, capacity=CAPACITY) as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()


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

    from evalrun.results import RunStore
    from evalrun.runner import score_suite
    from evalrun.suite import load_suite

    tmp = Path(tempfile.mkdtemp(prefix="evalrun-bench-"))
    suite_dir = write_suite(tmp / "suite", [simple_item(i) for i in range(ITEMS)], name="bench")
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=ENV, text=True)
    base_url = server.stdout.readline().strip()
    try:
        py = sys.executable
        helps = [timed([py, "-m", "evalrun", "--help"]) for _ in range(5)]
        startup = statistics.median(timed([py, "-c", (
            "import evalrun.cli, evalrun.commands.score, evalrun.runner, evalrun.report, "
            "evalrun.graders, evalrun.garble, evalrun.provenance, openai, tabulate, git")])
            for _ in range(args.repeat))
        suite = load_suite(str(suite_dir))
        phases, cpus = [], []
        for n in range(args.repeat + 1):  # the first run warms imports and the connection pool
            start, cpu = time.perf_counter(), time.process_time()
            record, _ = score_suite(endpoint=base_url, suite=suite, concurrency=CONCURRENCY,
                                    store=RunStore(tmp / "results-inproc"), progress=False,
                                    label=f"bench{n}")
            if n:
                phases.append(time.perf_counter() - start)
                cpus.append(time.process_time() - cpu)
            assert record.summary and record.summary.passed == ITEMS, record.summary
        whole = statistics.median(timed([
            py, "-m", "evalrun", "score", "--endpoint", base_url, "--suite", str(suite_dir),
            "--concurrency", str(CONCURRENCY), "--results", str(tmp / "results-cli"),
            "--no-progress", "--name", f"cli{n}"]) for n in range(args.repeat))
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    phase = statistics.median(phases)
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f} on {os.cpu_count()} cores")
    print(f"evalrun --help: median {statistics.median(helps):.3f}s (min {min(helps):.3f}s), "
          "target < 0.3 s")
    print(f"start-up (interpreter + all imports of score): {startup:.3f}s")
    print(f"request phase: {phase:.3f}s for {ITEMS} items, ideal {IDEAL:.2f}s, "
          f"ratio {phase / IDEAL:.2f} (target <= 1.3)")
    cpu = statistics.median(cpus)
    print(f"scorer CPU in the request phase: {cpu:.3f}s ({1000 * cpu / ITEMS:.2f} ms/item); "
          f"on an idle core the phase cannot beat max(ideal, CPU) = {max(IDEAL, cpu):.2f}s")
    print(f"whole command: {whole:.3f}s, ideal + start-up {IDEAL + startup:.3f}s, "
          f"ratio {whole / (IDEAL + startup):.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()

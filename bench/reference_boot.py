"""Boot the reference contract a few times; print boot time, first-answer latency, teardown time.

    python -m bench.reference_boot [N]

Figures only (no assertions). Boot time = start to ready (health 200 + one-token completion).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import httpx2 as httpx

from evalrun.serving.contract import load_contract, reference_contract_path
from evalrun.serving.launcher import boot_server


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    contract = load_contract(reference_contract_path(), sets=["port=0"])
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for n in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            with boot_server(contract, Path(tmp) / "server.log") as server:
                t0 = time.monotonic()
                httpx.post(
                    f"{server.base_url}/chat/completions",
                    timeout=300,
                    json={
                        "model": server.model,
                        "max_tokens": 32,
                        "messages": [{"role": "user", "content": "What is the capital of France?"}],
                    },
                )
                answer_s = time.monotonic() - t0
                t1 = time.monotonic()
            teardown_s = time.monotonic() - t1
            print(
                f"run {n + 1}: boot {server.boot_seconds:.1f}s  32-token answer {answer_s:.2f}s  "
                f"teardown {teardown_s:.2f}s  total {time.monotonic() - start:.1f}s"
            )


if __name__ == "__main__":
    main()

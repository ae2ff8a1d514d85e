"""The decode slope of the embedded reference engine (llama.cpp, SmolLM2-135M Q4_1, 2 CPU threads).

Boots `evalrun slope --reference` with depths up to a slot's context (ctx-size / 4 slots) and
prints the slope table (per-stream decode t/s with ratio to d0, cliffs, TTFT and aggregate t/s)
and the path of slope.png. llama.cpp's server decodes the c2 streams in two slots at once.

    python -m bench.slope_reference [--depths 0,2k,8k] [--ctx-size 36864] [--runs 1]

Figures depend on the machine and on what else runs on it: read them as a shape, not a target.
Measured 2026-11-30 on the 2-core box with the earlier reference, llama-cpp-python's server (busy;
that build prefilled ~30-90 tokens/s, so the 8K point alone took minutes): c1 decode 30.3 t/s at
d0, 12.8 at 2K (0.42, a cliff by the half rule), 6.7 at 8K (0.22); TTFT 3.8 s, 62 s, 217 s. Not
yet re-measured on llama.cpp's own server.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    from evalrun.cli import main as evalrun

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", default="0,2k,8k")
    ap.add_argument("--ctx-size", type=int, default=36864, help="shared by 4 slots")
    ap.add_argument("--pp", type=int, default=256)
    ap.add_argument("--tg", type=int, default=32)
    ap.add_argument("--concurrency", default="1,2")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--results", default=None, help="results dir (default: a temp dir)")
    args = ap.parse_args()
    results = args.results or tempfile.mkdtemp(prefix="slope-bench-")
    start = time.perf_counter()
    code = evalrun(
        [
            "slope",
            "--reference",
            "--set",
            "port=0",
            "--set",
            f"ctx-size={args.ctx_size}",
            "--depths",
            args.depths,
            "--pp",
            str(args.pp),
            "--tg",
            str(args.tg),
            "--concurrency",
            args.concurrency,
            "--runs",
            str(args.runs),
            "--results",
            results,
            "--name",
            "reference-bench",
        ]
    )
    print(f"\nwall time {time.perf_counter() - start:.0f} s (boot, calibration, all points)")
    return code


if __name__ == "__main__":
    sys.exit(main())

"""The same vLLM contract scored twice, 20 times over: how often fidelity calls it divergent.

    python -m bench.fidelity_repeats capture [--boots 5] [--per-boot 8]   # boots vLLM, one at a time
    python -m bench.fidelity_repeats figures                              # the table

`capture` boots the `vllm-cpu` lane's contract (bisect/contracts/vllm-cpu.yaml, `evalrun lane
setup vllm-cpu`) `--boots` times and scores it `--per-boot` times against each boot with `evalrun
score --endpoint`, at concurrency 1 and 8 in turn, on REPEAT_ITEMS: the probe items of
bench/fidelity_calibration.py without tool-006 and long-001, whose 128-token and 2K-context
answers take 15 s and 27 s of a 2-core machine and would dominate 40 runs. Runs are labelled
`fid-rep-b<boot>-r<run>` in bench-results/.

`figures` forms the 20 repeats and judges each with the library's one code path
(evalrun.compare.fidelity at its default thresholds). What *independent* means here: no run is in
two repeats, and the two runs of a repeat come from different boots (a user who scores a contract
twice boots it twice: model load, memory layout and kernel choice start over) and different
concurrency (1 against 8: other batch shapes, the main source of numeric wobble on CPU). Boot b's
runs 0-3 are paired with boot b+1's runs 7-4 (boot 5's with boot 1's), so 5 boots x 8 runs give 20
disjoint cross-boot, cross-concurrency pairs. Boots are shared between repeats (each boot is in 8
repeats): 20 boots per side would be the fully independent design, about 2 hours of this machine
loaded, not 25 minutes. The same-boot pairs (runs 2k and 2k+1 of one boot: same server, other
concurrency) and cross-boot pairs at one concurrency (run 0, concurrency 1, of each boot with the
next boot's, and run 1, concurrency 8) are printed apart: they share runs with the repeats.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench-results"
CONTRACT = REPO / "bisect" / "contracts" / "vllm-cpu.yaml"
REPEAT_ITEMS = (
    "canary-001,canary-002,canary-003,canary-005,canary-006,canary-007,canary-008,canary-010,"
    "canary-011,math-001,factual-001,ml-001,code-001"
)
LABEL = "fid-rep"


def capture(boots: int, per_boot: int) -> None:
    """Each boot is scored `per_boot` times, alternating concurrency 1 and 8."""
    from evalrun.serving.contract import load_contract
    from evalrun.serving.launcher import boot_server

    contract = load_contract(CONTRACT, sets=["port=0"])
    for b in range(1, boots + 1):
        with tempfile.TemporaryDirectory(prefix="fid-rep-") as tmp:
            with boot_server(contract, Path(tmp) / "server.log") as server:
                print(f"boot {b}: ready in {server.boot_seconds:.0f} s", flush=True)
                for r in range(per_boot):
                    cmd = [
                        str(REPO / ".venv" / "bin" / "evalrun"),
                        "score",
                        "--endpoint",
                        server.base_url,
                        "--model",
                        server.model,
                        "--items",
                        REPEAT_ITEMS,
                        "--concurrency",
                        "1" if r % 2 == 0 else "8",
                        "--results",
                        str(RESULTS),
                        "--name",
                        f"{LABEL}-b{b}-r{r}",
                        "--no-progress",
                    ]
                    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
                    print(f"  run {r} scored", flush=True)


def runs_by_boot() -> dict[int, dict[int, str]]:
    """bench-results' fid-rep runs: {boot: {run: run id}} (the latest run of each label)."""
    from evalrun.store import RunStore

    store = RunStore(RESULTS)
    out: dict[int, dict[int, str]] = {}
    for run_id in store.run_ids():
        label = store.load_run(run_id).label
        if not label.startswith(LABEL + "-b"):
            continue
        boot, run = label[len(LABEL) + 2 :].split("-r")
        out.setdefault(int(boot), {})[int(run)] = run_id
    return out


def repeats(runs: dict[int, dict[int, str]], per_boot: int) -> list[tuple[str, str]]:
    """Disjoint cross-boot pairs: boot b's run j with boot b+1's run per_boot-1-j, j < half."""
    boots = sorted(runs)
    pairs = []
    for i, b in enumerate(boots):
        nxt = boots[(i + 1) % len(boots)]
        for j in range(per_boot // 2):
            a, c = runs[b].get(j), runs[nxt].get(per_boot - 1 - j)
            if a and c:
                pairs.append((a, c))
    return pairs


def figures(per_boot: int) -> None:
    from evalrun.compare.fidelity import runs_fidelity
    from evalrun.store import RunStore

    store = RunStore(RESULTS)
    runs = runs_by_boot()
    if len(runs) < 2:
        raise SystemExit("no fid-rep runs from two boots: run `capture` first")
    for title, pairs in (
        ("repeats (cross-boot, concurrency 1 vs 8)", repeats(runs, per_boot)),
        (
            "same-boot pairs (concurrency 1 vs 8)",
            [
                (r[j], r[j + 1])
                for r in runs.values()
                for j in range(0, per_boot - 1, 2)
                if j in r and j + 1 in r
            ],
        ),
        (
            "cross-boot pairs at one concurrency (run 0 of each boot with the next boot's)",
            [
                (runs[a][0], runs[b][0])
                for a, b in zip(sorted(runs), sorted(runs)[1:])
                if 0 in runs[a] and 0 in runs[b]
            ]
            + [
                (runs[a][1], runs[b][1])
                for a, b in zip(sorted(runs), sorted(runs)[1:])
                if 1 in runs[a] and 1 in runs[b]
            ],
        ),
    ):
        counts: dict[str, int] = {}
        print(f"{title}: {len(pairs)}")
        print(f"  {'A':<34} {'B':<34} {'verdict':<11} ident near hard  p      drift")
        for a, b in pairs:
            f = runs_fidelity(store, a, b)
            counts[f.verdict] = counts.get(f.verdict, 0) + 1
            print(
                f"  {a:<34} {b:<34} {f.verdict:<11} {f.identical:>5} {f.near_tie:>4} {f.hard:>4}"
                f"  {f.p_value:<6.3g} {f.drift:.4f}"
            )
        print("  verdicts:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--boots", type=int, default=5)
    c.add_argument("--per-boot", type=int, default=8)
    f = sub.add_parser("figures")
    f.add_argument("--per-boot", type=int, default=8)
    args = p.parse_args(argv)
    if args.cmd == "capture":
        capture(args.boots, args.per_boot)
    else:
        figures(args.per_boot)
    return 0


if __name__ == "__main__":
    sys.exit(main())

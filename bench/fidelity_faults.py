"""Fidelity of the garble corpus's real partial-damage vLLM lanes against the healthy lane.

    python -m bench.capture_vllm_faults --tokens --only healthy,<the capture_vllm_faults lanes>
    python -m bench.capture_vllm_faults3 --tokens --only <the capture_vllm_faults3 lanes>
    python -m bench.fidelity_faults          # the table; writes bench/data/fidelity_faults.json

*Partial damage*, from the hand labels alone (never from a verdict): a fault lane of the real vLLM
runs (bench/vllm_faults_labels.tsv, bench/vllm_faults3_labels.tsv) whose own answers (not the
collapse continuations, not the rows labelled drop) are garbled in fewer than half — a lane whose
answers mostly stay fluent, what a per-text rule misses. That selects 9 lanes: rope base 1000, a
zeroed layer-15 down_proj, 10% of embedding rows 300-8000 permuted, the embedding x3, fp8 and
fp8_e5m2 KV caches (capture_vllm_faults) and 10% of rows 8000-20000 permuted, noise on every v_proj,
layers 20-21 exchanged (capture_vllm_faults3).

Each fault lane (one boot) is judged against each healthy boot, and each pair of healthy boots
against each other, by the library's one code path (evalrun.compare.fidelity.judge, default
thresholds) on the items both answered. A lane counts as divergent when it is divergent against
every healthy boot.
"""

from __future__ import annotations

import itertools
import json
import sys

from bench.capture_garble_corpus import ROOT
from bench.capture_vllm_faults import VLLM, FaultRun, tokens_path
from bench.capture_vllm_faults3 import VLLM3

OUT = ROOT / "bench" / "data" / "fidelity_faults.json"
RUNS: tuple[FaultRun, ...] = (VLLM, VLLM3)


def partial_damage(run: FaultRun) -> list[str]:
    """The run's faults whose own answers the hand labels call garbled in fewer than half."""
    garbled: dict[str, int] = {}
    kept: dict[str, int] = {}
    for line in run.labels.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        source, label = line.split("\t")[:2]
        head = source.split("/")[0]
        prefix = f"vllm-0.32-{run.tag}-"
        if not head.startswith(prefix) or label == "drop":
            continue
        name = head[len(prefix) :]
        kept[name] = kept.get(name, 0) + 1
        garbled[name] = garbled.get(name, 0) + (label == "garbled")
    return [n for n, _, _ in run.faults if n in kept and garbled.get(n, 0) * 2 < kept[n]]


def load(run: FaultRun) -> dict[tuple[str, int], dict]:
    """{(lane, boot): {item id: TokenTrace}} of a run's --tokens capture."""
    from evalrun.endpoint.logprobs import TokenTrace
    from evalrun.suite.load import read_jsonl

    out: dict[tuple[str, int], dict] = {}
    path = tokens_path(run)
    if not path.exists():
        return out
    for r in read_jsonl(path):
        trace = TokenTrace.model_validate(r["trace"])
        out.setdefault((r["lane"], r["boot"]), {})[trace.id] = trace
    return out


def main() -> int:
    from evalrun.compare.fidelity import judge

    lanes: dict[tuple[str, int], dict] = {}
    for run in RUNS:
        lanes |= load(run)
    healthy = sorted(k for k in lanes if k[0] == "healthy")
    if not healthy:
        raise SystemExit("no healthy traces: run `python -m bench.capture_vllm_faults --tokens`")
    rows: list[dict] = []

    def pair(a: tuple[str, int], b: tuple[str, int]) -> dict:
        ids = [i for i in lanes[a] if i in lanes[b]]
        f = judge(lanes[a], lanes[b], ids)
        first = f.divergences[0] if f.divergences else None
        row = {
            "a": f"{a[0]}#{a[1]}",
            "b": f"{b[0]}#{b[1]}",
            **f.model_dump(include={"verdict", "items", "identical", "near_tie", "hard"}),
            **f.model_dump(include={"retokenized", "tokens", "drift", "p_value"}),
            "first": None
            if first is None
            else f"{first.id}@{first.position} {first.a_token!r}->{first.b_token!r} ({first.kind})",
        }
        rows.append(row)
        return row

    print(f"{'A':<22} {'B':<22} {'verdict':<11} items ident near hard  p        drift")

    def show(r: dict) -> None:
        print(
            f"{r['a']:<22} {r['b']:<22} {r['verdict']:<11} {r['items']:>5} {r['identical']:>5}"
            f" {r['near_tie']:>4} {r['hard']:>4}  {r['p_value']:<8.2g} {r['drift']:.4f}"
        )

    for a, b in itertools.combinations(healthy, 2):
        show(pair(a, b))
    lanes_verdict: dict[str, str] = {}
    for run in RUNS:
        for name in partial_damage(run):
            if (name, 1) not in lanes:
                lanes_verdict[name] = "not captured"
                print(f"{name:<22} not captured (did it boot? see results/*-{name}-tokens.log)")
                continue
            verdicts = set()
            for h in healthy:
                r = pair(h, (name, 1))
                show(r)
                verdicts.add(r["verdict"])
            lanes_verdict[name] = "/".join(sorted(verdicts))
    healthy_bad = sum(r["verdict"] == "divergent" for r in rows if r["b"].startswith("healthy"))
    caught = sum(v == "divergent" for v in lanes_verdict.values())  # against every healthy boot
    print(
        f"partial-damage lanes divergent from every healthy boot: {caught} of {len(lanes_verdict)}"
        f"; healthy pairs divergent: {healthy_bad} of {len(list(itertools.combinations(healthy, 2)))}"
    )
    OUT.write_text(
        json.dumps({"lanes": lanes_verdict, "pairs": rows}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    print("written", OUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

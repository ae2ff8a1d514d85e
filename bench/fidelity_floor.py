"""A lane's noise floor from stored runs: per-setting floors, false alarms and power, offline.

    python -m bench.fidelity_floor --aa np16=RUN,RUN,RUN --aa np1=RUN,RUN,RUN \\
        [--healthy fa-off=RUN,RUN] [--fault q4_0=RUN,RUN] [--results DIR] [--json]

Every RUN is a run id (or tag, `latest:<label>`) in --results, or a run's folder (a directory
holding run.json, items.jsonl and tokens.jsonl): ordinary `evalrun score` runs, greedy, with
token capture on (the default). Scoring one contract several times makes its A/A runs: e.g. on a
GPU, `for i in 1 2 3 4; do evalrun score --contract c.yaml --label np16-$i --items ...; done`.

- `--aa SETTING=RUNS`: runs of one setting (one contract, scored again or booted again) on the
  same items. Every pair of them is an A/A pair: their figures make the setting's floor table.
- `--healthy NAME=RUNS`: runs of a harmless change (another slot count, flash attention off)
  that should read within the noise (or at most numerically different), never divergent.
- `--fault NAME=RUNS`: runs of a fault (a q4_0 KV cache, a wrong rope base) that should be
  reported outside the noise (and divergent).

Each setting with at least two runs is a baseline: for every ordered pair (A, A') of its runs,
A' is A's A/A partner (the floor, as `evalrun compare A B --floor A'` measures it) and every
other run B is judged against A twice: with the fixed constants (compare/fidelity.py DEFAULTS)
and with A's floor (compare/floor.py). B is a third run of the same setting (an A/A repeat: a
false alarm if flagged), a `--healthy` run, or a `--fault` run (power). The triples reuse runs
(re-pairing a pool: k runs give k(k-1)(k-2) A/A repeats), so they are not independent trials:
say so when quoting the rates. "both floors": B judged against the wider of A's floor and B's own
(B against another run of its setting, as `--candidate-floor` gives it), where B's setting has a
run to spare.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from evalrun.compare.fidelity import Fidelity, against_floor, records_fidelity
from evalrun.compare.floor import Floor, floor_of
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store import ItemRecord, RunRecord, RunStore
from evalrun.store.tokens import load_traces

OUTSIDE = ("numerically different", "divergent")


@dataclass(frozen=True)
class Run:
    """One stored run, loaded once."""

    name: str
    record: RunRecord
    items: list[ItemRecord]
    traces: dict[str, TokenTrace]


def load(ref: str, results: Path) -> Run:
    """A run by id in `results`, or by its folder."""
    path = Path(ref)
    if (path / "run.json").is_file():
        store, run_id = RunStore(path.parent), path.name
    else:
        store, run_id = RunStore(results), ref
    record = store.load_run(run_id)
    folder = store.run_dir(record.run_id)
    return Run(record.run_id, record, store.load_items(record.run_id), load_traces(folder))


def pair(a: Run, b: Run, floor: Floor | None = None) -> Fidelity:
    """B judged against A (against A's floor when given)."""
    return records_fidelity(a.record, a.items, a.traces, b.record, b.items, b.traces, floor=floor)


def groups(specs: list[str], results: Path) -> dict[str, list[Run]]:
    out: dict[str, list[Run]] = {}
    for spec in specs:
        name, sep, refs = spec.partition("=")
        if not sep or not refs:
            raise SystemExit(f"fidelity_floor: {spec!r}: write NAME=RUN[,RUN...]")
        out.setdefault(name, []).extend(load(r, results) for r in refs.split(",") if r)
    return out


def floor_rows(aa: dict[str, list[Run]]) -> list[dict[str, object]]:
    """Per setting: every A/A pair's figures, and the pooled floor."""
    rows: list[dict[str, object]] = []
    for setting, runs in aa.items():
        pairs = [pair(a, b) for a, b in itertools.combinations(runs, 2)]
        pairs = [f for f in pairs if f.verdict != "not comparable"]
        pooled = floor_of(pairs, setting)
        drifts = [f.drift for f in pairs]
        rows.append(
            {
                "setting": setting,
                "runs": len(runs),
                "pairs": len(pairs),
                "items": pooled.items if pooled else 0,
                "diverged": pooled.diverged if pooled else 0,
                "hard": pooled.hard if pooled else 0,
                "drift": pooled.drift if pooled else None,
                "drift_min": min(drifts, default=None),
                "drift_max": max(drifts, default=None),
                "constants": dict(_count(f.verdict for f in pairs)),
            }
        )
    return rows


def _count(verdicts: object) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for v in verdicts:  # type: ignore[attr-defined]
        out[v] = out.get(v, 0) + 1
    return sorted(out.items())


def triples(
    aa: dict[str, list[Run]], healthy: dict[str, list[Run]], faults: dict[str, list[Run]]
) -> list[dict[str, object]]:
    """Every (A, A' partner, B) judged with the constants and with A's floor."""
    rows: list[dict[str, object]] = []
    pools = {**aa, **healthy, **faults}
    for setting, runs in aa.items():
        for a, partner in itertools.permutations(runs, 2):
            aa_pair = pair(a, partner)
            floor = floor_of([aa_pair], f"{setting}: {partner.name}")
            if floor is None or aa_pair.verdict == "not comparable":
                continue
            cands = [("aa", setting, b) for b in runs if b not in (a, partner)]
            cands += [("healthy", n, b) for n, bs in healthy.items() for b in bs]
            cands += [("fault", n, b) for n, bs in faults.items() for b in bs]
            for role, name, b in cands:
                if b.name in (a.name, partner.name):  # a run against itself says nothing
                    continue
                fixed = pair(a, b)
                graded = pair(a, b, floor)
                if fixed.verdict == "not comparable":
                    continue
                # B's own A/A partner (another run of B's setting), as --candidate-floor
                mates = [
                    x for x in pools.get(name, []) if x.name not in (a.name, partner.name, b.name)
                ]
                own = floor_of([pair(b, mates[0])], f"{name}: {mates[0].name}") if mates else None
                both = against_floor(fixed, floor, own) if own is not None else graded
                rows.append(
                    {
                        "base": setting,
                        "role": role,
                        "cand": name,
                        "a": a.name,
                        "partner": partner.name,
                        "b": b.name,
                        "constants": fixed.verdict,
                        "floor": graded.verdict,
                        "both": both.verdict,
                        "units": graded.floor.units if graded.floor else None,
                        "hard": fixed.hard,
                        "diverged": fixed.items - fixed.identical,
                        "items": fixed.items,
                        "drift": fixed.drift,
                        "floor_drift": floor.drift,
                    }
                )
    return rows


def rates(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per (base, role, candidate): how often each judge flags it."""
    out = []
    key = lambda r: (r["base"], r["role"], r["cand"])  # noqa: E731
    for (base, role, cand), group in itertools.groupby(sorted(rows, key=key), key=key):
        g = list(group)
        units = sorted(float(r["units"]) for r in g if r["units"] is not None)  # type: ignore[arg-type]
        out.append(
            {
                "base": base,
                "role": role,
                "cand": cand,
                "n": len(g),
                "constants_divergent": sum(r["constants"] == "divergent" for r in g),
                "floor_divergent": sum(r["floor"] == "divergent" for r in g),
                "floor_outside": sum(r["floor"] in OUTSIDE for r in g),
                "both_divergent": sum(r["both"] == "divergent" for r in g),
                "both_outside": sum(r["both"] in OUTSIDE for r in g),
                "units_median": units[len(units) // 2] if units else None,
                "units_range": [units[0], units[-1]] if units else None,
            }
        )
    return out


def render(floors: list[dict[str, object]], summary: list[dict[str, object]]) -> str:
    from evalrun.base.tables import table

    lines = ["A/A floors (every pair of a setting's runs):"]
    lines.append(
        table(
            [
                [
                    f["setting"],
                    f["runs"],
                    f["pairs"],
                    f"{f['diverged']}/{f['items']}",
                    f"{f['hard']}/{f['items']}",
                    f["drift"],
                    f"{f['drift_min']}-{f['drift_max']}",
                    ", ".join(f"{k} {v}" for k, v in f["constants"].items()),  # type: ignore[attr-defined]
                ]
                for f in floors
            ],
            headers=["setting", "runs", "pairs", "diverged", "hard", "drift", "range", "constants"],
        )
    )
    lines += ["", "Candidates against A with A's A/A partner as the floor (A, A', B triples):"]
    lines.append(
        table(
            [
                [
                    s["base"],
                    s["role"],
                    s["cand"],
                    s["n"],
                    f"{s['constants_divergent']}/{s['n']}",
                    f"{s['floor_divergent']}/{s['n']}",
                    f"{s['floor_outside']}/{s['n']}",
                    f"{s['both_divergent']}/{s['n']}",
                    f"{s['both_outside']}/{s['n']}",
                    s["units_median"],
                    s["units_range"],
                ]
                for s in summary
            ],
            headers=[
                "base",
                "role",
                "candidate",
                "triples",
                "divergent (constants)",
                "divergent (floor)",
                "outside noise (floor)",
                "divergent (both floors)",
                "outside (both floors)",
                "floor units (median)",
                "range",
            ],
        )
    )
    lines.append("role aa/healthy: a flag is a false alarm; role fault: a flag is a catch (power).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fidelity_floor", description=__doc__)
    p.add_argument("--aa", action="append", default=[], metavar="SETTING=RUNS", required=True)
    p.add_argument("--healthy", action="append", default=[], metavar="NAME=RUNS")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=RUNS")
    p.add_argument("--results", type=Path, default=Path("results"), metavar="DIR")
    p.add_argument("--json", action="store_true", help="print every triple as JSON too")
    args = p.parse_args(argv)
    aa = groups(args.aa, args.results)
    healthy, faults = groups(args.healthy, args.results), groups(args.fault, args.results)
    floors = floor_rows(aa)
    rows = triples(aa, healthy, faults)
    summary = rates(rows)
    if args.json:
        print(json.dumps({"floors": floors, "summary": summary, "triples": rows}, indent=1))
    else:
        print(render(floors, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often the default sign-off policy blocks two lanes of the same quality, and how often it
catches real drops, under seeded simulated noise on the core suite's category sizes.

Every trial draws two lanes item by item, pairs them and runs the gate's own rules
(evalrun.compare.family + evalrun.signoff.rules.family_checks, the code `evalrun signoff` runs);
a trial is blocked when any rule fails. Noise models:

- `discordance d`: a share 2d of the items is flaky (passes half the time, independently in each
  lane), the rest pass or fail for good, 90% passing overall: two identical lanes disagree on
  about d of the items (temperature 0 on a nondeterministic engine);
- `independent 90%`: every item passes with probability 0.9, independently in each lane and
  repeat (sampling): about 18% of the items differ;
- in every case both lanes also loop (a small model's own repetition loops, flagged as garble) on
  3.3% of their answers, independently: the paired garble rule must not block on that.

Real drops, applied to the candidate: the long-context category collapsing from 8/8 to 0/8; one
22-item category losing half its items (11 of 22 that passed now fail); the total losing
8 points spread evenly (15 items across the categories); an engine that garbles 12% of its
answers on top of the loops; a mis-loaded engine that garbles 60%.

    python -m bench.signoff_calibration [--trials 4000] [--seed 0]

Prints a table: case, noise, repeats, share of trials blocked, and the target.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from evalrun.compare.family import Diff, family, majority
from evalrun.signoff.policy import Policy
from evalrun.signoff.rules import family_checks
from evalrun.suite.load import load_suite
from evalrun.verdicts import LaneGarble

CORE = dict(sorted(Counter(i.category for i in load_suite("core").items).items()))  # 184 items
PASS_RATE = 0.9
LOOP_RATE = 0.033  # SmolLM2-135M's own loops: 6 of 184 answers on vLLM, 4 on sglang


@dataclass(frozen=True)
class Case:
    """One row of the table: a drop (or none) under a noise model, with its target."""

    name: str
    drop: str  # none, long-context, category, total, garble, misloaded
    noise: float | None  # discordance d, or None for independent sampling at 90%
    repeats: int = 1

    @property
    def noise_label(self) -> str:
        return "independent 90%" if self.noise is None else f"discordance {self.noise:.0%}"

    @property
    def target(self) -> tuple[str, float]:
        """('<=', bound) for identical lanes, ('>=', bound) for drops."""
        if self.drop == "none":
            if (self.noise is None and self.repeats == 1) or (self.noise or 0) > 0.05:
                return ("<=", 0.05)  # the policy's alpha: the family-wise bound
            return ("<=", 0.01)
        return (">=", 0.95)


def cases() -> list[Case]:
    out = [Case("identical lanes", "none", d) for d in (0.01, 0.03, 0.05, 0.10)]
    out += [Case("identical lanes", "none", None), Case("identical lanes", "none", None, 3)]
    out += [Case("identical lanes", "none", 0.05, 3)]
    for drop, name in (
        ("long-context", "long-context 8/8 -> 0/8"),
        ("category", "one 22-item category -50 points"),
        ("total", "total -8 points, spread evenly"),
        ("garble", "engine garbles 12% more answers"),
        ("misloaded", "mis-loaded engine, 60% garbled"),
    ):
        out += [Case(name, drop, d) for d in (0.01, 0.03)]
    return out


def _lane_probs(rng: random.Random, noise: float | None) -> list[tuple[str, float]]:
    """(category, pass probability) per item, drawn once per trial and shared by both lanes."""
    items = [(cat, 0.0) for cat, n in CORE.items() for _ in range(n)]
    if noise is None:
        return [(cat, PASS_RATE) for cat, _ in items]
    flaky = 2 * noise
    stable_pass = (PASS_RATE - flaky / 2) / (1 - flaky)
    out = []
    for cat, _ in items:
        if rng.random() < flaky:
            out.append((cat, 0.5))
        else:
            out.append((cat, 1.0 if rng.random() < stable_pass else 0.0))
    return out


def _dropped(case: Case, rng: random.Random, probs: list[tuple[str, float]]) -> list[float]:
    """Candidate pass probabilities: the baseline's, with the case's drop applied. The dropped
    items pass for good in the baseline (so the drop is what the case says it is)."""
    base = [p for _, p in probs]
    cand = list(base)
    idx: list[int] = []
    if case.drop == "long-context":
        idx = [i for i, (c, _) in enumerate(probs) if c == "long-context"]
    elif case.drop == "category":
        logic = [i for i, (c, _) in enumerate(probs) if c == "logic"]
        idx = rng.sample(logic, 11)
    elif case.drop == "total":
        by_cat: dict[str, list[int]] = {}
        for i, (c, _) in enumerate(probs):
            by_cat.setdefault(c, []).append(i)
        cats = sorted(by_cat, key=lambda c: -len(by_cat[c]))
        idx = [rng.choice(by_cat[cats[k % len(cats)]]) for k in range(15)]
        idx = list(dict.fromkeys(idx))
        while len(idx) < 15:
            extra = rng.randrange(len(probs))
            if extra not in idx:
                idx.append(extra)
    for i in idx:
        base[i], cand[i] = 1.0, 0.0
    probs[:] = [(c, b) for (c, _), b in zip(probs, base, strict=True)]
    return cand


def _outcome(rng: random.Random, p: float, repeats: int) -> Fraction | int:
    """One lane's outcome for an item: pass/fail, or the majority over its repeats (what
    evalrun.compare.pairing feeds the family)."""
    passes = sum(rng.random() < p for _ in range(repeats))
    return passes if repeats == 1 else majority(Fraction(passes, repeats))


def trial(case: Case, rng: random.Random, policy: Policy) -> bool:
    """One simulated baseline/candidate pair; True when the gate blocks the candidate."""
    probs = _lane_probs(rng, case.noise)
    cand = _dropped(case, rng, probs)
    pairs: list[tuple[str, Diff]] = []
    for (cat, pa), pb in zip(probs, cand, strict=True):
        ra, rb = _outcome(rng, pa, case.repeats), _outcome(rng, pb, case.repeats)
        d = rb - ra
        pairs.append((cat, int(d) if isinstance(d, int) or d.denominator == 1 else d))
    extra = {"garble": 0.12, "misloaded": 0.60}.get(case.drop, 0.0)
    garble: list[Diff] = []
    b_garbled = b_loops = 0
    for _ in probs:
        ga = rng.random() < LOOP_RATE
        loop_b = rng.random() < LOOP_RATE
        soup_b = rng.random() < extra
        gb = loop_b or soup_b
        garble.append(int(ga) - int(gb))
        b_garbled += gb
        b_loops += loop_b and not soup_b
    fam = family(pairs, garble)
    own = LaneGarble(garbled=b_garbled, loops=b_loops, answered=len(probs))
    checks = family_checks(fam.total, fam.categories, fam.garble, own, policy)
    return any(c.outcome == "fail" for c in checks)


def blocked_share(case: Case, trials: int, seed: int, policy: Policy | None = None) -> float:
    """Share of `trials` seeded trials in which the gate blocks the candidate."""
    rng = random.Random(f"{seed}:{case}")
    policy = policy or Policy()
    return sum(trial(case, rng, policy) for _ in range(trials)) / trials


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from evalrun.base.tables import table

    rows = []
    started = time.monotonic()
    for case in cases():
        share = blocked_share(case, args.trials, args.seed)
        op, bound = case.target
        ok = share <= bound if op == "<=" else share >= bound
        rows.append(
            [
                case.name,
                case.noise_label,
                case.repeats,
                f"{100 * share:.1f}%",
                f"{op} {100 * bound:g}%",
                "yes" if ok else "NO",
            ]
        )
        print(f"  {case.name}, {case.noise_label}, x{case.repeats}: done", file=sys.stderr)
    print(table(rows, ["case", "noise", "repeats", "blocked", "target", "met"], numparse=False))
    print(
        f"{args.trials} trials per case, seed {args.seed}, default policy, "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""bisect judges every trial against the good side's own noise floor, measured in the run."""

from __future__ import annotations

import json
import random
import threading
import zlib

import pytest
from fakeserver import reply, simple_item, write_suite
from test_bisect_driver import FakeEngine, _contract, _req

from evalrun.bisection.driver import run_bisect

pytestmark = pytest.mark.slow

LENGTH = 20


class WobblyEngine(FakeEngine):
    """Every answer's logprobs wobble per request (as batching moves a GPU lane's numerics:
    about 0.12 nats a token, and the first token's near tie flips on some requests), so two
    asks of one prompt differ in near ties and drift. `fault(contract)` makes a lane answer
    another first token outright (a fluent fault: hard divergences, no garble)."""

    def __init__(self, fault):
        super().__init__(lambda c: "ok")
        self.fault = fault
        self.draws = 0
        self.lock = threading.Lock()

    def __call__(self, contract, log_path, *, on_progress=None):
        broken = self.fault(contract)
        parent = super().__call__(contract, log_path, on_progress=on_progress)

        def rule(body):
            with self.lock:
                self.draws += 1
                rng = random.Random(self.draws)
            return reply("ok", tokens=self.tokens(rng, broken))

        server = parent.__enter__()
        self.servers[-1].rule = rule
        return _Entered(parent, server)

    @staticmethod
    def tokens(rng: random.Random, broken: bool) -> list:
        first = ("ok", -0.6, [("ok", -0.6), ("OK", -0.7)])
        if rng.random() < 0.3:  # a near tie the other way
            first = ("OK", -0.6, [("OK", -0.6), ("ok", -0.65)])
        if broken:
            first = ("no", -0.1, [("no", -0.1), ("ok", -5.0)])
        out = [first]
        for k in range(LENGTH):
            lp = -0.3 - 0.02 * k + rng.uniform(-0.12, 0.12)
            out.append((f" w{k}", lp, [(f" w{k}", lp), (f" v{k}", lp - 2.0)]))
        return out


class _Entered:
    def __init__(self, parent, server):
        self.parent, self.server = parent, server

    def __enter__(self):
        return self.server

    def __exit__(self, *exc):
        return self.parent.__exit__(*exc)


@pytest.fixture
def probe_suite(tmp_path):
    items = [simple_item(i, tags=["probe"]) for i in range(24)]
    return write_suite(tmp_path / "suite", items, name="wobbly")


def test_a_harmless_batching_knob_is_within_the_good_sides_noise(tmp_path, probe_suite):
    """A lane that wobbles under batching: the constants call every trial divergent (drift over
    0.05 nats), so the harmless knob (max-num-seqs) is blamed too; against the good side's floor
    (its probe serial vs the burst) only the fluent fault is."""
    good = _contract(tmp_path / "good.yaml", args={"max-num-seqs": 8, "kv-cache-dtype": "auto"})
    bad = _contract(tmp_path / "bad.yaml", args={"max-num-seqs": 64, "kv-cache-dtype": "fp8"})
    engine = WobblyEngine(lambda c: c.args.get("kv-cache-dtype") == "fp8")
    rec = run_bisect(
        _req(tmp_path, probe_suite, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}], rec.verdict
    assert rec.floor is not None and rec.floor.source == "serial vs burst on the good side"
    assert rec.floor.drift > 0.05 and rec.floor.hard == 0
    harmless = [
        t
        for t in rec.trials
        if {"knob": "max-num-seqs", "value": 64} in t.applied and len(t.applied) == 1
    ]
    assert harmless and all(t.outcome == "ok" for t in harmless)
    assert all(t.fidelity and t.fidelity.verdict == "within noise" for t in harmless)
    # the constants would have called the same harmless trial divergent
    assert all(t.fidelity and t.fidelity.drift > 0.05 for t in harmless)
    faulty = next(t for t in rec.trials if t.outcome == "divergent")
    assert faulty.fidelity and faulty.fidelity.floor and "hard" in faulty.fidelity.reason
    record = json.loads((tmp_path / "results" / rec.bisect_id / "bisect.json").read_text())
    assert record["floor"]["source"] == "serial vs burst on the good side"
    assert record["trials"][1]["fidelity"]["floor"]["p_hard"] < 0.01  # the bad side: all hard


def test_floor_boots_two_pools_a_second_boot_of_the_good_side(tmp_path, probe_suite):
    good = _contract(tmp_path / "good.yaml", args={"max-num-seqs": 8, "kv-cache-dtype": "auto"})
    bad = _contract(tmp_path / "bad.yaml", args={"max-num-seqs": 64, "kv-cache-dtype": "fp8"})
    engine = WobblyEngine(lambda c: c.args.get("kv-cache-dtype") == "fp8")
    req = _req(tmp_path, probe_suite, good=good, bad=bad, floor_boots=2)
    rec = run_bisect(req, launcher=engine, log=lambda s: None)
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}], rec.verdict
    assert rec.floor is not None and rec.floor.pairs == 3
    assert rec.floor.source == "serial vs burst and across 2 boots of the good side"
    assert rec.floor.items == 3 * 24
    assert rec.boots == len(engine.boots) == len([t for t in rec.trials if not t.cached]) + 1


class SteadyUnlessBatched(WobblyEngine):
    """A good side that is deterministic at one sequence (every ask of a prompt answers the
    same tokens: its floor is 0) and wobbles like WobblyEngine once it batches (max-num-seqs
    above 1): the harmless knob's own repeat differs from itself as much as from the good side."""

    def __call__(self, contract, log_path, *, on_progress=None):
        batched = contract.args.get("max-num-seqs", 1) > 1
        broken = self.fault(contract)
        parent = FakeEngine.__call__(self, contract, log_path, on_progress=on_progress)

        def rule(body):
            with self.lock:
                self.draws += 1
                rng = random.Random(self.draws if batched else 0)
            return reply("ok", tokens=self.tokens(rng, broken))

        server = parent.__enter__()
        self.servers[-1].rule = rule
        return _Entered(parent, server)


def test_a_knob_that_only_wobbles_is_judged_by_its_own_spread_too(tmp_path, probe_suite):
    """Against a deterministic good side (floor 0) every batching wobble is far outside the
    good side's floor; the harmless knob's own serial-vs-burst spread is as wide as its
    distance from the good side, so it is within noise, and the fluent fault is blamed."""
    good = _contract(tmp_path / "good.yaml", args={"max-num-seqs": 1, "kv-cache-dtype": "auto"})
    bad = _contract(tmp_path / "bad.yaml", args={"max-num-seqs": 64, "kv-cache-dtype": "fp8"})
    engine = SteadyUnlessBatched(lambda c: c.args.get("kv-cache-dtype") == "fp8")
    rec = run_bisect(
        _req(tmp_path, probe_suite, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert rec.floor is not None and rec.floor.diverged == 0 and rec.floor.drift == 0
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}], rec.verdict
    harmless = [
        t
        for t in rec.trials
        if {"knob": "max-num-seqs", "value": 64} in t.applied and len(t.applied) == 1
    ]
    assert harmless and all(t.outcome == "ok" for t in harmless)
    assert all(t.fidelity and t.fidelity.verdict == "within noise" for t in harmless)
    assert all(t.fidelity and t.fidelity.drift > 0.05 for t in harmless)  # far from floor 0
    faulty = [t for t in rec.trials if t.applied == [{"knob": "kv-cache-dtype", "value": "fp8"}]]
    assert faulty and all(t.outcome == "divergent" for t in faulty)


class KernelAndBatching(WobblyEngine):
    """A lane that answers the same tokens at one sequence whatever runs beside it, each item's
    logprobs set by the attention kernel it runs (`attention-backend`: another kernel moves
    every logprob by up to 0.12 nats and flips some near ties, deterministically); once it
    batches (max-num-seqs above 1) it wobbles per request as much. So a kernel change is as far
    from the good side as batching is, and the good side's own floor (0) holds neither."""

    def __call__(self, contract, log_path, *, on_progress=None):
        batched = contract.args.get("max-num-seqs", 1) > 1
        kernel = str(contract.args.get("attention-backend", "default"))
        broken = self.fault(contract)
        parent = FakeEngine.__call__(self, contract, log_path, on_progress=on_progress)

        def rule(body):
            prompt = json.dumps(body.get("messages"), sort_keys=True)
            seed = zlib.crc32(f"{kernel}\x00{prompt}".encode())
            if batched:
                with self.lock:
                    self.draws += 1
                    seed = seed * 1000 + self.draws
            return reply("ok", tokens=self.tokens(random.Random(seed), broken))

        server = parent.__enter__()
        self.servers[-1].rule = rule
        return _Entered(parent, server)


def _kernel_bisect(tmp_path, probe_suite, *, fault=False, **floor):
    good = _contract(tmp_path / "good.yaml", args={"max-num-seqs": 1, "kv-cache-dtype": "auto"})
    bad = _contract(
        tmp_path / "bad.yaml",
        args={
            "max-num-seqs": 1,
            "kv-cache-dtype": "fp8" if fault else "auto",
            "attention-backend": "flash",
        },
    )
    engine = KernelAndBatching(lambda c: c.args.get("kv-cache-dtype") == "fp8")
    lines: list[str] = []
    req = _req(tmp_path, probe_suite, good=good, bad=bad, **floor)
    return run_bisect(req, launcher=engine, log=lines.append), engine, lines


FLASH = {"knob": "attention-backend", "value": "flash"}


def test_a_kernel_change_on_a_lane_that_does_not_batch_is_blamed_without_a_floor_knob(
    tmp_path, probe_suite
):
    rec, _, lines = _kernel_bisect(tmp_path, probe_suite)
    assert rec.floor is not None and rec.floor.diverged == 0
    assert rec.culprits == [FLASH], rec.verdict
    assert any("--floor-knob" in line for line in lines)  # the run says what would help


def test_a_floor_knob_that_batches_holds_a_kernel_change_in_the_noise(tmp_path, probe_suite):
    """--floor-knob max-num-seqs=8: the good side's floor boot batches, so the floor holds a
    change of numerics as large as the kernel's: the kernel change alone is nothing to bisect,
    and beside a fluent fault only the fault is named."""
    rec, engine, lines = _kernel_bisect(tmp_path, probe_suite, floor_sets=["max-num-seqs=8"])
    assert not rec.culprits and "nothing to bisect" in rec.verdict, rec.verdict
    assert rec.floor is not None and rec.floor.pairs == 2 and rec.floor.drift > 0.05
    assert rec.floor.source == (
        "the good side against itself with max-num-seqs=8, and that boot's serial vs burst"
    )
    assert [b.args["max-num-seqs"] for b in engine.boots].count(8) == 1  # one floor boot
    assert not any("alike serial and in the burst" in line for line in lines)
    rec, _, _ = _kernel_bisect(
        tmp_path, probe_suite, fault=True, floor_sets=["max-num-seqs=8"], use_cache=False
    )
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}], rec.verdict
    kernel = [t for t in rec.trials if t.applied == [FLASH]]
    assert all(t.outcome == "ok" for t in kernel)


def test_a_floor_knob_that_is_not_a_knob_is_a_one_line_error(tmp_path, probe_suite):
    from evalrun.base.errors import UsageError

    with pytest.raises(UsageError, match="--floor-knob"):
        _kernel_bisect(tmp_path, probe_suite, floor_sets=["max-num-seqs"])

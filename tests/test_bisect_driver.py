"""bisect driver: trials against a fake launcher whose fake server misbehaves per contract knobs."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from fakeserver import FakeServer, reply, simple_item, write_suite
from test_bisect_git import _git

from evalrun.base.errors import BootError, UsageError
from evalrun.bisection.driver import BisectRecord, BisectRequest, run_bisect
from evalrun.serving.contract import contract_hash
from evalrun.serving.launcher import Server
from evalrun.store import RunStore

pytestmark = pytest.mark.slow  # dozens of boots and scoring runs per test

SOUP = "carecarecarecarecarecarecarecarecarecare"


class FakeEngine:
    """A launcher: `behaviour(contract)` -> ok | garble | wrong | reasoning | boot_fail | flaky."""

    def __init__(self, behaviour, latency=0.0, logprobs="on"):
        self.behaviour = behaviour
        self.latency = latency
        self.logprobs = logprobs  # FakeServer.logprobs of every lane: on, off, refuse
        self.boots: list = []
        self.servers: list[FakeServer] = []

    @contextmanager
    def __call__(self, contract, log_path, *, on_progress=None):
        self.boots.append(contract)
        mode = self.behaviour(contract)
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        Path(log_path).write_text(f"fake boot: {mode}\n")
        if on_progress:
            on_progress(0.0, "starting")
        if mode == "boot_fail":
            raise BootError("unrecognized arguments: --tool-call-parser", kind="invalid_flag")
        count = {"n": 0}

        def rule(body):
            count["n"] += 1
            if mode == "garble" or (mode == "flaky" and count["n"] > 14):
                return reply(SOUP)
            if mode == "wrong":
                return reply("no")
            if mode == "reasoning":
                return reply(None, reasoning="ok")
            return reply("ok")

        fake = FakeServer(rule=rule, latency=self.latency)
        fake.logprobs = self.logprobs
        fake.start()
        self.servers.append(fake)
        try:
            yield Server(
                base_url=fake.base_url,
                model="fake-model",
                boot_seconds=0.01,
                engine_version="fake 1.0",
                argv=["fake-engine"],
                env_redacted={},
                log_path=Path(log_path),
                host="127.0.0.1",
                port=fake.port,
                pid=0,
                contract_hash=contract_hash(contract),
            )
        finally:
            fake.stop()


@pytest.fixture
def suite_dir(tmp_path):
    items = [simple_item(i, tags=["probe"]) for i in range(3)] + [simple_item(9)]
    return write_suite(tmp_path / "suite", items, name="mini")


def _contract(path: Path, **fields) -> str:
    data = {
        "name": "lane",
        "engine": "vllm",
        "command": ["fake-engine", "serve"],
        "model": "org/m",
        "port": 0,
        "args": {},
    }
    data.update(fields)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def _req(tmp_path, suite_dir, **kw) -> BisectRequest:
    return BisectRequest(suite=str(suite_dir), results=str(tmp_path / "results"), **kw)


GOOD_ARGS = {
    "load-format": "safetensors",
    "kv-cache-dtype": "auto",
    "max-num-seqs": 8,
    "enable-prefix-caching": True,
}
BAD_ARGS = {
    "load-format": "instanttensor",
    "kv-cache-dtype": "fp8",
    "max-num-seqs": 16,
    "speculative-config": {"method": "ngram", "num_speculative_tokens": 3},
    "enforce-eager": True,
}


def _good_bad(tmp_path):
    good = _contract(tmp_path / "good.yaml", args=GOOD_ARGS, env={"A": "1"})
    bad = _contract(tmp_path / "bad.yaml", args=BAD_ARGS, env={"A": "2", "VLLM_PLUGINS": "b12x"})
    return good, bad


def by_knob(knob, value, then="garble"):
    return lambda c: then if c.args.get(knob) == value else "ok"


def test_contracts_single_culprit_within_budget(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    engine = FakeEngine(by_knob("load-format", "instanttensor"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    n = len(rec.differences)
    assert n == 8  # 6 args (one only in good) + 2 env
    assert rec.found and rec.exit_code == 0
    assert rec.culprits == [{"knob": "load-format", "value": "instanttensor"}]
    assert rec.verdict.startswith(
        "culprit: load-format=instanttensor (garble 100% -> 0% with safetensors)"
    )
    # two endpoint checks + dd's log2(N)+1
    assert rec.boots == len(engine.boots) <= 2 + math.ceil(math.log2(n)) + 1
    assert f"{rec.boots} boots" in rec.verdict
    # the record links to runs that exist
    folder = tmp_path / "results" / rec.bisect_id
    text = (folder / "bisect.json").read_text(encoding="utf-8")
    saved = json.loads(text)
    assert saved["culprits"] == rec.culprits and saved["mode"] == "contracts"
    assert BisectRecord.model_validate_json(text).model_dump_json(indent=2) == text
    store = RunStore(tmp_path / "results")
    for trial in rec.trials:
        assert trial.run_ids
        statuses = [store.load_run(run_id).status for run_id in trial.run_ids]
        if trial.outcome == "garble":  # halted once garble was certain
            assert statuses[-1] == "incomplete", statuses
        else:
            assert set(statuses) == {"complete"}, statuses
    # the good side first: its probe tokens are what every later trial is judged against
    assert rec.trials[0].variant == "(good)"
    assert rec.trials[1].variant.startswith("(bad)")


def test_rerun_boots_nothing(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    engine = FakeEngine(by_knob("load-format", "instanttensor"))
    first = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    again = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert again.boots == 0
    assert len(engine.boots) == first.boots
    assert again.culprits == first.culprits
    assert all(t.cached for t in again.trials)
    assert "all trials cached" in again.verdict
    # a different threshold reuses the cached measurements too
    third = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, garble_rate=0.5),
        launcher=engine,
        log=lambda s: None,
    )
    assert third.boots == 0 and third.culprits == first.culprits


def test_interacting_pair_found_as_pair(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    # garbles only with speculative decoding on and the eager flag flipped... together
    engine = FakeEngine(
        lambda c: (
            "garble"
            if "speculative-config" in c.args and c.args.get("kv-cache-dtype") == "fp8"
            else "ok"
        )
    )
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert rec.found
    assert sorted(c["knob"] for c in rec.culprits) == ["kv-cache-dtype", "speculative-config"]
    assert rec.verdict.startswith("culprits (fail only together): ")


def test_boot_failures_are_skipped_not_blamed(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)

    def behaviour(c):
        if c.args.get("enforce-eager") and c.args.get("max-num-seqs") != 16:
            return "boot_fail"  # eager without its partner does not boot
        return "garble" if c.env.get("VLLM_PLUGINS") == "b12x" else "ok"

    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad),
        launcher=FakeEngine(behaviour),
        log=lambda s: None,
    )
    assert rec.culprits == [{"knob": "env.VLLM_PLUGINS", "value": "b12x"}]
    assert not any(c["knob"] == "enforce-eager" for c in rec.culprits)


def test_boot_failure_is_culprit_only_with_fail_on_boot(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    behaviour = by_knob("kv-cache-dtype", "fp8", then="boot_fail")
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad),
        launcher=FakeEngine(behaviour),
        log=lambda s: None,
    )
    assert rec.exit_code == 3 and "untestable" in rec.verdict
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, fail_on="boot"),
        launcher=FakeEngine(behaviour),
        log=lambda s: None,
    )
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}]
    assert "boot_fail" in rec.verdict


def test_skips_that_hide_the_culprit_are_reported_ambiguous(tmp_path, suite_dir):
    good = _contract(tmp_path / "g.yaml", args={"a": 1, "b": 1})
    bad = _contract(tmp_path / "b.yaml", args={"a": 2, "b": 2})

    def behaviour(c):  # a and b only boot when changed together
        if c.args["a"] != c.args["b"]:
            return "boot_fail"
        return "garble" if c.args["b"] == 2 else "ok"

    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad),
        launcher=FakeEngine(behaviour),
        log=lambda s: None,
    )
    assert rec.ambiguous and not rec.found and rec.exit_code == 1
    assert rec.verdict.startswith("ambiguous: one or more of a=2, b=2")


@pytest.mark.parametrize(
    "behaviour,boots,verdict",
    [
        ("ok", 2, "nothing to bisect: the bad side passes"),
        ("garble", 2, "nothing to bisect: the good side fails too"),
    ],
)
def test_endpoints_that_do_not_reproduce_stop_early(tmp_path, suite_dir, behaviour, boots, verdict):
    good, bad = _good_bad(tmp_path)
    engine = FakeEngine(lambda c: behaviour)
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert rec.exit_code == 1 and rec.boots == boots == len(engine.boots)
    assert rec.verdict.startswith(verdict)


def test_regressed_and_broken_outcomes(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    wrong = FakeEngine(by_knob("max-num-seqs", 16, then="wrong"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, fail_on="garble,regressed,broken"),
        launcher=wrong,
        log=lambda s: None,
    )
    assert rec.verdict.startswith("nothing to bisect")  # no --min-score: a wrong answer is ok
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, min_score=50),
        launcher=wrong,
        log=lambda s: None,
    )
    assert rec.culprits == [{"knob": "max-num-seqs", "value": 16}]
    assert "score 0 -> 100" in rec.verdict
    broken = FakeEngine(by_knob("kv-cache-dtype", "fp8", then="reasoning"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, use_cache=False),
        launcher=broken,
        log=lambda s: None,
    )
    assert rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}]
    assert "broken (reasoning_only)" in rec.verdict


def test_probe_sends_burst_and_repeat(tmp_path, suite_dir):
    contract = _contract(tmp_path / "c.yaml", args={"load-format": "safetensors"})
    engine = FakeEngine(lambda c: "ok", latency=0.05)
    run_bisect(
        _req(tmp_path, suite_dir, contract=contract, knob="load-format", values=["auto"]),
        launcher=engine,
        log=lambda s: None,
    )
    fake = engine.servers[0]
    prompts = [r["messages"][0]["content"] for r in fake.requests if "messages" in r]
    # probe items, burst copies, the repeated prompt, the probe items again one at a time
    assert len(prompts) == 3 + 8 + 2 + 3
    assert "question 9: reply ok" not in prompts  # only items tagged probe
    assert prompts[11] == prompts[12]  # the repeat, sent one after the other
    # the serial pass, the floor's partner: each probe item once more (the burst's arrival
    # order is the server's, so compare against the set of probe prompts it got)
    assert sorted(prompts[-3:]) == sorted(set(prompts[:11]))
    assert fake.max_in_flight > 1


def test_probe_stops_once_garble_is_certain(tmp_path, suite_dir):
    """13 probe requests, garble at 25%: the 4th garbled answer settles the trial, and what is
    still in flight is dropped."""
    contract = _contract(tmp_path / "c.yaml", args={"load-format": "instanttensor"})
    engine = FakeEngine(lambda c: "garble", latency=0.02)
    rec = run_bisect(
        _req(tmp_path, suite_dir, contract=contract, knob="load-format", values=["auto"]),
        launcher=engine,
        log=lambda s: None,
    )
    assert rec.trials[0].outcome == "garble" and rec.trials[0].garble_rate == 1.0
    asked = [sum("messages" in r for r in fake.requests) for fake in engine.servers]
    # the first pass goes out at once (what had not reached the server yet is not sent at all);
    # the repeat pass never does
    assert all(4 <= n <= 3 + 8 for n in asked), asked
    for path in (tmp_path / "results" / "bisect-cache").glob("*/*.json"):
        (m,) = json.loads(path.read_text())["measurements"]
        # the 4th garbled answer settles it (4 >= 25% of 13); the 7 in flight were dropped
        assert m["stopped"] == "garble certain: 4 of 4 answers garbled" and m["items"] == 4


def test_tries_catch_a_flaky_failure(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    flaky = by_knob("load-format", "instanttensor", then="flaky")  # garbles from request 15 on
    once = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, use_cache=False),
        launcher=FakeEngine(flaky),
        log=lambda s: None,
    )
    assert once.verdict.startswith("nothing to bisect")
    more = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, tries=3, use_cache=False),
        launcher=FakeEngine(flaky),
        log=lambda s: None,
    )
    assert more.culprits == [{"knob": "load-format", "value": "instanttensor"}]


def test_knob_mode_values_and_none(tmp_path, suite_dir):
    contract = _contract(
        tmp_path / "c.yaml",
        args={"load-format": "instanttensor", "speculative-config": {"method": "ngram"}},
    )
    engine = FakeEngine(by_knob("load-format", "instanttensor"))
    rec = run_bisect(
        _req(
            tmp_path,
            suite_dir,
            contract=contract,
            knob="load-format",
            values=["safetensors", "none"],
        ),
        launcher=engine,
        log=lambda s: None,
    )
    assert rec.found and rec.boots == 3
    assert rec.culprits == [{"knob": "load-format", "value": "instanttensor"}]
    assert rec.verdict.startswith(
        "culprit: load-format=instanttensor (garble 100% -> 0% with safetensors); "
        "passes with safetensors, none"
    )
    assert "load-format" not in engine.boots[2].args  # none removes the flag
    assert rec.trials[0].variant == "load-format=instanttensor (contract)"


def test_knob_mode_judges_the_other_values_by_the_contracts_tokens(tmp_path, suite_dir):
    """A value that stays fluent but answers differently passes every absolute rule; judged
    token by token against the contract's own value it is divergent, and named."""
    contract = _contract(tmp_path / "c.yaml", args={"kv-cache-dtype": "auto"})
    engine = FakeEngine(by_knob("kv-cache-dtype", "fp8", then="wrong"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, contract=contract, knob="kv-cache-dtype", values=["fp8"]),
        launcher=engine,
        log=lambda s: None,
    )
    assert rec.found and rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}]
    assert rec.verdict.startswith("culprit: kv-cache-dtype=fp8 (divergent from the good side")
    own, fp8 = rec.trials
    assert own.variant == "kv-cache-dtype=auto (contract)" and own.outcome == "ok"
    assert fp8.outcome == "divergent" and fp8.fidelity.verdict == "divergent"


def test_knob_mode_catalog_values(tmp_path, suite_dir):
    contract = _contract(tmp_path / "c.yaml", args={"enforce-eager": True})
    engine = FakeEngine(lambda c: "ok")
    rec = run_bisect(
        _req(tmp_path, suite_dir, contract=contract, knob="enforce-eager"),
        launcher=engine,
        log=lambda s: None,
    )
    assert rec.inputs["values"] == ["true", "none"]  # the catalog's alternatives, no repeats
    assert rec.exit_code == 1 and rec.verdict.startswith("no value of enforce-eager fails")


def test_knob_mode_every_value_failing_is_not_the_cause(tmp_path, suite_dir):
    contract = _contract(tmp_path / "c.yaml", args={"dtype": "auto"})
    rec = run_bisect(
        _req(tmp_path, suite_dir, contract=contract, knob="dtype", values=["bfloat16"]),
        launcher=FakeEngine(lambda c: "garble"),
        log=lambda s: None,
    )
    assert rec.exit_code == 1 and rec.verdict.startswith("dtype is not the cause")


def test_git_mode_finds_the_commit(tmp_path, suite_dir):
    repo = tmp_path / "ops"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    args = {"load-format": "safetensors", "max-num-seqs": 8}
    for i in range(6):
        args["max-num-seqs"] = 8 + i
        if i == 3:
            args["load-format"] = "instanttensor"
        _contract(repo / "lane.yaml", args=dict(args))
        _git(repo, "add", "lane.yaml")
        _git(repo, "commit", "-qm", f"lane step {i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    (repo / "lane.yaml").write_text("uncommitted edit\n")
    engine = FakeEngine(by_knob("load-format", "instanttensor"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, repo=str(repo), good=shas[0], bad="HEAD", contract="lane.yaml"),
        launcher=engine,
        log=lambda s: None,
    )
    assert rec.found and rec.first_bad_commit["sha"] == shas[3]
    assert {"knob": "load-format", "value": "instanttensor"} in rec.culprits
    assert "first bad commit: " + shas[3][:10] in rec.verdict
    assert rec.boots <= 2 + 3
    assert (repo / "lane.yaml").read_text() == "uncommitted edit\n"
    assert _git(repo, "rev-parse", "HEAD") == shas[-1]


def test_usage_errors(tmp_path, suite_dir):
    good, bad = _good_bad(tmp_path)
    with pytest.raises(UsageError, match="pick a mode"):
        _req(tmp_path, suite_dir).mode()
    with pytest.raises(UsageError, match="one-knob mode"):
        _req(tmp_path, suite_dir, knob="x").mode()
    with pytest.raises(UsageError, match="--fail-on"):
        run_bisect(
            _req(tmp_path, suite_dir, good=good, bad=bad, fail_on="nope"),
            launcher=FakeEngine(lambda c: "ok"),
        )
    with pytest.raises(UsageError, match="do not differ"):
        run_bisect(
            _req(tmp_path, suite_dir, good=good, bad=good),
            launcher=FakeEngine(lambda c: "ok"),
            log=lambda s: None,
        )


def test_a_fluent_partial_fault_is_divergent_from_the_good_side(tmp_path, suite_dir):
    """Answers that stay fluent (no garble, wrong answers unscored without --min-score) were
    called ok; judged token by token against the good side's probe they are divergent."""
    good, bad = _good_bad(tmp_path)
    engine = FakeEngine(by_knob("kv-cache-dtype", "fp8", then="wrong"))
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lambda s: None
    )
    assert rec.found and rec.culprits == [{"knob": "kv-cache-dtype", "value": "fp8"}]
    assert rec.verdict.startswith("culprit: kv-cache-dtype=fp8 (divergent from the good side")
    bad_row = rec.trials[1]
    assert bad_row.outcome == "divergent" and bad_row.fidelity.verdict == "divergent"
    assert all(
        t.effect == "no observable effect" for t in rec.trials if t.outcome == "ok" and t.fidelity
    )
    # judged alone, as bisect did before (divergent not failing), the same fault passes
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad, fail_on="garble,regressed,broken"),
        launcher=FakeEngine(by_knob("kv-cache-dtype", "fp8", then="wrong")),
        log=lambda s: None,
    )
    assert rec.verdict.startswith("nothing to bisect: the bad side passes")


def test_a_good_side_without_tokens_says_why_and_bisects_by_garble(tmp_path, suite_dir):
    """Lanes that refuse logprobs: every trial says the good side has no tokens and why (once
    a bare "no item answered with tokens"), and the garble rule still finds the culprit."""
    good, bad = _good_bad(tmp_path)
    engine = FakeEngine(by_knob("load-format", "instanttensor"), logprobs="refuse")
    lines: list[str] = []
    rec = run_bisect(
        _req(tmp_path, suite_dir, good=good, bad=bad), launcher=engine, log=lines.append
    )
    assert rec.culprits == [{"knob": "load-format", "value": "instanttensor"}]
    judged = [t.fidelity for t in rec.trials if t.fidelity]
    assert judged and all(f.verdict == "not comparable" for f in judged)
    reason = judged[0].reason
    assert reason.startswith("the good side's probe has no tokens") and "HTTP 400" in reason
    assert "judged by garble and score only" in reason


def test_loops_on_most_answers_are_garble_while_a_few_are_the_models_own():
    """A healthy small model loops on a few answers; mis-mapped weights loop on nearly all."""
    from evalrun.bisection.trial import Measurement, TrialRules

    def probe(loops: int) -> Measurement:
        return Measurement(
            items=20,
            answered=20,
            passed=20 - loops,
            garbled=loops,
            loops=loops,
            errors=0,
            diagnosed=0,
        )

    judge = TrialRules()
    assert probe(2).garble_rate == 0 and probe(20).garble_rate == 1
    assert judge.kind(probe(2)) == "ok"
    assert judge.kind(probe(9)) == "ok"
    assert judge.kind(probe(10)) == "garble"
    assert judge.kind(probe(20)) == "garble"

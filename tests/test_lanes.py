"""Lanes (`evalrun lane setup`): steps run once and in order, refusals, failures, the think variant.

The real vLLM install is exercised by the `vllm` tier (tests/test_vllm_*.py); here the step
runner, the machine checks and the file edits run on small stand-ins in tmp_path.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from evalrun.base.errors import LaneError
from evalrun.cli import main
from evalrun.serving.lanes import LANES, Lane, LaneContext, check_lane, setup_lane
from evalrun.serving.lanes.common import Step, needs_x86_flags, pip_step, stamped
from evalrun.serving.lanes.report import lane_text
from evalrun.serving.lanes.think import make_think_variant, think_variant_step
from evalrun.serving.lanes.vllm_cpu import write_vllm_dist_info


def file_step(name: str, calls: list[str]) -> Step:
    """A step whose result is a file named after it; records each time it runs."""

    def run(ctx: LaneContext) -> None:
        calls.append(name)
        ctx.root.joinpath(name).write_text("made\n")

    return Step(name, f"make {name}", done=lambda ctx: ctx.root.joinpath(name).exists(), run=run)


def ctx_for(tmp_path: Path) -> tuple[LaneContext, io.StringIO]:
    out = io.StringIO()
    return LaneContext(tmp_path / "lane", out=out), out


def test_setup_runs_missing_steps_once_in_order_then_nothing(tmp_path: Path) -> None:
    calls: list[str] = []
    lane = Lane(
        "demo", "other", "a demo", "c.yaml", steps=tuple(file_step(n, calls) for n in "abc")
    )
    ctx, out = ctx_for(tmp_path)
    assert not check_lane(lane, ctx).ready
    report = setup_lane(lane, ctx)
    assert report.ready and calls == ["a", "b", "c"]
    assert "[1/3] a: make a …" in out.getvalue() and "[3/3] c: done in" in out.getvalue()
    (ctx.root / "b").unlink()  # a half-removed lane: only the missing step runs again
    setup_lane(lane, ctx)
    assert calls == ["a", "b", "c", "b"]
    assert "[1/3] a: already done" in out.getvalue()
    assert "ready: evalrun score --contract c.yaml" in lane_text(check_lane(lane, ctx))


def test_a_refused_machine_changes_nothing(tmp_path: Path) -> None:
    calls: list[str] = []
    no_avx2 = needs_x86_flags("avx2", cpuinfo="processor : 0\nflags : fpu sse sse2 avx\n")
    lane = Lane(
        "demo", "other", "", "c.yaml", steps=(file_step("a", calls),), requirements=(no_avx2,)
    )
    ctx, _ = ctx_for(tmp_path)
    with pytest.raises(LaneError, match="cannot run the demo lane: .*lacks avx2"):
        setup_lane(lane, ctx)
    assert calls == [] and not ctx.root.exists()
    assert "cannot: " in lane_text(check_lane(lane, ctx))
    with_avx2 = needs_x86_flags("avx2", cpuinfo="flags : fpu avx avx2\n", machine="x86_64")
    on_arm = needs_x86_flags("avx2", cpuinfo="Features : fp asimd\n", machine="aarch64")
    if sys.platform.startswith("linux"):
        assert with_avx2(ctx) is None
    assert "x86-64" in (on_arm(ctx) or "")


def test_a_failing_command_says_its_error_line_and_log(tmp_path: Path) -> None:
    ctx, _ = ctx_for(tmp_path)
    script = "import sys; print('Collecting x'); print('ERROR: No matching distribution for x==9'); sys.exit(1)"
    failing = Step(
        "engine", "pip", done=lambda c: False, run=lambda c: c.run([sys.executable, "-c", script])
    )
    lane = Lane("demo", "other", "", "c.yaml", steps=(failing,))
    with pytest.raises(LaneError) as exc:
        setup_lane(lane, ctx)
    assert "No matching distribution for x==9" in str(exc.value)
    assert str(ctx.log_path) in str(exc.value)


def test_a_step_that_leaves_no_result_is_an_error(tmp_path: Path) -> None:
    ctx, _ = ctx_for(tmp_path)
    lane = Lane(
        "demo", "other", "", "c.yaml", steps=(Step("x", "x", lambda c: False, lambda c: None),)
    )
    with pytest.raises(LaneError, match="ran but its result is not there"):
        setup_lane(lane, ctx)


def test_pip_step_is_redone_when_its_pins_change(tmp_path: Path) -> None:
    ctx, _ = ctx_for(tmp_path)
    (ctx.venv / "bin").mkdir(parents=True)
    fake_python = ctx.venv / "bin" / "python"
    fake_python.write_text("#!/bin/sh\nexit 0\n")  # `python -m pip install ...` succeeds
    fake_python.chmod(0o755)
    one = pip_step("tools", ["gguf==0.19.0"])
    one.run(ctx)
    assert one.done(ctx) and stamped(
        ctx, "tools", one_key := ctx.stamp("tools").read_text().strip()
    )
    assert one_key
    assert not pip_step("tools", ["gguf==0.18.0"]).done(ctx)


def tiny_model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    tokenizer = {
        "added_tokens": [
            {"id": 0, "content": "<|endoftext|>", "special": True},
            {"id": 3, "content": "<repo_name>", "special": True},
            {"id": 4, "content": "<reponame>", "special": True},
        ],
        "model": {
            "type": "BPE",
            "vocab": {"<|endoftext|>": 0, "<repo_name>": 3, "<reponame>": 4, "a": 5},
        },
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    (folder / "tokenizer_config.json").write_text("{}")
    (folder / "config.json").write_text("{}")
    (folder / "chat_template.jinja").write_text("{{ messages }}")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


def test_think_variant_renames_two_spare_tokens_and_shares_the_weights(tmp_path: Path) -> None:
    ctx, _ = ctx_for(tmp_path)
    tiny_model(ctx.models / "m")
    step = think_variant_step("m", "m-think")
    assert not step.done(ctx)
    step.run(ctx)
    assert step.done(ctx)
    variant = ctx.models / "m-think"
    tok = json.loads((variant / "tokenizer.json").read_text())
    assert [t["content"] for t in tok["added_tokens"]] == ["<|endoftext|>", "<think>", "</think>"]
    assert tok["model"]["vocab"]["<think>"] == 3 and tok["model"]["vocab"]["</think>"] == 4
    assert "<repo_name>" not in tok["model"]["vocab"]
    assert (variant / "model.safetensors").stat().st_ino == (
        ctx.models / "m" / "model.safetensors"
    ).stat().st_ino
    original = json.loads((ctx.models / "m" / "tokenizer.json").read_text())
    assert original["added_tokens"][1]["content"] == "<repo_name>"  # the source is untouched
    make_think_variant(ctx.models / "m", variant)  # again: same result, no error
    assert "</think>" in (variant / "tokenizer.json").read_text()


def test_think_variant_refuses_a_tokenizer_without_spare_tokens(tmp_path: Path) -> None:
    folder = tiny_model(tmp_path / "m")
    tok = json.loads((folder / "tokenizer.json").read_text())
    tok["added_tokens"] = tok["added_tokens"][:1]
    (folder / "tokenizer.json").write_text(json.dumps(tok))
    with pytest.raises(LaneError, match="no two spare special tokens"):
        make_think_variant(folder, tmp_path / "m-think")
    assert not (tmp_path / "m-think").exists()


def test_vllm_dist_info_names_the_distribution_vllm(tmp_path: Path) -> None:
    ctx, _ = ctx_for(tmp_path)
    site = ctx.venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    write_vllm_dist_info(ctx)
    from importlib import metadata

    dist = next(iter(metadata.distributions(name="vllm", path=[str(site)])))
    assert dist.version == "0.32.0+cpu"  # `+cpu` keeps vLLM's CPU platform detection


def test_cli_unknown_lane_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lane", "setup", "no-such-lane", "--check"]) == 2
    assert "known lanes: sglang-cpu, vllm-cpu" in capsys.readouterr().err
    assert "vllm-cpu" in LANES
    assert LANES["vllm-cpu"].contract == "bisect/contracts/vllm-cpu.yaml"


def test_vllm_lane_refuses_early_when_pip_finds_no_cpu_torch(tmp_path: Path) -> None:
    from evalrun.serving.lanes.vllm_cpu import LANE

    no_wheel = tmp_path / "python"  # a python whose `pip install --dry-run torch==...` fails
    no_wheel.write_text("#!/bin/sh\necho 'ERROR: No matching distribution found' >&2\nexit 1\n")
    no_wheel.chmod(0o755)
    ctx = LaneContext(tmp_path / "lane", out=io.StringIO(), python=str(no_wheel))
    with pytest.raises(LaneError, match=r"finds no torch==2\.13\.0\+cpu wheel.*find-links"):
        setup_lane(LANE, ctx)
    assert not ctx.root.exists()

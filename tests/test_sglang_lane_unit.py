"""The sglang-cpu lane's own parts, offline: which requirements it keeps, the sgl_kernel stand-in
step, the disk refusal, and its contract. The real install and engine are the `sglang` tier's."""

from __future__ import annotations

import io
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from evalrun.serving import load_contract
from evalrun.serving.contract import render_argv
from evalrun.serving.lanes import LANES, LaneContext
from evalrun.serving.lanes import sglang_cpu as lane

REPO = Path(__file__).resolve().parent.parent

# sglang 0.5.23's unconditional requirements, as its wheel's METADATA lists them (abridged).
SGLANG_REQUIRES = [
    "aiohttp",
    "apache-tvm-ffi==0.1.11",
    'av==16.1.0; sys_platform == "linux" and (platform_machine == "aarch64")',
    "cuda-python>=13.0",
    "flashinfer_python[cu13]==0.7.2",
    "gguf",
    "nvidia-cutlass-dsl[cu13]==4.8.0",
    "sgl-deep-gemm==0.2.3.post2",
    "sglang-kernel==0.4.10",
    "torch==2.14.1",
    "torch_memory_saver>=0.0.9.post1",
    "torchaudio==2.11.0",
    "torchvision",
    "transformers==5.19.0",
    "xgrammar==0.2.7",
]


def test_requirements_keep_the_portable_ones_and_their_markers() -> None:
    kept = lane.cpu_requirements(SGLANG_REQUIRES)
    assert kept == [
        "aiohttp",
        'av==16.1.0; sys_platform == "linux" and (platform_machine == "aarch64")',
        "gguf",
        "transformers==5.19.0",
        "xgrammar==0.2.7",
    ]
    assert lane.requirement_name("flashinfer_python[cu13]==0.7.2") == "flashinfer-python"
    assert lane.requirement_name("torch_memory_saver>=0.0.9.post1") == "torch-memory-saver"


def fake_venv(tmp_path: Path) -> LaneContext:
    ctx = LaneContext(tmp_path / "lane", out=io.StringIO())
    (ctx.venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return ctx


def test_stand_in_step_installs_sgl_kernel_and_redoes_when_it_changes(tmp_path: Path) -> None:
    ctx = fake_venv(tmp_path)
    step = next(s for s in lane.LANE.steps if s.name == "sgl-kernel")
    assert not step.done(ctx)
    step.run(ctx)
    assert step.done(ctx)
    installed = lane.stand_in_path(ctx)
    assert installed == ctx.venv / "lib/python3.11/site-packages/sgl_kernel/__init__.py"
    assert installed.read_bytes() == lane.STAND_IN.read_bytes()
    installed.unlink()  # a venv rebuilt by hand: the stamp alone does not count
    assert not step.done(ctx)
    step.run(ctx)
    ctx.stamp("sgl-kernel").write_text("an older stand-in\n")
    assert not step.done(ctx)


def test_stand_in_is_plain_python_that_names_what_it_provides() -> None:
    source = lane.STAND_IN.read_text(encoding="utf-8")
    compile(source, str(lane.STAND_IN), "exec")  # no torch here: its behaviour is the tier's
    for op in ("assign_req_to_token_pool_cpu", "copy_all_layer_kv_cache_cpu"):
        assert f"def {op}(" in source


def test_a_full_disk_is_refused_before_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = LaneContext(tmp_path / "no" / "such" / "lane", out=io.StringIO())
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100 * 2**30, 98 * 2**30, 2**31))
    refusal = lane._disk_space(ctx)
    assert refusal and "about 9 GB" in refusal and "2.0 GB are free" in refusal
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100 * 2**30, 0, 50 * 2**30))
    assert lane._disk_space(ctx) is None


def test_the_contract_boots_the_lane_in_cpu_mode() -> None:
    assert LANES["sglang-cpu"].contract == "bisect/contracts/sglang-cpu.yaml"
    contract = load_contract(REPO / "bisect" / "contracts" / "sglang-cpu.yaml")
    assert contract.engine == "sglang" and contract.env["SGLANG_USE_CPU_ENGINE"] == "1"
    argv = render_argv(contract)
    # the lane's python once it is set up; before that, any python (python3 in a fresh venv)
    assert argv[0].endswith("/.cache/evalrun/lanes/sglang-cpu/venv/bin/python") or (
        Path(argv[0]).name.startswith("python")
    )
    assert argv[1:3] == ["-m", "sglang.launch_server"]
    assert argv[argv.index("--model-path") + 1].endswith(
        "lanes/sglang-cpu/models/smollm2-135m-instruct"
    )
    assert argv[argv.index("--device") + 1] == "cpu"
    assert argv[argv.index("--max-total-tokens") + 1] == "32768"

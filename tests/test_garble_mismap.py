"""The mis-mapped GGUF fixture: two same-shaped tensors swapped in every layer."""

from pathlib import Path

import numpy as np
import pytest
from support.mismap import swap_plan, write_mismapped_gguf

gguf = pytest.importorskip("gguf")


def _tiny_gguf(path: Path, layers: int = 3, v_shape=(4, 8)) -> dict[str, np.ndarray]:
    writer = gguf.GGUFWriter(str(path), "llama")
    arrays = {}
    for n in range(layers):
        for i, name in enumerate(("attn_q", "attn_output", "attn_v")):
            shape = v_shape if name == "attn_v" else (8, 8)
            arr = np.full(shape, 100 * n + i, dtype=np.float32)
            arrays[f"blk.{n}.{name}.weight"] = arr
            writer.add_tensor(f"blk.{n}.{name}.weight", arr)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return arrays


def _read(path: Path) -> dict[str, np.ndarray]:
    return {t.name: np.array(t.data) for t in gguf.GGUFReader(str(path)).tensors}


def test_swaps_the_pair_in_every_layer_and_nothing_else(tmp_path):
    src = tmp_path / "tiny.gguf"
    orig = _tiny_gguf(src)
    dst = write_mismapped_gguf(src, tmp_path / "out" / "mismapped.gguf")
    got = _read(dst)
    for n in range(3):
        assert (got[f"blk.{n}.attn_q.weight"] == orig[f"blk.{n}.attn_output.weight"]).all()
        assert (got[f"blk.{n}.attn_output.weight"] == orig[f"blk.{n}.attn_q.weight"]).all()
        assert (got[f"blk.{n}.attn_v.weight"] == orig[f"blk.{n}.attn_v.weight"]).all()
    assert (_read(src)["blk.0.attn_q.weight"] == 0).all()  # the source is untouched
    assert src.stat().st_size == dst.stat().st_size
    assert not list(dst.parent.glob("*.partial"))


def test_refuses_a_pair_of_different_shapes(tmp_path):
    src = tmp_path / "tiny.gguf"
    _tiny_gguf(src)
    with pytest.raises(ValueError, match="same-shaped"):
        swap_plan(src, ("attn_q.weight", "attn_v.weight"))
    with pytest.raises(ValueError, match="no tensor named"):
        swap_plan(src, ("ffn_up.weight", "ffn_gate.weight"))


def test_zeroes_the_named_tensors_of_every_layer(tmp_path):
    from support.mismap import write_zeroed_gguf

    src = tmp_path / "tiny.gguf"
    orig = _tiny_gguf(src)
    dst = write_zeroed_gguf(src, tmp_path / "zeroed.gguf", ("attn_output.weight",))
    got = _read(dst)
    for n in range(3):
        assert (got[f"blk.{n}.attn_output.weight"] == 0).all()
        assert (got[f"blk.{n}.attn_q.weight"] == orig[f"blk.{n}.attn_q.weight"]).all()
    one = write_zeroed_gguf(src, tmp_path / "one.gguf", ("attn_q.weight",), layers=range(2, 3))
    assert (_read(one)["blk.1.attn_q.weight"] == orig["blk.1.attn_q.weight"]).all()
    assert (_read(one)["blk.2.attn_q.weight"] == 0).all()
    with pytest.raises(ValueError, match="no tensor"):
        write_zeroed_gguf(src, tmp_path / "none.gguf", ("ffn_up.weight",))

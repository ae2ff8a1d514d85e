"""The partial-damage GGUF writers (bench/mismap.py): one mis-mapped layer, scaled or noisy
tensors. Each must change exactly the named tensors and keep the file's layout."""

from pathlib import Path

import numpy as np
import pytest
from support.mismap import (
    write_mismapped_gguf,
    write_noisy_gguf,
    write_scaled_gguf,
)

gguf = pytest.importorskip("gguf")
from gguf.quants import dequantize, quantize  # noqa: E402


def _tiny_gguf(path: Path, layers: int = 3) -> dict[str, np.ndarray]:
    """Per layer: an F32 norm, two same-shaped F32 projections and a Q4_1 one."""
    writer = gguf.GGUFWriter(str(path), "llama")
    rng = np.random.default_rng(7)
    arrays = {}
    for n in range(layers):
        for name in ("attn_norm", "attn_q", "attn_output"):
            shape = (8,) if name == "attn_norm" else (8, 8)
            arr = rng.normal(1.0 + n, 0.5, shape).astype(np.float32)
            arrays[f"blk.{n}.{name}.weight"] = arr
            writer.add_tensor(f"blk.{n}.{name}.weight", arr)
        q41 = gguf.GGMLQuantizationType.Q4_1
        data = quantize(rng.normal(0.0, 1.0, (4, 64)).astype(np.float32), q41)
        arrays[f"blk.{n}.ffn_down.weight"] = dequantize(data, q41)
        writer.add_tensor(f"blk.{n}.ffn_down.weight", data, raw_dtype=q41)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return arrays


def _read(path: Path) -> dict[str, np.ndarray]:
    return {
        t.name: dequantize(np.array(t.data), t.tensor_type)
        for t in gguf.GGUFReader(str(path)).tensors
    }


def _same_except(got: dict, orig: dict, changed: set[str]) -> None:
    for name, arr in orig.items():
        if name not in changed:
            assert np.array_equal(got[name], arr), name


def test_mismaps_only_the_given_layers(tmp_path):
    src = tmp_path / "tiny.gguf"
    orig = _tiny_gguf(src)
    dst = write_mismapped_gguf(
        src, tmp_path / "one.gguf", ("attn_q.weight", "attn_output.weight"), layers=range(1, 2)
    )
    got = _read(dst)
    assert np.array_equal(got["blk.1.attn_q.weight"], orig["blk.1.attn_output.weight"])
    assert np.array_equal(got["blk.1.attn_output.weight"], orig["blk.1.attn_q.weight"])
    _same_except(got, orig, {"blk.1.attn_q.weight", "blk.1.attn_output.weight"})
    assert src.stat().st_size == dst.stat().st_size
    with pytest.raises(ValueError, match="no tensor named blk.5"):
        write_mismapped_gguf(src, tmp_path / "x.gguf", layers=range(5, 6))


def test_scales_the_named_tensors_f32_and_quantized(tmp_path):
    src = tmp_path / "tiny.gguf"
    orig = _tiny_gguf(src)
    dst = write_scaled_gguf(src, tmp_path / "s.gguf", ("attn_norm.weight",), 4.0)
    got = _read(dst)
    for n in range(3):
        assert np.allclose(
            got[f"blk.{n}.attn_norm.weight"], 4.0 * orig[f"blk.{n}.attn_norm.weight"]
        )
    _same_except(got, orig, {f"blk.{n}.attn_norm.weight" for n in range(3)})
    one = _read(write_scaled_gguf(src, tmp_path / "q.gguf", ("ffn_down.weight",), 3.0, range(2, 3)))
    # Q4_1 requantized: close to 3x (its own rounding), same type and size
    assert np.allclose(one["blk.2.ffn_down.weight"], 3.0 * orig["blk.2.ffn_down.weight"], atol=0.5)
    _same_except(one, orig, {"blk.2.ffn_down.weight"})
    assert (tmp_path / "q.gguf").stat().st_size == src.stat().st_size
    with pytest.raises(ValueError, match="no tensor"):
        write_scaled_gguf(src, tmp_path / "n.gguf", ("ffn_up.weight",), 2.0)


def test_adds_seeded_noise_relative_to_the_tensor(tmp_path):
    src = tmp_path / "tiny.gguf"
    orig = _tiny_gguf(src)
    a = _read(write_noisy_gguf(src, tmp_path / "a.gguf", ("attn_q.weight",), 0.5, range(0, 1)))
    b = _read(write_noisy_gguf(src, tmp_path / "b.gguf", ("attn_q.weight",), 0.5, range(0, 1)))
    noise = a["blk.0.attn_q.weight"] - orig["blk.0.attn_q.weight"]
    assert 0.1 < noise.std() / orig["blk.0.attn_q.weight"].std() < 1.0
    assert np.array_equal(a["blk.0.attn_q.weight"], b["blk.0.attn_q.weight"])  # seeded
    _same_except(a, orig, {"blk.0.attn_q.weight"})

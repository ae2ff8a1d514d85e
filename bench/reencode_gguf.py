"""A copy of the reference GGUF with its Q4_1 weights re-encoded in another llama.cpp type.

    python -m bench.reencode_gguf TYPE OUT.gguf     # TYPE: Q8_0, Q4_0, F16, ...

For measuring what a faster kernel would buy (llama.cpp's x86 CPU backend multiplies Q4_1 with
plain dot products, while Q8_0 has tinyBLAS tiles and Q4_0 is repacked into 8x8 AVX2 blocks at
load): the weights are dequantized from Q4_1 and quantized again, so Q8_0 and F16 hold nearly
the same values, Q4_0 loses the per-block minimum. Every such copy changes the reference's
numerics (its answers and logprobs); it is a decision for the maintainers, not a setting.
The token embedding (Q8_0) and the norms (F32) are copied as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.mismap import reference_gguf


def reencode(src: Path, dst: Path, type_name: str) -> int:
    """Write `dst`: `src` with every Q4_1 tensor in `type_name`; the number of tensors changed."""
    import gguf
    from gguf.quants import dequantize, quantize

    target = gguf.GGMLQuantizationType[type_name]
    reader = gguf.GGUFReader(src)
    arch = str(reader.fields[gguf.Keys.General.ARCHITECTURE].contents())
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        sub_type = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub_type)
    changed = 0
    out: list[tuple[str, np.ndarray, gguf.GGMLQuantizationType]] = []
    for tensor in reader.tensors:
        data, qtype = np.asarray(tensor.data), tensor.tensor_type
        if qtype == gguf.GGMLQuantizationType.Q4_1:
            values = dequantize(data, qtype)
            data = values.astype(np.float16) if type_name == "F16" else quantize(values, target)
            qtype, changed = target, changed + 1
        out.append((tensor.name, data, qtype))
    for name, data, qtype in out:
        writer.add_tensor(name, data, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return changed


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(
            "usage: python -m bench.reencode_gguf TYPE OUT.gguf  (TYPE: Q8_0, Q4_0, F16)"
        )
    n = reencode(reference_gguf(), Path(sys.argv[2]), sys.argv[1].upper())
    print(f"{sys.argv[2]}: {n} Q4_1 tensors re-encoded as {sys.argv[1].upper()}")


if __name__ == "__main__":
    main()

"""A GGUF file with its quantised weights dequantised to float32 (the `gguf` package only).

llama.cpp multiplies quantised weights (Q4_1, Q8_0, …) with activations it first quantises to
8 bits, so the same Q4_1 file scored by llama.cpp and by transformers (which dequantises the weights
to float32 and keeps float32 activations) differs by about 0.1 nat per token. Written out as
float32, the weights are the same numbers transformers uses, llama.cpp computes in float32, and the
two agree to kernel rounding (docs/models.md: the tolerance). Usage:

    python -m inference.scorers.gguf_f32 IN.gguf OUT.gguf
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

KEEP = ("F32", "F16", "BF16")  # written as they are (norms are already float32)


def dequantise(source: Path, target: Path) -> Path:
    """Write `target`: `source`'s metadata and tensors, every quantised tensor as float32."""
    import gguf

    reader = gguf.GGUFReader(str(source))
    arch = reader.fields["general.architecture"]
    arch_name = bytes(arch.parts[arch.data[0]]).decode()
    partial = Path(f"{target}.partial-{os.getpid()}")
    writer = gguf.GGUFWriter(str(partial), arch_name)
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name in ("general.architecture", "general.file_type"):
            continue
        value_type = field.types[0]
        if value_type == gguf.GGUFValueType.ARRAY:
            sub = field.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                value = [bytes(field.parts[i]).decode("utf-8", errors="surrogateescape") for i in field.data]
            else:
                value = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_key_value(field.name, value, value_type, sub_type=sub)
        elif value_type == gguf.GGUFValueType.STRING:
            writer.add_key_value(field.name, bytes(field.parts[field.data[0]]).decode("utf-8"), value_type)
        else:
            writer.add_key_value(field.name, field.parts[field.data[0]].tolist()[0], value_type)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)  # replaces general.file_type (skipped below)
    for tensor in reader.tensors:
        if tensor.tensor_type.name in KEEP:
            writer.add_tensor(tensor.name, np.asarray(tensor.data), raw_dtype=tensor.tensor_type)
        else:
            data = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
            writer.add_tensor(tensor.name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(target)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m inference.scorers.gguf_f32 IN.gguf OUT.gguf")
    print(dequantise(Path(sys.argv[1]), Path(sys.argv[2])))

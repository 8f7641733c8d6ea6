"""Peer for the checkpoint benchmark: a local safetensors checkpoint's weight bytes per dtype
from its headers, in Python's standard library (json + struct), the way the `safetensors`
library's metadata read does it (length, JSON header, no tensor data).

Run as `python3 -S checkpoint_peer.py PATH` with PATH a .safetensors file or a sharded
checkpoint's *.safetensors.index.json. Prints, per dtype, the tensors, parameters and bytes,
then the total, so both sides do the same work.
"""
import json
import os
import struct
import sys

BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "I16": 16, "U16": 16, "F16": 16,
        "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64}


def header(path):
    with open(path, "rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        return json.loads(file.read(length))


def main(path):
    if path.endswith(".index.json"):
        with open(path) as file:
            shards = sorted(set(json.load(file)["weight_map"].values()))
        files = [os.path.join(os.path.dirname(path), shard) for shard in shards]
    else:
        files = [path]
    totals = {}
    for name in files:
        for tensor, entry in header(name).items():
            if tensor == "__metadata__":
                continue
            elements = 1
            for dimension in entry["shape"]:
                elements *= dimension
            begin, end = entry["data_offsets"]
            if end - begin != elements * BITS[entry["dtype"]] // 8:
                sys.exit(f"{name}: {tensor}: shape and offsets disagree")
            count, parameters, size = totals.get(entry["dtype"], (0, 0, 0))
            totals[entry["dtype"]] = (count + 1, parameters + elements, size + end - begin)
    for dtype, (count, parameters, size) in sorted(totals.items(), key=lambda item: -item[1][2]):
        print(f"{dtype} {count} tensors {parameters} parameters {size} bytes")
    total = sum(size for _, _, size in totals.values())
    print(f"total {total} bytes = {total / 2**30} GiB = {total / 10**9} GB")


if __name__ == "__main__":
    main(sys.argv[1])

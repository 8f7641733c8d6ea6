"""Peer for the checkpoint benchmark: a safetensors checkpoint's weight bytes per dtype from
its headers, in Python's standard library, as the `safetensors` library reads metadata.

Run as `python3 -S checkpoint_peer.py PATH` (a .safetensors file or a *.safetensors.index.json).
Like `iteragpu estimate --checkpoint` it reads only the 8-byte length and the JSON header of
each file, checks every tensor's shape x dtype against its data_offsets and that the tensors
cover the data exactly, and prints the tensors, parameters and bytes per dtype and the total
in bytes, GiB and GB (exact, with `decimal`).
"""
import json
import os
import struct
import sys
from decimal import Decimal, localcontext

BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
        "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
        "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64,
        "I64": 64, "U64": 64}


def read_header(path, sums):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        size = os.fstat(f.fileno()).st_size
        if length > 100_000_000 or length > size - 8:
            sys.exit(f"{path}: bad header length {length}")
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    spans = []
    for name, info in header.items():
        bits = BITS[info["dtype"]]
        elements = 1
        for dimension in info["shape"]:
            elements *= dimension
        begin, end = info["data_offsets"]
        if elements * bits != (end - begin) * 8:
            sys.exit(f"{path}: tensor {name!r}: shape and data_offsets disagree")
        spans.append((begin, end))
        count, parameters, nbytes = sums.get(info["dtype"], (0, 0, 0))
        sums[info["dtype"]] = (count + 1, parameters + elements, nbytes + end - begin)
    reached = 0
    for begin, end in sorted(spans):
        if begin != reached:
            sys.exit(f"{path}: tensors overlap or leave a gap at {reached}")
        reached = end
    if reached != size - 8 - length:
        sys.exit(f"{path}: data not covered by the tensors")
    return set(header)


def main(path):
    sums = {}
    if path.endswith(".json"):
        with open(path, "rb") as f:
            weight_map = json.load(f)["weight_map"]
        folder = os.path.dirname(path)
        seen = set()
        for shard in sorted(set(weight_map.values())):
            names = read_header(os.path.join(folder, shard), sums)
            if names & seen or any(weight_map.get(n) != shard for n in names):
                sys.exit(f"{shard}: holds tensors the index does not map to it")
            seen |= names
        if seen != set(weight_map):
            sys.exit(f"{path}: names tensors no shard holds")
    else:
        read_header(path, sums)
    total = sum(nbytes for _, _, nbytes in sums.values())
    with localcontext() as context:
        context.prec = 200
        for dtype, (count, parameters, nbytes) in sorted(sums.items(), key=lambda kv: -kv[1][2]):
            print(f"{dtype} {count} tensors {parameters} parameters {nbytes} bytes"
                  f" = {(Decimal(nbytes) / (1 << 30)).normalize():f} GiB")
        print(f"weights {total} bytes = {(Decimal(total) / (1 << 30)).normalize():f} GiB"
              f" = {(Decimal(total) / 10**9).normalize():f} GB")


if __name__ == "__main__":
    main(sys.argv[1])

"""Safetensors files for the tests that run whole commands (tests/golden/record_outputs.sh)
and for the inputs of the documented examples (examples/make-example-inputs): an 8-byte
little-endian header length, the JSON header padded with spaces, then zero data (a hole in
the file: the commands read headers only), as tests/support/safetensors_writer.hpp writes
them for the C++ tests."""

import struct

BITS = {"F16": 16, "BF16": 16, "F32": 32, "U8": 8, "I32": 32, "F64": 64}


def write_safetensors(path, tensors, header_bytes=None, length=None, cut=0):
    """Writes tensors [(name, dtype, shape)] in order and returns the data's size. The header
    is padded to header_bytes (else to a multiple of 8); length replaces the header length
    written in front; cut leaves that many bytes of data out at the end."""
    parts, offset = [], 0
    for name, dtype, shape in tensors:
        elements = 1
        for d in shape:
            elements *= d
        end = offset + elements * BITS[dtype] // 8
        parts.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                     % (name, dtype, ",".join(map(str, shape)), offset, end))
        offset = end
    text = '{"__metadata__":{"format":"pt"},' + ",".join(parts) + "}"
    target = header_bytes if header_bytes is not None else len(text) + (-len(text) % 8)
    if len(text) > target:
        raise ValueError("%s: a header of %d bytes does not fit in %d" % (path, len(text), target))
    text += " " * (target - len(text))
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text) if length is None else length))
        f.write(text.encode())
        f.truncate(8 + len(text) + offset - cut)
    return offset

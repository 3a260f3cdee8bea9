"""Write a seed for fuzz_chunkmap: a btrfs tree-search answer of three chunk
items (SINGLE, DUP, RAID0 over two devices) as the kernel gives them, the
first byte being the item count.  Usage: chunkmap_seed.py FILE"""
import struct
import sys


def chunk(logical, length, typ, stripes):
    item = struct.pack("<QQQQIIIHH", length, 2, 65536, typ, 65536, 65536, 4096, len(stripes), 1)
    for dev, off in stripes:
        item += struct.pack("<QQ", dev, off) + b"\0" * 16
    # the search header is host-endian: transid, objectid, offset, type, len
    return struct.pack("=QQQII", 7, 256, logical, 228, len(item)) + item


data = (chunk(13631488, 8388608, 1, [(1, 13631488)]) +
        chunk(22020096, 8388608, 2 | 32, [(1, 22020096), (1, 30408704)]) +
        chunk(1 << 30, 1 << 30, 1 | 8, [(1, 1 << 26), (2, 1 << 26)]))
with open(sys.argv[1], "wb") as f:
    f.write(bytes([3]) + data)

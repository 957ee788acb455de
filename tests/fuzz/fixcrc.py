#!/usr/bin/python3
"""fixcrc.py IN OUT - a checkpoint with its header's payload size and checksums made to match its
bytes, as tests/fuzz/fuzz_checkpoint.c does to every input: turns a fuzz artifact of the
checkpoint target into a file that `mmdem run --restart` reads past the checksums
(tests/fuzz/regressions/checkpoint-*.ckpt)."""
import struct
import sys
import zlib

d = bytearray(open(sys.argv[1], "rb").read())
if len(d) >= 48:
    d[16:24] = struct.pack("<Q", len(d) - 48)
    d[24:28] = struct.pack("<I", zlib.crc32(bytes(d[48:])))
    d[44:48] = struct.pack("<I", zlib.crc32(bytes(d[:44])))
open(sys.argv[2], "wb").write(d)

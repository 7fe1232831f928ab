#!/usr/bin/env python3
# corrupt-lmdb.py DATA.MDB: overwrite with 0xff every leaf page of an LMDB
# file but the main table's root (so that it still opens): the damage
# a bad disk or a stray write leaves, which LMDB meets only when it reads.
# Layout as cache/damage.c reads it (LMDB 0.9, 64-bit, 4 KiB pages).
import struct, sys
f = sys.argv[1]
d = bytearray(open(f, 'rb').read())
ps = 4096
metas = []
for i in (0, 1):
    o = i * ps + 16
    txnid = struct.unpack_from('<Q', d, o + 128)[0]
    root = struct.unpack_from('<Q', d, o + 24 + 48 + 40)[0]
    metas.append((txnid, root))
main_root = max(metas)[1]
n = 0
for p in range(2, len(d) // ps):
    flags = struct.unpack_from('<H', d, p * ps + 10)[0]
    if flags & 2 and p != main_root and struct.unpack_from('<Q', d, p * ps)[0] == p:
        d[p * ps:(p + 1) * ps] = b'\xff' * ps
        n += 1
open(f, 'r+b').write(d)
print(n, 'leaf pages overwritten, main root', main_root)

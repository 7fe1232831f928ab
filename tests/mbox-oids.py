#!/usr/bin/env python3
"""mbox-oids.py < MBOXRD: the git blob id of each message, one per line.
Reads a mboxrd stream as public-inbox writes it (From_ lines, >From
escaping, one blank line after each message) and hashes each message's
bytes as git hash-object would."""
import hashlib, re, sys

data = sys.stdin.buffer.read()
for m in re.split(rb'(?m)^From [^\n]*\n', data):
    if not m:
        continue
    m = re.sub(rb'(?m)^>(>*From )', rb'\1', m)
    if m.endswith(b'\n\n'):
        m = m[:-1]
    print(hashlib.sha1(b'blob %d\0' % len(m) + m).hexdigest())

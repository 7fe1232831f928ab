#!/usr/bin/env python3
"""pi-import.py EPOCH.git FILE...

Writes the given raw messages, in order, into a public-inbox v2 epoch
repository as public-inbox itself lays them out (one commit per message,
the raw message in blob "m"), with git fast-import: much faster than one
public-inbox-mda process per message.  Commit times are the messages'
Date: headers, so public-inbox's rt: sees realistic times."""
import email.utils, subprocess, sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git = sys.argv[1]
    subprocess.run(["git", "init", "-q", "--bare", git], check=True)
    fi = subprocess.Popen(["git", "--git-dir", git, "fast-import", "--quiet",
                           "--date-format=raw"], stdin=subprocess.PIPE)
    out = fi.stdin
    mark = 0
    for i, path in enumerate(sys.argv[2:]):
        raw = open(path, "rb").read()
        t = 0
        for line in raw.split(b"\n\n", 1)[0].split(b"\n"):
            if line.lower().startswith(b"date:"):
                try:
                    t = int(email.utils.parsedate_to_datetime(
                        line[5:].strip().decode()).timestamp())
                except Exception:
                    t = 0
                break
        out.write(b"blob\nmark :%d\ndata %d\n" % (mark + 1, len(raw)))
        out.write(raw + b"\n")
        out.write(b"commit refs/heads/master\nmark :%d\n" % (mark + 2))
        out.write(b"author leifs test <t@example.org> %d +0000\n" % t)
        out.write(b"committer leifs test <t@example.org> %d +0000\n" % t)
        out.write(b"data 0\n")
        if i:
            out.write(b"from :%d\n" % mark)
        out.write(b"M 100644 :%d m\n\n" % (mark + 1))
        mark += 2
    out.close()
    if fi.wait():
        sys.exit("git fast-import failed")


if __name__ == "__main__":
    main()

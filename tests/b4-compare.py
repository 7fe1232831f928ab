#!/usr/bin/env python3
"""b4-compare.py [-x MSGID]... [-a MAILDIR]... VIEW OUTDIR [EVERY]

For each VIEW/series/NAME (every EVERYth), gives b4 0.12 the thread of the
Message-ID its info names, as the view holds it, in date order, on stdin
(`b4 am -m - --stdin-pipe-sep SEP -v REVISION -o DIR`, offline, with the
HOME of the environment: how b4 reads a thread it fetched), and compares,
patch by patch: that b4 wrote
NAME.mbx, and for each patch its Subject, From and Date headers and its body
(commit message, trailers, diff) byte for byte; then the cover with b4's
.cover.  The Content-Transfer-Encoding header and the From-line separator
are not compared (the brief lets them differ).  Prints a line per
difference and a last line "series N, patches P, equal E, different D";
exits 1 when anything differs or b4 wrote nothing for a series.  -x skips
the series of MSGID (threads b4 itself cannot read: it walks a reply that
is its own parent forever, and fails on a raw 8-bit subject).  -a adds the
messages of MAILDIR (its new/ and cur/) to the view's, each Message-ID once:
the rest of the threads a view holds part of, as `b4 am MSGID` fetches
them."""
import email, email.policy, email.utils, os, re, subprocess, sys

SEP = "\n--leifs-b4-compare--\n"


def view_threads(view, also=()):
    """Message-ID -> (the sorted messages of its thread)"""
    msgs, parent, seen = [], {}, set()

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for sub, extra in [(os.path.join(d, s), d != view) for d in (view,) + tuple(also)
                       for s in ("new", "cur")]:
        for f in sorted(os.listdir(sub)):
            raw = open(os.path.join(sub, f), "rb").read()
            m = email.message_from_bytes(raw, policy=email.policy.compat32)
            try:
                t = email.utils.parsedate_to_datetime(m["Date"]).timestamp()
            except Exception:
                t = 0
            refs = " ".join(str(v) for h in ("In-Reply-To", "References")
                            for v in m.get_all(h, []))
            ids = re.findall(r"<([^>]+)>", refs)
            mid = (re.findall(r"<([^>]+)>", str(m.get("Message-ID", ""))) or ["@" + f])[0]
            if extra and mid in seen:
                continue
            seen.add(mid)
            msgs.append((t, f.split(".")[1], raw, mid))
            for i in ids:
                parent[find(i)] = find(mid)
            find(mid)
    groups = {}
    for t, oid, raw, mid in sorted(msgs, key=lambda x: (x[0], x[1])):
        groups.setdefault(find(mid), []).append(raw)
    return {k: groups[find(k)] for k in list(parent)}


def info(path):
    d = {}
    for line in open(path, encoding="utf-8"):
        k, _, v = line.rstrip("\n").partition(": ")
        d.setdefault(k, v)
    return d


def split_mbx(data):
    sep = b"From git@z Thu Jan  1 00:00:00 1970\n"
    if not data:
        return []
    parts = data.split(sep)
    return [p for p in parts[1:]] if data.startswith(sep) else parts


def parse(msg):
    head, _, body = msg.partition(b"\n\n")
    h = {}
    # folded header lines, unfolded (b4 folds at 75 columns)
    for line in head.replace(b"\n ", b" ").replace(b"\n\t", b" ").split(b"\n"):
        k, _, v = line.partition(b": ")
        h[k.lower()] = v
    return h, body


def same(a, b, what, name, out):
    ha, ba = parse(a)
    hb, bb = parse(b)
    ok = True
    for k in (b"subject", b"from", b"date", b"message-id"):
        if ha.get(k) != hb.get(k):
            out.append("%s: %s: %s: leifs %r, b4 %r" % (name, what, k.decode(), ha.get(k), hb.get(k)))
            ok = False
    if ba != bb:
        out.append("%s: %s: body differs" % (name, what))
        la, lb = ba.split(b"\n"), bb.split(b"\n")
        for i in range(max(len(la), len(lb))):
            x = la[i] if i < len(la) else None
            y = lb[i] if i < len(lb) else None
            if x != y:
                out.append("   line %d: leifs %r / b4 %r" % (i + 1, x, y))
                break
        ok = False
    return ok


def main():
    args, skip, also = sys.argv[1:], set(), []
    while args and args[0] in ("-x", "-a"):
        if args[0] == "-x":
            skip.add(args[1])
        else:
            also.append(os.path.abspath(args[1]))
        args = args[2:]
    view, outdir = (os.path.abspath(a) for a in args[0:2])
    every = int(args[2]) if len(args) > 2 else 1   # every Nth series
    threads = view_threads(view, also)
    sdir = os.path.join(view, "series")
    nseries = npatches = equal = different = 0
    msgs = []
    for at, name in enumerate(sorted(os.listdir(sdir))):
        if at % every:
            continue
        i = info(os.path.join(sdir, name, "info"))
        mid = i["message-id"].strip("<>")
        if mid in skip:
            continue
        nseries += 1
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        thread = SEP.encode().join(threads.get(mid, []))
        r = subprocess.run(["b4", "--offline-mode", "am", "-m", "-", "--stdin-pipe-sep", SEP,
                            "-v", i["revision"], "-o", d], input=thread,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=d, timeout=120)
        # a name leifs made unique in the view ("-2") is b4's without it
        b4name = re.sub(r"-\d+$", "", name) if not os.path.exists(
            os.path.join(d, name + ".mbx")) else name
        ref = os.path.join(d, b4name + ".mbx")
        if not os.path.exists(ref):
            msgs.append("%s: b4 wrote no %s.mbx: %s" % (name, name, os.listdir(d)))
            msgs.append(r.stdout.decode(errors="replace")[-2000:])
            different += 1
            continue
        mine = split_mbx(open(os.path.join(sdir, name, "am.mbx"), "rb").read())
        theirs = split_mbx(open(ref, "rb").read())
        if len(mine) != len(theirs):
            msgs.append("%s: %d patches, b4 %d" % (name, len(mine), len(theirs)))
            different += 1
            continue
        for k, (a, b) in enumerate(zip(mine, theirs)):
            npatches += 1
            if same(a, b, "patch %d" % (k + 1), name, msgs):
                equal += 1
            else:
                different += 1
        cref = os.path.join(d, b4name + ".cover")
        cmine = os.path.join(sdir, name, "cover")
        if os.path.exists(cref) != os.path.exists(cmine):
            msgs.append("%s: cover: leifs %s, b4 %s" % (name, os.path.exists(cmine),
                                                       os.path.exists(cref)))
            different += 1
        elif os.path.exists(cref):
            if not same(open(cmine, "rb").read(), open(cref, "rb").read(), "cover", name, msgs):
                different += 1
    for m in msgs:
        print(m)
    print("series %d, patches %d, equal %d, different %d" % (nseries, npatches, equal, different))
    sys.exit(1 if different or not nseries else 0)


main()

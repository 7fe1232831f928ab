#!/usr/bin/env python3
"""gen-series.py [-s SEED] [-n SERIES] [-t NOW] [-H] OUTDIR

Writes patch series as kernel lists see them, one raw message per file in
OUTDIR/linux-rtc/NNNNN.eml (date order), for series/ tests against b4:
revisions v1..v3 (v2 and v3 in reply to the previous cover, as
git send-email --in-reply-to does, or as threads of their own), cover
letters with base-commit: and change-id:, prefixes b4 takes ([RFC PATCH],
[PATCH net-next v2], [PATCHv3]), replies to patches and to the cover with
trailers (Reviewed-by, Acked-by, Tested-by, Reported-by, Fixes, Link),
nested replies, a quoted "> Acked-by:" that is no trailer, a trailer by
someone else than the sender, a patch missing from its series, a partial
reroll (v2 of one patch, in reply to v1's), a patch sent twice, a single
patch without a cover, an in-body From: (in a patch and in a cover) and a
scissors line; with -H, threads that lie (gen.hostile).  The same seed and NOW give the same bytes."""
import email.utils, os, random, sys, time

PEOPLE = [
    ("Alexandre Belloni", "alexandre.belloni@bootlin.com"),
    ("Guenter Roeck", "linux@roeck-us.net"),
    ("Uwe Kleine-König", "u.kleine-koenig@pengutronix.de"),
    ("Chris Packham", "chris.packham@alliedtelesis.co.nz"),
    ("Krzysztof Kozlowski", "krzk@kernel.org"),
    ("Zoë Ångström", "zoe@example.org"),
]
FILES = ["drivers/rtc/rtc-ds1307.c", "drivers/rtc/rtc-pcf8563.c", "drivers/rtc/interface.c",
         "drivers/watchdog/imx2_wdt.c", "include/linux/rtc.h"]
TOPICS = ["add support for watchdog timer", "fix alarm irq handling", "use devm helpers",
          "drop unused variable", "convert to dt schema", "handle century bit"]


class Gen:
    def __init__(self, seed, now):
        self.rng = random.Random(seed)
        self.t = now - 80 * 86400
        self.n = 0
        self.out = []

    def tick(self):
        self.t += self.rng.randint(300, 4000)
        return self.t

    def mid(self):
        self.n += 1
        return "%d.%d-series@%s" % (self.t, self.n, "example.org")

    def send(self, frm, subject, body, irt=None, refs=(), mid=None):
        mid = mid or self.mid()
        name, addr = frm
        enc = email.utils.formataddr((name, addr), charset="utf-8") if any(
            ord(c) > 127 for c in name) else "%s <%s>" % (name, addr) if name else addr
        h = ["From: %s" % enc, "To: linux-rtc@vger.kernel.org",
             "Subject: %s" % subject, "Date: %s" % email.utils.formatdate(self.tick()),
             "Message-ID: <%s>" % mid]
        if irt:
            h.append("In-Reply-To: <%s>" % irt)
            h.append("References: %s" % " ".join("<%s>" % r for r in list(refs) + [irt]))
        h += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
              "Content-Transfer-Encoding: 8bit", "List-Id: <linux-rtc.vger.kernel.org>"]
        self.out.append("\n".join(h) + "\n\n" + body)
        return mid

    def diff(self, path, k):
        r = self.rng
        lines = ["diff --git a/%s b/%s" % (path, path),
                 "index %07x..%07x 100644" % (r.getrandbits(28), r.getrandbits(28)),
                 "--- a/%s" % path, "+++ b/%s" % path,
                 "@@ -%d,6 +%d,7 @@ static int rtc_probe_%d(struct device *dev)" % (k * 10, k * 10, k),
                 " \tint ret;", " \tstruct rtc_device *rtc;", "-\tret = old_call_%d(dev);" % k,
                 "+\tret = new_call_%d(dev, %d);" % (k, r.randint(0, 99)),
                 "+\tif (ret)", "+\t\treturn ret;", " \treturn 0;", " }", ""]
        return "\n".join(lines)

    def patch_body(self, author, k, n, version, extra_trailer=None, inbody=None):
        path = FILES[k % len(FILES)]
        msg = "This changes %s so that the %s works on every board.\n\nIt was seen on v%d.\n" % (
            path, TOPICS[k % len(TOPICS)], version)
        tr = ["Signed-off-by: %s <%s>" % author]
        if extra_trailer:
            tr.insert(0, extra_trailer)
        top = ""
        if inbody:
            top = "From: %s <%s>\n\n" % inbody
        stat = " %s | 4 +++-\n 1 file changed, 3 insertions(+), 1 deletion(-)\n" % path
        return "%s%s\n%s\n---\n%s\n%s-- \n2.39.2\n" % (top, msg, "\n".join(tr), stat,
                                                       self.diff(path, k * 7 + version))

    def cover_body(self, author, n, version, base, change):
        return ("Hi,\n\nThis series reworks the driver (v%d).\n\nChanges since v%d:\n"
                "- rebased\n\n%s (%d):\n  rtc: one\n  rtc: two\n\n"
                " drivers/rtc/rtc-ds1307.c | %d ++++++----\n"
                " %d files changed, %d insertions(+), %d deletions(-)\n\n"
                "base-commit: %s\nchange-id: %s\n\nBest regards,\n-- \n%s <%s>\n" % (
                    version, max(1, version - 1), author[0], n, 10 + n, n, 6 * n, 4 * n,
                    base, change, author[0], author[1]))

    def reply(self, who, to_mid, refs, subject, lines, quote=None):
        body = ""
        if quote:
            body += "On Mon, someone wrote:\n" + "".join("> %s\n" % q for q in quote) + "\n"
        body += "\n".join(lines) + "\n"
        return self.send(who, "Re: " + subject, body, irt=to_mid, refs=refs)

    def series(self, idx):
        r = self.rng
        author = PEOPLE[idx % len(PEOPLE)]
        others = [p for p in PEOPLE if p != author]
        n = r.choice([2, 3, 4])
        topic = "rtc: ds1307: %s %d" % (TOPICS[idx % len(TOPICS)], idx)
        versions = r.choice([1, 2, 3])
        change = "%08x-rtc-%d" % (r.getrandbits(32), idx)
        prev_cover = None
        prefix = r.choice(["PATCH", "PATCH", "RFC PATCH", "PATCH net-next"])
        for v in range(1, versions + 1):
            base = "%040x" % r.getrandbits(160)
            vtag = "" if v == 1 else (" v%d" % v)
            pfx = prefix
            if v == 3 and idx % 2:
                pfx, vtag = "PATCHv3", ""   # b4 reads [PATCHv3] as v3
            refs = [prev_cover] if prev_cover else []
            cover = None
            if n > 1 or idx % 3:
                csubj = "[%s%s 0/%d] %s" % (pfx, vtag, n, topic)
                cbody = self.cover_body(author, n, v, base, change)
                if idx % 6 == 3:    # an in-body From: a cover keeps its own (no patch)
                    cbody = "From: %s <%s>\n\n" % others[0] + cbody
                cover = self.send(author, csubj, cbody,
                                  irt=prev_cover if prev_cover and idx % 2 == 0 else None)
            mids = []
            missing = (idx % 5 == 1 and v == versions and n > 2)
            for k in range(1, n + 1):
                if missing and k == 2:
                    continue
                subj = "[%s%s %d/%d] %s" % (pfx, vtag, k, n, "%s part %d" % (topic, k)) if cover \
                    else "[%s%s] %s" % (pfx, vtag, topic)
                extra = None
                if k == 1 and idx % 4 == 2:
                    extra = "Fixes: 1234567890ab (\"rtc: ds1307: add support\")"
                inbody = others[0] if (k == n and idx % 6 == 3) else None
                body = self.patch_body(author, k + idx, n, v, extra, inbody)
                if k == 2 and idx % 7 == 4:
                    body = "-- >8 --\n" + body
                m = self.send(author, subj, body, irt=cover, refs=[])
                mids.append((k, m, subj))
                if k == 1 and idx % 5 == 3:   # sent twice: the same message again
                    self.out.append(self.out[-1])
            # replies
            for k, m, subj in mids:
                roll = r.random()
                if roll < 0.45:
                    who = r.choice(others)
                    kind = r.choice(["Reviewed-by", "Acked-by", "Tested-by"])
                    rid = self.reply(who, m, [cover] if cover else [], subj,
                                     ["Looks right to me.", "", "%s: %s <%s>" % ((kind,) + who)],
                                     quote=["Acked-by: Somebody Else <else@example.com>",
                                            "ret = new_call();"])
                    if r.random() < 0.4:
                        who2 = r.choice(others)
                        self.reply(who2, rid, ([cover] if cover else []) + [m], subj,
                                   ["Agreed.", "", "Reviewed-by: %s <%s>" % who2])
                elif roll < 0.6:
                    who = r.choice(others)
                    self.reply(who, m, [cover] if cover else [], subj,
                               ["Reported-by: %s <%s>" % who,
                                "Tested-by: Not Me <notme@example.net>"])
                elif roll < 0.7:
                    who = r.choice(others)
                    self.reply(who, m, [cover] if cover else [], subj,
                               ["Why is this needed?", "", "Thanks,", who[0]])
            if cover and r.random() < 0.6:
                who = r.choice(others)
                self.reply(who, cover, refs, "[%s%s 0/%d] %s" % (pfx, vtag, n, topic),
                           ["For the series:", "", "Acked-by: %s <%s>" % who])
            prev_cover = cover or (mids[0][1] if mids else prev_cover)


    def hostile(self):
        """threads b4 must survive: numbering that lies, two different 2/5,
        a patch without a diff, a cover with no patches, a bad address"""
        a, o = PEOPLE[0], PEOPLE[1]
        c = self.send(a, "[PATCH 0/5] rtc: hostile numbering", self.cover_body(a, 5, 1, "0" * 40,
                                                                              "hostile-1"),
                      mid="hostile-cover@example.org")
        # authors as b4 writes them: a "." quoted, a short name kept, none
        # at all the address alone
        self.send(("J. Random Hacker", "jrh@example.org"), "[PATCH 1/5] rtc: hostile one",
                  self.patch_body(a, 1, 5, 1), irt=c, mid="hostile-1@example.org")
        self.send(("Al", "al@example.org"), "[PATCH 2/5] rtc: hostile two",
                  self.patch_body(a, 2, 5, 1), irt=c, mid="hostile-2a@example.org")
        self.send(a, "[PATCH 2/5] rtc: hostile two again", self.patch_body(a, 3, 5, 1), irt=c,
                  mid="hostile-2b@example.org")
        self.send(a, "[PATCH 3/5] rtc: hostile three", "No diff here.\n\nSigned-off-by: %s <%s>\n"
                  % a, irt=c, mid="hostile-3@example.org")
        self.send(("", "bare@example.org"), "[PATCH 7/5] rtc: hostile seven", self.patch_body(a, 7, 5, 1), irt=c,
                  mid="hostile-7@example.org")
        self.reply(o, "hostile-1@example.org", [c], "[PATCH 1/5] rtc: hostile one",
                   ["Reviewed-by: Broken <not an address", "Acked-by: <>",
                    "Tested-by: %s <%s>" % o])
        self.send(a, "[PATCH 0/4] rtc: a cover and nothing else",
                  self.cover_body(a, 4, 1, "1" * 40, "hostile-2"), mid="hostile-lone@example.org")
        self.send(a, "[PATCH 1/2000] rtc: far too many", self.patch_body(a, 4, 9, 1),
                  mid="hostile-many@example.org")
        # a reply that is its own parent; a References with a raw 8-bit
        # byte; a raw Latin-1 subject with a "/" (no text, no file name)
        lp = self.send(a, "[PATCH] rtc: looped reply", self.patch_body(a, 5, 1, 1),
                       mid="hostile-looped@example.org")
        self.out.append("From: %s <%s>\nTo: linux-rtc@vger.kernel.org\n"
                        "Subject: Re: [PATCH] rtc: looped reply\nDate: %s\n"
                        "Message-ID: <hostile-self@example.org>\n"
                        "In-Reply-To: <hostile-self@example.org>\nReferences: <%s>\n\n"
                        "Reviewed-by: %s <%s>\n" % (o + (email.utils.formatdate(self.tick()), lp) + o))
        self.out.append("From: %s <%s>\nTo: linux-rtc@vger.kernel.org\n"
                        "Subject: Re: [PATCH] rtc: looped reply\nDate: %s\n"
                        "Message-ID: <hostile-8bit@example.org>\n"
                        "References: <%s> <caf\udce9@example.org>\n\n"
                        "Acked-by: %s <%s>\n" % (o + (email.utils.formatdate(self.tick()), lp) + o))
        self.send(a, "[PATCH] rtc: caf\udce9 and/or latin1", self.patch_body(a, 6, 1, 1),
                  mid="hostile-latin1@example.org")
        self.send(a, "[PATCH]  rtc:\thostile  spacing", self.patch_body(a, 7, 1, 1),
                  mid="hostile-spacing@example.org")

    def three(self, a, topic, base, change, tag, k0):
        """a v1 of three patches and a cover, <TAG-cover>, <TAG-1>...: the cover's id"""
        c = self.send(a, "[PATCH 0/3] %s" % topic, self.cover_body(a, 3, 1, base, change),
                      mid="%s-cover@example.org" % tag)
        for k in (1, 2, 3):
            self.send(a, "[PATCH %d/3] %s part %d" % (k, topic, k), self.patch_body(a, k0 + k, 3, 1),
                      irt=c, mid="%s-%d@example.org" % (tag, k))
        return c

    def reroll(self):
        """a partial reroll: v2 resends only 2/3, in reply to v1's 2/3 (b4
        am takes v1's 1/3 and 3/3, and v1's cover, for the rest)"""
        a, o = PEOPLE[3], PEOPLE[1]
        topic = "rtc: ds1307: partial reroll"
        c = self.three(a, topic, "2" * 40, "reroll-1", "reroll", 30)
        self.reply(o, "reroll-1@example.org", [c], "[PATCH 1/3] %s part 1" % topic,
                   ["Reviewed-by: %s <%s>" % o])
        self.reply(o, "reroll-2@example.org", [c], "[PATCH 2/3] %s part 2" % topic,
                   ["This one needs a v2.", "", "Reviewed-by: %s <%s>" % o])
        self.send(a, "[PATCH v2 2/3] %s part 2" % topic, self.patch_body(a, 32, 3, 2),
                  irt="reroll-2@example.org", refs=[c], mid="reroll-v2-2@example.org")
        self.reply(o, "reroll-v2-2@example.org", [c, "reroll-2@example.org"],
                   "[PATCH v2 2/3] %s part 2" % topic, ["Acked-by: %s <%s>" % o])
        # v2 of 1/3 alone: b4 takes v1's cover as found from the copy of
        # 2/3 (1/3 replies to no cover); the cover's trailer is noted once
        topic = "rtc: ds1307: first rerolled"
        c = self.three(a, topic, "3" * 40, "reroll-2", "reroll1", 40)
        self.reply(o, c, [], "[PATCH 0/3] %s" % topic, ["Acked-by: %s <%s>" % o])
        self.send(a, "[PATCH v2 1/3] %s part 1" % topic, self.patch_body(a, 41, 3, 2),
                  irt="reroll1-1@example.org", refs=[c], mid="reroll1-v2-1@example.org")


def main():
    args = sys.argv[1:]
    seed, count, now, hostile = 1, 12, int(time.time()), False
    while args and args[0].startswith("-"):
        o = args.pop(0)
        if o == "-s":
            seed = int(args.pop(0))
        elif o == "-n":
            count = int(args.pop(0))
        elif o == "-t":
            now = int(args.pop(0))
        elif o == "-H":
            hostile = True
    out = args[0]
    g = Gen(seed, now)
    for i in range(count):
        g.series(i)
    if hostile:
        g.hostile()
    g.reroll()
    os.makedirs(os.path.join(out, "linux-rtc"), exist_ok=True)
    # public-inbox wants both lists of the tests: one message there
    os.makedirs(os.path.join(out, "linux-watchdog"), exist_ok=True)
    with open(os.path.join(out, "linux-watchdog", "00001.eml"), "w") as f:
        f.write("From: A <a@example.org>\nTo: linux-watchdog@vger.kernel.org\n"
                "Subject: watchdog: hello\nDate: %s\nMessage-ID: <wd-1@example.org>\n\n"
                "Not a patch.\n" % email.utils.formatdate(now - 86400))
    for i, raw in enumerate(g.out):
        with open(os.path.join(out, "linux-rtc", "%05d.eml" % (i + 1)), "w", encoding="utf-8",
                  errors="surrogateescape") as f:
            f.write(raw)
    print(len(g.out))


main()

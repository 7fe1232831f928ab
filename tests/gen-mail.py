#!/usr/bin/env python3
"""gen-mail.py [-s SEED] [-n THREADS] [-t NOW] OUTDIR

Writes realistic kernel-list patch mail, one raw message per file, in
OUTDIR/<list>/NNNNN.eml (delivery order), for the lists "linux-rtc" and
"linux-watchdog":  series with cover letters, diff --git hunks with function
headers, replies with quoted text and trailers, quoted-printable and base64
parts, UTF-8 and RFC 2047 names and subjects, cross-posts to both lists and
duplicate deliveries (same message, another Received: header).  Dates fall
in the 90 days before NOW (default: the current time), so relative queries
like rt:1.month.ago.. match part of it.  The same seed and NOW give the same
bytes."""
import base64, email.utils, os, quopri, random, sys, time

SUBSYS = [
    ("drivers/rtc/rtc-pcf8563.c", ["pcf8563_probe", "pcf8563_rtc_set_time",
                                   "pcf8563_rtc_read_time", "pcf8563_irq"], "rtc: pcf8563"),
    ("drivers/rtc/rtc-ds1307.c", ["ds1307_probe", "ds1307_get_time",
                                  "ds1307_set_time", "ds1337_read_offset"], "rtc: ds1307"),
    ("drivers/rtc/interface.c", ["rtc_read_time", "rtc_set_alarm",
                                 "__rtc_read_alarm", "rtc_update_irq_enable"], "rtc: core"),
    ("drivers/watchdog/imx2_wdt.c", ["imx2_wdt_probe", "imx2_wdt_ping",
                                     "imx2_wdt_set_timeout"], "watchdog: imx2_wdt"),
    ("drivers/watchdog/watchdog_dev.c", ["watchdog_ping", "watchdog_open",
                                         "watchdog_release", "watchdog_set_timeout"], "watchdog: core"),
    ("drivers/block/floppy.c", ["floppy_open", "floppy_release",
                                "floppy_queue_rq", "fd_locked_ioctl"], "floppy"),
    ("Documentation/devicetree/bindings/rtc/nxp,pcf8563.yaml", [], "dt-bindings: rtc: pcf8563"),
]
PEOPLE = [
    ("Alexandre Belloni", "alexandre.belloni@bootlin.com"),
    ("Guenter Roeck", "linux@roeck-us.net"),
    ("Wim Van Sebroeck", "wim@linux-watchdog.org"),
    ("Uwe Kleine-König", "u.kleine-koenig@pengutronix.de"),
    ("Jürgen Groß", "jgross@suse.com"),
    ("Łukasz Stelmach", "l.stelmach@samsung.com"),
    ("Zoë Ångström", "zoe@example.org"),
    ("Krzysztof Kozlowski", "krzk@kernel.org"),
    ("Denis Efremov", "efremov@linux.com"),
    ("周 小明", "xiaoming.zhou@example.cn"),
]
LISTS = {"linux-rtc": "linux-rtc@vger.kernel.org",
         "linux-watchdog": "linux-watchdog@vger.kernel.org"}
VERBS = ["fix", "add support for", "drop unused", "convert to", "clean up",
         "handle errors in", "avoid race in", "use devm helpers in"]
WORDS = ("the clock alarm interrupt register timeout driver device probe "
         "regression bug value counter boot suspend resume offset battery "
         "nowayout pretimeout kernel firmware oscillator century").split()


def addr(rng, person, encode):
    name, mail = person
    if encode and any(ord(c) > 127 for c in name):
        # RFC 2047, as most MUAs write it
        if rng.random() < 0.5:
            enc = "=?UTF-8?B?" + base64.b64encode(name.encode()).decode() + "?="
        else:
            q = "".join(c if c.isalnum() and ord(c) < 128 else
                        "".join("=%02X" % b for b in c.encode()) if c != " " else "_"
                        for c in name)
            enc = "=?UTF-8?Q?" + q + "?="
        return "%s <%s>" % (enc, mail)
    if any(c in name for c in ",.") :
        return '"%s" <%s>' % (name, mail)
    return "%s <%s>" % (name, mail)


def sentence(rng, n=10):
    w = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(w).capitalize() + "."


def paragraph(rng, lines=3):
    return "\n".join(sentence(rng, rng.randint(6, 11)) for _ in range(lines))


def hunk(rng, path, funcs):
    start = rng.randint(10, 900)
    func = rng.choice(funcs) if funcs else None
    header = "@@ -%d,7 +%d,8 @@" % (start, start)
    if func:
        header += " static int %s(struct device *dev)" % func
    ctx = ["\tint ret;", "", "\tret = regmap_read(map, REG_CTRL, &val);",
           "\tif (ret)", "\t\treturn ret;"]
    if func:
        ctx[2] = "\tret = %s_hw(map, REG_CTRL, &val);" % func.split("_")[0]
    old = "\tval &= ~%s_EN;" % rng.choice(["ALARM", "TIMER", "WDT", "IRQ"])
    new = ["\tval |= %s_EN;" % rng.choice(["ALARM", "TIMER", "WDT", "IRQ"]),
           "\tval &= ~BIT(%d);" % rng.randint(0, 7)]
    body = [" " + l for l in ctx[:3]] + ["-" + old] + ["+" + l for l in new] + \
           [" " + l for l in ctx[3:]]
    return header + "\n" + "\n".join(body) + "\n"


def diff(rng, path, funcs):
    blob_a = "%07x" % rng.getrandbits(28)
    blob_b = "%07x" % rng.getrandbits(28)
    out = "diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n" % (
        path, path, blob_a, blob_b, path, path)
    for _ in range(rng.randint(1, 2)):
        out += hunk(rng, path, funcs)
    return out


class Gen:
    def __init__(self, seed, now):
        self.rng = random.Random(seed)
        self.now = now
        self.seq = 0
        self.out = {l: [] for l in LISTS}

    def mid(self, who):
        self.seq += 1
        return "<%d.%d-%d-%s>" % (20250000 + self.seq, self.rng.randint(1000, 9999),
                                  self.seq, who[1].split("@")[1].replace("@", "."))

    def message(self, lists, frm, to, cc, subject, date, mid, body, irt=None,
                refs=(), headers=(), encode_subject=False):
        h = []
        h.append("From: " + addr(self.rng, frm, True))
        h.append("To: " + ", ".join(addr(self.rng, p, True) for p in to))
        ccs = [LISTS[l] for l in lists] + [addr(self.rng, p, True) for p in cc]
        h.append("Cc: " + ",\n\t".join(ccs))
        if encode_subject and any(ord(c) > 127 for c in subject):
            subject = "=?UTF-8?B?" + base64.b64encode(subject.encode()).decode() + "?="
        h.append("Subject: " + subject)
        h.append("Date: " + email.utils.formatdate(date))
        h.append("Message-ID: " + mid)
        if irt:
            h.append("In-Reply-To: " + irt)
        if refs:
            h.append("References: " + "\n ".join(refs))
        h.append("MIME-Version: 1.0")
        h.extend(headers)
        return "\n".join(h) + "\n\n" + body

    def deliver(self, lists, raw, date, dup=False):
        for l in lists:
            rcv = "Received: from mail.example.org (mail.example.org [192.0.2.%d])\n" \
                  "\tby smtp.subspace.kernel.org (Postfix) with ESMTP id %X\n" \
                  "\tfor <%s>; %s\n" % (self.rng.randint(1, 254), self.rng.getrandbits(40),
                                         LISTS[l], email.utils.formatdate(date + 3))
            listid = "List-Id: <%s.vger.kernel.org>\n" % l
            self.out[l].append((date, (rcv + listid + raw).encode()))
            if dup:
                rcv2 = rcv.replace("smtp.subspace", "smtp2.subspace")
                self.out[l].append((date + 1, (rcv2 + listid + raw).encode()))

    def plain_body(self, text, qp=False):
        if qp or any(ord(c) > 127 for c in text):
            if qp:
                enc = quopri.encodestring(text.encode()).decode()
                return ("Content-Type: text/plain; charset=UTF-8",
                        "Content-Transfer-Encoding: quoted-printable"), enc
            return ("Content-Type: text/plain; charset=UTF-8",
                    "Content-Transfer-Encoding: 8bit"), text
        return ("Content-Type: text/plain; charset=us-ascii",
                "Content-Transfer-Encoding: 7bit"), text

    def thread(self, idx):
        rng = self.rng
        path, funcs, tag = rng.choice(SUBSYS)
        lists = ["linux-rtc"] if "rtc" in path else ["linux-watchdog"]
        if "floppy" in path:
            lists = [rng.choice(list(LISTS))]
        if rng.random() < 0.12:
            lists = list(LISTS)          # cross-post
        author = rng.choice(PEOPLE)
        maint = rng.choice([p for p in PEOPLE if p != author])
        n = rng.choice([1, 1, 2, 3, 4])
        date = self.now - rng.randint(0, 90 * 86400)
        verb = rng.choice(VERBS)
        topic = " ".join(rng.sample(WORDS, 2))
        version = rng.choice(["", "", "v2 ", "v3 "])
        msgs = []
        root = None
        refs = []
        if n > 1:
            mid = self.mid(author)
            subj = "[PATCH %s0/%d] %s: %s %s" % (version, n, tag, verb, topic)
            body = "Hi,\n\nThis series %s %s in %s.\n\n%s\n\n%s (%d):\n" % (
                verb, topic, path, paragraph(rng), author[0], n)
            for i in range(1, n + 1):
                body += "  %s: %s part %d\n" % (tag, verb, i)
            body += "\n %s | %d +++--\n -- \n2.47.0\n" % (path, rng.randint(3, 40))
            hdrs, body = self.plain_body(body)
            raw = self.message(lists, author, [maint], [], subj, date, mid, body,
                               headers=hdrs)
            self.deliver(lists, raw, date)
            root = mid
            refs = [mid]
        patches = []
        for i in range(1, n + 1):
            mid = self.mid(author)
            date += rng.randint(1, 5)
            num = "" if n == 1 else " %d/%d" % (i, n)
            subj = "[PATCH %s%s] %s: %s %s" % (version, num.strip() and num.strip(), tag, verb, topic) \
                if num else "[PATCH %s] %s: %s %s" % (version.strip() or "", tag, verb, topic)
            subj = subj.replace("[PATCH ]", "[PATCH]").replace("  ", " ")
            msg = "%s\n\n%s\n\nSigned-off-by: %s <%s>\n---\n" % (
                paragraph(rng), paragraph(rng, 2), author[0], author[1])
            msg += " %s | 3 ++-\n 1 file changed, 2 insertions(+), 1 deletion(-)\n\n" % path
            msg += diff(rng, path, funcs) + "-- \n2.47.0\n"
            hdrs, body = self.plain_body(msg, qp=rng.random() < 0.1)
            raw = self.message(lists, author, [maint], [rng.choice(PEOPLE)], subj, date,
                               mid, body, irt=root, refs=refs, headers=hdrs)
            self.deliver(lists, raw, date, dup=rng.random() < 0.06)
            patches.append((mid, subj, msg))
        # replies
        for _ in range(rng.randint(0, 3)):
            pmid, psubj, pmsg = rng.choice(patches)
            who = rng.choice(PEOPLE)
            date += rng.randint(600, 3 * 86400)
            mid = self.mid(who)
            quoted = "\n".join("> " + l for l in pmsg.splitlines()[:12])
            comment = rng.choice([
                "Looks good to me.\n\nReviewed-by: %s <%s>\n" % who,
                "This breaks the %s on my board, see below.\n" % rng.choice(WORDS),
                "Acked-by: %s <%s>\n" % who,
                "Applied, thanks.\n",
                "From the datasheet, the %s bit is sticky.\n>From here on it is fine.\n" % rng.choice(WORDS),
                "Grüße, I tested this on real hardware: the regression is gone.\n\n"
                "Tested-by: %s <%s>\n" % who])
            text = "On %s, %s wrote:\n%s\n\n%s" % (
                email.utils.formatdate(date - 600), psubj.split("]")[0] + "] author", quoted, comment)
            subj = "Re: " + psubj
            enc_subject = False
            if rng.random() < 0.15:
                subj += " — ümlauts"
                enc_subject = True
            irt_refs = refs + [pmid] if root else [pmid]
            if rng.random() < 0.2:
                # text plus a base64 attachment
                b = "b%016x" % rng.getrandbits(64)
                att = "CONFIG_RTC_DRV_PCF8563=y\nCONFIG_WATCHDOG_NOWAYOUT=y\n" + sentence(rng) + "\n"
                body = ("This is a multi-part message in MIME format.\n"
                        "--%s\nContent-Type: text/plain; charset=UTF-8\n"
                        "Content-Transfer-Encoding: quoted-printable\n\n%s\n"
                        "--%s\nContent-Type: application/octet-stream; name=\"config.txt\"\n"
                        "Content-Disposition: attachment; filename=\"config.txt\"\n"
                        "Content-Transfer-Encoding: base64\n\n%s\n--%s--\n") % (
                    b, quopri.encodestring(text.encode()).decode(), b,
                    base64.encodebytes(att.encode()).decode().strip(), b)
                hdrs = ('Content-Type: multipart/mixed; boundary="%s"' % b,)
            else:
                hdrs, body = self.plain_body(text, qp=rng.random() < 0.15)
            raw = self.message(lists, who, [author], [maint], subj, date, mid, body,
                               irt=pmid, refs=irt_refs, headers=hdrs,
                               encode_subject=enc_subject)
            self.deliver(lists, raw, date, dup=rng.random() < 0.05)


def main():
    args = sys.argv[1:]
    seed, n, now = 1, 60, int(time.time())
    while args and args[0].startswith("-"):
        o = args.pop(0)
        if o == "-s":
            seed = int(args.pop(0))
        elif o == "-n":
            n = int(args.pop(0))
        elif o == "-t":
            now = int(args.pop(0))
        else:
            sys.exit(__doc__)
    if len(args) != 1:
        sys.exit(__doc__)
    g = Gen(seed, now)
    for i in range(n):
        g.thread(i)
    for l, msgs in g.out.items():
        d = os.path.join(args[0], l)
        os.makedirs(d, exist_ok=True)
        msgs.sort(key=lambda m: m[0])
        for i, (_, raw) in enumerate(msgs):
            with open(os.path.join(d, "%05d.eml" % (i + 1)), "wb") as f:
                f.write(raw)


if __name__ == "__main__":
    main()

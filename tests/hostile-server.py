#!/usr/bin/env python3
"""hostile-server.py PORT [CERT KEY]

A deliberately bad public-inbox lookalike on 127.0.0.1:PORT for failure
tests.  The first path component picks the behaviour for POST /MODE/?q=..:
  ok      a valid gzip'd mboxrd answer with two messages
  404     no match
  500     an HTTP 500 error page
  plain   200 with a plain (not gzip) HTML body
  htmlgz  200 with a gzip'd HTML page (not an mbox)
  trunc   a valid answer cut off inside the gzip stream
  reset   half an answer, then the connection is reset
  stall   headers, then nothing (for 60 s at most)
  slow    one byte every 2 s (for 60 s at most)
  trickle 200, then 2 bytes a second of a never-ending answer (10 minutes)
  slow404 404, then a body of 2 bytes a second (10 minutes)
  503     503 with Retry-After: 5 (public-inbox's limiter queue is full)
  429     429 with no Retry-After
GET /_count/MODE answers how many POSTs MODE got; GET /_max/MODE the most
POSTs to MODE answered at once; GET /_ua the last User-Agent header a POST
carried.
  bomb    a From_ line followed by endless zeros (a gzip bomb)
  redirect  302 to another host
  biglen  a Content-Length of a terabyte, then the answer and a close
  bigmsg  a message of 2 MiB (above the tests' max_message) among good ones
  badfrom an mboxrd whose From_ escaping is broken (an unescaped "From ")
  nodate  messages without Message-ID or Date, or with absurd dates
  cronly  a valid gzip'd answer whose lines end in CR only (no LF at all)
  many    a fast endless stream of small distinct messages (up to a million)
  drip    ten messages, one every half second (about 5 s in all)
  huge    one 60 MB message (a patch of repeated lines, ~60 KB gzip'd)
          between two small ones
  parts   one 7 MB message of 200,000 MIME parts between two small ones
  hold*   the 'ok' answer after a second (to count searches at once;
          hold, hold1, ... count apart)
  500text 500 with a text/plain reason (as public-inbox refuses a query)
          and a BEL in it, then a second line
  500gz   500 with a gzip'd reason of 600 bytes after a blank line
  500pi   500 "Internal Server Error", as public-inbox-httpd answers a
          wildcard that expands to more than 100 terms
With CERT and KEY it speaks HTTPS.  Stops by itself after an hour (a safety net: the harness kills it)."""
import collections, gzip, http.server, socket, socketserver, struct, sys, threading, time, zlib

MSGS = [
    b"From: Alice <alice@example.org>\nTo: list@example.org\n"
    b"Subject: [PATCH] hostile: first\nDate: Mon, 02 Jun 2025 10:00:00 +0000\n"
    b"Message-ID: <hostile-1@example.org>\n\nfirst body\n",
    b"From: Bob <bob@example.org>\nTo: list@example.org\n"
    b"Subject: Re: [PATCH] hostile: first\nDate: Mon, 02 Jun 2025 11:00:00 +0000\n"
    b"Message-ID: <hostile-2@example.org>\nIn-Reply-To: <hostile-1@example.org>\n\n"
    b">From the start\nsecond body\n",
]


ODD = [
    b"From: nobody\nSubject: no id, no date\n\nbody one\n",
    b"From: x\nSubject: before the epoch\nDate: Mon, 1 Jan 1900 00:00:00 +0000\n"
    b"Message-ID: <old@example.org>\n\nbody two\n",
    b"From: x\nSubject: far future\nDate: Fri, 31 Dec 99999 23:59:59 +0000\n"
    b"Message-ID: <future@example.org>\n\nbody three\n",
    b"From: x\nSubject: garbage date\nDate: the day after tomorrow\n"
    b"Message-ID: <garbage@example.org>\n\nbody four\n",
    b"\n\nno headers at all\n",
]


def numbered(i, tag=b"many"):
    return (b"From: Gen <gen@example.org>\nTo: list@example.org\n"
            b"Subject: %s message %d\nDate: Mon, 02 Jun 2025 10:00:00 +0000\n"
            b"Message-ID: <%s-%d@example.org>\n\nbody %d\n" % (tag, i, tag, i, i))


def mboxrd(msgs=None):
    out = b""
    for m in msgs or MSGS:
        out += b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
        out += m.replace(b"\n>From", b"\n>>From") + b"\n"
    return out


COUNTS = collections.Counter()
ACTIVE = collections.Counter()
MAXACT = collections.Counter()
ACT_LOCK = threading.Lock()
LAST_UA = [b""]


def trickle(wfile, data):
    """data, 2 bytes a second, for 10 minutes at most"""
    for i in range(0, min(len(data), 1200), 2):
        wfile.write(data[i:i + 2])
        wfile.flush()
        time.sleep(1)


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up on us: that is the point

    def head(self, code, ctype="application/gzip", length=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Connection", "close")
        self.end_headers()

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts[0] == "_count" and len(parts) == 2:
            page = b"%d\n" % COUNTS[parts[1]]
        elif parts[0] == "_max" and len(parts) == 2:
            page = b"%d\n" % MAXACT[parts[1]]
        elif parts[0] == "_ua":
            page = LAST_UA[0] + b"\n"
        elif len(parts) == 3 and parts[2] == "t.mbox.gz":
            # a thread (MODE/<msgid>/t.mbox.gz) answers as a search would
            with ACT_LOCK:
                ACTIVE[parts[0]] += 1
                MAXACT[parts[0]] = max(MAXACT[parts[0]], ACTIVE[parts[0]])
            try:
                self.answer(parts[0])
            finally:
                with ACT_LOCK:
                    ACTIVE[parts[0]] -= 1
            return
        else:
            page = None
        if page is None:
            self.head(400, "text/plain", 0)
            return
        self.head(200, "text/plain", len(page))
        self.wfile.write(page)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        mode = self.path.strip("/").split("/")[0].split("?")[0]
        with ACT_LOCK:
            ACTIVE[mode] += 1
            MAXACT[mode] = max(MAXACT[mode], ACTIVE[mode])
        try:
            self.answer(mode)
        finally:
            with ACT_LOCK:
                ACTIVE[mode] -= 1

    def answer(self, mode):
        COUNTS[mode] += 1
        LAST_UA[0] = (self.headers.get("User-Agent") or "").encode()
        body = gzip.compress(mboxrd())
        if mode == "ok":
            self.head(200, length=len(body))
            self.wfile.write(body)
        elif mode == "404":
            page = b"<html>no match</html>"
            self.head(404, "text/html", len(page))
            self.wfile.write(page)
        elif mode == "500":
            page = b"<html>internal error</html>"
            self.head(500, "text/html", len(page))
            self.wfile.write(page)
        elif mode == "plain":
            page = b"<html><body>Service unavailable</body></html>\n"
            self.head(200, "text/html", len(page))
            self.wfile.write(page)
        elif mode == "htmlgz":
            page = gzip.compress(b"<html><body>Please log in</body></html>\n")
            self.head(200, length=len(page))
            self.wfile.write(page)
        elif mode == "trunc":
            self.head(200)
            self.wfile.write(body[:len(body) - 12])
            self.close_connection = True
        elif mode == "reset":
            self.head(200, length=len(body))
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
        elif mode == "stall":
            self.head(200)
            self.wfile.flush()
            time.sleep(60)
            self.close_connection = True
        elif mode == "slow":
            self.head(200)
            for i in range(30):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(2)
            self.close_connection = True
        elif mode == "trickle":
            self.head(200)
            big = mboxrd([MSGS[0] + b"x" * 4000 + b"\n"])
            trickle(self.wfile, gzip.compress(big, compresslevel=0))
            self.close_connection = True
        elif mode == "slow404":
            self.head(404, "text/html")
            trickle(self.wfile, b"<p>" * 1000)
            self.close_connection = True
        elif mode in ("503", "429"):
            page = b"<html>busy</html>"
            self.send_response(int(mode))
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            if mode == "503":
                self.send_header("Retry-After", "5")
            self.end_headers()
            self.wfile.write(page)
        elif mode == "bomb":
            self.head(200)
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            self.wfile.write(z.compress(b"From mboxrd@z Thu Jan  1 00:00:00 1970\nSubject: x\n\n"))
            zeros = b"0" * (1 << 20)
            try:
                for _ in range(4096):   # 4 GiB inflated, a few MiB sent
                    self.wfile.write(z.compress(zeros))
                self.wfile.write(z.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode == "biglen":
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(10 ** 12))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
        elif mode == "bigmsg":
            big = (b"From: big\nSubject: huge\nMessage-ID: <big@example.org>\n\n" +
                   (b"x" * 80 + b"\n") * ((2 << 20) // 81))
            page = gzip.compress(mboxrd([MSGS[0], big, MSGS[1]]))
            self.head(200, length=len(page))
            self.wfile.write(page)
        elif mode == "badfrom":
            raw = (b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + MSGS[0] +
                   b"\nFrom someone@example.org Mon Jun  2 10:00:00 2025\nmore\n\n" +
                   b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + MSGS[1] + b"\n")
            page = gzip.compress(raw)
            self.head(200, length=len(page))
            self.wfile.write(page)
        elif mode == "cronly":
            page = gzip.compress(mboxrd().replace(b"\n", b"\r"))
            self.head(200, length=len(page))
            self.wfile.write(page)
        elif mode == "nodate":
            page = gzip.compress(mboxrd(ODD))
            self.head(200, length=len(page))
            self.wfile.write(page)
        elif mode == "many":
            self.head(200)
            z = zlib.compressobj(6, zlib.DEFLATED, 31)
            try:
                for k in range(1000):
                    self.wfile.write(z.compress(mboxrd(
                        [numbered(k * 1000 + i) for i in range(1000)])) +
                        z.flush(zlib.Z_SYNC_FLUSH))
                self.wfile.write(z.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode == "drip":
            self.head(200)
            z = zlib.compressobj(6, zlib.DEFLATED, 31)
            try:
                for i in range(10):
                    self.wfile.write(z.compress(mboxrd([numbered(i, b"trickle")])) +
                                     z.flush(zlib.Z_SYNC_FLUSH))
                    self.wfile.flush()
                    time.sleep(0.5)
                self.wfile.write(z.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode.startswith("hold"):
            time.sleep(1)
            self.head(200, length=len(body))
            self.wfile.write(body)
        elif mode == "huge":
            self.head(200)
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            try:
                self.wfile.write(z.compress(mboxrd([MSGS[0]])))
                self.wfile.write(z.compress(
                    b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
                    b"From: big\nSubject: [PATCH] huge\nDate: Mon, 02 Jun 2025 12:00:00 +0000\n"
                    b"Message-ID: <huge@example.org>\n\n"
                    b"diff --git a/big.c b/big.c\n--- a/big.c\n+++ b/big.c\n@@ -1 +1,750000 @@\n"))
                line = b"+ int hostile_huge_line = 42;  /* padding */\n" * 1000
                for _ in range(60000000 // len(line)):
                    self.wfile.write(z.compress(line))
                self.wfile.write(z.compress(b"\n" + mboxrd([MSGS[1]])))
                self.wfile.write(z.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode == "parts":
            self.head(200)
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            try:
                self.wfile.write(z.compress(mboxrd([MSGS[0]])))
                self.wfile.write(z.compress(
                    b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
                    b"From: parts\nSubject: many parts\nDate: Mon, 02 Jun 2025 12:00:00 +0000\n"
                    b"Message-ID: <parts@example.org>\nMIME-Version: 1.0\n"
                    b"Content-Type: multipart/mixed; boundary=b\n\n"))
                part = b"--b\nContent-Type: text/plain\n\nx\n" * 1000
                for _ in range(200):
                    self.wfile.write(z.compress(part))
                self.wfile.write(z.compress(b"--b--\n\n" + mboxrd([MSGS[1]])))
                self.wfile.write(z.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://192.0.2.1/all/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "500text":
            # public-inbox's reason for refusing a query, first line kept
            page = (b"Wildcard Sa* expands to more than 100 terms\x07\n"
                    b"second line, not shown\n")
            self.head(500, "text/plain", len(page))
            self.wfile.write(page)
        elif mode == "500pi":
            # public-inbox-httpd when the search dies (a wildcard of more
            # than 100 terms): Plack's page, the status line again
            page = b"Internal Server Error"
            self.head(500, "text/plain", len(page))
            self.wfile.write(page)
        elif mode == "500gz":
            page = gzip.compress(b"\n  Query too complex: " + b"x" * 600 + b"\n")
            self.head(500, "application/gzip", len(page))
            self.wfile.write(page)
        else:
            self.head(400, "text/plain", 0)


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    srv = S(("127.0.0.1", int(sys.argv[1])), H)
    if len(sys.argv) == 4:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    # a safety net only (the harness kills it at exit): longer than any
    # one test script runs on a loaded machine
    threading.Timer(3600, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()

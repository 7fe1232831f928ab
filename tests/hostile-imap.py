#!/usr/bin/env python3
"""A hostile IMAP server on 127.0.0.1 for the tests: just enough IMAP4rev1
for libcurl's delivery (CAPABILITY, LOGIN, LIST, CREATE, EXAMINE, APPEND,
UID SEARCH, UID STORE, LOGOUT), and one way of going wrong:

  hostile-imap.py PORT MODE LOG
    stall-append    reads an APPEND's literal whole, then never answers
    stall-logout    answers everything but LOGOUT
    slash           a server whose hierarchy separator is '/'
    refuse          refuses the 3rd APPEND at its command line (NO before
                    the continuation), takes the others
    refuse-plus     offers LITERAL+ and refuses the 3rd APPEND after its
                    literal; logs "PIPELINED" for an APPEND whose literal was
                    followed by the next command before its answer went

Each connection's command lines go to LOG as they came ("APPEND-LITERAL"
once an APPEND's literal has been read whole), so a test can wait for the state
it wants.  It stops by itself after an hour; the test kills it at exit.
"""
import select
import socket
import sys
import threading
import time

port, mode, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
appends = [0]   # APPENDs seen, all connections
folders = set() # made by CREATE ("name", quoted as sent)
STALL = 3600


def note(line):
    with lock:
        with open(log, "a") as f:
            f.write(line + "\n")


class Reader:
    """Buffered reads of the connection that can tell what is waiting
    (the client's next command, sent before this one's answer)."""

    def __init__(self, conn):
        self.conn, self.buf = conn, b""

    def _more(self):
        data = self.conn.recv(65536)
        self.buf += data
        return bool(data)

    def readline(self):
        while b"\n" not in self.buf:
            if not self._more():
                line, self.buf = self.buf, b""
                return line
        i = self.buf.index(b"\n") + 1
        line, self.buf = self.buf[:i], self.buf[i:]
        return line

    def read(self, n):
        while len(self.buf) < n and self._more():
            pass
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def waiting(self, secs):
        return bool(self.buf) or bool(select.select([self.conn], [], [], secs)[0])


def serve(conn):
    f = Reader(conn)
    out = conn.makefile("wb")

    def say(s):
        out.write(s.encode() + b"\r\n")
        out.flush()

    caps = "IMAP4rev1 UIDPLUS" + (" LITERAL+" if mode == "refuse-plus" else "")
    say("* OK [CAPABILITY %s] hostile ready" % caps)
    uid = 0
    sep = "/" if mode == "slash" else "."
    while True:
        line = f.readline()
        if not line:
            return
        text = line.decode("latin-1").rstrip("\r\n")
        tag, _, rest = text.partition(" ")
        cmd = rest.split(" ", 1)[0].upper()
        note(text)
        if cmd == "CAPABILITY":
            say("* CAPABILITY " + caps)
            say(tag + " OK done")
        elif cmd == "AUTHENTICATE":
            if not rest.upper().startswith("AUTHENTICATE PLAIN "):
                say("+")
                f.readline()
            say(tag + " OK logged in")
        elif cmd == "LOGIN":
            say(tag + " OK logged in")
        elif cmd == "LIST":
            if rest.endswith('"" ""'):
                say('* LIST (\\Noselect) "%s" ""' % sep)
            elif rest.split(" ", 2)[-1] in folders:
                say('* LIST () "%s" %s' % (sep, rest.split(" ", 2)[-1]))
            say(tag + " OK done")
        elif cmd == "CREATE":
            folders.add(rest.split(" ", 1)[1])
            say(tag + " OK created")
        elif cmd in ("EXAMINE", "SELECT"):
            say("* 0 EXISTS")
            say("* OK [UIDVALIDITY 7] ok")
            say(tag + " OK [READ-ONLY] done")
        elif cmd == "APPEND":
            n = int(text[text.rindex("{") + 1:].rstrip("}+"))
            appends[0] += 1
            if mode == "refuse" and appends[0] == 3:
                note("APPEND-REFUSED")
                say(tag + " NO [TOOBIG] refused before its literal")
                continue
            if not text.endswith("+}"):
                say("+ go ahead")
            got = 0
            while got < n:
                chunk = f.read(min(65536, n - got))
                if not chunk:
                    return
                got += len(chunk)
            f.readline()            # the CRLF that ends the command
            note("APPEND-LITERAL")
            if mode == "stall-append":
                time.sleep(STALL)
                return
            if mode == "refuse-plus":
                # the client's next command already sent, before this answer
                if f.waiting(0.5):
                    note("PIPELINED")
                if appends[0] == 3:
                    note("APPEND-REFUSED")
                    say(tag + " NO [TOOBIG] refused after its literal")
                    continue
            uid += 1
            say(tag + " OK [APPENDUID 7 %d] done" % uid)
        elif cmd == "UID":
            say(tag + " OK done")
        elif cmd == "LOGOUT":
            if mode == "stall-logout":
                time.sleep(STALL)
                return
            say("* BYE")
            say(tag + " OK bye")
            return
        else:
            say(tag + " OK done")


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
deadline = time.time() + STALL
srv.settimeout(1)
while time.time() < deadline:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(c,), daemon=True).start()

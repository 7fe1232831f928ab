#!/usr/bin/env bash
# The user's state is sacred: flags, hides and mbsync's ,U= of a message
# that leaves a view (a limit, a full search that no longer finds it) come
# back with it; an empty answer to a full search does not empty a view
# until a later one agrees; rm -rf VIEW removes the view as rmdir does;
# .unhide brings back unlinked messages; rmdir during a refresh stops it and
# leaves nothing behind (leifs --check counts orphans and wrong counts).
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'

# A public-inbox in front of the real one that can be told, through the
# file $TRASH/flip, to answer every search with a 404 ("empty") or to
# send the real answer slowly ("slow": 2 KiB every 0.2 s).
FLIP_PORT=$(free_port)
cat >"$TRASH/flip.py" <<'EOF'
import http.server, socketserver, sys, time, urllib.request, urllib.error
port, upstream, modefile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        try:
            mode = open(modefile).read().strip()
        except OSError:
            mode = "ok"
        path = self.path.split("/", 2)[2] if self.path.count("/") >= 2 else ""
        if mode == "empty":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        try:
            r = urllib.request.urlopen(urllib.request.Request(
                upstream + path, data=body, method="POST"), timeout=30)
            code, data = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, data = e.code, e.read()
        self.send_response(code)
        self.send_header("Content-Type", "application/gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if mode != "slow":
            self.wfile.write(data)
            return
        try:
            for i in range(0, len(data), 2048):
                self.wfile.write(data[i:i + 2048])
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass    # the client went: what rmdir must make it do
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
S(("127.0.0.1", port), H).serve_forever()
EOF
echo ok >"$TRASH/flip"
python3 "$TRASH/flip.py" "$FLIP_PORT" "$PI_URL" "$TRASH/flip" &
test_atexit "kill $! 2>/dev/null"
FLIP="http://127.0.0.1:$FLIP_PORT/all/"

M="$TRASH/mnt"
test_expect_success 'leifs mounts' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" \"${FLIP}?q=x&x=m\"" &&
	leifs_mount "$M" -o "source=$FLIP,cache=$TRASH/cache,timeout=10,refresh=3600,empty_confirm=8"
'
status() { sed -n "s/^$2: //p" "$1/.status"; }
settle() {
	test_wait_for 30 "[ \"\$(status \"$1\" state)\" = fresh ] && [ \"\$(status \"$1\" last-refresh)\" != \"${2:-never}\" ]" ||
		{ cat "$1/.status"; return 1; }
}
# start a search of view $1 with $2 written to its .refresh, wait for it:
# a read of .refresh waits for a search begun after it (a search that
# began before the write, a listing's or the timer's, would satisfy a
# wait on .status alone, and it is not the full one asked for)
search() {
	local last
	last=$(status "$1" last-refresh)
	past_second "$last"
	echo "$2" >"$1/.refresh" && cat "$1/.refresh" >/dev/null && settle "$1" "$last"
}
set_config() {
	local v=$1 last
	last=$(status "$v" last-refresh)
	past_second "$last"
	cat >"$v/.config" && settle "$v" "$last"
}
# wait until the cache holds no view and no message (a removed view's
# messages go in the background)
emptied() {
	test_wait_for 10 "leifs --check \"$TRASH/cache\" 2>/dev/null | grep -q \"^0 views, 0 messages\""
}
names() { (cd "$1" && ls cur new | grep leifs | sort); }

V="$M/queries/s:rtc"
test_expect_success 'a view with read, flagged, tagged and hidden mail' '
	mkdir "$V" && ls "$V/cur" >/dev/null && settle "$V" &&
	ls "$V/cur" | sort >all && [ "$(wc -l <all)" -gt 12 ] &&
	a=$(sed -n 1p all) b=$(sed -n 2p all) c=$(sed -n 3p all) d=$(sed -n 4p all) &&
	mv "$V/cur/$a" "$V/cur/${a}S" &&
	mv "$V/cur/$b" "$V/cur/${b}FS" &&
	mv "$V/cur/$c" "$V/cur/${c%:2,},U=7:2,S" &&
	rm "$V/cur/$d" &&
	names "$V" >before && ! grep -q "${d%%:*}" before
'
test_expect_success 'limit = 5, then limit = 0: every message comes back as it was left' '
	printf "[leifs]\n\tlimit = 5\n" | set_config "$V" &&
	[ "$(names "$V" | wc -l)" -eq 5 ] &&
	! names "$V" | grep -q "${a%%:*}" &&
	printf "[leifs]\n\tlimit = 0\n" | set_config "$V" &&
	names "$V" >after && test_cmp before after &&
	[ -z "$(ls "$V/new")" ]
'
test_expect_success 'leifs --check finds the cache whole' '
	leifs --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ]
'
test_expect_success 'an empty answer to a full search keeps the view (held, said in .status)' '
	echo empty >"$TRASH/flip" &&
	search "$V" full &&
	names "$V" >now && { test_cmp before now || { cat "$V/.status"; tail -n 5 "$TRASH/leifs.log"; false; }; } &&
	status "$V" held | grep "found nothing at a source; $(wc -l <before) messages stay"
'
test_expect_success 'a second empty answer, soon after, keeps it too' '
	search "$V" full && names "$V" >now && test_cmp before now
'
test_expect_success 'an empty answer the empty_confirm later empties it' '
	sleep 8 && search "$V" full &&
	[ -z "$(names "$V")" ] && ! grep -q "^held:" "$V/.status"
'
test_expect_success 'when the mail comes back, so do its flags, tags and hides' '
	echo ok >"$TRASH/flip" && search "$V" full &&
	names "$V" >after && test_cmp before after
'
test_expect_success 'a full answer clears the hold' '
	echo empty >"$TRASH/flip" && search "$V" full && grep -q "^held:" "$V/.status" &&
	echo ok >"$TRASH/flip" && search "$V" full && ! grep -q "^held:" "$V/.status" &&
	names "$V" >now && test_cmp before now
'

W="$M/queries/s:rtc OR s:watchdog"
WD="http://127.0.0.1:$PI_PORT/linux-watchdog/"
test_expect_success 'one of two sources answering nothing holds its share too' '
	mkdir "$W" && ls "$W/cur" >/dev/null && settle "$W" &&
	printf "[leifs]\n\tsource = %s\n\tsource = %s\n" "$FLIP" "$WD" | set_config "$W" &&
	names "$W" >wboth && grep -l "^Subject:.*rtc" "$W"/cur/* >/dev/null &&
	echo empty >"$TRASH/flip" && search "$W" full &&
	names "$W" >now && test_cmp wboth now && grep -q "^held:" "$W/.status" &&
	sleep 8 && search "$W" full && ! grep -q "^held:" "$W/.status" &&
	[ "$(names "$W" | wc -l)" -lt "$(wc -l <wboth)" ] &&
	echo ok >"$TRASH/flip" && search "$W" full &&
	# a cross-post may come back as the copy of the other list (content dedupe
	# keeps the first to arrive, as lei does): count them
	[ "$(names "$W" | wc -l)" -eq "$(wc -l <wboth)" ] &&
	rmdir "$W"
'
X="$M/queries/f:belloni"
test_expect_success 'a source with no match beside one with mail holds nothing' '
	echo empty >"$TRASH/flip" && mkdir "$X" && ls "$X/cur" >/dev/null && settle "$X" &&
	printf "[leifs]\n\tsource = %s\n\tsource = %s\n" "$PI_URL" "$FLIP" | set_config "$X" &&
	names "$X" >xa && [ -s xa ] &&
	! grep -q "^held:" "$X/.status" &&
	search "$X" full && ! grep -q "^held:" "$X/.status" && names "$X" >xb && test_cmp xa xb &&
	echo ok >"$TRASH/flip" && rmdir "$X"
'
test_expect_success 'a search cut short by unmount leaves the view as its last whole search did' '
	last=$(status "$V" last-refresh) &&
	echo slow >"$TRASH/flip" && echo full >"$V/.refresh" &&
	test_wait_for 20 "grep -q \"^progress: [1-9]\" \"$V/.status\"" &&
	leifs_umount "$M" && echo ok >"$TRASH/flip" &&
	leifs_mount "$M" -o "source=$FLIP,cache=$TRASH/cache,timeout=10,refresh=3600,empty_confirm=8" &&
	grep "^state: fresh$" "$V/.status" && [ "$(status "$V" last-refresh)" = "$last" ] &&
	names "$V" >now && test_cmp before now
'
test_expect_success '.unhide lists unlinked messages and brings them back' '
	id=$(echo "$d" | cut -d. -f2) &&
	echo "$id" >expect && test_cmp expect "$V/.unhide" &&
	e=$(sed -n 5p all) && rm "$V/cur/$e" &&
	echo "$e" >"$V/.unhide" && [ -e "$V/cur/$e" ] &&
	! sh -c "echo nonsense >\"$V/.unhide\"" 2>/dev/null &&
	grep -q "^refused: .unhide: not" "$V/.status" &&
	echo all >"$V/.unhide" && [ -e "$V/cur/$d" ] && [ -z "$(cat "$V/.unhide")" ]
'
test_expect_success 'rm -rf VIEW removes the view and says so' '
	rm -rf "$V" && [ ! -e "$V" ] && ! ls "$M/queries" | grep -q "^s:rtc$"
'
test_expect_success 'made again, the view is whole: nothing hidden, only the shared flags kept' '
	mkdir "$V" && ls "$V/cur" >/dev/null && settle "$V" &&
	ls "$V/cur" | sed "s/:2,.*//" | sort >again && sed "s/:2,.*//" all | sort >expect &&
	test_cmp expect again && ! ls "$V/cur" | grep -q ":2,.*[^FRST]"
'
test_expect_success 'rm -rf of a view leaves no orphans' '
	rm -rf "$V" && leifs --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ] &&
	grep -q "^0 views, 0 messages" check.out
'
test_expect_success 'rmdir during a slow first fill stops it and leaves nothing' '
	echo slow >"$TRASH/flip" && mkdir "$V" &&
	{ ls "$V/cur" >/dev/null 2>&1 & } &&
	test_wait_for 20 "grep -q \"^progress: [1-9]\" \"$V/.status\"" &&
	rmdir "$V" && emptied &&
	leifs --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ] &&
	grep -q "^0 views, 0 messages" check.out
'
test_expect_success 'mkdir and rmdir racing from 8 shells leave a whole cache' '
	echo ok >"$TRASH/flip" && pids="" &&
	for s in 1 2 3 4 5 6 7 8; do
		(for i in 1 2 3 4 5 6; do
			mkdir "$M/queries/s:rtc" 2>/dev/null
			ls "$M/queries/s:rtc/cur" >/dev/null 2>&1
			touch "$M/queries/s:rtc/.uidvalidity" 2>/dev/null
			rmdir "$M/queries/s:rtc" 2>/dev/null
			mkdir "$M/queries/f:belloni" 2>/dev/null
			rmdir "$M/queries/f:belloni" 2>/dev/null
		done) &
		pids="$pids $!"
	done; wait $pids &&
	rmdir "$M/queries/s:rtc" "$M/queries/f:belloni" 2>/dev/null
	emptied &&
	leifs --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ] &&
	grep -q "^0 views, 0 messages" check.out
'
test_done

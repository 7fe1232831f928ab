#!/usr/bin/env bash
# Crash safety: SIGKILL the daemon at random points of refreshes and first
# fills, 20 times.  After each kill the cache opens as it is (no recovery
# step), every view lists, every file's bytes hash to its name, nothing a
# finished refresh stored is gone; at the end a refresh completes the view.
# Then SIGTERM and unmount: the daemon is gone within 2 s during a fast
# stream, a stalled or trickling server, two refreshes, a local import, and
# leifs --check finds the cache whole.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
OPTS="-o source=$PI_URL,cache=$TRASH/cache,timeout=20,refresh=0"
A="$M/queries/s:rtc OR s:watchdog OR s:wdt"
B="$M/queries/s:PATCH"
test_expect_success 'two large views fill' '
	leifs_mount "$M" $OPTS && mkdir "$A" "$B" &&
	[ "$(ls "$A/cur" | wc -l)" -gt 300 ] && [ "$(ls "$B/cur" | wc -l)" -gt 300 ]
'

# oids of a view's files, each checked against its bytes
view_oids() {
	find "$1/cur" "$1/new" -type f >paths || return 1
	git hash-object --stdin-paths <paths >hashes || return 1
	sed "s|.*/[0-9]*\.\([0-9a-f]*\)\.leifs.*|\1|" paths >names &&
	if ! cmp -s hashes names; then
		paste hashes names | awk "\$1 != \$2" | head -3
		return 1
	fi
	sort hashes
}
view_oids "$A" >stored-A
kill_daemon() {
	kill -9 "$(cat "$M.pid")" 2>/dev/null
	fusermount3 -u -z "$M" 2>/dev/null
	wait "$(cat "$M.pid")" 2>/dev/null
	rm -f "$M.pid"
}

RANDOM=42
for i in $(seq 1 20); do
	case $((i % 4)) in
	0) what="full refresh of A"; act() { echo full >"$A/.refresh"; } ;;
	1) what="first fill of a new view"; act() { mkdir "$M/queries/s:rtc AND s:v$i" 2>/dev/null; ls "$M/queries/s:rtc AND s:v$i/cur" >/dev/null 2>&1 & } ;;
	2) what="full refresh of B"; act() { echo full >"$B/.refresh"; } ;;
	3) what=".query rewrite of B"; act() { echo "s:PATCH AND NOT s:nosuchword$i" >"$B/.query"; } ;;
	esac
	delay=$(printf '0.%03d' $((RANDOM % 200)))
	test_expect_success "kill -9 $i/20 during a $what (after ${delay}s): nothing lost or torn" '
		act && sleep "$delay" &&
		{ cat "$A/.status" "$B/.status" | grep -q "^state: refreshing" && echo "$i" >>mid || :; } &&
		kill_daemon &&
		leifs_mount "$M" $OPTS &&
		ls "$M/queries" >views && [ "$(wc -l <views)" -ge 2 ] &&
		while read -r v; do
			ls "$M/queries/$v/cur" "$M/queries/$v/new" >/dev/null || return 1
			view_oids "$M/queries/$v" >/dev/null || { echo "torn: $v"; return 1; }
		done <views &&
		view_oids "$A" >now-A && comm -23 stored-A now-A >lost && [ ! -s lost ]
	'
done
say "# $(cat mid 2>/dev/null | wc -l) of the 20 kills hit a view mid-refresh"
test_expect_success 'after the last kill, a refresh completes each view' '
	for v in "$A" "$B"; do
		echo full >"$v/.refresh" &&
		test_wait_for 30 "grep -q \"^state: fresh\" \"$v/.status\" && ! grep -q \"^progress:\" \"$v/.status\"" || return 1
	done &&
	q=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote_plus(sys.argv[1]))" "$(cat "$B/.query")") &&
	curl -fsS -d "" "${PI_URL}?q=$q&x=m" | gzip -dc | grep -c "^From mboxrd@z" >expect &&
	find "$B/cur" "$B/new" -type f | wc -l >actual && test_cmp expect actual &&
	view_oids "$A" >now-A && test_cmp stored-A now-A
'
# SIGTERM (or an unmount) ends the daemon within 2 s whatever its searches
# are doing, and what they stored stays whole (leifs --check)
hostile_start
test_wait_for 10 "curl -s -o /dev/null -d '' '$H/ok/?q=x'"
M2="$TRASH/mnt2"
# term_ends MNT [umount]: SIGTERM the daemon of MNT (or unmount MNT); it
# must be gone within 2 s
term_ends() {
	local pid i=0
	pid=$(cat "$1.pid")
	if [ "${2:-}" = umount ]; then fusermount3 -u "$1"; else kill -TERM "$pid"; fi
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 20 ]; then
			echo "still running 2 s after the ${2:-SIGTERM}"
			kill -9 "$pid"
			fusermount3 -u -z "$1"
			wait "$pid"
			rm -f "$1.pid"
			return 1
		fi
		sleep 0.1
	done
	fusermount3 -u -z "$1" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$1.pid"
}
for mode in many stall slow; do
	case $mode in
	many) what="a fast endless stream" ;;
	stall) what="a stalled server" ;;
	slow) what="a server sending a byte every 2 s" ;;
	esac
	test_expect_success "SIGTERM during a first fill from $what: gone within 2 s, cache whole" '
		leifs_mount "$M2" -o source=$H/$mode/,cache=$TRASH/c-$mode,timeout=60,first_wait=60,refresh=0 &&
		mkdir "$M2/queries/s:x" && { ls "$M2/queries/s:x/cur" >/dev/null 2>&1 & } &&
		sleep 1 && grep "^state: refreshing" "$M2/queries/s:x/.status" &&
		term_ends "$M2" && leifs --check "$TRASH/c-$mode" >check || { cat check; return 1; }
	'
done
test_expect_success 'SIGTERM during two refreshes from a fast stream: gone within 2 s' '
	leifs_mount "$M2" -o source=$H/many/,cache=$TRASH/c-two,timeout=60,refresh=0 &&
	mkdir "$M2/queries/s:x" "$M2/queries/s:y" &&
	echo >"$M2/queries/s:x/.refresh" && echo >"$M2/queries/s:y/.refresh" &&
	test_wait_for 20 "grep -q \"^progress: [1-9][0-9][0-9][0-9]\" \"$M2/queries/s:y/.status\"" &&
	term_ends "$M2" && leifs --check "$TRASH/c-two" >check || { cat check; return 1; }
'
test_expect_success 'an unmount during a refresh from a fast stream: gone within 2 s' '
	leifs_mount "$M2" -o source=$H/many/,cache=$TRASH/c-umount,timeout=60,refresh=0 &&
	mkdir "$M2/queries/s:x" && echo >"$M2/queries/s:x/.refresh" &&
	test_wait_for 20 "grep -q \"^progress: [1-9][0-9][0-9][0-9]\" \"$M2/queries/s:x/.status\"" &&
	term_ends "$M2" umount && leifs --check "$TRASH/c-umount" >check || { cat check; return 1; }
'
test_expect_success 'SIGTERM during a local archive import: gone within 2 s' '
	python3 -c "
import sys
w = sys.stdout.buffer.write
for i in range(300000):
    w(b\"From gen@example.org Mon Jun  2 10:00:00 2025\nFrom: Gen <gen@example.org>\nSubject: big %d\nDate: Mon, 02 Jun 2025 10:00:00 +0000\nMessage-ID: <big-%d@example.org>\n\nbody %d\n\n\" % (i, i, i))
" >big.mbox &&
	leifs_mount "$M2" -o source=$TRASH/big.mbox,cache=$TRASH/c-local,timeout=60,refresh=0 &&
	mkdir "$M2/queries/s:big" && echo >"$M2/queries/s:big/.refresh" &&
	test_wait_for 20 "grep -q \"^progress: [1-9][0-9][0-9][0-9]\" \"$M2/queries/s:big/.status\"" &&
	term_ends "$M2" && leifs --check "$TRASH/c-local" >check || { cat check; return 1; }
'
test_expect_success 'the daemon log has no sanitizer report or LMDB complaint' '
	! grep -i -E "MDB_|corrupt|panic" "$TRASH/leifs.log"
'
test_done

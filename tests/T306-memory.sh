#!/usr/bin/env bash
# Memory is bounded by settings, not by the input (#15): a 60 MB message
# (60 KB on the wire) or one of 200,000 MIME parts keeps the daemon's peak
# RSS within 64 MiB + 2 x max_message, however many views take it at once,
# and the idle daemon returns to its baseline.  The messages themselves are
# kept whole.  Sanitizer builds are checked for correctness only (their
# allocator keeps freed memory in quarantine).
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
C="$TRASH/cache"
MAXMSG=$((64 << 20))
PEAK_MAX=$(((64 << 10) + 2 * (MAXMSG >> 10)))  # kB
IDLE_MAX=$((64 << 10))                          # kB
SAN=
grep -q fsanitize "$SRC_DIR/BUILD-FLAGS" 2>/dev/null && SAN=1

pid_of() { cat "$M.pid"; }
kb() { awk "/^$1:/ {print \$2}" "/proc/$(pid_of)/status"; }
# peak and idle RSS of the daemon within the bounds (not for sanitizer builds)
# (idle: the memory the daemon holds, RssAnon, within 60 s of the end of
# the background indexing of the new mail; file-backed pages, the cache's
# map and the libraries, are the kernel's to reclaim)
rss_ok() {
	local peak idle
	# idle: the background indexer is done with the new mail (on a
	# loaded machine four 60 MB messages take it minutes), then a moment
	test_wait_for 600 "grep -q \"^index-remote: on, 0 messages queued\" \"$M/queries/.status\"" ||
		echo "the indexer was still busy"
	[ -n "$SAN" ] || test_wait_for 60 "[ \$(kb RssAnon) -le $IDLE_MAX ]"
	peak=$(kb VmHWM)
	idle=$(kb RssAnon)
	echo "$1: peak RSS $peak kB (bound $PEAK_MAX), idle anon $idle kB (bound $IDLE_MAX), VmRSS $(kb VmRSS) kB" | tee -a "$TRASH/peaks"
	[ -n "$SAN" ] && return 0
	[ "$peak" -le "$PEAK_MAX" ] && [ "$idle" -le "$IDLE_MAX" ]
}
# wait until no view of the mount is refreshing
settled() {
	test_wait_for 120 "! grep -q \"^state: refreshing\" \"$M\"/queries/*/.status"
}

test_expect_success 'the hostile server answers' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/ok/"
'

test_expect_success 'a 60 MB message is kept whole, within the memory bound' '
	leifs_mount "$M" -o "source=$H/huge/,cache=$C-huge,timeout=60,refresh=3600,max_message=$MAXMSG" &&
	mkdir "$M/queries/s:huge" &&
	ls "$M/queries/s:huge/cur" >names &&
	settled &&
	ls "$M/queries/s:huge/cur" >names &&
	[ "$(wc -l <names)" -eq 3 ] &&
	big=$(ls -S "$M/queries/s:huge/cur" | head -1) &&
	[ "$(stat -c %s "$M/queries/s:huge/cur/$big")" -gt 59000000 ] &&
	check_oids "$M/queries/s:huge/cur/$big" &&
	rss_ok "one view"
'
leifs_umount "$M"

test_expect_success 'four views taking it at once stay within the same bound' '
	leifs_mount "$M" -o "source=$H/huge/,cache=$C-huge4,timeout=120,refresh=3600,max_message=$MAXMSG" &&
	for i in 1 2 3 4; do mkdir "$M/queries/s:huge$i" || return 1; done &&
	pids= &&
	for i in 1 2 3 4; do ls "$M/queries/s:huge$i/cur" >/dev/null & pids="$pids $!"; done &&
	wait $pids &&
	settled &&
	for i in 1 2 3 4; do
		[ "$(ls "$M/queries/s:huge$i/cur" | wc -l)" -eq 3 ] || return 1
		grep "^state: fresh" "$M/queries/s:huge$i/.status" || return 1
	done &&
	rss_ok "four views"
'
leifs_umount "$M"

test_expect_success 'a message of 200,000 MIME parts is kept, within the bound' '
	leifs_mount "$M" -o "source=$H/parts/,cache=$C-parts,timeout=60,refresh=3600,max_message=$MAXMSG" &&
	mkdir "$M/queries/s:parts" &&
	ls "$M/queries/s:parts/cur" >/dev/null &&
	settled &&
	[ "$(ls "$M/queries/s:parts/cur" | wc -l)" -eq 3 ] &&
	grep "^state: fresh" "$M/queries/s:parts/.status" &&
	big=$(ls -S "$M/queries/s:parts/cur" | head -1) &&
	check_oids "$M/queries/s:parts/cur/$big" &&
	grep -c "^--b$" "$M/queries/s:parts/cur/$big" >n && [ "$(cat n)" -eq 200000 ] &&
	rss_ok "200,000 parts"
'
leifs_umount "$M"

test_expect_success 'the daemon log has no crash' '
	! grep -i -E "sanitizer|segv|abort" "$TRASH/leifs.log"
'
test_done

#!/usr/bin/env bash
# Bad servers and bad answers: a listing never waits past the timeout, the
# view keeps what it had, .status names the problem, the daemon survives.
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
C="$TRASH/cache"
Q="s:hostile"

test_expect_success 'a good answer fills the view' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/ok/" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$C,timeout=3" &&
	mkdir "$M/queries/$Q" && ls "$M/queries/$Q/cur" >before && [ "$(wc -l <before)" -eq 2 ] &&
	check_oids "$M/queries/$Q"/cur/* &&
	grep -q "^>From the start" "$M/queries/$Q"/cur/*
'
leifs_umount "$M"

# memory stays bounded whatever the server sends (sanitizers need more)
RSS_MAX=$((128 * 1024))
grep -q fsanitize "$SRC_DIR/BUILD-FLAGS" 2>/dev/null && RSS_MAX=$((768 * 1024))

# mode, then what .status must say
while read -r mode why; do
	test_expect_success "$mode: the view keeps its messages, .status says why" '
		leifs_mount "$M" -o "source=$H/$mode/,cache=$C,timeout=3,refresh=0,max_message=1048576" &&
		start=$(date +%s) &&
		timeout 10 ls "$M/queries/$Q/cur" >actual && test_cmp before actual &&
		test_wait_for 15 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\" &&
			grep -q -i \"^error: .*$why\" \"$M/queries/$Q/.status\"" &&
		mkdir "$M/queries/s:new-$mode" &&
		timeout 10 ls "$M/queries/s:new-$mode/cur" >/dev/null &&
		[ $(($(date +%s) - start)) -le 9 ] &&
		test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:new-$mode/.status\"" &&
		check_oids "$M/queries/s:new-$mode"/cur/* &&
		ls "$M/queries/$Q/cur" >actual && test_cmp before actual &&
		check_oids "$M/queries/$Q"/cur/* &&
		peak=$(awk "/^VmHWM/ {print \$2}" /proc/$(cat "$M.pid")/status) &&
		echo "$mode: peak RSS ${peak} kB" >>"$TRASH/peaks" && [ "$peak" -lt "$RSS_MAX" ]
	'
	leifs_umount "$M"
done <<EOF2
500 HTTP 500
plain not a gzip
htmlgz not an mbox (it does not start with a From_ line)
trunc cut short
reset $H/reset
stall too slow
slow too slow
bomb max_message
redirect HTTP 302
biglen remaining
bigmsg max_message
cronly not an mbox (its lines end in CR only
EOF2

# broken but readable answers: taken as lei would split them
while read -r mode count; do
	test_expect_success "$mode: every message is a file named by its bytes" '
		leifs_mount "$M" -o "source=$H/$mode/,cache=$C,timeout=3" &&
		mkdir "$M/queries/s:$mode" && ls "$M/queries/s:$mode/cur" >names &&
		[ "$(wc -l <names)" -eq $count ] &&
		! grep -v -E "^[0-9]+\.[0-9a-f]{40}\.leifs:2,$" names &&
		check_oids "$M/queries/s:$mode"/cur/* &&
		for f in "$M/queries/s:$mode"/cur/*; do
			[ "$(stat -c %Y "$f")" = "$(basename "$f" | cut -d. -f1)" ] || return 1
		done &&
		grep -q "^state: fresh" "$M/queries/s:$mode/.status"
	'
	leifs_umount "$M"
done <<EOF3
badfrom 3
nodate 5
EOF3

test_expect_success 'a server that is down: offline view, clear error, no password shown' '
	DP=$(free_port) &&
	leifs_mount "$M" -o "source=http://leifs:s3cret@127.0.0.1:$DP/all/,cache=$C,timeout=3,refresh=0" &&
	timeout 10 ls "$M/queries/$Q/cur" >actual && test_cmp before actual &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	grep -q "^error: .*[Cc]onnect" "$M/queries/$Q/.status" &&
	grep -q "^source: http://\*\*\*@127.0.0.1:$DP/all/" "$M/queries/$Q/.status" &&
	! grep -q s3cret "$M/queries/$Q/.status" "$M/queries/.status" "$TRASH/leifs.log"
'
leifs_umount "$M"
test_expect_success '404 is no match: an empty, fresh view' '
	leifs_mount "$M" -o "source=$H/404/,cache=$C,timeout=3" &&
	mkdir "$M/queries/s:nothing" && [ -z "$(ls "$M/queries/s:nothing/cur")" ] &&
	grep -q "^state: fresh" "$M/queries/s:nothing/.status"
'
leifs_umount "$M"
test_expect_success 'the daemon survived every case (no crash in the log)' '
	! grep -i -E "sanitizer|segv|abort" "$TRASH/leifs.log"
'
test_done

#!/usr/bin/env bash
# Responsive listings (#15): Ctrl-C ends a listing that waits on a first
# fill at once (a FUSE interrupt), the fill going on; a first listing of a
# slow view shows what has come after first_wait, and later listings the
# rest.
. "$(dirname "$0")/test-lib.sh"

hostile_start
test_wait_for 10 "curl -s -o /dev/null -d '' '$H/ok/?q=x'"
M="$TRASH/mnt"

# gone PID SECONDS: PID ends within SECONDS
gone() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($2 * 10)) ] || return 1
		sleep 0.1
	done
}

test_expect_success 'SIGINT ends a listing waiting on a stalled first fill within 2 s' '
	leifs_mount "$M" -o source=$H/stall/,cache=$TRASH/c1,timeout=60,first_wait=60,refresh=0 &&
	V="$M/queries/s:stalled" && mkdir "$V" || return 1
	# a background job of a script ignores SIGINT: ls gets it back
	python3 -c "import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(\"ls\", [\"ls\", sys.argv[1]])" "$V/cur" >ls.out 2>&1 &
	pid=$! &&
	test_wait_for 10 "grep -q \"^state: refreshing\" \"$V/.status\"" &&
	sleep 1 && kill -0 $pid &&
	kill -INT $pid &&
	if ! gone $pid 2; then
		echo "ls still there 2 s after SIGINT"
		kill -9 $pid
		return 1
	fi &&
	ls "$M/queries" >views && grep -q "^s:stalled$" views &&
	grep "^state: refreshing" "$V/.status"
'
test_expect_success 'the daemon still ends at once after the interrupted listing' '
	kill -TERM "$(cat "$M.pid")" && gone "$(cat "$M.pid")" 2 &&
	leifs_umount "$M" && leifs --check "$TRASH/c1"
'

test_expect_success 'a first listing of a slow view returns after about first_wait with part of it' '
	leifs_mount "$M" -o source=$H/drip/,cache=$TRASH/c2,timeout=60,first_wait=1,refresh=0 &&
	V="$M/queries/s:trickle" && mkdir "$V" &&
	start=$(date +%s%N) && ls "$V/cur" >first && end=$(date +%s%N) &&
	ms=$(((end - start) / 1000000)) && say "# first listing: $ms ms, $(wc -l <first) messages" &&
	[ $ms -lt 2500 ] && [ "$(wc -l <first)" -lt 10 ] &&
	grep -E "^(state: refreshing|progress: )" "$V/.status"
'
test_expect_success 'later listings show all of it once the fill ends' '
	test_wait_for 30 "[ \$(ls \"$V/cur\" | wc -l) -eq 10 ]" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$V/.status\"" &&
	grep "^messages: 10$" "$V/.status" && check_oids "$V"/cur/*
'
# as lei q writes it: the whole first fill is old mail, even when the
# daemon stopped in the middle of it and a later mount brings the rest
test_expect_success 'a first fill cut short by SIGTERM: the rest comes to cur/ after a remount' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o source=$H/drip/,cache=$TRASH/c4,timeout=60,first_wait=0,refresh=0 &&
	V="$M/queries/s:cut" && mkdir "$V" && ls "$V/cur" >/dev/null &&
	test_wait_for 10 "[ \$(ls \"$V/cur\" | wc -l) -ge 2 ]" &&
	grep -q "^state: refreshing" "$V/.status" &&
	kill -TERM "$(cat "$M.pid")" && gone "$(cat "$M.pid")" 5 && leifs_umount "$M" &&
	leifs_mount "$M" -o source=$H/drip/,cache=$TRASH/c4,timeout=60,first_wait=0,refresh=0 &&
	n=$(ls "$V/cur" | wc -l) && [ "$n" -ge 2 ] && [ "$n" -lt 10 ] &&
	grep -q "^last-refresh: never" "$V/.status" &&
	test_wait_for 30 "grep -q \"^state: fresh\" \"$V/.status\"" &&
	[ "$(ls "$V/cur" | wc -l)" -eq 10 ] && [ -z "$(ls "$V/new")" ]
'
test_expect_success 'once the first fill has ended, what a later search adds is new mail' '
	printf "[leifs]\n\tsource = %s\n" "$H/ok/" >"$V/.config" &&
	echo full >"$V/.refresh" &&
	test_wait_for 20 "[ \$(ls \"$V/new\" | wc -l) -eq 2 ]" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$V/.status\""
'
# a read of .refresh waits for the refresh: Ctrl-C ends the wait at once,
# the deadline bounds it, and nothing but a read waits
test_expect_success 'a read of .refresh waits on a stalled refresh: Ctrl-C ends it; stat, touch, echo do not wait' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o source=$H/stall/,cache=$TRASH/c5,timeout=60,first_wait=0,refresh=0,deadline=30 &&
	V="$M/queries/s:waits" && mkdir "$V" || return 1
	python3 -c "import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(\"cat\", [\"cat\", sys.argv[1]])" "$V/.refresh" >cat.out 2>&1 &
	pid=$! &&
	test_wait_for 10 "grep -q \"^state: refreshing\" \"$V/.status\"" && sleep 1 && kill -0 $pid &&
	timeout 2 stat "$V/.refresh" >/dev/null && timeout 2 ls -l "$V" >/dev/null &&
	timeout 2 touch "$V/.refresh" && timeout 2 sh -c "echo >\"$V/.refresh\"" &&
	kill -0 $pid && kill -INT $pid &&
	if ! gone $pid 2; then
		echo "cat still there 2 s after SIGINT"
		kill -9 $pid
		return 1
	fi &&
	{ wait $pid; [ $? -eq 130 ]; } && [ ! -s cat.out ] && grep -q "^state: refreshing" "$V/.status"
'
test_expect_success 'the wait ends with the deadline: the summary says the search failed at it' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o source=$H/stall/,cache=$TRASH/c6,timeout=60,first_wait=0,refresh=0,deadline=2 &&
	V="$M/queries/s:bounded" && mkdir "$V" &&
	timeout 10 cat "$V/.refresh" >summary &&
	grep -q "^s:bounded	0	0	0	failed	.*the search took longer than the deadline of 2 s$" summary
'
test_expect_success 'a negative first_wait is refused' '
	leifs_umount "$M" &&
	! "$LEIFS" -f -o source=$H/ok/,cache=$TRASH/c3,first_wait=-1 "$M" 2>err &&
	grep first_wait err
'
test_done

#!/usr/bin/env bash
# Bounded and responsive (#15): a server that trickles its answer (a 200 or
# a 404) cannot keep a view refreshing, every search has a deadline, the
# User-Agent names leifs's version, and a busy server (HTTP 503, 429) is
# left alone for a while.
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
C="$TRASH/cache"
Q="s:bounds"

# requests the hostile server got for a mode
count() { curl -s "$H/_count/$1"; }

test_expect_success 'the hostile server answers' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/ok/"
'

# a trickle of 2 bytes/s is below the default minimum rate (100 bytes/s
# over timeout seconds): the view fails within a bound, .status says why,
# and a forced refresh asks again
for mode in trickle slow404; do
	test_expect_success "$mode: the view fails on the minimum rate, then can refresh again" '
		leifs_mount "$M" -o "source=$H/$mode/,cache=$C-$mode,timeout=3,refresh=0" &&
		start=$(date +%s) &&
		mkdir "$M/queries/$Q" &&
		timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
		test_wait_for 20 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
		[ $(($(date +%s) - start)) -le 20 ] &&
		grep "^error: .*the server sent less than 100 bytes/s for 3 s" "$M/queries/$Q/.status" &&
		[ "$(count $mode)" = 1 ] &&
		echo >"$M/queries/$Q/.refresh" &&
		test_wait_for 10 "[ \"\$(count $mode)\" = 2 ]"
	'
	leifs_umount "$M"
done

test_expect_success 'a search longer than the deadline fails, and says so' '
	leifs_mount "$M" -o "source=$H/trickle/,cache=$C-deadline,timeout=3,refresh=0,low_speed=1,deadline=5" &&
	start=$(date +%s) &&
	mkdir "$M/queries/$Q" &&
	timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	[ $(($(date +%s) - start)) -ge 4 ] && [ $(($(date +%s) - start)) -le 20 ] &&
	grep "^error: .*the search took longer than the deadline of 5 s" "$M/queries/$Q/.status"
'
leifs_umount "$M"

test_expect_success 'low_speed and deadline are checked at mount' '
	mkdir -p "$M" &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,deadline=0" "$M" 2>err &&
	grep "deadline, backoff_max > 0" err &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,low_speed=-1" "$M" 2>err &&
	grep "low_speed must be >= 0" err
'

test_expect_success 'requests carry User-Agent: leifs/VERSION' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-ua,timeout=3" &&
	mkdir "$M/queries/$Q" && ls "$M/queries/$Q/cur" >/dev/null &&
	"$LEIFS" --version | sed -n "s/^leifs \([^ ]*\) .*/leifs\/\1/p" >expect &&
	[ -s expect ] &&
	curl -s "$H/_ua" >actual && test_cmp expect actual
'
leifs_umount "$M"

test_expect_success '503 with Retry-After: no request inside the window, one after it' '
	leifs_mount "$M" -o "source=$H/503/,cache=$C-503,timeout=3,refresh=0" &&
	mkdir "$M/queries/$Q" && timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	grep "^source: .*: failed: server busy (HTTP 503), next try in [1-5] s" "$M/queries/$Q/.status" &&
	[ "$(count 503)" = 1 ] &&
	ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"backing off\" \"$M/queries/$Q/.status\"" &&
	grep "^error: .*: server busy (HTTP 503), next try in [0-5] s (backing off" "$M/queries/$Q/.status" &&
	grep "^source: .*: failed: server busy (HTTP 503), next try in [0-5] s$" "$M/queries/$Q/.status" &&
	[ "$(count 503)" = 1 ] &&
	sleep 6 &&
	grep "^source: .*: failed: server busy (HTTP 503), next try at the next refresh$" "$M/queries/$Q/.status" &&
	ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "[ \"\$(count 503)\" = 2 ]"
'
leifs_umount "$M"

test_expect_success '429 without Retry-After: backs off, forced refreshes too' '
	leifs_mount "$M" -o "source=$H/429/,cache=$C-429,timeout=3,refresh=0" &&
	mkdir "$M/queries/$Q" && timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	grep "^source: .*: failed: server busy (HTTP 429), next try in [0-9]* s" "$M/queries/$Q/.status" &&
	[ "$(count 429)" = 1 ] &&
	echo >"$M/queries/$Q/.refresh" &&
	test_wait_for 10 "grep -q \"backing off\" \"$M/queries/$Q/.status\"" &&
	ls "$M/queries/$Q/cur" >/dev/null &&
	[ "$(count 429)" = 1 ]
'
leifs_umount "$M"

test_expect_success 'the config file sets low-speed, deadline and backoff-max' '
	printf "[leifs]\n\tlow-speed = 1\n\tdeadline = 4\n\tbackoff-max = 2\n" >config &&
	leifs_mount "$M" -o "source=$H/trickle/,cache=$C-config,config=$TRASH/config,timeout=3,refresh=0" &&
	mkdir "$M/queries/$Q" &&
	timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	grep "^error: .*the search took longer than the deadline of 4 s" "$M/queries/$Q/.status"
'
leifs_umount "$M"

test_expect_success 'backoff_max caps the back-off of a busy server' '
	leifs_mount "$M" -o "source=$H/429/,cache=$C-cap,config=$TRASH/config,timeout=3,refresh=0" &&
	before=$(count 429) &&
	mkdir "$M/queries/$Q" && timeout 10 ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/$Q/.status\"" &&
	grep "^source: .*: failed: server busy (HTTP 429), next try in 2 s" "$M/queries/$Q/.status" &&
	[ "$(count 429)" = $((before + 1)) ] &&
	sleep 3 &&
	ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "[ \"\$(count 429)\" = $((before + 2)) ]"
'
leifs_umount "$M"

test_expect_success 'the daemon survived every case (no crash in the log)' '
	! grep -i -E "sanitizer|segv|abort" "$TRASH/leifs.log"
'
test_done

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
	grep "^source: .*: failed: server busy (HTTP 429), next try in [12] s" "$M/queries/$Q/.status" &&
	[ "$(count 429)" = $((before + 1)) ] &&
	sleep 3 &&
	ls "$M/queries/$Q/cur" >/dev/null &&
	test_wait_for 10 "[ \"\$(count 429)\" = $((before + 2)) ]"
'
leifs_umount "$M"

# searches at once: at most host_refreshes (default 4, as lei) per server,
# max_refreshes (default 8) in all; the rest wait their turn, and each
# view is filled in the end.  "hold" answers after a second; the server
# counts the POSTs it answers at once.
maxat() { curl -s "$H/_max/$1"; }
many_views() {  # N: make N views and list them all at once
	local i pids=
	for i in $(seq "$1"); do mkdir "$M/queries/s:many$i" || return 1; done
	for i in $(seq "$1"); do timeout 60 ls "$M/queries/s:many$i/cur" >/dev/null & pids="$pids $!"; done
	wait $pids || return 1
	for i in $(seq "$1"); do
		[ "$(ls "$M/queries/s:many$i/cur" | wc -l)" -eq 2 ] || { echo "view $i not filled"; return 1; }
	done
}
test_expect_success '24 views listed at once: 4 searches at a time on one server' '
	leifs_mount "$M" -o "source=$H/hold/,cache=$C-many,timeout=60,refresh=3600" &&
	many_views 24 &&
	echo "at once: $(maxat hold)" && [ "$(maxat hold)" -le 4 ] && [ "$(maxat hold)" -ge 2 ]
'
leifs_umount "$M"

test_expect_success 'host_refreshes=2: two at a time; max_refreshes=3 bounds two hosts in all' '
	hold2=$(echo "$H" | sed "s/127.0.0.1/localhost/")/hold2/ &&
	leifs_mount "$M" -o "source=$H/hold1/,cache=$C-many2,timeout=60,refresh=3600,host_refreshes=2" &&
	many_views 8 &&
	echo "at once: $(maxat hold1)" && [ "$(maxat hold1)" -le 2 ] &&
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$H/hold2/,source=$hold2,cache=$C-many3,timeout=60,refresh=3600,max_refreshes=3" &&
	many_views 9 &&
	echo "at once, by either name: $(maxat hold2)" && [ "$(maxat hold2)" -le 6 ] && [ "$(maxat hold2)" -ge 2 ]
'
leifs_umount "$M"

test_expect_success 'refresh_all over 20 views keeps to 4 searches at a time' '
	leifs_mount "$M" -o "source=$H/hold3/,cache=$C-all,timeout=60,refresh=3600" &&
	for i in $(seq 20); do mkdir "$M/queries/s:all$i" || return 1; done &&
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$H/hold3/,cache=$C-all,timeout=60,refresh=3600,refresh_all=1" &&
	test_wait_for 60 "[ \"\$(count hold3)\" -ge 20 ]" &&
	echo "at once: $(maxat hold3)" && [ "$(maxat hold3)" -le 4 ]
'
leifs_umount "$M"

test_expect_success 'a view waiting for its turn says so in .status, then fills' '
	leifs_mount "$M" -o "source=$H/hold4/,cache=$C-turn,timeout=60,refresh=3600,max_refreshes=1" &&
	pids= &&
	for i in 1 2 3; do
		mkdir "$M/queries/s:turn$i" || return 1
		timeout 30 ls "$M/queries/s:turn$i/cur" >/dev/null & pids="$pids $!"
	done &&
	# which of the three waits depends on which ls the kernel sends first
	test_wait_for 5 "grep -l \"^progress: waiting for a turn (max_refreshes)\" \"$M\"/queries/s:turn?/.status >waiting" &&
	w=$(dirname "$(head -n 1 waiting)") &&
	grep "^state: refreshing" "$w/.status" &&
	wait $pids &&
	grep "^state: fresh" "$w/.status" &&
	[ "$(ls "$w/cur" | wc -l)" -eq 2 ] &&
	[ "$(maxat hold4)" -eq 1 ]
'
leifs_umount "$M"

# a staged .config (applied once writes pause) is no refresh: it must not
# take the one turn of max_refreshes=1, or a refresh asked meanwhile waits
# for a worker that never comes
python3 - >"$TRASH/turn.mbox" <<'EOPY'
for i in range(8):
    print('From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: A <a%d@example.org>\n'
          'Subject: turn %d\nDate: Thu, 01 Oct 2026 10:00:%02d +0000\n'
          'Message-ID: <turn-%d@example.org>\n\nbody\n' % (i, i, i, i))
EOPY
test_expect_success 'max_refreshes=1: a refresh asked while a .config is staged runs' '
	leifs_mount "$M" -o "source=$TRASH/turn.mbox,cache=$C-stage,refresh=3600,max_refreshes=1" &&
	V="$M/queries/s:turn" && mkdir "$V" && [ "$(ls "$V/cur" | wc -l)" -eq 8 ] &&
	printf "[leifs]\n\tlimit = 3\n" >"$V/.config" && echo >"$V/.refresh" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$V/.status\" && [ \$(find \"$V/cur\" \"$V/new\" -type f | wc -l) -eq 3 ]" &&
	echo >"$V/.refresh" && test_wait_for 10 "grep -q \"^state: fresh\" \"$V/.status\""
'
leifs_umount "$M"

test_expect_success 'max_refreshes and host_refreshes are checked at mount' '
	mkdir -p "$M" &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,max_refreshes=0" "$M" 2>err &&
	grep "max_refreshes, host_refreshes 1 to 1024" err &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,host_refreshes=0" "$M" 2>err &&
	grep "max_refreshes, host_refreshes 1 to 1024" err
'

test_expect_success 'the daemon survived every case (no crash in the log)' '
	! grep -i -E "sanitizer|segv|abort" "$TRASH/leifs.log"
'
test_done

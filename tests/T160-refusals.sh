#!/usr/bin/env bash
# Every refusal explained where the user looks (#16): a refused .query
# write, a server's own reason for an error, a bad range at mkdir, the one
# name of a query, a missing local source at mount, and what .status said
# before a remount.
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
C="$TRASH/cache"

test_expect_success 'the hostile server answers' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/ok/"
'

test_expect_success 'a refused .query write says why in .status and queries/.status' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-query,timeout=3" &&
	mkdir "$M/queries/s:refused" &&
	! echo foo:bar >"$M/queries/s:refused/.query" 2>err &&
	grep "Invalid argument" err &&
	grep "^refused: .query: unknown search prefix$" "$M/queries/s:refused/.status" &&
	grep "^error: new query for s:refused refused: unknown search prefix$" "$M/queries/.status" &&
	grep "new query for s:refused refused: unknown search prefix" "$TRASH/leifs.log" &&
	echo "s:refused OR s:other" >"$M/queries/s:refused/.query" &&
	! grep "^refused:" "$M/queries/s:refused/.status"
'
leifs_umount "$M"

test_expect_success 'an HTTP error keeps the first line of the server'"'"'s reason' '
	leifs_mount "$M" -o "source=$H/500text/,cache=$C-500,timeout=3" &&
	mkdir "$M/queries/s:Sa*" &&
	timeout 10 ls "$M/queries/s:Sa*/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:Sa*/.status\"" &&
	grep "^error: .*server answered HTTP 500: Wildcard Sa\* expands to more than 100 terms$" \
		"$M/queries/s:Sa*/.status" &&
	! grep "second line" "$M/queries/s:Sa*/.status" &&
	! grep -q "$(printf "\a")" "$M/queries/s:Sa*/.status"
'
leifs_umount "$M"

test_expect_success 'a gzip'"'"'d reason is read, and bounded' '
	leifs_mount "$M" -o "source=$H/500gz/,cache=$C-500gz,timeout=3" &&
	mkdir "$M/queries/s:gz" &&
	timeout 10 ls "$M/queries/s:gz/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:gz/.status\"" &&
	grep "^error: .*server answered HTTP 500: Query too complex: xxx*$" "$M/queries/s:gz/.status" >line &&
	[ "$(sed "s/.*HTTP 500: //" line | wc -c)" -le 201 ]
'
leifs_umount "$M"

test_expect_success 'public-inbox'"'"'s bare HTTP 500 (a wildcard of over 100 terms) is named' '
	leifs_mount "$M" -o "source=$H/500pi/,cache=$C-500pi,timeout=3" &&
	mkdir "$M/queries/s:a*" && timeout 10 ls "$M/queries/s:a*/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:a*/.status\"" &&
	grep "^error: .*: the server failed the query (HTTP 500; public-inbox answers so when a wildcard expands to more than 100 terms)$" \
		"$M/queries/s:a*/.status" && ! grep -q "Internal Server Error" "$M/queries/s:a*/.status"
'
leifs_umount "$M"

test_expect_success 'queries/.status keeps the last 20 refusals with their times, the latest as error:' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-many,timeout=3" &&
	for i in $(seq 1 22); do ! mkdir "$M/queries/s:($i" 2>/dev/null || return 1; done &&
	mkdir "$M/queries/s:kept" && ! echo "s:(" >"$M/queries/s:kept/.query" 2>/dev/null &&
	grep "^refused: " "$M/queries/.status" >refused && [ "$(wc -l <refused)" -eq 20 ] &&
	grep -c "^refused: [0-9-]*T[0-9:]*Z mkdir refused: s:([0-9]*: " refused >n && echo 19 >expect &&
	test_cmp expect n && ! grep -q "s:(3: " refused && grep -q "mkdir refused: s:(4: " refused &&
	tail -n 1 refused | grep -q "Z new query for s:kept refused: " &&
	grep "^error: new query for s:kept refused: " "$M/queries/.status" &&
	[ "$(grep -c "^error:" "$M/queries/.status")" -eq 1 ]
'
leifs_umount "$M"

# daemonized, where no syslog daemon listens (a container), the log is a
# file in the cache directory, private to the user
if python3 -c "import socket, sys
for t in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
    try:
        socket.socket(socket.AF_UNIX, t).connect(\"/dev/log\"); sys.exit(0)
    except OSError:
        pass
sys.exit(1)" 2>/dev/null; then
	test_skip "the log file without syslog" "a syslog daemon listens at /dev/log here"
else
	test_expect_success 'without syslog, a daemon logs to CACHE/leifs.log (mode 0600)' '
		"$LEIFS" -o "source=$H/ok/,cache=$C-log,timeout=3" "$M" &&
		test_atexit "fusermount3 -u -z \"$M\" 2>/dev/null" && pid=$(cat "$C-log/lock") &&
		! mkdir "$M/queries/s:(log" 2>/dev/null &&
		grep -E "^[0-9-]+T[0-9:]+Z leifs\[$pid\]: mkdir refused: s:\(log: " "$C-log/leifs.log" &&
		[ "$(stat -c %a "$C-log/leifs.log")" = 600 ] &&
		fusermount3 -u "$M" && test_wait_for 10 "! kill -0 $pid 2>/dev/null"
	'
fi

test_expect_success 'a range Xapian cannot read is refused at mkdir, with the reason' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-range,timeout=3" &&
	! mkdir "$M/queries/z:1k..2k" 2>err && grep "Invalid argument" err &&
	grep "^error: mkdir refused: z:1k..2k: the query does not parse: .*range" "$M/queries/.status" &&
	! [ -e "$M/queries/z:1k..2k" ] &&
	mkdir "$M/queries/z:1000..2000" && mkdir "$M/queries/d:2.weeks.ago.." &&
	mkdir "$M/queries/rt:1.month.ago..now" && mkdir "$M/queries/dt:20240101000000.."
'
leifs_umount "$M"

test_expect_success 'lei'"'"'s kw: and L:, and IMAP'"'"'s uid:, are refused at mkdir, with the reason' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-lei,timeout=3" &&
	! mkdir "$M/queries/kw:seen" 2>err && grep "Invalid argument" err &&
	grep "^error: mkdir refused: kw:seen: kw: is lei.s own keywords" "$M/queries/.status" &&
	! mkdir "$M/queries/s:x AND L:inbox" &&
	grep "^error: mkdir refused: s:x AND L:inbox: L: is lei.s own labels" "$M/queries/.status" &&
	! mkdir "$M/queries/uid:1..10" &&
	grep "^error: mkdir refused: uid:1..10: uid: .*is not supported" "$M/queries/.status" &&
	ls "$M/queries" >names && ! grep -e "kw:" -e "L:" -e "uid:" names &&
	mkdir "$M/queries/l:linux-rtc" && mkdir "$M/queries/lid:linux-rtc.vger.kernel.org"
'
leifs_umount "$M"

test_expect_success 'a query has one name: %2f is refused, with the reason' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-name,timeout=3" &&
	mkdir "$M/queries/dfn:drivers%2Frtc" &&
	! mkdir "$M/queries/dfn:drivers%2frtc" 2>err && grep "Invalid argument" err &&
	grep "^error: mkdir refused: dfn:drivers%2frtc: bad escape: write %2F, not %2f$" "$M/queries/.status" &&
	ls "$M/queries" >names && [ "$(grep -c -i "^dfn:drivers%2frtc$" names)" = 1 ]
'
leifs_umount "$M"

test_expect_success 'a local source that does not exist stops the mount, one line, status 2' '
	mkdir -p "$M" &&
	{ timeout 10 "$LEIFS" -f -o "source=$TRASH/no-such-archive,cache=$C-missing" "$M" 2>err; rc=$?; } &&
	{ [ $rc = 2 ] || fusermount3 -u "$M" 2>/dev/null; cat err; } &&
	[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && grep "no-such-archive" err &&
	! mountpoint -q "$M" &&
	printf "[leifs]\n\tsource = %s\n" "$TRASH/nor-this-one" >config &&
	{ timeout 10 "$LEIFS" -f -o "config=$TRASH/config,cache=$C-missing" "$M" 2>err; rc=$?; } &&
	{ [ $rc = 2 ] || fusermount3 -u "$M" 2>/dev/null; cat err; } &&
	[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && grep "nor-this-one" err &&
	! mountpoint -q "$M"
'

test_expect_success 'last-query and the source lines survive a remount' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-remount,timeout=3" &&
	mkdir "$M/queries/s:kept" && ls "$M/queries/s:kept/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$M/queries/s:kept/.status\"" &&
	grep -E "^(last-query|last-fetch|source):" "$M/queries/s:kept/.status" >expect &&
	grep "^source: .*: ok, " expect && grep "^last-query: s:kept$" expect &&
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-remount,timeout=3,refresh=3600" &&
	grep -E "^(last-query|last-fetch|source):" "$M/queries/s:kept/.status" >actual &&
	test_cmp expect actual
'
leifs_umount "$M"

test_done

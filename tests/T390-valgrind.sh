#!/usr/bin/env bash
# One mount/list/read/series/rename/unlink/.query/rmdir/unmount cycle under
# valgrind, with a view over a local inbox (import, Xapian index, search)
# and one over the index of remote mail: no errors, no definite leaks.  Skipped for sanitizer builds
# (valgrind cannot run them) and where valgrind is missing.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

if ! command -v valgrind >/dev/null; then
	test_skip 'a mount cycle under valgrind' 'valgrind is not installed'
	test_done
	exit
fi
if grep -q fsanitize "$SRC_DIR/BUILD-FLAGS" 2>/dev/null; then
	test_skip 'a mount cycle under valgrind' 'this is a sanitizer build'
	test_done
	exit
fi
test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
V="$M/queries/s:rtc"
test_expect_success 'leifs mounts under valgrind' '
	printf "RTC\r\nL:\tlinux-rtc@vger.kernel.org\r\nF:\tdrivers/rtc/\r\nX:\tdrivers/rtc/rtc-ds1*\r\nX:\tdrivers/rtc/rtc-pcf8563.c\r\n\nMANY\n" >MAINTAINERS &&
	for i in $(seq 1 200); do printf "F:\tdrivers/rtc/file%03d.c\n" $i; done >>MAINTAINERS &&
	printf "N:\t(a|b)\nK:\tpcf8563_probe\n\nRTC\nF:\tagain\n" >>MAINTAINERS &&
	mkdir -p "$M" &&
	{ valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite \
		--log-file="$TRASH/valgrind.log" \
		"$LEIFS" -f -o source=$PI_URL,cache="$TRASH/cache",timeout=60,first_wait=60,map_size=256,maintainers="$TRASH/MAINTAINERS" "$M" \
		2>>"$TRASH/leifs.log" & } &&
	echo $! >vg.pid &&
	test_atexit "fusermount3 -u -z \"$M\" 2>/dev/null; kill \$(cat \"$TRASH/vg.pid\") 2>/dev/null" &&
	test_wait_for 60 "mountpoint -q \"$M\""
'
test_expect_success 'a view, read whole, renamed, unlinked, requeried, removed' '
	mkdir "$V" && ls "$V/cur" >list && [ "$(wc -l <list)" -gt 10 ] &&
	cat "$V"/cur/* >/dev/null && check_oids "$V"/cur/* &&
	ls "$V/series" | grep -q . && cat "$V"/series/*/am.mbx "$V"/series/*/info >/dev/null &&
	f=$(sed -n 1p list) && mv "$V/cur/$f" "$V/cur/${f}S" && rm "$V/cur/$(sed -n 2p list)" &&
	cat "$V/.status" "$M/queries/.status" >/dev/null &&
	echo "s:rtc AND s:pcf8563" >"$V/.query" &&
	test_wait_for 60 "grep -q \"^last-query: s:rtc AND s:pcf8563\" \"$V/.status\" && grep -q \"^state: fresh\" \"$V/.status\"" &&
	! mkdir "$M/queries/(bad" 2>/dev/null &&
	echo 1 >"$V/.uidvalidity" && cat "$V/.uidvalidity" >/dev/null &&
	rmdir "$V"
'
test_expect_success 'a view over a local inbox (import, index, search) and a cache:URL view' '
	L="$M/queries/dfn:interface.c" && mkdir "$L" &&
	printf "[leifs]\n\tsource = v2:%s\n" "$PI_WORK/linux-rtc" >"$L/.config" &&
	test_wait_for 120 "grep -q \"^source: v2:.*: ok, [1-9]\" \"$L/.status\"" &&
	ls "$L/cur" | grep -q leifs &&
	C="$M/queries/f:belloni" && mkdir "$C" &&
	printf "[leifs]\n\tsource = cache:%s\n" "$PI_URL" >"$C/.config" &&
	test_wait_for 120 "grep -q \"^source: cache:.*: ok\" \"$C/.status\""
'
test_expect_success 'subsystem views: derived, split in parts, derived again after an edit' '
	mkdir "$M/subsystems/RTC" "$M/subsystems/MANY" && ls "$M/subsystems/RTC/cur" | grep -q leifs &&
	ls "$M/subsystems/MANY/cur" >/dev/null && grep -q "^parts: " "$M/subsystems/MANY/.status" &&
	cat "$M/subsystems/.sections" "$M/subsystems/.status" >/dev/null &&
	! mkdir "$M/subsystems/NONE" 2>/dev/null &&
	sed -i "s/rtc-ds1\*/rtc-ds1307.c/" MAINTAINERS && cat "$M/subsystems/RTC/.refresh" >/dev/null &&
	grep -q "^rederived: " "$M/subsystems/RTC/.status" && rmdir "$M/subsystems/MANY"
'
test_expect_success 'unmount: valgrind reports no error and no definite leak' '
	fusermount3 -u "$M" && pid=$(cat vg.pid) &&
	{ wait "$pid"; rc=$?; } ; cat valgrind.log; [ "$rc" -eq 0 ] && ! grep -q "definitely lost" valgrind.log
'
test_done

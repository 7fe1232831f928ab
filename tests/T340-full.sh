#!/usr/bin/env bash
# A full cache (LMDB map full, as a full disk would be): the search fails
# with a clear reason in .status and the log, what was stored still reads,
# and a remount with a larger map completes the view.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
SMALL="$M/queries/s:pcf8563"
BIG="$M/queries/s:rtc OR s:watchdog OR s:wdt OR s:PATCH"
test_expect_success 'a small view fits a 1 MiB cache' '
	leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache,timeout=20,map_size=1" &&
	mkdir "$SMALL" && ls "$SMALL/cur" | sort >small && [ "$(wc -l <small)" -gt 5 ] &&
	grep -q "^state: fresh" "$SMALL/.status"
'
test_expect_success 'a view that does not fit: state failed, the reason says the cache is full' '
	mkdir "$BIG" && ls "$BIG/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$BIG/.status\"" &&
	grep "^error: .*cache is full" "$BIG/.status" &&
	grep -q "cache is full" "$TRASH/leifs.log"
'
test_expect_success 'what was stored still lists and reads' '
	ls "$SMALL/cur" | sort >now && test_cmp small now && check_oids "$SMALL"/cur/* &&
	check_oids "$BIG"/cur/* "$BIG"/new/*
'
test_expect_success 'remounted with a larger map, the view completes and nothing was lost' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache,timeout=20,map_size=256" &&
	ls "$SMALL/cur" | sort >now && test_cmp small now &&
	echo full >"$BIG/.refresh" &&
	test_wait_for 30 "grep -q \"^state: fresh\" \"$BIG/.status\"" &&
	[ "$(find "$BIG/cur" "$BIG/new" -type f | wc -l)" -gt 300 ] && check_oids "$BIG"/cur/*
'

# a full filesystem under the cache (not the map): the reason says so, since
# raising map_size would not help; LMDB reports it as ENOSPC, or as EIO
# when a write was cut short
FS="$TRASH/smallfs"
test_expect_success 'a full filesystem under the cache: .status says no space left on it' '
	leifs_umount "$M" && mkdir -p "$FS" &&
	mount -t tmpfs -o size=1m tmpfs "$FS" && test_atexit "umount -l \"$FS\"" &&
	leifs_mount "$M" -o "source=$PI_URL,cache=$FS/cache,timeout=20,map_size=256" &&
	mkdir "$BIG" && ls "$BIG/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$BIG/.status\"" &&
	cat "$BIG/.status" &&
	grep "^error: .*no space left on the cache.s filesystem" "$BIG/.status" &&
	! grep -q "raise -o map_size" "$BIG/.status" &&
	grep -q "no space left on the cache.s filesystem" "$TRASH/leifs.log" &&
	leifs_umount "$M"
'
test_done

#!/usr/bin/env bash
# What leifs trusts in its cache directory: one daemon at a time (a lock
# naming the holder), and a damaged data.mdb is refused at mount when its
# size gives it away, or contained (EIO, the mount stays) when it does not.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
M2="$TRASH/mnt2"
C="$TRASH/cache"
OPTS="source=$PI_URL,cache=$C,timeout=20"
V="$M/queries/s:rtc OR s:watchdog OR s:wdt"
# a second daemon that wrongly mounted must not outlive the script
test_atexit "mountpoint -q '$M2' && fusermount3 -u -z '$M2'"

# ---- one daemon per cache ----

test_expect_success 'a first mount takes the cache' '
	leifs_mount "$M" -o "$OPTS" && mkdir "$V" &&
	[ "$(ls "$V/cur" | wc -l)" -gt 100 ]
'
test_expect_success 'a second mount of the same cache fails at once, naming the holder' '
	mkdir -p "$M2" &&
	# the first daemon may still be indexing in index/: everything else
	# must stay as it is, the lock naming the first daemon
	(cd "$C" && find . -path ./index -prune -o -print | sort) >files-before &&
	cp "$C/lock" lock-before &&
	! timeout 20 "$LEIFS" -o "$OPTS" "$M2" >out 2>err &&
	cat err &&
	grep -q "cache $C is in use by pid $(cat "$M.pid")" err &&
	[ "$(wc -l <err)" -eq 1 ] && [ ! -s out ] &&
	! mountpoint -q "$M2" &&
	(cd "$C" && find . -path ./index -prune -o -print | sort) >files-after &&
	test_cmp files-before files-after && test_cmp lock-before "$C/lock"
'
test_expect_success 'the same in the foreground (-f)' '
	! timeout 20 "$LEIFS" -f -o "$OPTS" "$M2" 2>err &&
	grep -q "is in use by pid $(cat "$M.pid")" err && ! mountpoint -q "$M2"
'
test_expect_success 'the first mount keeps working' '
	[ "$(ls "$V/cur" | wc -l)" -gt 100 ] && cat "$M/queries/.status" >/dev/null &&
	grep -q "^state: fresh" "$V/.status"
'
test_expect_success 'after the first unmounts, a daemonized mount takes the cache' '
	leifs_umount "$M" &&
	"$LEIFS" -o "$OPTS" "$M2" 2>err && test_atexit "fusermount3 -u -z \"$M2\" 2>/dev/null" &&
	mountpoint -q "$M2" && [ ! -s err ] &&
	ls "$M2/queries" >/dev/null &&
	pid=$(cat "$C/lock") && kill -0 "$pid" &&
	grep -q "^leifs" /proc/$pid/comm &&
	! timeout 20 "$LEIFS" -f -o "$OPTS" "$M" 2>err &&
	grep -q "in use by pid $pid" err &&
	fusermount3 -u "$M2" && test_wait_for 10 "! kill -0 $pid 2>/dev/null"
'
test_expect_success 'a daemon killed with SIGKILL leaves no lock behind' '
	leifs_mount "$M" -o "$OPTS" && ls "$V/cur" >/dev/null &&
	kill -9 "$(cat "$M.pid")" && fusermount3 -u -z "$M" &&
	wait "$(cat "$M.pid")" 2>/dev/null; rm -f "$M.pid" &&
	test -s "$C/lock" &&
	leifs_mount "$M" -o "$OPTS" && [ "$(ls "$V/cur" | wc -l)" -gt 100 ] &&
	leifs_umount "$M"
'
test_expect_success 'the mount point a killed daemon left: the next leifs unmounts it and serves' '
	leifs_mount "$M" -o "$OPTS" && n=$(ls "$V/cur" | wc -l) && [ "$n" -gt 100 ] &&
	kill -9 "$(cat "$M.pid")" && { wait "$(cat "$M.pid")" 2>/dev/null; rm -f "$M.pid"; } &&
	! stat "$M" 2>err && grep -q "not connected" err &&
	# mountpoint(1) takes the dead mount for a mount: wait for the new one
	leifs_mount "$M" -o "$OPTS" && test_wait_for 10 "ls \"$M/queries\" >/dev/null 2>&1" &&
	grep -q "^leifs: $M was a dead FUSE mount of this user (no process served it): unmounted it$" \
		"$TRASH/leifs.log" &&
	[ "$(ls "$V/cur" | wc -l)" -eq "$n" ] && [ "$(grep -c " $M " /proc/mounts)" -eq 1 ] &&
	leifs_umount "$M"
'
# another user's dead mount: the kernel keeps it from anyone else, root
# included, so it is named, not touched; that user's own leifs clears it
# (by fusermount3, as libfuse mounts for a user)
NB="$TRASH/nb"
# an array, not a function: a function sent to the background is a
# subshell, and $! would not be the daemon's pid
NOBODY=(env HOME="$NB" setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -eq 0 ] && "${NOBODY[@]}" test -r /dev/fuse -a -w /dev/fuse 2>/dev/null; then
	test_expect_success 'another user'"'"'s dead mount is named with what to do; its owner'"'"'s leifs clears it' '
		mkdir -p "$NB/m" && chown -R 65534:65534 "$NB" &&
		{ "${NOBODY[@]}" "$LEIFS" -f -o "source=$PI_URL,cache=$NB/c" "$NB/m" 2>>"$TRASH/leifs.log" &
		  echo $! >nb.pid; } &&
		test_atexit "grep -qF \" $NB/m \" /proc/mounts && umount -l \"$NB/m\"" &&
		test_wait_for 10 "grep -qF \" $NB/m \" /proc/mounts" &&
		kill -9 "$(cat nb.pid)" && { wait "$(cat nb.pid)" 2>/dev/null; true; } &&
		! timeout 20 "$LEIFS" -f -o "source=$PI_URL,cache=$TRASH/cache-nb" "$NB/m" 2>err &&
		grep -q "^leifs: $NB/m is a FUSE mount (fuse.leifs) of uid 65534, which uid 0 cannot reach: run fusermount3 -u $NB/m as that user or root" err &&
		{ "${NOBODY[@]}" "$LEIFS" -f -o "source=$PI_URL,cache=$NB/c" "$NB/m" 2>nb.err & echo $! >nb.pid; } &&
		test_wait_for 10 "${NOBODY[*]} ls \"$NB/m\" 2>/dev/null | grep -q queries" &&
		grep -q "was a dead FUSE mount of this user" nb.err &&
		[ "$(grep -cF " $NB/m " /proc/mounts)" -eq 1 ] &&
		"${NOBODY[@]}" fusermount3 -u "$NB/m" && test_wait_for 10 "! kill -0 $(cat nb.pid) 2>/dev/null"
	'
else
	test_skip "another user's dead mount" "needs root, and /dev/fuse open to nobody; here: $(ls -l /dev/fuse | cut -d" " -f1)"
fi

# ---- a damaged data.mdb ----

D="$C/lmdb/data.mdb"
test_expect_success 'a truncated data.mdb is refused at mount with what to do' '
	cp "$D" data.mdb.good &&
	truncate -s 8192 "$D" &&
	! timeout 20 "$LEIFS" -f -o "$OPTS" "$M" >out 2>err; rc=$? &&
	cat err &&
	grep -q "cache $D is damaged (truncated: 8192 bytes, LMDB expects [0-9]* bytes); move it away to start afresh" err &&
	[ "$(wc -l <err)" -eq 1 ] && ! mountpoint -q "$M" &&
	! grep -qi "bus error\|core dumped" err &&
	[ "$(stat -c %s "$D")" -eq 8192 ]
'
test_expect_success 'the exit status is 1, not a signal' '
	timeout 20 "$LEIFS" -f -o "$OPTS" "$M" 2>/dev/null; [ $? -eq 1 ]
'
test_expect_success 'cut inside a page: refused too' '
	cp data.mdb.good "$D" && truncate -s $(($(stat -c %s "$D") - 100)) "$D" &&
	! timeout 20 "$LEIFS" -f -o "$OPTS" "$M" 2>err &&
	grep -q "cache $D is damaged (truncated: " err && ! mountpoint -q "$M"
'
# LMDB counts in last_pg a page taken at the end and freed in the same
# transaction, never written: a sound file may end before last_pg (seen
# after an unmount: last_pg 373, 373 pages), and must open
test_expect_success 'a sound data.mdb that ends before its last_pg opens, whole' '
	cp data.mdb.good "$D" && python3 - "$D" <<-\EOP &&
	import struct, sys
	f = open(sys.argv[1], "r+b")
	b = f.read(8192)
	psize = struct.unpack_from("<I", b, 16 + 24)[0]
	metas = [(struct.unpack_from("<Q", b, at + 16 + 128)[0], at) for at in (0, psize)]
	txnid, at = max(metas)
	last = struct.unpack_from("<Q", b, at + 16 + 120)[0]
	f.seek(0, 2)
	assert f.tell() == (last + 1) * psize, (f.tell(), last)
	f.seek(at + 16 + 120)
	f.write(struct.pack("<Q", last + 3))
	EOP
	leifs_mount "$M" -o "$OPTS,refresh=100000" && [ "$(ls "$V/cur" | wc -l)" -gt 100 ] &&
	mkdir "$M/queries/s:another" && ls "$M/queries/s:another/cur" >/dev/null &&
	leifs_umount "$M" && "$LEIFS" --check "$C" >check.out || { cat check.out; false; }
'
test_expect_success 'leaf pages overwritten with 0xff: the view gives EIO, the mount lives' '
	cp data.mdb.good "$D" &&
	python3 "$TEST_DIR/corrupt-lmdb.py" "$D" &&
	leifs_mount "$M" -o "$OPTS,refresh=100000" &&
	! ls "$V/cur" >out 2>err && cat err &&
	grep -q "Input/output error" err &&
	kill -0 "$(cat "$M.pid")" && cat "$M/queries/.status" && mountpoint -q "$M" &&
	leifs_umount "$M"
'
test_expect_success 'data.mdb cut short under a running mount: EIO, not SIGBUS' '
	cp data.mdb.good "$D" &&
	leifs_mount "$M" -o "$OPTS,refresh=100000" &&
	[ "$(ls "$V/cur" | wc -l)" -gt 100 ] &&
	truncate -s 8192 "$D" &&
	! ls "$V/cur" >out 2>err && cat err &&
	grep -q "Input/output error" err &&
	kill -0 "$(cat "$M.pid")" &&
	cat "$M/queries/.status" >status && cat status &&
	grep -q "^error: cache $D is damaged" status &&
	{ ls "$M/queries" >/dev/null 2>err; grep -q "Input/output error" err; } &&
	grep -q "cache $D is damaged" "$TRASH/leifs.log"
'
test_expect_success 'later requests fail fast with EIO, the mount still answers' '
	! ls "$V/new" 2>err && grep -q "Input/output error" err &&
	! cat "$V/.status" >/dev/null 2>err && grep -q "Input/output error" err &&
	cat "$M/queries/.status" >/dev/null && mountpoint -q "$M"
'
test_expect_success 'it unmounts clean; no core, no signal death' '
	pid=$(cat "$M.pid") && fusermount3 -u "$M" &&
	test_wait_for 10 "! kill -0 $pid 2>/dev/null" &&
	{ wait "$pid"; rc=$?; } ; rm -f "$M.pid"; echo "exit $rc"; [ $rc -lt 128 ]
'
test_done

#!/usr/bin/env bash
# A view's .config under hostile or careless use: a password in a source URL
# stays with the mount's owner (other users of an allow_other mount cannot
# read .config, and every other place a URL shows masks it), while the owner
# reads it back exactly; a NUL byte in a .config is refused; two writers at
# once leave one of their texts, never a mix.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
S1="http://user:s3cret@127.0.0.1:$PI_PORT/all/"
S2="http://other:s3cret@127.0.0.1:$PI_PORT/linux-rtc/"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
test_expect_success 'leifs mounts for every user, its source with a password' '
	leifs_mount "$M" -o "allow_other,source=$S1,cache=$TRASH/cache,timeout=4,refresh=3600"
'
V="$M/queries/s:rtc"
W="$M/queries/s:watchdog"
test_expect_success 'the owner reads the password back from .config, exactly' '
	mkdir "$V" "$W" && ls "$V/cur" "$W/cur" >/dev/null &&
	grep -qx "	source = $S1" "$V/.config" &&
	printf "[leifs]\n\tsource = %s\n" "$S2" >"$W/.config" && sleep 0.6 &&
	grep -qx "	source = $S2" "$W/.config" &&
	cat "$W/.config" >copy && cat copy >"$W/.config" && sleep 0.6 &&
	test_cmp copy "$W/.config"
'
test_expect_success '.config is mode 0600' '
	stat -c %a "$V/.config" "$W/.config" >modes && printf "600\n600\n" >expect &&
	test_cmp expect modes
'
test_expect_success 'another user cannot read .config' '
	as_nobody ls "$V" >/dev/null &&
	! as_nobody cat "$V/.config" >out 2>err && cat err && grep -q "Permission denied" err &&
	! grep -q s3cret out && ! as_nobody cat "$W/.config" >out 2>/dev/null && ! grep -q s3cret out
'
test_expect_success 'grep -r as another user finds the password nowhere in the mount' '
	ls "$W/cur" >/dev/null && test_wait_for 20 "grep -q \"^source: .*: ok\" \"$W/.status\"" &&
	as_nobody cat "$V/.status" "$W/.status" "$M/queries/.status" >shown &&
	grep -qF "http://***@127.0.0.1:$PI_PORT/all/" shown &&
	grep -qF "http://***@127.0.0.1:$PI_PORT/linux-rtc/" shown &&
	as_nobody grep -r s3cret "$M" >found 2>/dev/null; test_cmp /dev/null found
'
test_expect_success 'nor is it in the log' '
	! grep s3cret "$TRASH/leifs.log"
'

# a NUL byte: what follows must not be dropped with the rest applied
test_expect_success 'a .config holding a NUL byte is refused whole' '
	sleep 0.6 && cp "$V/.config" before &&
	! bash -c "printf \"[leifs]\n\tlimit = 3\0\n\tthreads = true\n\" >\"\$1/.config\"" sh "$V" 2>err &&
	cat err && grep -q "Invalid argument" err &&
	grep -q "^refused: .config: line 2: .*NUL" "$V/.status" &&
	sleep 0.6 && test_cmp before "$V/.config" &&
	printf "[leifs]\n\tlimit = 0\n" >"$V/.config" && ! grep -q "^refused:" "$V/.status"
'

# two writers at once, each writing a line per write(2) with pauses
cat >"$TRASH/writer.py" <<'EOF'
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
for line in sys.argv[2].replace("\\n", "\n").replace("\\t", "\t").splitlines(True):
    time.sleep(random.random() * 0.02)
    os.write(fd, line.encode())
os.close(fd)
EOF
A='[leifs]\n\tlimit = 3\n\tthreads = true\n\tdedupe = mid\n'
B='[leifs]\n\tdedupe = oid\n\trefresh = 77\n\tlimit = 11\n\tthreads = flag-hits\n'
test_expect_success 'two writers at once: .config ends as one of their texts, never a mix' '
	python3 "$TRASH/writer.py" "$W/.config" "$A" && sleep 0.6 && cat "$W/.config" >expect.a &&
	python3 "$TRASH/writer.py" "$W/.config" "$B" && sleep 0.6 && cat "$W/.config" >expect.b &&
	! cmp -s expect.a expect.b && bad=0 &&
	for i in $(seq 30); do
		python3 "$TRASH/writer.py" "$W/.config" "$A" 2>>werr &
		a=$!
		python3 "$TRASH/writer.py" "$W/.config" "$B" 2>>werr &
		b=$!
		wait $a && wait $b || { echo "try $i: a writer failed"; bad=$((bad + 1)); }
		sleep 0.6 && cat "$W/.config" >got &&
		{ cmp -s got expect.a || cmp -s got expect.b ||
		  { echo "try $i: neither text"; cat got; bad=$((bad + 1)); }; }
	done; cat werr; [ $bad = 0 ] && ! grep -q "^refused:" "$W/.status"
'
test_expect_success 'ps shows no password: the command line is scrubbed' '
	tr "\\0" " " </proc/$(cat "$M.pid")/cmdline >cmdline && cat cmdline &&
	grep -q "source=http://user:\*\*\*\*\*\*@127.0.0.1" cmdline && ! grep -q s3cret cmdline &&
	grep -qx "	source = $S1" "$V/.config"
'
test_expect_success 'a .config written in chunks that cut its lines is taken whole' '
	printf "[leifs]\n\tlimit = 2\n\tthreads = false\n\tsource = %s\n" "$S1" >want &&
	dd if=want of="$V/.config" bs=7 2>dd.err && sleep 0.8 &&
	grep -qx "	limit = 2" "$V/.config" && ! grep -q "^refused:" "$V/.status"
'
test_expect_success 'a .query written in chunks that cut it is taken whole' '
	printf "s:(rtc OR watchdog)\n" >q &&
	dd if=q of="$V/.query" bs=4 2>dd.err && test_cmp q "$V/.query"
'
# a last line without a newline is a whole line (#27): the text is
# applied or refused whole, when its writes pause, the reason in .status
limit_is() { grep -qx "	limit = $1" "$V/.config"; }
test_expect_success 'a bad last line without a newline: the whole text is refused, and says so' '
	printf "[leifs]\n\tlimit = 4\n" >"$V/.config" && sleep 0.6 && limit_is 4 &&
	printf "[leifs]\n\tlimit = 6\n\tbogus = 1" >"$V/.config" &&
	test_wait_for 5 "grep -q \"^refused: .config: line 3: unknown key leifs.bogus\" \"$V/.status\"" &&
	limit_is 4 && sleep 0.6 && limit_is 4 && grep -q "refused: line 3: unknown key leifs.bogus" "$TRASH/leifs.log"
'
test_expect_success 'a good last line without a newline is applied' '
	printf "[leifs]\n\tlimit = 6" >"$V/.config" && sleep 0.6 && limit_is 6 &&
	! grep -q "^refused:" "$V/.status"
'
test_expect_success 'a trailing NUL byte is refused at once, nothing applied' '
	! bash -c "printf \"[leifs]\n\tlimit = 7\n\0\" >\"\$1/.config\"" sh "$V" 2>err &&
	cat err && grep -q "Invalid argument" err &&
	grep -q "^refused: .config: line 3: .*NUL" "$V/.status" && sleep 0.6 && limit_is 6
'
test_expect_success 'a rewrite refused when its writes paused fails at its next write' '
	python3 - "$V/.config" >out <<-\EOP &&
	import errno, os, sys, time
	fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
	os.write(fd, b"[leifs]\n\tlimit = 8\n\tthreads = maybe")
	time.sleep(1)
	try:
	    os.write(fd, b"\n")
	    print("taken")
	except OSError as e:
	    print(errno.errorcode[e.errno])
	EOP
	cat out && echo EINVAL >expect && test_cmp expect out &&
	grep -q "^refused: .config: line 3: bad value for leifs.threads" "$V/.status" && limit_is 6
'
test_expect_success 'a .config written just before unmount is stored, not dropped' '
	printf "[leifs]\n\tlimit = 5\n" >"$V/.config" && leifs_umount "$M" &&
	leifs_mount "$M" -o "allow_other,source=$S1,cache=$TRASH/cache,timeout=4,refresh=3600" &&
	grep -qx "	limit = 5" "$V/.config"
'
test_done

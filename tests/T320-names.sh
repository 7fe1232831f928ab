#!/usr/bin/env bash
# Hostile view names: every byte value, overlong names, dot tricks, escapes
# that decode to '/' or '%'.  Each is made (and reads back as the query it
# names) or refused with EINVAL; nothing else, and nothing outside the mount.
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
Q="$M/queries"

test_expect_success 'leifs mounts' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/404/" &&
	leifs_mount "$M" -o "source=$H/404/,cache=$TRASH/cache,timeout=3"
'
# mkdir NAME; prints "made", "EINVAL" or what else happened
_try_mkdir() {
	python3 - "$Q" "$1" <<-'EOP'
	import errno, os, sys
	q, name = sys.argv[1], os.fsencode(sys.argv[2])
	try:
	    os.mkdir(os.path.join(os.fsencode(q), name))
	    print("made")
	except OSError as e:
	    print(errno.errorcode.get(e.errno, str(e.errno)))
	EOP
}
try_mkdir() {
	local r
	r=$(_try_mkdir "$1")
	echo "mkdir '$1': $r" >&2
	echo "$r"
}
test_expect_success 'every byte value in a name: made as the query, or EINVAL' '
	python3 - "$Q" >bytes.out <<-'\''EOP'\''
	import errno, os, sys
	q = os.fsencode(sys.argv[1])
	for b in range(1, 256):
	    if b == ord("/"):
	        continue
	    name = b"s:a" + bytes([b]) + b"b"
	    try:
	        os.mkdir(os.path.join(q, name))
	        got = open(os.path.join(q, name, b".query"), "rb").read()
	        want = name.replace(b"%2F", b"/").replace(b"%25", b"%") + b"\n"
	        print(b, "made", "ok" if got == want else "WRONG %r" % got)
	    except OSError as e:
	        print(b, errno.errorcode.get(e.errno, e.errno))
	EOP
	cat bytes.out | awk "{print \$2, \$3}" | sort | uniq -c &&
	! grep -v -E " (made ok|EINVAL)$" bytes.out &&
	for b in $(seq 1 31) 127; do grep -q "^$b EINVAL$" bytes.out || return 1; done &&
	for b in $(seq 128 255); do grep -q "^$b EINVAL$" bytes.out || return 1; done &&
	grep -q "^65 made ok$" bytes.out && grep -q "^37 EINVAL$" bytes.out
'
test_expect_success 'what was made is what is listed, and nothing else' '
	grep -c " made " bytes.out >expect && ls "$Q" | wc -l >actual && test_cmp expect actual
'
test_expect_success 'dot names and overlong names' '
	[ "$(try_mkdir .)" = EEXIST ] && [ "$(try_mkdir ..)" = EEXIST ] &&
	[ "$(try_mkdir .status)" = EEXIST ] &&
	[ "$(try_mkdir "s:$(printf "%0253d" 0)")" = made ] &&
	[ "$(try_mkdir "s:$(printf "%0254d" 0)")" = ENAMETOOLONG ] &&
	[ "$(try_mkdir "")" = EEXIST ]
'
test_expect_success 'escapes decode to / and %, never to a path' '
	[ "$(try_mkdir "s:%2Fetc%2Fpasswd")" = made ] &&
	echo "s:/etc/passwd" >expect && test_cmp expect "$Q/s:%2Fetc%2Fpasswd/.query" &&
	[ "$(try_mkdir "s:%2F.%2F%2Fetc%2Fpasswd")" = made ] &&
	echo "s:/.//etc/passwd" >expect && test_cmp expect "$Q/s:%2F.%2F%2Fetc%2Fpasswd/.query" &&
	# ".." makes a range for Xapian, which public-inbox refuses for s:
	[ "$(try_mkdir "s:%2F..%2F..%2Fetc%2Fpasswd")" = EINVAL ] &&
	grep -q "s:%2F..%2F..%2Fetc%2Fpasswd: the query does not parse: Unknown range operation" "$Q/.status" &&
	[ "$(try_mkdir "%2F")" = EINVAL ] && grep -q "no word" "$Q/.status" &&
	[ "$(try_mkdir "s:100%25")" = made ] && echo "s:100%" >expect && test_cmp expect "$Q/s:100%25/.query" &&
	[ "$(try_mkdir "s:%00")" = EINVAL ] && [ "$(try_mkdir "s:%2")" = EINVAL ] &&
	[ "$(try_mkdir "s:%2e%2e")" = EINVAL ] &&
	[ ! -e /etc/passwd.leifs ] && ! find "$TRASH" -path "$M" -prune -o -name passwd -print | grep .
'
test_expect_success 'refused names say why in queries/.status and create nothing' '
	[ "$(try_mkdir "s:(open")" = EINVAL ] && grep -q "unbalanced" "$Q/.status" &&
	[ "$(try_mkdir "$(printf "s:a\tb")")" = EINVAL ] && grep -q "control character" "$Q/.status" &&
	[ ! -e "$Q/s:(open" ]
'
test_expect_success 'files and other things cannot be made where views live' '
	! touch "$Q/file" 2>/dev/null && ! ln -s x "$Q/link" 2>/dev/null &&
	! mkfifo "$Q/fifo" 2>/dev/null && ! mkdir "$Q/s:a/cur/sub" 2>/dev/null &&
	! mkdir "$Q/s:a/sub" 2>/dev/null && ! mv "$Q/s:a" "$Q/s:b" 2>/dev/null
'
test_expect_success 'the daemon is alive and answers' '
	ls "$Q" >/dev/null && cat "$Q/.status" >/dev/null && mountpoint -q "$M"
'
test_done

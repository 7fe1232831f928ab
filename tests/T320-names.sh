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
	! mkdir "$Q/s:a/sub" 2>/dev/null
'
test_expect_success 'the daemon is alive and answers' '
	ls "$Q" >/dev/null && cat "$Q/.status" >/dev/null && mountpoint -q "$M"
'

# a name is a label once made: mv renames a view, which keeps its query
# and all the user's state; a view is first searched when its mail is
# listed (or its .query written), not when its directory is opened
searches() { curl -fsS "$H/_count/ok"; }
test_expect_success 'mv renames a view: query, messages, flags, hidden and .config kept' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/cache-mv,timeout=3,refresh=3600" &&
	mkdir "$Q/s:hostile" && ls "$Q/s:hostile/cur" >files && [ "$(wc -l <files)" -eq 2 ] &&
	f=$(sed -n 1p files) && g=$(sed -n 2p files) &&
	mv "$Q/s:hostile/cur/$f" "$Q/s:hostile/cur/${f%,*},FS" && rm "$Q/s:hostile/cur/$g" &&
	printf "[leifs]\n\tlimit = 7\n" >"$Q/s:hostile/.config" &&
	mv "$Q/s:hostile" "$Q/hostile mail" && ls "$Q" >views && echo "hostile mail" >expect &&
	test_cmp expect views && echo s:hostile >expect && test_cmp expect "$Q/hostile mail/.query" &&
	ls "$Q/hostile mail/cur" >after && echo "${f%,*},FS" >expect && test_cmp expect after &&
	grep -qx "$(echo "$g" | cut -d. -f2)" "$Q/hostile mail/.unhide" &&
	grep -qx "	limit = 7" "$Q/hostile mail/.config" &&
	grep -q "^hostile mail	fresh	1	0	[^	]*	-	s:hostile$" "$Q/.status" &&
	cat "$Q/hostile mail/.refresh" | grep -q "^hostile mail	0	1	0	fresh	-$"
'
test_expect_success 'a renamed view survives a remount, and mv back and forth is whole' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/cache-mv,timeout=3,refresh=3600" &&
	ls "$Q/hostile mail/cur" >again && test_cmp expect again &&
	(cd "$Q/hostile mail" && mv ../"hostile mail" ../h2 && ls cur >../../../cwd) && test_cmp expect cwd &&
	mv "$Q/h2" "$Q/hostile mail" && ls "$Q/hostile mail/cur" >again && test_cmp expect again &&
	"$LEIFS" --check "$TRASH/cache-mv" >check.out || { cat check.out; false; }
'
test_expect_success 'mv refuses: onto a view, a dot name, in or out of threads/, queries/.status' '
	mkdir "$Q/s:other" &&
	! mv -T "$Q/hostile mail" "$Q/s:other" 2>err && grep -q "exists\|not empty" err &&
	! mv "$Q/hostile mail" "$Q/.hidden" 2>/dev/null &&
	grep -q "rename refused: hostile mail: a view.s name may not start with" "$Q/.status" &&
	mkdir "$M/threads/mv-$$@example.org" &&
	! mv "$M/threads/mv-$$@example.org" "$Q/x" 2>/dev/null &&
	! mv "$Q/s:other" "$M/threads/y@example.org" 2>/dev/null &&
	! mv "$Q/.status" "$Q/status" 2>/dev/null &&
	ls "$Q" | sort >views && printf "%s\n" "hostile mail" s:other | sort >expect && test_cmp expect views
'
test_expect_success 'a view made as a label is not searched before its mail is listed or its .query written' '
	before=$(searches) && mkdir "$Q/rtc work" && ls -a "$Q/rtc work" >/dev/null &&
	(cd "$Q/rtc work" && stat . cur new >/dev/null) && ls -l "$Q" >/dev/null &&
	[ "$(searches)" -eq "$before" ] && grep -q "^state: new$" "$Q/rtc work/.status" &&
	echo "s:hostile OR s:first" >"$Q/rtc work/.query" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$Q/rtc work/.status\"" &&
	[ "$(searches)" -eq $((before + 1)) ] &&
	grep -q "^last-query: .*s:hostile OR s:first" "$Q/rtc work/.status" &&
	mkdir "$Q/s:listed" && [ "$(searches)" -eq $((before + 1)) ] &&
	ls "$Q/s:listed/cur" >/dev/null && [ "$(searches)" -eq $((before + 2)) ]
'
test_expect_success 'mkdir -p with an unescaped /: no search, and .status says to write %2F' '
	before=$(searches) &&
	! mkdir -p "$Q/dfn:drivers/rtc/rtc-ds1307.c" 2>/dev/null &&
	[ "$(searches)" -eq "$before" ] && grep -q "^state: new$" "$Q/dfn:drivers/.status" &&
	grep -q "^error: mkdir refused: dfn:drivers/rtc: a view holds no views; write each ./. of a query as %2F (mkdir .queries/dfn:drivers%2Frtc....), then rmdir .queries/dfn:drivers.\$" "$Q/.status"
'
test_done

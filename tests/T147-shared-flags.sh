#!/usr/bin/env bash
# Flags are a message's, not a view's (flags = shared, the default): seen,
# flagged, replied and trashed set through one view show in every other
# view that holds the message at its next listing, a message seen
# elsewhere leaves new/, and a message that comes back to a view comes
# with the flags it has now, also when no view held it meanwhile.  A
# change is the bits it sets or clears, never a copy of a view's flags.
# Hidden messages, mbsync's ,U= tags and the other flags stay each view's
# own; a view with flags = view keeps all of its flags to itself.  (The union migration of an older cache is
# test-tables'.)
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

M="$TRASH/mnt"
A="$M/queries/s:rtc"
B="$M/queries/s:pcf8563"
E="$M/queries/s:ds1307"

# where OID is in VIEW: "cur/NAME" or "new/NAME"
where() { (cd "$1" && ls cur/* new/* 2>/dev/null | grep "\.$2\.leifs"); }
# the name of OID in VIEW/cur (or new), for a test_wait_for
is_at() { [ "$(where "$1" "$2")" = "$3" ]; }
oid_of() { basename "$1" | cut -d. -f2; }
base_of() { basename "$1" | sed 's/:2,.*//'; }

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
test_expect_success 'three views that share messages' '
	leifs_mount "$M" -o source=$PI_URL,cache=$TRASH/cache,refresh=3600 &&
	mkdir "$A" "$B" && ls "$A/cur" "$B/cur" >/dev/null &&
	f=$(ls "$B/cur" | head -n 1) && O=$(oid_of "$f") && echo "$O" >oid &&
	N=$(base_of "$f") && echo "$N" >name && where "$A" "$O" | grep -q "^cur/" &&
	mid=$(grep -i -m1 "^message-id:" "$B/cur/$f" | sed "s/^[^<]*<//; s/>.*//") &&
	mkdir "$M/threads/$mid" && ls "$M/threads/$mid/cur" >/dev/null &&
	echo "$M/threads/$mid" >thread && where "$M/threads/$mid" "$O" | grep -q "^cur/" &&
	grep -qx "	flags = shared" "$A/.config"
'
O=$(cat oid 2>/dev/null) N=$(cat name 2>/dev/null) C=$(cat thread 2>/dev/null)
test_expect_success 'flagged and seen in one view: so in the others at their next listing' '
	mv "$A/cur/$N:2," "$A/cur/$N:2,FS" &&
	test_wait_for 5 "is_at \"$B\" $O cur/$N:2,FS && is_at \"$C\" $O cur/$N:2,FS"
'
test_expect_success 'and back: unflagged in another view, unflagged in the first' '
	mv "$B/cur/$N:2,FS" "$B/cur/$N:2,S" &&
	test_wait_for 5 "is_at \"$A\" $O cur/$N:2,S && is_at \"$C\" $O cur/$N:2,S"
'
test_expect_success 'the name before goes at once from the others, which had looked it up' '
	stat "$B/cur/$N:2,S" "$C/cur/$N:2,S" >/dev/null &&
	mv "$A/cur/$N:2,S" "$A/cur/$N:2,FS" &&
	test_wait_for 5 "! [ -e \"$B/cur/$N:2,S\" ] && ! [ -e \"$C/cur/$N:2,S\" ]" &&
	[ -e "$B/cur/$N:2,FS" ] && [ -e "$C/cur/$N:2,FS" ] &&
	mv "$A/cur/$N:2,FS" "$A/cur/$N:2,S" &&
	test_wait_for 5 "! [ -e \"$B/cur/$N:2,FS\" ] && [ -e \"$B/cur/$N:2,S\" ]"
'
test_expect_success 'draft (not shared) and a hide stay the view'"'"'s own' '
	mv "$A/cur/$N:2,S" "$A/cur/$N:2,DS" && sleep 1.2 && is_at "$B" $O "cur/$N:2,S" &&
	mv "$A/cur/$N:2,DS" "$A/cur/$N:2,S" &&
	rm "$B/cur/$N:2,S" && [ -z "$(where "$B" $O)" ] && sleep 1.2 &&
	is_at "$A" $O "cur/$N:2,S" && is_at "$C" $O "cur/$N:2,S"
'
test_expect_success 'mbsync'"'"'s ,U= is the view'"'"'s own too' '
	mv "$A/cur/$N:2,S" "$A/cur/$N,U=5:2,S" && mv "$A/cur/$N,U=5:2,S" "$A/cur/$N,U=5:2,RS" &&
	test_wait_for 5 "is_at \"$C\" $O cur/$N:2,RS" && is_at "$A" $O "cur/$N,U=5:2,RS"
'
test_expect_success 'a message seen elsewhere arrives in cur/; one in new/ leaves it when seen' '
	mkdir "$E" && ls "$E/cur" >/dev/null &&
	echo "s:ds1307 OR s:pcf8563" >"$E/.query" && cat "$E/.refresh" >/dev/null &&
	is_at "$E" $O "cur/$N:2,RS" &&
	g=$(ls "$E/new" | head -n 1) && [ -n "$g" ] && P=$(oid_of "$g") &&
	where "$A" $P | grep -q "^cur/" && a=$(where "$A" $P) &&
	stat "$E/new/$g" >/dev/null &&
	mv "$A/$a" "$A/cur/$(base_of "$a"):2,S" &&
	test_wait_for 5 "is_at \"$E\" $P cur/$g:2,S" &&
	test_wait_for 5 "! [ -e \"$E/new/$g\" ]"     # the kernel had looked it up
'
test_expect_success 'a message that leaves and comes back has the flags it has now' '
	echo "s:rtc AND NOT s:pcf8563" >"$A/.query" && cat "$A/.refresh" >/dev/null &&
	[ -z "$(where "$A" $O)" ] &&
	mv "$C/cur/$N:2,RS" "$C/cur/$N:2,FRST" &&
	echo "s:rtc" >"$A/.query" && cat "$A/.refresh" >/dev/null &&
	is_at "$A" $O "cur/$N,U=5:2,FRST"
'
test_expect_success 'flags = view: the view'"'"'s flags are its own, both ways' '
	D="$M/queries/s:pcf8563 AND s:rtc" && mkdir "$D" && ls "$D/cur" >/dev/null &&
	is_at "$D" $O "cur/$N:2,FRST" &&
	last=$(sed -n "s/^last-refresh: //p" "$D/.status") && past_second "$last" &&
	printf "[leifs]\n\tflags = view\n" >"$D/.config" &&
	test_wait_for 30 "! grep -qx \"last-refresh: $last\" \"$D/.status\" && grep -q \"^state: fresh\" \"$D/.status\"" &&
	grep -qx "	flags = view" "$D/.config" &&
	mv "$D/cur/$N:2,FRST" "$D/cur/$N:2,S" && sleep 1.2 && is_at "$A" $O "cur/$N,U=5:2,FRST" &&
	mv "$A/cur/$N,U=5:2,FRST" "$A/cur/$N,U=5:2,F" &&
	test_wait_for 5 "is_at \"$C\" $O cur/$N:2,F" && is_at "$D" $O "cur/$N:2,S"
'
test_expect_success 'a view back to flags = shared changes only what it changes' '
	D="$M/queries/s:pcf8563 AND s:rtc" &&
	last=$(sed -n "s/^last-refresh: //p" "$D/.status") && past_second "$last" &&
	printf "[leifs]\n\tflags = shared\n" >"$D/.config" &&
	test_wait_for 30 "! grep -qx \"last-refresh: $last\" \"$D/.status\" && grep -q \"^state: fresh\" \"$D/.status\"" &&
	mv "$D/cur/$N:2,S" "$D/cur/$N:2,RS" &&
	test_wait_for 5 "is_at \"$A\" $O cur/$N,U=5:2,FR && is_at \"$C\" $O cur/$N:2,FR"
'
test_expect_success 'a message no view holds any more keeps its flags for the next that finds it' '
	Q="$M/queries/s:watchdog AND NOT s:rtc" && mkdir "$Q" && ls "$Q/cur" >/dev/null &&
	q=$(ls "$Q/cur" | head -n 1) && P=$(oid_of "$q") && qb=$(base_of "$q") &&
	qmid=$(grep -i -m1 "^message-id:" "$Q/cur/$q" | sed "s/^[^<]*<//; s/>.*//") &&
	mv "$Q/cur/$q" "$Q/cur/$qb:2,FS" && rmdir "$Q" &&
	mkdir "$M/threads/$qmid" && ls "$M/threads/$qmid/cur" >/dev/null &&
	is_at "$M/threads/$qmid" $P "cur/$qb:2,FS"
'
test_expect_success 'a message hidden meanwhile comes back with the flags it has now' '
	echo all >"$B/.unhide" && is_at "$B" $O "cur/$N:2,FR"
'
test_expect_success 'shared flags survive a remount; a bad flags value is refused' '
	leifs_umount "$M" && "$LEIFS" --check "$TRASH/cache" >check.out &&
	grep -q " 0 wrong counts, 0 bad records, 0 views with wrong counters" check.out &&
	leifs_mount "$M" -o source=$PI_URL,cache=$TRASH/cache,refresh=3600 &&
	is_at "$A" $O "cur/$N,U=5:2,FR" && is_at "$C" $O "cur/$N:2,FR" &&
	! printf "[leifs]\n\tflags = some\n" >"$A/.config" 2>/dev/null &&
	grep -q "bad value for .*flags (shared or view)" "$A/.status"
'
test_done

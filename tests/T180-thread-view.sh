#!/usr/bin/env bash
# threads/: mkdir MOUNT/threads/<message-id> makes a maildir of the whole
# thread, as public-inbox serves it (<url><id>/t.mbox.gz); it refreshes as
# any view (a reply delivered later lands in new/), an unknown id says so
# in .status, it survives a remount, rmdir removes it, and b4 reads it.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"

W="$TRASH/pi"
M="$TRASH/mnt"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/all/"
OPTS="-o source=$URL,cache=$TRASH/cache,refresh=3600,timeout=20"
T="$M/threads"

# thread_oids ESCAPED-ID: the blob ids of the server's t.mbox.gz, sorted
thread_oids() {
	curl -fsS "$URL$1/t.mbox.gz" | gzip -dc | python3 "$TEST_DIR/mbox-oids.py" | sort
}
status() { sed -n "s/^$2: //p" "$1/.status"; }
# reply TO-ID NEW-ID SUBJECT: deliver a reply to linux-rtc
reply() { pi_post "$W" "$TRASH" "$3" "$2" "$1"; }

test_expect_success 'a public-inbox of its own (replies are added to it)' '
	python3 "$TEST_DIR/gen-mail.py" -s 3 -n 20 mail >/dev/null &&
	pi_build "$W" mail && pi_start "$W" "$PORT" "$TRASH"
'
# three threads: a series' cover letter, a reply deep in another thread,
# and a third thread's start, each by the Message-ID of one of its messages
grep -l "^Subject: \[PATCH 0/" mail/linux-rtc/*.eml | head -n 1 >cover-file
COVER=$(sed -n "s/^Message-ID: <\(.*\)>$/\1/p" "$(cat cover-file)")
MID2=$(grep -h "^Message-ID: " $(grep -l "^In-Reply-To: " mail/linux-rtc/*.eml | sed -n 5p) |
	sed "s/^Message-ID: <\(.*\)>$/\1/")
MID3=$(grep -h "^Message-ID: " $(grep -L "^In-Reply-To: " mail/linux-watchdog/*.eml | sed -n 3p) |
	sed "s/^Message-ID: <\(.*\)>$/\1/")

test_expect_success 'leifs mounts; the root has queries/ and threads/' '
	leifs_mount "$M" $OPTS && ls "$M" >actual &&
	printf "%s\n" queries subsystems threads >expect && test_cmp expect actual &&
	[ -z "$(ls "$T")" ]
'
test_expect_success 'mkdir threads/<id> makes a maildir view with the files of a query view' '
	[ -n "$COVER" ] && mkdir "$T/$COVER" && ls -a "$T/$COVER" >actual &&
	printf "%s\n" . .. .config .query .refresh .status .unhide cur new series tmp >expect &&
	test_cmp expect actual
'
test_expect_success 'it holds the whole thread: the blob ids of the server'"'"'s t.mbox.gz' '
	ls "$T/$COVER/cur" >/dev/null && maildir_oids "$T/$COVER" >actual &&
	thread_oids "$COVER" >expect && [ "$(wc -l <expect)" -ge 4 ] &&
	test_cmp expect actual && check_oids "$T/$COVER"/cur/* &&
	grep -q "^state: fresh$" "$T/$COVER/.status" &&
	grep -q "^query: mid:$COVER$" "$T/$COVER/.status"
'
test_expect_success 'angle brackets are optional; any message of a thread gives all of it' '
	[ -n "$MID2" ] && [ -n "$MID3" ] &&
	mkdir "$T/<$MID2>" && mkdir "$T/$MID3" &&
	maildir_oids "$T/<$MID2>" >actual && thread_oids "$MID2" >expect &&
	[ "$(wc -l <expect)" -ge 2 ] && test_cmp expect actual &&
	maildir_oids "$T/$MID3" >actual && thread_oids "$MID3" >expect && test_cmp expect actual &&
	mkdir "$T/<$COVER>" 2>err; grep -q "File exists" err
'
test_expect_success 'threads/ lists the views by id, queries/ does not; queries/.status does' '
	ls "$T" | sort >actual && printf "%s\n" "$COVER" "$MID2" "$MID3" | sort >expect &&
	test_cmp expect actual && [ -z "$(ls "$M/queries")" ] &&
	grep -F "threads/$MID2	fresh" "$M/queries/.status"
'
test_expect_success 'a reply delivered after mkdir arrives in new/ at .refresh; flags kept' '
	f=$(ls "$T/$COVER/cur" | head -n 1) && mv "$T/$COVER/cur/$f" "$T/$COVER/cur/${f}S" &&
	reply "$COVER" "leifs-thread-reply-$$@example.org" "Re: [PATCH 0/3] a late reply" &&
	[ -z "$(ls "$T/$COVER/new")" ] && echo >"$T/$COVER/.refresh" &&
	test_wait_for 20 "[ \$(ls \"$T/$COVER/new\" | wc -l) -eq 1 ]" &&
	grep -q "leifs-thread-reply-$$" "$T/$COVER"/new/* && check_oids "$T/$COVER"/new/* &&
	[ -e "$T/$COVER/cur/${f}S" ] &&
	maildir_oids "$T/$COVER" >actual && thread_oids "$COVER" >expect && test_cmp expect actual
'
# a Message-ID with / and %: "%2F" and "%25" in the name, as in queries/;
# public-inbox escapes both in the URL path
ODD="odd/id%$$@example.org"
ODDNAME="odd%2Fid%25$$@example.org"
ODDURL="odd%2Fid%25$$@example.org"
test_expect_success 'a Message-ID with / and %: named with %2F and %25, fetched escaped' '
	reply "$MID3" "$ODD" "Re: an odd id" &&
	mkdir "$T/<$ODDNAME>" && ls "$T" | grep -qxF "$ODDNAME" &&
	maildir_oids "$T/$ODDNAME" >actual && thread_oids "$ODDURL" >expect &&
	[ "$(wc -l <expect)" -ge 2 ] && test_cmp expect actual &&
	grep -q "^query: mid:$ODD$" "$T/$ODDNAME/.status"
'
test_expect_success 'an unknown Message-ID: the view is there, .status says no such message' '
	mkdir "$T/no-such-id-$$@example.org" && V="$T/no-such-id-$$@example.org" &&
	[ -z "$(find "$V/cur" "$V/new" -type f)" ] &&
	{ grep -q "^state: failed$" "$V/.status" || { cat "$V/.status"; false; }; } &&
	grep "^error: .*127.0.0.1.*no such message <no-such-id-$$@example.org>" "$V/.status" &&
	ls "$T/$COVER/cur" >/dev/null && mountpoint -q "$M"
'
test_expect_success 'not a Message-ID: refused, nothing left' '
	! mkdir "$T/a b" 2>/dev/null && ! mkdir "$T/<a<b>" 2>/dev/null &&
	! mkdir "$T/bad%41" 2>/dev/null && ! mkdir "$T/<>" 2>/dev/null &&
	! mkdir "$T/<..>" 2>/dev/null && ! mkdir "$T/<.>" 2>/dev/null &&
	! mkdir "$T/<.foo>" 2>/dev/null && ! mkdir "$T/<...>" 2>/dev/null &&
	! ls "$T" | grep -q -e "a b" -e "a<b" -e bad -e "^\." &&
	[ "$(ls -a "$T" | grep -c "^\.\.\?$")" -eq 2 ] &&
	grep -q "mkdir refused: threads/" "$M/queries/.status"
'
test_expect_success 'a thread view'"'"'s .query cannot be rewritten' '
	! sh -c "echo s:rtc >\"$T/$COVER/.query\"" 2>/dev/null &&
	echo "mid:$COVER" >expect && test_cmp expect "$T/$COVER/.query"
'
test_expect_success 'a remount keeps the views, their messages and flags' '
	for d in "$COVER" "$MID2" "$MID3" "$ODDNAME"; do
		ls "$T/$d/cur" "$T/$d/new"
	done >before &&
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	for d in "$COVER" "$MID2" "$MID3" "$ODDNAME"; do
		ls "$T/$d/cur" "$T/$d/new"
	done >after && test_cmp before after && [ -e "$T/$COVER/cur/${f}S" ] &&
	ls "$T" | wc -l >n && echo 5 >expect && test_cmp expect n
'
if command -v b4 >/dev/null; then
	# b4 in a HOME of its own; it signs nothing but wants an identity
	test_expect_success 'b4 am -m reads the view: the whole series, in order (-o - for git am)' '
		mkdir -p b4home b4out && git config -f b4home/.gitconfig user.name "leifs test" &&
		git config -f b4home/.gitconfig user.email test@example.org &&
		(cd b4out && HOME="$TRASH/b4home" b4 -q am -m "$T/$COVER" "$COVER" -o . \
			>../b4.log 2>&1 || { cat ../b4.log; false; }) &&
		mbx=$(ls b4out/*.mbx) && grep "^Subject: \[PATCH" "$mbx" >subjects &&
		total=$(sed -n "s/^Subject: \[PATCH[^0-9]*0\/\([0-9]*\)\].*/\1/p" "$(cat cover-file)") &&
		seq "$total" >expect &&
		sed -n "s/^Subject: \[PATCH[^0-9]*\([0-9]*\)\/.*/\1/p" subjects >order &&
		test_cmp expect order &&
		HOME="$TRASH/b4home" b4 -q am -m "$T/$COVER" "$COVER" -o - 2>b4.err >series &&
		grep "^Subject: \[PATCH" series >subjects2 && test_cmp subjects subjects2
	'
else
	say "# skip: b4 am on a thread view (b4 is not installed; Debian 12: apt-get install b4)"
fi
# a local source runs mid:<id> with threads forced on: the message itself
# at least, and nothing outside its thread (the whole thread once the local
# index threads)
L="$TRASH/mnt-local"
test_expect_success 'a local source: the message, and only mail of its thread' '
	leifs_mount "$L" -o "source=v2:$W/linux-rtc,cache=$TRASH/cache-local,timeout=20" &&
	mkdir "$L/threads/<$MID2>" && maildir_oids "$L/threads/$MID2" >actual &&
	grep -q "^state: fresh$" "$L/threads/$MID2/.status" &&
	thread_oids "$MID2" >expect && [ -s actual ] &&
	comm -23 actual expect >outside && [ ! -s outside ] &&
	grep -l "^Message-ID: <$MID2>" "$L/threads/$MID2"/cur/* &&
	mkdir "$L/threads/no-such-$$@example.org" && ls "$L/threads/no-such-$$@example.org/cur" &&
	{ grep "^error: .*no such message <no-such-$$@example.org>" "$L/threads/no-such-$$@example.org/.status" || { cat "$L/threads/no-such-$$@example.org/.status"; false; }; } &&
	leifs_umount "$L"
'
test_expect_success 'rmdir removes a thread view (by either name); mkdir again starts fresh' '
	rmdir "$T/<$MID2>" && rmdir "$T/$ODDNAME" && ! ls "$T" | grep -qxF "$MID2" &&
	! ls "$T" | grep -qxF "$ODDNAME" && ! grep -qF "threads/$MID2" "$M/queries/.status" &&
	mkdir "$T/$MID2" && maildir_oids "$T/$MID2" >actual && thread_oids "$MID2" >expect &&
	test_cmp expect actual && [ -z "$(ls "$T/$MID2/new")" ]
'
# a link to a message, as b4 and lei lcat take one: '/' written %2F (and
# the link's own '%' as %25); the host need not be a source
MID4=$(grep -h "^Message-ID: " $(grep -l "^In-Reply-To: " mail/linux-watchdog/*.eml | sed -n 2p) |
	sed "s/^Message-ID: <\(.*\)>$/\1/")
LORE="https:%2F%2Flore.kernel.org%2Fall%2F"
test_expect_success 'threads/ takes a lore link: the thread of its id, named by the id' '
	[ -n "$MID4" ] && ! ls "$T" | grep -qxF "$MID4" &&
	mkdir "$T/$LORE$MID4%2F" && ls "$T" | grep -qxF "$MID4" &&
	! ls "$T" | grep -q "^https" && maildir_oids "$T/$MID4" >actual &&
	thread_oids "$MID4" >expect && [ -s expect ] && test_cmp expect actual &&
	grep -q "^query: mid:$MID4$" "$T/$MID4/.status" &&
	mkdir "$T/HTTP:%2F%2Fexample.org%2Fr%2F$MID4%2FT%2F#m0123" 2>err; grep -q "File exists" err &&
	mkdir "$T/$LORE$COVER%2Ft.mbox.gz" 2>err; grep -q "File exists" err ||
	{ ls "$T"; cat err; false; }
'
test_expect_success 'a link with an id escaped in its path; a link without an id is refused' '
	reply "$MID4" "sl/ash%$$@example.org" "Re: an escaped id" &&
	mkdir "$T/${LORE}sl%252Fash%2525$$@example.org%2F" &&
	ls "$T" | grep -qxF "sl%2Fash%25$$@example.org" &&
	grep -q "^query: mid:sl/ash%$$@example.org$" "$T/sl%2Fash%25$$@example.org/.status" &&
	ls "$T/sl%2Fash%25$$@example.org/cur" | grep -q . &&
	mkdir "$T/https:%2F%2Fpatchwork.kernel.org%2Fproject%2Flinux-rtc%2Fpatch%2Fsl%252Fash%2525$$@example.org%2F" 2>err;
	grep -q "File exists" err &&
	! mkdir "$T/https:%2F%2Flore.kernel.org" 2>/dev/null &&
	! mkdir "$T/https:%2F%2Fpatchwork.kernel.org%2Fproject%2Flinux-rtc%2Fpatch%2F$MID2%2F" 2>/dev/null &&
	! mkdir "$T/${LORE}a%2520b@x%2F" 2>/dev/null && ! mkdir "$T/${LORE}bad%25zz@x%2F" 2>/dev/null &&
	! mkdir "$T/${LORE}%252E%252E%2FT%2F" 2>/dev/null && ! mkdir "$T/$LORE" 2>/dev/null &&
	! ls "$T" | grep -q -e "^https" -e "a b" -e "^\." &&
	grep -q "mkdir refused: threads/https:%2F%2Flore.kernel.org%2Fall%2F: a link with no Message-ID" "$M/queries/.status"
'
# a thread the archive no longer has (purged, a mirror behind): the view
# keeps what it holds, whatever full searches follow
hostile_start
test_expect_success 'a 404 for a thread the view holds: a failure, nothing swept' '
	test_wait_for 10 "curl -fs \"$H/_ua\" >/dev/null" && mkdir -p "$M-h" &&
	leifs_mount "$M-h" -o "source=$H/ok/,cache=$TRASH/cache-h,refresh=3600,empty_confirm=1" &&
	V="$M-h/threads/gone@example.org" && mkdir "$V" &&
	n=$(ls "$V/cur" | wc -l) && [ "$n" -gt 0 ] &&
	printf "[leifs]\n\tsource = %s\n" "$H/404/" >"$V/.config" && sleep 1 &&
	for i in 1 2 3; do
		echo full >"$V/.refresh" &&
		test_wait_for 10 "! grep -q \"^state: refreshing\" \"$V/.status\"" && sleep 1.2 || return 1
	done &&
	grep "^error: .*no such message <gone@example.org> (the view keeps what it has)" "$V/.status" &&
	[ "$(ls "$V/cur" "$V/new" | grep -c leifs)" -eq "$n" ]
'
leifs_umount "$M-h" 2>/dev/null
test_done

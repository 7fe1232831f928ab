#!/usr/bin/env bash
# series/: every revision of every patch series a view holds is
# VIEW/series/NAME/{am.mbx,cover,info}, NAME being b4's, am.mbx what
# `b4 am` writes for it: compared with b4 0.12 patch by patch (Subject,
# From, Date, Message-Id, body) on generated series (revisions, trailers in
# replies and to the cover, a missing patch, a patch sent twice) and on a
# slice of the shared corpus.  A new Acked-by reply and a new revision show
# after the next refresh; hostile threads give warnings, not crashes;
# series/ is read-only, survives a remount and never touches the maildir.
# A view that holds part of a series gets the rest of its thread in the
# background (compared with b4 given the whole thread), and a trailer in
# a reply its query does not match comes with the next refetch; a query
# rewritten away from the series drops it, and back, it is fetched again.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"

W="$TRASH/pi"
M="$TRASH/mnt"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/all/"
OPTS="-o source=$URL,cache=$TRASH/cache,refresh=3600,timeout=20"
V="$M/queries/s:rtc"
S="$V/series"
# b4 with a HOME of its own: offline, a user that signs nothing here
export HOME="$TRASH/b4-home"
mkdir -p "$HOME"
git config --global user.name "B4 Tester"
git config --global user.email b4-tester@invalid.test

# field NAME KEY: a line of NAME's info
field() { sed -n "s/^$2: //p" "$S/$1/info"; }
# name_of MSGID REVISION: the series directory of that revision
name_of() {
	local d
	for d in "$S"/*/; do
		d=${d%/}
		grep -qx "message-id: <$1>" "$d/info" && grep -qx "revision: $2" "$d/info" &&
			{ basename "$d"; return 0; }
	done
	return 1
}

test_expect_success 'a public-inbox of generated series (and threads that lie)' '
	python3 "$TEST_DIR/gen-series.py" -H -n 12 -t 1790000000 mail >/dev/null &&
	pi_build "$W" mail && pi_start "$W" "$PORT" "$TRASH"
'
test_expect_success 'a view lists series/ beside its maildir; series/ names b4'"'"'s' '
	leifs_mount "$M" $OPTS && mkdir "$V" && ls "$V/cur" >/dev/null &&
	ls "$S" >names && [ "$(wc -l <names)" -ge 20 ] &&
	grep -qx "v2_20[0-9]*_alexandre_belloni_rtc_ds1307_add_support_for_watchdog_timer_0" names &&
	for n in $(cat names); do
		[ -s "$S/$n/am.mbx" ] && [ -s "$S/$n/info" ] || return 1
	done
'
test_expect_success 'series/ of a view with no mail (yet) is an empty directory' '
	mkdir "$M/queries/s:nothing-matches-this" &&
	ls "$M/queries/s:nothing-matches-this/cur" >/dev/null &&
	ls -a "$M/queries/s:nothing-matches-this/series" >empty &&
	printf ".\n..\n" >dots && test_cmp dots empty &&
	rmdir "$M/queries/s:nothing-matches-this"
'
test_expect_success 'every am.mbx and cover equals b4 am'"'"'s, patch by patch' '
	python3 "$TEST_DIR/b4-compare.py" -x hostile-looped@example.org \
		-x hostile-latin1@example.org "$V" b4-out >compare.out 2>&1 ||
		{ cat compare.out; false; } &&
	tail -n 1 compare.out &&
	grep -q "^series [0-9]*, patches [0-9]*, equal [0-9]*, different 0$" compare.out
'
# a view that matched patch 2/2 alone: the rest of each thread is fetched
# in the background, into series/ and never into the maildir
P="$M/queries/s:\"watchdog timer 0 part 2\""
all_of_0() {
	local n k=0
	for n in $(ls "$P/series"); do
		[ "$(field_of "$P" "$n" patches)" = 2/2 ] || return 1
		k=$((k + 1))
	done
	[ $k -ge 2 ]
}
field_of() { sed -n "s/^$3: //p" "$1/series/$2/info"; }
test_expect_success 'a view holding part of a series has the whole of it under series/' '
	mkdir "$P" && ls "$P/cur" >cur.before && [ -s cur.before ] &&
	(cd "$P/cur" && grep -h "^Subject:" $(cat ../../../../cur.before)) >subjects &&
	! grep -v "timer 0 part 2" subjects &&
	ls "$P/series" >/dev/null && test_wait_for 20 all_of_0 &&
	ls "$P/series" >part.names && for n in $(cat part.names); do
		grep -qx "$n" names && cmp "$P/series/$n/am.mbx" "$S/$n/am.mbx" &&
		! grep -q "^missing:" "$P/series/$n/info" || return 1
	done &&
	grep -c "^Subject: \[PATCH" "$P"/series/*/am.mbx | grep -q ":2$" &&
	python3 "$TEST_DIR/b4-compare.py" -a "$V" "$P" b4-part >part.out 2>&1 ||
		{ cat part.out; false; } &&
	grep -q "^series [1-9][0-9]*, patches [0-9]*, equal [0-9]*, different 0$" part.out &&
	ls "$P/cur" >cur.after && test_cmp cur.before cur.after && [ -z "$(ls "$P/new")" ]
'
test_expect_success 'the fetched rest stays across a remount and goes with the view' '
	leifs_umount "$M" && leifs_mount "$M" $OPTS -o series_refetch=1 &&
	ls "$P/series" >part.again && test_cmp part.names part.again &&
	n=$(head -n 1 part.names) && cmp "$P/series/$n/am.mbx" "$S/$n/am.mbx" &&
	rm -rf "$P" && ! [ -e "$P" ] &&
	leifs_umount "$M" && "$LEIFS" --check "$TRASH/cache" >check.out ||
		{ cat check.out; false; } &&
	! grep -q "series:" check.out && leifs_mount "$M" $OPTS -o series_refetch=1 &&
	ls "$S" >/dev/null
'
# a series of today, and a trailer given later in a reply the view's
# query does not match: a refetch (series_refetch) brings it
post() {        # post FILE SUBJECT MSGID [PARENT] [BODY]
	{
		printf "From: %s\nTo: linux-rtc@vger.kernel.org\n" "${FROM:-Fresh Author <fresh@example.org>}"
		printf "Subject: %s\nDate: %s\nMessage-ID: <%s>\n" "$2" "$(date -R)" "$3"
		[ -z "$4" ] || printf "In-Reply-To: <%s>\nReferences: <%s>\n" "$4" "$4"
		printf "\n%b" "$5"
	} >"$1"
}
F="$M/queries/s:\"fresh widget part 2\""
PATCH="Fresh.\n\nSigned-off-by: Fresh Author <fresh@example.org>\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
test_expect_success 'a trailer in a reply the view does not match comes with a refetch' '
	post f0.eml "[PATCH 0/2] rtc: fresh widget" fresh-0@example.org "" "Two.\n" &&
	post f1.eml "[PATCH 1/2] rtc: fresh widget part 1" fresh-1@example.org fresh-0@example.org "$PATCH" &&
	post f2.eml "[PATCH 2/2] rtc: fresh widget part 2" fresh-2@example.org fresh-0@example.org "$PATCH" &&
	pi_add_all "$W" linux-rtc "$TRASH" f0.eml f1.eml f2.eml &&
	mkdir "$F" && [ "$(ls "$F/cur" | wc -l)" = 1 ] &&
	test_wait_for 20 "grep -qx \"patches: 2/2\" \"\$F\"/series/*/info" &&
	FROM="Fresh Acker <acker@example.org>" post f3.eml "Re: [PATCH 1/2] rtc: fresh widget part 1" fresh-3@example.org fresh-1@example.org \
		"Acked-by: Fresh Acker <acker@example.org>\n" &&
	pi_add "$W" linux-rtc f3.eml "$TRASH" &&
	test_wait_for 20 "cat \"\$F/.refresh\" >/dev/null &&
		grep -q \"^Acked-by: Fresh Acker <acker@example.org>\" \"\$F\"/series/*/am.mbx" &&
	[ "$(ls "$F/cur" | wc -l)" = 1 ] && [ -z "$(ls "$F/new")" ]
'
test_expect_success 'a view whose query leaves a series loses it; back, the rest is fetched again' '
	[ "$(ls "$F/series")" = "$(date +%Y%m%d)_fresh_rtc_fresh_widget" ] &&
	printf "%s\n" "s:\"convert to dt schema 4\"" >"$F/.query" && cat "$F/.refresh" >/dev/null &&
	[ "$(ls "$F/new" | wc -l)" -ge 10 ] && [ -z "$(ls "$F/cur")" ] &&
	ls "$F/series" >now && ! grep -q fresh now &&
	grep -qx "v3_[0-9]*_krzk_rtc_ds1307_convert_to_dt_schema_4" now &&
	printf "%s\n" "s:\"fresh widget part 2\"" >"$F/.query" && cat "$F/.refresh" >/dev/null &&
	test_wait_for 20 "[ \"\$(ls \"\$F/series\")\" = $(date +%Y%m%d)_fresh_rtc_fresh_widget ] &&
		grep -qx \"patches: 2/2\" \"\$F\"/series/*/info" &&
	grep -q "^Acked-by: Fresh Acker <acker@example.org>" "$F"/series/*/am.mbx
'
test_expect_success 'info: the Message-ID, revision, patches, missing, trailers, base, revisions' '
	n=v2_20[0-9]*_alexandre_belloni_rtc_ds1307_add_support_for_watchdog_timer_0 &&
	n=$(cd "$S" && echo $n) && [ -d "$S/$n" ] &&
	[ "$(field "$n" revision)" = 2 ] && [ "$(field "$n" patches)" = 2/2 ] &&
	field "$n" base-commit | grep -qE "^[0-9a-f]{40}$" &&
	field "$n" message-id | grep -q "series@example.org>$" &&
	old=$(field "$n" older) && new=$(field "$n" newer) &&
	[ "$old" = "${n#v2_}" ] && case $new in v3_*) ;; *) false ;; esac &&
	[ "$(field "$new" older)" = "$old $n" ] &&
	[ -s "$S/$n/cover" ] && grep -q "^Subject: \[PATCH v2 0/2\]" "$S/$n/cover" &&
	grep -l "^missing: " "$S"/*/info >missing && [ -s missing ] &&
	grep -q "^warning: thread incomplete" $(cat missing) &&
	grep -q "^trailers-added: [1-9]" "$S"/*/info
'
test_expect_success 'a quoted "> Acked-by:" is no trailer; a reply to the cover is a warning' '
	! grep -h "Somebody Else" "$S"/*/am.mbx &&
	grep -q "^warning: trailer sent to the cover letter" "$S"/*/info
'
test_expect_success 'a partial reroll has the patches it did not resend from the revision before' '
	v1=$(name_of reroll-cover@example.org 1) && v2=$(name_of reroll-cover@example.org 2) &&
	[ "$(field "$v2" patches)" = 3/3 ] && ! grep -q "^missing:" "$S/$v2/info" &&
	grep -qx "warning: v2 is a partial reroll: patches 1 3 and the cover from v1 .*" "$S/$v2/info" &&
	grep "^Subject: " "$S/$v2/am.mbx" >subjects &&
	printf "Subject: [PATCH v2 %d/3] rtc: ds1307: partial reroll part %d\n" 1 1 2 2 3 3 >want &&
	test_cmp want subjects && grep -q "^Acked-by: Guenter Roeck" "$S/$v2/am.mbx" &&
	[ "$(grep -c "^Reviewed-by: Guenter Roeck" "$S/$v2/am.mbx")" = 1 ] &&
	[ "$(grep -c "^warning: trailer given to v1.s patch 2/3, not carried: Reviewed-by" "$S/$v2/info")" = 1 ] &&
	[ "$(field "$v1" newer)" = "$v2" ] && [ "$(field "$v1" patches)" = 3/3 ] &&
	f2=$(name_of reroll1-cover@example.org 2) && [ "$(field "$f2" patches)" = 3/3 ] &&
	grep -q "^Subject: \[PATCH 0/3\] rtc: ds1307: first rerolled" "$S/$f2/cover" &&
	[ "$(grep -c "^warning: trailer sent to the cover letter" "$S/$f2/info")" = 1 ]
'
test_expect_success 'threads that lie: warnings, and no series made of nothing' '
	h=$(name_of hostile-cover@example.org 1) &&
	grep -q "^warning: two different messages are patch 2/5" "$S/$h/info" &&
	grep -q "^warning: patch 3/5 (<hostile-3@example.org>) has no diff" "$S/$h/info" &&
	grep -q "^Tested-by: Guenter Roeck" "$S/$h/am.mbx" &&
	! grep -q "not an address" "$S/$h/am.mbx" &&
	grep -qx "From: \"J. Random Hacker\" <jrh@example.org>" "$S/$h/am.mbx" &&
	grep -qx "From: Al <al@example.org>" "$S/$h/am.mbx" &&
	grep -qx "From: bare@example.org" "$S/$h/am.mbx" &&
	! name_of hostile-lone@example.org 1 &&
	m=$(name_of hostile-many@example.org 1) && grep -qx "patches: 1/2000" "$S/$m/info" &&
	l=$(name_of hostile-looped@example.org 1) &&
	! grep -q "^Reviewed-by: Guenter Roeck" "$S/$l/am.mbx" &&   # b4 walks that loop forever
	grep -q "^Acked-by: Guenter Roeck" "$S/$l/am.mbx" &&
	n8=$(name_of hostile-latin1@example.org 1) && [ -s "$S/$n8/am.mbx" ] &&
	ls "$S" >/dev/null
'
test_expect_success 'series/ is read-only and outside the maildir' '
	n=$(head -n 1 names) &&
	! echo x >>"$S/$n/am.mbx" 2>err && grep -q "Read-only" err &&
	! mkdir "$S/new-one" 2>/dev/null && ! touch "$S/$n/cover2" 2>/dev/null &&
	! mv "$S/$n/info" "$S/$n/info2" 2>/dev/null &&
	# rm is no error (rm -rf VIEW goes on to the rmdir that removes it)
	# and removes nothing: series are derived
	rm "$S/$n/info" && rmdir "$S/$n" && [ -s "$S/$n/info" ] && [ -d "$S/$n" ] &&
	[ -z "$(ls "$V/new")" ] && ls "$V/cur" | grep -vc ":2,$" >flagged;
	[ "$(cat flagged)" = 0 ]
'
# a new Acked-by to patch 1 of a series, and a new revision of another
test_expect_success 'a new reply with Acked-by shows in am.mbx after the refresh' '
	n=$(cd "$S" && echo v2_20*_alexandre_belloni_rtc_ds1307_add_support_for_watchdog_timer_0) &&
	p1=$(sed -n "s/^Message-Id: <\(.*\)>$/\1/p" "$S/$n/am.mbx" | head -n 1) &&
	exec 7<"$S/$n/am.mbx" && cat <&7 >before.mbx &&   # in the page cache, held open
	size=$(stat -c %s "$S/$n/am.mbx") && added=$(field "$n" trailers-added) &&
	cat >ack.eml <<-EOF &&
	From: Late Reviewer <late@example.net>
	To: linux-rtc@vger.kernel.org
	Subject: Re: [PATCH v2 1/2] rtc: ds1307: add support for watchdog timer 0 part 1
	Date: $(date -R)
	Message-ID: <late-ack@example.net>
	In-Reply-To: <$p1>
	References: <$p1>

	Acked-by: Late Reviewer <late@example.net>
	EOF
	pi_add "$W" linux-rtc ack.eml "$TRASH" && cat "$V/.refresh" >/dev/null &&
	grep -q "^Acked-by: Late Reviewer <late@example.net>$" "$S/$n/am.mbx" &&
	exec 7<&- && [ "$(stat -c %s before.mbx)" = "$size" ] &&
	[ "$(stat -c %s "$S/$n/am.mbx")" -gt "$size" ] &&
	[ "$(field "$n" trailers-added)" = $((added + 1)) ]
'
test_expect_success 'a new revision is a new directory; the older one says newer:' '
	n=$(cd "$S" && echo 20*_krzk_rtc_ds1307_convert_to_dt_schema_4) && [ -d "$S/$n" ] &&
	cover=$(field "$n" message-id) && cover=${cover#<} && cover=${cover%>} &&
	before=$(ls "$S" | wc -l) &&
	for k in 0 1; do
		{
			printf "From: Krzysztof Kozlowski <krzk@kernel.org>\nTo: linux-rtc@vger.kernel.org\n"
			if [ $k = 0 ]; then
				printf "Subject: [PATCH v9 0/1] rtc: ds1307: convert to dt schema 4\n"
			else
				printf "Subject: [PATCH v9 1/1] rtc: ds1307: convert to dt schema 4 part 1\n"
			fi
			printf "Date: %s\nMessage-ID: <v9-%s@example.org>\n" "$(date -R)" $k
			if [ $k = 0 ]; then
				printf "In-Reply-To: <%s>\nReferences: <%s>\n\n" "$cover" "$cover"
				printf "Again.\n\n 1 file changed, 1 insertion(+)\n"
			else
				printf "In-Reply-To: <v9-0@example.org>\nReferences: <v9-0@example.org>\n\n"
				printf "Nine.\n\nSigned-off-by: K <krzk@kernel.org>\n---\n"
				printf "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
			fi
		} >v9-$k.eml && pi_add "$W" linux-rtc v9-$k.eml "$TRASH" || return 1
	done &&
	cat "$V/.refresh" >/dev/null &&
	v9=$(name_of v9-0@example.org 9) && [ "$(ls "$S" | wc -l)" = $((before + 1)) ] &&
	case $v9 in v9_*_krzk_rtc_ds1307_convert_to_dt_schema_4) ;; *) false ;; esac &&
	field "$n" newer | grep -qw "$v9" && grep -q "^Subject: \[PATCH v9 1/1\]" "$S/$v9/am.mbx"
'
test_expect_success 'rm -rf of a view with series/ removes the view' '
	mkdir "$M/queries/s:hostile" && ls "$M/queries/s:hostile/cur" >/dev/null &&
	[ -n "$(ls "$M/queries/s:hostile/series")" ] &&
	rm -rf "$M/queries/s:hostile" && ! [ -e "$M/queries/s:hostile" ]
'
test_expect_success 'names, bytes and times survive a remount' '
	ls "$S" >before && for n in $(cat before); do
		stat -c "%n %s %Y" "$S/$n/am.mbx" "$S/$n/info"
	done >before.stat && cat "$S"/*/am.mbx | md5sum >before.sum &&
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	ls "$S" >after && test_cmp before after && for n in $(cat after); do
		stat -c "%n %s %Y" "$S/$n/am.mbx" "$S/$n/info"
	done >after.stat && test_cmp before.stat after.stat &&
	cat "$S"/*/am.mbx | md5sum >after.sum && test_cmp before.sum after.sum
'
test_expect_success 'a thread view has series/ too' '
	cover=$(name_of hostile-cover@example.org 1) &&
	mkdir "$M/threads/hostile-cover@example.org" &&
	ls "$M/threads/hostile-cover@example.org/cur" >/dev/null &&
	[ "$(ls "$M/threads/hostile-cover@example.org/series")" = "$cover" ] &&
	cmp "$M/threads/hostile-cover@example.org/series/$cover/am.mbx" "$S/$cover/am.mbx"
'
test_expect_success 'git am applies an am.mbx' '
	n=$(cd "$S" && echo v9_*) && git init -q repo && (
		cd repo && git config user.name T && git config user.email t@example.org &&
		echo a >f && git add f && git commit -qm base &&
		git am -q "$S/$n/am.mbx" && [ "$(cat f)" = b ] &&
		git log -1 --format=%s | grep -qx "rtc: ds1307: convert to dt schema 4 part 1"
	)
'

# the shared corpus: real series, every fourth compared with b4
PISERVE="$SHARED_DIR/corpus/pi-serve"
if [ -n "${T190_NOCORPUS:-}" ] || [ ! -x "$PISERVE" ]; then
	test_skip 'series of the real corpus slice against b4' "no $SHARED_DIR/corpus here"
else
	CPORT=$(free_port)
	test_expect_success 'the corpus slice (pi-serve -n 2000) behind an httpd' '
		corpus_serve 2000 "$CPORT"
	'
	test_expect_success 'corpus: series of a real view equal b4 am'"'"'s, patch by patch' '
		leifs_mount "$TRASH/mnt-c" -o "source=http://127.0.0.1:$CPORT/all/,cache=$TRASH/cache-c,timeout=60,series_fetch=0" &&
		CV="$TRASH/mnt-c/queries/s:rtc" && mkdir "$CV" &&
		ls "$CV/cur" >/dev/null && [ "$(ls "$CV/series" | wc -l)" -ge 50 ] &&
		python3 "$TEST_DIR/b4-compare.py" "$CV" b4-corpus 4 >corpus.out 2>&1 ||
			{ grep -v "^  \|^Running\|^Analyzing\|^Checking\|^---" corpus.out | head -50; false; } &&
		tail -n 1 corpus.out &&
		grep -q "^series [0-9]*, patches [0-9]*, equal [0-9]*, different 0$" corpus.out
	'
fi
test_done

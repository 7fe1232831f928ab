#!/usr/bin/env bash
# Views that stay current: incremental refresh on listing (with the dt:
# bound), flags and deletes that survive refreshes and remounts, .refresh,
# rewriting .query, offline and catching up, the refresh_all schedule,
# readers during refreshes.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"

W="$TRASH/pi"
M="$TRASH/mnt"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/all/"
OPTS="-o source=$URL,cache=$TRASH/cache,refresh=1,timeout=10"
V="$M/queries/s:rtc"
n=0

# new_mail SUBJECT: a fresh message for linux-rtc, delivered with public-inbox-mda
new_mail() {
	n=$((n + 1))
	pi_post "$W" "$TRASH" "$1" "leifs-new-$n-$$@example.org"
}
status() { sed -n "s/^$2: //p" "$1/.status"; }
# all_gone VIEW [-v]: no name in `before` that is not in `after` is there
# (the kernel is told on a thread of its own: wait for it)
all_gone() {
	comm -23 before after | while read -r f; do
		! [ -e "$1/$f" ] || { [ -z "${2-}" ] || echo "still there: $f"; exit 1; }
	done
}

test_expect_success 'a public-inbox of its own (mail is added to it)' '
	python3 "$TEST_DIR/gen-mail.py" -s 3 -n 20 mail >/dev/null &&
	pi_build "$W" mail && pi_start "$W" "$PORT" "$TRASH"
'
test_expect_success 'first listing fills cur/' '
	leifs_mount "$M" $OPTS && mkdir "$V" &&
	ls "$V/cur" >cur0 && status "$V" last-query >q &&
	[ "$(wc -l <cur0)" -gt 5 ] && [ -z "$(ls "$V/new")" ] &&
	echo "s:rtc" >expect && test_cmp expect q
'
# quiet_after_search: end a search, then stat the view just past the next
# whole second but less than the interval (1 s) after that search ended;
# fails if a search starts.  Returns 2 when the machine was too slow to
# stat within the interval (nothing could be told).  The search ended
# after tp, the time taken before the last read that did not see it end.
quiet_after_search() {
	local before t s tp now i=0
	before=$(status "$V" last-refresh)
	sleep 1.1 && tp=$(date +%s.%N) && touch "$V/.refresh" || return 1
	while :; do
		now=$(date +%s.%N)
		[ "$(status "$V" last-refresh)" != "$before" ] &&
			grep -q "^state: fresh" "$V/.status" && break
		tp=$now i=$((i + 1))
		[ $i -lt 400 ] || return 1
		sleep 0.05
	done
	t=$(date +%s.%N)
	while [ "$(date +%s)" = "${t%.*}" ]; do sleep 0.01; done
	stat "$V" "$V/new" >/dev/null && status "$V" state >state &&
	s=$(date +%s.%N) &&
	if awk "BEGIN { exit !($s - $tp >= 0.95) }"; then return 2; fi
	echo fresh >expect && test_cmp expect state
}
test_expect_success 'no search starts before the interval has passed, across a second boundary' '
	i=0 rc=2 &&
	while [ $rc -eq 2 ] && [ $i -lt 8 ]; do
		i=$((i + 1)) && quiet_after_search; rc=$?
	done &&
	[ $rc -eq 0 ]
'
test_expect_success 'new mail appears in new/ after the refresh interval, via dt:' '
	new_mail "[PATCH] rtc: brand new driver" && sleep 1.2 &&
	ls "$V/cur" >/dev/null &&
	test_wait_for 20 "[ \$(ls \"$V/new\" | wc -l) -eq 1 ]" &&
	grep -l "leifs-new-1-" "$V"/new/* &&
	check_oids "$V"/new/* &&
	ls "$V/cur" >cur1 && test_cmp cur0 cur1 &&
	status "$V" last-query | grep -E "^\(s:rtc\) AND dt:[0-9]{14}\.\.$"
'
f=$(head -n 1 "$TRASH/cur0") g=$(sed -n 2p "$TRASH/cur0")
test_expect_success 'flags and deletes survive a forced full refresh' '
	mv "$V/cur/$f" "$V/cur/${f}FS" && rm "$V/cur/$g" &&
	last=$(status "$V" last-refresh) &&
	echo full >"$V/.refresh" &&
	test_wait_for 20 "[ \"\$(status \"$V\" last-query)\" = s:rtc ] && grep -q \"^state: fresh\" \"$V/.status\"" &&
	[ -e "$V/cur/${f}FS" ] && [ ! -e "$V/cur/$g" ] && ! ls "$V/new" "$V/cur" | grep -q "${g%%:*}" &&
	ls "$V/new" | wc -l >nnew && echo 1 >expect && test_cmp expect nnew
'
test_expect_success 'touch .refresh refreshes now' '
	new_mail "[PATCH] rtc: second new driver" &&
	touch "$V/.refresh" &&
	test_wait_for 20 "[ \$(ls \"$V/new\" | wc -l) -eq 2 ]"
'
test_expect_success 'a bad .query is refused and changes nothing' '
	! sh -c "echo \"(s:rtc\" >\"$V/.query\"" 2>err && cat err &&
	echo s:rtc >expect && test_cmp expect "$V/.query"
'
test_expect_success 'writing .query re-runs the search; flags of what stays are kept' '
	sub=$(grep -l "^Subject: .*rtc: core" "$V"/cur/* | head -n 1) &&
	mv "$sub" "$sub"F && sub=$(basename "$sub")F &&
	ls -l "$V/cur" "$V/new" >/dev/null &&   # the kernel looks each name up
	(cd "$V" && find cur new -type f | sort) >before &&
	echo "s:rtc AND s:core" >"$V/.query" &&
	echo "s:rtc AND s:core" >expect && test_cmp expect "$V/.query" &&
	test_wait_for 20 "[ \"\$(status \"$V\" last-query)\" = \"s:rtc AND s:core\" ] && grep -q \"^state: fresh\" \"$V/.status\"" &&
	[ -e "$V/cur/$sub" ] &&
	curl -fsS -d "" "${URL}?q=s%3Artc+AND+s%3Acore&x=m" | gzip -dc >answer &&
	grep -c "^From mboxrd@z" answer >expect && find "$V/cur" "$V/new" -type f | wc -l >actual &&
	{ test_cmp expect actual || { cat "$V/.status"; ls -l "$V/cur" "$V/new"; grep -H "^Subject" "$V"/cur/* "$V"/new/*; false; }; } &&
	! grep -l "brand new" "$V"/cur/* "$V"/new/* 2>/dev/null &&
	# a name the search dropped is gone now, not at its entry timeout
	(cd "$V" && find cur new -type f | sort) >after && [ $(comm -23 before after | wc -l) -gt 0 ] &&
	test_wait_for 5 "all_gone \"$V\"" || { all_gone "$V" -v; false; }
'
test_expect_success '.query takes effect at each write: no newline; a second write continues the first' '
	printf "s:rtc" >"$V/.query" && echo s:rtc >expect && test_cmp expect "$V/.query" &&
	python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_TRUNC); os.write(fd, b\"s:rtc\"); os.write(fd, b\" AND s:core\\n\"); os.close(fd)" "$V/.query" &&
	echo "s:rtc AND s:core" >expect && test_cmp expect "$V/.query" &&
	grep -q "^query: s:rtc AND s:core$" "$V/.status" &&
	test_wait_for 20 "[ \"\$(status \"$V\" last-query)\" = \"s:rtc AND s:core\" ] && grep -q \"^state: fresh\" \"$V/.status\""
'
test_expect_success 'server down: listings answer from the cache, .status says so' '
	pi_stop "$TRASH" && ls "$V/cur" | sort >had && sleep 1.2 &&
	start=$(date +%s) && ls "$V/cur" | sort >now && [ $(($(date +%s) - start)) -le 2 ] &&
	test_cmp had now &&
	test_wait_for 15 "grep -q \"^state: failed\" \"$V/.status\"" &&
	grep "^error: .*onnect" "$V/.status"
'
test_expect_success 'server back: the view catches up with mail sent meanwhile' '
	new_mail "[PATCH] rtc: core: written while offline" &&
	pi_start "$W" "$PORT" "$TRASH" && sleep 1.2 && ls "$V/cur" >/dev/null &&
	test_wait_for 30 "grep -q -l \"written while offline\" \"$V\"/new/* 2>/dev/null" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$V/.status\""
'
test_expect_success 'readers see whole files while refreshes run' '
	pids="" &&
	for i in 1 2 3; do
		( for j in $(seq 10); do
			for x in "$V"/cur/* "$V"/new/*; do [ -e "$x" ] && check_oids "$x" || true; done
		  done >reader-$i.out 2>&1 ) &
		pids="$pids $!"
	done
	for j in $(seq 8); do echo full >"$V/.refresh"; sleep 0.3; done
	wait $pids &&
	# what a reader may meet is a message swept meanwhile (an error at
	# open or, with no open round trip, at read); what it must never meet
	# is bytes that are not the message its name says
	{ grep -v "No such file" reader-*.out | head -n 20; ! grep -q "bad oid" reader-*.out; }
'
test_expect_success 'flags and deletes survive a remount' '
	ls "$V/cur" "$V/new" | sort >before &&
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	ls "$V/cur" "$V/new" | sort >after && test_cmp before after && [ -e "$V/cur/$sub" ]
'
# hidden messages and the view's own flags go with it; seen, flagged,
# replied and trashed are the message's (kept by blob id, as lei does)
test_expect_success 'rmdir then mkdir starts fresh: nothing hidden, only shared flags' '
	rmdir "$V" && mkdir "$V" && ls "$V/cur" >/dev/null &&
	! ls "$V/cur" | grep -q ":2,.*[^FRST]" && [ -z "$(ls "$V/new")" ] &&
	ls "$V/cur" | grep -q "${g%%:*}"
'
# a client that only stats the maildir (neomutt's mail_check) gets new
# mail: a stat of new/ or cur/ refreshes a view due by its interval, in the
# background; nothing else lists the view meanwhile (a view with mail:
# neomutt reads an empty maildir again at each check anyway)
if command -v neomutt >/dev/null && command -v tmux >/dev/null; then
	. "$TEST_DIR/lib-tmux.sh"
	test_expect_success 'an open neomutt shows new mail within the interval + mail_check, nobody listing' '
		L="$M/queries/s:rtc OR s:livemail" &&
		mkdir "$L" && cnt=$(ls "$L/cur" | wc -l) && [ "$cnt" -gt 5 ] &&
		cat >"$TRASH/neomuttrc-live" <<-EOC &&
		set mbox_type=Maildir
		set folder="$M/queries"
		set header_cache=""
		set mail_check=5
		set timeout=1
		set status_format="STATUS msgs=%m"
		set index_format="IDX %s"
		set help=no
		EOC
		tmux_start live "TERM=xterm-256color neomutt -n -F $TRASH/neomuttrc-live -f \"$L\"" &&
		tmux_wait live "STATUS msgs=$cnt( |$)" 20 &&
		new_mail "[PATCH] rtc: livemail arrives" &&
		start=$(date +%s) &&
		tmux_wait live "STATUS msgs=$((cnt + 1))( |$)" 20 &&
		grep -l "livemail arrives" "$L"/new/* &&
		echo "shown after $(($(date +%s) - start)) s" &&
		[ $(($(date +%s) - start)) -le 10 ] &&
		tmux_keys live q && test_wait_for 10 "tmux_gone live"
	'
	tmux_stop
else
	test_skip 'an open neomutt shows new mail' 'neomutt or tmux is not installed'
fi
test_expect_success 'a stat of a view due for a refresh starts one, and does not wait for it' '
	before=$(status "$V" last-refresh) && sleep 1.1 &&
	timeout 2 stat "$V/new" >/dev/null &&
	test_wait_for 10 "[ \"\$(status \"$V\" last-refresh)\" != \"$before\" ]"
'
test_expect_success 'listings within the refresh interval do not search' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$URL,cache=$TRASH/cache,refresh=3600,timeout=10" &&
	before=$(status "$V" last-refresh) && past_second "$before" &&
	ls "$V/cur" "$V/new" >/dev/null && ls "$V" >/dev/null && ls "$V/cur" >/dev/null &&
	stat "$V" "$V/cur" "$V/new" >/dev/null &&
	sleep 0.5 && [ "$(status "$V" last-refresh)" = "$before" ] &&
	grep -q "^state: fresh" "$V/.status"
'
test_expect_success 'an interval of centuries holds after a search of this mount (no overflow)' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$URL,cache=$TRASH/cache-years,refresh=9999999999,timeout=10" &&
	Y="$M/queries/s:core" && mkdir "$Y" && ls "$Y/cur" >/dev/null &&
	before=$(status "$Y" last-refresh) && past_second "$before" &&
	ls "$Y/cur" >/dev/null && stat "$Y" "$Y/new" >/dev/null && sleep 0.5 &&
	[ "$(status "$Y" last-refresh)" = "$before" ] && grep -q "^state: fresh" "$Y/.status"
'
test_expect_success 'refresh_all refreshes views nobody lists' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$URL,cache=$TRASH/cache,refresh=100000,refresh_all=1,timeout=10" &&
	c0=$(status "$V" messages) && new_mail "[PATCH] rtc: found by the schedule" &&
	test_wait_for 20 "[ \$(status \"$V\" messages) -gt $c0 ]"
'
# a refresh that waits, as lei up before a script: reading .refresh
# (queries/.refresh: every view) runs it and returns once it has ended
W2="$M/queries/s:waited"
W3="$M/queries/s:watchdog"
test_expect_success 'reading VIEW/.refresh returns once the refresh has ended, with a summary' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$URL,cache=$TRASH/cache-wait,refresh=3600,timeout=10" &&
	mkdir "$W2" "$W3" && ls "$W2/cur" "$W3/cur" >/dev/null &&
	new_mail "rtc: waited for" && cat "$W2/.refresh" >summary &&
	ls "$W2/new" >new && [ "$(wc -l <new)" -eq 1 ] && grep -q "rtc: waited for" "$W2/new/$(cat new)" &&
	total=$(ls "$W2/cur" "$W2/new" | grep -c leifs) &&
	printf "name\tadded\tmessages\tnew\tstate\terror\ns:waited\t1\t%s\t1\tfresh\t-\n" "$total" >expect &&
	test_cmp expect summary && grep -q "^state: fresh" "$W2/.status"
'
test_expect_success 'queries/.refresh: every view, each with what it added; errors in the text, status 0' '
	printf "[leifs]\n\tsource = http://127.0.0.1:1/\n" >"$W3/.config" &&
	new_mail "rtc: waited for again" && cat "$M/queries/.refresh" >summary &&
	sed -n 1p summary | grep -qx "name	added	messages	new	state	error" &&
	grep -q "^s:waited	1	[0-9]*	2	fresh	-$" summary &&
	grep -q "^s:watchdog	0	[0-9]*	0	failed	.*127.0.0.1:1" summary &&
	[ "$(wc -l <summary)" -eq 3 ] && [ "$(ls "$W2/new" | wc -l)" -eq 2 ]
'
test_expect_success 'stat, ls -l, touch and a write of .refresh wait for nothing; a new read refreshes again' '
	[ "$(stat -c %s "$W2/.refresh")" -eq 0 ] && ls -l "$W2" >/dev/null &&
	touch "$W2/.refresh" && echo >"$W2/.refresh" &&
	test_wait_for 10 "grep -q \"^state: fresh\" \"$W2/.status\"" &&
	new_mail "rtc: waited for a third time" &&
	cat "$W2/.refresh" >summary && grep -q "^s:waited	1	[0-9]*	3	fresh	-$" summary &&
	[ "$(ls "$W2/new" | wc -l)" -eq 3 ]
'
test_done

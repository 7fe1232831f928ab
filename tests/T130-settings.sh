#!/usr/bin/env bash
# Views as lei's saved searches: .config per view (threads, dedupe, source,
# limit, refresh) over the command line over the config file, each setting
# equal to what lei q writes with the matching options against the same
# public-inbox-httpd; several sources searched in parallel, each with its
# own bookmark and status line; bad .config refused with its reason.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"
. "$TEST_DIR/lib-compare.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
test_atexit lei_stop
U1="http://127.0.0.1:$PI_PORT/linux-rtc/"
U2="http://127.0.0.1:$PI_PORT/linux-watchdog/"
M="$TRASH/mnt"
test_expect_success 'leifs mounts' '
	leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache,timeout=10,refresh=3600"
'
status() { sed -n "s/^$2: //p" "$1/.status"; }
# all_gone VIEW [-v]: no name in `before` that is not in `after` is there
# (the kernel is told on a thread of its own: wait for it)
all_gone() {
	comm -23 before after | while read -r f; do
		! [ -e "$1/$f" ] || { [ -z "${2-}" ] || echo "still there: $f"; exit 1; }
	done
}
# wait until view $1 has finished a search it started after $2 (a
# last-refresh value), or any search when $2 is empty
settle() {
	test_wait_for 30 "[ \"\$(status \"$1\" state)\" = fresh ] && [ \"\$(status \"$1\" last-refresh)\" != \"${2:-never}\" ]" ||
		{ cat "$1/.status"; return 1; }
}
# write .config of view $1 and wait for the search it starts
set_config() {
	local v=$1 last
	last=$(status "$v" last-refresh)
	past_second "$last"
	cat >"$v/.config" && settle "$v" "$last"
}
# the first Message-ID of every message file, sorted, duplicates kept
maildir_mids() {
	maildir_files "$1" | file_mids | sort
}
# blob id and flags of every message file (lei's names end in :2,FLAGS)
maildir_flags() {
	maildir_files "$1" >"$TRASH/.flags.paths" &&
	hash_paths <"$TRASH/.flags.paths" >"$TRASH/.flags.oids" &&
	sed 's|.*/||; /:2,/!s/.*//; s/.*:2,//' "$TRASH/.flags.paths" |
		paste -d " " "$TRASH/.flags.oids" - | sort
}
lei_out() { printf '%s\n' "$TRASH/lei-out/$1"; }

Q='f:belloni'
V="$M/queries/$Q"
test_expect_success '.config reads back the effective settings' '
	mkdir "$V" && ls "$V/cur" >/dev/null && settle "$V" &&
	cat "$V/.config" >cfg && cat cfg &&
	grep -qx "	threads = false" cfg && grep -qx "	dedupe = content" cfg &&
	grep -qx "	limit = 0" cfg && grep -qx "	refresh = 3600" cfg &&
	grep -qx "	source = $PI_URL" cfg &&
	ls -a "$V" | grep -qx .config && [ "$(ls -a "$V" | grep -c "^\.config$")" = 1 ]
'
test_expect_success 'threads = true: whole threads, as lei q --threads' '
	maildir_oids "$V" >plain &&
	printf "[leifs]\n\tthreads = true\n" | set_config "$V" &&
	grep -qx "	threads = true" "$V/.config" &&
	grep -q "^last-query: " "$V/.status" &&
	maildir_oids "$V" >leifs.oids && [ $(wc -l <leifs.oids) -gt $(wc -l <plain) ] &&
	lei_q "$PI_URL" "$(lei_out threads)" "$Q" --no-import-remote --threads 2>lei.err &&
	maildir_oids "$(lei_out threads)" >lei.oids && test_cmp lei.oids leifs.oids &&
	check_oids "$V"/cur/* "$V"/new/*
'
test_expect_success 'threads = flag-hits: as lei q -tt (remote sources: no flags, as lei)' '
	printf "[leifs]\n\tthreads = flag-hits\n" | set_config "$V" &&
	grep -qx "	threads = flag-hits" "$V/.config" &&
	lei_q "$PI_URL" "$(lei_out tt)" "$Q" --no-import-remote -tt 2>lei.err &&
	maildir_flags "$(lei_out tt)" >lei.flags && maildir_flags "$V" >leifs.flags &&
	test_cmp lei.flags leifs.flags
'

# two sources: the inboxes themselves, where a cross-post is two blobs.
# lei runs with --no-import-remote here: importing, it gives a remote
# message the blob id of a copy its store already holds (LeiXSearch
# each_remote_eml, xoids_for), so --dedupe=oid would depend on what earlier
# lei runs imported
Q2='s:PATCH OR s:Re'
W="$M/queries/$Q2"
test_expect_success 'two sources as two --only, dedupe = oid: both copies of a cross-post' '
	mkdir "$W" && ls "$W/cur" >/dev/null && settle "$W" &&
	printf "[leifs]\n\tsource = %s\n\tsource = %s\n\tdedupe = oid\n" "$U1" "$U2" | set_config "$W" &&
	grep -c "^source: .*: ok, [1-9]" "$W/.status" | grep -qx 2 &&
	lei_q "$U1" "$(lei_out oid)" "$Q2" --only "$U2" --no-import-remote --dedupe=oid 2>lei.err &&
	maildir_oids "$(lei_out oid)" >lei.oids && maildir_oids "$W" >leifs.oids &&
	test_cmp lei.oids leifs.oids && check_oids "$W"/cur/* "$W"/new/* &&
	maildir_mids "$W" >oid.mids && [ $(sort -u oid.mids | wc -l) -lt $(wc -l <oid.mids) ]
'
for mode in content mid none; do
	test_expect_success "dedupe = $mode over two sources, as lei q --dedupe=$mode" '
		printf "[leifs]\n\tsource = %s\n\tsource = %s\n\tdedupe = %s\n" "$U1" "$U2" "$mode" |
			set_config "$W" && grep -qx "	dedupe = $mode" "$W/.config" &&
		lei_q "$U1" "$(lei_out $mode)" "$Q2" --only "$U2" --no-import-remote --dedupe=$mode 2>lei.err &&
		maildir_mids "$(lei_out $mode)" >lei.mids && maildir_mids "$W" >leifs.mids &&
		test_cmp lei.mids leifs.mids && check_oids "$W"/cur/* "$W"/new/* &&
		if [ $mode = none ]; then test_cmp oid.mids leifs.mids
		else [ $(wc -l <leifs.mids) -lt $(wc -l <oid.mids) ]; fi
	'
done
test_expect_success 'the two inboxes deduplicated hold the messages the /all/ extindex holds' '
	printf "[leifs]\n\tsource = %s\n\tsource = %s\n" "$U1" "$U2" | set_config "$W" &&
	maildir_mids "$W" | uniq >two.mids &&
	lei_q "$PI_URL" "$(lei_out all)" "$Q2" --no-import-remote 2>lei.err &&
	maildir_mids "$(lei_out all)" | uniq >all.mids && test_cmp all.mids two.mids
'
test_expect_success 'limit = N keeps the N newest' '
	ls -l "$V/cur" "$V/new" >/dev/null &&   # the kernel looks each name up
	(cd "$V" && find cur new -type f | sort) >before &&
	printf "[leifs]\n\tlimit = 5\n" | set_config "$V" &&
	[ "$(find "$V/cur" "$V/new" -type f | wc -l)" = 5 ] &&
	(cd "$V" && find cur new -type f | sort) >after && [ $(comm -23 before after | wc -l) -gt 0 ] &&
	# and a name that went is gone now, not at the end of its entry timeout
	test_wait_for 5 "all_gone \"$V\"" || { all_gone "$V" -v; false; } &&
	lei_q "$PI_URL" "$(lei_out limit)" "$Q" --no-import-remote 2>lei.err &&
	find "$(lei_out limit)/cur" "$(lei_out limit)/new" -type f | while read -r f; do
		printf "%s %s\n" "$(date -d "$(sed -n "/^\$/q; s/^Date: //p" "$f" | head -n 1)" +%s)" "$(git hash-object "$f")"
	done | sort -k1,1nr -k2,2 | head -n 5 | cut -d" " -f2 | sort >expect &&
	maildir_oids "$V" >actual && test_cmp expect actual &&
	grep -qx "	limit = 5" "$V/.config"
'
test_expect_success 'refresh = 0 in .config: every listing searches, though the mount says 3600' '
	printf "[leifs]\n\trefresh = 0\n" | set_config "$V" &&
	a=$(status "$V" last-refresh) && past_second "$a" && ls "$V/cur" >/dev/null &&
	test_wait_for 10 "[ \"\$(status \"$V\" last-refresh)\" != \"$a\" ]" &&
	n=$(find "$V/cur" "$V/new" -type f | wc -l) && [ "$n" -gt 5 ]
'
test_expect_success 'bad .config is refused with its reason; nothing changes' '
	cp "$V/.config" before &&
	! bash -c "printf \"[leifs]\n\tdedupe = bogus\n\" >\"$V/.config\"" 2>err && cat err &&
	grep -q "Invalid argument" err &&
	grep -q "^refused: .config: line 2: bad value for leifs.dedupe" "$V/.status" &&
	test_cmp before "$V/.config" &&
	! sh -c "printf \"[leifs]\n\tcolour = blue\n\" >\"$V/.config\"" 2>/dev/null &&
	grep -q "^refused: .config: line 2: unknown key leifs.colour" "$V/.status" &&
	! sh -c "printf \"[leifs]\n\tsource = ftp://example.org/\n\" >\"$V/.config\"" 2>/dev/null &&
	grep -q "^refused: .config: line 2: source must be" "$V/.status" &&
	! sh -c "printf \"[leifs\n\" >\"$V/.config\"" 2>/dev/null &&
	! sh -c "printf \"[other]\n\tthreads = true\n\" >\"$V/.config\"" 2>/dev/null &&
	! sh -c "printf \"[leifs]\n\tlimit = -3\n\" >\"$V/.config\"" 2>/dev/null &&
	test_cmp before "$V/.config" &&
	printf "[leifs]\n\tlimit = 0\n" | set_config "$V" && ! grep -q "^refused:" "$V/.status"
'
test_expect_success 'rm .config: back to the defaults' '
	rm "$V/.config" && grep -qx "	threads = false" "$V/.config" && settle "$V"
'
test_expect_success 'a failing source fails alone; the others are searched in parallel' '
	hostile_start && test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/404/" &&
	B="$M/queries/s:rtc" && mkdir "$B" &&
	printf "[leifs]\n\tsource = %s/stall/\n\tsource = %s\n" "$H" "$PI_URL" >"$B/.config" &&
	sleep 0.5 && { ls "$B/cur" >/dev/null & } &&
	test_wait_for 8 "[ \$(status \"$B\" messages) -gt 0 ]" &&
	cat "$B/.status" && [ "$(status "$B" state)" = refreshing ] &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$B/.status\"" && cat "$B/.status" &&
	grep -q "^source: $H/stall/: failed: " "$B/.status" &&
	grep -q "^source: $PI_URL: ok, [1-9]" "$B/.status" &&
	curl -fsS -d "" "${PI_URL}?q=s%3Artc&x=m" | gzip -dc | grep -c "^From mboxrd@z" >expect &&
	find "$B/cur" "$B/new" -type f | wc -l >actual && test_cmp expect actual
'
leifs_umount "$M"
printf '[leifs]\n\tthreads = true\n\tdedupe = oid\n\tlimit = 7\n' >"$TRASH/config"
test_expect_success 'strength: view .config over command line over config file' '
	leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache,config=$TRASH/config,dedupe=mid" &&
	C="$M/queries/s:watchdog" && mkdir "$C" &&
	grep -qx "	threads = true" "$C/.config" && grep -qx "	dedupe = mid" "$C/.config" &&
	grep -qx "	limit = 7" "$C/.config" &&
	grep -qx "	threads = true" "$V/.config" && grep -qx "	limit = 7" "$V/.config" &&
	printf "[leifs]\n\tdedupe = content\n" >"$C/.config" &&
	grep -qx "	dedupe = content" "$C/.config" && grep -qx "	threads = true" "$C/.config" &&
	settle "$C" && [ "$(find "$C/cur" "$C/new" -type f | wc -l)" = 7 ]
'
test_expect_success 'settings survive a remount' '
	leifs_umount "$M" && leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache" &&
	grep -qx "	dedupe = content" "$C/.config" && grep -qx "	threads = false" "$C/.config" &&
	grep -qx "	source = $U1" "$W/.config" && grep -qx "	source = $U2" "$W/.config"
'
test_done

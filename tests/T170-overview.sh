#!/usr/bin/env bash
# Seeing all views at once (#16): queries/.status has a line per view
# (name, state, messages, in new/, last refresh, error) from the views'
# records and counters, queries/.refresh refreshes every view through the
# refresh queue, and -o index_remote=0 (or index-remote in the config
# file) turns off the background indexing of remote mail.
. "$(dirname "$0")/test-lib.sh"

hostile_start
M="$TRASH/mnt"
C="$TRASH/cache"
Q="$M/queries"

count() { curl -s "$H/_count/$1"; }
maxat() { curl -s "$H/_max/$1"; }
# the table of queries/.status: its lines after the header
table() { sed -n '/^name\tstate\tmessages\tnew\tlast-refresh\terror\tquery$/,$p' "$Q/.status" | sed 1d; }
# fields of the row of view $1: name state messages new
row() { table | awk -F '\t' -v n="$1" '$1 == n { print $1, $2, $3, $4 }'; }
# files of the indexes under cache $1
index_files() { find "$1/index" -type f 2>/dev/null | wc -l; }

test_expect_success 'the hostile server answers' '
	test_wait_for 10 "curl -s -o /dev/null -d \"\" $H/ok/"
'
test_expect_success 'a line per view: state, messages, in new/, last refresh, error' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C,refresh=3600,timeout=5" &&
	mkdir "$Q/s:one" "$Q/s:two" "$Q/s:three" &&
	ls "$Q/s:one/cur" "$Q/s:two/cur" >/dev/null &&
	printf "[leifs]\n\tsource = %s/500/\n" "$H" >"$Q/s:three/.config" &&
	test_wait_for 20 "grep -q \"^state: failed\" \"$Q/s:three/.status\"" &&
	f=$(ls "$Q/s:one/cur" | head -n 1) &&
	mv "$Q/s:one/cur/$f" "$Q/s:one/new/${f%:2,}" &&
	grep "^source: $H/ok/$" "$Q/.status" && grep "^error: $" "$Q/.status" &&
	grep "^views: 3$" "$Q/.status" &&
	table | cut -f 1-4 >actual &&
	printf "s:one\tfresh\t2\t1\ns:three\tfailed\t0\t0\ns:two\tfresh\t2\t0\n" >expect &&
	test_cmp expect actual &&
	table | cut -f 5 | grep -c -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$" >n &&
	echo 3 >expect && test_cmp expect n &&
	table | awk -F "\t" "NF != 7 || \$7 != \$1" >bad && test_cmp /dev/null bad &&
	[ "$(row s:one | cut -d " " -f 1)" = s:one ] &&
	table | awk -F "\t" "\$1 == \"s:three\" { print \$6 }" >err3 &&
	grep . err3 && ! grep -x -- - err3 && [ $(wc -c <err3) -le 201 ] &&
	sed -n "s/^error: //p" "$Q/s:three/.status" | head -n 1 | cut -c 1-200 >first &&
	test_cmp first err3 &&
	table | awk -F "\t" "\$1 != \"s:three\" { print \$6 }" | sort -u >noerr &&
	echo - >expect && test_cmp expect noerr
'
test_expect_success 'remote mail is indexed by default: the index grows and .status counts it' '
	test_wait_for 20 "grep -q \"^index: $H/ok/: 2 messages\" \"$Q/.status\"" &&
	grep "^index-remote: on, 0 messages queued, [0-9]* indexed since mount$" "$Q/.status" &&
	[ "$(index_files "$C")" -gt 0 ]
'
test_expect_success 'a write to queries/.refresh refreshes every view' '
	ok=$(count ok) e=$(count 500) &&
	echo >"$Q/.refresh" &&
	test_wait_for 20 "[ \"\$(count ok)\" = $((ok + 2)) ] && [ \"\$(count 500)\" = $((e + 1)) ]" &&
	test_wait_for 20 "! grep -q refreshing \"$Q/.status\"" &&
	grep -E "^last-query: \(s:one\) AND dt:[0-9]{14}\.\.$" "$Q/s:one/.status" &&
	row s:one >actual && echo "s:one fresh 2 1" >expect && test_cmp expect actual
'
test_expect_success 'touch queries/.refresh too; "full" forces full searches' '
	ok=$(count ok) &&
	touch "$Q/.refresh" &&
	test_wait_for 20 "[ \"\$(count ok)\" = $((ok + 2)) ]" &&
	test_wait_for 20 "! grep -q refreshing \"$Q/.status\"" &&
	echo full >"$Q/.refresh" &&
	test_wait_for 20 "[ \"\$(count ok)\" = $((ok + 4)) ]" &&
	test_wait_for 20 "grep -q \"^last-query: s:two$\" \"$Q/s:two/.status\" && grep -q \"^last-query: s:one$\" \"$Q/s:one/.status\""
'
test_expect_success 'queries/.refresh is not a view: no rmdir, no unlink' '
	! rmdir "$Q/.refresh" && ! rm -f "$Q/.refresh" && [ -f "$Q/.refresh" ] &&
	! mkdir "$Q/.refresh" 2>/dev/null && grep "^views: 3$" "$Q/.status"
'
leifs_umount "$M"

test_expect_success 'queries/.refresh goes through the queue: max_refreshes at once' '
	leifs_mount "$M" -o "source=$H/hold1/,cache=$C-queue,refresh=3600,timeout=30,max_refreshes=2" &&
	for i in 1 2 3 4 5 6; do mkdir "$Q/s:q$i" || return 1; done &&
	[ "$(count hold1)" = 0 ] &&
	echo >"$Q/.refresh" &&
	test_wait_for 60 "[ \"\$(count hold1)\" = 6 ]" &&
	test_wait_for 20 "[ \$(table | cut -f 2 | grep -c fresh) = 6 ]" &&
	echo "at once: $(maxat hold1)" && [ "$(maxat hold1)" -le 2 ]
'
leifs_umount "$M"

test_expect_success '200 views: a line each' '
	leifs_mount "$M" -o "source=http://127.0.0.1:9/,cache=$C-many,refresh=3600" &&
	(cd "$Q" && for i in $(seq 200); do mkdir "s:many$i" || exit 1; done) &&
	grep "^views: 200$" "$Q/.status" &&
	for i in $(seq 200); do echo "s:many$i	new	0	0	never	-	s:many$i"; done | sort >expect &&
	table | sort >actual && test_cmp expect actual
'
leifs_umount "$M"

test_expect_success 'index_remote=0: a fill grows no index; cache:URL says why it is empty' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-off,refresh=3600,index_remote=0" &&
	mkdir "$Q/s:off" && ls "$Q/s:off/cur" >cur && [ $(wc -l <cur) = 2 ] &&
	grep "^index-remote: off" "$Q/.status" && ! grep "^index: " "$Q/.status" &&
	mkdir "$Q/s:offline" &&
	printf "[leifs]\n\tsource = cache:%s/ok/\n" "$H" >"$Q/s:offline/.config" &&
	test_wait_for 20 "grep -q \"^state: fresh\" \"$Q/s:offline/.status\"" &&
	grep "^source: cache:$H/ok/: ok, 0 messages (remote mail is not indexed: index_remote = 0)$" \
		"$Q/s:offline/.status" &&
	sleep 1 && [ "$(index_files "$C-off")" = 0 ]
'
leifs_umount "$M"

test_expect_success 'index-remote in the config file; the command line wins' '
	printf "[leifs]\n\tindex-remote = false\n" >"$TRASH/config" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-conf,refresh=3600,config=$TRASH/config" &&
	grep "^index-remote: off" "$Q/.status" &&
	mkdir "$Q/s:conf" && ls "$Q/s:conf/cur" >cur && [ $(wc -l <cur) = 2 ] &&
	sleep 1 && [ "$(index_files "$C-conf")" = 0 ] &&
	leifs_umount "$M" &&
	printf "[leifs]\n\tindex_remote = 0\n" >"$TRASH/config" &&
	leifs_mount "$M" -o "source=$H/ok/,cache=$C-conf,config=$TRASH/config,index_remote=1" &&
	grep "^index-remote: on" "$Q/.status"
'
leifs_umount "$M"

test_expect_success 'a bad index_remote is refused at mount' '
	mkdir -p "$M" &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,index_remote=2" "$M" 2>err &&
	grep "index_remote is 0 or 1" err &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,series_fetch=2" "$M" 2>err &&
	grep "series_fetch is 0 or 1" err &&
	printf "[leifs]\n\tindex-remote = maybe\n" >"$TRASH/bad" &&
	! "$LEIFS" -f -o "source=$H/ok/,cache=$C-bad,config=$TRASH/bad" "$M" 2>err &&
	grep "bad value for leifs.index-remote" err
'

test_done

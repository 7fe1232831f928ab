#!/usr/bin/env bash
# The mounted tree against a real public-inbox-httpd: views, message files,
# status, read-only content, bad names, persistence across remounts, offline.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
OPTS="-o source=$PI_URL,cache=$TRASH/cache,timeout=20"
test_expect_success 'leifs mounts' 'leifs_mount "$M" $OPTS && [ -d "$M/queries" ]'

V="$M/queries/s:rtc"
test_expect_success 'mkdir makes a maildir view' '
	mkdir "$V" && ls -a "$V" >actual &&
	printf "%s\n" . .. .config .query .refresh .status .unhide cur new series tmp >expect && test_cmp expect actual
'
test_expect_success 'the first listing fetches the matches into cur/' '
	curl -fsS -d "" "${PI_URL}?q=s:rtc&x=m" | gzip -dc | grep -c "^From mboxrd@z" >expect &&
	ls "$V/cur" | wc -l >actual && test_cmp expect actual &&
	[ "$(cat actual)" -gt 10 ] && [ -z "$(ls "$V/new")" ] && [ -z "$(ls "$V/tmp")" ]
'
test_expect_success 'names are <time>.<oid>.leifs:2, and bytes hash to the oid' '
	ls "$V/cur" | grep -v -E "^[0-9]+\.[0-9a-f]{40}\.leifs:2,$" >bad; [ ! -s bad ] &&
	check_oids "$V"/cur/*
'
test_expect_success 'size is exact, mtime is the Date header, mode read-only' '
	f=$(ls "$V/cur" | head -n 1) &&
	[ "$(stat -c %s "$V/cur/$f")" = "$(cat "$V/cur/$f" | wc -c)" ] &&
	[ "$(stat -c %a "$V/cur/$f")" = 444 ] &&
	python3 -c "import email,sys,email.utils; m=email.message_from_binary_file(open(sys.argv[1],\"rb\")); print(int(email.utils.parsedate_to_datetime(m[\"Date\"]).timestamp()))" "$V/cur/$f" >expect &&
	stat -c %Y "$V/cur/$f" >actual && test_cmp expect actual &&
	[ "${f%%.*}" = "$(cat expect)" ]
'
test_expect_success '.query and .status' '
	echo "s:rtc" >expect && test_cmp expect "$V/.query" &&
	grep -q "^state: fresh$" "$V/.status" &&
	grep -q "^messages: $(ls "$V/cur" | wc -l)$" "$V/.status" &&
	grep -q "^last-refresh: 20" "$V/.status" && grep -q "^error: $" "$V/.status"
'
test_expect_success 'content and view files are read-only' '
	f=$(ls "$V/cur" | head -n 1) &&
	! sh -c "echo x >>\"$V/cur/$f\"" 2>/dev/null &&
	! sh -c "echo x >\"$V/tmp/new-mail\"" 2>/dev/null &&
	! sh -c "echo x >\"$V/.status\"" 2>/dev/null &&
	! truncate -s 0 "$V/cur/$f" 2>/dev/null &&
	check_oids "$V/cur/$f"
'
test_expect_success '%2F in a name stands for /' '
	mkdir "$M/queries/dfn:drivers%2Frtc%2Frtc-pcf8563.c" &&
	echo "dfn:drivers/rtc/rtc-pcf8563.c" >expect &&
	test_cmp expect "$M/queries/dfn:drivers%2Frtc%2Frtc-pcf8563.c/.query" &&
	n=$(ls "$M/queries/dfn:drivers%2Frtc%2Frtc-pcf8563.c/cur" | wc -l) && [ "$n" -gt 0 ] &&
	grep -l "^diff --git a/drivers/rtc/rtc-pcf8563.c" "$M/queries/dfn:drivers%2Frtc%2Frtc-pcf8563.c"/cur/* | wc -l >hits &&
	[ "$(cat hits)" -eq "$n" ]
'
test_expect_success 'a query with no match is an empty view, not an error' '
	mkdir "$M/queries/s:zzzznotthere" && [ -z "$(ls "$M/queries/s:zzzznotthere/cur")" ] &&
	grep -q "^state: fresh$" "$M/queries/s:zzzznotthere/.status"
'
test_expect_success 'malformed names are refused with EINVAL and leave nothing' '
	ls "$M/queries" >before &&
	for n in "bad%41" "s:a%2" "(s:rtc" "s:rtc)" "   " "AND s:x" "sx:typo" "$(printf "s:a\tb")" ".hidden"; do
		mkdir "$M/queries/$n" 2>err && { echo "accepted: $n"; return 1; }
		grep -q "Invalid argument" err || { cat err; return 1; }
	done &&
	ls "$M/queries" >after && test_cmp before after &&
	grep -q "^error: mkdir refused: .hidden" "$M/queries/.status"
'
test_expect_success 'mkdir of an existing view is EEXIST' '
	! mkdir "$V" 2>err && grep -q "File exists" err
'
test_expect_success 'renames keep flags, unlink hides' '
	f=$(ls "$V/cur" | head -n 1) && g=$(ls "$V/cur" | sed -n 2p) &&
	mv "$V/cur/$f" "$V/cur/${f}FS" && [ -f "$V/cur/${f}FS" ] && [ ! -e "$V/cur/$f" ] &&
	mv "$V/cur/${f}FS" "$V/new/${f%:2,}" && mv "$V/new/${f%:2,}" "$V/cur/${f}RS" &&
	rm "$V/cur/$g" && [ ! -e "$V/cur/$g" ] &&
	! mv "$V/cur/${f}RS" "$V/cur/other-name" 2>/dev/null &&
	ls "$V/cur" | grep -c . >count && echo "${f}RS" >expect &&
	ls "$V/cur" | grep -F "${f}RS" >actual && test_cmp expect actual
'
test_expect_success 'flagged unread mail may live in new/ with its flags, as mutt keeps it' '
	h=$(ls "$V/cur" | sed -n 3p) && b=${h%:2,} &&
	mv "$V/cur/$h" "$V/new/$b:2,F" && ls "$V/new" >actual &&
	echo "$b:2,F" >expect && test_cmp expect actual &&
	! mv "$V/new/$b:2,F" "$V/new/$b:2," 2>/dev/null &&
	mv "$V/new/$b:2,F" "$V/new/$b" && [ -f "$V/new/$b" ] &&
	mv "$V/new/$b" "$V/cur/$h" && [ -z "$(ls "$V/new")" ]
'
test_expect_success 'client files: rewrite shorter, append, rename, remove' '
	echo 1234567890 >"$V/.state" && echo 7 >"$V/.state" && echo 7 >expect &&
	test_cmp expect "$V/.state" && echo 8 >>"$V/.state" && printf "7\n8\n" >expect &&
	test_cmp expect "$V/.state" && [ "$(stat -c %s "$V/.state")" = 4 ] &&
	mv "$V/.state" "$V/.state2" && test_cmp expect "$V/.state2" && [ ! -e "$V/.state" ] &&
	rm "$V/.state2" && [ ! -e "$V/.state2" ]
'
ls "$V/cur" | sort >"$TRASH/before-umount"
test_expect_success 'views, messages and flags survive a remount with the server down' '
	leifs_umount "$M" && pi_stop "$TRASH/httpd" &&
	! curl -fs -o /dev/null "$PI_URL" &&
	leifs_mount "$M" $OPTS &&
	ls "$M/queries" | grep -c . >n && [ "$(cat n)" -eq 3 ] &&
	ls "$V/cur" | sort >actual && test_cmp "$TRASH/before-umount" actual &&
	check_oids "$V"/cur/*
'
test_expect_success 'rmdir removes a view; mkdir again starts fresh' '
	rmdir "$M/queries/s:zzzznotthere" && [ ! -e "$M/queries/s:zzzznotthere" ] &&
	! ls "$M/queries" | grep -q zzzz
'
test_done

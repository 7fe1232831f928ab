#!/usr/bin/env bash
# A view kept in an IMAP folder by leifs itself (imap = ... in .config or
# -o imap=), as `lei q -o imaps://` and `lei up` keep one: Dovecot on
# loopback, the password from git credential (a credential-store file,
# then a helper that logs its calls: git calls a helper with "get" for
# `git credential fill`, "store" for approve and "erase" for reject), a local maildir as the source so
# that the test adds mail at will.  Nothing is APPENDed twice: not across
# refreshes, remounts or a kill -9 in the middle of a delivery; a folder
# deleted on the server is delivered again; flags go with the messages.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-dovecot.sh"

if ! command -v dovecot >/dev/null; then
	test_skip 'leifs delivers a view to IMAP' 'dovecot-imapd is not installed'
	test_done
	exit
fi

IMAP_PORT=$(free_port)
FOLDER=leifs-rtc
URL="imap://lore@127.0.0.1:$IMAP_PORT/$FOLDER"
# git reads only the test's own config (never ~/.gitconfig)
export HOME="$TRASH/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$TRASH/gitconfig"
mkdir -p "$HOME"
git config --global credential.helper "store --file=$TRASH/creds"

# the source: a maildir the test adds mail to, in delivery order
python3 "$TEST_DIR/gen-mail.py" -s 3 -n 240 "$TRASH/gen" >/dev/null
ls "$TRASH"/gen/linux-rtc/*.eml >"$TRASH/all-mail"
SRC="$TRASH/src"
mkdir -p "$SRC/cur" "$SRC/new" "$SRC/tmp"
# add_mail FROM TO: lines FROM..TO of all-mail into the maildir
add_mail() {
	sed -n "$1,$2p" "$TRASH/all-mail" | while read -r f; do
		cp "$f" "$SRC/new/$(basename "$f" .eml).leifs-test"
	done
}
add_mail 1 40

# the folder as "<oid> <message-id> FLAGS" lines (bytes hashed as git
# does, CRLF read back as the LF sent), sorted; USER PASS FOLDER
imap_list() {
	python3 - "$IMAP_PORT" "${1:-lore}" "${2:-s3cret}" "${3:-$FOLDER}" <<-'EOP'
	import hashlib, imaplib, re, sys
	m = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))
	m.login(sys.argv[2], sys.argv[3])
	typ, _ = m.select(sys.argv[4], readonly=True)
	if typ != "OK":
	    sys.exit(0)
	typ, data = m.fetch("1:*", "(FLAGS BODY.PEEK[])")
	out = []
	for item in data:
	    if not isinstance(item, tuple):
	        continue
	    flags = re.search(rb"FLAGS \(([^)]*)\)", item[0]).group(1).decode().split()
	    flags = " ".join(sorted(f for f in flags if f != "\\Recent"))
	    raw = item[1].replace(b"\r\n", b"\n")
	    oid = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
	    mid = re.search(rb"(?im)^Message-ID:\s*(<[^>]*>)", raw)
	    mid = mid.group(1).decode() if mid else "-"
	    out.append(f"{oid} {mid} {flags}".rstrip())
	print("\n".join(sorted(out)))
	m.logout()
	EOP
}
# how many messages the folder has (STATUS: cheap enough to poll)
imap_count() {
	python3 - "$IMAP_PORT" "$FOLDER" <<-'EOP'
	import imaplib, re, sys
	m = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))
	m.login("lore", "s3cret")
	typ, data = m.status(sys.argv[2], "(MESSAGES)")
	print(re.search(rb"MESSAGES (\d+)", data[0]).group(1).decode() if typ == "OK" else 0)
	m.logout()
	EOP
}
imap_delete() {
	python3 - "$IMAP_PORT" "$1" <<-'EOP'
	import imaplib, sys
	m = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))
	m.login("lore", "s3cret")
	typ, data = m.delete(sys.argv[2])
	assert typ == "OK", data
	m.logout()
	EOP
}
# the same from view $1: its files' oids, Message-IDs, flags
view_list() {
	maildir_files "$1" >"$TRASH/.vl.paths" &&
	hash_paths <"$TRASH/.vl.paths" >"$TRASH/.vl.oids" &&
	file_mids <"$TRASH/.vl.paths" | sed "s/.*\(<[^>]*>\).*/\1/" >"$TRASH/.vl.mids" &&
	sed 's|.*/||; /:2,/!s/.*//; s/.*:2,//' "$TRASH/.vl.paths" |
		paste -d " " "$TRASH/.vl.oids" "$TRASH/.vl.mids" - | imap_flags | sort
}
# without flags: what was delivered, whatever the user did since
oids_only() { cut -d' ' -f1,2 "$1"; }
# the folder holds what view $1 holds (each message once), flags aside
same_as_view() {
	imap_list >imap.out && view_list "$1" >view.out &&
	oids_only view.out >expect && oids_only imap.out >actual && test_cmp expect actual &&
	[ "$(cut -d" " -f2 imap.out | sort | uniq -d | wc -l)" -eq 0 ]
}
# wait until the folder has $1 messages and view $2's delivery is over
wait_delivered() {
	test_wait_for 120 "[ \"\$(imap_list | grep -c .)\" -ge $1 ] &&
		grep -q '^state: fresh' '$2/.status' && grep -q '^imap: .*: ok, ' '$2/.status'"
}

test_expect_success 'dovecot serves IMAP on loopback; the password is in a credential store' '
	dovecot_start "$TRASH/dovecot" "$IMAP_PORT" lore s3cret &&
	printf "protocol=imap\nhost=127.0.0.1:%s\nusername=lore\npassword=s3cret\n\n" \
		"$IMAP_PORT" | git credential approve && grep -q lore "$TRASH/creds"
'
M="$TRASH/mnt"
OPTS="-o source=maildir:$SRC,cache=$TRASH/cache,timeout=20,imap=$URL"
test_expect_success 'leifs mounts with a default IMAP folder (-o imap=)' 'leifs_mount "$M" $OPTS'
V="$M/queries/s:rtc"

test_expect_success 'a first fill delivers exactly the view: by blob id and Message-ID' '
	mkdir "$V" && n=$(ls "$V/cur" | wc -l) && [ "$n" -gt 10 ] &&
	wait_delivered "$n" "$V" && same_as_view "$V" &&
	grep "^imap: " "$V/.status" >st && cat st &&
	grep -qx "imap: $URL: ok, $n delivered" st &&
	grep -qx "	imap = $URL" "$V/.config"
'
test_expect_success 'what was delivered is unread and unflagged, as in the view' '
	imap_list >imap.out && ! grep -q "Seen\|Flagged" imap.out
'
test_expect_success 'a refresh with new mail delivers only the new messages' '
	before=$(imap_list | grep -c .) &&
	add_mail 41 70 && echo 1 >"$V/.refresh" &&
	test_wait_for 60 "[ \$(find \"$V/cur\" \"$V/new\" -type f | wc -l) -gt $before ]" &&
	n=$(find "$V/cur" "$V/new" -type f | wc -l) &&
	wait_delivered "$n" "$V" && same_as_view "$V" &&
	grep -qx "imap: $URL: ok, $n delivered" "$V/.status"
'
test_expect_success 'a repeated refresh and a remount append nothing' '
	n=$(imap_list | grep -c .) &&
	echo 1 >"$V/.refresh" && sleep 1 && wait_delivered "$n" "$V" &&
	leifs_umount "$M" && leifs_mount "$M" $OPTS && ls "$V/cur" >/dev/null &&
	echo 1 >"$V/.refresh" && sleep 1 && wait_delivered "$n" "$V" &&
	[ "$(imap_list | grep -c .)" -eq "$n" ] && same_as_view "$V"
'
test_expect_success 'a delivery is one connection (one login) to the server' '
	l0=$(grep -c "Login: user=<lore>" "$TRASH/dovecot/dovecot.log") &&
	a0=$(grep -c " appended$" "$TRASH/leifs.log") &&
	add_mail 71 73 && echo 1 >"$V/.refresh" &&
	test_wait_for 60 "[ \$(grep -c \" appended$\" \"$TRASH/leifs.log\") -gt $a0 ]" &&
	l1=$(grep -c "Login: user=<lore>" "$TRASH/dovecot/dovecot.log") &&
	echo "logins: $l0 -> $l1" && [ $((l1 - l0)) -eq 1 ] && same_as_view "$V"
'
kill_daemon() {
	kill -9 "$(cat "$M.pid")" 2>/dev/null
	fusermount3 -u -z "$M" 2>/dev/null
	wait "$(cat "$M.pid")" 2>/dev/null
	rm -f "$M.pid"
}
test_expect_success 'kill -9 in the middle of a delivery, then a remount: each message once' '
	before=$(imap_count) && echo "before: $before" &&
	add_mail 74 2000 && echo 1 >"$V/.refresh" &&
	test_wait_for 60 "[ \$(imap_count) -gt $before ]" &&
	kill_daemon && mid=$(imap_count) && echo "killed at $mid" &&
	leifs_mount "$M" $OPTS && ls "$V/cur" >/dev/null &&
	echo 1 >"$V/.refresh" &&
	n=$(find "$V/cur" "$V/new" -type f | wc -l) && [ "$n" -gt "$before" ] &&
	wait_delivered "$n" "$V" && same_as_view "$V" &&
	grep -qx "imap: $URL: ok, $n delivered" "$V/.status" &&
	grep "interrupted delivery" "$TRASH/leifs.log" >st && cat st &&
	grep -q "of them already in the folder" st
'
test_expect_success 'flags of the view go with a delivery: the folder deleted is delivered again' '
	f=$(ls "$V/cur" | sed -n 1p) && g=$(ls "$V/cur" | sed -n 2p) &&
	mv "$V/cur/$f" "$V/cur/${f}S" && mv "$V/cur/$g" "$V/cur/${g}FS" &&
	imap_delete "$FOLDER" && echo 1 >"$V/.refresh" && sleep 1 &&
	n=$(find "$V/cur" "$V/new" -type f | wc -l) &&
	wait_delivered "$n" "$V" && same_as_view "$V" &&
	imap_list >actual && view_list "$V" >expect && test_cmp expect actual &&
	grep -q "Flagged .Seen" actual && [ "$(grep -c Seen actual)" -eq 2 ]
'
test_expect_success 'a password in the URL is refused, with its reason in .status' '
	! printf "[leifs]\n\tsource = maildir:%s\n\timap = imap://lore:s3cret@127.0.0.1:%s/x\n" \
		"$SRC" "$IMAP_PORT" >"$V/.config" 2>err &&
	cat err && grep -q "Invalid argument" err &&
	grep "^refused: " "$V/.status" >st && cat st && grep -q "password" st &&
	! grep -q s3cret "$V/.status" "$V/.config" "$TRASH/leifs.log"
'
test_expect_success 'a wrong password: a clear .status line, one reject, and the view serves' '
	cat >"$TRASH/helper" <<-EOH &&
	#!/bin/sh
	echo "\$1" >>"$TRASH/helper.log"
	[ "\$1" = get ] && cat >/dev/null && echo password=wrong
	exit 0
	EOH
	chmod +x "$TRASH/helper" &&
	git config --global credential.helper "$TRASH/helper" &&
	W="$M/queries/s:watchdog" && mkdir "$W" &&
	printf "[leifs]\n\tsource = maildir:%s\n\timap = imap://lore@127.0.0.1:%s/other\n" \
		"$SRC" "$IMAP_PORT" >"$W/.config" &&
	test_wait_for 60 "grep -q \"^imap: .*failed\" \"$W/.status\"" &&
	grep "^imap: " "$W/.status" >st && cat st &&
	grep -q "^imap: imap://lore@127.0.0.1:$IMAP_PORT/other: failed: authentication failed: " st &&
	grep -qi "AUTHENTICATIONFAILED\|Authentication failed" st &&
	sleep 1 && cat "$TRASH/helper.log" &&
	[ "$(grep -c "^erase$" "$TRASH/helper.log")" -eq 1 ] &&
	! grep -q "^store$" "$TRASH/helper.log" &&
	! grep -q wrong "$W/.status" "$TRASH/leifs.log" &&
	grep -q "^state: fresh" "$W/.status" && ls "$W/cur" | grep -q .
'
# a mount of its own, so that no view of the mount above delivers to its folder
test_expect_success 'a folder path with / is made with the server'"'"'s separator (.), and .status names it' '
	M5="$TRASH/mnt5" && git config --global credential.helper "store --file=$TRASH/creds" &&
	leifs_mount "$M5" -o "source=maildir:$SRC,cache=$TRASH/cache5,timeout=20,imap=imap://lore@127.0.0.1:$IMAP_PORT/lore/rtc" &&
	D="$M5/queries/s:oscillator" && mkdir "$D" &&
	n=$(find "$D/cur" "$D/new" -type f | wc -l) && [ "$n" -gt 0 ] &&
	test_wait_for 60 "grep -q \"^imap: .*/lore/rtc: \\(ok, $n\\|failed\\)\" \"$D/.status\"" &&
	grep "^imap: " "$D/.status" >st && cat st &&
	grep -qx "imap: imap://lore@127.0.0.1:$IMAP_PORT/lore/rtc: ok, $n delivered (the server'"'"'s folder lore.rtc)" st &&
	FOLDER=lore.rtc imap_list >imap.out && [ "$(grep -c . imap.out)" -eq "$n" ] &&
	grep -q "folder lore.rtc" "$TRASH/leifs.log" && leifs_umount "$M5"
'
if command -v openssl >/dev/null; then
TLS_PORT=$(free_port)
TURL="imaps://lore@127.0.0.1:$TLS_PORT/tls"
test_expect_success 'imaps: dovecot with a self-signed certificate' '
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null &&
	dovecot_start "$TRASH/dovecot-tls" "$(free_port)" lore s3cret "$TLS_PORT" \
		"$TRASH/cert.pem" "$TRASH/key.pem" &&
	git config --global credential.helper "store --file=$TRASH/creds" &&
	printf "protocol=imaps\nhost=127.0.0.1:%s\nusername=lore\npassword=s3cret\n\n" \
		"$TLS_PORT" | git credential approve
'
test_expect_success 'imaps: an unknown certificate fails the delivery, not the view' '
	T="$M/queries/s:pcf8563" && mkdir "$T" &&
	printf "[leifs]\n\tsource = maildir:%s\n\timap = %s\n" "$SRC" "$TURL" >"$T/.config" &&
	test_wait_for 60 "grep -q \"^imap: .*failed\" \"$T/.status\"" &&
	grep "^imap: " "$T/.status" >st && cat st &&
	grep -qi "certificate" st && grep -q "^state: fresh" "$T/.status"
'
test_expect_success 'imaps: with cafile= the same certificate is trusted and the view delivered' '
	leifs_umount "$M" && leifs_mount "$M" $OPTS,cafile="$TRASH/cert.pem" &&
	T="$M/queries/s:pcf8563" && echo 1 >"$T/.refresh" &&
	n=$(find "$T/cur" "$T/new" -type f | wc -l) && [ "$n" -gt 0 ] &&
	test_wait_for 60 "grep -qx \"imap: $TURL: ok, $n delivered\" \"$T/.status\"" &&
	python3 - "$TLS_PORT" "$TRASH/cert.pem" "$n" <<-\EOP
	import imaplib, ssl, sys
	ctx = ssl.create_default_context(cafile=sys.argv[2])
	m = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ctx)
	m.login("lore", "s3cret")
	typ, data = m.select("tls", readonly=True)
	assert typ == "OK" and int(data[0]) == int(sys.argv[3]), data
	EOP
'
else
	test_skip 'imaps with a self-signed certificate' 'openssl is not installed'
fi
test_done

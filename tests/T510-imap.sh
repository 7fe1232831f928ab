#!/usr/bin/env bash
# The seed's IMAP workflow: mbsync (isync) pushes a view into a folder of a
# Dovecot server on loopback, and then the view's flag changes; mbsync's
# own bookkeeping in the view (.uidvalidity, ,U= names) survives a remount.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"
. "$TEST_DIR/lib-dovecot.sh"

if ! command -v mbsync >/dev/null || ! command -v dovecot >/dev/null; then
	test_skip 'mbsync pushes a view to IMAP' 'isync or dovecot-imapd is not installed'
	test_done
	exit
fi
test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
OPTS="-o source=$PI_URL,cache=$TRASH/cache,timeout=20"
test_expect_success 'leifs mounts' 'leifs_mount "$M" $OPTS'
V="$M/queries/s:pcf8563"
IMAP_PORT=$(free_port)
test_expect_success 'dovecot serves IMAP on loopback' '
	dovecot_start "$TRASH/dovecot" "$IMAP_PORT" lore s3cret
'
cat >"$TRASH/mbsyncrc" <<EOC
IMAPAccount test
Host 127.0.0.1
Port $IMAP_PORT
User lore
Pass s3cret
SSLType None
AuthMechs LOGIN

IMAPStore imap
Account test

MaildirStore view
Inbox $V

Channel lore
Far :imap:lore-pcf8563
Near :view:
Create Far
Sync Push
Expunge None
SyncState $TRASH/mbsync-state/
EOC
mkdir -p "$TRASH/mbsync-state"

# "<message-id> FLAGS" for each message of the IMAP folder, sorted
imap_list() {
	python3 - "$IMAP_PORT" <<-'EOP'
	import imaplib, re, sys
	m = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))
	m.login("lore", "s3cret")
	m.select("lore-pcf8563", readonly=True)
	typ, data = m.fetch("1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
	out = []
	for item in data:
	    if not isinstance(item, tuple):
	        continue
	    flags = re.search(rb"FLAGS \(([^)]*)\)", item[0]).group(1).decode().split()
	    flags = " ".join(sorted(f for f in flags if f != "\\Recent"))
	    mid = re.search(rb"<[^>]*>", item[1]).group(0).decode()
	    out.append(f"{mid} {flags}".rstrip())
	print("\n".join(sorted(out)))
	m.logout()
	EOP
}
# the same from the view: Message-ID and the IMAP names of its flags
view_list() {
	maildir_files "$V" >"$TRASH/.vl.paths" &&
	file_mids <"$TRASH/.vl.paths" | sed "s/.*\(<[^>]*>\).*/\1/" >"$TRASH/.vl.mids" &&
	sed 's|.*/||; /:2,/!s/.*//; s/.*:2,//' "$TRASH/.vl.paths" |
		paste -d " " "$TRASH/.vl.mids" - | imap_flags | sort
}

test_expect_success 'mbsync pushes the whole view into an IMAP folder' '
	mkdir "$V" && n=$(ls "$V/cur" | wc -l) && [ "$n" -gt 10 ] &&
	{ mbsync -c "$TRASH/mbsyncrc" lore >out 2>&1 || { cat out; false; }; } &&
	imap_list >actual && view_list >expect && test_cmp expect actual &&
	[ "$(wc -l <actual)" -eq "$n" ]
'
test_expect_success 'mbsync keeps its state in the view: .uidvalidity and ,U= names' '
	[ -s "$V/.uidvalidity" ] && ls -a "$V" | grep -qx ".uidvalidity" &&
	[ "$(ls "$V/cur" | grep -c ",U=[0-9]*:2,")" -eq "$(ls "$V/cur" | wc -l)" ] &&
	check_oids "$V"/cur/*
'
test_expect_success 'flags set in the view reach IMAP at the next push' '
	f=$(ls "$V/cur" | sed -n 1p) && g=$(ls "$V/cur" | sed -n 2p) &&
	mv "$V/cur/$f" "$V/cur/${f}S" && mv "$V/cur/$g" "$V/cur/${g}FS" &&
	{ mbsync -c "$TRASH/mbsyncrc" lore >out 2>&1 || { cat out; false; }; } &&
	imap_list >actual && view_list >expect && test_cmp expect actual &&
	grep -q "Flagged" actual
'
test_expect_success 'after a remount, a push adds nothing twice' '
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	[ -s "$V/.uidvalidity" ] &&
	{ mbsync -c "$TRASH/mbsyncrc" lore >out 2>&1 || { cat out; false; }; } &&
	imap_list >actual && view_list >expect && test_cmp expect actual
'
test_expect_success 'client files are bounded and go with the view' '
	! dd if=/dev/zero of="$V/.big" bs=1k count=300 2>err && cat err && grep -q "too large" err &&
	! touch "$V/cur/x" 2>/dev/null && grep -qx "\[leifs\]" "$V/.config" &&
	rm "$V/.big" && rmdir "$V" && mkdir "$V" && [ ! -e "$V/.uidvalidity" ]
'
test_done

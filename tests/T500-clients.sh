#!/usr/bin/env bash
# Real mail clients on a mounted view: neomutt and mutt driven in tmux,
# mblaze, notmuch, grep -r, rg and find; what they change (flags, deletes)
# is what the filesystem keeps, across a remount.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"
. "$TEST_DIR/lib-tmux.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
# flags = view: each client's view keeps its flags to itself, so that one
# client's marks do not move the counts another is checked against (views
# that share flags are T147's)
OPTS="-o source=$PI_URL,cache=$TRASH/cache,timeout=20,flags=view"
test_expect_success 'leifs mounts' 'leifs_mount "$M" $OPTS'

# the file holding a Message-ID in a view (cur/ or new/)
msg_file() {
	find "$1/cur" "$1/new" -type f -exec grep -l -i -F -x "Message-ID: $2" {} + | grep .
}

# mutt and neomutt, each on a view of its own
mutt_rc() {
	cat >"$TRASH/muttrc" <<EOC
set mbox_type=Maildir
set folder="$M/queries"
set sort=date-sent
set index_format="IDX %Z %i %s"
set status_format="STATUS msgs=%m flagged=%F deleted=%d"
set pager_format="PAGER %i"
set header_cache=""
set mark_old=no
set delete=yes
set quit=yes
set wait_key=no
set beep=no
set maildir_trash=no
set move=no
set help=no
set resolve=no
set pager_index_lines=0
EOC
}
mutt_rc

client_test() {
	local mua=$1 view=$2 V="$M/queries/$2" n
	if ! command -v "$mua" >/dev/null || ! command -v tmux >/dev/null; then
		test_skip "$mua on a view" "$mua or tmux is not installed"
		return
	fi
	test_expect_success "$mua: the index shows every message of the view" '
		mkdir "$V" && n=$(ls "$V/cur" | wc -l) && [ "$n" -gt 40 ] &&
		tmux_start "$mua" "TERM=xterm-256color $mua -n -F $TRASH/muttrc -f \"$V\"" &&
		tmux_wait "$mua" "STATUS msgs=$n flagged=0 deleted=0" 20 &&
		tmux_screen "$mua" | sed -n "s/^IDX[^<]*\(<[^>]*>\).*/\1/p" >ids &&
		[ "$(wc -l <ids)" -ge 40 ] &&
		while read -r id; do msg_file "$V" "$id" >/dev/null || { echo "no $id"; grep -i -m1 "^message-id" "$V"/cur/* | head -3 | od -c | head; return 1; }; done <ids
	'
	id1=$(sed -n 1p "$TRASH/ids") id2=$(sed -n 2p "$TRASH/ids") id3=$(sed -n 3p "$TRASH/ids")
	test_expect_success "$mua: open a message, flag one, delete one, sync, quit" '
		tmux_keys "$mua" Enter && tmux_wait "$mua" "^PAGER $id1" &&
		subj=$(grep -m1 "^Subject:" "$(msg_file "$V" "$id1")" | cut -c10-40) &&
		tmux_screen "$mua" | grep -F -- "$subj" &&
		tmux_keys "$mua" q && tmux_wait "$mua" "STATUS msgs" &&
		tmux_keys "$mua" j F j d && tmux_wait "$mua" "flagged=1 deleted=1" &&
		tmux_keys "$mua" "\$" && tmux_wait "$mua" "STATUS msgs=$((n - 1)) flagged=1 deleted=0" &&
		tmux_keys "$mua" q && test_wait_for 10 "tmux_gone $mua"
	'
	test_expect_success "$mua: the filesystem keeps read, flagged and deleted" '
		f1=$(msg_file "$V" "$id1") && f2=$(msg_file "$V" "$id2") &&
		case "$f1" in */cur/*:2,S) ;; *) echo "read: $f1"; false ;; esac &&
		case "$f2" in */new/*:2,F|*/cur/*:2,F) ;; *) echo "flagged: $f2"; false ;; esac &&
		! msg_file "$V" "$id3" &&
		[ $(find "$V/cur" "$V/new" -type f | wc -l) -eq $((n - 1)) ] &&
		find "$V/cur" "$V/new" -type f | sort >"$mua.files"
	'
}
client_test neomutt 's:rtc'
client_test mutt '(s:rtc)'

test_expect_success 'after a remount, flags and deletes are what the clients left' '
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	for mua in neomutt mutt; do
		[ -f "$mua.files" ] || continue
		v=$(sed -n "1s|^\(.*\)/[a-z]*/[^/]*$|\1|p" "$mua.files") &&
		find "$v/cur" "$v/new" -type f | sort >now && test_cmp "$mua.files" now || return 1
	done
'
if command -v neomutt >/dev/null; then
	test_expect_success 'neomutt sees the same state again' '
		V="$M/queries/s:rtc" && n=$(find "$V/cur" "$V/new" -type f | wc -l) &&
		tmux_start again "TERM=xterm-256color neomutt -n -F $TRASH/muttrc -f \"$V\"" &&
		tmux_wait again "STATUS msgs=$n flagged=1 deleted=0" 20 &&
		tmux_keys again q && test_wait_for 10 "tmux_gone again"
	'
fi

# ---- the shell and mblaze ----
V="$M/queries/s:pcf8563"
test_expect_success 'a plain copy of a view to compare with' '
	mkdir "$V" && [ "$(ls "$V/cur" | wc -l)" -gt 10 ] &&
	mkdir plain && cp -rp "$V/cur" "$V/new" "$V/tmp" "$V/series" plain/
'
test_expect_success 'grep -r finds what it finds in the plain copy' '
	(cd "$V" && grep -r -l "rtc: pcf8563" . | sort) >actual &&
	(cd plain && grep -r -l "rtc: pcf8563" . | sort) >expect &&
	[ -s expect ] && test_cmp expect actual &&
	(cd "$V" && grep -r -c -i "^Subject:" cur new | sort) >actual &&
	(cd plain && grep -r -c -i "^Subject:" cur new | sort) >expect && test_cmp expect actual
'
if command -v rg >/dev/null; then
	test_expect_success 'rg finds what it finds in the plain copy' '
		(cd "$V" && rg -l --no-messages "Reviewed-by|Signed-off-by" cur new | sort) >actual &&
		(cd plain && rg -l --no-messages "Reviewed-by|Signed-off-by" cur new | sort) >expect &&
		[ -s expect ] && test_cmp expect actual
	'
else
	test_skip 'rg on a view' 'ripgrep is not installed'
fi
test_expect_success 'find -newer and -size see message dates and sizes' '
	mid=$(ls "$V/cur" | sort -n | sed -n "$(( $(ls "$V/cur" | wc -l) / 2 ))p" | cut -d. -f1) &&
	touch -d "@$mid" ref &&
	(cd "$V" && find cur -type f -newer "$TRASH/ref" | sort) >actual &&
	(cd plain && find cur -type f -newer "$TRASH/ref" | sort) >expect &&
	[ -s expect ] && test_cmp expect actual &&
	(cd "$V" && find cur -type f -size +3k | sort) >actual &&
	(cd plain && find cur -type f -size +3k | sort) >expect && test_cmp expect actual
'
if command -v mlist >/dev/null; then
	test_expect_success 'mblaze: mlist, mscan, mthread, mshow' '
		n=$(ls "$V/cur" | wc -l) &&
		mlist "$V" >list && [ "$(wc -l <list)" -eq "$n" ] &&
		mscan -f "%s" <list | sort >actual &&
		mlist plain | mscan -f "%s" | sort >expect && test_cmp expect actual &&
		mthread <list | wc -l >actual && echo "$n" >expect && test_cmp expect actual &&
		# a message whose Subject is plain ASCII: mshow decodes RFC 2047
		f=$(grep -l "^Subject: [ -<>-~]*$" $(cat list) | head -n 1) && [ -n "$f" ] &&
		mshow -q "$f" | grep -i "^Subject:" >actual &&
		grep -i -m1 "^Subject:" "$f" >expect && test_cmp expect actual
	'
	test_expect_success 'mblaze: mflag -S marks read, mlist -s sees it' '
		f=$(mlist "$V" | sed -n 1p) && mflag -S "$f" &&
		mlist -S "$V" >seen && [ "$(wc -l <seen)" -eq 1 ] && grep -q ":2,S$" seen &&
		[ -f "$(cat seen)" ]
	'
else
	test_skip 'mblaze on a view' 'mblaze is not installed'
fi
if command -v notmuch >/dev/null; then
	test_expect_success 'notmuch new indexes a view (database outside the mount)' '
		cat >nmconfig <<-EOC &&
		[database]
		path=$TRASH/nmdb
		mail_root=$V
		[new]
		ignore=.query;.status;.refresh;.config
		[maildir]
		synchronize_flags=true
		EOC
		mkdir nmdb && export NOTMUCH_CONFIG="$TRASH/nmconfig" &&
		notmuch new >nm.out 2>&1 && cat nm.out &&
		notmuch count "*" >actual && find "$V/cur" "$V/new" -type f | wc -l >expect &&
		test_cmp expect actual &&
		notmuch search --output=messages "*" | sed "s/^id://" | sort -u >actual &&
		find "$V/cur" "$V/new" -type f -exec grep -h -i -m1 "^Message-ID:" {} + |
			sed "s/.*<\(.*\)>.*/\1/" | sort -u >expect && test_cmp expect actual &&
		id=$(sed -n 3p expect) && notmuch search --output=files "id:$id" >actual &&
		msg_file "$V" "<$id>" >expect && test_cmp expect actual
	'
	test_expect_success 'notmuch tag +flagged renames the file in the view' '
		id=$(notmuch search --output=messages "path:cur/** AND NOT tag:flagged" | sed -n 1p) &&
		notmuch tag +flagged "$id" &&
		notmuch search --output=files "$id" >file && grep -q ":2,.*F" file &&
		[ -f "$(cat file)" ] && ls "$V/cur" | grep -q "$(basename "$(cat file)")"
	'
else
	test_skip 'notmuch on a view' 'notmuch is not installed'
fi

test_done

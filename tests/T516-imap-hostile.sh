#!/usr/bin/env bash
# IMAP servers that go wrong during a delivery (#27), played by
# tests/hostile-imap.py: one that reads an APPEND's literal and never
# answers fails the delivery at -o timeout (not minutes later), and SIGTERM
# meanwhile ends the daemon within 2 s; one whose LOGOUT never answers
# holds neither a delivery nor an exit; a folder path with '/' goes to a
# server whose separator is '/' as written; APPENDs are pipelined, and one
# the server refuses (before its literal, or after it) stops no other and
# goes again at the next refresh.  The '.' separator is T515's (Dovecot's
# maildir layout).
. "$(dirname "$0")/test-lib.sh"

export HOME="$TRASH/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$TRASH/gitconfig"
mkdir -p "$HOME"
git config --global credential.helper "store --file=$TRASH/creds"

# the source: a maildir of generated mail
python3 "$TEST_DIR/gen-mail.py" -s 3 -n 20 "$TRASH/gen" >/dev/null
SRC="$TRASH/src"
mkdir -p "$SRC/cur" "$SRC/new" "$SRC/tmp"
for f in "$TRASH"/gen/linux-rtc/*.eml; do cp "$f" "$SRC/new/$(basename "$f" .eml).test"; done

# imap_start MODE: the hostile server in MODE on a free port (IPORT), its
# commands logged to $TRASH/imap-MODE.log, its password in the store
imap_start() {
	IPORT=$(free_port)
	: >"$TRASH/imap-$1.log"
	python3 "$TEST_DIR/hostile-imap.py" "$IPORT" "$1" "$TRASH/imap-$1.log" &
	test_atexit "kill $! 2>/dev/null"
	test_wait_for 10 "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $IPORT), 1)' 2>/dev/null" &&
	printf "protocol=imap\nhost=127.0.0.1:%s\nusername=lore\npassword=x\n\n" "$IPORT" |
		git credential approve
}
# gone PID S: the process ends within S seconds
gone() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($2 * 10)) ] || { echo "still running $2 s after"; return 1; }
		sleep 0.1
	done
}
M="$TRASH/mnt"

test_expect_success 'an APPEND whose answer never comes fails at -o timeout' '
	imap_start stall-append &&
	leifs_mount "$M" -o "source=maildir:$SRC,cache=$TRASH/c1,timeout=3,imap=imap://lore@127.0.0.1:$IPORT/stall" &&
	V="$M/queries/s:rtc" && mkdir "$V" && ls "$V/cur" >/dev/null &&
	test_wait_for 20 "grep -q APPEND-LITERAL \"$TRASH/imap-stall-append.log\"" &&
	t0=$(date +%s.%N) &&
	test_wait_for 30 "grep -q \"^imap: .*: failed\" \"$V/.status\"" &&
	t1=$(date +%s.%N) && grep "^imap: " "$V/.status" >st && cat st &&
	awk -v a="$t0" -v b="$t1" "BEGIN { print b - a; exit !(b - a < 10) }" &&
	grep -qi "time" st && grep -q "^state: fresh" "$V/.status"
'
test_expect_success 'SIGTERM while an APPEND waits for its answer: gone within 2 s' '
	leifs_umount "$M" && : >"$TRASH/imap-stall-append.log" &&
	leifs_mount "$M" -o "source=maildir:$SRC,cache=$TRASH/c2,timeout=60,first_wait=0,imap=imap://lore@127.0.0.1:$IPORT/stall" &&
	V="$M/queries/s:rtc" && mkdir "$V" && ls "$V/cur" >/dev/null &&
	test_wait_for 20 "grep -q APPEND-LITERAL \"$TRASH/imap-stall-append.log\"" &&
	sleep 0.5 && pid=$(cat "$M.pid") && kill -TERM "$pid" && gone "$pid" 2 &&
	leifs --check "$TRASH/c2"
'
test_expect_success 'a LOGOUT that never answers holds up neither the delivery nor SIGTERM' '
	leifs_umount "$M" && imap_start stall-logout &&
	leifs_mount "$M" -o "source=maildir:$SRC,cache=$TRASH/c3,timeout=60,first_wait=0,imap=imap://lore@127.0.0.1:$IPORT/slow" &&
	V="$M/queries/s:rtc" && mkdir "$V" && ls "$V/cur" >/dev/null &&
	test_wait_for 20 "grep -q LOGOUT \"$TRASH/imap-stall-logout.log\"" &&
	t0=$(date +%s.%N) && n=$(ls "$V/cur" | wc -l) &&
	test_wait_for 20 "grep -q \"^state: fresh\" \"$V/.status\"" &&
	awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN { print b - a; exit !(b - a < 10) }" &&
	grep -qx "imap: imap://lore@127.0.0.1:$IPORT/slow: ok, $n delivered" "$V/.status" &&
	: >"$TRASH/imap-stall-logout.log" && echo 1 >"$V/.refresh" &&
	test_wait_for 20 "grep -q LOGOUT \"$TRASH/imap-stall-logout.log\"" &&
	pid=$(cat "$M.pid") && kill -TERM "$pid" && gone "$pid" 2
'
test_expect_success 'a folder path with / goes as written to a server whose separator is /' '
	leifs_umount "$M" && imap_start slash &&
	leifs_mount "$M" -o "source=maildir:$SRC,cache=$TRASH/c4,timeout=10,imap=imap://lore@127.0.0.1:$IPORT/lore/rtc" &&
	V="$M/queries/s:rtc" && mkdir "$V" && n=$(ls "$V/cur" | wc -l) &&
	test_wait_for 20 "grep -qx \"imap: imap://lore@127.0.0.1:$IPORT/lore/rtc: ok, $n delivered\" \"$V/.status\"" &&
	grep -q " CREATE \"lore/rtc\"" "$TRASH/imap-slash.log" &&
	grep -q " EXAMINE \"lore/rtc\"" "$TRASH/imap-slash.log"
'
# refused MODE FOLDER: the 3rd APPEND is refused, the others delivered,
# .status says so; the next refresh delivers the refused one
refused() {
	leifs_umount "$M" && imap_start "$1" &&
	leifs_mount "$M" -o "source=maildir:$SRC,cache=$TRASH/c-$1,timeout=10,imap=imap://lore@127.0.0.1:$IPORT/$2" &&
	V="$M/queries/s:rtc" && mkdir "$V" && n=$(ls "$V/cur" | wc -l) &&
	test_wait_for 20 "grep -q \"^imap: .*: failed\" \"$V/.status\"" &&
	grep "^imap: " "$V/.status" >st && cat st &&
	grep -q "1 refused by the server" st && grep -q "TOOBIG" st &&
	[ "$(grep -c APPEND-REFUSED "$TRASH/imap-$1.log")" = 1 ] &&
	echo 1 >"$V/.refresh" &&
	test_wait_for 20 "grep -qx \"imap: imap://lore@127.0.0.1:$IPORT/$2: ok, $n delivered\" \"$V/.status\"" &&
	# n + 1 APPENDs in all: the refused one went twice, no other did
	[ "$(grep -c " APPEND " "$TRASH/imap-$1.log")" = $((n + 1)) ]
}
test_expect_success 'an APPEND refused before its literal stops no other, and goes again' '
	refused refuse sync
'
test_expect_success 'with LITERAL+ the APPENDs are pipelined; one refused after its literal stops no other' '
	refused refuse-plus plus &&
	grep " APPEND " "$TRASH/imap-refuse-plus.log" | grep -c "+}" >plus &&
	[ "$(cat plus)" = "$(grep -c " APPEND " "$TRASH/imap-refuse-plus.log")" ] &&
	# the next APPEND was on its way before each answer, all but the
	# last of each batch
	[ "$(grep -c PIPELINED "$TRASH/imap-refuse-plus.log")" -ge $((n / 2)) ]
'
test_done

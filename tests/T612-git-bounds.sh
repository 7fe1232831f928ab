#!/usr/bin/env bash
# git, as leifs runs it for an archive and for the dates of a local query,
# is bounded like the network: an inbox whose objects git cannot open
# without waiting (a FIFO as a loose object) fails the search within the
# timeout, and unmounting ends the daemon; a git that never answers the
# dates of rt:2.weeks.ago.. fails the search, never the daemon.  (The
# cleanup kills with -9: a git that hangs here must not outlive the test
# whatever its signal mask.)
. "$(dirname "$0")/test-lib.sh"

mkdir -p "$TRASH/eml"
for i in 1 2 3; do
	cat >"$TRASH/eml/$i.eml" <<EOF2
From: Tester <tester@leifs.test>
Subject: bound message $i
Date: Mon, 2 Jan 2023 10:0$i:00 +0000
Message-ID: <bound-$i@leifs.test>

body $i
EOF2
done
g="$TRASH/inbox/git/0.git"
mkdir -p "$TRASH/inbox/git"
python3 "$TEST_DIR/pi-import.py" "$g" "$TRASH"/eml/*.eml >/dev/null

M="$TRASH/mnt"
test_expect_success 'an inbox with a FIFO as a loose object' '
	b=$(git hash-object "$TRASH/eml/2.eml") &&
	f="$g/objects/$(echo "$b" | cut -c1-2)/$(echo "$b" | cut -c3-)" &&
	[ -f "$f" ] && rm -f "$f" && mkfifo "$f" &&
	test_atexit "timeout 2 sh -c \": >\\\"$f\\\"\"" &&
	leifs_mount "$M" -o "source=$TRASH/inbox,cache=$TRASH/cache,timeout=3"
'
test_expect_success 'its search fails within the timeout, never stays refreshing' '
	v="$M/queries/s:bound" && mkdir "$v" && timeout 20 ls "$v/cur" >/dev/null &&
	test_wait_for 15 "grep -q \"^state: failed\" \"$v/.status\"" ||
	{ cat "$v/.status"; false; }
'
test_expect_success 'unmount ends the daemon (no search waits on git forever)' '
	pid=$(cat "$M.pid") && fusermount3 -u -z "$M" &&
	test_wait_for 15 "! kill -0 $pid 2>/dev/null"
'

# a git that never answers (the dates of a local query)
mkdir -p "$TRASH/bin"
cat >"$TRASH/bin/git" <<EOF2
#!/bin/sh
case "\$*" in *--since=*) echo \$\$ >>"$TRASH/hung"; exec sleep 3600 ;; esac
exec $(command -v git) "\$@"
EOF2
chmod +x "$TRASH/bin/git"
test_atexit 'kill -9 $(cat "$TRASH/hung" 2>/dev/null) 2>/dev/null'
printf 'From x Thu Jan  1 00:00:00 1970\n' >"$TRASH/one.mbox"
cat "$TRASH/eml/1.eml" >>"$TRASH/one.mbox"
M2="$TRASH/mnt2"
test_expect_success 'leifs mounts an mbox with a git that hangs on dates' '
	PATH="$TRASH/bin:$PATH" leifs_mount "$M2" \
		-o "source=$TRASH/one.mbox,cache=$TRASH/cache2,timeout=3"
'
test_expect_success 'a query with rt:2.weeks.ago.. fails, within the timeout' '
	v="$M2/queries/s:bound rt:20000101.." && mkdir "$v" && timeout 20 ls "$v/cur" >/dev/null &&
	printf "s:bound AND rt:2.weeks.ago..\n" >"$v/.query" &&
	test_wait_for 15 "grep -q \"^state: failed\" \"$v/.status\"" ||
	{ cat "$v/.status"; false; }
'
test_expect_success 'unmount ends that daemon too' '
	pid=$(cat "$M2.pid") && fusermount3 -u -z "$M2" &&
	test_wait_for 15 "! kill -0 $pid 2>/dev/null"
'
test_done

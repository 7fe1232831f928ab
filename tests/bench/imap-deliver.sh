#!/usr/bin/env bash
# imap-deliver.sh: a first delivery of a view of N messages (N=${N:-2000},
# from a generated local mbox, ~3 KB each) to an IMAP folder of Dovecot on
# loopback by leifs itself: from the write of the view's .config with its
# `imap = ...` (the view filled before) until .status says all were
# delivered (a refresh with nothing new included), vs mbsync (isync) pushing the same view into another
# folder of the same server (Sync Push, Create Far).  Prints the ratio.
BENCH_NAME=imap-deliver
. "$(dirname "$0")/lib-bench.sh"
. "$TEST_DIR/lib-dovecot.sh"
N=${N:-2000}
LEIFS=${LEIFS:-$SRC_DIR/leifs}
M="$TRASH/mnt"
if ! command -v dovecot >/dev/null; then
	echo "imap-deliver: skipped (dovecot-imapd is not installed)"
	exit 0
fi
python3 - "$N" >"$TRASH/bench.mbox" <<'EOPY'
import sys
n = int(sys.argv[1])
out = sys.stdout
body = ''.join('line %d of a patch-sized body, with some text to carry\n' % k for k in range(50))
for i in range(n):
    out.write('From mboxrd@z Thu Jan  1 00:00:00 1970\n'
              'From: Bench Sender <bench%d@example.org>\n'
              'To: list@example.org\n'
              'Subject: bench message %d\n'
              'Date: Thu, 01 Oct 2026 %02d:%02d:%02d +0000\n'
              'Message-ID: <bench-%d@example.org>\n'
              '\n%s\n' % (i % 97, i, i // 3600 % 24, i // 60 % 60, i % 60, i, body))
EOPY
PORT=$(free_port)
# DOVECOT_DIR=/dev/shm/...: the server on tmpfs, so that its fsyncs of
# each message are not what both clients wait for
DOVECOT_DIR=${DOVECOT_DIR:-$TRASH/dovecot}
dovecot_start "$DOVECOT_DIR" "$PORT" lore s3cret || exit 1
export HOME="$TRASH/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$TRASH/gitconfig"
mkdir -p "$HOME"
git config --global credential.helper "store --file=$TRASH/creds"
printf 'protocol=imap\nhost=127.0.0.1:%s\nusername=lore\npassword=s3cret\n\n' "$PORT" |
	git credential approve
mkdir -p "$M"
"$LEIFS" -f -o "source=$TRASH/bench.mbox,cache=$TRASH/cache,timeout=3600,first_wait=3600,refresh=100000" "$M" 2>"$TRASH/leifs.log" &
LPID=$!
# the daemon's CPU seconds (user + system) so far
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$LPID/stat"; }
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"
test_wait_for 10 "mountpoint -q '$M'"
V="$M/queries/s:bench"
t0=$(now)
mkdir "$V" && ls -f "$V/cur" >/dev/null
t_fill=$(calc "$(now) - $t0")
# the view's folder given: a refresh (nothing new) and the first delivery
c0=$(cpu)
t0=$(now)
printf '[leifs]\n\tsource = %s\n\timap = imap://lore@127.0.0.1:%s/bench-leifs\n' \
	"$TRASH/bench.mbox" "$PORT" >"$V/.config"
test_wait_for 3600 "grep -q '^imap: .*: ok, $N delivered' '$V/.status'"
t_leifs=$(calc "$(now) - $t0")
c_leifs=$(calc "$(cpu) - $c0")
grep '^imap:' "$V/.status"
echo "leifs CPU during the delivery: $c_leifs s"
if ! command -v mbsync >/dev/null; then
	printf 'imap-deliver: %s messages (fill %.2f s): leifs delivery %.2f s (mbsync not installed: no ratio)\n' "$N" "$t_fill" "$t_leifs"
	exit 0
fi
cat >"$TRASH/mbsyncrc" <<EOC
IMAPAccount bench
Host 127.0.0.1
Port $PORT
User lore
Pass s3cret
SSLType None
AuthMechs LOGIN

IMAPStore imap
Account bench

MaildirStore view
Inbox $V

Channel bench
Far :imap:bench-mbsync
Near :view:
Create Far
Sync Push
Expunge None
SyncState $TRASH/mbsync-state/
EOC
mkdir -p "$TRASH/mbsync-state"
t0=$(now)
mbsync -c "$TRASH/mbsyncrc" bench >"$TRASH/mbsync.out" 2>&1 || cat "$TRASH/mbsync.out"
t_mbsync=$(calc "$(now) - $t0")
printf 'imap-deliver: %s messages (fill %.2f s): leifs delivery %.2f s, mbsync push of the view %.2f s: leifs/mbsync %.2f\n' \
	"$N" "$t_fill" "$t_leifs" "$t_mbsync" "$(calc "$t_leifs / $t_mbsync")"

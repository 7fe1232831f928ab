#!/usr/bin/env bash
# status.sh: the cost of reading VIEW/.status on a large view (issue #15:
# a request's cost must not grow with the view).  Builds a local mbox of
# N messages (N=${N:-30000}, all matching "s:bench"), fills one view from
# it, then times `cat VIEW/.status` (median of RUNS after a warm-up) and,
# for scale, `ls -f VIEW/cur`.
BENCH_NAME=status
. "$(dirname "$0")/lib-bench.sh"
N=${N:-30000}
LEIFS=${LEIFS:-$SRC_DIR/leifs}
M="$TRASH/mnt"
python3 - "$N" >"$TRASH/bench.mbox" <<'EOPY'
import sys
n = int(sys.argv[1])
out = sys.stdout
for i in range(n):
    out.write('From mboxrd@z Thu Jan  1 00:00:00 1970\n'
              'From: Bench Sender <bench%d@example.org>\n'
              'To: list@example.org\n'
              'Subject: bench message %d\n'
              'Date: Thu, 01 Oct 2026 %02d:%02d:%02d +0000\n'
              'Message-ID: <bench-%d@example.org>\n'
              '\n'
              'body of message %d\n\n' % (i % 97, i, i // 3600 % 24, i // 60 % 60, i % 60, i, i))
EOPY
mkdir -p "$M"
"$LEIFS" -f -o "source=$TRASH/bench.mbox,cache=$TRASH/cache,timeout=3600,first_wait=3600,refresh=100000" "$M" 2>"$TRASH/leifs.log" &
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"
test_wait_for 10 "mountpoint -q '$M'"
V="$M/queries/s:bench"
t0=$(now)
mkdir "$V"
n=$(ls -f "$V/cur" | grep -c leifs)
t_fill=$(calc "$(now) - $t0")
cat_status() { cat "$V/.status"; }
# 200 reads of .status in one process (no fork per read): the daemon's cost
reads_status() {
	python3 -c 'import sys
for i in range(200):
    open(sys.argv[1], "rb").read()' "$V/.status"
}
ls_cur() { ls -f "$V/cur"; }
t_status=$(timeit cat_status)
t_ls=$(timeit ls_cur)
t_reads=$(timeit reads_status)
grep '^messages' "$V/.status"
printf 'status: %s messages (fill %.1f s): cat .status %.4f s, one read of .status %.5f s (of 200 in a process), ls -f cur %.3f s (medians of %d)\n' \
	"$n" "$t_fill" "$t_status" "$(calc "$t_reads / 200")" "$t_ls" "$RUNS"

#!/usr/bin/env bash
# overview.sh: the cost of reading queries/.status with N views (default
# 1,000; issue #16: it reads each view's record and counters, never its
# entries).  The views are made with mkdir only, over a source that is
# never asked (no listing), so they hold nothing; then times
# `cat queries/.status` (median of RUNS after a warm-up) and one read of
# it (of 50 in one process).
BENCH_NAME=overview
. "$(dirname "$0")/lib-bench.sh"
N=${N:-1000}
LEIFS=${LEIFS:-$SRC_DIR/leifs}
M="$TRASH/mnt"
mkdir -p "$M"
"$LEIFS" -f -o "source=http://127.0.0.1:9/,cache=$TRASH/cache,refresh=100000" "$M" 2>"$TRASH/leifs.log" &
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"
test_wait_for 10 "mountpoint -q '$M'"
t0=$(now)
(cd "$M/queries" && for i in $(seq "$N"); do mkdir "s:view$i"; done)
t_mkdir=$(calc "$(now) - $t0")
cat_status() { cat "$M/queries/.status"; }
reads_status() {
	python3 -c 'import sys
for i in range(50):
    open(sys.argv[1], "rb").read()' "$M/queries/.status"
}
rows=$(cat_status | grep -c "^s:view")
t_status=$(timeit cat_status)
t_reads=$(timeit reads_status)
printf 'overview: %s views (%s rows, mkdir %.1f s): cat queries/.status %.4f s, one read %.5f s (of 50 in a process), %s bytes (medians of %d)\n' \
	"$N" "$rows" "$t_mkdir" "$t_status" "$(calc "$t_reads / 50")" "$(cat_status | wc -c)" "$RUNS"

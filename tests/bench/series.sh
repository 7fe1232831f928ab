#!/usr/bin/env bash
# series.sh: VIEW/series/ on a view of the whole shared corpus (both lists,
# ~33,600 messages, from a local mbox, so no server is the limit):
# `ls series/` cold (every thread made the first time) and warm, the
# reading of every am.mbx vs the same files on tmpfs, and what b4 takes for
# one series: `b4 am -m VIEW MSGID` (what a user runs today, b4 reading the
# whole maildir each time) and b4 given only the thread (its best case),
# for SAMPLE series (default 3), against leifs's cold cost per series.
# Skipped without ../shared/corpus.
BENCH_NAME=series
. "$(dirname "$0")/lib-bench.sh"
SAMPLE=${SAMPLE:-3}
LEIFS=${LEIFS:-$SRC_DIR/leifs}
C="$SHARED_DIR/corpus"
[ -x "$C/to-mbox" ] || { echo "series.sh: skipped (no $C here)"; exit 0; }
command -v b4 >/dev/null || { echo "series.sh: skipped (no b4)"; exit 0; }

# the mbox is kept for the next run, as the corpus slices are
MB="$TEST_DIR/.corpus-cache/series-all.mbox"
if [ ! -s "$MB" ]; then
	mkdir -p "${MB%/*}"
	{ python3 "$C/to-mbox" "$C/linux-rtc.git" && python3 "$C/to-mbox" "$C/linux-watchdog.git"; } \
		>"$MB.new" && mv "$MB.new" "$MB" || exit 1
fi
M="$TRASH/mnt"
mkdir -p "$M"
"$LEIFS" -f -o "source=$MB,cache=$TRASH/cache,timeout=3600,first_wait=3600,refresh=100000" "$M" \
	2>"$TRASH/leifs.log" &
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"
test_wait_for 10 "mountpoint -q '$M'"
V="$M/queries/d:19000101.."
t0=$(now)
mkdir "$V" && n=$(ls -f "$V/cur" | grep -c .)
t_fill=$(calc "$(now) - $t0")
S="$V/series"

t0=$(now)
ns=$(ls "$S" | wc -l)
t_cold=$(calc "$(now) - $t0")
t_warm=$(timeit ls "$S")

T=/dev/shm/leifs-bench-series-$$
mkdir -p "$T" && test_atexit "rm -rf $T"
for s in $(ls "$S"); do
	mkdir "$T/$s" && cp "$S/$s/am.mbx" "$T/$s/"
done
bytes=$(cat "$T"/*/am.mbx | wc -c)
readall() { cat "$1"/*/am.mbx >/dev/null; }
t_read=$(timeit readall "$S")
t_tmpfs=$(timeit readall "$T")

# b4 on SAMPLE series spread over the view (their first message's id)
export HOME="$TRASH/b4-home"
mkdir -p "$HOME"
git config --global user.name "B4 Bench" && git config --global user.email b4@bench.invalid
picks=$(ls "$S" | awk -v n="$ns" -v k="$SAMPLE" 'NR % int(n / k + 1) == 1' | head -n "$SAMPLE")
b4_view=0 b4_thread=0 k=0
for s in $picks; do
	mid=$(sed -n 's/^message-id: <\(.*\)>$/\1/p' "$S/$s/info")
	rev=$(sed -n 's/^revision: //p' "$S/$s/info")
	t0=$(now)
	b4 --offline-mode am -m "$V" -v "$rev" -o "$TRASH/b4-out" "$mid" >/dev/null 2>&1
	b4_view=$(calc "$b4_view + $(now) - $t0")
	# the thread alone: the messages of the view that reference the id
	grep -l -r -F "$mid" "$V/cur" | sort >"$TRASH/thread.list"
	xargs cat <"$TRASH/thread.list" >/dev/null      # read once, as b4 gets it
	t0=$(now)
	python3 -c 'import sys
out = sys.stdout.buffer
for p in open(sys.argv[1]).read().split():
    out.write(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + open(p, "rb").read() + b"\n")' \
		"$TRASH/thread.list" >"$TRASH/thread.mbox" &&
		b4 --offline-mode am -m "$TRASH/thread.mbox" -v "$rev" -o "$TRASH/b4-out" "$mid" \
			>/dev/null 2>&1
	b4_thread=$(calc "$b4_thread + $(now) - $t0")
	k=$((k + 1))
done

printf 'series/: a view of %s messages (the whole shared corpus, local mbox), %s series\n' "$n" "$ns"
printf 'first fill of the view (mkdir + ls -f cur): %.1f s (not series)\n\n' "$t_fill"
printf '%-40s %10s %10s %8s\n' "what" "leifs s" "ref s" "ratio"
printf '%-40s %10.4f %10s %8s\n' "ls series/ cold (all made)" "$t_cold" "-" "-"
printf '%-40s %10.4f %10s %8s\n' "ls series/ warm" "$t_warm" "-" "-"
printf '%-40s %10.4f %10.4f %7.2fx\n' "read every am.mbx ($((bytes >> 10)) KiB) vs tmpfs" \
	"$t_read" "$t_tmpfs" "$(calc "$t_read / $t_tmpfs")"
if [ "$k" -gt 0 ]; then
	per=$(calc "$t_cold / $ns")
	printf '%-40s %10.4f %10.4f %7.4fx\n' "one series: cold/series vs b4 am -m VIEW" "$per" \
		"$(calc "$b4_view / $k")" "$(calc "$per / ($b4_view / $k)")"
	printf '%-40s %10.4f %10.4f %7.4fx\n' "one series: cold/series vs b4 on thread" "$per" \
		"$(calc "$b4_thread / $k")" "$(calc "$per / ($b4_thread / $k)")"
fi
printf '(b4 over %s series; ls warm and reads: median of %s after a warm-up)\n' "$k" "$RUNS"

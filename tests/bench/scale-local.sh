#!/usr/bin/env bash
# scale-local.sh [SIZE...]: how leifs's figures grow with the size of a view
# when no server is the bottleneck (issue #15).  For each SIZE (default
# 1000 30000 200000) a local mbox of SIZE generated messages, all matching
# "s:bench" (subjects and bodies vary a little, so grep has work), and a
# fresh mount and cache (default first_wait, 1 s):
#   first    mkdir VIEW until the first `ls -f VIEW/cur` returns, and what
#            it listed (leifs shows what arrived within first_wait)
#   full     mkdir VIEW until .status says the fill ended and ls -f lists it
#   .status  one read of VIEW/.status (200 in one process, as status.sh)
#   refresh  touch VIEW/.refresh with nothing new until .status says it
#            ended (state fresh, last-refresh changed)
#   10 new   the same once 10 messages were appended to the mbox (each run
#            adds 10 more), and they are in .status's count
#   ls -f x, grep x   warm, leifs / the same files on tmpfs (/dev/shm)
#   HWM      the daemon's VmHWM once the fill is listed; idle: VmRSS and
#            RssAnon after 5 s idle; then after everything above (the
#            refreshes and RUNS + 1 grep -r): RssAnon and RssFile (LMDB's
#            pages mapped by reads) and VmHWM
# Medians of RUNS (after a warm-up) for .status, refresh, ls and grep.
BENCH_NAME=scale-local
. "$(dirname "$0")/lib-bench.sh"
LEIFS=${LEIFS:-$SRC_DIR/leifs}
[ $# -gt 0 ] || set -- 1000 30000 200000
M="$TRASH/mnt"
T=/dev/shm/leifs-scale-local-$$
mkdir -p "$M"
pid=""
test_atexit "rm -rf '$T'"
test_atexit "[ -z \"\$pid\" ] || kill \$pid 2>/dev/null"
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"

# gen_mbox N [FIRST]: N messages numbered from FIRST (default 0)
gen_mbox() {
	python3 - "$1" "${2:-0}" <<'EOPY'
import random, sys
n = int(sys.argv[1])
first = int(sys.argv[2])
rnd = random.Random(15 + first)
words = ("rtc alarm timer probe driver fix clock irq watchdog ping timeout "
         "device tree binding regulator suspend resume offset calibrate "
         "register read write update cleanup refactor error path leak "
         "lock unlock queue request release open close").split()
out = sys.stdout
base = 1790812800  # 2026-10-01 00:00:00 UTC, far outside the refresh margin
days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
import time
for i in range(first, first + n):
    t = time.gmtime(base + i * 7)
    date = "%s, %02d %s %d %02d:%02d:%02d +0000" % (days[t.tm_wday], t.tm_mday,
            months[t.tm_mon - 1], t.tm_year, t.tm_hour, t.tm_min, t.tm_sec)
    subj = " ".join(rnd.choice(words) for _ in range(rnd.randint(2, 6)))
    lines = []
    for _ in range(rnd.randint(2, 25)):
        lines.append(" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 12))))
    if rnd.random() < 0.3:
        lines.append("")
        lines.append("Signed-off-by: Bench Sender %d <bench%d@example.org>" % (i % 97, i % 97))
    out.write('From mboxrd@z Thu Jan  1 00:00:00 1970\n'
              'From: Bench Sender %d <bench%d@example.org>\n'
              'To: list@example.org\n'
              'Subject: bench: %s (%d)\n'
              'Date: %s\n'
              'Message-ID: <bench-%d@example.org>\n'
              '\n%s\n\n' % (i % 97, i % 97, subj, i, date, i, "\n".join(lines)))
EOPY
}
status_of() { sed -n "s/^$1: //p" "$V/.status"; }
# 200 reads of .status in one process (no fork per read): the daemon's cost
reads_status() {
	python3 -c 'import sys
for i in range(200):
    open(sys.argv[1], "rb").read()' "$V/.status"
}
kib() { awk "/^$1:/ {print \$2}" "/proc/$pid/status"; }

printf 'scale-local: generated local mbox, query s:bench (every message), fresh mount and cache per size\n'
printf 'goals: first listing holds mail; .status <= 10 ms; refresh with nothing new <= 0.1 s, with 10 new <= 0.3 s;\n'
printf '       ls -f <= 1.5x tmpfs; grep -r <= 1.2x tmpfs; VmHWM <= 128 MiB; anon at the end within 16 MiB of idle\n'
printf 'medians of %s after a warm-up (first and full: one fill)\n\n' "$RUNS"
printf '%8s %7s %8s %7s %8s %9s %9s %8s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n' msgs "first s" "first n" "1st msg" "full s" ".status ms" "refresh s" "10 new s" \
	"ls -f x" "grep x" "HWM MiB" "idle" "anon0" "anon" "file" "HWM end" "forgot"
for N in "$@"; do
	rm -rf "$TRASH/cache" "$TRASH/bench.mbox"
	gen_mbox "$N" >"$TRASH/bench.mbox" || exit 1
	sync
	"$LEIFS" -f -o "source=$TRASH/bench.mbox,cache=$TRASH/cache,timeout=3600,refresh=100000" "$M" \
		2>"$TRASH/leifs-$N.log" &
	pid=$!
	test_wait_for 20 "mountpoint -q '$M'" || { echo "scale-local: no mount" >&2; exit 1; }
	V="$M/queries/s:bench"
	t0=$(now)
	mkdir "$V"
	n1=$(ls -f "$V/cur" | grep -c leifs)
	t1=$(now)
	# the whole fill: .status says it ended, then one listing shows it all;
	# meanwhile when the view first holds a message (polled every 0.1 s)
	tm=""; [ "$n1" -eq 0 ] || tm=$(calc "$t1 - $t0")
	while [ "$(status_of state)" = refreshing ]; do
		[ -n "$tm" ] || [ "$(status_of messages)" = 0 ] || tm=$(calc "$(now) - $t0")
		sleep 0.1
	done
	[ -n "$tm" ] || tm=$(calc "$(now) - $t0")
	n=$(ls -f "$V/cur" | grep -c leifs)
	t2=$(now)
	[ "$n" -eq "$N" ] || echo "scale-local: $N messages in the mbox, $n listed ($(status_of messages) in .status)" >&2
	hwm=$(kib VmHWM)
	sleep 5
	idle=$(kib VmRSS); anon0=$(kib RssAnon)
	st=$(timeit reads_status)
	r=$(for i in $(seq "$RUNS"); do
		sleep 1 # last-refresh counts seconds: let it differ
		last=$(status_of last-refresh)
		ta=$(now); touch "$V/.refresh"
		test_wait_for 600 "[ \"\$(status_of state)\" = fresh ] && [ \"\$(status_of last-refresh)\" != '$last' ]" ||
			echo "scale-local: refresh did not end" >&2
		calc "$(now) - $ta"
	done | median)
	added=$N
	r10=$(for i in $(seq "$RUNS"); do
		sleep 1
		last=$(status_of last-refresh)
		gen_mbox 10 "$added" >>"$TRASH/bench.mbox"
		added=$((added + 10))
		ta=$(now); touch "$V/.refresh"
		test_wait_for 600 "[ \"\$(status_of state)\" = fresh ] && [ \"\$(status_of last-refresh)\" != '$last' ]" ||
			echo "scale-local: refresh did not end" >&2
		calc "$(now) - $ta"
		[ "$(status_of messages)" = "$added" ] ||
			echo "scale-local: $added in the mbox, $(status_of messages) in .status" >&2
	done | median)
	rm -rf "$T"; mkdir -p "$T"; cp -r "$V/cur" "$T/"
	la=$(timeit ls -f "$V/cur"); lb=$(timeit ls -f "$T/cur")
	ga=$(timeit grep -r -c Signed-off-by "$V/cur"); gb=$(timeit grep -r -c Signed-off-by "$T/cur")
	anon=$(kib RssAnon); file=$(kib RssFile); hwm2=$(kib VmHWM)
	# what of anon is the inode table (a node per file the kernel looked
	# up, held until it forgets them): the kernel's caches dropped (root)
	forgot=-
	if [ -w /proc/sys/vm/drop_caches ]; then
		sync; echo 2 >/proc/sys/vm/drop_caches; sleep 2
		forgot=$(($(kib RssAnon) / 1024))
	fi
	printf '%8d %7.2f %8d %7.2f %8.2f %9.2f %9.3f %8.3f %7.2f %7.2f %7d %7d %7d %7d %7d %7d %7s\n' "$n" "$(calc "$t1 - $t0")" "$n1" \
		"$tm" "$(calc "$t2 - $t0")" "$(calc "$st / 200 * 1000")" "$r" "$r10" "$(calc "$la / $lb")" "$(calc "$ga / $gb")" \
		"$((hwm / 1024))" "$((idle / 1024))" "$((anon0 / 1024))" "$((anon / 1024))" "$((file / 1024))" "$((hwm2 / 1024))" "$forgot"
	echo "  $N: ls -f $la s vs $lb s, grep -r $ga s vs $gb s; after the refreshes:" $(grep -e "^source" -e "^last-" "$V/.status") >&2
	rm -rf "$T"
	fusermount3 -u "$M" || fusermount3 -u -z "$M"
	test_wait_for 30 "! kill -0 $pid 2>/dev/null" || kill "$pid"
	pid=""
done
printf '\nfirst: mkdir until the first ls -f cur returns (first n: what it listed);\n'
printf '1st msg: until .status counts a message; full: until the whole fill is listed;\n'
printf '.status: one read; 10 new: a refresh that finds 10 appended messages;\n'
printf 'HWM: VmHWM after the fill; idle, anon0: VmRSS and RssAnon 5 s later;\n'
printf 'anon, file: RssAnon and RssFile after the timings; HWM end: VmHWM then;\n'
printf 'forgot: RssAnon once the kernel dropped its inodes (drop_caches 2; root only)\n'

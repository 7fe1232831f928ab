#!/usr/bin/env bash
# warm-read.sh: a view of about 10,000 messages against the same files on
# tmpfs, second pass (warm caches): ls -f of cur/, grep -r over the view,
# find -newer, neomutt's time to its index; and what filling it cost: the
# daemon's peak RSS while it ingested the answer, and the cache's size on
# disk next to the raw mail.
# THREADS generated threads (about 3.5 messages each; default 2900).
BENCH_NAME=warm
. "$(dirname "$0")/lib-bench.sh"
THREADS=${THREADS:-2900}

# the archive is kept for the next run, as the corpus slices are
G="$TEST_DIR/.corpus-cache/gen-$THREADS"
W="$G/pi"
if [ ! -e "$G/.built" ]; then
	echo "building an archive of $THREADS threads..." >&2
	rm -rf "$G"
	python3 "$TEST_DIR/gen-mail.py" -n "$THREADS" "$G/mail" && pi_build "$W" "$G/mail" &&
		touch "$G/.built" || exit 1
fi
PORT=$(free_port)
pi_start "$W" "$PORT" "$TRASH" || exit 1
URL="http://127.0.0.1:$PORT/all/"
Q='s:PATCH OR s:Re'

M="$TRASH/mnt"; mkdir -p "$M"
"$SRC_DIR/leifs" -o "source=$URL,cache=$TRASH/cache,timeout=600,first_wait=600,refresh=100000" "$M" || exit 1
test_atexit "fusermount3 -u $M"
pid=$(pgrep -n -f "leifs -o source=$URL")
V="$M/queries/$Q"
t0=$(now)
mkdir "$V" && n=$(ls "$V/cur" | wc -l)
fill=$(calc "$(now) - $t0")
rss=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")

T=/dev/shm/leifs-bench-$$
mkdir -p "$T" && test_atexit "rm -rf $T"
cp -r "$V/cur" "$T/" && mkdir "$T/new" "$T/tmp"
raw=$(du -sb "$T/cur" | cut -f1)
disk=$(du -sb "$TRASH/cache/lmdb" | cut -f1)

ref=$(ls "$T/cur" | sort -n | sed -n "$((n / 2))p" | cut -d. -f1)
touch -d "@$ref" "$TRASH/ref"
printf 'warm reads: %s messages (%s), median of %s after a warm-up\n\n' "$n" "$Q" "$RUNS"
printf '%-28s %10s %10s %8s\n' "what" "leifs s" "tmpfs s" "ratio"
for what in "ls -f cur" "grep -r" "find -newer" "neomutt index"; do
	[ "$what" = "neomutt index" ] && ! command -v neomutt >/dev/null && continue
	case $what in
	"ls -f cur") a=$(timeit ls -f "$V/cur"); b=$(timeit ls -f "$T/cur") ;;
	"grep -r") a=$(timeit grep -r -c "Signed-off-by" "$V/cur"); b=$(timeit grep -r -c "Signed-off-by" "$T/cur") ;;
	"find -newer") a=$(timeit find "$V/cur" -newer "$TRASH/ref"); b=$(timeit find "$T/cur" -newer "$TRASH/ref") ;;
	"neomutt index") a=$(neomutt_open "$V"); b=$(neomutt_open "$T") ;;
	esac
	printf '%-28s %10.4f %10.4f %7.2fx\n' "$what" "$a" "$b" "$(calc "$a / $b")"
done
printf '\nfirst fill (mkdir + ls): %.2f s for %s messages\n' "$fill" "$n"
printf 'daemon peak RSS during the fill: %d MiB\n' "$((rss / 1024))"
printf 'raw mail %d MiB, cache on disk %d MiB (%.2fx)\n' "$((raw >> 20))" "$((disk >> 20))" "$(calc "$disk / $raw")"

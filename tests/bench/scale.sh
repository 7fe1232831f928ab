#!/usr/bin/env bash
# scale.sh: how leifs's figures grow with the size of a view, over the whole
# shared corpus (both lists, 33,597 messages; pi-serve builds it once, about
# 13 minutes, in tests/.corpus-cache/full).  For each query, on a fresh mount
# and cache: the first fill vs curl | gzip -dc, the daemon's peak RSS, the
# cache on disk vs the raw mail, a refresh with nothing new, and warm ls -f
# and grep -r vs the same files on tmpfs.  Needs ../shared/corpus.
BENCH_NAME=scale
. "$(dirname "$0")/lib-bench.sh"
if [ ! -x "$SHARED_DIR/corpus/pi-serve" ]; then
	echo "scale.sh: skipped, no ../shared/corpus here"
	exit 0
fi
PORT=$(free_port)
W="$TEST_DIR/.corpus-cache/full"
mkdir -p "$W"
echo "serving the whole corpus (the first run builds it: ~13 minutes)..." >&2
"$SHARED_DIR/corpus/pi-serve" -p "$PORT" "$W" >/dev/null || exit 1
test_atexit "kill \$(cat $W/httpd.pid)"
URL="http://127.0.0.1:$PORT/all/"
if [ $# -eq 0 ]; then
	set -- 'dfn:drivers/rtc/* AND d:2023-01-01..' 's:watchdog AND s:PATCH' \
		's:rtc OR s:watchdog' 'd:2000-01-01..'
fi

T=/dev/shm/leifs-scale-$$
test_atexit "rm -rf $T"
M="$TRASH/mnt"
mkdir -p "$M"
printf '%-38s %7s %8s %8s %6s %7s %9s %8s %8s %8s\n' query msgs "fill s" "curl s" ratio "RSS MiB" "disk/raw" "refresh" "ls -f x" "grep x"
for Q in "$@"; do
	enc=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$Q")
	c=$(for i in $(seq "$RUNS"); do
		t0=$(now); curl -fsS -d '' "$URL?q=$enc&x=m" | gzip -dc >/dev/null; calc "$(now) - $t0"
	done | median)
	fills=""
	for i in $(seq "$RUNS"); do
		rm -rf "$TRASH/cache"
		"$SRC_DIR/leifs" -o "source=$URL,cache=$TRASH/cache,timeout=900,first_wait=900,refresh=100000" "$M" || exit 1
		pid=$(pgrep -n -f "leifs -o source=$URL")
		name=$(printf '%s' "$Q" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
		V="$M/queries/$name"
		t0=$(now)
		mkdir "$V" && n=$(ls -f "$V/cur" | grep -c leifs)
		fills="$fills $(calc "$(now) - $t0")"
		rss=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
		[ "$i" -lt "$RUNS" ] && fusermount3 -u "$M"
	done
	fill=$(echo $fills | tr ' ' '\n' | median)
	# a refresh with nothing new: its cost should not grow with the view
	r=$(for i in $(seq "$RUNS"); do
		sleep 1 # last-refresh counts seconds: let it differ
		last=$(sed -n 's/^last-refresh: //p' "$V/.status")
		t0=$(now); touch "$V/.refresh"
		test_wait_for 120 "grep -q '^state: fresh' '$V/.status' && [ \"\$(sed -n 's/^last-refresh: //p' '$V/.status')\" != '$last' ]"
		calc "$(now) - $t0"
	done | median)
	rm -rf "$T"; mkdir -p "$T"; cp -r "$V/cur" "$T/"
	raw=$(du -sb "$T/cur" | cut -f1); disk=$(du -sb "$TRASH/cache/lmdb" | cut -f1)
	la=$(timeit ls -f "$V/cur"); lb=$(timeit ls -f "$T/cur")
	ga=$(timeit grep -r -c Signed-off-by "$V/cur"); gb=$(timeit grep -r -c Signed-off-by "$T/cur")
	printf '%-38s %7d %8.2f %8.2f %6.2f %7d %9.2f %8.3f %8.2f %8.2f\n' "$Q" "$n" "$fill" "$c" \
		"$(calc "$fill / $c")" "$((rss / 1024))" "$(calc "$disk / $raw")" "$r" \
		"$(calc "$la / $lb")" "$(calc "$ga / $gb")"
	fusermount3 -u "$M"
done
printf '\nfill: mkdir + first listing; ratio: fill / curl; refresh: touch .refresh with\n'
printf 'nothing new until done; ls -f x, grep x: warm, leifs / tmpfs (medians of %s)\n' "$RUNS"

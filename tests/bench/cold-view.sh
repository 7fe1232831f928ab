#!/usr/bin/env bash
# cold-view.sh [QUERY]: time of mkdir + first listing of a view, side by side
# with lei q (with and without importing remote results) and with the bare
# server answer (curl | gzip -dc, the limit here), medians of 3 runs, against
# public-inbox-httpd over the whole shared corpus (pi-serve; the default
# query has 1,791 matches), or over generated mail where ../shared is absent.
# Prints a table with ratios.
BENCH_NAME=cold
. "$(dirname "$0")/lib-bench.sh"
PORT=$(free_port)
if [ -x "$SHARED_DIR/corpus/pi-serve" ]; then
	W="$TEST_DIR/.corpus-cache/full"
	mkdir -p "$W"
	echo "serving the whole corpus (the first run builds it: ~13 minutes)..." >&2
	"$SHARED_DIR/corpus/pi-serve" -p "$PORT" "$W" >/dev/null || exit 1
	test_atexit "kill \$(cat $W/httpd.pid)"
	Q=${1:-'s:rtc AND d:2025-01-01..'}
	what="shared corpus, both lists (33,597 messages)"
else
	W="$TRASH/gen"
	python3 "$TEST_DIR/gen-mail.py" -n 800 "$W/mail" && pi_build "$W/pi" "$W/mail" || exit 1
	pi_start "$W/pi" "$PORT" "$W" || exit 1
	Q=${1:-'s:PATCH OR s:Re'}
	what="generated mail (no ../shared/corpus here)"
fi
URL="http://127.0.0.1:$PORT/all/"
enc=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$Q")


run_curl() {
	local t0=$(now)
	curl -fsS -d '' "$URL?q=$enc&x=m" | gzip -dc >"$TRASH/answer.mbox"
	calc "$(now) - $t0"
}
run_leifs() {
	local m="$TRASH/mnt" t0 t1 n
	rm -rf "$TRASH/cache"; mkdir -p "$m"
	"$SRC_DIR/leifs" -o "source=$URL,cache=$TRASH/cache,timeout=120,first_wait=120" "$m" || return 1
	name=$(printf '%s' "$Q" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
	t0=$(now)
	mkdir "$m/queries/$name" && n=$(ls "$m/queries/$name/cur" | wc -l)
	t1=$(now)
	echo "$n" >"$TRASH/leifs.count"
	fusermount3 -u "$m"
	calc "$t1 - $t0"
}
run_lei() {
	local t0
	rm -rf "$TRASH/lei/data" "$TRASH/lei-out"
	lei_env lei daemon-kill 2>/dev/null
	mkdir -p "$TRASH/lei/run"
	lei_env lei init "$TRASH/lei/data/lei/store" >/dev/null 2>&1
	lei_env lei daemon-pid >/dev/null 2>&1   # start the daemon outside the timing
	t0=$(now)
	lei_env lei q --no-save --no-local --only "$URL" -o "$TRASH/lei-out" "$@" --stdin <<<"$Q" 2>/dev/null
	calc "$(now) - $t0"
}
test_atexit "lei_env lei daemon-kill 2>/dev/null"

for i in $(seq "$RUNS"); do
	run_curl >>"$TRASH/t.curl"
	run_leifs >>"$TRASH/t.leifs"
	run_lei >>"$TRASH/t.lei"
	run_lei --no-import-remote >>"$TRASH/t.lei-noimport"
done
n=$(cat "$TRASH/leifs.count")
c=$(median <"$TRASH/t.curl")
printf 'cold view: %s messages, %s\nquery: %s\n\n' "$n" "$what" "$Q"
printf '%-34s %10s %12s\n' "what" "median s" "vs leifs"
for k in leifs curl lei lei-noimport; do
	t=$(median <"$TRASH/t.$k")
	l=$(median <"$TRASH/t.leifs")
	printf '%-34s %10.3f %11.2fx\n' "$k" "$t" "$(calc "$t / $l")"
done
printf '\nleifs / (curl | gzip -dc): %.2f\n' "$(calc "$(median <"$TRASH/t.leifs") / $c")"

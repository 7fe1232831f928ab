#!/usr/bin/env bash
# refresh.sh: an incremental refresh of a large view when 12 messages are
# new, side by side with lei up of the same saved search and with curl of
# the same incremental query, against the same public-inbox-httpd, each
# just after mail arrived: wall time (median of RUNS rounds) and what leifs
# fetched.  The archive is generated (THREADS threads, about
# 3.5 messages each: the default makes about 10,000 matches).  lei saves the
# search with --no-import-remote (as leifs, it only writes the maildir).
# The archive is built once (about 10 minutes) and kept in
# tests/.corpus-cache/refresh-gen-THREADS.
BENCH_NAME=refresh
. "$(dirname "$0")/lib-bench.sh"
THREADS=${THREADS:-2900}

# the archive is kept for the next run, as warm-read.sh keeps its own; the
# rounds add messages to it, so a pristine copy is kept next to it and put
# back at the same path (public-inbox's config and extindex hold absolute
# paths) before each run
G="$TEST_DIR/.corpus-cache/refresh-gen-$THREADS"
W="$G/pi"
if [ ! -e "$G/.built" ]; then
	echo "building an archive of $THREADS threads..." >&2
	rm -rf "$G"
	python3 "$TEST_DIR/gen-mail.py" -n "$THREADS" "$G/mail" && pi_build "$W" "$G/mail" &&
		cp -a "$W" "$G/pi.orig" && touch "$G/.built" || exit 1
else
	rm -rf "$W" && cp -a "$G/pi.orig" "$W" || exit 1
fi
PORT=$(free_port)
pi_start "$W" "$PORT" "$TRASH" || exit 1
URL="http://127.0.0.1:$PORT/all/"
Q='s:PATCH'

M="$TRASH/mnt"; mkdir -p "$M"
"$SRC_DIR/leifs" -o "source=$URL,cache=$TRASH/cache,timeout=300,refresh=100000" "$M" || exit 1
test_atexit "fusermount3 -u $M"
V="$M/queries/$Q"
# the first listing shows what came within first_wait (1 s): wait for the
# whole fill before counting and before the rounds
mkdir "$V" && ls "$V/cur" >/dev/null &&
	test_wait_for 600 "! grep -q '^state: refreshing' '$V/.status'" && ls "$V/cur" | wc -l >"$TRASH/n"
mkdir -p "$TRASH/lei/run"
lei_env lei q -q --no-import-remote --no-local --only "$URL" -o "$TRASH/lei-out" --stdin <<<"$Q" 2>/dev/null
test_atexit "lei_env lei daemon-kill"
echo "cached: leifs $(cat "$TRASH/n") messages, lei $(ls "$TRASH/lei-out/cur" | wc -l)" >&2

# each round: NEW messages arrive before each of leifs, curl and lei up,
# so that each asks a server that has just taken mail (its indexes
# reopened, as on a busy list) and each finds 3 x NEW new since its own
# last ask
NEW=${NEW:-4}
k=0
arrive() {
	local i
	for i in $(seq "$NEW"); do
		k=$((k + 1))
		printf 'From: New <new@example.org>\nTo: linux-rtc@vger.kernel.org\nSubject: [PATCH] rtc: new %d\nDate: %s\nMessage-ID: <bench-%d-%d@example.org>\n\nnew\n' \
			"$k" "$(date -R)" "$k" "$$" >"$TRASH/new.eml"
		pi_add "$W" linux-rtc "$TRASH/new.eml" "$TRASH" >/dev/null 2>&1
	done
}
for r in $(seq "$RUNS"); do
	arrive
	before=$(ls "$V/new" | wc -l)
	t0=$(now)
	cat "$V/.refresh" >/dev/null      # a refresh, waited for (as lei up is)
	t1=$(now)
	want=$((r == 1 ? NEW : 3 * NEW))        # the first round: its own NEW alone
	[ "$(ls "$V/new" | wc -l)" -ge $((before + want)) ] || echo "leifs missed messages" >&2
	calc "$t1 - $t0" >>"$TRASH/t.leifs"
	sed -n 's/^last-fetch: //p' "$V/.status" >>"$TRASH/fetch.leifs"
	# the server's own answer (POST, the whole gzip answer) to the query
	# leifs just asked, after as many new messages: no client goes below
	arrive
	lq=$(sed -n 's/^last-query: //p' "$V/.status")
	enc=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$lq")
	t0=$(now)
	curl -fsS -d '' "$URL?q=$enc&x=m" | gzip -dc >/dev/null
	calc "$(now) - $t0" >>"$TRASH/t.curl"
	arrive
	t0=$(now)
	lei_env lei up -q "$TRASH/lei-out" 2>/dev/null
	t1=$(now)
	calc "$t1 - $t0" >>"$TRASH/t.lei"
done
c=$(median <"$TRASH/t.curl")
l=$(median <"$TRASH/t.leifs"); e=$(median <"$TRASH/t.lei")
printf 'incremental refresh: %d new among %s cached (query %s)\n' $((3 * NEW)) "$(cat "$TRASH/n")" "$Q"
printf '%-10s %10s\n' what "median s"
printf '%-10s %10.3f\n' leifs "$l"
printf '%-10s %10.3f\n' "lei up" "$e"
printf '%-10s %10.3f   (the server alone: %s)\n' "curl" "$c" "$lq"
printf 'leifs / lei up: %.2fx (goal: <= 0.3x); leifs / curl: %.2fx\n' "$(calc "$l / $e")" "$(calc "$l / $c")"
printf 'leifs fetched per refresh: %s\n' "$(tail -n 1 "$TRASH/fetch.leifs")"

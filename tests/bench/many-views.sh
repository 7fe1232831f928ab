#!/usr/bin/env bash
# many-views.sh: VIEWS saved searches (default 200) over a slice of the
# shared corpus (N messages, default 2000, pi-serve's slice kept in
# tests/.corpus-cache/nN as the tests keep it), refreshed all at once:
# leifs's `cat queries/.refresh` (every view, the searches refresh_all
# runs, waited for) vs `lei up --all` over the same saved searches, with
# nothing new: wall time of one round (median of RUNS) and the HTTP
# requests each round made (public-inbox-httpd's own access log, through a
# PSGI file that logs each request line).  The queries are s:WORD for the
# VIEWS commonest words of the slice's subjects.  Needs ../shared/corpus.
BENCH_NAME=many-views
. "$(dirname "$0")/lib-bench.sh"
N=${N:-2000}
VIEWS=${VIEWS:-200}
if [ ! -x "$SHARED_DIR/corpus/pi-serve" ]; then
	echo "many-views.sh: skipped, no ../shared/corpus here"
	exit 0
fi
command -v lei >/dev/null || { echo "many-views.sh: skipped (no lei)"; exit 0; }

# the slice as the tests build it, under their lock (lib-pi.sh)
CORPUS_W="$TEST_DIR/.corpus-cache/n$N"
mkdir -p "$CORPUS_W" "$TEST_DIR/trash"
[ -e "$CORPUS_W/.built" ] || echo "building the $N-message slice..." >&2
( flock 9 && corpus_build "$N" ) 9>"$TEST_DIR/trash/.lock-corpus-n$N" || exit 1
# public-inbox-httpd with its usual app, each request line logged
LOG="$TRASH/access.log"
cat >"$TRASH/log.psgi" <<EOF
use v5.12;
use PublicInbox::WWW;
use Plack::Builder;
my \$www = PublicInbox::WWW->new;
\$www->preload;
open(my \$log, '>>', '$LOG') or die "$LOG: \$!";
\$log->autoflush(1);
builder {
	enable 'AccessLog', format => '%r', logger => sub { print \$log @_ };
	enable 'Head';
	sub { \$www->call(@_) };
};
EOF
PORT=$(free_port)
export PI_CONFIG="$CORPUS_W/pi-config"
public-inbox-httpd -l "http://127.0.0.1:$PORT" -1 "$TRASH/httpd.out" -2 "$TRASH/httpd.err" \
	-P "$TRASH/httpd.pid" -D "$TRASH/log.psgi" || exit 1
test_atexit "pi_stop '$TRASH'"
URL="http://127.0.0.1:$PORT/all/"
test_wait_for 20 "curl -fs -o /dev/null $URL" || exit 1

# the queries: s:WORD, the commonest subject words of the slice
curl -fsS -d '' "$URL?q=d:19000101..&x=m" | gzip -dc | python3 -c '
import collections, email.header, re, sys
n = int(sys.argv[1])
c = collections.Counter()
for line in sys.stdin.buffer:
    if line.startswith(b"Subject: "):
        raw = line[9:].decode("utf-8", "replace").strip()
        try:
            s = str(email.header.make_header(email.header.decode_header(raw))).lower()
        except Exception:
            s = raw.lower()
        c.update(set(w for w in re.findall(r"[a-z][a-z0-9_]{3,}", s)))
for w, _ in c.most_common(n):
    print("s:" + w)' "$VIEWS" >"$TRASH/queries"
nq=$(wc -l <"$TRASH/queries")

M="$TRASH/mnt"; mkdir -p "$M"
"$SRC_DIR/leifs" -o "source=$URL,cache=$TRASH/cache,timeout=300,first_wait=300,refresh=100000" "$M" || exit 1
test_atexit "fusermount3 -u -z '$M'"
t0=$(now)
while read -r q; do
	mkdir "$M/queries/$q" && ls -f "$M/queries/$q/cur" >/dev/null || exit 1
done <"$TRASH/queries"
t_fill=$(calc "$(now) - $t0")
msgs=$(cat "$M"/queries/*/.status | sed -n 's/^messages: //p' | awk '{ s += $1 } END { print s }')

mkdir -p "$TRASH/lei/run"
test_atexit "lei_env lei daemon-kill"
t0=$(now)
k=0
while read -r q; do
	k=$((k + 1))
	lei_env lei q -q --no-import-remote --no-local --only "$URL" -o "$TRASH/lei-out/$k" "$q" \
		</dev/null 2>/dev/null || exit 1
done <"$TRASH/queries"
t_lei_fill=$(calc "$(now) - $t0")

# rounds with nothing new: leifs, then lei, RUNS each
: >"$TRASH/t.leifs"; : >"$TRASH/t.lei"; : >"$TRASH/r.leifs"; : >"$TRASH/r.lei"
for r in $(seq "$RUNS"); do
	before=$(wc -l <"$LOG")
	t0=$(now)
	cat "$M/queries/.refresh" >/dev/null
	calc "$(now) - $t0" >>"$TRASH/t.leifs"
	echo $(( $(wc -l <"$LOG") - before )) >>"$TRASH/r.leifs"
	before=$(wc -l <"$LOG")
	t0=$(now)
	lei_env lei up -q --all 2>/dev/null
	calc "$(now) - $t0" >>"$TRASH/t.lei"
	echo $(( $(wc -l <"$LOG") - before )) >>"$TRASH/r.lei"
done
l=$(median <"$TRASH/t.leifs"); e=$(median <"$TRASH/t.lei")
printf '%s views (s:WORD) over the %s-message corpus slice, %s messages in all\n' "$nq" "$N" "$msgs"
printf 'first fills, one view after another: leifs %.1f s, lei q %.1f s\n\n' "$t_fill" "$t_lei_fill"
printf '%-28s %10s %10s\n' "one round, nothing new" "median s" requests
printf '%-28s %10.3f %10s\n' "leifs cat queries/.refresh" "$l" "$(median <"$TRASH/r.leifs")"
printf '%-28s %10.3f %10s\n' "lei up --all" "$e" "$(median <"$TRASH/r.lei")"
printf 'leifs / lei up --all: %.2fx\n' "$(calc "$l / $e")"

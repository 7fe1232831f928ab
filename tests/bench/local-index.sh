#!/usr/bin/env bash
# local-index.sh: the whole shared corpus (linux-rtc and linux-watchdog,
# 33,597 messages) as local sources: leifs's import + index time and sizes,
# next to public-inbox-index + public-inbox-extindex over the same mail in
# the same run (the reference); then the query latency of the conformance
# battery: a view over the local index (mkdir + listing) vs the same query
# asked of public-inbox-httpd (POST + the whole gzip answer).
# Takes about 20 minutes, most of it public-inbox's indexing.
BENCH_NAME=local-index
. "$(dirname "$0")/lib-bench.sh"
if [ ! -d "$SHARED_DIR/corpus" ]; then
	echo "local-index: skipped, no $SHARED_DIR/corpus here"
	exit 0
fi
LEIFS="$SRC_DIR/leifs"
C="$SHARED_DIR/corpus"
M="$TRASH/mnt"

# ---- leifs: both lists as v2 inboxes (clones of the corpus repositories:
# a symbolic link in an archive is refused, as it may lead outside it)
for l in linux-rtc linux-watchdog; do
	mkdir -p "$TRASH/src/$l/git"
	git clone -q --bare "$C/$l.git" "$TRASH/src/$l/git/0.git" || exit 1
done
mkdir -p "$M"
"$LEIFS" -f -o "source=v2:$TRASH/src/linux-rtc,source=v2:$TRASH/src/linux-watchdog,cache=$TRASH/cache,timeout=3600,first_wait=3600" "$M" 2>"$TRASH/leifs.log" &
lpid=$!
test_atexit "fusermount3 -u -z '$M' 2>/dev/null"
test_wait_for 10 "mountpoint -q '$M'"
t0=$(now)
mkdir "$M/queries/s:rtc AND d:2025-01-01.."
n=$(ls "$M/queries/s:rtc AND d:2025-01-01../cur" | wc -l)
t_leifs=$(calc "$(now) - $t0")
rss=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$lpid/status")
idx=$(du -sm "$TRASH/cache/index" | cut -f1)
lmdb=$(du -sm "$TRASH/cache/lmdb" | cut -f1)
docs=$(for d in "$TRASH"/cache/index/*; do
	perl -MSearch::Xapian -e 'print Search::Xapian::Database->new($ARGV[0])->get_doccount, "\n"' "$d"
done | awk '{ s += $1 } END { print s }')
printf 'leifs import + index: %.1f s, %s documents, first view %s messages; index %s MiB, cache (raw mail) %s MiB, peak RSS %s MiB\n' \
	"$t_leifs" "$docs" "$n" "$idx" "$lmdb" "$rss"
rmdir "$M/queries/s:rtc AND d:2025-01-01.."    # timed again in the battery

# ---- public-inbox: the same inboxes, indexed as pi-serve builds them
W="$TRASH/pi"
export PI_CONFIG="$W/pi-config"
mkdir -p "$W"
: >"$PI_CONFIG"
for l in linux-rtc linux-watchdog; do
	mkdir -p "$W/$l/git"
	git clone -q --bare --no-hardlinks "$C/$l.git" "$W/$l/git/0.git"
	public-inbox-init -V2 -L full "$l" "$W/$l" "http://127.0.0.1/$l" "$l@vger.kernel.org"
done
git config -f "$PI_CONFIG" extindex.all.topdir "$W/all"
t0=$(now)
for l in linux-rtc linux-watchdog; do
	public-inbox-index --no-fsync "$W/$l" >>"$W/build.log" 2>&1
done
t_index=$(calc "$(now) - $t0")
t0=$(now)
public-inbox-extindex --no-fsync --all "$W/all" >>"$W/build.log" 2>&1
t_ext=$(calc "$(now) - $t0")
pidx=$(du -smc "$W"/linux-rtc/xap15 "$W"/linux-watchdog/xap15 "$W"/*/msgmap.sqlite3 | tail -1 | cut -f1)
pext=$(du -sm "$W/all" | cut -f1)
printf 'public-inbox-index: %.1f s, public-inbox-extindex: %.1f s (together %.1f s); index %s MiB (+ extindex %s MiB)\n' \
	"$t_index" "$t_ext" "$(calc "$t_index + $t_ext")" "$pidx" "$pext"
printf 'import + index: leifs %.2fx faster than public-inbox-index + extindex (%.2fx than public-inbox-index alone)\n' \
	"$(calc "($t_index + $t_ext) / $t_leifs")" "$(calc "$t_index / $t_leifs")"

# ---- query latency: the conformance battery, local view vs the server
PORT=$(free_port)
public-inbox-httpd -l "http://127.0.0.1:$PORT" -1 "$W/httpd.out" -2 "$W/httpd.err" \
	-P "$W/httpd.pid" -D
test_atexit "kill \$(cat '$W/httpd.pid') 2>/dev/null"
test_wait_for 20 "curl -fs -o /dev/null http://127.0.0.1:$PORT/all/"
view_once() {   # mkdir, list, rmdir: a view filled from the local index
	local name
	name=$(printf '%s' "$1" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
	mkdir "$M/queries/$name" && ls "$M/queries/$name/cur" >/dev/null &&
	rmdir "$M/queries/$name"
}
server_once() {
	curl -s -X POST -G --data-urlencode "q=$1" -d x=m "http://127.0.0.1:$PORT/all/" | gzip -dc >/dev/null
}
tl=0 ts=0 nq=0
printf '%9s %9s %7s  %s\n' local server hits query
while IFS= read -r q; do
	a=$(timeit view_once "$q")
	b=$(timeit server_once "$q")
	name=$(printf '%s' "$q" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
	mkdir "$M/queries/$name" && h=$(ls "$M/queries/$name/cur" | wc -l) && rmdir "$M/queries/$name"
	printf '%8.3fs %8.3fs %7s  %s\n' "$a" "$b" "$h" "$q"
	tl=$(calc "$tl + $a"); ts=$(calc "$ts + $b"); nq=$((nq + 1))
done <<'EOQ'
dfn:drivers/rtc/rtc-pcf8563.c
f:belloni AND s:PATCH
dfhh:ds1307_*
nq:regression
b:"Reviewed-by"
bs:alarm AND NOT s:alarm
d:20190501..20190601
z:20000..
s:"[PATCH v2" OR s:"[PATCH v3"
dfb:devm_* AND s:rtc
s:watchdog AND f:roeck
(dfn:drivers/watchdog/watchdog_dev.c OR dfhh:watchdog_* OR s:watchdog_dev OR ((nq:bug OR nq:regression) AND nq:watchdog))
dfctx:watchdog_register_device
s:rtc AND d:2025-01-01..
EOQ
printf 'query battery (%d queries, medians of %d): local views %.2f s, public-inbox-httpd %.2f s: local %.2fx faster\n' \
	"$nq" "$RUNS" "$tl" "$ts" "$(calc "$ts / $tl")"

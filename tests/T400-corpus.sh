#!/usr/bin/env bash
# Real kernel mail: the first 2,000 messages of linux-rtc and linux-watchdog
# from ../shared/corpus behind pi-serve (public-inbox-httpd, /all/ as lore
# serves it).  Each view must equal lei q's answer.  Skipped, saying so, where
# the shared corpus is absent.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"
. "$TEST_DIR/lib-compare.sh"

PISERVE="$SHARED_DIR/corpus/pi-serve"
if [ ! -x "$PISERVE" ]; then
	test_skip 'lei comparison on the real corpus slice' "no $SHARED_DIR/corpus here"
	test_done
	exit
fi
PORT=$(free_port)
test_expect_success 'pi-serve -n 2000 builds the corpus slice; an httpd serves it' '
	corpus_serve 2000 "$PORT"
'
URL="http://127.0.0.1:$PORT/all/"
test_atexit lei_stop
M="$TRASH/mnt"
test_expect_success 'leifs mounts' '
	leifs_mount "$M" -o "source=$URL,cache=$TRASH/cache,timeout=60"
'
while IFS= read -r q; do
	test_expect_success "corpus, same as lei q: $q" 'compare_with_lei "$M" "$URL" "$q" &&
		[ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<'EOQ'
dfn:drivers/rtc/rtc-pcf8563.c
s:watchdog AND f:roeck
f:belloni AND s:PATCH
dfhh:ds1307_*
nq:regression
(s:rtc OR s:watchdog) AND b:"Reviewed-by"
(dfn:drivers/watchdog/watchdog_dev.c OR dfhh:watchdog_* OR s:watchdog_dev OR ((nq:bug OR nq:regression) AND nq:watchdog))
d:20190501..20190601
s:imx2_wdt OR dfn:drivers/watchdog/imx2_wdt.c
l:linux-rtc.vger.kernel.org AND l:linux-watchdog.vger.kernel.org
EOQ
# public-inbox refuses a wildcard of more than 100 terms with a bare 500
test_expect_success 'corpus: s:a* (a wildcard over 100 terms) fails with what it likely was' '
	mkdir "$M/queries/s:a*" && ls "$M/queries/s:a*/cur" >/dev/null &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:a*/.status\"" &&
	grep "^error: .*the server failed the query (HTTP 500; public-inbox answers so when a wildcard expands to more than 100 terms)$" \
		"$M/queries/s:a*/.status"
'
test_done

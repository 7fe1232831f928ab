#!/usr/bin/env bash
# A battery of queries, every prefix family, boolean forms, phrases and
# wildcards: each view holds exactly the messages lei q writes for the same
# query against the same public-inbox-httpd (compared by blob id).
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"
. "$TEST_DIR/lib-compare.sh"

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
test_atexit lei_stop
M="$TRASH/mnt"
test_expect_success 'leifs mounts' '
	leifs_mount "$M" -o "source=$PI_URL,cache=$TRASH/cache,timeout=30"
'
dt=$(date -u -d '20 days ago' +%Y%m%d%H%M%S)
d0=$(date -u -d '60 days ago' +%Y%m%d)
d1=$(date -u -d '10 days ago' +%Y%m%d)
nonempty=0
while IFS= read -r q; do
	[ -n "$q" ] || continue
	test_expect_success "same as lei q: $q" 'compare_with_lei "$M" "$PI_URL" "$q"'
	[ -s "$TRASH/last-count" ] && [ "$(cat "$TRASH/last-count")" -gt 0 ] && nonempty=$((nonempty + 1))
done <<EOQ
s:rtc
s:"clean up"
f:belloni
t:roeck
c:linux-watchdog
tc:kozlowski
a:pengutronix
l:linux-rtc.vger.kernel.org
d:$d0..$d1
dt:$dt..
rt:2.weeks.ago..
nq:regression
q:nowayout
b:oscillator AND b:century
bs:battery
dfn:drivers/rtc/rtc-pcf8563.c
dfa:ALARM_EN
dfb:TIMER_EN
dfhh:pcf8563_probe
dfctx:REG_CTRL
dfhh:floppy_*
s:watchdog AND NOT f:roeck
(s:rtc OR s:watchdog) AND f:stelmach
s:"pcf8563"
"Reviewed-by"
s:ümlauts
f:jürgen OR f:groß
(dfn:drivers/block/floppy.c OR dfhh:floppy_* OR s:floppy OR ((nq:bug OR nq:regression) AND nq:floppy)) AND rt:1.month.ago..
EOQ
test_expect_success 'the battery is not trivially empty' '[ "$nonempty" -ge 20 ]'
test_done

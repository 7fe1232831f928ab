#!/usr/bin/env bash
# Local archives and the query language: views over a public-inbox v2
# inbox, an mbox and a maildir on disk, searched by leifs's own Xapian index,
# must answer as public-inbox-httpd does over the same mail (the same blob
# ids), across every prefix, date forms, sizes and the boolean forms.  Then
# the same on a real slice of ../shared/corpus, when it is there.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"
. "$TEST_DIR/lib-conform.sh"

test_expect_success 'the generated archive is served' 'gen_server'
RTC="http://127.0.0.1:$PI_PORT/linux-rtc/"
WD="http://127.0.0.1:$PI_PORT/linux-watchdog/"
MAIL="$GEN_WORK/mail"

# facts of the generated mail for the exact prefixes: a patch, its blob
# ids, its patch id and Message-ID
P=$(grep -l '^diff --git' "$MAIL"/linux-rtc/*.eml | head -1)
PRE=$(sed -n 's/^index \([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1/p' "$P" | head -1)
POST=$(sed -n 's/^index \([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\2/p' "$P" | head -1)
PID=$(git patch-id --stable <"$P" | cut -c1-40)
MID=$(sed -n 's/^Message-ID: <\(.*\)>$/\1/p' "$P" | head -1)
FN=$(sed -n 's/^diff --git a\/\([^ ]*\) .*/\1/p' "$P" | head -1)
D60=$(date -u -d '60 days ago' +%Y%m%d)
D30=$(date -u -d '30 days ago' +%Y-%m-%d)
DT1=$(date -u -d '45 days ago' +%Y%m%d%H%M%S)
DT2=$(date -u -d '20 days ago' +%Y%m%d%H%M%S)
RT1=$(date -u -d '50 days ago' +%s)

M="$TRASH/mnt"
test_expect_success 'leifs mounts a v2 inbox with no network source' '
	leifs_mount "$M" -o "source=$PI_WORK/linux-rtc,cache=$TRASH/cache"
'
n=0
while IFS= read -r q; do
	n=$((n + 1))
	test_expect_success "v2 inbox, same as public-inbox-httpd: $q" '
		conform "$M" "$RTC" "$q" && [ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<EOQ
s:rtc
s:"drop unused"
s:pcf8563 AND s:probe
f:belloni
f:alexandre.belloni@bootlin.com
t:belloni
c:xiaoming.zhou@example.cn
a:roeck
tc:wim
tcf:kozlowski
l:linux-rtc.vger.kernel.org
m:$MID
mid:$MID
n:config
b:oscillator
bs:regression
nq:century
q:century
dfn:$FN
dfn:interface.c
dfa:TIMER_EN
dfb:IRQ_EN
dfhh:rtc_read_time
dfctx:rtc_hw
dfpre:$PRE
dfpost:$POST
dfblob:$PRE
dfblob:$POST
patchid:$PID
d:$D60..
d:..$D60
d:$D30..
d:60.days.ago..30.days.ago
d:2.months.ago..
dt:$DT1..$DT2
rt:$RT1..
rt:6.weeks.ago..
rt:..3.weeks.ago
z:1..3000
z:2000..
s:rtc AND NOT s:watchdog
s:rtc OR s:watchdog
(s:rtc OR s:floppy) AND f:belloni
s:rtc -f:belloni
pcf8563
alarms
"rtc_read_time"
"interrupt probe"
s:rtc*
dfhh:pcf8563_*
dfn:drivers/rtc/*
(dfn:drivers/block/floppy.c OR dfhh:floppy_* OR s:floppy OR ((nq:bug OR nq:regression) AND nq:floppy)) AND d:3.months.ago..
EOQ

test_expect_success 'the battery has 40 queries or more' '[ $n -ge 40 ]'

test_expect_success 'a malformed query is refused at mkdir with EINVAL' '
	! mkdir "$M/queries/s:(rtc" 2>err &&
	grep -q "Invalid argument" err
'

test_expect_success 'the view'"'"'s only source is the inbox on disk' '
	grep -q "^source: $PI_WORK/linux-rtc: ok, [1-9]" "$M/queries/s:rtc/.status" &&
	! grep -q "^source: http" "$M/queries/s:rtc/.status"
'

# an mbox (mboxrd, the inbox's messages in order) as a source
python3 - "$PI_WORK/linux-watchdog/git/0.git" >"$TRASH/wd.mbox" <<'EOPY'
import re, subprocess, sys
git = ['git', '--git-dir', sys.argv[1]]
revs = subprocess.run(git + ['rev-list', '--reverse', 'HEAD'], check=True,
                      capture_output=True).stdout.split()
out = sys.stdout.buffer
for rev in revs:
    data = subprocess.run(git + ['cat-file', 'blob', rev + b':m'],
                          capture_output=True).stdout
    if not data:
        continue
    out.write(b'From mboxrd@z Thu Jan  1 00:00:00 1970\n')
    out.write(re.sub(rb'(?m)^(>*From )', rb'>\1', data))
    out.write(b'\n' if data.endswith(b'\n') else b'\n\n')
EOPY
M2="$TRASH/mnt2"
test_expect_success 'leifs mounts an mbox source' '
	leifs_mount "$M2" -o "source=mboxrd:$TRASH/wd.mbox,cache=$TRASH/cache2"
'
while IFS= read -r q; do
	test_expect_success "mbox, same as public-inbox-httpd: $q" '
		conform "$M2" "$WD" "$q" && [ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<EOQ
s:watchdog
f:roeck AND s:PATCH
dfn:drivers/watchdog/imx2_wdt.c
dfhh:imx2_wdt_*
nq:nowayout OR q:nowayout
d:$D60..
l:linux-watchdog.vger.kernel.org AND NOT s:rtc
EOQ

test_expect_success 'an mbox that grew: only the new message is read' '
	v="$M2/queries/s:watchdog" &&
	before=$(ls "$v/cur" "$v/new" | grep -c leifs) &&
	f=$(ls "$MAIL"/linux-watchdog/*.eml | head -1) &&
	{ echo "From mboxrd@z Thu Jan  1 00:00:00 1970"; sed -e "s/^Message-ID: <.*>/Message-ID: <grown-1@leifs.test>/" \
		-e "s/^Subject: .*/Subject: watchdog: grown mbox/" "$f"; echo; } >>"$TRASH/wd.mbox" &&
	touch "$v/.refresh" &&
	test_wait_for 10 "ls \"$v/new\" | grep -q leifs" &&
	after=$(ls "$v/cur" "$v/new" | grep -c leifs) &&
	[ "$after" -eq $((before + 1)) ] &&
	grep -q "grown mbox" "$v"/new/* &&
	# the message shows as soon as it is stored; the source line once the
	# search ends: the search of the same query looked only at what was
	# indexed since the last one
	test_wait_for 10 "grep -q \"^source: mboxrd:$TRASH/wd.mbox: ok, 1 messages, 1 new in the archive\" \"$v/.status\""
'

# a maildir of the rtc mail as delivered: which copy of a message
# delivered twice comes first is up to readdir, so Message-IDs are compared
mkdir -p "$TRASH/md/cur" "$TRASH/md/new" "$TRASH/md/tmp"
i=0
for f in "$MAIL"/linux-rtc/*.eml; do
	i=$((i + 1)); cp "$f" "$TRASH/md/cur/$i.leifs-test:2,S"
done
M3="$TRASH/mnt3"
test_expect_success 'leifs mounts a maildir source' '
	leifs_mount "$M3" -o "source=$TRASH/md,cache=$TRASH/cache3"
'
mids() { grep -h -i '^message-id:' "$@" | tr 'A-Z' 'a-z' | sort -u; }
while IFS= read -r q; do
	test_expect_success "maildir, same Message-IDs as public-inbox-httpd: $q" '
		name=$(printf "%s" "$q" | sed -e "s#/#%2F#g") &&
		mkdir "$M3/queries/$name" && ls "$M3/queries/$name/cur" >/dev/null &&
		mids "$M3/queries/$name"/cur/* >leifs.mids &&
		curl -s -X POST -G --data-urlencode "q=$q" -d x=m "$RTC" | gzip -dc >srv.mbox &&
		mids srv.mbox >srv.mids && [ -s srv.mids ] && test_cmp srv.mids leifs.mids'
done <<EOQ
s:rtc AND dfn:interface.c
f:belloni
nq:regression AND d:$D60..
EOQ

test_expect_success 'a local archive and a remote source in one view (#5)' '
	v="$M2/queries/f:roeck AND NOT s:grown" &&
	mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = mboxrd:%s\n\tsource = %s\n" "$TRASH/wd.mbox" "$RTC" >"$v/.config" &&
	test_wait_for 20 "[ \$(grep -c \"^source: .*: ok, [1-9]\" \"$v/.status\") = 2 ] && grep -q \"^state: fresh\" \"$v/.status\"" &&
	mids "$v"/cur/* "$v"/new/* >leifs.mids &&
	for u in "$WD" "$RTC"; do
		curl -s -X POST -G --data-urlencode "q=f:roeck AND NOT s:grown" -d x=m "$u" | gzip -dc
	done >both.mbox &&
	mids both.mbox >srv.mids && [ -s srv.mids ] && test_cmp srv.mids leifs.mids
'

status() { sed -n "s/^$2: //p" "$1/.status"; }
settle() {
	test_wait_for 30 "[ \"\$(status \"$1\" state)\" = fresh ] && [ \"\$(status \"$1\" last-refresh)\" != \"${2:-never}\" ]" ||
		{ cat "$1/.status"; return 1; }
}
test_expect_success 'views and index survive a remount; nothing is imported twice' '
	leifs_umount "$M" &&
	leifs_mount "$M" -o "source=$PI_WORK/linux-rtc,cache=$TRASH/cache" &&
	view_oids "$M/queries/s:rtc" >before &&
	last=$(status "$M/queries/s:rtc" last-refresh) && past_second "$last" &&
	touch "$M/queries/s:rtc/.refresh" && settle "$M/queries/s:rtc" "$last" &&
	view_oids "$M/queries/s:rtc" >after && test_cmp before after &&
	grep -q "^source: $PI_WORK/linux-rtc: ok" "$M/queries/s:rtc/.status"
'

# A cache an older leifs left: each archive kept as a view "\001source
# SPEC" with its import position in a client file, each .config as a
# client file (test-tables downgrade writes that layout).  The mount moves
# them into their tables, losing nothing: the view, its .config, its flags
# and hidden messages, and the import position (a refresh reads no more
# of the archive than before the downgrade).
refresh_read() {
	local last
	last=$(status "$1" last-refresh) && past_second "$last" && touch "$1/.refresh" &&
	settle "$1" "$last" &&
	sed -n "s/^source: .*: ok, [0-9]* messages, \(.* new in the archive .*\)$/\1/p" "$1/.status"
}
test_expect_success 'an older cache (archives as views, .config as files) opens with nothing lost' '
	V="$M/queries/s:rtc" &&
	last=$(status "$V" last-refresh) && past_second "$last" &&
	printf "[leifs]\n\tsource = %s\n\trefresh = 7200\n" "$PI_WORK/linux-rtc" >"$V/.config" &&
	settle "$V" "$last" &&
	ls "$V/cur" | grep leifs >all && [ $(wc -l <all) -ge 3 ] &&
	a=$(sed -n 1p all) && b=$(sed -n 2p all) &&
	mv "$V/cur/$a" "$V/cur/${a%%:2,*}:2,FP" && rm "$V/cur/$b" &&
	ls "$V/cur" "$V/new" >names.before && cat "$V/.config" >config.before &&
	refresh_read "$V" >read.before && [ -s read.before ] &&
	leifs_umount "$M" &&
	"$SRC_DIR/tests/c/test-tables" downgrade "$TRASH/cache" &&
	leifs_mount "$M" -o "source=$PI_WORK/linux-rtc,cache=$TRASH/cache" &&
	ls "$V/cur" "$V/new" >names.after && test_cmp names.before names.after &&
	cat "$V/.config" >config.after && test_cmp config.before config.after &&
	grep -q "refresh = 7200" config.after &&
	refresh_read "$V" >read.after && test_cmp read.before read.after &&
	ls "$V/cur" "$V/new" >names.after && test_cmp names.before names.after &&
	ls "$M/queries" >views && ! grep -q source views &&
	{ "$LEIFS" --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ]; } &&
	grep -q ", 1 local archives, 1 view settings;" check.out
'

# An older leifs run on the cache after the upgrade writes its old records
# again (test-tables older-writes): the next mount takes them, the newer
# winning, and shows none of them as a view or a second .config.
test_expect_success 'an older leifs used the cache since the upgrade: its records are taken, none shown' '
	V="$M/queries/s:rtc" &&
	ls "$M/queries" >views.before &&
	leifs_umount "$M" &&
	"$SRC_DIR/tests/c/test-tables" older-writes "$TRASH/cache" &&
	leifs_mount "$M" -o "source=$PI_WORK/linux-rtc,cache=$TRASH/cache" &&
	ls "$M/queries" >views.after && test_cmp views.before views.after &&
	! grep -q "source /" "$M/queries/.status" &&
	[ "$(ls -a "$V" | grep -c "^\.config\$")" -eq 1 ] &&
	grep -q "refresh = 4321" "$V/.config" &&
	ls "$V/cur" "$V/new" >names.after && test_cmp names.before names.after &&
	last=$(status "$V" last-refresh) && past_second "$last" && touch "$V/.refresh" &&
	settle "$V" "$last" &&
	ls "$V/cur" "$V/new" >names.after && test_cmp names.before names.after &&
	{ "$LEIFS" --check "$TRASH/cache" >check.out; rc=$?; cat check.out; [ $rc -eq 0 ]; } &&
	grep -q ", 1 local archives, 1 view settings;" check.out
'

# mail a remote source sent is indexed too: "cache:URL" searches it offline
M5="$TRASH/mnt5"
test_expect_success 'remote mail is indexed: a cache:URL view answers as the server' '
	leifs_mount "$M5" -o "source=$RTC,cache=$TRASH/cache6" &&
	mkdir "$M5/queries/s:rtc" && ls "$M5/queries/s:rtc/cur" >/dev/null &&
	v="$M5/queries/f:belloni AND s:rtc" && mkdir "$v" &&
	printf "[leifs]\n\tsource = cache:%s\n" "$RTC" >"$v/.config" &&
	server_oids "$RTC" "f:belloni AND s:rtc" >server.oids && [ -s server.oids ] &&
	{ test_wait_for 30 "touch \"$v/.refresh\"; sleep 0.3; view_oids \"$v\" >leifs.oids; cmp -s server.oids leifs.oids" ||
	  { cat "$v/.status"; diff server.oids leifs.oids; false; }; } &&
	grep -q "^source: cache:$RTC: ok" "$v/.status"
'
# (the background indexer must be done with what s:rtc brought: on a
# loaded machine, under the sanitizers, that takes a while)
test_expect_success 'cache:URL views need no network: made with the server stopped' '
	test_wait_for 300 "grep -q \"^index-remote: on, 0 messages queued\" \"$M5/queries/.status\"" &&
	pi_stop "$TRASH/httpd" &&
	v="$M5/queries/dfn:interface.c" && mkdir "$v" &&
	printf "[leifs]\n\tsource = cache:%s\n" "$RTC" >"$v/.config" &&
	test_wait_for 60 "touch \"$v/.refresh\"; sleep 0.3; ls \"$v/cur\" | grep -q leifs" &&
	# the mail came from the cache (the server is down); a later touch may
	# have begun a search that found nothing new: "ok, 0" is its answer
	cat "$v/.refresh" >/dev/null && grep -q "^source: cache:$RTC: ok" "$v/.status"
'

# a view of two local sources refreshed again and again, then unmounted:
# each source's memo of its last search is kept once (review of #15: the
# second one's link made a loop, freed twice at unmount)
test_expect_success 'two local sources refreshed often: the daemon ends cleanly' '
	M5="$TRASH/mnt6" &&
	leifs_mount "$M5" -o "source=mboxrd:$TRASH/wd.mbox,source=$PI_WORK/linux-rtc,cache=$TRASH/cache-memo,refresh=1" &&
	mkdir "$M5/queries/s:watchdog OR s:rtc" &&
	for i in 1 2 3 4; do
		ls "$M5/queries/s:watchdog OR s:rtc/cur" >/dev/null || return 1
		sleep 1.1
	done &&
	pid=$(cat "$M5.pid") && leifs_umount "$M5" &&
	! grep -i -E "double free|corrupted|abort|segv|sanitizer" "$TRASH/leifs.log"
'

# ---- the real corpus slice ----
PISERVE="$SHARED_DIR/corpus/pi-serve"
if [ ! -x "$PISERVE" ]; then
	test_skip 'conformance on the real corpus slice' "no $SHARED_DIR/corpus here"
	test_done
	exit
fi
PORT=$(free_port)
test_expect_success 'pi-serve -n 2000 builds the corpus slice; an httpd serves it' '
	corpus_serve 2000 "$PORT"
'
W="$TEST_DIR/.corpus-cache/n2000"
"$SHARED_DIR/corpus/to-mbox" -n 2000 "$SHARED_DIR/corpus/linux-watchdog.git" >"$TRASH/corpus-wd.mbox"
M4="$TRASH/mnt4"
# the first listing waits for the whole import (2,000 messages): up to
# `timeout` seconds, which a sanitizer build on a loaded machine needs
test_expect_success 'leifs mounts the slice: a v2 inbox and an mbox' '
	leifs_mount "$M4" -o "source=$W/linux-rtc,cache=$TRASH/cache4,timeout=300" &&
	leifs_mount "$M4-wd" -o "source=mboxrd:$TRASH/corpus-wd.mbox,cache=$TRASH/cache5,timeout=300"
'
while IFS= read -r q; do
	test_expect_success "corpus linux-rtc (v2), same as public-inbox-httpd: $q" '
		conform "$M4" "http://127.0.0.1:$PORT/linux-rtc/" "$q" &&
		[ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<'EOQ'
dfn:drivers/rtc/rtc-pcf8563.c
f:belloni AND s:PATCH
dfhh:ds1307_*
nq:regression
b:"Reviewed-by"
q:"Signed-off-by"
bs:alarm AND NOT s:alarm
tc:linux-rtc AND c:linux-kernel
d:20190501..20190601
dt:20190601000000..20190615000000
z:20000..
s:"[PATCH v2" OR s:"[PATCH v3"
dfb:devm_* AND s:rtc
n:*.patch
EOQ
test_expect_success 'a wildcard of over 100 terms fails as public-inbox fails it' '
	mkdir "$M4/queries/nq:a*" && ls "$M4/queries/nq:a*/cur" >/dev/null &&
	grep -q "^error: .*Wildcard XNQa\* expands to more than 100 terms" "$M4/queries/nq:a*/.status" &&
	! curl -sf -X POST -G --data-urlencode "q=nq:a*" -d x=m "http://127.0.0.1:$PORT/linux-rtc/" >/dev/null
'
while IFS= read -r q; do
	test_expect_success "corpus linux-watchdog (mbox), same as public-inbox-httpd: $q" '
		conform "$M4-wd" "http://127.0.0.1:$PORT/linux-watchdog/" "$q" &&
		[ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<'EOQ'
s:watchdog AND f:roeck
(dfn:drivers/watchdog/watchdog_dev.c OR dfhh:watchdog_* OR s:watchdog_dev OR ((nq:bug OR nq:regression) AND nq:watchdog))
dfctx:watchdog_register_device
l:linux-watchdog.vger.kernel.org
EOQ
test_done

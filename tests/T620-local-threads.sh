#!/usr/bin/env bash
# Threads of local archives (issue 16): a view over a public-inbox inbox on
# disk with threads = true must hold what public-inbox-httpd answers with
# t=1 over the same inbox, blob id for blob id: whole threads, a reply
# that came before its parent, two threads a later message joins, across
# refreshes and a remount; flag-hits flags the matches (lei q -tt) and
# leaves the user's flags alone.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"
. "$TEST_DIR/lib-conform.sh"

W="$TRASH/pi"
MAIL="$TRASH/mail"
test_expect_success 'an inbox of generated mail is served' '
	python3 "$TEST_DIR/gen-mail.py" -s 7 -n 40 "$MAIL" >/dev/null &&
	pi_build "$W" "$MAIL" &&
	PI_PORT=$(free_port) && pi_start "$W" "$PI_PORT"
'
RTC="http://127.0.0.1:${PI_PORT:-0}/linux-rtc/"
INBOX="$W/linux-rtc"

# the server's blob ids for q with whole threads (t=1), as net/search.c asks
server_t_oids() {
	local q=$1 code
	code=$(curl -s -o "$TRASH/answer.gz" -w '%{http_code}' -X POST -G \
		--data-urlencode "q=$q" -d x=m -d t=1 "$RTC") || return 1
	case $code in
	404) : ;;
	200) gzip -dc "$TRASH/answer.gz" | python3 "$TEST_DIR/mbox-oids.py" ;;
	*) echo "server answered $code" >&2; return 1 ;;
	esac | sort
}

vdir() { printf '%s/queries/%s' "$1" "$(printf '%s' "$2" | sed -e 's/%/%25/g' -e 's#/#%2F#g')"; }

# force a refresh of view $1 (with "$2", e.g. full) and wait for its end
refreshed() {
	local v=$1 before
	before=$(grep "^last-refresh:" "$v/.status")
	past_second "${before#last-refresh: }"
	echo "${2:-}" >"$v/.refresh" &&
	test_wait_for 20 '! grep -qxF "$before" "$v/.status" && grep -q "^state: fresh\$" "$v/.status"'
}

# the files of view $1 holding Message-ID $2
by_mid() {
	find "$1/cur" "$1/new" -type f -exec grep -l "^Message-ID: <$2>" {} +
}

# the view of q (made if need be, after a refresh if it exists) against t=1
conform_t() {
	local m=$1 q=$2 v
	v=$(vdir "$m" "$q")
	if [ -d "$v" ]; then
		refreshed "$v" || return 1
	else
		mkdir "$v" || return 1
	fi
	ls "$v/cur" >/dev/null || return 1
	grep -q '^state: fresh$' "$v/.status" || { cat "$v/.status"; return 1; }
	view_oids "$v" >leifs.oids
	check_oids "$v"/cur/* "$v"/new/* || return 1
	server_t_oids "$q" >server.oids || return 1
	wc -l <server.oids >"$TRASH/last-count"
	test_cmp server.oids leifs.oids
}

# more than the matches: the thread brought messages the query alone does not
more_than_matches() {
	local n
	n=$(server_oids "$RTC" "$1" | wc -l)
	[ "$(cat "$TRASH/last-count")" -gt "$n" ]
}

M="$TRASH/mnt"
test_expect_success 'leifs mounts the inbox with threads = true' '
	leifs_mount "$M" -o "source=$INBOX,cache=$TRASH/cache,threads=true,refresh=3600"
'

n=0
while IFS= read -r q; do
	n=$((n + 1))
	test_expect_success "whole threads, same as public-inbox-httpd t=1: $q" '
		conform_t "$M" "$q" && [ "$(cat "$TRASH/last-count")" -gt 0 ]'
done <<'EOQ'
s:rtc
s:PATCH
f:belloni
b:oscillator
dfn:interface.c
nq:regression
s:"drop unused"
tc:wim
d:60.days.ago..
rt:6.weeks.ago..
f:roeck
nq:tested
s:"PATCH 1"
b:Reviewed-by
a:belloni
EOQ
test_expect_success 'fifteen thread queries or more' '[ $n -ge 15 ]'
test_expect_success 'threads bring more than the matches (nq:tested)' '
	conform_t "$M" "nq:tested" && more_than_matches "nq:tested"
'

# mail written here: msg FILE MID SUBJECT "REFS" BODY
NOW=$(date -u -R)
msg() {
	{
		echo "From: Tess Thread <tess@example.org>"
		echo "To: linux-rtc@vger.kernel.org"
		echo "Subject: $3"
		echo "Date: $NOW"
		echo "Message-ID: <$2>"
		[ -n "$4" ] && echo "In-Reply-To: <${4##* }>" && echo "References: $(printf '<%s> ' $4)"
		echo
		echo "$5"
	} >"$1"
}

test_expect_success 'a reply comes before its parent: the parent joins its thread' '
	msg r1.eml zebra-reply@t.test "Re: zebra crossing" "zebra-root@t.test" "a reply with no parent yet" &&
	pi_add "$W" linux-rtc r1.eml &&
	conform_t "$M" "s:zebra" && [ "$(cat "$TRASH/last-count")" = 1 ] &&
	msg p1.eml zebra-root@t.test "zebra crossing" "" "the root, quagga" &&
	pi_add "$W" linux-rtc p1.eml &&
	conform_t "$M" "b:quagga" && [ "$(cat "$TRASH/last-count")" = 2 ]
'

test_expect_success 'a later reply joins the thread of an earlier match at a refresh' '
	msg r2.eml zebra-reply2@t.test "Re: zebra crossing" "zebra-root@t.test zebra-reply@t.test" "late" &&
	pi_add "$W" linux-rtc r2.eml &&
	conform_t "$M" "b:quagga" && [ "$(cat "$TRASH/last-count")" = 3 ]
'

test_expect_success 'a message that links two threads merges them' '
	msg a1.eml alpha-1@t.test "alpha one" "" "first of alpha" &&
	msg a2.eml alpha-2@t.test "Re: alpha one" "alpha-1@t.test" "second of alpha" &&
	msg b1.eml beta-1@t.test "beta one" "" "first of beta" &&
	msg b2.eml beta-2@t.test "Re: beta one" "beta-1@t.test" "second of beta" &&
	for f in a1 a2 b1 b2; do pi_add "$W" linux-rtc $f.eml || return 1; done &&
	conform_t "$M" "s:alpha" && [ "$(cat "$TRASH/last-count")" = 2 ] &&
	msg j.eml join-1@t.test "Re: alpha and beta" "alpha-2@t.test beta-2@t.test" "joins them" &&
	pi_add "$W" linux-rtc j.eml &&
	conform_t "$M" "s:alpha" && [ "$(cat "$TRASH/last-count")" = 5 ] &&
	conform_t "$M" "b:beta" && [ "$(cat "$TRASH/last-count")" = 5 ]
'

test_expect_success 'a ghost parent two replies name merges them when it comes' '
	msg g1.eml gamma-a@t.test "Re: gamma" "gamma-root@t.test" "one side" &&
	msg g2.eml gamma-b@t.test "Re: gamma" "gamma-other@t.test" "other side" &&
	pi_add "$W" linux-rtc g1.eml && pi_add "$W" linux-rtc g2.eml &&
	conform_t "$M" "b:\"one side\"" && [ "$(cat "$TRASH/last-count")" = 1 ] &&
	msg g3.eml gamma-other@t.test "Re: gamma" "gamma-root@t.test" "in between" &&
	pi_add "$W" linux-rtc g3.eml &&
	conform_t "$M" "b:\"one side\"" && [ "$(cat "$TRASH/last-count")" = 3 ]
'

M2="$TRASH/mnt2"
test_expect_success 'flag-hits: the matches are flagged (F), the rest of the thread not' '
	leifs_mount "$M2" -o "source=$INBOX,cache=$TRASH/cache2,threads=flag-hits,refresh=3600" &&
	v=$(vdir "$M2" "b:quagga OR b:late") && mkdir "$v" && ls "$v/cur" >/dev/null &&
	[ "$(ls "$v/cur" "$v/new" | grep -c leifs)" = 3 ] &&
	ls "$v/cur" "$v/new" | grep leifs >names &&
	[ "$(grep -c ":2,F" names)" = 2 ] &&
	other=$(by_mid "$v" zebra-reply@t.test) &&
	case $other in *:2,*F*) false ;; *) : ;; esac &&
	{ by_mid "$v" zebra-root@t.test && by_mid "$v" zebra-reply2@t.test; } >hits &&
	[ "$(grep -c ":2,F" hits)" = 2 ] &&
	view_oids "$v" >leifs.oids && server_t_oids "b:quagga OR b:late" >server.oids &&
	test_cmp server.oids leifs.oids
'

test_expect_success 'flag-hits: a flag the user took off stays off across refreshes' '
	v=$(vdir "$M2" "b:quagga OR b:late") &&
	f=$(by_mid "$v" zebra-root@t.test) &&
	mv "$f" "${f%%:2,*}:2,S" &&
	refreshed "$v" && refreshed "$v" full &&
	g=$(by_mid "$v" zebra-root@t.test) &&
	case $g in *:2,S) : ;; *) echo "now $g"; false ;; esac &&
	r=$(by_mid "$v" zebra-reply2@t.test) &&
	case $r in *:2,F) : ;; *) echo "now $r"; false ;; esac
'

test_expect_success 'threads = false over the same inbox: the matches only' '
	v=$(vdir "$M" "b:quagga") &&
	printf "[leifs]\n\tthreads = false\n" >"$v/.config" &&
	test_wait_for 20 "[ \$(ls \"$v/cur\" \"$v/new\" | grep -c leifs) = 1 ]" &&
	view_oids "$v" >leifs.oids && server_oids "$RTC" "b:quagga" >server.oids &&
	test_cmp server.oids leifs.oids
'

test_expect_success 'after a remount: threads still whole, a reply delivered meanwhile joins' '
	leifs_umount "$M" &&
	msg r3.eml zebra-reply3@t.test "Re: zebra crossing" "zebra-reply2@t.test" "while unmounted" &&
	pi_add "$W" linux-rtc r3.eml &&
	leifs_mount "$M" -o "source=$INBOX,cache=$TRASH/cache,threads=true,refresh=3600" &&
	conform_t "$M" "s:alpha" && [ "$(cat "$TRASH/last-count")" = 5 ] &&
	conform_t "$M" "b:\"the root\"" && [ "$(cat "$TRASH/last-count")" = 4 ] &&
	conform_t "$M" "s:rtc"
'

# an index as a leifs without thread ids left it: no thread term, value or
# metadata (Search::Xapian, public-inbox's own binding, takes them away)
unthread() {
	perl -e '
use strict;
use Search::Xapian qw(:standard);
my $db = Search::Xapian::WritableDatabase->new($ARGV[0], DB_OPEN);
my (@ids, %mids);
for (my $it = $db->postlist_begin(""); $it != $db->postlist_end(""); $it++) {
	push @ids, $it->get_docid;
}
for my $id (@ids) {
	my $doc = $db->get_document($id);
	my @rm;
	for (my $t = $doc->termlist_begin; $t != $doc->termlist_end; $t++) {
		my $n = $t->get_termname;
		push @rm, $n if $n =~ /^XTID/;
		$mids{substr($n, 1)} = 1 if $n =~ /^Q/;
	}
	$doc->remove_term($_) for @rm;
	$doc->remove_value(5);
	$db->replace_document($id, $doc);
}
my $next = $db->get_metadata("leifs:tid-next") || 0;
$db->set_metadata("leifs:fwd:$_", "") for 1..$next;
$db->set_metadata("leifs:mid:=$_", "") for keys %mids;
$db->set_metadata("leifs:$_", "") for qw(tid-next threads);
$db->commit;
' "$1"
}

test_expect_success 'an index made before thread ids is threaded at its first open' '
	leifs_umount "$M" &&
	for d in "$TRASH"/cache/index/*/; do unthread "$d" || return 1; done &&
	index-tool tq "$TRASH"/cache/index/*/ "$TRASH/cache/dates.git" "b:late" >tq &&
	[ "$(wc -l <tq)" = 1 ] &&
	leifs_mount "$M" -o "source=$INBOX,cache=$TRASH/cache,threads=true,refresh=3600" &&
	conform_t "$M" "b:late" && [ "$(cat "$TRASH/last-count")" = 4 ] &&
	conform_t "$M" "b:\"joins them\"" && [ "$(cat "$TRASH/last-count")" = 5 ] &&
	conform_t "$M" "b:\"other side\"" && [ "$(cat "$TRASH/last-count")" = 3 ] &&
	conform_t "$M" "f:belloni" &&
	grep -q "messages threaded" "$TRASH/leifs.log"
'

# remote mail indexed in the background is threaded too: a cache:URL view
# with threads = true answers as the server's t=1 over what it holds
M3="$TRASH/mnt3"
test_expect_success 'cache:URL with threads: the thread of a match, from the cache index' '
	leifs_mount "$M3" -o "source=$RTC,cache=$TRASH/cache3,threads=true" &&
	mkdir "$M3/queries/b:quagga" && ls "$M3/queries/b:quagga/cur" >/dev/null &&
	[ "$(ls "$M3/queries/b:quagga/cur" | grep -c leifs)" = 4 ] &&
	v="$M3/queries/b:late" && mkdir "$v" &&
	printf "[leifs]\n\tsource = cache:%s\n\tthreads = true\n" "$RTC" >"$v/.config" &&
	server_t_oids "b:late" >server.oids && [ "$(wc -l <server.oids)" = 4 ] &&
	{ test_wait_for 30 "touch \"$v/.refresh\"; sleep 0.3; view_oids \"$v\" >leifs.oids; cmp -s server.oids leifs.oids" ||
	  { cat "$v/.status"; diff server.oids leifs.oids; false; }; } &&
	grep -q "^source: cache:$RTC: ok" "$v/.status"
'

test_expect_success 'the index: a reply before its parent, then a merge (index-tool)' '
	rm -rf db && mkdir git && git init -q --bare git &&
	index-tool add db r1.eml && index-tool tq db git "s:zebra" >t1 &&
	[ "$(wc -l <t1)" = 1 ] &&
	index-tool add db p1.eml r2.eml && index-tool tq db git "b:quagga" >t2 &&
	[ "$(grep -c "^\*" t2)" = 1 ] && [ "$(wc -l <t2)" = 3 ] &&
	index-tool add db b1.eml a2.eml && index-tool tq db git "s:alpha" >t3 &&
	[ "$(wc -l <t3)" = 1 ] &&
	index-tool add db j.eml a1.eml b2.eml && index-tool tq db git "s:alpha" >t4 &&
	[ "$(wc -l <t4)" = 5 ] && [ "$(grep -c "^\*" t4)" = 3 ]
'

# since MARK_FILE QUERY FILE...: FILEs indexed into db2, then what a search
# since the last mark answers, added to the last whole answer, is the
# whole answer now (a refresh of an unchanged query searches only that)
since() {
	local mf=$1 q=$2 m; shift 2
	m=$(cat "$mf" 2>/dev/null || echo 0)
	[ -f "$mf.all" ] || : >"$mf.all"
	index-tool add db2 "$@" && index-tool tqs db2 git "$m" "$q" >s.out &&
	sed -n "s/^mark //p" s.out >"$mf" &&
	index-tool tq db2 git "$q" >all.out &&
	{ cat "$mf.all"; grep -v "^mark " s.out; } | cut -c3- | sort -u >got &&
	cut -c3- all.out | sort -u >want && cp all.out "$mf.all" &&
	{ cmp -s got want || { echo "since $m: $q"; diff want got; false; }; }
}
test_expect_success 'a search since a mark adds what makes the whole answer: replies, parents, merges' '
	rm -rf db2 && msg n1.eml none-1@t.test "nothing to see" "" "no match here" &&
	msg n2.eml none-2@t.test "Re: one" "alpha-1@t.test" "a late reply" &&
	msg n3.eml none-3@t.test "still nothing" "" "no match either" &&
	since m.zebra "s:zebra" r1.eml n1.eml && [ "$(wc -l <m.zebra.all)" = 1 ] &&
	since m.zebra "s:zebra" p1.eml r2.eml && [ "$(wc -l <m.zebra.all)" = 3 ] &&
	since m.quagga "b:quagga" b1.eml a2.eml && [ "$(wc -l <m.quagga.all)" = 3 ] &&
	since m.alpha "s:alpha" && [ "$(wc -l <m.alpha.all)" = 1 ] &&
	since m.alpha "s:alpha" j.eml a1.eml b2.eml && [ "$(wc -l <m.alpha.all)" = 5 ] &&
	since m.alpha "s:alpha" n2.eml && [ "$(wc -l <m.alpha.all)" = 6 ] &&
	since m.beta "b:beta" && [ "$(wc -l <m.beta.all)" = 6 ] &&
	since m.beta "b:beta" n3.eml && [ "$(grep -vc "^mark " s.out)" = 0 ]
'

test_done

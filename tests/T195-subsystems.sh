#!/usr/bin/env bash
# subsystems/: with -o maintainers=FILE, mkdir subsystems/<section title>
# makes a view whose query is derived from that MAINTAINERS section.  The
# derivations are checked against what a maintainer writes by hand (a
# table), each view against lei q -t of its query on the same server,
# Message-ID for Message-ID; a section of 400 F: lines is searched in parts
# and counted once; an edit of the file reaches the view at its next
# refresh with the user's flags kept; bad files and titles are said in
# subsystems/.status and lose nothing.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-pi.sh"

W="$TRASH/pi"
M="$TRASH/mnt"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/all/"
MF="$TRASH/MAINTAINERS"
OPTS="-o source=$URL,cache=$TRASH/cache,refresh=3600,timeout=20,maintainers=$MF"
S="$M/subsystems"
RTC="REAL TIME CLOCK (RTC) SUBSYSTEM"
WDT="WATCHDOG DEVICE DRIVERS"

# a message to patches@lists.linux.dev (delivered to linux-rtc's inbox,
# as a cross-post would be): FILE, a patch to drivers/gpio/gpio-leifs.c;
# with a 4th argument, sent to someone else and the list in Bcc (only
# its List-Id says the list had it)
patches_mail() {
	{
		printf 'From: Gpio Hacker <gpio@example.org>\n'
		if [ -n "${4:-}" ]; then
			printf 'To: someone@example.org\nList-Id: <patches.lists.linux.dev>\n'
		else
			printf 'To: patches@lists.linux.dev\nCc: gpio@example.org\n'
		fi
		printf 'Subject: [PATCH] gpio: leifs: %s\nDate: %s\nMessage-ID: <%s>\n\n' \
			"$2" "$(date -R)" "$3"
		printf 'A patch for the patches list.\n\n---\n'
		printf 'diff --git a/drivers/gpio/gpio-leifs.c b/drivers/gpio/gpio-leifs.c\n'
		printf -- '--- a/drivers/gpio/gpio-leifs.c\n+++ b/drivers/gpio/gpio-leifs.c\n'
		printf '@@ -1,3 +1,3 @@ static int leifs_gpio_probe(void)\n-old\n+new\n'
	} >"$1"
}

# a patch to 101 files drivers/gpio/wcNNN.c and one drivers/gpio/wc/core.c:
# a wildcard dfn:wc* expands past public-inbox's limit of 100 terms
wide_patch() {
	{
		printf 'From: Wide <wide@example.org>\nTo: linux-rtc@vger.kernel.org\n'
		printf 'Subject: [PATCH] gpio: wc: touch them all\nDate: %s\n' "$(date -R)"
		printf 'Message-ID: <leifs-wide-1@example.org>\n\nAll of them.\n\n---\n'
		for i in $(seq 0 101); do
			f=drivers/gpio/wc$(printf %03d "$i").c
			[ "$i" -eq 101 ] && f=drivers/gpio/wc/core.c
			printf 'diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n' "$f" "$f" "$f" "$f"
			printf '@@ -1 +1 @@\n-a\n+b\n'
		done
	} >"$1"
}

# the MAINTAINERS file of the test: the kernel's preamble and its RTC,
# WATCHDOG and FLOPPY sections as they stand in the kernel tree, then
# sections for each rule
write_maintainers() {
	cat <<'EOF'
List of maintainers
===================

Descriptions of section entries and preferred order
---------------------------------------------------

	M: *Mail* patches to: FullName <address@domain>
	L: *Mailing list* that is relevant to this area
	F: *Files* and directories wildcard patterns.
	   F:	drivers/net/	all files in and below drivers/net
	   F:	drivers/net/*	all files in drivers/net, but not below
	X: *Excluded* files and directories that are NOT maintained, same
	   rules as F:.
	N: Files and directories *Regex* patterns.
	K: *Content regex* (perl extended) pattern match in a patch or file.

Maintainers List
----------------

.. note:: When reading this list, please look for the most precise areas
          first. When adding to this list, please keep the entries in
          alphabetical order.

FLOPPY DRIVER
M:	Denis Efremov <efremov@linux.com>
L:	linux-block@vger.kernel.org
S:	Odd Fixes
F:	drivers/block/floppy.c

REAL TIME CLOCK (RTC) SUBSYSTEM
M:	Alexandre Belloni <alexandre.belloni@bootlin.com>
L:	linux-rtc@vger.kernel.org
S:	Maintained
Q:	http://patchwork.ozlabs.org/project/rtc-linux/list/
T:	git git://git.kernel.org/pub/scm/linux/kernel/git/abelloni/linux.git
F:	Documentation/admin-guide/rtc.rst
F:	Documentation/devicetree/bindings/rtc/
F:	drivers/rtc/
F:	include/linux/platform_data/rtc-*
F:	include/linux/rtc.h
F:	include/linux/rtc/
F:	include/uapi/linux/rtc.h
F:	tools/testing/selftests/rtc/

WATCHDOG DEVICE DRIVERS
M:	Wim Van Sebroeck <wim@linux-watchdog.org>
M:	Guenter Roeck <linux@roeck-us.net>
L:	linux-watchdog@vger.kernel.org
S:	Maintained
W:	http://www.linux-watchdog.org/
T:	git git://www.linux-watchdog.org/linux-watchdog.git
F:	Documentation/devicetree/bindings/watchdog/
F:	Documentation/watchdog/
F:	drivers/watchdog/
F:	include/linux/watchdog.h
F:	include/trace/events/watchdog.h
F:	include/uapi/linux/watchdog.h

RTC DRIVERS BUT DS1307
S:	Maintained
F:	drivers/rtc/
X:	drivers/rtc/rtc-ds1307.c

PCF8563 GLOBS
F:	drivers/rtc/rtc-pcf85*
F:	Documentation/devicetree/bindings/rtc/*.yaml
F:	drivers/block/flop*
X:	drivers/rtc/rtc-pcf8563*

NAMES AND KEYWORDS
N:	pcf8563
N:	[^a-z]imx2
K:	\bds1307_probe\b
K:	(?:struct|union) rtc_ops

TWO LISTS
L:	linux-rtc@vger.kernel.org
L:	linux-watchdog@vger.kernel.org (moderated for non-subscribers)

THE PATCHES LIST
M:	Gpio Hacker <gpio@example.org>
L:	patches@lists.linux.dev
S:	Maintained

WATCHDOG/CORE
F:	drivers/watchdog/watchdog_dev.c

NOBODY'S FILES
M:	Nobody <nobody@example.org>
S:	Orphan

FLOPPY DRIVER
F:	drivers/watchdog/
EOF
	printf 'CRLF ENDED\r\nF:\tdrivers/watchdog/imx2_wdt.c\r\n\r\n'
	printf '%0300d\nF:\tdrivers/rtc/\n\n' 0
	printf 'MANY FILES\n'
	for i in $(seq 1 400); do
		case $i in
		150) printf 'F:\tdrivers/rtc/rtc-ds1307.c\n' ;;
		390) printf 'F:\tdrivers/watchdog/imx2_wdt.c\n' ;;
		*) printf 'F:\tdrivers/none/file%03d.c\n' "$i" ;;
		esac
	done
}

# the query a maintainer writes by hand for each section
cat >expect.table <<'EOF'
FLOPPY DRIVER	dfn:drivers/block/floppy.c OR l:linux-block.vger.kernel.org OR tc:linux-block@vger.kernel.org
REAL TIME CLOCK (RTC) SUBSYSTEM	dfn:Documentation/admin-guide/rtc.rst OR dfn:Documentation/devicetree/bindings/rtc/* OR dfn:drivers/rtc/* OR dfn:include/linux/platform_data/rtc OR dfn:include/linux/rtc.h OR dfn:include/linux/rtc/* OR dfn:include/uapi/linux/rtc.h OR dfn:tools/testing/selftests/rtc/* OR l:linux-rtc.vger.kernel.org OR tc:linux-rtc@vger.kernel.org
WATCHDOG DEVICE DRIVERS	dfn:Documentation/devicetree/bindings/watchdog/* OR dfn:Documentation/watchdog/* OR dfn:drivers/watchdog/* OR dfn:include/linux/watchdog.h OR dfn:include/trace/events/watchdog.h OR dfn:include/uapi/linux/watchdog.h OR l:linux-watchdog.vger.kernel.org OR tc:linux-watchdog@vger.kernel.org
RTC DRIVERS BUT DS1307	dfn:drivers/rtc/* AND NOT dfn:drivers/rtc/rtc-ds1307.c
PCF8563 GLOBS	(dfn:drivers/rtc/rtc AND dfn:pcf85*) OR (dfn:Documentation/devicetree/bindings/rtc AND dfn:yaml) OR (dfn:drivers/block AND dfn:flop*)
NAMES AND KEYWORDS	dfn:pcf8563* OR dfn:imx2* OR (dfa:ds1307_probe OR dfb:ds1307_probe)
TWO LISTS	l:linux-rtc.vger.kernel.org OR tc:linux-rtc@vger.kernel.org OR l:linux-watchdog.vger.kernel.org OR tc:linux-watchdog@vger.kernel.org
THE PATCHES LIST	l:patches.lists.linux.dev OR tc:patches@lists.linux.dev
WATCHDOG/CORE	dfn:drivers/watchdog/watchdog_dev.c
NOBODY'S FILES	-
CRLF ENDED	dfn:drivers/watchdog/imx2_wdt.c
EOF

# view_config VIEW TEXT: a new .config, and the search it starts waited for
view_config() {
	local last
	last=$(sed -n "s/^last-refresh: //p" "$1/.status")
	past_second "$last"
	printf "$2" >"$1/.config" &&
	test_wait_for 30 "grep -q '^state: fresh$' \"$1/.status\" && ! grep -qx 'last-refresh: $last' \"$1/.status\"" ||
		{ cat "$1/.status"; return 1; }
}
# the query of a view as .sections gives it
derived() { awk -F '\t' -v t="$1" '$1 == t { print $2 }' "$S/.sections"; }
# compare_view TITLE [LEI_OPTS...]: the view holds what lei q gives for
# its query (-t: the whole threads, as a subsystem view has by default)
compare_view() {
	local t=$1 name q out
	shift
	name=$(printf '%s' "$t" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
	q=$(sed -n 's/^query: //p' "$S/$name/.status")
	out="$TRASH/lei-out/$(printf '%s' "$t$*" | git hash-object --stdin)"
	ls "$S/$name/cur" >/dev/null && grep -q '^state: fresh$' "$S/$name/.status" ||
		{ cat "$S/$name/.status"; return 1; }
	maildir_oids "$S/$name" >leifs.oids
	rm -rf "$out"
	lei_q "$URL" "$out" "$q" --no-import-remote "$@" 2>lei.err || { cat lei.err; return 1; }
	maildir_oids "$out" >lei.oids
	[ -s lei.oids ] && test_cmp lei.oids leifs.oids
}

test_expect_success 'a public-inbox of its own, with mail to patches@lists.linux.dev' '
	python3 "$TEST_DIR/gen-mail.py" -s 5 -n 16 mail >/dev/null &&
	pi_build "$W" mail && pi_start "$W" "$PORT" "$TRASH" &&
	patches_mail p1.eml "add driver" "leifs-patches-1@example.org" &&
	patches_mail p2.eml "fix probe" "leifs-patches-2@example.org" bcc &&
	pi_add "$W" linux-rtc p1.eml "$TRASH" && pi_add "$W" linux-rtc p2.eml "$TRASH" &&
	wide_patch wide.eml && pi_add "$W" linux-rtc wide.eml "$TRASH" &&
	write_maintainers >"$MF"
'
test_expect_success 'the root has subsystems/; .sections gives each title and its query' '
	leifs_mount "$M" $OPTS && ls "$M" >actual &&
	printf "%s\n" queries subsystems threads >expect && test_cmp expect actual &&
	ls -A "$S" >actual && printf "%s\n" .sections .status >expect && test_cmp expect actual &&
	cut -f 1 "$S/.sections" >titles &&
	grep -c "" titles >count && [ "$(cat count)" -eq 13 ] &&
	[ "$(grep -c "^FLOPPY DRIVER$" titles)" -eq 1 ]
'
test_expect_success 'each derived query is the one a maintainer writes by hand' '
	bad=0 && while IFS="	" read -r t q; do
		[ "$(derived "$t")" = "$q" ] || { echo "$t: $(derived "$t")"; bad=1; }
	done <expect.table && [ $bad -eq 0 ]
'
test_expect_success 'subsystems/.status: the file, its duplicate and long titles, the unsearchable' '
	st="$S/.status" &&
	grep -q "^maintainers: $MF: 13 sections, read " "$st" &&
	grep -q "^problem: $MF: line [0-9]*: the title of line [0-9]* again (the first section is used): FLOPPY DRIVER$" "$st" &&
	grep -q "^problem: $MF: line [0-9]*: a title of 300 bytes" "$st" &&
	grep -q "^unsearchable: NOBODY.S FILES: no F:, N:, K: or L: line that can be searched$" "$st"
'
test_expect_success 'mkdir of a title makes a maildir view; ls subsystems/ lists it by title' '
	mkdir "$S/$RTC" && ls -a "$S/$RTC" >actual &&
	printf "%s\n" . .. .config .query .refresh .status .unhide cur new series tmp >expect &&
	test_cmp expect actual && ls "$S" >actual && echo "$RTC" >expect && test_cmp expect actual &&
	[ -z "$(ls "$M/queries")" ] && grep -qF "subsystems/$RTC	" "$M/queries/.status"
'
test_expect_success 'its .query and .status: the derived query, the section, threads on' '
	echo "$(derived "$RTC")" >expect && test_cmp expect "$S/$RTC/.query" &&
	grep -qx "section: $RTC" "$S/$RTC/.status" &&
	grep -qx "maintainers: $MF line 30" "$S/$RTC/.status" &&
	grep -qx "	threads = true" "$S/$RTC/.config"
'
test_expect_success 'the RTC view holds what lei q -t gives for its query' '
	compare_view "$RTC" -t
'
test_expect_success 'WATCHDOG, X:, globs, N: and K:, two lists, a %2F title, CRLF: as lei q -t' '
	bad=0 && for t in "$WDT" "RTC DRIVERS BUT DS1307" "PCF8563 GLOBS" "NAMES AND KEYWORDS" \
		 "TWO LISTS" "CRLF ENDED"; do
		mkdir "$S/$t" && compare_view "$t" -t || { echo "view: $t"; bad=1; }
	done && [ $bad -eq 0 ] &&
	mkdir "$S/WATCHDOG%2FCORE" && compare_view "WATCHDOG/CORE" -t &&
	ls "$S" | grep -qx "WATCHDOG%2FCORE"
'
test_expect_success 'what was widened or left out is said in the view'"'"'s .status' '
	st="$S/PCF8563 GLOBS/.status" &&
	grep -qF "derived: F: drivers/rtc/rtc-pcf85*: searched as (dfn:drivers/rtc/rtc AND dfn:pcf85*) (public-inbox takes no wildcard inside a file name: wider than the glob)" "$st" &&
	grep -qF "derived: F: Documentation/devicetree/bindings/rtc/*.yaml: searched as (dfn:Documentation/devicetree/bindings/rtc AND dfn:yaml)" "$st" &&
	grep -qF "derived: X: drivers/rtc/rtc-pcf8563*: left out (public-inbox takes no wildcard inside a file name: excluding more than the glob would drop the section" "$st" &&
	grep -qF "derived: K: (?:struct|union) rtc_ops: not searchable (a regular expression, not a plain word)" "$S/NAMES AND KEYWORDS/.status"
'
test_expect_success 'patches@lists.linux.dev as the only list: the mail sent to it, by To and List-Id' '
	mkdir "$S/THE PATCHES LIST" && compare_view "THE PATCHES LIST" -t &&
	ls -d "$S/THE PATCHES LIST"/cur/* | file_mids | sort >actual &&
	printf "%s\n" "<leifs-patches-1@example.org>" "<leifs-patches-2@example.org>" >expect &&
	test_cmp expect actual
'
test_expect_success '400 F: lines: searched in parts, the answers joined and counted once' '
	mkdir "$S/MANY FILES" && ls "$S/MANY FILES/cur" >/dev/null &&
	grep -q "^parts: [2-9] " "$S/MANY FILES/.status" &&
	grep -q "^last-query: dfn:drivers/none/file001.c OR .* (part 1 of [2-9] sent to a remote source)$" "$S/MANY FILES/.status" &&
	maildir_oids "$S/MANY FILES" >leifs.oids && rm -rf many &&
	lei_q "$URL" many "dfn:drivers/rtc/rtc-ds1307.c OR dfn:drivers/watchdog/imx2_wdt.c" \
		--no-import-remote -t 2>lei.err && maildir_oids many >lei.oids &&
	[ -s lei.oids ] && test_cmp lei.oids leifs.oids &&
	grep -qx "messages: $(wc -l <lei.oids)" "$S/MANY FILES/.status"
'
test_expect_success 'refused: a title the file lacks (ENOENT), an unsearchable one, .query, mv' '
	! mkdir "$S/NO SUCH SECTION" 2>err && grep -q "No such file" err &&
	grep -q "refused: .* mkdir refused: subsystems/NO SUCH SECTION: no section of that title in $MF$" "$S/.status" &&
	! mkdir "$S/NOBODY'"'"'S FILES" 2>err && grep -q "Invalid argument" err &&
	grep -q "mkdir refused: subsystems/NOBODY.S FILES: no F:, N:, K: or L: line that can be searched" "$S/.status" &&
	! echo "s:other" >"$S/$RTC/.query" 2>err && grep -q "Operation not permitted" err &&
	grep -q "^refused: .query: a subsystem view.s query is derived from MAINTAINERS" "$S/$RTC/.status" &&
	echo "$(derived "$RTC")" >expect && test_cmp expect "$S/$RTC/.query" &&
	! mv "$S/$WDT" "$S/watchdog" 2>/dev/null && [ -d "$S/$WDT" ] &&
	! mkdir "$S/.hidden" 2>/dev/null
'
test_expect_success '.config turns threads off: then the view is lei q without -t' '
	view_config "$S/$WDT" "[leifs]\n\tthreads = false\n" &&
	grep -qx "	threads = false" "$S/$WDT/.config" && compare_view "$WDT"
'
# the edit: RTC DRIVERS BUT DS1307 loses its X: (ds1307 patches come in),
# gets it back (they leave), loses it again: they come back flagged
B="$S/RTC DRIVERS BUT DS1307"
X_DEL='/^X:\tdrivers\/rtc\/rtc-ds1307.c$/d'
X_ADD='/^RTC DRIVERS BUT DS1307$/,/^$/ s#^F:\tdrivers/rtc/$#&\nX:\tdrivers/rtc/rtc-ds1307.c#'
test_expect_success 'MAINTAINERS edited under a mounted view: the query follows, flags kept' '
	maildir_oids "$B" >before.oids &&
	f=$(ls "$B/cur" | head -n 1) && mv "$B/cur/$f" "$B/cur/${f}FS" &&
	sed -i "$X_DEL" "$MF" &&
	grep -q "^derived: the file changed: the next refresh searches its new query$" "$B/.status" &&
	cat "$B/.refresh" >summary && grep -q "	fresh	-$" summary &&
	echo "dfn:drivers/rtc/*" >expect && test_cmp expect "$B/.query" &&
	grep -q "^rederived: .*, the file changed: removed NOT dfn:drivers/rtc/rtc-ds1307.c; the query was: dfn:drivers/rtc/\* AND NOT dfn:drivers/rtc/rtc-ds1307.c$" "$B/.status" &&
	[ -e "$B/cur/${f}FS" ] && [ -n "$(ls "$B/new")" ] &&
	compare_view "RTC DRIVERS BUT DS1307" -t
'
test_expect_success 'a message that leaves at an edit and comes back at the next is as the user left it' '
	g=$(ls "$B/new" | head -n 1) && [ -n "$g" ] &&
	! grep -qx "$(git hash-object "$B/new/$g")" before.oids &&
	mv "$B/new/$g" "$B/cur/$g:2,F" &&
	sed -i "$X_ADD" "$MF" && grep -qx "X:	drivers/rtc/rtc-ds1307.c" "$MF" &&
	cat "$B/.refresh" >/dev/null && [ ! -e "$B/cur/$g:2,F" ] &&
	maildir_oids "$B" >actual && test_cmp before.oids actual &&
	sed -i "$X_DEL" "$MF" && cat "$B/.refresh" >/dev/null &&
	[ -e "$B/cur/$g:2,F" ] && [ -e "$B/cur/${f}FS" ] &&
	compare_view "RTC DRIVERS BUT DS1307" -t
'
test_expect_success 'a binary, a 100 MB, a vanished file: said in .status, views keep what they have' '
	n=$(ls "$S/$RTC/cur" | wc -l) && cp "$MF" keep &&
	printf "REAL\0TIME\n" >"$MF" &&
	grep -q "^maintainers: $MF: 13 sections, read .*; now not a MAINTAINERS file: it holds a NUL byte (binary) (the sections read before are kept)$" "$S/.status" &&
	cat "$S/$RTC/.refresh" >/dev/null && [ "$(ls "$S/$RTC/cur" | wc -l)" -eq "$n" ] &&
	grep -q "^derived: $MF: not a MAINTAINERS file" "$S/$RTC/.status" &&
	rm "$MF" && truncate -s 100M "$MF" &&
	grep -q "; now too big to be a MAINTAINERS file (104857600 bytes, over 4 MiB): not read" "$S/.status" &&
	rm "$MF" && grep -q "; now cannot read it: No such file or directory" "$S/.status" &&
	cat "$S/$RTC/.refresh" >/dev/null && [ "$(ls "$S/$RTC/cur" | wc -l)" -eq "$n" ] &&
	echo "$(cut -f 2 expect.table | sed -n 2p)" >expect && test_cmp expect "$S/$RTC/.query" &&
	cp keep "$MF" && ! grep -q "; now " "$S/.status"
'
# the same derived queries on leifs's own index (Xapian, as public-inbox
# parses them) of what the server sent: cache:URL sources
test_expect_success 'the derived queries on the local index (cache:URL) answer as the server' '
	test_wait_for 120 "grep -q \"^index-remote: on, 0 messages queued\" \"$M/queries/.status\"" &&
	bad=0 && for t in "$RTC" "PCF8563 GLOBS" "NAMES AND KEYWORDS" "TWO LISTS"; do
		view_config "$S/$t" "[leifs]\n\tsource = cache:$URL\n" &&
		grep -q "^source: cache:$URL: ok" "$S/$t/.status" &&
		compare_view "$t" -t || { echo "view: $t"; cat "$S/$t/.status"; bad=1; }
	done && [ $bad -eq 0 ]
'
test_expect_success 'a wildcard the server refuses (over 100 terms): asked without it, said' '
	printf "\nWIDE WORDS\nN:\twc\n" >>"$MF" &&
	grep -qx "WIDE WORDS	dfn:wc\*" "$S/.sections" &&
	mkdir "$S/WIDE WORDS" && ls "$S/WIDE WORDS/cur" >/dev/null &&
	grep -q "^state: fresh$" "$S/WIDE WORDS/.status" &&
	grep -q "^derived: the server refused a wildcard (HTTP 500: over its 100 terms?) in part 1 of 1: asked without it" "$S/WIDE WORDS/.status" &&
	ls -d "$S/WIDE WORDS"/cur/* | file_mids >actual &&
	echo "<leifs-wide-1@example.org>" >expect && test_cmp expect actual
'
test_expect_success 'a section gone whose query is too long for one request: the view keeps what it has' '
	n=$(ls "$S/MANY FILES/cur" "$S/MANY FILES/new" | grep -c leifs) && cp "$MF" keep &&
	sed -i "s/^MANY FILES$/MANY FILES, RENAMED/" "$MF" &&
	cat "$S/MANY FILES/.refresh" >/dev/null &&
	grep -q "^state: failed$" "$S/MANY FILES/.status" &&
	grep -q "^error: no section of that title in $MF: the query derived last ([0-9]* bytes) is too long for one request; the view keeps what it has$" "$S/MANY FILES/.status" &&
	[ "$(ls "$S/MANY FILES/cur" "$S/MANY FILES/new" | grep -c leifs)" -eq "$n" ] &&
	cp keep "$MF" && cat "$S/MANY FILES/.refresh" >/dev/null &&
	grep -q "^state: fresh$" "$S/MANY FILES/.status"
'
test_expect_success 'the views survive a remount; rmdir removes one' '
	leifs_umount "$M" && leifs_mount "$M" $OPTS &&
	ls "$S" | grep -qx "$RTC" && compare_view "$RTC" -t &&
	rmdir "$S/CRLF ENDED" && ! ls "$S" | grep -qx "CRLF ENDED" &&
	mkdir "$S/CRLF ENDED"
'
# a second file: 31 sections that name linux-kernel@vger.kernel.org (an
# umbrella list), the RTC title again
test_expect_success 'two files: an umbrella list is left out, a title of the first file is the first'"'"'s' '
	MF2="$TRASH/MAINTAINERS.more" &&
	{ printf "LKML USER\nL:\tlinux-kernel@vger.kernel.org\nF:\tdrivers/watchdog/imx2_wdt.c\n\n"
	  for i in $(seq 1 30); do printf "OTHER %d\nL:\tlinux-kernel@vger.kernel.org\nF:\tx/%d.c\n\n" $i $i; done
	  printf "%s\nF:\tdrivers/block/\n" "$RTC"; } >"$MF2" &&
	leifs_umount "$M" && leifs_mount "$M" $OPTS,maintainers="$MF2" &&
	grep -qx "LKML USER	dfn:drivers/watchdog/imx2_wdt.c" "$S/.sections" &&
	[ "$(grep -c "^$RTC	" "$S/.sections")" -eq 1 ] && grep -q "^$RTC	dfn:Doc" "$S/.sections" &&
	grep -q "^problem: $MF2: line [0-9]*: a title $MF has (its section is used): $RTC$" "$S/.status" &&
	mkdir "$S/LKML USER" && ls "$S/LKML USER/cur" >/dev/null &&
	grep -qF "derived: L: linux-kernel@vger.kernel.org: left out (31 sections name it: what it carries is not all this section" "$S/LKML USER/.status"
'
test_expect_success 'a MAINTAINERS file inside the mount point is refused at mount' '
	leifs_umount "$M" &&
	! "$LEIFS" -f -o source=$URL,cache=$TRASH/cache,maintainers="$M/subsystems/.sections" "$M" 2>err &&
	grep -q "maintainers=$M/subsystems/.sections is inside the mount point" err &&
	! mountpoint -q "$M"
'
test_expect_success 'without -o maintainers: subsystems/ is there, empty, and says how' '
	leifs_umount "$M" && leifs_mount "$M" -o source=$URL,cache=$TRASH/cache2 &&
	grep -q "^maintainers: none (mount with -o maintainers=FILE" "$S/.status" &&
	[ -z "$(cat "$S/.sections")" ] && ! mkdir "$S/$RTC" 2>/dev/null
'
lei_stop
test_done

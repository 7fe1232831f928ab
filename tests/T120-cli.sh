#!/usr/bin/env bash
# The command line, the config file, and make install: what a user and a
# packager see before anything is mounted.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-gen.sh"

test_expect_success '--help prints the options on stdout and exits 0' '
	"$LEIFS" --help >out 2>err && grep -q "^usage: leifs" out &&
	grep -q "source=URL" out && grep -q "config=FILE" out && [ ! -s err ] &&
	"$LEIFS" -h >out2 && test_cmp out out2
'
test_expect_success '--version and -V' '
	"$LEIFS" --version >out && grep -E "^leifs [0-9]+\.[0-9]+" out &&
	"$LEIFS" -V >out2 && test_cmp out out2
'
test_expect_success 'every -o option of --help is in leifs(1); the versions agree' '
	"$LEIFS" --help | sed -n "s/^  -o \([a-z_]*\).*/\1/p" >names &&
	[ $(wc -l <names) -ge 20 ] &&
	while read -r n; do
		grep -q "^\.BI\{0,1\} \"\\\\-o $n[=\"]" "$SRC_DIR/fs/leifs.1" ||
		{ echo "$n is not in leifs.1"; return 1; }
	done <names &&
	v=$("$LEIFS" --version | sed -n "s/^leifs \([^ ]*\) .*/\1/p") &&
	head -n 1 "$SRC_DIR/fs/leifs.1" | grep -F "\"leifs $v\""
'
# one line on stderr, exit status 2
cli_error() {
	local rc
	"$@" >out 2>err </dev/null
	rc=$?
	cat err
	[ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] && [ ! -s out ]
}
mkdir -p "$TRASH/mp"
export XDG_CONFIG_HOME="$TRASH/xdg" XDG_CACHE_HOME="$TRASH/xdgcache"
test_expect_success 'command line errors: one line, exit 2' '
	cli_error "$LEIFS" &&
	cli_error "$LEIFS" -o nosuchoption "$TRASH/mp" && grep -q nosuchoption err &&
	cli_error "$LEIFS" -o refresh=soon "$TRASH/mp" &&
	cli_error "$LEIFS" -o timeout=0 "$TRASH/mp" &&
	cli_error "$LEIFS" -o source=ftp://example.org/ "$TRASH/mp" &&
	cli_error "$LEIFS" -o config="$TRASH/none" "$TRASH/mp" && grep -q "$TRASH/none" err &&
	! mountpoint -q "$TRASH/mp"
'
test_expect_success 'a bad config file: the file, the line and why; exit 2' '
	mkdir -p "$XDG_CONFIG_HOME/leifs" &&
	printf "[leifs]\n\trefresh = 60\n\ttimeot = 5\n" >"$XDG_CONFIG_HOME/leifs/config" &&
	cli_error "$LEIFS" "$TRASH/mp" && grep -q "config: line 3: unknown key leifs.timeot" err &&
	printf "[leifs]\n\trefresh = \"60\n" >"$XDG_CONFIG_HOME/leifs/config" &&
	cli_error "$LEIFS" "$TRASH/mp" && grep -q "config: line 2: unterminated quote" err &&
	printf "[leifs]\n\tinsecure = perhaps\n" >"$XDG_CONFIG_HOME/leifs/config" &&
	cli_error "$LEIFS" "$TRASH/mp" && grep -q "line 2: bad value for leifs.insecure" err &&
	rm "$XDG_CONFIG_HOME/leifs/config"
'

test_expect_success 'public-inbox-httpd serves the generated archive' 'gen_server'
M="$TRASH/mnt"
test_expect_success 'the config file sets sources, cache and timing' '
	cat >"$XDG_CONFIG_HOME/leifs/config" <<-EOC &&
	# as a user would write it
	[leifs]
		source = $PI_URL
		cache = $TRASH/from-config
		refresh = 1234
		max-message = 32m
	[core]
		editor = vi
	EOC
	leifs_mount "$M" &&
	grep -F "$PI_URL" "$M/queries/.status" &&
	mkdir "$M/queries/s:rtc" && [ "$(ls "$M/queries/s:rtc/cur" | wc -l)" -gt 10 ] &&
	[ -d "$TRASH/from-config/lmdb" ] && [ ! -e "$XDG_CACHE_HOME/leifs" ] &&
	leifs_umount "$M"
'
test_expect_success 'the command line wins over the config file' '
	leifs_mount "$M" -o cache="$TRASH/from-cmdline" &&
	mkdir "$M/queries/s:pcf8563" && [ "$(ls "$M/queries/s:pcf8563/cur" | wc -l)" -gt 5 ] &&
	[ -d "$TRASH/from-cmdline/lmdb" ] &&
	leifs_umount "$M" &&
	leifs_mount "$M" -o source=http://127.0.0.1:1/all/,cache="$TRASH/from-cmdline" &&
	grep -F "http://127.0.0.1:1/all/" "$M/queries/.status" &&
	! grep -F "$PI_URL" "$M/queries/.status" &&
	leifs_umount "$M"
'
test_expect_success 'daemonized: detaches, serves, unmounts cleanly' '
	"$LEIFS" -o cache="$TRASH/daemon" "$M" 2>err && [ ! -s err ] &&
	test_atexit "fusermount3 -u -z \"$M\" 2>/dev/null" &&
	mountpoint -q "$M" && mkdir "$M/queries/s:rtc" &&
	test_wait_for 20 "[ \$(ls \"$M/queries/s:rtc/cur\" | wc -l) -gt 10 ]" &&
	pid=$(pgrep -f -n "leifs -o cache=$TRASH/daemon") &&
	fusermount3 -u "$M" && test_wait_for 10 "! kill -0 $pid 2>/dev/null"
'
rm -f "$XDG_CONFIG_HOME/leifs/config"
test_expect_success '-d: debug lines for each search' '
	leifs_mount "$M" -d -o source=$PI_URL,cache="$TRASH/debug" &&
	mkdir "$M/queries/s:watchdog" && ls "$M/queries/s:watchdog/cur" >/dev/null &&
	grep -q "search .*q=s:watchdog" "$TRASH/leifs.log" && leifs_umount "$M"
'
# a syslog of our own on /dev/log, where no system logger has one (CI)
if [ -e /dev/log ] || [ "$(id -u)" != 0 ]; then
	test_skip 'daemonized, errors go to syslog' '/dev/log belongs to a system logger here'
else
	test_expect_success 'daemonized, errors go to syslog' '
		python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(\"/dev/log\")
s.settimeout(30)
with open(sys.argv[1], \"ab\", buffering=0) as f:
    while True:
        try:
            f.write(s.recv(65536) + b\"\n\")
        except socket.timeout:
            break
" "$TRASH/syslog" &
		logger_pid=$! &&
		test_atexit "kill $logger_pid 2>/dev/null; rm -f /dev/log" &&
		test_wait_for 5 "[ -S /dev/log ]" &&
		"$LEIFS" -o source=$PI_URL,cache="$TRASH/syslogged" "$M" 2>err && [ ! -s err ] &&
		! mkdir "$M/queries/(unbalanced" 2>/dev/null &&
		test_wait_for 5 "grep -q \"leifs\\[[0-9]*\\]: mkdir refused: (unbalanced\" \"$TRASH/syslog\"" &&
		fusermount3 -u "$M" && kill $logger_pid && rm -f /dev/log
	'
fi
test_expect_success 'the systemd user unit starts and stops a mount' '
	unit="$SRC_DIR/examples/leifs.service" && home="$TRASH/home" && mkdir -p "$home" &&
	start=$(sed -n "s/^ExecStart=//p" "$unit" | sed "s|%h|$home|g; s|/usr/local/bin/leifs|$LEIFS|") &&
	stop=$(sed -n "s/^ExecStop=//p" "$unit" | sed "s|%h|$home|g") &&
	sed -n "s/^ExecStartPre=//p" "$unit" | sed "s|%h|$home|g" >pre &&
	while read -r cmd; do
		case $cmd in -*) ${cmd#-} 2>/dev/null || : ;; *) $cmd || return 1 ;; esac
	done <pre && { HOME=$home XDG_CONFIG_HOME= XDG_CACHE_HOME= $start -o source=$PI_URL 2>>"$TRASH/leifs.log" & } &&
	test_atexit "fusermount3 -u -z \"$home/lore\" 2>/dev/null" &&
	test_wait_for 10 "mountpoint -q \"$home/lore\"" &&
	mkdir "$home/lore/queries/s:rtc" && [ -d "$home/.cache/leifs/lmdb" ] &&
	$stop && test_wait_for 10 "! mountpoint -q \"$home/lore\"" && wait
'

test_expect_success 'make install honours DESTDIR and PREFIX' '
	make -C "$SRC_DIR" -s install DESTDIR="$TRASH/dest" PREFIX=/opt/leifs >out 2>&1 &&
	[ -x dest/opt/leifs/bin/leifs ] && [ -f dest/opt/leifs/share/man/man1/leifs.1 ] &&
	[ -f dest/opt/leifs/share/doc/leifs/examples/config ] &&
	dest/opt/leifs/bin/leifs --version &&
	make -C "$SRC_DIR" -s uninstall DESTDIR="$TRASH/dest" PREFIX=/opt/leifs &&
	[ -z "$(find dest -type f)" ]
'
test_expect_success 'the man page renders without warnings and covers the CLI' '
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$SRC_DIR/fs/leifs.1" >man.txt 2>warn &&
	[ ! -s warn ] || { cat warn; false; } &&
	for o in source cache refresh timeout margin refresh_all max_message map_size cafile proxy insecure config; do
		grep -q -- "-o $o" man.txt || { echo "man page lacks -o $o"; return 1; }
		grep -q -- "-o $o" "$SRC_DIR/README" || { echo "README lacks -o $o"; return 1; }
	done &&
	grep -q "dfn:drivers%2Fblock%2Ffloppy.c" man.txt
'
test_expect_success 'the sample config file is one leifs accepts' '
	leifs_mount "$M" -o config="$SRC_DIR/examples/config",source=$PI_URL,cache="$TRASH/sample" &&
	ls "$M/queries" && leifs_umount "$M"
'
test_done

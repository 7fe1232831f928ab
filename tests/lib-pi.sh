# lib-pi.sh: a real public-inbox server on loopback for the tests.
#
#   pi_build WORK MAILDIR   inboxes linux-rtc and linux-watchdog from
#                           MAILDIR/<list>/*.eml, and an extindex as /all/
#   pi_start WORK PORT [RUN] public-inbox-httpd on 127.0.0.1:PORT, pid and logs
#                           in RUN (default WORK); stopped at exit
#   pi_stop RUN
#   pi_add WORK LIST FILE [RUN]  deliver one more message with
#                           public-inbox-mda, update /all/, tell the httpd
pi_build() {
	local w=$1 md=$2 l
	export PI_CONFIG="$w/pi-config"
	mkdir -p "$w"
	: >"$PI_CONFIG"
	git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
	for l in linux-rtc linux-watchdog; do
		mkdir -p "$w/$l/git"
		python3 "$TEST_DIR/pi-import.py" "$w/$l/git/0.git" "$md/$l"/*.eml || return 1
		public-inbox-init -V2 -L full "$l" "$w/$l" \
			"http://127.0.0.1/$l" "$l@vger.kernel.org" || return 1
		public-inbox-index --no-fsync "$w/$l" >>"$w/build.log" 2>&1 || return 1
	done
	git config -f "$PI_CONFIG" extindex.all.topdir "$w/all"
	public-inbox-extindex --no-fsync --all "$w/all" >>"$w/build.log" 2>&1
}

pi_start() {
	local w=$1 port=$2 run=${3:-$1}
	export PI_CONFIG="$w/pi-config"
	public-inbox-httpd -l "http://127.0.0.1:$port" -1 "$run/httpd.out" \
		-2 "$run/httpd.err" -P "$run/httpd.pid" -D || return 1
	test_atexit "pi_stop '$run'"
	test_wait_for 20 "curl -fs -o /dev/null http://127.0.0.1:$port/all/"
}

# pi_stop RUNDIR: the directory holding httpd.pid
pi_stop() {
	local run=$1 pid
	[ -s "$run/httpd.pid" ] || return 0
	pid=$(cat "$run/httpd.pid")
	kill "$pid" 2>/dev/null
	test_wait_for 10 "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null
	rm -f "$run/httpd.pid"
}

pi_add() {
	pi_add_all "$1" "$2" "${4:-$1}" "$3"
}

# pi_add_all INBOXES LIST RUN FILE...: pi_add of each file, indexed once
pi_add_all() {
	local w=$1 l=$2 run=$3 f
	shift 3
	export PI_CONFIG="$w/pi-config"
	for f; do
		ORIGINAL_RECIPIENT="$l@vger.kernel.org" public-inbox-mda --no-precheck <"$f" ||
			return 1
	done
	public-inbox-extindex --no-fsync --all "$w/all" >>"$w/build.log" 2>&1 || return 1
	# a running httpd keeps its Xapian handles open for up to 30 s of
	# idleness and would not see the new message: SIGHUP drops them
	if [ -s "$run/httpd.pid" ]; then
		kill -HUP "$(cat "$run/httpd.pid")" && sleep 1
	fi
	return 0
}

# pi_post INBOXES RUN SUBJECT MSGID [PARENT-MSGID]: a message to linux-rtc
# (a reply to PARENT if given), delivered as pi_add does
pi_post() {
	local w=$1 run=$2 f
	f="$run/post-$(printf %s "$4" | tr -c 'A-Za-z0-9.@-' _).eml"
	{
		printf 'From: Test Sender <sender@example.org>\nTo: linux-rtc@vger.kernel.org\n'
		printf 'Subject: %s\nDate: %s\nMessage-ID: <%s>\n' "$3" "$(date -R)" "$4"
		[ -z "${5:-}" ] || printf 'In-Reply-To: <%s>\nReferences: <%s>\n' "$5" "$5"
		printf '\nA message posted by the test: %s.\n' "$3"
	} >"$f" && pi_add "$w" linux-rtc "$f" "$run"
}

# lei, isolated: its own HOME and XDG dirs under $TRASH/lei-home
lei_q() {
	local url=$1 out=$2 q=$3
	shift 3
	mkdir -p "$TRASH/lei-home"
	HOME="$TRASH/lei-home" XDG_RUNTIME_DIR="$TRASH/lei-home/run" \
	XDG_CONFIG_HOME="$TRASH/lei-home/config" XDG_DATA_HOME="$TRASH/lei-home/data" \
	XDG_CACHE_HOME="$TRASH/lei-home/cache" XDG_STATE_HOME="$TRASH/lei-home/state" \
		lei q --no-save --no-local --only "$url" --stdin -o "$out" "$@" <<<"$q"
}

lei_stop() {
	[ -d "$TRASH/lei-home" ] || return 0
	HOME="$TRASH/lei-home" XDG_RUNTIME_DIR="$TRASH/lei-home/run" \
	XDG_CONFIG_HOME="$TRASH/lei-home/config" XDG_DATA_HOME="$TRASH/lei-home/data" \
	XDG_CACHE_HOME="$TRASH/lei-home/cache" XDG_STATE_HOME="$TRASH/lei-home/state" \
		lei daemon-kill 2>/dev/null
	return 0
}

# corpus_serve N PORT: the first N messages of each list of ../shared/corpus
# as public-inbox inboxes and an extindex (/all/), built by pi-serve once per
# checkout under a lock (the build takes minutes, the data never changes),
# then served read-only by an httpd of this file's own on PORT, stopped at
# exit; sets CORPUS_W.  pi-serve's own httpd is stopped once the build is
# done: it kills any httpd it started before in the same directory.
corpus_serve() {
	CORPUS_W="$TEST_DIR/.corpus-cache/n$1"
	mkdir -p "$CORPUS_W" "$TRASH/corpus-httpd" &&
	fixture_lock "corpus-n$1" corpus_build "$1" &&
	pi_start "$CORPUS_W" "$2" "$TRASH/corpus-httpd"
}

corpus_build() {
	[ -e "$CORPUS_W/.built" ] && ! [ -s "$CORPUS_W/httpd.pid" ] && return 0
	"$SHARED_DIR/corpus/pi-serve" -n "$1" -p "$(free_port)" "$CORPUS_W" >/dev/null &&
	pi_stop "$CORPUS_W"
}

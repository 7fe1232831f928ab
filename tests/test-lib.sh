# test-lib.sh: a small test library in the style of git's t/test-lib.sh.
# Source it from tests/T*.sh; each test script runs in its own trash dir.
#
#   test_expect_success 'what it checks' 'shell code'
#   test_cmp expected actual
#   test_skip 'what' 'why'
#   test_done            # prints "N passed, N failed[, N skipped]"
set -u
TEST_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(cd "$TEST_DIR/.." && pwd)
LEIFS="$SRC_DIR/leifs"
SHARED_DIR=${LEIFS_SHARED:-$SRC_DIR/../shared}
TEST_NAME=$(basename "$0" .sh)
TRASH="$TEST_DIR/trash/$TEST_NAME"
PATH="$SRC_DIR:$TEST_DIR/c:$PATH"
export PATH
test_passed=0 test_failed=0 test_skipped=0
test_cleanup_cmds=""

rm -rf "$TRASH"
mkdir -p "$TRASH"
cd "$TRASH" || exit 1

say() { printf '%s\n' "$*"; }

# run on exit, last registered first
test_atexit() {
	test_cleanup_cmds="$1
$test_cleanup_cmds"
}
_test_run_cleanup() {
	eval "$test_cleanup_cmds"
	test_cleanup_cmds=""
}
trap '_test_run_cleanup' EXIT
trap '_test_run_cleanup; exit 130' INT TERM

# the code runs in this shell (so it may set variables for later tests);
# "return 1" ends it as a failure; TEST_TRACE=1 traces it (set -x)
_test_eval() {
	if [ -n "${TEST_TRACE:-}" ]; then
		local rc
		set -x
		eval "$1"
		rc=$?
		{ set +x; } 2>/dev/null
		return $rc
	else
		eval "$1"
	fi
}

# a check that took a second or more says how long, so that the slow ones
# are found in the output of any run
_test_took() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { if (b - a >= 1) printf " # %.1f s", b - a }'
}

test_expect_success() {
	local desc=$1 code=$2 rc start=$EPOCHREALTIME
	_test_eval "$code" >"$TRASH/.test-out" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		test_passed=$((test_passed + 1))
		say "ok - $TEST_NAME: $desc$(_test_took "$start")"
	else
		test_failed=$((test_failed + 1))
		say "not ok - $TEST_NAME: $desc$(_test_took "$start")"
		tail -n 40 "$TRASH/.test-out" | sed 's/^/#   /'
	fi
}

test_skip() {
	test_skipped=$((test_skipped + 1))
	say "skip - $TEST_NAME: $1 ($2)"
}

test_cmp() {
	diff -u "$1" "$2"
}

# wait up to $1 seconds for "$2" (a shell condition) to hold
test_wait_for() {
	local t=$1 i=0
	shift
	while ! eval "$*"; do
		i=$((i + 1))
		[ $i -lt $((t * 10)) ] || return 1
		sleep 0.1
	done
}

test_done() {
	# a daemon built with sanitizers reports to its log: any report fails
	if [ -f "$TRASH/leifs.log" ] &&
	   grep -q -E "AddressSanitizer|LeakSanitizer|runtime error:" "$TRASH/leifs.log"; then
		test_failed=$((test_failed + 1))
		say "not ok - $TEST_NAME: sanitizer report in leifs.log"
		grep -A 30 -E "AddressSanitizer|LeakSanitizer|runtime error:" "$TRASH/leifs.log" |
			head -n 60 | sed 's/^/#   /'
	fi
	say "$TEST_NAME: $test_passed passed, $test_failed failed, $test_skipped skipped"
	printf '%s %s %s\n' "$test_passed" "$test_failed" "$test_skipped" \
		>"$TEST_DIR/trash/$TEST_NAME.counts"
	_test_run_cleanup
	[ "$test_failed" -eq 0 ]
}

# fixture_lock NAME CMD...: CMD under an exclusive lock named NAME.  A
# fixture shared by several files (the generated archive, the corpus slice)
# is built by the first file that needs it while the others wait on the
# lock, then reused read-only: files run in parallel (run-tests.sh).
fixture_lock() {
	local name=$1
	shift
	mkdir -p "$TEST_DIR/trash"
	( flock 9 && "$@" ) 9>"$TEST_DIR/trash/.lock-$name"
}

# a free TCP port on 127.0.0.1
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# tests/hostile-server.py on a free port, stopped at exit; sets H to its
# base URL.  With CERT KEY it speaks HTTPS.
hostile_start() {
	local port
	port=$(free_port)
	python3 "$TEST_DIR/hostile-server.py" "$port" "$@" &
	test_atexit "kill $! 2>/dev/null"
	if [ $# -gt 0 ]; then H="https://127.0.0.1:$port"; else H="http://127.0.0.1:$port"; fi
}

# ---- leifs mounts ----

# leifs_mount MNT [OPTS...]: mount in the foreground in the background,
# unmounted at exit whatever happens.  A first listing waits for the whole
# first fill (up to timeout), as most tests compare it with the whole
# answer and a loaded machine may take more than the default first_wait
# (1 s) for it; a test of first_wait passes its own after this one.
leifs_mount() {
	local mnt=$1
	shift
	mkdir -p "$mnt"
	"$LEIFS" -f -o first_wait=3600 "$@" "$mnt" 2>>"$TRASH/leifs.log" &
	echo $! >"$mnt.pid"
	test_atexit "leifs_umount '$mnt'"
	test_wait_for 10 "mountpoint -q '$mnt'"
}

leifs_umount() {
	local mnt=$1 pid
	grep -qF " $mnt " /proc/mounts && fusermount3 -u -z "$mnt"
	if [ -f "$mnt.pid" ]; then
		pid=$(cat "$mnt.pid")
		# the daemon ends when the session ends; give it time, then
		# force, saying where its threads were (a hang is a bug)
		if ! test_wait_for 10 "! kill -0 $pid 2>/dev/null"; then
			echo "leifs (pid $pid) still running 10 s after the unmount of $mnt" >&2
			command -v gdb >/dev/null &&
				gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 |
				grep -E "^Thread|^#" >&2
			kill -9 "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
		rm -f "$mnt.pid"
	fi
	return 0
}

# past_second LAST: wait until the clock is past the second of LAST (a
# last-refresh of .status, which counts seconds), so that a search started
# now has a last-refresh of its own; at most 1.1 s, none once it is past
past_second() {
	local t
	case $1 in ''|never) return 0 ;; esac
	t=$(date -d "$1" +%s 2>/dev/null) || { sleep 1.1; return 0; }
	while [ "$(date +%s)" -le "$t" ]; do sleep 0.05; done
}

# abs_paths PATH...: each existing file's absolute path, one a line (git
# hash-object --stdin-paths reads a relative one from the top of the
# work tree it is in, and the trash is in one)
abs_paths() {
	local f
	for f in "$@"; do
		[ -f "$f" ] || continue
		case $f in /*) printf '%s\n' "$f" ;; *) printf '%s\n' "$PWD/$f" ;; esac
	done
}
# blob ids of the files named on stdin, one a line, in their order: one git
# for them all (one per file took seconds for a view of a few hundred)
hash_paths() {
	git hash-object --no-filters --stdin-paths
}

# the value of the first Message-ID header of each file named on stdin,
# one a line, in their order ("-" where the header has none); one awk for
# them all.  Message files are never empty (awk skips an empty file).
file_mids() {
	tr '\n' '\0' | xargs -0 -r awk '
		FNR == 1 { if (NR > 1) print m; m = "-"; body = 0 }
		body { next }
		/^\r?$/ { body = 1; next }
		m == "-" && tolower($0) ~ /^message-id:/ { m = $0; sub(/^[^:]*:[ \t]*/, "", m) }
		END { if (NR > 0) print m }'
}
# a maildir's files, absolute, one a line
maildir_files() {
	local d=$1
	case $d in /*) ;; *) d=$PWD/$d ;; esac
	find "$d/cur" "$d/new" -type f 2>/dev/null
}

# lines "... INFO" (INFO: the letters after a maildir name's ":2,", maybe
# none) as "... FLAGS", the IMAP names of R, F and S, each after a space
imap_flags() {
	awk '{ info = $NF; if (NF > 0 && substr($0, length($0)) == " ") info = ""
	       line = $0; sub(/ [^ ]*$/, "", line)
	       if (info ~ /R/) line = line " \\Answered"
	       if (info ~ /F/) line = line " \\Flagged"
	       if (info ~ /S/) line = line " \\Seen"
	       print line }'
}

# every file's bytes hash to the oid in its name
check_oids() {
	local paths got
	paths=$(abs_paths "$@") && [ -n "$paths" ] || return 0
	got=$(printf '%s\n' "$paths" | hash_paths) || return 1
	paste -d " " <(printf '%s\n' "$paths" |
			sed 's|^.*/[0-9]*\.\([0-9a-f]\{40\}\)\.leifs[^/]*$|\1|; t; s/.*/-/') \
		<(printf '%s\n' "$got") <(printf '%s\n' "$paths") |
		awk '$1 != $2 { f = $0; sub(/^[^ ]* [^ ]* /, "", f); print "bad oid: " f " (" $2 ")"; bad = 1 }
		     END { exit bad }'
}

# oids of the message files of a maildir (leifs or lei names), sorted
maildir_oids() {
	maildir_files "$1" | hash_paths | sort
}

# lib-bench.sh: what the benchmarks share.  Set BENCH_NAME, then source it.
# Gives TEST_DIR SRC_DIR TRASH RUNS, test_atexit/test_wait_for (for
# lib-pi.sh), now, calc, median, free_port and lei_env (lei isolated in TRASH).
set -u
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
TEST_DIR=$(cd "$BENCH_DIR/.." && pwd)
SRC_DIR=$(cd "$TEST_DIR/.." && pwd)
TRASH="$TEST_DIR/trash/bench-$BENCH_NAME"
SHARED_DIR=${LEIFS_SHARED:-$SRC_DIR/../shared}
RUNS=${RUNS:-3}
rm -rf "$TRASH"; mkdir -p "$TRASH"
bench_cleanup=""
trap 'eval "$bench_cleanup"' EXIT
test_atexit() { bench_cleanup="$1; $bench_cleanup"; }
test_wait_for() {
	local t=$1 i=0; shift
	while ! eval "$*"; do i=$((i + 1)); [ $i -lt $((t * 100)) ] || return 1; sleep 0.01; done
}
. "$TEST_DIR/lib-pi.sh"
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\\n\", $* }"; }
median() { sort -g | sed -n "$(( (RUNS + 1) / 2 ))p"; }
# median seconds of RUNS runs of a command, after one warm-up run
timeit() {
	local i t0
	"$@" >/dev/null 2>&1
	for i in $(seq "$RUNS"); do
		t0=$(now)
		"$@" >/dev/null 2>&1
		calc "$(now) - $t0"
	done | median
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
lei_env() {
	HOME="$TRASH/lei" XDG_RUNTIME_DIR="$TRASH/lei/run" XDG_CONFIG_HOME="$TRASH/lei/config" \
	XDG_DATA_HOME="$TRASH/lei/data" XDG_CACHE_HOME="$TRASH/lei/cache" "$@"
}
# neomutt_open DIR: median seconds (RUNS, after a warm-up) from starting
# neomutt on the maildir DIR until it has drawn the index and quit again
# (push q runs once the mailbox is read); neomutt reads every message's
# headers first, so this is what a user waits for.  Runs in tmux.
neomutt_open() {
	local dir=$1 out="$TRASH/neomutt.t" sock="$TRASH/tmux-bench.sock" i
	printf 'set folder="%s"\nset spoolfile="%s"\nset header_cache=""\n' "$dir" "$dir" >"$TRASH/neomuttrc"
	for i in $(seq 0 "$RUNS"); do
		rm -f "$out"
		tmux -S "$sock" -f /dev/null new-session -d -x 160 -y 50 \
			"t0=\$(date +%s.%N); TERM=xterm-256color neomutt -n -F '$TRASH/neomuttrc' -f '$dir' -e 'push q'; echo \$t0 \$(date +%s.%N) >'$out'" || return 1
		if ! test_wait_for 600 "[ -s '$out' ]"; then
			tmux -S "$sock" kill-server 2>/dev/null
			return 1
		fi
		[ "$i" -eq 0 ] || awk '{ printf "%.6f\n", $2 - $1 }' "$out"
	done | median
}

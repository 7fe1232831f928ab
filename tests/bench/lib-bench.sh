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

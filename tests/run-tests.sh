#!/usr/bin/env bash
# Runs every tests/T*.sh (or the files named: run-tests.sh T110-refresh ...),
# J files at a time (J=2 by default; make check J=N),
# and sums their counts into the closing line.  Each file has its own trash
# directory, ports, mounts, caches and lei home, and builds the shared
# fixtures under a lock (test-lib.sh: fixture_lock), so no file waits on
# another but for a fixture's first build.  A file's output is printed
# whole when it ends, so a failure is read under its file's name; a table of
# wall times, slowest first, comes before the closing line.
cd "$(dirname "$0")" || exit 1
J=${J:-2}
case $J in '' | *[!0-9]* | 0) echo "J must be a whole number above 0, not '$J'" >&2; exit 2 ;; esac
# a run that was killed may have left a mount behind: never rm -rf into it
# (a daemon killed with -9 leaves a mount that mountpoint(1) cannot stat:
# go by /proc/mounts)
for m in trash/*/mnt*; do
	grep -qF " $PWD/$m " /proc/mounts 2>/dev/null && fusermount3 -u -z "$m"
done
rm -rf trash
mkdir -p trash/.runner

# the slowest files first (their measured order), so that the last file to
# start is a short one and no core idles at the end; the rest by name
SLOW="T600-local T515-imap-deliver T620-local-threads T306-memory T305-bounds
T150-edit T500-clients T110-refresh T140-user-state T310-crash T400-corpus"
files=()
for t in $SLOW; do [ -f "$t.sh" ] && files+=("$t.sh"); done
for t in T*.sh; do [[ " "$SLOW" " == *[[:space:]]"${t%.sh}"[[:space:]]* ]] || files+=("$t"); done
if [ $# -gt 0 ]; then
	files=()
	for t in "$@"; do
		[ -f "${t%.sh}.sh" ] || { echo "no test file ${t%.sh}.sh" >&2; exit 2; }
		files+=("${t%.sh}.sh")
	done
fi

# one file: its output and its wall time go to trash/.runner/NAME.*
run_one() {
	local t=$1 n=${1%.sh} start rc
	start=$EPOCHREALTIME
	bash "$t" >"trash/.runner/$n.out" 2>&1 </dev/null
	rc=$?
	echo "$rc $start $EPOCHREALTIME" >"trash/.runner/$n.done"
}

pass=0 fail=0 skip=0 broken="" running=0
report() {
	local n=$1 rc start end p f s c
	read -r rc start end <"trash/.runner/$n.done"
	cat "trash/.runner/$n.out"
	c="trash/$n.counts"
	if [ -f "$c" ]; then
		read -r p f s <"$c"
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	else
		fail=$((fail + 1))
		broken="$broken $n"
		echo "$n.sh exited $rc without finishing"
	fi
	printf '%s %s\n' "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$n" \
		>>trash/.runner/times
}

declare -A pids=()
for t in "${files[@]}"; do
	[ -n "${TESTS:-}" ] && ! [[ " $TESTS " == *" ${t%.sh} "* ]] && continue
	while [ "$running" -ge "$J" ]; do
		wait -n -p done_pid
		report "${pids[$done_pid]}"
		unset "pids[$done_pid]"
		running=$((running - 1))
	done
	run_one "$t" &
	pids[$!]=${t%.sh}
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n -p done_pid
	report "${pids[$done_pid]}"
	unset "pids[$done_pid]"
	running=$((running - 1))
done

if [ -s trash/.runner/times ]; then
	echo "wall time per file (s), slowest first, $J at a time:"
	sort -rn trash/.runner/times | awk '{ printf "  %7.1f  %s\n", $1, $2 }'
fi
[ -z "$broken" ] || echo "scripts that did not finish:$broken"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

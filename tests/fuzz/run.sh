#!/usr/bin/env bash
# run.sh SECONDS NAME...: run each fuzz target for SECONDS over its seeds
# and the regression inputs, two at a time (one per core); crashes are
# left in fuzz-build/crash-NAME-*, and the summary says how many runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=$1
shift
"$here/seeds.sh" "$top/fuzz-build/seeds" || exit 1
rc=0
run_one() {
	local name=$1 corpus="$top/fuzz-build/corpus/$name"
	mkdir -p "$corpus"
	"$top/fuzz-build/fuzz-$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$top/fuzz-build/crash-$name-" -print_final_stats=1 \
		"$corpus" "$top/fuzz-build/seeds/$name" "$here/regressions/$name" \
		>"$top/fuzz-build/$name.log" 2>&1
}
pids=""
for name in "$@"; do
	mkdir -p "$here/regressions/$name"
	run_one "$name" &
	pids="$pids $!:$name"
	if [ $(echo $pids | wc -w) -ge 2 ]; then
		for p in $pids; do wait "${p%%:*}" || rc=1; done
		pids=""
	fi
done
for p in $pids; do wait "${p%%:*}" || rc=1; done
for name in "$@"; do
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$top/fuzz-build/$name.log")
	crash=$(ls "$top/fuzz-build/crash-$name-"* 2>/dev/null | wc -l)
	echo "fuzz-$name: ${runs:-?} runs in ${secs}s, $crash crash(es)"
done
exit $rc

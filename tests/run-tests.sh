#!/usr/bin/env bash
# Runs every tests/T*.sh and sums their counts into the closing line.
cd "$(dirname "$0")" || exit 1
# a run that was killed may have left a mount behind: never rm -rf into it
# (a daemon killed with -9 leaves a mount that mountpoint(1) cannot stat:
# go by /proc/mounts)
for m in trash/*/mnt*; do
	grep -qF " $PWD/$m " /proc/mounts 2>/dev/null && fusermount3 -u -z "$m"
done
rm -rf trash
mkdir -p trash
pass=0 fail=0 skip=0 broken=""
for t in T*.sh; do
	[ -n "${TESTS:-}" ] && ! [[ " $TESTS " == *" ${t%.sh} "* ]] && continue
	bash "$t"
	rc=$?
	c="trash/${t%.sh}.counts"
	if [ -f "$c" ]; then
		read -r p f s <"$c"
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	else
		fail=$((fail + 1))
		broken="$broken ${t%.sh}"
	fi
	[ $rc -eq 0 ] || [ -f "$c" ] || echo "$t exited $rc without finishing"
done
[ -z "$broken" ] || echo "scripts that did not finish:$broken"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# The libFuzzer targets over their seed corpus and every input that once
# crashed them (tests/fuzz/regressions/NAME/): no fuzzing, just replay.
# `make fuzz FUZZ_TIME=600` is the fuzzing itself.
. "$(dirname "$0")/test-lib.sh"

if ! command -v clang >/dev/null; then
	test_skip 'fuzz targets replay their regressions' 'clang is not installed'
	test_done
	exit
fi
test_expect_success 'the fuzz targets build (clang, ASan, UBSan)' '
	make -C "$SRC_DIR" -s -j2 fuzz-bins >build.log 2>&1 || { tail -20 build.log; false; }
'
test_expect_success 'seed corpus from the test generator' '
	"$TEST_DIR/fuzz/seeds.sh" "$SRC_DIR/fuzz-build/seeds"
'
for name in mboxrd gunzip mail query config terms; do
	test_expect_success "fuzz-$name: seeds and regressions run clean" '
		set -- "$SRC_DIR/fuzz-build/seeds/$name"/* "$TEST_DIR/fuzz/regressions/$name"/* &&
		for f in "$@"; do [ -f "$f" ] && echo "$f"; done >inputs &&
		[ -s inputs ] &&
		xargs "$SRC_DIR/fuzz-build/fuzz-$name" -runs=1 <inputs >$name.log 2>&1 ||
			{ grep -A20 -E "ERROR|runtime error" $name.log | head -40; false; }
	'
done
test_done

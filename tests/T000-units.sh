#!/usr/bin/env bash
# C-level tests of query/, net/ stream stages and cache/.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'query, stream and cache unit tests' '
	"$SRC_DIR/tests/c/test-units" >units.out 2>&1; rc=$?
	cat units.out; tail -n 1 units.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_expect_success 'cache unit tests: views, entries, sweeps, user state, counters, files' '
	"$SRC_DIR/tests/c/test-cache" >cache.out 2>&1; rc=$?
	cat cache.out; tail -n 1 cache.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_expect_success 'local search unit tests: patch ids (against git), dates, index, archives' '
	"$SRC_DIR/tests/c/test-local" >local.out 2>&1; rc=$?
	cat local.out; tail -n 1 local.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_done

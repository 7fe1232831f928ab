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
test_expect_success 'cache unit tests: sources, settings, an older cache migrated' '
	"$SRC_DIR/tests/c/test-tables" >tables.out 2>&1; rc=$?
	cat tables.out; tail -n 1 tables.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_expect_success 'cache unit tests: IMAP delivery records and their done counters' '
	"$SRC_DIR/tests/c/test-imap" >imap.out 2>&1; rc=$?
	cat imap.out; tail -n 1 imap.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_expect_success 'message inode records: distinct, held, never given twice' '
	"$SRC_DIR/tests/c/test-nodes" >nodes.out 2>&1; rc=$?
	cat nodes.out; tail -n 1 nodes.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
test_expect_success 'local search unit tests: patch ids (against git), dates, index, archives' '
	"$SRC_DIR/tests/c/test-local" >local.out 2>&1; rc=$?
	cat local.out; tail -n 1 local.out | grep -q " 0 failed" && [ $rc -eq 0 ]
'
# query/prefix.c against its authority: every prefix public-inbox's
# Search.pm (and lei's LeiSearch.pm) parses has a row, and no row is
# made up; test-units checks that validator and parser read the rows alike
PI=/usr/share/perl5/PublicInbox
if [ -r "$PI/Search.pm" ] && [ -r "$PI/LeiSearch.pm" ]; then
test_expect_success 'the prefix table has the prefixes of public-inbox and lei, no others' '
	{
		perl -ne "if (/^my %(bool_pfx_external|prob_prefix) = \\(/) { \$in = 1; next }
			\$in = 0 if /^\\);/;
			print \"\$1\\n\" if \$in && /^\\s*(\\w+)\\s*=>/;
			print \"\$1\\n\" if /NVRP->new\\(\\w+, .(\\w+):.\\)/" "$PI/Search.pm" &&
		perl -ne "print \"\$1\\n\" if /add_boolean_prefix\\(.(\\w+)., /" "$PI/LeiSearch.pm"
	} | sort >expected &&
	sed -n "s/^\t[A-Z]*(\"\([a-zA-Z]\{1,\}\)\".*/\1/p; s/^\t{ \"\([a-zA-Z]\{1,\}\)\".*/\1/p" \
		"$SRC_DIR/query/prefix.c" | sort >actual &&
	[ $(wc -l <expected) -ge 30 ] &&
	test_cmp expected actual
'
else
test_skip 'the prefix table has the prefixes of public-inbox and lei' 'no public-inbox in /usr/share/perl5'
fi
test_done

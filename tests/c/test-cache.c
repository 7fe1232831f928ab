/*
 * C-level tests of cache/: views, entries, sweeps, the user's state of
 * messages that leave and return, counters, client files.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cache/cache.h"
#include "cache/cache-private.h"
#include "fs/config.h"
#include "fs/settings.h"
#include "net/net.h"
#include "query/query.h"

static int passed, failed;

#define CHECK(expr) do { \
	if (expr) { passed++; } else { failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); } \
} while (0)


static const char msg1[] =
	"Received: from a\nList-Id: <linux-rtc.vger.kernel.org>\n"
	"From: =?UTF-8?Q?J=C3=BCrgen?= <J@Example.org>\nTo: x@y.org\n"
	"Subject: [PATCH] rtc: fix\nDate: Tue, 01 Jul 2025 10:00:00 +0000\n"
	"Message-ID: <m1@x>\n\nbody\n";
static const char msg1dup[] =
	"Received: from b\nList-Id: <linux-watchdog.vger.kernel.org>\n"
	"From: =?UTF-8?Q?J=C3=BCrgen?= <J@Example.org>\nTo: x@y.org\n"
	"Subject: [PATCH] rtc: fix\nDate: Tue, 01 Jul 2025 10:00:00 +0000\n"
	"Message-ID: <m1@x>\n\nbody\r\n\n";
static const char msg2[] =
	"From: a@b\nSubject: other\nDate: Wed, 02 Jul 2025 10:00:00 +0000\n"
	"Message-ID: <m2@x>\n\nanother body\n";

static int count_cb(void *arg, const struct cache_entry *e)
{
	(void)e;
	++*(int *)arg;
	return 0;
}

static void test_cache(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300];
	unsigned char oid[CACHE_OID_LEN], h1[CACHE_CHASH_LEN], h2[CACHE_CHASH_LEN];
	struct cache_view v, v2;
	struct cache_entry e;
	cache_batch_t *b;
	cache_t *c;
	int64_t date;
	char hex[41], buf[64];
	size_t n;
	int count = 0;

	CHECK(mkdtemp(dir) != NULL);
	cache_mail_init();
	CHECK(cache_mail_info(msg1, sizeof(msg1) - 1, &date, h1) == 0);
	CHECK(date == 1751364000);
	CHECK(cache_mail_info(msg1dup, sizeof(msg1dup) - 1, &date, h2) == 0);
	CHECK(!memcmp(h1, h2, sizeof(h1)));     /* same content, other delivery */
	CHECK(cache_mail_info(msg2, sizeof(msg2) - 1, &date, h2) == 0);
	{
		static const char *const absurd[] = {
			"Date: Mon, 1 Jan 1900 00:00:00 +0000\n\nold\n",
			"Date: Fri, 31 Dec 99999 23:59:59 +0000\n\nfar\n",
			"Date: yesterday-ish\n\nbad\n",
			"Subject: no date, no Message-ID\n\nbody\n",
			"\n\nno headers at all\n",
		};
		size_t i;

		for (i = 0; i < sizeof(absurd) / sizeof(*absurd); i++) {
			date = -1;
			CHECK(cache_mail_info(absurd[i], strlen(absurd[i]), &date, h2) == 0);
			CHECK(date >= 0 && date <= INT64_C(253402300799));
		}
	}
	CHECK(memcmp(h1, h2, sizeof(h1)));

	cache_oid("hello\n", 6, oid);
	cache_oid_hex(oid, hex);
	CHECK(!strcmp(hex, "ce013625030ba8dba906f756967f9e9ca394464a"));

	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "s:rtc", "s:rtc", &v) == 0);
	CHECK(cache_view_create(c, "s:rtc", "s:rtc", NULL) == EEXIST);
	{
		int any = 1;

		CHECK(cache_entry_any(c, v.id, &any) == 0 && any == 0);
	}
	CHECK(cache_batch_new(c, v.id, v.epoch, 1, 1, 1, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add(b, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_add(b, msg1dup, sizeof(msg1dup) - 1) == 0);
	CHECK(cache_batch_add(b, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(b) == 0);
	CHECK(cache_batch_added(b) == 2);       /* the duplicate was deduped */
	CHECK(cache_batch_add(b, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_known(b) == 1);       /* known without a parse */
	cache_batch_free(b);
	CHECK(cache_entry_each(c, v.id, count_cb, &count) == 0 && count == 2);
	{
		int any = 0;

		CHECK(cache_entry_any(c, v.id, &any) == 0 && any == 1);
	}

	cache_oid(msg2, sizeof(msg2) - 1, oid);
	CHECK(cache_entry_get(c, v.id, oid, &e) == 0);
	CHECK(e.where == CACHE_CUR && e.size == sizeof(msg2) - 1);
	CHECK(cache_msg_read(c, oid, 6, 10, buf, &n) == 0 && n == 10 &&
	      !memcmp(buf, msg2 + 6, 10));
	CHECK(cache_msg_read(c, oid, 1000, 10, buf, &n) == 0 && n == 0);
	{
		uint32_t f;
		char s[40];

		CHECK(cache_flags_parse("SRF", &f) == 0);
		cache_flags_format(f, s);
		CHECK(!strcmp(s, "FRS"));
		CHECK(cache_flags_parse("S!", &f) == EINVAL);
		CHECK(cache_entry_update(c, v.id, oid, CACHE_HIDDEN, f, 0) == 0);
	}
	count = 0;
	CHECK(cache_entry_each(c, v.id, count_cb, &count) == 0 && count == 1);
	CHECK(cache_view_set_result(c, "s:rtc", v.id, CACHE_VIEW_FAILED, v.epoch, -1, 5,
				    "HTTP 500", NULL) == 0);
	cache_close(c);

	/* everything is still there after reopening */
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_get(c, "s:rtc", &v2) == 0);
	CHECK(v2.id == v.id && v2.state == CACHE_VIEW_FAILED && !strcmp(v2.error, "HTTP 500"));
	CHECK(cache_entry_get(c, v.id, oid, &e) == 0 && e.where == CACHE_HIDDEN);
	cache_view_release(&v2);
	/* rmdir + mkdir starts fresh under a new id */
	CHECK(cache_view_delete(c, "s:rtc") == 0);
	CHECK(cache_view_get(c, "s:rtc", &v2) == ENOENT);
	CHECK(cache_view_create(c, "s:rtc", "s:rtc", &v2) == 0 && v2.id != v.id);
	count = 0;
	CHECK(cache_entry_each(c, v2.id, count_cb, &count) == 0 && count == 0);
	CHECK(cache_entry_get(c, v.id, oid, &e) == ENOENT);
	cache_view_release(&v2);
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* refs and sweeps: shared messages live while a view holds them */
static void test_sweep(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300], buf[8];
	unsigned char o1[CACHE_OID_LEN], o2[CACHE_OID_LEN];
	struct cache_view a, b, a2;
	struct cache_entry e;
	cache_batch_t *bt;
	uint64_t dropped = 0;
	size_t n;
	cache_t *c;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	cache_oid(msg1, sizeof(msg1) - 1, o1);
	cache_oid(msg2, sizeof(msg2) - 1, o2);
	CHECK(cache_view_create(c, "a", "s:a", &a) == 0);
	CHECK(cache_view_create(c, "b", "s:b", &b) == 0);
	CHECK(cache_batch_new(c, a.id, a.epoch, 1, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(cache_batch_new(c, b.id, b.epoch, 1, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0 && cache_batch_added(bt) == 1);
	cache_batch_free(bt);
	/* a flag on msg1 in view a, then a full search that finds only msg1 */
	CHECK(cache_entry_update(c, a.id, o1, CACHE_CUR, 1u << 4, 0) == 0);
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 2, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0 && cache_batch_added(bt) == 0);
	cache_batch_free(bt);
	CHECK(cache_view_sweep(c, "a", a.id, 2, a.epoch, &dropped, NULL) == 0 && dropped == 1);
	CHECK(cache_entry_get(c, a.id, o2, &e) == ENOENT);
	CHECK(cache_entry_get(c, a.id, o1, &e) == 0 && e.flags == 1u << 4);
	CHECK(cache_view_get(c, "a", &a2) == 0 && a2.gen == 2);
	cache_view_release(&a2);
	/* msg2 was held by view a only: gone from the store */
	CHECK(cache_msg_read(c, o2, 0, 4, buf, &n) == ENOENT);
	/* msg1 is held by both; removing a leaves it for b, removing b frees it */
	CHECK(cache_view_delete(c, "a") == 0);
	CHECK(cache_msg_read(c, o1, 0, 4, buf, &n) == 0 && n == 4);
	CHECK(cache_view_delete(c, "b") == 0);
	CHECK(cache_msg_read(c, o1, 0, 4, buf, &n) == ENOENT);
	/* set_query clears the bookmark */
	CHECK(cache_view_create(c, "q", "s:q", &a2) == 0);
	CHECK(cache_view_set_result(c, "q", a2.id, CACHE_VIEW_FRESH, a2.epoch, 100, 100, "", NULL) == 0);
	CHECK(cache_view_set_query(c, "q", a2.id, "s:other") == 0);
	/* a search that started before the new query must neither restore the
	 * bookmark nor sweep */
	CHECK(cache_view_set_result(c, "q", a2.id, CACHE_VIEW_FRESH, a2.epoch, 200, 200, "", NULL) == 0);
	CHECK(cache_view_sweep(c, "q", a2.id, 9, a2.epoch, &dropped, NULL) == 0 && dropped == 0);
	cache_view_release(&a2);
	CHECK(cache_view_get(c, "q", &a2) == 0 && a2.last_ok == 0 &&
	      !strcmp(a2.query, "s:other"));
	cache_view_release(&a2);
	cache_view_release(&a);
	cache_view_release(&b);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* the user's state of a message that leaves a view comes back with it;
 * nothing is written under a removed or re-searched view; an old cache
 * without id records is given them at open; cache_check sees all that */
static void test_user_state(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300];
	unsigned char o1[CACHE_OID_LEN], o2[CACHE_OID_LEN], key[8];
	struct cache_view a, q;
	struct cache_entry e;
	struct cache_check r;
	cache_batch_t *bt;
	uint64_t dropped = 0, n = 0;
	MDB_txn *txn;
	MDB_val k = { sizeof(key), key };
	cache_t *c;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	cache_oid(msg1, sizeof(msg1) - 1, o1);
	cache_oid(msg2, sizeof(msg2) - 1, o2);
	CHECK(cache_view_create(c, "a", "s:a", &a) == 0);
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	/* read and tagged, then out of the view (a full search without it) */
	CHECK(cache_entry_update(c, a.id, o2, CACHE_CUR, 1u << 4, 7) == 0);
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 2, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(cache_view_sweep(c, "a", a.id, 2, a.epoch, &dropped, NULL) == 0 && dropped == 1);
	CHECK(cache_entry_get(c, a.id, o2, &e) == ENOENT);
	/* back, as the user left it (not in new/, where new mail lands) */
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 2, 0, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0 && cache_batch_added(bt) == 1);
	cache_batch_free(bt);
	CHECK(cache_entry_get(c, a.id, o2, &e) == 0 && e.where == CACHE_CUR &&
	      e.flags == 1u << 4 && e.uid == 7);
	/* hidden from cur/, then brought back there */
	CHECK(cache_entry_update(c, a.id, o2, CACHE_HIDDEN, e.flags, e.uid) == 0);
	CHECK(cache_entry_unhide(c, a.id, o1, &n) == 0 && n == 0);
	CHECK(cache_entry_unhide(c, a.id, NULL, &n) == 0 && n == 1);
	CHECK(cache_entry_get(c, a.id, o2, &e) == 0 && e.where == CACHE_CUR && e.flags == 1u << 4);
	/* a search that began before a new query writes nothing */
	CHECK(cache_view_create(c, "q", "s:q", &q) == 0);
	CHECK(cache_batch_new(c, q.id, q.epoch, 1, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_view_set_query(c, "q", q.id, "s:other") == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == ECANCELED && cache_batch_added(bt) == 0);
	cache_batch_free(bt);
	CHECK(cache_entry_get(c, q.id, o1, &e) == ENOENT);
	/* nor one whose view was removed; nor a client file */
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 3, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_view_delete(c, "a") == 0);
	CHECK(cache_batch_flush(bt) == ECANCELED);
	cache_batch_free(bt);
	CHECK(cache_file_create(c, a.id, ".uidvalidity", 0) == ENOENT);
	CHECK(cache_check(c, NULL, &r) == 0 && !cache_check_problems(&r) &&
	      r.views == 1 && r.messages == 0);
	/* a cache from before id records: view q loses its own, then the
	 * next open gives it back */
	cache_key_id(key, q.id);
	CHECK(mdb_txn_begin(c->env, NULL, 0, &txn) == 0);
	CHECK(mdb_del(txn, c->ids, &k, NULL) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	CHECK(cache_check(c, NULL, &r) == 0 && r.bad_records == 1);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_check(c, NULL, &r) == 0 && !cache_check_problems(&r));
	CHECK(cache_file_create(c, q.id, ".uidvalidity", 0) == 0);
	/* an older leifs removed a view (its id record stays) and made one
	 * (with none): the counts agree, so the open does not walk, and a
	 * write under the new view mends its record */
	CHECK(mdb_txn_begin(c->env, NULL, 0, &txn) == 0);
	CHECK(mdb_del(txn, c->ids, &k, NULL) == 0);
	cache_key_id(key, 999);
	{
		MDB_val d = { 4, "gone" };

		CHECK(mdb_put(txn, c->ids, &k, &d, 0) == 0);
	}
	CHECK(mdb_txn_commit(txn) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_batch_new(c, q.id, q.epoch + 1, 1, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0 && cache_batch_added(bt) == 1);
	cache_batch_free(bt);
	CHECK(cache_check(c, NULL, &r) == 0 && r.orphans == 1 && r.bad_records == 0);
	cache_view_release(&q);
	cache_view_release(&a);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* view id's counters are n, c, h (new, cur, hidden) and agree with a
 * real count (cache_check) */
static int counts_are(cache_t *c, uint64_t id, uint64_t n, uint64_t cu, uint64_t h)
{
	struct cache_counts k;
	struct cache_check r;
	uint64_t vis = 0;

	return !cache_view_counts(c, id, &k) && k.new_ == n && k.cur == cu && k.hidden == h &&
	       !cache_entry_count(c, id, &vis) && vis == n + cu &&
	       !cache_check(c, NULL, &r) && !r.wrong_counts && !cache_check_problems(&r);
}

/* per-view entry counters (what .status shows) follow every change of the
 * entries, in the same transaction; a cache without them gets them at open */
static void test_counts(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300];
	unsigned char o1[CACHE_OID_LEN], o2[CACHE_OID_LEN], key[8];
	struct cache_view a, b;
	struct cache_check r;
	struct cache_counts k;
	cache_batch_t *bt;
	uint64_t dropped = 0, n = 0;
	MDB_txn *txn;
	MDB_val mk = { sizeof(key), key };
	cache_t *c;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	cache_oid(msg1, sizeof(msg1) - 1, o1);
	cache_oid(msg2, sizeof(msg2) - 1, o2);
	CHECK(cache_view_create(c, "a", "s:a", &a) == 0);
	CHECK(cache_view_create(c, "b", "s:b", &b) == 0);
	CHECK(counts_are(c, a.id, 0, 0, 0));
	/* a first fill in cur/, a later one in new/ */
	CHECK(cache_batch_new(c, a.id, a.epoch, 1, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(counts_are(c, a.id, 0, 1, 0));
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 1, 0, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);  /* known */
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(counts_are(c, a.id, 1, 1, 0));
	CHECK(cache_batch_new(c, b.id, b.epoch, 0, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(counts_are(c, b.id, 1, 0, 0) && counts_are(c, a.id, 1, 1, 0));
	/* flags: new/ -> cur/, a flag change in place, hide, unhide */
	CHECK(cache_entry_update(c, a.id, o2, CACHE_CUR, 1u << 4, 0) == 0);
	CHECK(counts_are(c, a.id, 0, 2, 0));
	CHECK(cache_entry_update(c, a.id, o2, CACHE_CUR, 1u << 1, 3) == 0);
	CHECK(counts_are(c, a.id, 0, 2, 0));
	CHECK(cache_entry_update(c, a.id, o1, CACHE_HIDDEN, 0, 0) == 0);
	CHECK(cache_entry_update(c, a.id, o1, CACHE_HIDDEN, 0, 0) == 0);
	CHECK(counts_are(c, a.id, 0, 1, 1));
	CHECK(cache_entry_unhide(c, a.id, NULL, &n) == 0 && n == 1);
	CHECK(counts_are(c, a.id, 0, 2, 0));
	CHECK(cache_entry_update(c, a.id, o1, CACHE_HIDDEN, 0, 0) == 0);
	CHECK(cache_entry_unhide(c, a.id, o1, &n) == 0 && n == 1);
	CHECK(counts_are(c, a.id, 0, 2, 0));
	/* a limit drops the oldest visible one; it comes back as it was */
	{
		struct cache_gone g = { 0 };
		struct cache_entry e;

		/* and says which went, with the name it had */
		CHECK(cache_view_limit(c, a.id, 1, &dropped, &g) == 0 && dropped == 1);
		CHECK(g.n == 1 && !g.missed && cache_entry_get(c, a.id, g.e[0].oid, &e) == ENOENT);
		CHECK(g.n == 1 && g.e[0].where == CACHE_CUR &&
		      (memcmp(g.e[0].oid, o2, CACHE_OID_LEN) ||
		       (g.e[0].flags == 1u << 1 && g.e[0].uid == 3)));
		cache_gone_free(&g);
		CHECK(!g.e && !g.n);
	}
	CHECK(counts_are(c, a.id, 0, 1, 0));
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 1, 0, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_add(bt, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	CHECK(counts_are(c, a.id, 0, 2, 0));
	/* a sweep: a full search that finds msg1 only; a hidden one stays */
	CHECK(cache_entry_update(c, a.id, o1, CACHE_HIDDEN, 0, 0) == 0);
	CHECK(cache_batch_new(c, a.id, a.epoch, 0, 2, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	{
		struct cache_gone g = { 0 };

		/* what went visible is said; the hidden one stays, unsaid */
		CHECK(cache_view_sweep(c, "a", a.id, 2, a.epoch, &dropped, &g) == 0 && dropped == 1);
		CHECK(g.n == 1 && !memcmp(g.e[0].oid, o2, CACHE_OID_LEN));
		cache_gone_free(&g);
	}
	CHECK(counts_are(c, a.id, 0, 0, 1) && counts_are(c, b.id, 1, 0, 0));
	/* a cache from before counters: b loses its record, the check sees
	 * it, the next open counts it again */
	cache_key_id(key, b.id);
	CHECK(mdb_txn_begin(c->env, NULL, 0, &txn) == 0);
	CHECK(mdb_del(txn, c->counts, &mk, NULL) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	CHECK(cache_check(c, NULL, &r) == 0 && r.wrong_counts == 1);
	/* and counters that lie are told */
	cache_key_id(key, a.id);
	{
		struct count_rec bad = { { 5, 0, 1 } };
		MDB_val d = { sizeof(bad), &bad };

		CHECK(mdb_txn_begin(c->env, NULL, 0, &txn) == 0);
		CHECK(mdb_put(txn, c->counts, &mk, &d, 0) == 0);
		CHECK(mdb_txn_commit(txn) == 0);
	}
	CHECK(cache_check(c, NULL, &r) == 0 && r.wrong_counts == 2);
	CHECK(cache_view_counts(c, a.id, &k) == 0 && k.new_ == 5);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_counts(c, b.id, &k) == 0 && k.new_ == 1 && !k.cur && !k.hidden);
	CHECK(cache_check(c, NULL, &r) == 0 && r.wrong_counts == 1);   /* a's lie stays */
	/* the removed view's counters go with it */
	CHECK(cache_view_delete(c, "a") == 0);
	CHECK(cache_view_counts(c, a.id, &k) == ENOENT);
	CHECK(counts_are(c, b.id, 1, 0, 0));
	CHECK(cache_view_delete(c, "b") == 0);
	CHECK(cache_check(c, NULL, &r) == 0 && !cache_check_problems(&r) && r.views == 0);
	cache_view_release(&a);
	cache_view_release(&b);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}


static int count_name(void *arg, const char *name)
{
	(void)name;
	(*(int *)arg)++;
	return 0;
}

static void test_files(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300], *data, name[32];
	struct cache_view a, b;
	cache_t *c;
	size_t len;
	int64_t mtime;
	int i, n = 0;
	static char big[CACHE_FILE_MAX + 1];

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 64 << 20, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "a", "a", &a) == 0);
	CHECK(cache_view_create(c, "b", "b", &b) == 0);
	CHECK(cache_file_stat(c, a.id, ".uidvalidity", &len, &mtime) == ENOENT);
	CHECK(cache_file_write(c, a.id, ".uidvalidity", 0, "x", 1) == ENOENT);
	CHECK(cache_file_create(c, a.id, ".uidvalidity", 1) == 0);
	CHECK(cache_file_create(c, a.id, ".uidvalidity", 1) == EEXIST);
	CHECK(cache_file_create(c, a.id, ".uidvalidity", 0) == 0);
	CHECK(cache_file_stat(c, a.id, ".uidvalidity", &len, &mtime) == 0 && len == 0 && mtime > 0);
	CHECK(cache_file_write(c, a.id, ".uidvalidity", 0, "1700000000\n5\n", 13) == 0);
	CHECK(cache_file_write(c, a.id, ".uidvalidity", 11, "42\n", 3) == 0);
	CHECK(cache_file_read(c, a.id, ".uidvalidity", &data, &len) == 0 && len == 14 &&
	      !memcmp(data, "1700000000\n42\n", 14));
	free(data);
	CHECK(cache_file_write(c, a.id, ".uidvalidity", 16, "z", 1) == 0);   /* a hole */
	CHECK(cache_file_read(c, a.id, ".uidvalidity", &data, &len) == 0 && len == 17 &&
	      data[14] == 0 && data[15] == 0 && data[16] == 'z');
	free(data);
	CHECK(cache_file_truncate(c, a.id, ".uidvalidity", 11) == 0);
	CHECK(cache_file_stat(c, a.id, ".uidvalidity", &len, &mtime) == 0 && len == 11);
	CHECK(cache_file_stat(c, b.id, ".uidvalidity", &len, &mtime) == ENOENT);  /* per view */
	CHECK(cache_file_write(c, a.id, ".uidvalidity", CACHE_FILE_MAX, "x", 1) == EFBIG);
	CHECK(cache_file_write(c, a.id, ".uidvalidity", 0, big, sizeof(big)) == EFBIG);
	CHECK(cache_file_stat(c, a.id, ".uidvalidity", &len, &mtime) == 0 && len == 11);
	CHECK(cache_file_rename(c, a.id, ".uidvalidity", ".state") == 0);
	CHECK(cache_file_stat(c, a.id, ".uidvalidity", &len, &mtime) == ENOENT);
	CHECK(cache_file_read(c, a.id, ".state", &data, &len) == 0 && len == 11 &&
	      !memcmp(data, "1700000000\n", 11));
	free(data);
	for (i = 1; i < CACHE_FILES_MAX; i++) {
		snprintf(name, sizeof(name), ".f%d", i);
		CHECK(cache_file_create(c, a.id, name, 1) == 0);
	}
	CHECK(cache_file_create(c, a.id, ".one-too-many", 1) == ENOSPC);
	CHECK(cache_file_create(c, b.id, ".other-view", 1) == 0);
	CHECK(cache_file_each(c, a.id, count_name, &n) == 0 && n == CACHE_FILES_MAX);
	CHECK(cache_file_remove(c, a.id, ".f1") == 0);
	CHECK(cache_file_remove(c, a.id, ".f1") == ENOENT);
	CHECK(cache_view_delete(c, "a") == 0);
	n = 0;
	CHECK(cache_file_each(c, a.id, count_name, &n) == 0 && n == 0);
	n = 0;
	CHECK(cache_file_each(c, b.id, count_name, &n) == 0 && n == 1);
	cache_view_release(&a);
	cache_view_release(&b);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}


/* dedupe strategies, the limit and per-source bookmarks in the cache */
static void test_view_shape(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300];
	static const char *const msgs[] = { msg1, msg1dup, msg2 };
	struct cache_view v;
	cache_batch_t *b;
	cache_t *c;
	uint64_t dropped;
	int64_t t;
	int count, mode, i;
	static const int want[] = {
		[CACHE_DEDUPE_CONTENT] = 2, [CACHE_DEDUPE_OID] = 3,
		[CACHE_DEDUPE_MID] = 2, [CACHE_DEDUPE_NONE] = 3,
	};

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 64 << 20, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v", "v", &v) == 0);
	for (mode = CACHE_DEDUPE_CONTENT; mode <= CACHE_DEDUPE_NONE; mode++) {
		/* as a .config change does: forget the copies, search in full */
		CHECK(cache_view_clear_dedupe(c, v.id) == 0);
		CHECK(cache_batch_new(c, v.id, v.epoch, 1, (uint32_t)mode + 1, 1, mode, &b) == 0);
		for (i = 0; i < 3; i++)
			CHECK(cache_batch_add(b, msgs[i], strlen(msgs[i])) == 0);
		CHECK(cache_batch_flush(b) == 0);
		cache_batch_free(b);
		CHECK(cache_view_sweep(c, "v", v.id, (uint32_t)mode + 1, v.epoch, &dropped, NULL) == 0);
		count = 0;
		CHECK(cache_entry_each(c, v.id, count_cb, &count) == 0);
		CHECK(count == want[mode]);
	}
	/* a message with no Message-ID is deduped by mid as its blob id */
	CHECK(cache_mail_mid("Subject: x\n\nb\n", 13, (unsigned char[CACHE_CHASH_LEN]){ 0 }) == ENOENT);
	CHECK(cache_view_limit(c, v.id, 1, &dropped, NULL) == 0 && dropped == 2);
	count = 0;
	CHECK(cache_entry_each(c, v.id, count_cb, &count) == 0 && count == 1);
	CHECK(cache_view_limit(c, v.id, 5, &dropped, NULL) == 0 && dropped == 0);
	CHECK(cache_mark_get(c, v.id, "http://a/", &t) == ENOENT);
	CHECK(cache_mark_set(c, "v", v.id, v.epoch, "http://a/", 42) == 0);
	CHECK(cache_mark_get(c, v.id, "http://a/", &t) == 0 && t == 42);
	CHECK(cache_mark_get(c, v.id, "http://b/", &t) == ENOENT);
	/* a reset meanwhile: the bookmark is not moved */
	CHECK(cache_mark_set(c, "v", v.id, v.epoch + 1, "http://b/", 43) == 0);
	CHECK(cache_mark_get(c, v.id, "http://b/", &t) == ENOENT);
	CHECK(cache_marks_clear(c, v.id) == 0);
	CHECK(cache_mark_get(c, v.id, "http://a/", &t) == ENOENT);
	CHECK(cache_mark_set(c, "v", v.id, v.epoch, "http://a/", 44) == 0);
	CHECK(cache_view_delete(c, "v") == 0);
	CHECK(cache_mark_get(c, v.id, "http://a/", &t) == ENOENT);
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* The MIME cap (1,000 parts, as Eml) must not change the content hash of
 * ordinary mail: a message of 600 parts is hashed whole, and a patch's
 * "--- a/file" lines or "-- " are no boundaries (issue #15 review: both
 * were cut near 500 lines); ASCII text with a NUL hashes up to the NUL, as
 * before the in-place digest.  Different text, different hash. */
static char *parts_msg(int nparts, const char *last)
{
	GString *g = g_string_new("From: a@example.org\nSubject: parts\nMIME-Version: 1.0\n"
				  "Content-Type: multipart/mixed; boundary=\"b0\"\n\n");
	int i;

	for (i = 0; i < nparts; i++)
		g_string_append_printf(g, "--b0\nContent-Type: text/plain\n\n%s %d\n",
				       i == nparts - 1 ? last : "part", i);
	g_string_append(g, "--b0--\n");
	return g_string_free(g, FALSE);
}

static char *patch_msg(int files, const char *sig)
{
	GString *g = g_string_new("From: a@example.org\nSubject: [PATCH] treewide\n\n");
	int i;

	for (i = 0; i < files; i++)
		g_string_append_printf(g, "diff --git a/f%d b/f%d\n--- a/f%d\n+++ b/f%d\n@@ -1 +1 @@\n-- old\n+new\n",
				       i, i, i, i);
	g_string_append_printf(g, "-- \n%s\n", sig);
	return g_string_free(g, FALSE);
}

static void test_hash_caps(void)
{
	unsigned char h1[CACHE_CHASH_LEN], h2[CACHE_CHASH_LEN];
	int64_t date;
	char *a, *b;
	static const char nul1[] = "From: a@example.org\nSubject: nul\n\nabc\0def\n";
	static const char nul2[] = "From: a@example.org\nSubject: nul\n\nabc\0xyz\n";

	a = parts_msg(600, "AAA");
	b = parts_msg(600, "BBB");
	CHECK(!cache_mail_info(a, strlen(a), &date, h1) && !cache_mail_info(b, strlen(b), &date, h2));
	CHECK(memcmp(h1, h2, sizeof(h1)) != 0);
	g_free(a);
	g_free(b);
	a = patch_msg(2000, "sigA");
	b = patch_msg(2000, "sigB");
	CHECK(!cache_mail_info(a, strlen(a), &date, h1) && !cache_mail_info(b, strlen(b), &date, h2));
	CHECK(memcmp(h1, h2, sizeof(h1)) != 0);
	g_free(a);
	g_free(b);
	CHECK(!cache_mail_info(nul1, sizeof(nul1) - 1, &date, h1) &&
	      !cache_mail_info(nul2, sizeof(nul2) - 1, &date, h2));
	CHECK(memcmp(h1, h2, sizeof(h1)) == 0);
}

static int stop_with(void *arg, const char *name)
{
	(void)name;
	return *(int *)arg;
}

/* A damaged entry record (a value of the wrong size) stops every walk of
 * the view's entries with EIO, and a callback's own errno comes back as
 * it was: the walks' stops carry no error of their own. */
static void test_damaged_record(void)
{
	char dir[] = "/tmp/leifs-test-XXXXXX", why[256], cmd[300];
	unsigned char oid[CACHE_OID_LEN], key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key }, d = { 3, "bad" };
	struct cache_view v;
	cache_batch_t *bt;
	uint64_t n = 0;
	MDB_txn *txn;
	cache_t *c;
	int stop = EINTR;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v", "s:v", &v) == 0);
	CHECK(cache_file_create(c, v.id, ".f", 0) == 0);
	CHECK(cache_file_each(c, v.id, stop_with, &stop) == EINTR);
	CHECK(cache_batch_new(c, v.id, v.epoch, 0, 1, 1, CACHE_DEDUPE_CONTENT, &bt) == 0);
	CHECK(cache_batch_add(bt, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_flush(bt) == 0);
	cache_batch_free(bt);
	cache_oid(msg1, sizeof(msg1) - 1, oid);
	cache_key_id(key, v.id);
	memcpy(key + 8, oid, CACHE_OID_LEN);
	CHECK(mdb_txn_begin(c->env, NULL, 0, &txn) == 0);
	CHECK(mdb_put(txn, c->entry, &k, &d, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	CHECK(cache_entry_unhide(c, v.id, NULL, &n) == EIO);   /* was ENOMEM */
	CHECK(cache_view_stale(c, v.id, 2, &n) == EIO);
	CHECK(cache_view_limit(c, v.id, 0, &n, NULL) == EIO);
	CHECK(cache_view_sweep(c, "v", v.id, 2, v.epoch, &n, NULL) == EIO);
	CHECK(cache_view_delete(c, "v") == EIO);
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	cache_mail_init();
	test_cache();
	test_sweep();
	test_user_state();
	test_counts();
	test_files();
	test_view_shape();
	test_hash_caps();
	test_damaged_record();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

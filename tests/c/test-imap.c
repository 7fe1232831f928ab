/*
 * C-level tests of the IMAP delivery tables (cache/imap.c): what was
 * delivered to a view's folders, a new UIDVALIDITY starting over, and the
 * done counters .status reads: kept in the marking transaction, and
 * counted again, once, after an older leifs, a crash or a compaction.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache-private.h"
#include "tests/c/raw-lmdb.h"

static int passed, failed;

#define CHECK(expr) do { \
	if (expr) { passed++; } else { failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); } \
} while (0)

/* the IMAP delivery tables (imap.c): states, counts, a new UIDVALIDITY,
 * another folder and another view apart, all gone with the view */
static void test_imap(void)
{
	char dir[] = "/tmp/leifs-imap-XXXXXX", why[512];
	const char *f1 = "imap://u@h/A", *f2 = "imap://u@h/AB";
	unsigned char oids[3 * CACHE_OID_LEN], st[3];
	struct cache_view v, w;
	uint64_t n;
	cache_t *c;
	int changed = -1, i;

	for (i = 0; i < 3; i++)
		memset(oids + i * CACHE_OID_LEN, 'a' + i, CACHE_OID_LEN);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v", "q", &v) == 0);
	CHECK(cache_view_create(c, "w", "q", &w) == 0);
	CHECK(cache_imap_folder(c, v.id, f1, 7, 0, &changed) == 0 && changed == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 2, CACHE_IMAP_PENDING) == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_mark(c, v.id, f2, oids + 2 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_mark(c, w.id, f1, oids + 2 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_states(c, v.id, f1, oids, 3, st) == 0 &&
	      st[0] == CACHE_IMAP_DONE && st[1] == CACHE_IMAP_PENDING && st[2] == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 1);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 1);
	/* the same UIDVALIDITY keeps them; another drops f1's only */
	CHECK(cache_imap_folder(c, v.id, f1, 7, 0, &changed) == 0 && changed == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 1);
	CHECK(cache_imap_folder(c, v.id, f1, 8, 0, &changed) == 0 && changed == 1);
	CHECK(cache_imap_states(c, v.id, f1, oids, 3, st) == 0 && !st[0] && !st[1] && !st[2]);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 1);
	CHECK(cache_imap_count(c, w.id, f1, &n) == 0 && n == 1);
	/* a folder made anew with the same UIDVALIDITY starts over too */
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_folder(c, v.id, f1, 8, 1, &changed) == 0 && changed == 1);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	/* gone with the view, and nothing written under a removed one */
	CHECK(cache_view_delete(c, "v") == 0);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_DONE) == ENOENT);
	CHECK(cache_imap_count(c, w.id, f1, &n) == 0 && n == 1);
	cache_view_release(&v);
	cache_view_release(&w);
	cache_close(c);
}

/* the counter record of folder url of view id, read as it is (-1: none,
 * -2: another generation or size) */
static int64_t raw_counter(cache_t *c, uint64_t id, const char *url)
{
	unsigned char key[8 + 64];
	size_t ul = strlen(url) + 1;
	MDB_val k = { 8 + ul, key }, d;
	struct imapcount_rec r;
	MDB_txn *txn;
	int64_t n = -1;

	if (ul > 64 || mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn))
		return -3;
	cache_key_id(key, id);
	memcpy(key + 8, url, ul);
	if (!mdb_get(txn, c->imapcount, &k, &d)) {
		n = -2;
		if (d.mv_size == sizeof(r)) {
			memcpy(&r, d.mv_data, sizeof(r));
			if (r.gen == c->imap_gen)
				n = (int64_t)r.done;
		}
	}
	mdb_txn_abort(txn);
	return n;
}

/* set (done >= 0) or delete (done < 0) that record, through the cache's
 * own environment; `size` other than the record's writes one that long */
static int set_counter(cache_t *c, uint64_t id, const char *url, int64_t done, size_t size)
{
	unsigned char key[8 + 64], val[64] = { 0 };
	size_t ul = strlen(url) + 1;
	struct imapcount_rec r = { .done = (uint64_t)done, .gen = c->imap_gen };
	MDB_val k = { 8 + ul, key }, d = { size, val };
	MDB_txn *txn;
	int rc;

	if (ul > 64 || size > sizeof(val) || (rc = mdb_txn_begin(c->env, NULL, 0, &txn)))
		return -1;
	cache_key_id(key, id);
	memcpy(key + 8, url, ul);
	memcpy(val, &r, sizeof(r) < size ? sizeof(r) : size);
	rc = done < 0 ? mdb_del(txn, c->imapcount, &k, NULL) : mdb_put(txn, c->imapcount, &k, &d, 0);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* what an older leifs (no counter) does to folder url of view id, with
 * the cache closed: n oids marked `state`, as its cache_imap_mark */
static int older_mark(const char *dir, uint64_t id, const char *url,
		      const unsigned char *oids, size_t n, unsigned char state)
{
	unsigned char key[8 + 64 + CACHE_OID_LEN];
	size_t ul = strlen(url) + 1, i;
	MDB_val k = { 8 + ul + CACHE_OID_LEN, key }, d = { 1, &state };
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc = 0;

	if (ul > 64 || raw_open(dir, "imap", &env, &txn, &dbi))
		return -1;
	cache_key_id(key, id);
	memcpy(key + 8, url, ul);
	for (i = 0; i < n && !rc; i++) {
		memcpy(key + 8 + ul, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		rc = mdb_put(txn, dbi, &k, &d, 0);
	}
	rc = rc ? (mdb_txn_abort(txn), rc) : mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
}

/* the done counter of each folder: exact after every change, read without
 * a walk; a folder without one (an older cache) or written by an older
 * leifs since the last close is counted once by a walk */
static void test_imap_counts(void)
{
	char dir[] = "/tmp/leifs-imapcount-XXXXXX", why[512];
	const char *f1 = "imap://u@h/A", *f2 = "imap://u@h/AB";
	unsigned char oids[6 * CACHE_OID_LEN], dup[2 * CACHE_OID_LEN], st[6];
	struct cache_view v, w;
	uint64_t n = 99, gen;
	cache_t *c;
	int changed = -1, i;

	for (i = 0; i < 6; i++)
		memset(oids + i * CACHE_OID_LEN, 'a' + i, CACHE_OID_LEN);
	memset(dup, 'z', sizeof(dup));          /* one oid twice */
	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v", "q", &v) == 0);
	CHECK(cache_view_create(c, "w", "q", &w) == 0);
	/* a first folder: counted from 0, in its record */
	CHECK(cache_imap_folder(c, v.id, f1, 7, 1, &changed) == 0 && changed == 0);
	CHECK(raw_counter(c, v.id, f1) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	/* pending counts nothing; pending -> done one each; done twice once */
	CHECK(cache_imap_mark(c, v.id, f1, oids, 4, CACHE_IMAP_PENDING) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 2, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 2);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 2, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 2);
	CHECK(cache_imap_mark(c, v.id, f1, oids + CACHE_OID_LEN, 3, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 4);
	/* never recorded -> done; the same oid twice in one call counts once */
	CHECK(cache_imap_mark(c, v.id, f1, oids + 4 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_mark(c, v.id, f1, dup, 2, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 6);
	/* done -> pending stops counting (and pending again changes nothing) */
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_PENDING) == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_PENDING) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 5);
	CHECK(raw_counter(c, v.id, f1) == 5);
	CHECK(cache_imap_states(c, v.id, f1, oids, 6, st) == 0 && st[0] == CACHE_IMAP_PENDING &&
	      st[1] == CACHE_IMAP_DONE && st[4] == CACHE_IMAP_DONE && st[5] == 0);
	/* other folders and views apart: f1 is a prefix of f2's URL */
	CHECK(cache_imap_mark(c, v.id, f2, oids, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_mark(c, w.id, f1, oids, 3, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 1);
	CHECK(cache_imap_count(c, w.id, f1, &n) == 0 && n == 3);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 5);
	/* the count is the record's, not a walk's */
	CHECK(set_counter(c, v.id, f1, 42, sizeof(struct imapcount_rec)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 42);
	CHECK(set_counter(c, v.id, f1, 5, sizeof(struct imapcount_rec)) == 0);
	/* the same UIDVALIDITY keeps the count; a new one starts at 0 */
	CHECK(cache_imap_folder(c, v.id, f1, 7, 0, &changed) == 0 && changed == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 5);
	CHECK(cache_imap_folder(c, v.id, f1, 8, 0, &changed) == 0 && changed == 1);
	CHECK(raw_counter(c, v.id, f1) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 1);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 2, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 2);
	/* made anew with the same UIDVALIDITY: 0 too */
	CHECK(cache_imap_folder(c, v.id, f1, 8, 1, &changed) == 0 && changed == 1);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 3, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 3);
	/* a folder of an older cache (no counter): counted once by a walk,
	 * which stores it, and marks keep it from then on */
	CHECK(set_counter(c, v.id, f1, -1, 0) == 0);
	CHECK(raw_counter(c, v.id, f1) == -1);
	CHECK(cache_imap_mark(c, v.id, f1, oids + 3 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(raw_counter(c, v.id, f1) == -1);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 4);
	CHECK(raw_counter(c, v.id, f1) == 4);
	CHECK(cache_imap_mark(c, v.id, f1, oids + 4 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 5);
	/* a record of another size (not this leifs's): counted again */
	CHECK(set_counter(c, v.id, f1, 42, 4) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 5);
	CHECK(raw_counter(c, v.id, f1) == 5);
	/* closed and opened again with nothing between (a mount that wrote
	 * nothing between too): still trusted, the 42 planted is what is
	 * read, so no walk was made */
	gen = c->imap_gen;
	CHECK(set_counter(c, v.id, f1, 42, sizeof(struct imapcount_rec)) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 42);
	CHECK(c->imap_gen == gen);
	CHECK(set_counter(c, v.id, f1, 5, sizeof(struct imapcount_rec)) == 0);
	cache_close(c);
	/* an older leifs run on it: pending -> done, new ones done, done ->
	 * pending, with no counter; the next open counts again */
	CHECK(older_mark(dir, v.id, f1, oids + 5 * CACHE_OID_LEN, 1, CACHE_IMAP_PENDING) == 0);
	CHECK(older_mark(dir, v.id, f1, oids + 5 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(older_mark(dir, v.id, f1, dup, 1, CACHE_IMAP_DONE) == 0);
	CHECK(older_mark(dir, v.id, f1, oids, 1, CACHE_IMAP_PENDING) == 0);
	CHECK(older_mark(dir, w.id, f1, oids + 3 * CACHE_OID_LEN, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 6);
	CHECK(c->imap_gen != gen && c->imap_gen != UINT64_MAX);
	CHECK(raw_counter(c, v.id, f1) == 6);
	CHECK(cache_imap_count(c, w.id, f1, &n) == 0 && n == 4);
	CHECK(cache_imap_count(c, v.id, f2, &n) == 0 && n == 1);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 7);
	/* a mount that wrote other things only, its counters unsettled
	 * (nothing of IMAP read): the next open counts again, rightly */
	gen = c->imap_gen;
	CHECK(set_counter(c, v.id, f1, 42, sizeof(struct imapcount_rec)) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_settings_put(c, w.id, "refresh = 60\n", 13) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 7);
	CHECK(c->imap_gen != gen && c->imap_gen != UINT64_MAX);
	/* gone with the view: its counters too, none made again after */
	CHECK(cache_view_delete(c, "v") == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 0);
	CHECK(raw_counter(c, v.id, f1) == -1 && raw_counter(c, v.id, f2) == -1);
	CHECK(cache_imap_count(c, w.id, f1, &n) == 0 && n == 4);
	cache_view_release(&v);
	cache_view_release(&w);
	cache_close(c);
}

/* the cache compacted between two mounts (mdb_copy -c, LMDB's own tool for
 * shrinking a cache): the copy's transaction ids start again at 1, so the
 * counters' generation must not be judged by them alone.  Here an older
 * leifs had marked two of three done messages pending before the copy:
 * the counter of 3 is stale, and the next open must walk (1 done). */
static void test_imap_counts_compacted(void)
{
	char dir[] = "/tmp/leifs-imapcompact-XXXXXX", why[512], from[4200], to[4200],
	     cmd[17000];
	const char *f1 = "imap://u@h/A";
	unsigned char oids[3 * CACHE_OID_LEN];
	struct cache_view v;
	uint64_t n = 99, gen1, gen2;
	MDB_env *env;
	cache_t *c;
	int changed = -1, i;

	for (i = 0; i < 3; i++)
		memset(oids + i * CACHE_OID_LEN, 'a' + i, CACHE_OID_LEN);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v", "q", &v) == 0);
	/* some history, so that transaction ids are well past 1 */
	for (i = 0; i < 20; i++)
		CHECK(cache_settings_put(c, v.id, "refresh = 60\n", 13) == 0);
	CHECK(cache_imap_folder(c, v.id, f1, 7, 1, &changed) == 0);
	CHECK(cache_imap_mark(c, v.id, f1, oids, 3, CACHE_IMAP_DONE) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 3);
	gen1 = c->imap_gen;
	cache_close(c);
	/* an older leifs between two mounts: the next one starts a new
	 * generation and counts again */
	CHECK(older_mark(dir, v.id, f1, oids, 1, CACHE_IMAP_DONE) == 0);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 3);
	gen2 = c->imap_gen;
	CHECK(gen2 != gen1 && gen2 != UINT64_MAX);
	cache_close(c);
	/* then it marks two of them pending, and the cache is compacted */
	CHECK(older_mark(dir, v.id, f1, oids, 2, CACHE_IMAP_PENDING) == 0);
	/* mdb_copy -c DIR/lmdb DIR/lmdb2, then the copy in place */
	snprintf(from, sizeof(from), "%s/lmdb", dir);
	snprintf(to, sizeof(to), "%s/lmdb2", dir);
	snprintf(cmd, sizeof(cmd), "mkdir %s", to);
	CHECK(system(cmd) == 0);
	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 24);
	CHECK(mdb_env_open(env, from, MDB_RDONLY, 0600) == 0);
	CHECK(mdb_env_copy2(env, to, MDB_CP_COMPACT) == 0);
	mdb_env_close(env);
	snprintf(cmd, sizeof(cmd), "mv %s/data.mdb %s/data.mdb && rm -rf %s %s/lock.mdb", to,
		 from, to, from);
	CHECK(system(cmd) == 0);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 1);
	if (n != 1)
		fprintf(stderr, "compacted: %llu done counted, 1 is\n", (unsigned long long)n);
	/* a generation of its own, none an old counter holds */
	CHECK(c->imap_gen != gen1 && c->imap_gen != gen2 && c->imap_gen != UINT64_MAX);
	/* and after its clean close, trusted again with no walk (the 42
	 * planted is read) */
	CHECK(set_counter(c, v.id, f1, 42, sizeof(struct imapcount_rec)) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_imap_count(c, v.id, f1, &n) == 0 && n == 42);
	cache_close(c);
	cache_view_release(&v);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	cache_mail_init();
	test_imap();
	test_imap_counts();
	test_imap_counts_compacted();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

/*
 * C-level tests of the sources and settings tables (cache/sources.c,
 * settings.c) and of the migration of an older cache into them
 * (migrate.c).  The IMAP tables are test-imap.c's; the rest of the cache
 * test-cache.c's.
 *
 *   test-tables                  run the tests
 *   test-tables downgrade DIR    rewrite the cache in DIR (not in use) in
 *                                the layout before these tables, as an
 *                                older leifs left it: each source as a
 *                                view "\001source SPEC" with a client file
 *                                "position", each view's settings as a
 *                                client file ".config", and neither table
 *                                there.  The mount tests
 *                                open such a cache (T600-local.sh).
 *   test-tables older-writes DIR what an older leifs run on a cache of
 *                                today writes: each archive's view anew,
 *                                each view's .config (plus a line "refresh
 *                                = 4321") as a client file (T600-local.sh).
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

static const char msg1[] =
	"From: a@b\nSubject: one\nDate: Tue, 01 Jul 2025 10:00:00 +0000\n"
	"Message-ID: <t1@x>\n\nfirst body\n";
static const char msg2[] =
	"From: a@b\nSubject: two\nDate: Wed, 02 Jul 2025 10:00:00 +0000\n"
	"Message-ID: <t2@x>\n\nsecond body\n";

/* ---- the old layout, written as an older leifs wrote it ---- */

static int put_old_file(cache_t *c, MDB_txn *txn, uint64_t id, const char *name,
			int64_t mtime, const char *data, size_t len)
{
	struct file_rec fr = { .mtime = mtime };
	unsigned char key[8 + 256];
	MDB_val k, d = { sizeof(fr) + len, NULL };
	int rc;

	if ((rc = cache_key_name(key, sizeof(key), &k, id, name)) ||
	    (rc = mdb_put(txn, c->files, &k, &d, MDB_RESERVE)))
		return rc;
	memcpy(d.mv_data, &fr, sizeof(fr));
	memcpy((char *)d.mv_data + sizeof(fr), data, len);
	return 0;
}

struct old_src {
	char *spec, *pos;
	uint64_t id;
	int64_t created;
};

static int collect_src(void *arg, const struct cache_source *s)
{
	struct old_src **p = arg;

	(*p)->spec = strdup(s->spec);
	(*p)->pos = strdup(s->position);
	(*p)->id = s->id;
	(*p)->created = s->created;
	(*p)++;
	return 0;
}

/* every source a fake view, every settings record a ".config" file, in
 * one transaction */
static int downgrade(cache_t *c)
{
	struct old_src srcs[64] = { { 0 } }, *p = srcs;
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val k, d;
	size_t i, n;
	int rc;

	if ((rc = cache_source_each(c, collect_src, &p)))
		return rc;
	n = (size_t)(p - srcs);
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn)))
		return rc;
	for (i = 0; !rc && i < n; i++) {
		struct cache_view v = { .id = srcs[i].id, .query = srcs[i].spec, .error = "",
					.created = srcs[i].created };
		struct count_rec cr;
		MDB_val sk = { strlen(srcs[i].spec), srcs[i].spec };

		if (asprintf(&v.name, "\001source %s", srcs[i].spec) < 0)
			return ENOMEM;
		if (!(rc = cache_view_put(txn, c, &v, MDB_NOOVERWRITE)) &&
		    !(rc = cache_id_put(c, txn, v.id, v.name)) &&
		    !(rc = cache_count_walk(c, txn, v.id, &cr)) &&
		    !(rc = cache_count_put(c, txn, v.id, &cr)) &&
		    !(rc = mdb_del(txn, c->sources, &sk, NULL)) && srcs[i].pos[0])
			rc = put_old_file(c, txn, v.id, "position", srcs[i].created,
					  srcs[i].pos, strlen(srcs[i].pos));
		free(v.name);
	}
	for (i = 0; i < n; i++) {
		free(srcs[i].spec);
		free(srcs[i].pos);
	}
	if (!rc && !(rc = cache_cursor_open(txn, c->settings, &cur))) {
		while (!(rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST))) {
			const unsigned char *kp = k.mv_data;
			struct settings_rec sr;
			uint64_t id = 0;
			char *text;
			size_t len = d.mv_size - sizeof(sr);
			int j;

			for (j = 0; j < 8; j++)
				id = id << 8 | kp[j];
			memcpy(&sr, d.mv_data, sizeof(sr));
			if (!(text = malloc(len + 1))) {
				rc = ENOMEM;
				break;
			}
			memcpy(text, (char *)d.mv_data + sizeof(sr), len);
			rc = mdb_cursor_del(cur, 0);
			if (!rc)
				rc = put_old_file(c, txn, id, ".config", sr.mtime, text, len);
			free(text);
			if (rc)
				break;
		}
		cache_cursor_close(cur);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	/* and the tables go: their absence is what marks an older cache */
	if (!rc && !(rc = mdb_drop(txn, c->sources, 1)))
		rc = mdb_drop(txn, c->settings, 1);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* ---- the tests ---- */

static int count_view(void *arg, const struct cache_view *v)
{
	(void)v;
	++*(int *)arg;
	return 0;
}

static int count_entry(void *arg, const struct cache_entry *e)
{
	(void)e;
	++*(int *)arg;
	return 0;
}

static int check_clean(cache_t *c)
{
	struct cache_check r;

	return !cache_check(c, stderr, &r) && !cache_check_problems(&r);
}

static void test_tables(void)
{
	char dir[] = "/tmp/leifs-tables-XXXXXX", why[512], cmd[300], *text;
	unsigned char oid1[CACHE_OID_LEN], oid2[CACHE_OID_LEN];
	struct cache_source s, s2;
	struct cache_view v;
	struct cache_entry e;
	cache_batch_t *b;
	cache_t *c;
	size_t len;
	int64_t mtime;
	uint32_t flags = 0;
	int n;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	cache_oid(msg1, sizeof(msg1) - 1, oid1);
	cache_oid(msg2, sizeof(msg2) - 1, oid2);

	/* a source: made once, its id no view's, its position kept */
	CHECK(cache_source_get(c, "/srv/a.git", &s) == ENOENT);
	CHECK(cache_source_add(c, "", &s) == ENAMETOOLONG);
	CHECK(cache_view_create(c, "v", "q", &v) == 0);
	CHECK(cache_source_add(c, "/srv/a.git", &s) == 0);
	CHECK(s.id != v.id && !strcmp(s.position, ""));
	CHECK(cache_source_add(c, "/srv/a.git", &s2) == 0 && s2.id == s.id);
	cache_source_release(&s2);
	CHECK(cache_source_set_position(c, "/srv/a.git", s.id, "epoch 0 at abc") == 0);
	CHECK(cache_source_set_position(c, "/srv/a.git", s.id + 99, "x") == ENOENT);
	CHECK(cache_source_get(c, "/srv/a.git", &s2) == 0 &&
	      !strcmp(s2.position, "epoch 0 at abc"));
	cache_source_release(&s2);

	/* its batch holds messages; a view that takes one too shares it */
	CHECK(cache_batch_new_source(c, &s, &b) == 0);
	CHECK(cache_batch_add(b, msg1, sizeof(msg1) - 1) == 0);
	CHECK(cache_batch_add(b, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_batch_new(c, v.id, v.epoch, 0, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add_stored(b, oid1) == 0);
	CHECK(cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_flags_parse("FS", &flags) == 0);
	CHECK(cache_entry_update(c, v.id, oid1, CACHE_CUR, flags, 0) == 0);
	n = 0;
	CHECK(cache_view_each(c, count_view, &n) == 0 && n == 1);   /* no source among them */
	CHECK(check_clean(c));

	/* settings: stored, read, gone with the view */
	CHECK(cache_settings_get(c, v.id, &text, &len, &mtime) == ENOENT);
	CHECK(cache_settings_put(c, v.id, "limit = 5\n", 10) == 0);
	CHECK(cache_settings_get(c, v.id, &text, &len, &mtime) == 0 && len == 10 &&
	      !strcmp(text, "limit = 5\n") && mtime > 0);
	free(text);
	CHECK(cache_settings_put(c, v.id + 999, "x", 1) == ENOENT);   /* no such view */
	CHECK(check_clean(c));

	/* the old layout, migrated at the next open: nothing lost */
	CHECK(downgrade(c) == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	n = 0;
	CHECK(cache_view_each(c, count_view, &n) == 0 && n == 1);
	CHECK(cache_source_get(c, "/srv/a.git", &s2) == 0 && s2.id == s.id &&
	      !strcmp(s2.position, "epoch 0 at abc"));
	cache_source_release(&s2);
	CHECK(cache_settings_get(c, v.id, &text, &len, NULL) == 0 && !strcmp(text, "limit = 5\n"));
	free(text);
	CHECK(cache_file_stat(c, v.id, ".config", &len, &mtime) == ENOENT);
	CHECK(cache_entry_get(c, v.id, oid1, &e) == 0 && e.where == CACHE_CUR && e.flags == flags);
	n = 0;
	CHECK(cache_entry_each(c, s.id, count_entry, &n) == 0 && n == 2);
	CHECK(check_clean(c));

	/* a source removed: its messages no view holds go; the view keeps its own */
	CHECK(cache_source_remove(c, "/srv/a.git") == 0);
	CHECK(cache_source_remove(c, "/srv/a.git") == ENOENT);
	CHECK(cache_msg_size(c, oid1, &len) == 0);
	CHECK(cache_msg_size(c, oid2, &len) == ENOENT);
	/* a batch of a removed source writes nothing */
	CHECK(cache_batch_new_source(c, &s, &b) == 0);
	CHECK(cache_batch_add(b, msg2, sizeof(msg2) - 1) == 0);
	CHECK(cache_batch_flush(b) == ECANCELED);
	cache_batch_free(b);
	CHECK(cache_view_delete(c, "v") == 0);
	CHECK(cache_settings_get(c, v.id, NULL, &len, NULL) == ENOENT);
	CHECK(check_clean(c));
	cache_source_release(&s);
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* an old record too short to read is left where it is, out of sight; the
 * rest of the migration goes through (an older leifs lost only it too) */
static void test_migration_bad_record(void)
{
	char dir[] = "/tmp/leifs-tables-XXXXXX", why[512], cmd[300], *text = NULL;
	static const char bad[] = "\001source /srv/bad.git";
	struct cache_view v, w;
	struct cache_check r;
	MDB_val k = { sizeof(bad) - 1, (void *)bad }, d = { 3, "xyz" };
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	cache_t *c;
	size_t len;
	int n = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "w", "q", &v) == 0);
	CHECK(cache_settings_put(c, v.id, "refresh = 60\n", 13) == 0);
	CHECK(downgrade(c) == 0);
	cache_close(c);
	CHECK(raw_open(dir, "view", &env, &txn, &dbi) == 0);
	CHECK(mdb_put(txn, dbi, &k, &d, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_settings_get(c, v.id, &text, &len, NULL) == 0 && text &&
	      !strcmp(text, "refresh = 60\n"));
	free(text);
	/* no view, no listing, and --check names it */
	CHECK(cache_view_get(c, bad, &w) == ENOENT);
	CHECK(cache_view_each(c, count_view, &n) == 0 && n == 1);
	CHECK(cache_check(c, NULL, &r) == 0 && r.bad_records == 1);
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* an old archive view as an older leifs writes it, under a new id */
static int put_old_archive(cache_t *c, const char *spec, const char *pos, uint64_t *id)
{
	struct cache_view v = { .query = (char *)spec, .error = "", .created = 1 };
	struct count_rec cr;
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn)))
		return rc;
	if (asprintf(&v.name, "\001source %s", spec) < 0) {
		mdb_txn_abort(txn);
		return ENOMEM;
	}
	if (!(rc = cache_next_id(c, txn, &v.id)) &&
	    !(rc = cache_view_put(txn, c, &v, MDB_NOOVERWRITE)) &&
	    !(rc = cache_id_put(c, txn, v.id, v.name)) &&
	    !(rc = cache_count_walk(c, txn, v.id, &cr)) &&
	    !(rc = cache_count_put(c, txn, v.id, &cr)))
		rc = put_old_file(c, txn, v.id, "position", 2, pos, strlen(pos));
	free(v.name);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	*id = v.id;
	return mdb_txn_commit(txn);
}

static int put_old_config(cache_t *c, uint64_t id, const char *text)
{
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn)))
		return rc;
	if ((rc = put_old_file(c, txn, id, ".config", 3, text, strlen(text)))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* an older leifs run on the cache after the upgrade: what it wrote again
 * (an archive's view, a .config file) is taken, the newer winning */
static void test_older_leifs_after_upgrade(void)
{
	char dir[] = "/tmp/leifs-tables-XXXXXX", why[512], cmd[300], *text = NULL;
	struct cache_source s;
	struct cache_view v, w;
	uint64_t old_id = 0;
	cache_t *c;
	size_t len;
	int n = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "w", "q", &v) == 0);
	CHECK(cache_settings_put(c, v.id, "refresh = 60\n", 13) == 0);
	CHECK(cache_source_add(c, "/srv/a.git", &s) == 0);
	CHECK(cache_source_set_position(c, "/srv/a.git", s.id, "p1") == 0);
	cache_source_release(&s);
	/* the older leifs: its own archive view anew, its own .config */
	CHECK(put_old_archive(c, "/srv/a.git", "p2", &old_id) == 0);
	CHECK(put_old_config(c, v.id, "refresh = 9999\n") == 0);
	cache_close(c);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_source_get(c, "/srv/a.git", &s) == 0 && s.id == old_id &&
	      !strcmp(s.position, "p2"));
	cache_source_release(&s);
	CHECK(cache_view_each(c, count_view, &n) == 0 && n == 1);
	CHECK(cache_view_get(c, "\001source /srv/a.git", &w) == ENOENT);
	CHECK(cache_settings_get(c, v.id, &text, &len, NULL) == 0 && text &&
	      !strcmp(text, "refresh = 9999\n"));
	free(text);
	text = NULL;
	/* taken once: a later write of this leifs wins from then on */
	CHECK(cache_settings_put(c, v.id, "refresh = 5\n", 12) == 0);
	CHECK(cache_settings_get(c, v.id, &text, &len, NULL) == 0 && text &&
	      !strcmp(text, "refresh = 5\n"));
	free(text);
	CHECK(check_clean(c));
	cache_view_release(&v);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* the longest spec an old view name held (511 - "\001source ") moves; and
 * --check reads an older cache as it is, writing nothing */
static void test_long_spec_and_check(void)
{
	char dir[] = "/tmp/leifs-tables-XXXXXX", why[512], cmd[300], spec[504];
	struct cache_source s;
	struct cache_check r;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	cache_t *c;

	memset(spec, 'a', sizeof(spec) - 1);
	spec[0] = '/';
	spec[sizeof(spec) - 1] = '\0';
	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_source_add(c, spec, &s) == 0);
	CHECK(cache_source_set_position(c, spec, s.id, "p") == 0);
	cache_source_release(&s);
	CHECK(downgrade(c) == 0);
	cache_close(c);
	CHECK(cache_open_check(dir, &c, why, sizeof(why)) == 0);
	CHECK(cache_check(c, NULL, &r) == 0 && !cache_check_problems(&r) && r.views == 1);
	cache_close(c);
	CHECK(raw_open(dir, "sources", &env, &txn, &dbi) == -1);       /* still older */
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_source_get(c, spec, &s) == 0 && !strcmp(s.position, "p"));
	cache_source_release(&s);
	CHECK(check_clean(c));
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* An older leifs run on a cache of today (for the mount tests): it makes
 * each archive's view anew (from the start: its import would read the
 * archive again) and keeps each view's .config, with a line of its own
 * added (refresh = 4321), as a client file. */
struct ids {
	uint64_t v[256];
	size_t n;
};

static int collect_id(void *arg, const struct cache_view *v)
{
	struct ids *ids = arg;

	if (ids->n < 256)
		ids->v[ids->n++] = v->id;
	return 0;
}

static int older_writes(cache_t *c)
{
	struct old_src srcs[64] = { { 0 } }, *p = srcs;
	struct ids ids = { .n = 0 };
	size_t i, n;
	int rc;

	if ((rc = cache_source_each(c, collect_src, &p)) ||
	    (rc = cache_view_each(c, collect_id, &ids)))
		return rc;
	n = (size_t)(p - srcs);
	for (i = 0; i < n; i++) {
		uint64_t id;

		if (!rc)
			rc = put_old_archive(c, srcs[i].spec, "", &id);
		free(srcs[i].spec);
		free(srcs[i].pos);
	}
	for (i = 0; !rc && i < ids.n; i++) {
		char *text = NULL, *t2 = NULL;
		size_t len = 0;

		if ((rc = cache_settings_get(c, ids.v[i], &text, &len, NULL)) == ENOENT) {
			rc = 0;         /* it had none to keep */
			continue;
		}
		if (!rc && asprintf(&t2, "%s\trefresh = 4321\n", text ? text : "") < 0)
			rc = ENOMEM;
		if (!rc)
			rc = put_old_config(c, ids.v[i], t2);
		free(text);
		free(t2);
	}
	return rc;
}

/* a cache from before the kw table: it gets the union of its views'
 * flags once, at the next open, in every view (a seen one in cur/) */
static int count_new(void *arg, const struct cache_entry *e)
{
	*(int *)arg += e->where == CACHE_NEW;
	return 0;
}

static void test_kw_migration(void)
{
	char dir[] = "/tmp/leifs-kw-XXXXXX", why[512], cmd[300];
	struct cache_view v1, v2, v3, v4, v5;
	struct cache_entry e;
	unsigned char oid1[CACHE_OID_LEN], oid2[CACHE_OID_LEN];
	uint64_t ids[3], changed[3];
	uint32_t counts[3];
	uint32_t fs, r, kw, t;
	cache_batch_t *b;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	size_t nch;
	cache_t *c;
	int n;

	cache_oid(msg1, sizeof(msg1) - 1, oid1);
	cache_oid(msg2, sizeof(msg2) - 1, oid2);
	CHECK(cache_flags_parse("FS", &fs) == 0 && cache_flags_parse("R", &r) == 0);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	CHECK(cache_view_create(c, "v1", "q", &v1) == 0);
	CHECK(cache_view_create(c, "v2", "q", &v2) == 0);
	CHECK(cache_view_create(c, "v3", "q", &v3) == 0);
	/* v1 filled to cur/, v2 and v3 with both in new/ */
	CHECK(cache_batch_new(c, v1.id, v1.epoch, 1, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add(b, msg1, sizeof(msg1) - 1) == 0 &&
	      cache_batch_add(b, msg2, sizeof(msg2) - 1) == 0 && cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_batch_new(c, v2.id, v2.epoch, 0, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add_stored(b, oid1) == 0 && cache_batch_add_stored(b, oid2) == 0 &&
	      cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_batch_new(c, v3.id, v3.epoch, 0, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add_stored(b, oid1) == 0 && cache_batch_add_stored(b, oid2) == 0 &&
	      cache_batch_flush(b) == 0);
	cache_batch_free(b);
	/* v5 will keep its flags its own (flags = view) */
	CHECK(cache_view_create(c, "v5", "q", &v5) == 0);
	CHECK(cache_batch_new(c, v5.id, v5.epoch, 0, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	CHECK(cache_batch_add_stored(b, oid1) == 0 && cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_flags_parse("T", &t) == 0);
	CHECK(cache_entry_update(c, v5.id, oid1, CACHE_NEW, t, 0) == 0);
	/* what each view's user did before flags were shared */
	CHECK(cache_entry_update(c, v1.id, oid1, CACHE_CUR, fs, 0) == 0);
	CHECK(cache_entry_update(c, v2.id, oid2, CACHE_NEW, r, 7) == 0);
	/* v3 flags hits (threads = flag-hits): its F is the search's */
	CHECK(cache_flags_parse("F", &kw) == 0);
	CHECK(cache_entry_update(c, v3.id, oid2, CACHE_NEW, kw, 0) == 0);
	cache_close(c);
	CHECK(raw_open(dir, "kw", &env, &txn, &dbi) == 0);
	CHECK(mdb_drop(txn, dbi, 1) == 0 && mdb_txn_commit(txn) == 0);
	mdb_env_close(env);

	CHECK(cache_open(dir, 1 << 26, &c, why, sizeof(why)) == 0);
	/* filled by the views, which know which share: v1..v3, not v5 */
	CHECK(cache_kw_pending(c, &n) == 0 && n == 1);
	ids[0] = v1.id;
	ids[1] = v2.id;
	ids[2] = v3.id;
	counts[0] = counts[1] = CACHE_SHARED_FLAGS;
	counts[2] = CACHE_SHARED_FLAGS & ~CACHE_FLAG_FLAGGED;
	CHECK(cache_kw_migrate(c, ids, counts, 3) == 0);
	CHECK(cache_kw_pending(c, &n) == 0 && n == 0);
	CHECK(cache_kw_get(c, oid1, &kw) == 0 && kw == fs);
	CHECK(cache_kw_get(c, oid2, &kw) == 0 && kw == r);
	CHECK(cache_entry_get(c, v2.id, oid1, &e) == 0 && e.flags == fs && e.where == CACHE_CUR);
	CHECK(cache_entry_get(c, v3.id, oid1, &e) == 0 && e.flags == fs && e.where == CACHE_CUR);
	CHECK(cache_entry_get(c, v1.id, oid2, &e) == 0 && e.flags == r && e.where == CACHE_CUR);
	CHECK(cache_flags_parse("FR", &kw) == 0);
	CHECK(cache_entry_get(c, v3.id, oid2, &e) == 0 && e.flags == kw);
	/* replied is no reason to leave new/; the name tag stays the view's */
	CHECK(cache_entry_get(c, v2.id, oid2, &e) == 0 && e.flags == r && e.where == CACHE_NEW &&
	      e.uid == 7);
	CHECK(cache_entry_get(c, v5.id, oid1, &e) == 0 && e.flags == t && e.where == CACHE_NEW);
	n = 0;
	CHECK(cache_entry_each(c, v2.id, count_new, &n) == 0 && n == 1);
	CHECK(check_clean(c));

	/* a change through v1 is the bits it changed: F cleared (D is v1's
	 * own); v2, which has R of its own besides, keeps it */
	CHECK(cache_flags_parse("RS", &kw) == 0);
	CHECK(cache_entry_update(c, v2.id, oid1, CACHE_CUR, fs | kw, 0) == 0);
	CHECK(cache_flags_parse("DS", &kw) == 0);
	CHECK(cache_entry_update_shared(c, v1.id, oid1, CACHE_CUR, fs, kw, 0, ids, 3, changed,
					&nch) == 0 && nch == 2);
	CHECK(cache_flags_parse("RS", &kw) == 0);
	CHECK(cache_entry_get(c, v2.id, oid1, &e) == 0 && e.flags == kw);
	CHECK(cache_flags_parse("S", &kw) == 0);
	CHECK(cache_entry_get(c, v3.id, oid1, &e) == 0 && e.flags == kw);
	CHECK(cache_kw_get(c, oid1, &fs) == 0 && fs == kw);
	CHECK(cache_entry_get(c, v5.id, oid1, &e) == 0 && e.flags == t);
	/* a rename that changes no shared flag changes no other view */
	CHECK(cache_flags_parse("DS", &fs) == 0);
	CHECK(cache_entry_update_shared(c, v1.id, oid1, CACHE_CUR, fs, fs, 3, ids, 3, changed,
					&nch) == 0 && nch == 0);
	/* a client renaming from a name older than a change another view made
	 * (R came meanwhile): its change (F) is made, R stays */
	CHECK(cache_flags_parse("DRS", &kw) == 0);
	CHECK(cache_entry_update(c, v1.id, oid1, CACHE_CUR, kw, 3) == 0);
	CHECK(cache_flags_parse("DFS", &kw) == 0);
	CHECK(cache_entry_update_shared(c, v1.id, oid1, CACHE_CUR, fs, kw, 3, ids, 3, changed,
					&nch) == 0);
	CHECK(cache_flags_parse("DFRS", &kw) == 0);
	CHECK(cache_entry_get(c, v1.id, oid1, &e) == 0 && e.flags == kw && e.uid == 3);
	CHECK(cache_flags_parse("FRS", &kw) == 0);
	CHECK(cache_entry_get(c, v2.id, oid1, &e) == 0 && e.flags == kw);
	CHECK(check_clean(c));
	/* a view that shares gets the message as it is; one that does not, bare */
	CHECK(cache_view_create(c, "v4", "q", &v4) == 0);
	CHECK(cache_batch_new(c, v4.id, v4.epoch, 0, 0, 0, CACHE_DEDUPE_CONTENT, &b) == 0);
	cache_batch_share(b, 1);
	CHECK(cache_batch_add_stored(b, oid1) == 0 && cache_batch_add_stored(b, oid2) == 0 &&
	      cache_batch_flush(b) == 0);
	cache_batch_free(b);
	CHECK(cache_flags_parse("FS", &kw) == 0);
	CHECK(cache_entry_get(c, v4.id, oid1, &e) == 0 && e.flags == kw && e.where == CACHE_CUR);
	CHECK(cache_entry_get(c, v4.id, oid2, &e) == 0 && e.flags == r && e.where == CACHE_NEW);
	CHECK(check_clean(c));
	cache_view_release(&v1);
	cache_view_release(&v2);
	cache_view_release(&v3);
	cache_view_release(&v4);
	cache_view_release(&v5);
	cache_close(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && (!strcmp(argv[1], "downgrade") || !strcmp(argv[1], "older-writes"))) {
		char why[512];
		cache_t *c;
		int rc;

		cache_mail_init();
		if (cache_open(argv[2], (size_t)1 << 30, &c, why, sizeof(why))) {
			fprintf(stderr, "test-tables: %s\n", why);
			return 1;
		}
		rc = argv[1][0] == 'd' ? downgrade(c) : older_writes(c);
		cache_close(c);
		if (rc)
			fprintf(stderr, "test-tables: %s %s: %s\n", argv[1], argv[2],
				rc > 0 ? strerror(rc) : mdb_strerror(rc));
		return rc ? 1 : 0;
	}
	cache_mail_init();
	test_tables();
	test_migration_bad_record();
	test_older_leifs_after_upgrade();
	test_long_spec_and_check();
	test_kw_migration();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

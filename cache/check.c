/*
 * A consistency check of the cache (leifs --check DIR): every record under
 * a view id belongs to a view that exists (entries: to a view or to a
 * local archive's source record), every entry's message is
 * stored, each message's reference count is the number of entries
 * that hold it, and each view's counters (new, cur, hidden) are the
 * numbers of its entries.  One read transaction: a snapshot, safe while a daemon
 * writes.
 */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

static guint oid_hash(gconstpointer p)
{
	guint h;

	memcpy(&h, p, sizeof(h));
	return h;
}

static gboolean oid_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, CACHE_OID_LEN);
}

static uint64_t key_view(const MDB_val *k)
{
	const unsigned char *p = k->mv_data;
	uint64_t id = 0;
	int i;

	for (i = 0; i < 8 && (size_t)i < k->mv_size; i++)
		id = id << 8 | p[i];
	return id;
}

struct check {
	cache_t *c;
	MDB_txn *txn;
	GHashTable *views;      /* ids of views that exist */
	GHashTable *sources;    /* ids of sources: their entries are no orphans */
	GHashTable *held;       /* oid -> entries holding it */
	GHashTable *tally;      /* view id -> struct count_rec, counted here */
	struct cache_check *r;
	FILE *out;
};

/* every record of dbi whose key starts with a view id that is no view's
 * (nor, for entries, a source's) */
static int orphans(struct check *ck, MDB_dbi dbi, const char *what, uint64_t *count)
{
	int entries = dbi == ck->c->entry;
	MDB_cursor *cur;
	MDB_val k, d;
	uint64_t last = 0;
	int rc;

	if ((rc = cache_cursor_open(ck->txn, dbi, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		uint64_t id = key_view(&k);

		if (k.mv_size < 8 || g_hash_table_contains(ck->views, &id) ||
		    (entries && g_hash_table_contains(ck->sources, &id)))
			continue;
		++*count;
		if (ck->out && id != last)
			fprintf(ck->out, "orphan %s of removed view %llu\n", what,
				(unsigned long long)id);
		last = id;
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

static int count_entries(struct check *ck)
{
	MDB_cursor *cur;
	MDB_val k, d, mk, md;
	int rc;

	if ((rc = cache_cursor_open(ck->txn, ck->c->entry, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		const unsigned char *oid = (const unsigned char *)k.mv_data + 8;
		gpointer n;

		if (k.mv_size != 8 + CACHE_OID_LEN || d.mv_size != sizeof(struct entry_rec)) {
			ck->r->bad_records++;
			continue;
		}
		{
			struct entry_rec er;
			uint64_t id = key_view(&k);
			struct count_rec *t = g_hash_table_lookup(ck->tally, &id);

			memcpy(&er, d.mv_data, sizeof(er));
			if (!t) {
				uint64_t *key = g_malloc(sizeof(*key));

				*key = id;
				t = g_malloc0(sizeof(*t));
				g_hash_table_insert(ck->tally, key, t);
			}
			t->n[er.where < 3 ? er.where : CACHE_NEW]++;
		}
		n = g_hash_table_lookup(ck->held, oid);
		g_hash_table_insert(ck->held, (gpointer)oid, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(n) + 1));
		mk.mv_size = CACHE_OID_LEN;
		mk.mv_data = (void *)oid;
		if ((rc = cache_errno(mdb_get(ck->txn, ck->c->msg, &mk, &md)))) {
			if (rc != ENOENT)
				break;  /* a failed read is not a missing message */
			rc = 0;
			ck->r->missing_messages++;
			if (ck->out)
				fprintf(ck->out, "entry of view %llu without its message\n",
					(unsigned long long)key_view(&k));
		}
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

static void say_oid(FILE *out, const char *what, const unsigned char *oid, size_t a, size_t b)
{
	char hex[2 * CACHE_OID_LEN + 1];

	if (!out)
		return;
	cache_oid_hex(oid, hex);
	fprintf(out, "%s %s: %zu, entries %zu\n", what, hex, a, b);
}

static int check_refs(struct check *ck)
{
	MDB_cursor *cur;
	MDB_val k, d, rk, rd;
	int rc;

	/* every stored message is held by as many entries as its count says */
	if ((rc = cache_cursor_open(ck->txn, ck->c->msg, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		size_t held = k.mv_size == CACHE_OID_LEN ?
			GPOINTER_TO_SIZE(g_hash_table_lookup(ck->held, k.mv_data)) : 0;
		uint32_t n = 0;

		ck->r->messages++;
		if (!(rc = cache_errno(mdb_get(ck->txn, ck->c->refs, &k, &rd))) &&
		    rd.mv_size == sizeof(n))
			memcpy(&n, rd.mv_data, sizeof(n));
		else if (rc && rc != ENOENT)
			break;
		if (!held) {
			ck->r->unheld_messages++;
			say_oid(ck->out, "message held by no entry, count", k.mv_data, n, 0);
		} else if (n != held) {
			ck->r->wrong_refs++;
			say_oid(ck->out, "wrong count of message", k.mv_data, n, held);
		}
	}
	cache_cursor_close(cur);
	if (rc != ENOENT)
		return rc;
	/* and no count is left for a message that went */
	if ((rc = cache_cursor_open(ck->txn, ck->c->refs, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		rk = k;
		if ((rc = cache_errno(mdb_get(ck->txn, ck->c->msg, &rk, &rd)))) {
			if (rc != ENOENT)
				break;
			rc = 0;
			ck->r->wrong_refs++;
			say_oid(ck->out, "count of a message not stored", k.mv_data, 0, 0);
		}
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* each view's counters against the entries counted */
static int check_counts(struct check *ck)
{
	static const char *const where[3] = { "new", "cur", "hidden" };
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, ck->views);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		uint64_t id = *(uint64_t *)key;
		struct count_rec zero = { { 0 } }, r = { { 0 } };
		const struct count_rec *t = g_hash_table_lookup(ck->tally, &id);
		unsigned char kb[8];
		MDB_val k = { sizeof(kb), kb }, d;
		int rc, i;

		if (!t)
			t = &zero;
		cache_key_id(kb, id);
		if ((rc = cache_errno(mdb_get(ck->txn, ck->c->counts, &k, &d))) && rc != ENOENT)
			return rc;
		if (rc || d.mv_size != sizeof(r)) {
			ck->r->wrong_counts++;
			if (ck->out)
				fprintf(ck->out, "view %llu has no counters\n", (unsigned long long)id);
			continue;
		}
		memcpy(&r, d.mv_data, sizeof(r));
		if (!memcmp(&r, t, sizeof(r)))
			continue;
		ck->r->wrong_counts++;
		for (i = 0; ck->out && i < 3; i++)
			if (r.n[i] != t->n[i])
				fprintf(ck->out, "wrong count of view %llu in %s: %llu, entries %llu\n",
					(unsigned long long)id, where[i],
					(unsigned long long)r.n[i], (unsigned long long)t->n[i]);
	}
	return 0;
}

static int list_views(struct check *ck)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_cursor_open(ck->txn, ck->c->view, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		struct view_rec r;
		uint64_t *id;
		unsigned char key[8];
		MDB_val ik = { sizeof(key), key }, id_d;

		if (d.mv_size < sizeof(r)) {
			ck->r->bad_records++;
			continue;
		}
		memcpy(&r, d.mv_data, sizeof(r));
		ck->r->views++;
		if (!(id = g_malloc(sizeof(*id))))
			continue;
		*id = r.id;
		g_hash_table_add(ck->views, id);
		cache_key_id(key, r.id);
		if ((rc = cache_errno(mdb_get(ck->txn, ck->c->ids, &ik, &id_d))) &&
		    rc != ENOENT)
			break;
		if (rc || id_d.mv_size != k.mv_size ||
		    memcmp(id_d.mv_data, k.mv_data, k.mv_size)) {
			rc = 0;
			ck->r->bad_records++;
			if (ck->out)
				fprintf(ck->out, "view %llu has no id record\n",
					(unsigned long long)r.id);
		}
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* every source decodes, and its id is no view's (else its entries would
 * be taken for the view's, and removed with it) */
static int list_sources(struct check *ck)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_cursor_open(ck->txn, ck->c->sources, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		struct source_rec r;
		uint64_t *id;

		if (d.mv_size < sizeof(r) || !k.mv_size) {
			ck->r->bad_records++;
			continue;
		}
		memcpy(&r, d.mv_data, sizeof(r));
		ck->r->sources++;
		if (g_hash_table_contains(ck->views, &r.id) ||
		    g_hash_table_contains(ck->sources, &r.id)) {
			ck->r->bad_records++;
			if (ck->out)
				fprintf(ck->out, "source %.*s has id %llu, taken already\n",
					(int)k.mv_size, (const char *)k.mv_data,
					(unsigned long long)r.id);
			continue;
		}
		id = g_malloc(sizeof(*id));
		*id = r.id;
		g_hash_table_add(ck->sources, id);
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* settings records: whole, under a view that exists */
static int check_settings(struct check *ck)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_cursor_open(ck->txn, ck->c->settings, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		if (k.mv_size != 8 || d.mv_size < sizeof(struct settings_rec)) {
			ck->r->bad_records++;
			continue;
		}
		ck->r->settings++;
	}
	cache_cursor_close(cur);
	if (rc != ENOENT)
		return rc;
	return orphans(ck, ck->c->settings, "settings", &ck->r->orphans);
}

int cache_check(cache_t *c, FILE *out, struct cache_check *r)
{
	struct check ck = { .c = c, .r = r, .out = out };
	int rc, err;

	memset(r, 0, sizeof(*r));
	if ((rc = cache_rd_begin(c, &ck.txn)))
		return rc;
	ck.views = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	ck.held = g_hash_table_new(oid_hash, oid_equal);
	ck.tally = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	ck.sources = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	/* an older layout (cache_open_check): its archives are views and its
	 * settings client files, checked as such; no table of them yet */
	if (c->older && out)
		fprintf(out, "an older leifs's layout: its archives and .config files move "
			"to their own tables at the next mount\n");
	if (!(err = list_views(&ck)) &&
	    (c->older || !(err = list_sources(&ck))) &&
	    (c->older || !(err = check_settings(&ck))) &&
	    !(err = orphans(&ck, c->ids, "id record", &r->orphans)) &&
	    !(err = orphans(&ck, c->entry, "entries", &r->orphans)) &&
	    !(err = orphans(&ck, c->dedupe, "dedupe records", &r->orphans)) &&
	    !(err = orphans(&ck, c->files, "files", &r->orphans)) &&
	    !(err = orphans(&ck, c->marks, "bookmarks", &r->orphans)) &&
	    !(err = orphans(&ck, c->away, "user state", &r->orphans)) &&
	    !(err = orphans(&ck, c->counts, "counters", &r->orphans)) &&
	    !(err = count_entries(&ck)) &&
	    !(err = check_counts(&ck)))
		err = check_refs(&ck);
	r->held = g_hash_table_size(ck.held);
	g_hash_table_destroy(ck.held);
	g_hash_table_destroy(ck.tally);
	g_hash_table_destroy(ck.views);
	g_hash_table_destroy(ck.sources);
	cache_rd_end(ck.txn);
	return err;
}

uint64_t cache_check_problems(const struct cache_check *r)
{
	return r->orphans + r->missing_messages + r->unheld_messages + r->wrong_refs +
	       r->bad_records + r->wrong_counts;
}

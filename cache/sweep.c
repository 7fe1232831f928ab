/*
 * What a view loses: entries a full search no longer found (sweep), those
 * past its limit, dedupe records, bookmarks, and the whole view (delete).
 * What the user made of a message that leaves is kept in `away`, so that
 * it returns as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

/* the entry record at key k (inside the caller's txn), copied out */
int cache_entry_read(cache_t *c, MDB_txn *txn, MDB_val *k, struct entry_rec *r)
{
	MDB_val d;
	int rc;

	if ((rc = cache_errno(mdb_get(txn, c->entry, k, &d))))
		return rc;
	if (d.mv_size != sizeof(*r))
		return EIO;
	memcpy(r, d.mv_data, sizeof(*r));
	return 0;
}

/* Remember what the user made of an entry that leaves the view (a full
 * search that no longer finds it, a limit): it comes back as it was.  One
 * small record per message the view ever lost, gone with the view. */
static int away_put(cache_t *c, MDB_txn *txn, const MDB_val *ek, const struct entry_rec *r)
{
	struct away_rec a = { .flags = r->flags, .uid = r->uid, .where = r->where,
			      .was = r->was };
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key }, d = { sizeof(a), &a };

	if (ek->mv_size != sizeof(key))
		return EIO;
	memcpy(key, ek->mv_data, sizeof(key));     /* not a pointer into the map */

	return cache_errno(mdb_put(txn, c->away, &k, &d, 0));
}

struct sweep {
	cache_t *c;
	MDB_txn *txn;
	uint64_t id;
	int all;
	uint32_t gen;
	uint64_t dropped;
	int64_t delta[3];       /* entries dropped, by where (negative) */
	int err;        /* why a walk stopped */
	struct cache_gone *gone;        /* NULL: not asked */
};

void cache_gone_free(struct cache_gone *g)
{
	free(g->e);
	memset(g, 0, sizeof(*g));
}

/* entry (k, r) went: keep it for the caller, up to CACHE_GONE_MAX (a
 * failed allocation counts it as missed: the kernel keeps the name until
 * its entry timeout, which is all it costs) */
static void gone_add(struct cache_gone *g, const MDB_val *k, const struct entry_rec *r)
{
	MDB_val d = { sizeof(*r), (void *)r };

	if (!g)
		return;
	if (g->n >= CACHE_GONE_MAX) {
		g->missed++;
		return;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct cache_entry *e = realloc(g->e, cap * sizeof(*e));

		if (!e) {
			g->missed++;
			return;
		}
		g->e = e;
		g->cap = cap;
	}
	if (!cache_entry_decode(k, &d, &g->e[g->n]))
		g->n++;
	else
		g->missed++;
}

/* entries: all of them, or those of another generation that are not hidden;
 * each one dropped releases its message */
static enum walk drop_entry(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct sweep *s = arg;
	struct entry_rec r;
	int rc;

	if (d->mv_size != sizeof(r) || k->mv_size != 8 + CACHE_OID_LEN) {
		s->err = EIO;
		return WALK_STOP;
	}
	memcpy(&r, d->mv_data, sizeof(r));
	if (!s->all && (r.gen == s->gen || r.where == CACHE_HIDDEN))
		return WALK_KEEP;
	if ((!s->all && (rc = away_put(s->c, s->txn, k, &r))) ||
	    (rc = cache_ref(s->c, s->txn, (const unsigned char *)k->mv_data + 8, -1))) {
		s->err = rc;
		return WALK_STOP;
	}
	s->delta[r.where < 3 ? r.where : CACHE_NEW]--;
	s->dropped++;
	if (r.where != CACHE_HIDDEN)
		gone_add(s->gone, k, &r);
	return WALK_DROP;
}

/* dedupe records: all of them, or those whose message left the view */
static enum walk drop_dedupe(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct sweep *s = arg;
	unsigned char ekey[8 + CACHE_OID_LEN];
	MDB_val ek = { sizeof(ekey), ekey }, ed;
	int rc;

	(void)k;
	if (s->all || d->mv_size != CACHE_OID_LEN)
		return WALK_DROP;
	cache_key_id(ekey, s->id);
	memcpy(ekey + 8, d->mv_data, CACHE_OID_LEN);
	rc = cache_errno(mdb_get(s->txn, s->c->entry, &ek, &ed));
	if (rc && rc != ENOENT) {
		s->err = rc;    /* a failed read is not "gone" */
		return WALK_STOP;
	}
	return rc == ENOENT ? WALK_DROP : WALK_KEEP;
}

static int drop_entries(cache_t *c, MDB_txn *txn, uint64_t id, int all,
			uint32_t gen, uint64_t *dropped, struct cache_gone *gone)
{
	struct sweep s = { c, txn, id, all, gen, 0, { 0 }, 0, gone };
	int rc;

	if ((rc = cache_walk_prefix(c, txn, c->entry, id, drop_entry, &s)) || (rc = s.err) ||
	    (rc = cache_walk_prefix(c, txn, c->dedupe, id, drop_dedupe, &s)) || (rc = s.err))
		return rc;
	/* a removed view's counters go with it (cache_view_delete) */
	if (!all && (rc = cache_count_add(c, txn, id, s.delta)))
		return rc;
	if (dropped)
		*dropped = s.dropped;
	return 0;
}

int cache_entries_drop(cache_t *c, MDB_txn *txn, uint64_t id)
{
	return drop_entries(c, txn, id, 1, 0, NULL, NULL);
}

int cache_view_sweep(cache_t *c, const char *name, uint64_t id, uint32_t gen,
		     uint32_t epoch, uint64_t *dropped, struct cache_gone *gone)
{
	MDB_val k = { strlen(name), (void *)name }, d;
	struct cache_view v = { 0 };
	MDB_txn *txn;
	int rc, err = 0;

	*dropped = 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((err = cache_errno(mdb_get(txn, c->view, &k, &d))))
		goto out;
	if ((err = cache_view_decode(&k, &d, &v)))
		goto out;
	if (v.id != id || v.epoch != epoch)     /* superseded: leave it */
		goto out;
	v.gen = gen;
	if ((err = drop_entries(c, txn, id, 0, gen, dropped, gone)) ||
	    (err = cache_view_put(txn, c, &v, 0)))
		goto out;
	err = cache_errno(mdb_txn_commit(txn));
	txn = NULL;
	cache_drop_mappings(c);         /* the walk touched every entry */
out:
	if (txn)
		mdb_txn_abort(txn);
	cache_view_release(&v);
	return err;
}

/* one write transaction around a walk of `dbi` under view `id` that drops
 * every record (drop_all never stops it) */
static int drop_all_txn(cache_t *c, MDB_dbi dbi, uint64_t id)
{
	MDB_txn *txn;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_walk_prefix(c, txn, dbi, id, cache_walk_drop, NULL))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return cache_errno(mdb_txn_commit(txn));
}

int cache_view_clear_dedupe(cache_t *c, uint64_t id)
{
	return drop_all_txn(c, c->dedupe, id);
}

struct dated {
	int64_t date;
	unsigned char oid[CACHE_OID_LEN];
};

static int newest_first(const void *a, const void *b)
{
	const struct dated *x = a, *y = b;

	if (x->date != y->date)
		return x->date > y->date ? -1 : 1;
	return memcmp(x->oid, y->oid, CACHE_OID_LEN);
}

struct keep {
	struct dated *v;
	size_t n, cap;
	int err;
};

static enum walk collect(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct keep *kp = arg;
	struct entry_rec r;

	if (d->mv_size != sizeof(r) || k->mv_size != 8 + CACHE_OID_LEN) {
		kp->err = EIO;
		return WALK_STOP;
	}
	memcpy(&r, d->mv_data, sizeof(r));
	if (r.where == CACHE_HIDDEN)
		return WALK_KEEP;
	if (kp->n == kp->cap) {
		size_t cap = kp->cap ? 2 * kp->cap : 1024;
		struct dated *v = realloc(kp->v, cap * sizeof(*v));

		if (!v) {
			kp->err = ENOMEM;
			return WALK_STOP;
		}
		kp->v = v;
		kp->cap = cap;
	}
	kp->v[kp->n].date = r.date;
	memcpy(kp->v[kp->n].oid, (const unsigned char *)k->mv_data + 8, CACHE_OID_LEN);
	kp->n++;
	return WALK_KEEP;
}

int cache_view_limit(cache_t *c, uint64_t id, uint64_t n, uint64_t *dropped,
		     struct cache_gone *gone)
{
	struct keep kp = { 0 };
	struct sweep s = { c, NULL, id, 0, 0, 0, { 0 }, 0, NULL };
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key };
	MDB_txn *txn;
	size_t i;
	int rc;

	*dropped = 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_walk_prefix(c, txn, c->entry, id, collect, &kp)) || (rc = kp.err))
		goto out;
	if (kp.n <= n)
		goto out;
	qsort(kp.v, kp.n, sizeof(*kp.v), newest_first);
	cache_key_id(key, id);
	for (i = (size_t)n; i < kp.n; i++) {
		struct entry_rec r;

		memcpy(key + 8, kp.v[i].oid, CACHE_OID_LEN);
		if ((rc = cache_entry_read(c, txn, &k, &r)) ||
		    (rc = away_put(c, txn, &k, &r)) ||
		    (rc = cache_errno(mdb_del(txn, c->entry, &k, NULL))) ||
		    (rc = cache_ref(c, txn, kp.v[i].oid, -1)))
			goto out;
		s.delta[r.where < 3 ? r.where : CACHE_NEW]--;
		gone_add(gone, &k, &r);
	}
	if ((rc = cache_count_add(c, txn, id, s.delta)))
		goto out;
	/* the dedupe records of what went */
	s.txn = txn;
	if ((rc = cache_walk_prefix(c, txn, c->dedupe, id, drop_dedupe, &s)) || (rc = s.err))
		goto out;
	*dropped = kp.n - (size_t)n;
	rc = cache_errno(mdb_txn_commit(txn));
	txn = NULL;
out:
	if (txn)
		mdb_txn_abort(txn);
	free(kp.v);
	return rc;
}

/* ---- per-source bookmarks: view id + source -> int64_t ---- */

int cache_mark_get(cache_t *c, uint64_t id, const char *src, int64_t *t)
{
	unsigned char key[500];
	MDB_val k, d;
	MDB_txn *txn;
	int rc;

	*t = 0;
	if ((rc = cache_key_name(key, sizeof(key), &k, id, src)))
		return rc;
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	rc = cache_errno(mdb_get(txn, c->marks, &k, &d));
	if (!rc && d.mv_size == sizeof(*t))
		memcpy(t, d.mv_data, sizeof(*t));
	else if (!rc)
		rc = EIO;       /* a damaged record */
	cache_rd_end(txn);
	return rc;
}

int cache_mark_set(cache_t *c, const char *name, uint64_t id, uint32_t epoch,
		   const char *src, int64_t t)
{
	unsigned char key[500];
	MDB_val vk = { strlen(name), (void *)name }, k, d;
	struct cache_view v = { 0 };
	MDB_txn *txn;
	int rc, err;

	if ((rc = cache_key_name(key, sizeof(key), &k, id, src)))
		return rc;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->view, &vk, &d))) ||
	    (rc = cache_view_decode(&vk, &d, &v))) {
		mdb_txn_abort(txn);
		return rc == ENOENT ? 0 : rc;
	}
	err = v.id != id || v.epoch != epoch;   /* reset meanwhile: no bookmark */
	cache_view_release(&v);
	d.mv_size = sizeof(t);
	d.mv_data = &t;
	if (err || (rc = cache_errno(mdb_put(txn, c->marks, &k, &d, 0)))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return cache_errno(mdb_txn_commit(txn));
}

int cache_marks_clear(cache_t *c, uint64_t id)
{
	return drop_all_txn(c, c->marks, id);
}

int cache_view_delete(cache_t *c, const char *name)
{
	unsigned char idkey[8];
	MDB_val k = { strlen(name), (void *)name }, d, ik = { sizeof(idkey), idkey };
	struct view_rec r;
	char holder[40];
	MDB_txn *txn;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->view, &k, &d))))
		goto fail;
	if (d.mv_size < sizeof(r)) {
		rc = EIO;
		goto fail;
	}
	memcpy(&r, d.mv_data, sizeof(r));
	cache_key_id(idkey, r.id);
	cache_holder_spec(r.id, holder);
	if ((rc = cache_errno(mdb_del(txn, c->view, &k, NULL))) ||
	    ((rc = cache_errno(mdb_del(txn, c->ids, &ik, NULL))) && rc != ENOENT) ||
	    (rc = drop_entries(c, txn, r.id, 1, 0, NULL, NULL)) ||
	    (rc = cache_files_drop(c, txn, r.id)) ||
	    ((rc = cache_errno(mdb_del(txn, c->settings, &ik, NULL))) && rc != ENOENT) ||
	    (rc = cache_walk_prefix(c, txn, c->marks, r.id, cache_walk_drop, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->away, r.id, cache_walk_drop, NULL)) ||
	    (rc = cache_imap_drop_view(c, txn, r.id)) ||
	    (rc = cache_source_drop(c, txn, holder)) ||
	    (c->mounted && (rc = cache_series_drop(c, txn, r.id))) ||
	    ((rc = cache_errno(mdb_del(txn, c->counts, &ik, NULL))) && rc != ENOENT))
		goto fail;
	return cache_errno(mdb_txn_commit(txn));
fail:
	mdb_txn_abort(txn);
	return rc;
}

/*
 * The views table: a view's record (name -> id, query, state, result of
 * its last search, generation) and its edits, each a read-modify-write in
 * one transaction.  The record layout is in cache-private.h; the ids
 * table and the counters that stand beside it are kept by store.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

void cache_view_release(struct cache_view *v)
{
	free(v->name);
	free(v->query);
	free(v->error);
	free(v->last);
	memset(v, 0, sizeof(*v));
}

int cache_view_decode(const MDB_val *k, const MDB_val *d, struct cache_view *v)
{
	struct view_rec r;
	const char *p = (const char *)d->mv_data + sizeof(r);

	if (d->mv_size < sizeof(r))
		return EIO;
	memcpy(&r, d->mv_data, sizeof(r));
	/* after the error, how the last search went (none in older caches) */
	if (d->mv_size < sizeof(r) + (size_t)r.qlen + r.elen)
		return EIO;
	memset(v, 0, sizeof(*v));
	v->id = r.id;
	v->created = r.created;
	v->last_ok = r.last_ok;
	v->last_try = r.last_try;
	v->state = (int)r.state;
	v->gen = r.gen;
	v->epoch = r.epoch;
	v->filled = (r.flags & VIEW_REC_FILLED) || r.last_ok > 0 || r.state == CACHE_VIEW_FRESH;
	v->name = strndup(k->mv_data, k->mv_size);
	v->query = strndup(p, r.qlen);
	v->error = strndup(p + r.qlen, r.elen);
	v->last = strndup(p + r.qlen + r.elen, d->mv_size - sizeof(r) - r.qlen - r.elen);
	if (!v->name || !v->query || !v->error || !v->last) {
		cache_view_release(v);
		return ENOMEM;
	}
	return 0;
}

int cache_view_put(MDB_txn *txn, cache_t *c, const struct cache_view *v,
		    unsigned flags)
{
	struct view_rec r = {
		.id = v->id, .created = v->created, .last_ok = v->last_ok,
		.last_try = v->last_try, .state = (uint32_t)v->state,
		.qlen = (uint32_t)strlen(v->query), .elen = (uint32_t)strlen(v->error),
		.gen = v->gen, .epoch = v->epoch, .flags = v->filled ? VIEW_REC_FILLED : 0,
	};
	const char *last = v->last ? v->last : "";
	size_t llen = strlen(last);
	MDB_val k = { strlen(v->name), v->name };
	MDB_val d = { sizeof(r) + r.qlen + r.elen + llen, NULL };
	int rc;

	if ((rc = cache_errno(mdb_put(txn, c->view, &k, &d, flags | MDB_RESERVE))))
		return rc;
	memcpy(d.mv_data, &r, sizeof(r));
	memcpy((char *)d.mv_data + sizeof(r), v->query, r.qlen);
	memcpy((char *)d.mv_data + sizeof(r) + r.qlen, v->error, r.elen);
	memcpy((char *)d.mv_data + sizeof(r) + r.qlen + r.elen, last, llen);
	return 0;
}

int cache_next_id(cache_t *c, MDB_txn *txn, uint64_t *out)
{
	static const char next_key[] = "next-view-id";
	MDB_val k = { sizeof(next_key) - 1, (void *)next_key }, d;
	uint64_t id = 1;
	int rc;

	rc = cache_errno(mdb_get(txn, c->meta, &k, &d));
	if (rc == 0 && d.mv_size == sizeof(id))
		memcpy(&id, d.mv_data, sizeof(id));
	else if (rc != ENOENT && rc != 0)
		return rc;
	*out = id++;
	d.mv_size = sizeof(id);
	d.mv_data = &id;
	return cache_errno(mdb_put(txn, c->meta, &k, &d, 0));
}

int cache_view_create(cache_t *c, const char *name, const char *query,
		      struct cache_view *out)
{
	struct cache_view v = { .name = (char *)name, .query = (char *)query,
				.error = "", .created = time(NULL) };
	struct count_rec zero = { { 0 } };
	MDB_txn *txn;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_next_id(c, txn, &v.id)) ||
	    (rc = cache_view_put(txn, c, &v, MDB_NOOVERWRITE)) ||
	    (rc = cache_id_put(c, txn, v.id, name)) ||
	    (rc = cache_count_put(c, txn, v.id, &zero)))
		goto fail;
	if ((rc = cache_errno(mdb_txn_commit(txn))))
		return rc;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->id = v.id;
		out->created = v.created;
		out->name = strdup(name);
		out->query = strdup(query);
		out->error = strdup("");
		out->last = strdup("");
		if (!out->name || !out->query || !out->error || !out->last) {
			cache_view_release(out);
			return ENOMEM;
		}
	}
	return 0;
fail:
	mdb_txn_abort(txn);
	return rc;
}

/* An older leifs's own records ("\001source SPEC", an archive) are no
 * views; migrate.c moves them, and any it could not stay out of sight
 * here, for every caller, rather than filtered by each. */
static int older_record(const char *name, size_t len)
{
	return len && name[0] == '\001';
}

int cache_view_get(cache_t *c, const char *name, struct cache_view *out)
{
	MDB_val k = { strlen(name), (void *)name }, d;
	MDB_txn *txn;
	int rc, err;

	if (older_record(name, k.mv_size))
		return ENOENT;
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	rc = cache_errno(mdb_get(txn, c->view, &k, &d));
	err = rc ? rc : cache_view_decode(&k, &d, out);
	cache_rd_end(txn);
	return err;
}

int cache_view_each(cache_t *c, int (*fn)(void *, const struct cache_view *),
		    void *arg)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc, err = 0;
	MDB_cursor_op op = MDB_FIRST;

	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if ((rc = cache_cursor_open(txn, c->view, &cur))) {
		cache_rd_end(txn);
		return rc;
	}
	while (!err && !(rc = cache_errno(mdb_cursor_get(cur, &k, &d, op)))) {
		struct cache_view v;

		op = MDB_NEXT;
		if (older_record(k.mv_data, k.mv_size))
			continue;
		if ((err = cache_view_decode(&k, &d, &v)))
			break;
		err = fn(arg, &v);
		cache_view_release(&v);
	}
	if (!err && rc != ENOENT)
		err = rc;
	cache_cursor_close(cur);
	cache_rd_end(txn);
	return err;
}

/* read-modify-write of view `name` (which must still be view `id`) */
static int view_update(cache_t *c, const char *name, uint64_t id,
		       int (*edit)(struct cache_view *v, void *arg), void *arg)
{
	MDB_val k = { strlen(name), (void *)name }, d;
	struct cache_view v;
	MDB_txn *txn;
	int rc, err;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->view, &k, &d)))) {
		mdb_txn_abort(txn);
		return rc;
	}
	if ((err = cache_view_decode(&k, &d, &v))) {
		mdb_txn_abort(txn);
		return err;
	}
	err = v.id != id ? ENOENT : edit(&v, arg);   /* ENOENT: made anew meanwhile */
	if (!err)
		err = cache_view_put(txn, c, &v, 0);
	cache_view_release(&v);
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return cache_errno(mdb_txn_commit(txn));
}

struct result {
	int state;
	int64_t last_ok, last_try;
	const char *error;
	uint32_t epoch;
	const char *last;
};

static int edit_result(struct cache_view *v, void *arg)
{
	const struct result *r = arg;
	char *e = strdup(r->error ? r->error : "");

	if (!e)
		return ENOMEM;
	v->state = r->state;
	if (r->state == CACHE_VIEW_FRESH)
		v->filled = 1;
	/* the bookmark moves only if nobody reset it (new query, forced full
	 * refresh) while this search ran */
	if (r->last_ok >= 0 && v->epoch == r->epoch)
		v->last_ok = r->last_ok;
	v->last_try = r->last_try;
	free(v->error);
	v->error = e;
	if (r->last) {
		char *l = strdup(r->last);

		if (!l)
			return ENOMEM;
		free(v->last);
		v->last = l;
	}
	return 0;
}

int cache_view_set_result(cache_t *c, const char *name, uint64_t id, int state,
			  uint32_t epoch, int64_t last_ok, int64_t last_try,
			  const char *error, const char *last)
{
	struct result r = { state, last_ok, last_try, error, epoch, last };

	return view_update(c, name, id, edit_result, &r);
}

static int edit_query(struct cache_view *v, void *arg)
{
	char *q = strdup(arg);

	if (!q)
		return ENOMEM;
	free(v->query);
	v->query = q;
	v->last_ok = 0;
	v->epoch++;
	return 0;
}

int cache_view_rename(cache_t *c, const char *from, uint64_t id, const char *to)
{
	MDB_val k = { strlen(from), (void *)from }, d, tk = { strlen(to), (void *)to };
	unsigned char idkey[8];
	MDB_val ik = { sizeof(idkey), idkey }, iv = { strlen(to), (void *)to };
	struct cache_view v;
	MDB_txn *txn;
	char *name;
	int rc;

	if (!strcmp(from, to))
		return 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->view, &k, &d))) ||
	    (rc = cache_view_decode(&k, &d, &v)))
		goto fail;
	if (v.id != id) {
		rc = ENOENT;    /* made anew meanwhile */
		goto fail_view;
	}
	if (!(rc = cache_errno(mdb_get(txn, c->view, &tk, &d)))) {
		rc = EEXIST;
		goto fail_view;
	}
	if (rc != ENOENT || !(name = strdup(to))) {
		rc = rc != ENOENT ? rc : ENOMEM;
		goto fail_view;
	}
	free(v.name);
	v.name = name;
	cache_key_id(idkey, id);
	if ((rc = cache_view_put(txn, c, &v, MDB_NOOVERWRITE)) ||
	    (rc = cache_errno(mdb_del(txn, c->view, &k, NULL))) ||
	    (rc = cache_errno(mdb_put(txn, c->ids, &ik, &iv, 0))))
		goto fail_view;
	cache_view_release(&v);
	return cache_errno(mdb_txn_commit(txn));
fail_view:
	cache_view_release(&v);
fail:
	mdb_txn_abort(txn);
	return rc;
}

int cache_view_set_query(cache_t *c, const char *name, uint64_t id,
			 const char *query)
{
	return view_update(c, name, id, edit_query, (void *)query);
}

static int edit_reset(struct cache_view *v, void *arg)
{
	(void)arg;
	v->last_ok = 0;
	v->epoch++;
	return 0;
}

static int edit_gen(struct cache_view *v, void *arg)
{
	*(uint32_t *)arg = ++v->gen;
	return 0;
}

int cache_view_next_gen(cache_t *c, const char *name, uint64_t id, uint32_t *gen)
{
	return view_update(c, name, id, edit_gen, gen);
}

struct stale {
	uint32_t gen;
	uint64_t n;
	int err;        /* EIO: a damaged entry record stopped the walk */
};

static enum walk count_stale(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct stale *st = arg;
	struct entry_rec r;

	(void)k;
	if (d->mv_size != sizeof(r)) {
		st->err = EIO;
		return WALK_STOP;
	}
	memcpy(&r, d->mv_data, sizeof(r));
	if (r.where != CACHE_HIDDEN && r.gen != st->gen)
		st->n++;
	return WALK_KEEP;
}

int cache_view_stale(cache_t *c, uint64_t id, uint32_t gen, uint64_t *n)
{
	struct stale st = { gen, 0, 0 };
	MDB_txn *txn;
	int rc;

	*n = 0;
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	rc = cache_walk_prefix(c, txn, c->entry, id, count_stale, &st);
	cache_rd_end(txn);
	if (rc || (rc = st.err))
		return rc;
	*n = st.n;
	return 0;
}

int cache_view_reset(cache_t *c, const char *name, uint64_t id)
{
	return view_update(c, name, id, edit_reset, NULL);
}

/*
 * Keywords (cache.h): the flags a message has in every view that shares
 * them, kept by its blob id as lei keeps keywords per message.  The kw
 * table holds them ("oid -> uint32_t", absent for none), also once no
 * view holds the message (a few bytes: a view that finds it again shows
 * it as the user left it, as lei's store does).
 *
 * A change through one view is a change of some flags, set or cleared:
 * in the transaction that moves the view's own entry, exactly those bits
 * are set or cleared in kw and in the entries (and the away records) of
 * the other views that share, never the others, so a view that differs
 * on another flag (a flagged hit of lei q -tt, a view that kept its own
 * flags until now) loses nothing.  Listings read their entries as before.
 *
 * A cache made before the table gets it at the mount that opens it,
 * marked pending in the meta table in that same transaction; the views
 * fill it (cache_kw_migrate) once they know which views share: the union
 * of what those views set, given to each of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

static const char pending_key[] = "kw-pending";

int cache_kw_read(cache_t *c, MDB_txn *txn, const unsigned char *oid, uint32_t *flags)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d;
	int rc;

	*flags = 0;
	if (!c->kw)
		return 0;       /* --check: no such table opened */
	rc = cache_errno(mdb_get(txn, c->kw, &k, &d));
	if (rc == ENOENT)
		return 0;
	if (rc)
		return rc;
	/* a damaged record counts as none: a search must not fail on it */
	if (d.mv_size == sizeof(*flags))
		memcpy(flags, d.mv_data, sizeof(*flags));
	*flags &= CACHE_SHARED_FLAGS;
	return 0;
}

static int kw_write(cache_t *c, MDB_txn *txn, const unsigned char *oid, uint32_t flags)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d = { sizeof(flags), &flags };
	int rc;

	flags &= CACHE_SHARED_FLAGS;
	if (flags)
		return cache_errno(mdb_put(txn, c->kw, &k, &d, 0));
	rc = cache_errno(mdb_del(txn, c->kw, &k, NULL));
	return rc == ENOENT ? 0 : rc;
}

int cache_kw_get(cache_t *c, const unsigned char *oid, uint32_t *flags)
{
	MDB_txn *txn;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn))))
		return rc;
	rc = cache_kw_read(c, txn, oid, flags);
	mdb_txn_abort(txn);
	return rc;
}

/* view id's entry of oid (or its away record): the bits `set` set and
 * `clr` cleared; a message seen goes from new/ to cur/, as a client moves
 * it (a hidden one comes back to cur/); *changed when its entry changed */
static int share_delta(cache_t *c, MDB_txn *txn, uint64_t id, const unsigned char *oid,
		       uint32_t set, uint32_t clr, int *changed)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key }, d;
	struct entry_rec r;
	int rc;

	*changed = 0;
	cache_key_id(key, id);
	memcpy(key + 8, oid, CACHE_OID_LEN);
	rc = cache_entry_read(c, txn, &k, &r);
	if (!rc) {
		uint32_t nf = (r.flags | set) & ~clr;
		int64_t delta[3] = { 0 };
		int seen = (set & CACHE_FLAG_SEEN) != 0;

		if (nf == r.flags && !(seen && (r.where == CACHE_NEW ||
						(r.where == CACHE_HIDDEN && r.was == CACHE_NEW))))
			return 0;
		if (seen && r.where == CACHE_NEW) {
			delta[CACHE_NEW]--;
			delta[CACHE_CUR]++;
			r.where = CACHE_CUR;
		}
		if (seen && r.where == CACHE_HIDDEN && r.was == CACHE_NEW)
			r.was = CACHE_CUR;
		r.flags = nf;
		d.mv_size = sizeof(r);
		d.mv_data = &r;
		*changed = 1;
		if ((rc = cache_errno(mdb_put(txn, c->entry, &k, &d, 0))))
			return rc;
		return cache_count_add(c, txn, id, delta);
	}
	if (rc != ENOENT)
		return rc;
	/* out of the view: it comes back with the flags it has then */
	rc = cache_errno(mdb_get(txn, c->away, &k, &d));
	if (rc == ENOENT)
		return 0;
	if (!rc && d.mv_size == sizeof(struct away_rec)) {
		struct away_rec a;

		memcpy(&a, d.mv_data, sizeof(a));
		a.flags = (a.flags | set) & ~clr;
		if ((set & CACHE_FLAG_SEEN) && a.where == CACHE_NEW)
			a.where = CACHE_CUR;
		if ((set & CACHE_FLAG_SEEN) && a.where == CACHE_HIDDEN && a.was == CACHE_NEW)
			a.was = CACHE_CUR;
		d.mv_size = sizeof(a);
		d.mv_data = &a;
		rc = cache_errno(mdb_put(txn, c->away, &k, &d, 0));
	}
	return rc;
}

int cache_entry_update_shared(cache_t *c, uint64_t id, const unsigned char *oid, int where,
			      uint32_t was, uint32_t flags, uint32_t uid, const uint64_t *views,
			      size_t nviews, uint64_t *changed, size_t *nchanged)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key };
	uint32_t nf, set, clr, kw, diff = was ^ flags;
	struct entry_rec r;
	MDB_txn *txn;
	size_t i;
	int rc, ch;

	*nchanged = 0;
	cache_key_id(key, id);
	memcpy(key + 8, oid, CACHE_OID_LEN);
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	/* the client's change is what differs between its two names, made
	 * to the entry as it is in this transaction */
	if ((rc = cache_entry_read(c, txn, &k, &r)))
		goto fail;
	nf = (r.flags & ~diff) | (flags & diff);
	if ((rc = cache_entry_update_txn(c, txn, id, oid, where, nf, uid, NULL)))
		goto fail;
	set = where == CACHE_HIDDEN ? 0 : nf & ~r.flags & CACHE_SHARED_FLAGS;
	clr = where == CACHE_HIDDEN ? 0 : r.flags & ~nf & CACHE_SHARED_FLAGS;
	if (c->kw && (set || clr) && nviews) {
		if ((rc = cache_kw_read(c, txn, oid, &kw)) ||
		    (rc = kw_write(c, txn, oid, (kw | set) & ~clr)))
			goto fail;
		for (i = 0; i < nviews; i++) {
			if (views[i] == id)
				continue;
			if ((rc = share_delta(c, txn, views[i], oid, set, clr, &ch)))
				goto fail;
			if (ch && changed)
				changed[(*nchanged)++] = views[i];
		}
	}
	if ((rc = cache_errno(mdb_txn_commit(txn))))
		*nchanged = 0;
	return rc;
fail:
	mdb_txn_abort(txn);
	*nchanged = 0;
	return rc;
}

/* ---- the one fill of the table for a cache from before it ---- */

int cache_kw_mark_pending(cache_t *c, MDB_txn *txn)
{
	MDB_val k = { sizeof(pending_key) - 1, (void *)pending_key }, d = { 1, "1" };

	return cache_errno(mdb_put(txn, c->meta, &k, &d, 0));
}

int cache_kw_pending(cache_t *c, int *pending)
{
	MDB_val k = { sizeof(pending_key) - 1, (void *)pending_key }, d;
	MDB_txn *txn;
	int rc;

	*pending = 0;
	if (!c->kw)
		return 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn))))
		return rc;
	rc = cache_errno(mdb_get(txn, c->meta, &k, &d));
	mdb_txn_abort(txn);
	if (rc == ENOENT)
		return 0;
	*pending = !rc;
	return rc;
}

struct fix {
	unsigned char key[8 + CACHE_OID_LEN];
};

/* the views that share, sorted, each with the flags of it that count */
struct share_set {
	struct share_view {
		uint64_t id;
		uint32_t count;
	} *v;
	size_t n;
};

static int cmp_share(const void *a, const void *b)
{
	const struct share_view *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* the flags of the view a record's key names that count; 0: none (it
 * does not share) */
static uint32_t sharing(const struct share_set *ss, const void *key)
{
	const unsigned char *p = key;
	struct share_view want = { 0, 0 }, *hit;
	size_t i;

	for (i = 0; i < 8; i++)
		want.id = want.id << 8 | p[i];
	hit = ss->n ? bsearch(&want, ss->v, ss->n, sizeof(*ss->v), cmp_share) : NULL;
	return hit ? hit->count | 0x80000000u : 0;
}

static uint32_t rec_flags(const MDB_val *d, int away)
{
	uint32_t f;

	memcpy(&f, (const char *)d->mv_data + (away ? offsetof(struct away_rec, flags) :
	       offsetof(struct entry_rec, flags)), sizeof(f));
	return f;
}

static int is_rec(const MDB_val *k, const MDB_val *d, int away)
{
	return k->mv_size == 8 + CACHE_OID_LEN &&
	       d->mv_size == (away ? sizeof(struct away_rec) : sizeof(struct entry_rec));
}

/* the shared flags of every record of a sharing view or'ed into kw */
static int union_of(cache_t *c, MDB_txn *txn, MDB_dbi dbi, int away, const struct share_set *ss)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_errno(mdb_cursor_open(txn, dbi, &cur))))
		return rc;
	for (rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_FIRST)); !rc;
	     rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT))) {
		const unsigned char *oid = (const unsigned char *)k.mv_data + 8;
		uint32_t f, have, count;

		/* a damaged record stays as it is */
		if (!is_rec(&k, &d, away) || !(count = sharing(ss, k.mv_data)) ||
		    !((f = rec_flags(&d, away) & count) & CACHE_SHARED_FLAGS))
			continue;
		if ((rc = cache_kw_read(c, txn, oid, &have)) ||
		    (rc = kw_write(c, txn, oid, have | f)))
			break;
	}
	mdb_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* the keys of the sharing views' records that lack some of their
 * message's flags */
static int behind(cache_t *c, MDB_txn *txn, MDB_dbi dbi, int away, const struct share_set *ss,
		  struct fix **out, size_t *n)
{
	MDB_cursor *cur;
	MDB_val k, d;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = cache_errno(mdb_cursor_open(txn, dbi, &cur))))
		return rc;
	for (rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_FIRST)); !rc;
	     rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT))) {
		uint32_t f, kw;

		if (!is_rec(&k, &d, away) || !sharing(ss, k.mv_data))
			continue;
		f = rec_flags(&d, away);
		if ((rc = cache_kw_read(c, txn, (const unsigned char *)k.mv_data + 8, &kw)))
			break;
		if ((f | kw) == f)
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct fix *t = realloc(*out, nc * sizeof(*t));

			if (!t) {
				rc = ENOMEM;
				break;
			}
			*out = t;
			cap = nc;
		}
		memcpy((*out)[(*n)++].key, k.mv_data, sizeof((*out)[0].key));
	}
	mdb_cursor_close(cur);
	if (rc == ENOENT)
		return 0;
	free(*out);
	*out = NULL;
	*n = 0;
	return rc;
}

int cache_kw_migrate(cache_t *c, const uint64_t *views, const uint32_t *count, size_t nviews)
{
	MDB_val pk = { sizeof(pending_key) - 1, (void *)pending_key };
	struct share_set ss = { NULL, nviews };
	struct fix *fx = NULL;
	MDB_txn *txn;
	size_t n = 0, i;
	int rc, away;

	if (!c->kw)
		return EROFS;
	if (nviews && !(ss.v = calloc(nviews, sizeof(*ss.v))))
		return ENOMEM;
	for (i = 0; i < nviews; i++) {
		ss.v[i].id = views[i];
		ss.v[i].count = count ? count[i] : CACHE_SHARED_FLAGS;
	}
	if (nviews)
		qsort(ss.v, nviews, sizeof(*ss.v), cmp_share);
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn)))) {
		free(ss.v);
		return rc;
	}
	if ((rc = union_of(c, txn, c->entry, 0, &ss)) ||
	    (rc = union_of(c, txn, c->away, 1, &ss)))
		goto out;
	/* then every sharing view has them: written after each walk (a
	 * walk's values point into pages a write may move) */
	for (away = 0; away < 2 && !rc; away++) {
		if ((rc = behind(c, txn, away ? c->away : c->entry, away, &ss, &fx, &n)))
			break;
		for (i = 0; i < n && !rc; i++) {
			uint64_t id = 0;
			uint32_t kw;
			int ch, j;

			for (j = 0; j < 8; j++)
				id = id << 8 | fx[i].key[j];
			if (!(rc = cache_kw_read(c, txn, fx[i].key + 8, &kw)))
				rc = share_delta(c, txn, id, fx[i].key + 8, kw, 0, &ch);
		}
		free(fx);
		fx = NULL;
	}
	if (!rc) {
		rc = cache_errno(mdb_del(txn, c->meta, &pk, NULL));
		if (rc == ENOENT)
			rc = 0;
	}
out:
	free(ss.v);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return cache_errno(mdb_txn_commit(txn));
}

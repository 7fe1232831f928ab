/*
 * Keywords (cache.h): the flags a message has in every view that shares
 * them, kept by its blob id as lei keeps keywords per message.  The kw
 * table holds them ("oid -> uint32_t", absent for none); a change through
 * one view is written, in the same transaction, to the entries (and the
 * away records) of the other views that share, so a listing reads its
 * entries as before and needs no second lookup.
 *
 * A cache made before the table gets it once, at the mount that opens it
 * (cache_kw_migrate): the union of what every view set, a flag set in any
 * view counting, written to every view's entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

static int kw_read(cache_t *c, MDB_txn *txn, const unsigned char *oid, uint32_t *flags)
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
	if (d.mv_size != sizeof(*flags))
		return EIO;
	memcpy(flags, d.mv_data, sizeof(*flags));
	*flags &= CACHE_SHARED_FLAGS;
	return 0;
}

int cache_kw_read(cache_t *c, MDB_txn *txn, const unsigned char *oid, uint32_t *flags)
{
	return kw_read(c, txn, oid, flags);
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
	rc = kw_read(c, txn, oid, flags);
	mdb_txn_abort(txn);
	return rc;
}

/* a view's entry of oid (and its away record) with the shared flags
 * `flags`: a message seen goes from new/ to cur/, as a client moves it;
 * *changed when something was written */
static int share_one(cache_t *c, MDB_txn *txn, uint64_t id, const unsigned char *oid,
		     uint32_t flags, int *changed)
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
		uint32_t nf = (r.flags & ~CACHE_SHARED_FLAGS) | flags;
		int64_t delta[3] = { 0 };

		if (nf == r.flags && !(r.where == CACHE_NEW && (nf & CACHE_FLAG_SEEN)))
			return 0;
		if (r.where == CACHE_NEW && (nf & CACHE_FLAG_SEEN)) {
			delta[CACHE_NEW]--;
			delta[CACHE_CUR]++;
			r.where = CACHE_CUR;
		}
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
		a.flags = (a.flags & ~CACHE_SHARED_FLAGS) | flags;
		if (a.where == CACHE_NEW && (a.flags & CACHE_FLAG_SEEN))
			a.where = CACHE_CUR;
		d.mv_size = sizeof(a);
		d.mv_data = &a;
		rc = cache_errno(mdb_put(txn, c->away, &k, &d, 0));
	}
	return rc;
}

int cache_kw_set(cache_t *c, const unsigned char *oid, uint32_t flags, const uint64_t *views,
		 size_t nviews, uint64_t *changed, size_t *nchanged)
{
	MDB_txn *txn;
	size_t i;
	int rc, ch;

	*nchanged = 0;
	flags &= CACHE_SHARED_FLAGS;
	if (!c->kw)
		return EROFS;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = kw_write(c, txn, oid, flags)))
		goto fail;
	for (i = 0; i < nviews; i++) {
		if ((rc = share_one(c, txn, views[i], oid, flags, &ch)))
			goto fail;
		if (ch)
			changed[(*nchanged)++] = views[i];
	}
	if ((rc = cache_errno(mdb_txn_commit(txn))))
		*nchanged = 0;
	return rc;
fail:
	mdb_txn_abort(txn);
	*nchanged = 0;
	return rc;
}

/* ---- the one migration of a cache from before the table ---- */

struct fix {
	unsigned char key[8 + CACHE_OID_LEN];
};

/* every entry's (or away record's) shared flags or'ed into kw */
static int union_of(cache_t *c, MDB_txn *txn, MDB_dbi dbi, int away)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_errno(mdb_cursor_open(txn, dbi, &cur))))
		return rc;
	for (rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_FIRST)); !rc;
	     rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT))) {
		uint32_t f, have;
		const unsigned char *oid;

		if (k.mv_size != 8 + CACHE_OID_LEN ||
		    d.mv_size != (away ? sizeof(struct away_rec) : sizeof(struct entry_rec)))
			continue;       /* not one (a damaged record stays as it is) */
		if (away) {
			struct away_rec a;

			memcpy(&a, d.mv_data, sizeof(a));
			f = a.flags;
		} else {
			struct entry_rec r;

			memcpy(&r, d.mv_data, sizeof(r));
			f = r.flags;
		}
		if (!(f & CACHE_SHARED_FLAGS))
			continue;
		oid = (const unsigned char *)k.mv_data + 8;
		if ((rc = kw_read(c, txn, oid, &have)) ||
		    (rc = kw_write(c, txn, oid, have | f)))
			break;
	}
	mdb_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* the keys of the records whose flags lack some of their message's */
static int behind(cache_t *c, MDB_txn *txn, MDB_dbi dbi, int away, struct fix **out, size_t *n)
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

		if (k.mv_size != 8 + CACHE_OID_LEN ||
		    d.mv_size != (away ? sizeof(struct away_rec) : sizeof(struct entry_rec)))
			continue;
		memcpy(&f, away ? (const char *)d.mv_data + offsetof(struct away_rec, flags) :
		       (const char *)d.mv_data + offsetof(struct entry_rec, flags), sizeof(f));
		if ((rc = kw_read(c, txn, (const unsigned char *)k.mv_data + 8, &kw)))
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

int cache_kw_migrate(cache_t *c, MDB_txn *txn)
{
	struct fix *fx = NULL;
	size_t n = 0, i;
	int rc, away;

	if ((rc = union_of(c, txn, c->entry, 0)) || (rc = union_of(c, txn, c->away, 1)))
		return rc;
	/* then every view has them: written after each walk (a walk's
	 * values point into pages a write may move) */
	for (away = 0; away < 2 && !rc; away++) {
		if ((rc = behind(c, txn, away ? c->away : c->entry, away, &fx, &n)))
			break;
		for (i = 0; i < n && !rc; i++) {
			uint64_t id = 0;
			uint32_t kw;
			int ch, j;

			for (j = 0; j < 8; j++)
				id = id << 8 | fx[i].key[j];
			if (!(rc = kw_read(c, txn, fx[i].key + 8, &kw))) {
				/* or'ed in: none of a view's flags is lost */
				uint32_t mine = 0;
				MDB_val k = { sizeof(fx[i].key), fx[i].key }, d;

				if (!cache_errno(mdb_get(txn, away ? c->away : c->entry, &k, &d)))
					memcpy(&mine, (const char *)d.mv_data + (away ?
					       offsetof(struct away_rec, flags) :
					       offsetof(struct entry_rec, flags)), sizeof(mine));
				rc = share_one(c, txn, id, fx[i].key + 8,
					       (mine & CACHE_SHARED_FLAGS) | kw, &ch);
			}
		}
		free(fx);
		fx = NULL;
	}
	return rc;
}

/*
 * A view's entries: listing walks, counts, lookups, maildir flags, moves
 * between new/ cur/ and hidden (cache_entry_update), and bringing hidden
 * ones back (cache_entry_unhide).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

/* ---- entries ---- */

void cache_key_id(unsigned char out[8], uint64_t id)
{
	int i;

	for (i = 7; i >= 0; i--) {      /* big-endian: a view's keys are adjacent */
		out[i] = (unsigned char)id;
		id >>= 8;
	}
}

int cache_key_name(unsigned char *key, size_t cap, MDB_val *k, uint64_t id,
		   const char *name)
{
	size_t n = strlen(name);

	if (!n || n > cap - 8)
		return ENAMETOOLONG;
	cache_key_id(key, id);
	memcpy(key + 8, name, n);
	k->mv_size = 8 + n;
	k->mv_data = key;
	return 0;
}

int cache_entry_decode(const MDB_val *k, const MDB_val *d, struct cache_entry *e)
{
	struct entry_rec r;

	if (k->mv_size != 8 + CACHE_OID_LEN || d->mv_size != sizeof(r))
		return EIO;
	memcpy(&r, d->mv_data, sizeof(r));
	memcpy(e->oid, (const char *)k->mv_data + 8, CACHE_OID_LEN);
	e->date = r.date;
	e->size = r.size;
	e->flags = r.flags;
	e->where = r.where;
	e->uid = r.uid;
	return 0;
}

static int entry_walk(cache_t *c, uint64_t id, int hidden,
		      int (*fn)(void *, const struct cache_entry *), void *arg);

int cache_entry_each(cache_t *c, uint64_t id,
		     int (*fn)(void *, const struct cache_entry *), void *arg)
{
	return entry_walk(c, id, 0, fn, arg);
}

int cache_hidden_each(cache_t *c, uint64_t id,
		      int (*fn)(void *, const struct cache_entry *), void *arg)
{
	return entry_walk(c, id, 1, fn, arg);
}

/* the entries of view id that are (hidden) or are not (!hidden) hidden */
static int entry_walk(cache_t *c, uint64_t id, int hidden,
		      int (*fn)(void *, const struct cache_entry *), void *arg)
{
	unsigned char pfx[8];
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, d;
	uint64_t n = 0;
	int rc, err = 0;

	cache_key_id(pfx, id);
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if ((rc = cache_cursor_open(txn, c->entry, &cur))) {
		cache_rd_end(txn);
		return rc;
	}
	k.mv_size = sizeof(pfx);
	k.mv_data = pfx;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size >= 8 && !memcmp(k.mv_data, pfx, 8)) {
		struct cache_entry e;

		if ((err = cache_entry_decode(&k, &d, &e)))
			break;
		if ((e.where == CACHE_HIDDEN) == !!hidden && (err = fn(arg, &e)))
			break;
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
		/* listings and .status counts walk every entry, often: unmap
		 * now and then (each time costs the pages' faults again) */
		if (++n % (16 * DROP_EVERY) == 0)
			cache_drop_mappings(c);
	}
	if (!err && rc && rc != ENOENT)
		err = rc;
	cache_cursor_close(cur);
	cache_rd_end(txn);
	return err;
}

int cache_entry_any(cache_t *c, uint64_t id, int *any)
{
	unsigned char pfx[8];
	MDB_val k = { sizeof(pfx), pfx }, d;
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc;

	*any = 0;
	cache_key_id(pfx, id);
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if (!(rc = cache_cursor_open(txn, c->entry, &cur))) {
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
		*any = !rc && k.mv_size >= 8 && !memcmp(k.mv_data, pfx, 8);
		cache_cursor_close(cur);
	}
	cache_rd_end(txn);
	return rc == ENOENT ? 0 : rc;
}

int cache_view_counts(cache_t *c, uint64_t id, struct cache_counts *out)
{
	struct count_rec r;
	MDB_txn *txn;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if (!(rc = cache_view_alive(c, txn, id, NULL)) &&
	    (rc = cache_count_get(c, txn, id, &r)) == ENOENT)
		rc = cache_count_walk(c, txn, id, &r);        /* cannot be after open */
	cache_rd_end(txn);
	if (rc)
		return rc;
	out->new_ = r.n[CACHE_NEW];
	out->cur = r.n[CACHE_CUR];
	out->hidden = r.n[CACHE_HIDDEN];
	return 0;
}

int cache_entry_count(cache_t *c, uint64_t id, uint64_t *out)
{
	struct cache_counts n;
	int err;

	*out = 0;
	if ((err = cache_view_counts(c, id, &n)))
		return err;
	*out = n.new_ + n.cur;
	return 0;
}

int cache_entry_get(cache_t *c, uint64_t id, const unsigned char *oid,
		    struct cache_entry *out)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key }, d;
	MDB_txn *txn;
	int rc, err;

	cache_key_id(key, id);
	memcpy(key + 8, oid, CACHE_OID_LEN);
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	rc = cache_errno(mdb_get(txn, c->entry, &k, &d));
	err = rc ? rc : cache_entry_decode(&k, &d, out);
	cache_rd_end(txn);
	/* no drop here: the kernel looks up every file a grep -r opens, and
	 * dropping from these lookups made grep -r of 200,000 files 3.7-4.5x
	 * tmpfs (tests/bench/README, 2026-12-07).  A grep's reads drop the
	 * map as they fill it; a stat-only walk (find, ls -l) drops only
	 * through readdir's, every 1,024 entries: an open gap of #26 */
	return err;
}

/* ---- flags ---- */

/* bit 0..5: D F P R S T (maildir's order), bit 6..31: a..z */
static const char flag_chars[] = "DFPRST";

int cache_flags_parse(const char *s, uint32_t *out)
{
	uint32_t f = 0;

	for (; *s; s++) {
		const char *p = strchr(flag_chars, *s);

		if (*s && p)
			f |= 1u << (p - flag_chars);
		else if (*s >= 'a' && *s <= 'z')
			f |= 1u << (6 + (*s - 'a'));
		else
			return EINVAL;
	}
	*out = f;
	return 0;
}

void cache_flags_format(uint32_t flags, char out[40])
{
	int i, o = 0;

	for (i = 0; i < 6; i++)
		if (flags & (1u << i))
			out[o++] = flag_chars[i];
	for (i = 0; i < 26; i++)
		if (flags & (1u << (6 + i)))
			out[o++] = (char)('a' + i);
	out[o] = '\0';
}

int cache_entry_update_txn(cache_t *c, MDB_txn *txn, uint64_t id, const unsigned char *oid,
			   int where, uint32_t flags, uint32_t uid, uint32_t *old)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key }, d;
	struct entry_rec r;
	int rc;

	cache_key_id(key, id);
	memcpy(key + 8, oid, CACHE_OID_LEN);
	if ((rc = cache_entry_read(c, txn, &k, &r)))
		return rc;
	if (old)
		*old = r.flags;
	if (where == CACHE_HIDDEN && r.where != CACHE_HIDDEN)
		r.was = r.where;
	if (r.where != where && r.where < 3 && where >= 0 && where < 3) {
		int64_t delta[3] = { 0 };

		delta[r.where]--;
		delta[where]++;
		if ((rc = cache_count_add(c, txn, id, delta)))
			return rc;
	}
	r.where = (uint8_t)where;
	r.flags = flags;
	r.uid = uid;
	d.mv_size = sizeof(r);
	d.mv_data = &r;
	return cache_errno(mdb_put(txn, c->entry, &k, &d, 0));
}

int cache_entry_update(cache_t *c, uint64_t id, const unsigned char *oid,
		       int where, uint32_t flags, uint32_t uid)
{
	MDB_txn *txn;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_entry_update_txn(c, txn, id, oid, where, flags, uid, NULL))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return cache_errno(mdb_txn_commit(txn));
}

struct unhide {
	const unsigned char *oid;
	unsigned char (*keys)[8 + CACHE_OID_LEN];
	size_t n, cap;
	int err;        /* why the walk stopped: EIO (a damaged record), ENOMEM */
};

/* the hidden entries to bring back (written after the walk: a walk's
 * values point into read-only pages) */
static enum walk unhide_one(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct unhide *u = arg;
	struct entry_rec r;

	if (d->mv_size != sizeof(r) || k->mv_size != 8 + CACHE_OID_LEN) {
		u->err = EIO;
		return WALK_STOP;
	}
	memcpy(&r, d->mv_data, sizeof(r));
	if (r.where != CACHE_HIDDEN ||
	    (u->oid && memcmp(u->oid, (const char *)k->mv_data + 8, CACHE_OID_LEN)))
		return WALK_KEEP;
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 64;
		void *t = realloc(u->keys, cap * sizeof(*u->keys));

		if (!t) {
			u->err = ENOMEM;
			return WALK_STOP;
		}
		u->keys = t;
		u->cap = cap;
	}
	memcpy(u->keys[u->n++], k->mv_data, 8 + CACHE_OID_LEN);
	return WALK_KEEP;
}

int cache_entry_unhide(cache_t *c, uint64_t id, const unsigned char *oid, uint64_t *n)
{
	struct unhide u = { oid, NULL, 0, 0, 0 };
	int64_t delta[3] = { 0 };
	MDB_txn *txn;
	size_t i;
	int rc;

	*n = 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_view_alive(c, txn, id, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->entry, id, unhide_one, &u)) ||
	    (rc = u.err))
		goto out;
	for (i = 0; i < u.n; i++) {
		MDB_val k = { 8 + CACHE_OID_LEN, u.keys[i] }, d;
		struct entry_rec r;

		if ((rc = cache_entry_read(c, txn, &k, &r)))
			goto out;
		/* back where it was (a record from before `was` says new/) */
		r.where = r.was == CACHE_CUR ? CACHE_CUR : CACHE_NEW;
		delta[CACHE_HIDDEN]--;
		delta[r.where]++;
		d.mv_size = sizeof(r);
		d.mv_data = &r;
		if ((rc = cache_errno(mdb_put(txn, c->entry, &k, &d, 0))))
			goto out;
	}
	if ((rc = cache_count_add(c, txn, id, delta)))
		goto out;
	rc = cache_errno(mdb_txn_commit(txn));
	txn = NULL;
	if (!rc)
		*n = u.n;
out:
	if (txn)
		mdb_txn_abort(txn);
	free(u.keys);
	return rc;
}

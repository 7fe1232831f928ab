/*
 * The series table: what views derive of a view's patch series, kept so
 * that series/ is not worked out again at every look.  Key view id (8,
 * big-endian) + a key of the caller's; the values are opaque here (their
 * layout is fs/view-series.c's).  Every record can be made again from the
 * view's messages: a write that fails loses nothing of the user's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

#define KEY_MAX 500     /* LMDB's key limit is 511 */

static int make_key(unsigned char *key, MDB_val *k, uint64_t id, const void *sub,
		    size_t len)
{
	if (len > KEY_MAX - 8)
		return ENAMETOOLONG;
	cache_key_id(key, id);
	if (len)
		memcpy(key + 8, sub, len);
	k->mv_size = 8 + len;
	k->mv_data = key;
	return 0;
}

int cache_series_write(cache_t *c, uint64_t id, const struct cache_series_rec *put,
		       size_t nput, const struct cache_series_rec *del, size_t ndel)
{
	unsigned char key[KEY_MAX], idkey[8];
	MDB_val k, d, ik = { sizeof(idkey), idkey };
	MDB_txn *txn;
	size_t i;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	/* nothing is written under a removed view */
	cache_key_id(idkey, id);
	if ((rc = cache_errno(mdb_get(txn, c->ids, &ik, &d))))
		goto fail;
	for (i = 0; i < ndel; i++) {
		if ((rc = make_key(key, &k, id, del[i].key, del[i].klen)))
			goto fail;
		if ((rc = cache_errno(mdb_del(txn, c->series, &k, NULL))) && rc != ENOENT)
			goto fail;
	}
	for (i = 0; i < nput; i++) {
		if ((rc = make_key(key, &k, id, put[i].key, put[i].klen)))
			goto fail;
		d.mv_size = put[i].vlen;
		d.mv_data = (void *)put[i].val;
		if ((rc = cache_errno(mdb_put(txn, c->series, &k, &d, 0))))
			goto fail;
	}
	rc = cache_errno(mdb_txn_commit(txn));
	cache_drop_mappings(c);
	return rc;
fail:
	mdb_txn_abort(txn);
	return rc;
}

int cache_series_get(cache_t *c, uint64_t id, const void *sub, size_t len,
		     void **val, size_t *vlen)
{
	unsigned char key[KEY_MAX];
	MDB_val k, d;
	MDB_txn *txn;
	int err;

	*val = NULL;
	*vlen = 0;
	if ((err = make_key(key, &k, id, sub, len)))
		return err;
	if ((err = cache_rd_begin(c, &txn)))
		return err;
	if (!(err = cache_errno(mdb_get(txn, c->series, &k, &d)))) {
		/* one byte more, so that a text may be used as a string */
		if (!(*val = malloc(d.mv_size + 1))) {
			err = ENOMEM;
		} else {
			memcpy(*val, d.mv_data, d.mv_size);
			((char *)*val)[d.mv_size] = '\0';
			*vlen = d.mv_size;
		}
	}
	cache_rd_end(txn);
	if (atomic_fetch_add(&c->gets, 1) % (4 * DROP_EVERY) == 4 * DROP_EVERY - 1)
		cache_drop_mappings(c);
	return err;
}

struct fixed_part {
	size_t voff, vlen;
};

static int fixed_place(const void *val, size_t len, void *arg, size_t *voff, size_t *vlen)
{
	struct fixed_part *f = arg;

	(void)val;
	(void)len;
	*voff = f->voff;
	*vlen = f->vlen;
	return 0;
}

int cache_series_read(cache_t *c, uint64_t id, const void *sub, size_t len,
		      size_t voff, size_t vlen, off_t off, size_t size, char *buf,
		      size_t *n)
{
	struct fixed_part f = { voff, vlen };

	return cache_series_read_placed(c, id, sub, len, fixed_place, &f, off, size, buf, n);
}

int cache_series_read_placed(cache_t *c, uint64_t id, const void *sub, size_t len,
			     int (*place)(const void *val, size_t len, void *arg, size_t *voff,
					  size_t *vlen),
			     void *arg, off_t off, size_t size, char *buf, size_t *n)
{
	unsigned char key[KEY_MAX];
	size_t voff = 0, vlen = 0;
	MDB_val k, d;
	MDB_txn *txn;
	int err;

	*n = 0;
	if ((err = make_key(key, &k, id, sub, len)))
		return err;
	if ((err = cache_rd_begin(c, &txn)))
		return err;
	if (!(err = cache_errno(mdb_get(txn, c->series, &k, &d))) &&
	    !(err = place(d.mv_data, d.mv_size, arg, &voff, &vlen))) {
		if (voff > d.mv_size || vlen > d.mv_size - voff)
			err = EIO;
		else if (off >= 0 && (size_t)off < vlen) {
			*n = vlen - (size_t)off < size ? vlen - (size_t)off : size;
			memcpy(buf, (char *)d.mv_data + voff + off, *n);
		}
	}
	cache_rd_end(txn);
	/* as message reads: pages leave the resident set every few hundred
	 * reads, not at each (that made each read fault its pages again) */
	if (atomic_fetch_add(&c->gets, 1) % (4 * DROP_EVERY) == 4 * DROP_EVERY - 1)
		cache_drop_mappings(c);
	return err;
}

int cache_series_each(cache_t *c, uint64_t id, const void *prefix, size_t plen,
		      int (*fn)(void *arg, const void *key, size_t klen, const void *val,
				size_t vlen),
		      void *arg)
{
	unsigned char key[KEY_MAX];
	MDB_cursor *cur;
	MDB_val k, d, p;
	MDB_txn *txn;
	uint64_t n = 0;
	int rc, err = 0;

	if ((rc = make_key(key, &p, id, prefix, plen)))
		return rc;
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if ((rc = cache_cursor_open(txn, c->series, &cur))) {
		cache_rd_end(txn);
		return rc;
	}
	k = p;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size >= p.mv_size && !memcmp(k.mv_data, p.mv_data, p.mv_size)) {
		if ((err = fn(arg, (char *)k.mv_data + 8, k.mv_size - 8, d.mv_data, d.mv_size)))
			break;
		if (++n % DROP_EVERY == 0)
			cache_drop_mappings(c);
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
	}
	cache_cursor_close(cur);
	cache_rd_end(txn);
	cache_drop_mappings(c);
	if (err)
		return err;
	return rc == ENOENT ? 0 : rc;
}

int cache_series_drop(cache_t *c, MDB_txn *txn, uint64_t id)
{
	return cache_walk_prefix(c, txn, c->series, id, cache_walk_drop, NULL);
}

/* Message bytes: one record per oid, shared by every view that holds it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

int cache_msg_read(cache_t *c, const unsigned char *oid, off_t off,
		   size_t size, char *buf, size_t *n)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d;
	MDB_txn *txn;
	size_t len;
	int rc;

	*n = 0;
	if ((rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn)))
		return cache_errno(rc);
	if ((rc = mdb_get(txn, c->msg, &k, &d))) {
		mdb_txn_abort(txn);
		return cache_errno(rc);
	}
	if (d.mv_size < sizeof(struct msg_rec)) {
		mdb_txn_abort(txn);
		return EIO;
	}
	len = d.mv_size - sizeof(struct msg_rec);
	if (off >= 0 && (size_t)off < len) {
		*n = len - (size_t)off < size ? len - (size_t)off : size;
		/* the value lives in the map only while txn does: copy now */
		memcpy(buf, (const char *)d.mv_data + sizeof(struct msg_rec) + off, *n);
	}
	mdb_txn_abort(txn);
	return 0;
}

int cache_msg_get(cache_t *c, const unsigned char *oid, char **raw, size_t *len)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d;
	MDB_txn *txn;
	int rc;

	*raw = NULL;
	*len = 0;
	if ((rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn)))
		return cache_errno(rc);
	if ((rc = mdb_get(txn, c->msg, &k, &d))) {
		mdb_txn_abort(txn);
		return cache_errno(rc);
	}
	if (d.mv_size < sizeof(struct msg_rec)) {
		mdb_txn_abort(txn);
		return EIO;
	}
	*len = d.mv_size - sizeof(struct msg_rec);
	/* the value lives in the map only while txn does: copy now */
	if (!(*raw = malloc(*len ? *len : 1))) {
		mdb_txn_abort(txn);
		return ENOMEM;
	}
	memcpy(*raw, (const char *)d.mv_data + sizeof(struct msg_rec), *len);
	mdb_txn_abort(txn);
	/* whole messages read one after another (indexing, local hits):
	 * keep the resident set flat, as batch lookups do */
	if (atomic_fetch_add(&c->gets, 1) % DROP_EVERY == DROP_EVERY - 1)
		cache_drop_mappings(c);
	return 0;
}

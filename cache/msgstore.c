/* Message bytes: one record per oid, shared by every view that holds it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

/* a message whose pages are unmapped as soon as it has been read */
#define BIG_VALUE (1u << 20)

/* The raw bytes of oid in a new read transaction: *txn stays open for the
 * caller to copy them out and abort; nothing is left open on error. */
static int msg_lookup(cache_t *c, const unsigned char *oid, MDB_txn **txn,
		      const char **raw, size_t *len)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d;
	int rc;

	if ((rc = cache_rd_begin(c, txn)))
		return rc;
	if ((rc = cache_errno(mdb_get(*txn, c->msg, &k, &d))) ||
	    d.mv_size < sizeof(struct msg_rec)) {
		cache_rd_end(*txn);
		return rc ? rc : EIO;
	}
	*raw = (const char *)d.mv_data + sizeof(struct msg_rec);
	*len = d.mv_size - sizeof(struct msg_rec);
	return 0;
}

int cache_msg_read(cache_t *c, const unsigned char *oid, off_t off,
		   size_t size, char *buf, size_t *n)
{
	MDB_txn *txn;
	const char *raw;
	size_t len;
	int err;

	*n = 0;
	if ((err = msg_lookup(c, oid, &txn, &raw, &len)))
		return err;
	if (off >= 0 && (size_t)off < len) {
		*n = len - (size_t)off < size ? len - (size_t)off : size;
		/* the value lives in the map only while txn does: copy now */
		memcpy(buf, raw + off, *n);
	}
	cache_rd_end(txn);
	/* pages read leave the resident set: at the end of a big message,
	 * and every few hundred reads (a grep -r over a 200k-message view
	 * kept the whole file mapped, 400 MiB) */
	if ((len >= BIG_VALUE && (size_t)off + *n >= len) ||
	    atomic_fetch_add(&c->gets, 1) % (4 * DROP_EVERY) == 4 * DROP_EVERY - 1)
		cache_drop_mappings(c);
	return 0;
}

int cache_msg_get(cache_t *c, const unsigned char *oid, char **out, size_t *len)
{
	MDB_txn *txn;
	const char *raw;
	int err;

	*out = NULL;
	*len = 0;
	if ((err = msg_lookup(c, oid, &txn, &raw, len)))
		return err;
	if ((*out = malloc(*len ? *len : 1)))
		memcpy(*out, raw, *len);
	cache_rd_end(txn);
	if (!*out)
		return ENOMEM;
	/* whole messages read one after another (indexing, local hits):
	 * keep the resident set flat, as batch lookups do */
	if (atomic_fetch_add(&c->gets, 1) % DROP_EVERY == DROP_EVERY - 1 ||
	    *len >= BIG_VALUE)
		cache_drop_mappings(c);
	return 0;
}

int cache_msg_size(cache_t *c, const unsigned char *oid, size_t *len)
{
	MDB_txn *txn;
	const char *raw;
	int err;

	*len = 0;
	if ((err = msg_lookup(c, oid, &txn, &raw, len)))
		return err;
	cache_rd_end(txn);
	return 0;
}

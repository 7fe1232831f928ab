/*
 * A view's holder (cache.h): the messages its series/ fetched beyond what
 * the view holds (the rest of a thread it has part of).  They are held as
 * an archive's are (sources.c): entries under a source record of their
 * own, spec "series:<view id>" (never a source a view can name: those are
 * URLs and absolute paths), so references, --check and removal need
 * nothing new; the view's removal drops it in the same transaction.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

void cache_holder_spec(uint64_t view, char out[40])
{
	snprintf(out, 40, "series:%" PRIu64, view);
}

int cache_holder_get(cache_t *c, uint64_t view, int make, struct cache_source *out)
{
	char spec[40];
	MDB_txn *txn;
	uint64_t id;
	int rc, err;

	cache_holder_spec(view, spec);
	if ((err = cache_source_get(c, spec, out)) != ENOENT || !make)
		return err;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	/* made only for a view that is there: its removal drops it, so one
	 * made after would be held by nothing */
	if ((err = cache_view_alive(c, txn, view, NULL)) ||
	    ((err = cache_source_get_txn(c, txn, spec, out)) != ENOENT))
		goto out;
	if ((err = cache_next_id(c, txn, &id)) ||
	    (err = cache_source_store(c, txn, spec, id, time(NULL), "", 0)) ||
	    (err = cache_source_get_txn(c, txn, spec, out)))
		goto out;
	if ((err = cache_errno(mdb_txn_commit(txn))))
		cache_source_release(out);
	return err;
out:
	mdb_txn_abort(txn);
	return err;
}

int cache_holder_forget(cache_t *c, const struct cache_source *s, const unsigned char *oids,
			size_t n)
{
	unsigned char key[8 + CACHE_OID_LEN];
	MDB_val k = { sizeof(key), key };
	MDB_txn *txn;
	size_t i;
	int rc;

	if (!n)
		return 0;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_source_alive(c, txn, s->spec, s->id)))
		goto out;
	cache_key_id(key, s->id);
	for (i = 0; i < n; i++) {
		memcpy(key + 8, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		rc = cache_errno(mdb_del(txn, c->entry, &k, NULL));
		if (rc == ENOENT)
			continue;       /* forgotten already */
		if (rc || (rc = cache_ref(c, txn, oids + i * CACHE_OID_LEN, -1)))
			goto out;
	}
	return cache_errno(mdb_txn_commit(txn));
out:
	mdb_txn_abort(txn);
	return rc == ENOENT ? 0 : rc;   /* the view went meanwhile: nothing to do */
}

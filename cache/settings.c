/*
 * The settings table: view id -> the text of the view's .config, as
 * written (fs/settings.c checked it; the cache keeps it opaque), and when
 * it was stored (.config's mtime across remounts).  One record per view
 * at most, removed with the view (cache_view_delete).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

int cache_settings_store(cache_t *c, MDB_txn *txn, uint64_t id, int64_t mtime,
			 const char *text, size_t len)
{
	struct settings_rec r = { .mtime = mtime };
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d = { sizeof(r) + len, NULL };
	int rc;

	cache_key_id(key, id);
	if ((rc = cache_errno(mdb_put(txn, c->settings, &k, &d, MDB_RESERVE))))
		return rc;
	memcpy(d.mv_data, &r, sizeof(r));
	memcpy((char *)d.mv_data + sizeof(r), text, len);
	return 0;
}

int cache_settings_get(cache_t *c, uint64_t id, char **text, size_t *len, int64_t *mtime)
{
	struct settings_rec r;
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d;
	MDB_txn *txn;
	int rc, err = 0;

	if (text)
		*text = NULL;
	if ((err = cache_migrate_config(c, id)))
		return err;
	cache_key_id(key, id);
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->settings, &k, &d)))) {
		err = rc;
	} else if (d.mv_size < sizeof(r)) {
		err = EIO;
	} else {
		memcpy(&r, d.mv_data, sizeof(r));
		if (len)
			*len = d.mv_size - sizeof(r);
		if (mtime)
			*mtime = r.mtime;
		if (text && !(*text = malloc(d.mv_size - sizeof(r) + 1))) {
			err = ENOMEM;
		} else if (text) {
			memcpy(*text, (char *)d.mv_data + sizeof(r), d.mv_size - sizeof(r));
			(*text)[d.mv_size - sizeof(r)] = '\0';
		}
	}
	cache_rd_end(txn);
	return err;
}

int cache_settings_put(cache_t *c, uint64_t id, const char *text, size_t len)
{
	MDB_txn *txn;
	int err;

	if (len > CACHE_SETTINGS_MAX)
		return EFBIG;
	if ((err = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return err;
	/* never settings under a removed view */
	if (!(err = cache_view_alive(c, txn, id, NULL)))
		err = cache_settings_store(c, txn, id, (int64_t)time(NULL), text, len);
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return cache_errno(mdb_txn_commit(txn));
}

int cache_settings_remove(cache_t *c, uint64_t id)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key };
	MDB_txn *txn;
	int rc;

	cache_key_id(key, id);
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if ((rc = cache_errno(mdb_del(txn, c->settings, &k, NULL)))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return cache_errno(mdb_txn_commit(txn));
}

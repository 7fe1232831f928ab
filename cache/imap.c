/*
 * The IMAP delivery tables (fs/view-imap.c delivers, this remembers):
 *   imap        view id (8, big-endian) + folder URL + '\0' + oid -> one
 *               byte, CACHE_IMAP_PENDING (an APPEND may have happened) or
 *               CACHE_IMAP_DONE (it did)
 *   imapfolder  view id + folder URL -> the folder's UIDVALIDITY (uint32)
 * A new UIDVALIDITY drops the folder's delivery records in the same
 * transaction, so that the whole view is delivered again.  Both are
 * removed with the view (cache_view_delete).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

/* view id + url + '\0' [+ oid]; malloc'd, *len set */
static unsigned char *make_key(uint64_t id, const char *url, const unsigned char *oid,
			       size_t *len)
{
	size_t ul = strlen(url) + 1;
	unsigned char *k = malloc(8 + ul + CACHE_OID_LEN);

	if (!k)
		return NULL;
	cache_key_id(k, id);
	memcpy(k + 8, url, ul);
	*len = 8 + ul;
	if (oid) {
		memcpy(k + 8 + ul, oid, CACHE_OID_LEN);
		*len += CACHE_OID_LEN;
	}
	return k;
}

struct prefix {
	const unsigned char *key;
	size_t len;
};

static enum walk drop_prefixed(void *arg, const MDB_val *k, const MDB_val *d)
{
	const struct prefix *p = arg;

	(void)d;
	return !p || (k->mv_size >= p->len && !memcmp(k->mv_data, p->key, p->len)) ?
	       WALK_DROP : WALK_KEEP;
}

/* drop every delivery record of (id, url); an errno */
static int drop_folder(cache_t *c, MDB_txn *txn, uint64_t id, const char *url)
{
	struct prefix p;
	unsigned char *key = make_key(id, url, NULL, &p.len);
	int rc;

	if (!key)
		return ENOMEM;
	p.key = key;
	rc = cache_walk_prefix(c, txn, c->imap, id, drop_prefixed, &p);
	free(key);
	return rc;
}

int cache_imap_folder(cache_t *c, uint64_t id, const char *url, uint32_t uidvalidity,
		      int fresh, int *changed)
{
	MDB_txn *txn;
	MDB_val k, d;
	size_t klen;
	unsigned char *key = make_key(id, url, NULL, &klen);
	uint32_t old = 0;
	int rc, err;

	*changed = 0;
	if (!key)
		return ENOMEM;
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	if ((err = cache_view_alive(c, txn, id, NULL)))
		goto fail;
	k.mv_size = klen;
	k.mv_data = key;
	rc = mdb_get(txn, c->imapfolder, &k, &d);
	if (!rc && d.mv_size == sizeof(old))
		memcpy(&old, d.mv_data, sizeof(old));
	else if (rc && rc != MDB_NOTFOUND)
		goto fail_rc;
	if (!rc && old == uidvalidity && !fresh) {
		mdb_txn_abort(txn);
		free(key);
		return 0;
	}
	*changed = !rc;         /* a folder made anew, not a first delivery */
	if (rc == MDB_NOTFOUND)
		rc = 0;
	d.mv_size = sizeof(uidvalidity);
	d.mv_data = &uidvalidity;
	if ((rc = drop_folder(c, txn, id, url)) ||
	    (rc = mdb_put(txn, c->imapfolder, &k, &d, 0)))
		goto fail_rc;
	free(key);
	return cache_errno(mdb_txn_commit(txn));
fail_rc:
	err = rc == ENOMEM ? ENOMEM : cache_errno(rc);
fail:
	mdb_txn_abort(txn);
	free(key);
	return err;
}

int cache_imap_states(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		      size_t n, unsigned char *states)
{
	MDB_txn *txn;
	MDB_val k, d;
	size_t klen, i;
	unsigned char *key = make_key(id, url, oids, &klen);
	int rc, err = 0;

	if (!key)
		return ENOMEM;
	if ((rc = cache_rd_begin(c, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	k.mv_size = klen;
	k.mv_data = key;
	for (i = 0; i < n; i++) {
		memcpy(key + klen - CACHE_OID_LEN, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		rc = mdb_get(txn, c->imap, &k, &d);
		if (rc == MDB_NOTFOUND) {
			states[i] = 0;
		} else if (rc || d.mv_size != 1) {
			err = rc ? cache_errno(rc) : EIO;
			break;
		} else {
			states[i] = *(unsigned char *)d.mv_data;
		}
	}
	cache_rd_end(txn);
	free(key);
	return err;
}

int cache_imap_mark(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		    size_t n, unsigned char state)
{
	MDB_txn *txn;
	MDB_val k, d;
	size_t klen, i;
	unsigned char *key = make_key(id, url, oids, &klen);
	int rc = 0, err;

	if (!key)
		return ENOMEM;
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn))) {
		free(key);
		return cache_errno(rc);
	}
	/* never records under a removed view */
	if ((err = cache_view_alive(c, txn, id, NULL)))
		goto fail;
	k.mv_size = klen;
	k.mv_data = key;
	for (i = 0; i < n; i++) {
		memcpy(key + klen - CACHE_OID_LEN, oids + i * CACHE_OID_LEN, CACHE_OID_LEN);
		d.mv_size = 1;
		d.mv_data = &state;
		if ((rc = mdb_put(txn, c->imap, &k, &d, 0))) {
			err = cache_errno(rc);
			goto fail;
		}
	}
	free(key);
	return cache_errno(mdb_txn_commit(txn));
fail:
	mdb_txn_abort(txn);
	free(key);
	return err;
}

int cache_imap_count(cache_t *c, uint64_t id, const char *url, uint64_t *done)
{
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	MDB_val k, d;
	size_t plen;
	unsigned char *prefix = make_key(id, url, NULL, &plen);
	int rc;

	*done = 0;
	if (!prefix)
		return ENOMEM;
	if ((rc = cache_rd_begin(c, &txn))) {
		free(prefix);
		return cache_errno(rc);
	}
	if ((rc = mdb_cursor_open(txn, c->imap, &cur)))
		goto out;
	k.mv_size = plen;
	k.mv_data = prefix;
	for (rc = mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE);
	     !rc && k.mv_size >= plen && !memcmp(k.mv_data, prefix, plen);
	     rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT))
		if (d.mv_size == 1 && *(unsigned char *)d.mv_data == CACHE_IMAP_DONE)
			(*done)++;
	if (rc == MDB_NOTFOUND)
		rc = 0;
	mdb_cursor_close(cur);
out:
	cache_rd_end(txn);
	free(prefix);
	return cache_errno(rc);
}

int cache_imap_drop_view(cache_t *c, MDB_txn *txn, uint64_t id)
{
	int rc;

	if ((rc = cache_walk_prefix(c, txn, c->imap, id, drop_prefixed, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->imapfolder, id, drop_prefixed, NULL)))
		return rc;
	return 0;
}

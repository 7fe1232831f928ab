/*
 * The sources table: a local archive's record, by its spec (the path a
 * view names), with the position its next import resumes at.
 *
 * An archive's messages must stay in the store while the archive is
 * imported, whether or not a view holds them.  They are held as a view's
 * are: by entries, under an id of the source's own, taken from the views'
 * id counter so that it is never a view's.  So there is one way for a
 * message to be held (a reference per entry, cache_ref) that ingest
 * batches, --check and removal already keep right, rather than a second
 * count of holders to keep beside it; and since the id is in no views or
 * ids record, no walk of the views meets a source.  Entries under a source
 * id are its and nothing else: no counters, files, bookmarks or settings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

/* LMDB's key limit (511 bytes by default, mdb_env_get_maxkeysize): an
 * older cache's "\001source SPEC" view names held specs of up to 503 */
#define SPEC_MAX 511

static int spec_key(const char *spec, MDB_val *k)
{
	size_t n = strlen(spec);

	if (!n || n > SPEC_MAX)
		return ENAMETOOLONG;
	k->mv_size = n;
	k->mv_data = (void *)spec;
	return 0;
}

void cache_source_release(struct cache_source *s)
{
	free(s->spec);
	free(s->position);
	memset(s, 0, sizeof(*s));
}

static int decode(const MDB_val *k, const MDB_val *d, struct cache_source *s)
{
	struct source_rec r;

	if (d->mv_size < sizeof(r))
		return EIO;
	memcpy(&r, d->mv_data, sizeof(r));
	memset(s, 0, sizeof(*s));
	s->id = r.id;
	s->created = r.created;
	s->spec = strndup(k->mv_data, k->mv_size);
	s->position = strndup((const char *)d->mv_data + sizeof(r), d->mv_size - sizeof(r));
	if (!s->spec || !s->position) {
		cache_source_release(s);
		return ENOMEM;
	}
	return 0;
}

int cache_source_store(cache_t *c, MDB_txn *txn, const char *spec, uint64_t id,
		       int64_t created, const char *pos, size_t plen)
{
	struct source_rec r = { .id = id, .created = created };
	MDB_val k, d = { sizeof(r) + plen, NULL };
	int rc;

	if ((rc = spec_key(spec, &k)))
		return rc;
	if ((rc = cache_errno(mdb_put(txn, c->sources, &k, &d, MDB_RESERVE))))
		return rc;
	memcpy(d.mv_data, &r, sizeof(r));
	memcpy((char *)d.mv_data + sizeof(r), pos, plen);
	return 0;
}

int cache_source_get_txn(cache_t *c, MDB_txn *txn, const char *spec, struct cache_source *out)
{
	MDB_val k, d;
	int rc;

	if ((rc = spec_key(spec, &k)))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->sources, &k, &d))))
		return rc;
	return decode(&k, &d, out);
}

int cache_source_alive(cache_t *c, MDB_txn *txn, const char *spec, uint64_t id)
{
	struct cache_source s;
	int err = cache_source_get_txn(c, txn, spec, &s);

	if (err)
		return err;
	if (s.id != id)
		err = ENOENT;   /* removed and made anew */
	cache_source_release(&s);
	return err;
}

int cache_source_drop(cache_t *c, MDB_txn *txn, const char *spec)
{
	struct cache_source s;
	MDB_val k;
	int rc;

	if ((rc = cache_source_get_txn(c, txn, spec, &s)))
		return rc == ENOENT ? 0 : rc;
	if (!(rc = cache_entries_drop(c, txn, s.id)) && !(rc = spec_key(spec, &k)))
		rc = cache_errno(mdb_del(txn, c->sources, &k, NULL));
	cache_source_release(&s);
	return rc;
}

int cache_source_get(cache_t *c, const char *spec, struct cache_source *out)
{
	MDB_txn *txn;
	int rc, err;

	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	err = cache_source_get_txn(c, txn, spec, out);
	cache_rd_end(txn);
	return err;
}

int cache_source_add(cache_t *c, const char *spec, struct cache_source *out)
{
	MDB_txn *txn;
	uint64_t id;
	int rc, err;

	/* the usual case, a source recorded already, takes no writer's turn */
	if ((err = cache_source_get(c, spec, out)) != ENOENT)
		return err;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	err = cache_source_get_txn(c, txn, spec, out);
	if (err == ENOENT) {
		if ((rc = cache_next_id(c, txn, &id)) ||
		    (rc = cache_source_store(c, txn, spec, id, time(NULL), "", 0)))
			err = rc;
		else
			err = cache_source_get_txn(c, txn, spec, out);
		if (!err) {
			if ((err = cache_errno(mdb_txn_commit(txn))))
				cache_source_release(out);
			return err;
		}
	} else if (!err) {
		/* another thread recorded it since the read above */
		mdb_txn_abort(txn);
		return 0;
	}
	mdb_txn_abort(txn);
	return err;
}

int cache_source_set_position(cache_t *c, const char *spec, uint64_t id, const char *pos)
{
	struct cache_source s;
	MDB_txn *txn;
	int rc, err;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if (!(err = cache_source_get_txn(c, txn, spec, &s))) {
		if (s.id != id)
			err = ENOENT;   /* removed meanwhile: its import counts for nothing */
		else
			err = cache_source_store(c, txn, spec, id, s.created, pos, strlen(pos));
		cache_source_release(&s);
	}
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return cache_errno(mdb_txn_commit(txn));
}

int cache_source_remove(cache_t *c, const char *spec)
{
	MDB_txn *txn;
	MDB_val k, d;
	int rc;

	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	if (!(rc = spec_key(spec, &k)) && !(rc = cache_errno(mdb_get(txn, c->sources, &k, &d))))
		rc = cache_source_drop(c, txn, spec);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	rc = cache_errno(mdb_txn_commit(txn));
	cache_drop_mappings(c);         /* the walk touched every entry */
	return rc;
}

int cache_source_each(cache_t *c, int (*fn)(void *arg, const struct cache_source *s),
		      void *arg)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc, err = 0;

	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	if ((rc = cache_cursor_open(txn, c->sources, &cur))) {
		cache_rd_end(txn);
		return rc;
	}
	while (!err && !(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		struct cache_source s;

		if ((err = decode(&k, &d, &s)))
			break;
		err = fn(arg, &s);
		cache_source_release(&s);
	}
	if (!err && rc != ENOENT)
		err = rc;
	cache_cursor_close(cur);
	cache_rd_end(txn);
	return err;
}

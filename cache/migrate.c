/*
 * Caches of an older layout brought to this one at cache_open, inside its
 * one write transaction: a failure aborts it, leaving the cache as it was
 * (and the mount fails, saying why), never half moved.
 *
 * Before the sources and settings tables:
 *  - a local archive was a view named "\001source SPEC" whose entries held
 *    the archive's messages, with its import position in a client file
 *    "position" of that view.  It becomes a source record with the same
 *    id, so its entries (and the messages' reference counts) stay as they
 *    are; its view, id and counters records and its files go.
 *  - a view's .config was a client file ".config" of the view.  It becomes
 *    the view's settings record, with the time it was stored.
 * A record too short to read is left where it is (it is not a view's or
 * a listing's: see cache_view_each, fs-dir.c) rather than failing the
 * mount: it cost the old leifs only that record too.
 *
 * The whole move runs for a cache without the sources table (store.c): a
 * cache of today is not walked at open, so that a damaged page waits for
 * its reader (a view's EIO) rather than failing the mount.  An older
 * leifs run on the cache after this one writes its old records again;
 * they are moved when seen, the newer winning over what was moved before:
 *  - an archive's view: one seek at every open finds it
 *    (cache_migrate_leftovers);
 *  - a .config client file: when the view's settings are read
 *    (cache_migrate_config, from cache_settings_get).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"

#define OLD_SOURCE "\001source "
#define OLD_POSITION "position"
#define OLD_CONFIG ".config"

struct old {
	char *name;             /* the view's name, or NULL for a .config */
	uint64_t id;
	int64_t created;        /* or the .config's mtime */
	char *data;             /* the position or the .config text */
	size_t len;
};

struct olds {
	struct old *v;
	size_t n, cap;
};

static void olds_free(struct olds *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->v[i].name);
		free(o->v[i].data);
	}
	free(o->v);
}

static struct old *olds_add(struct olds *o)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;
		struct old *t = realloc(o->v, cap * sizeof(*t));

		if (!t)
			return NULL;
		o->v = t;
		o->cap = cap;
	}
	memset(&o->v[o->n], 0, sizeof(o->v[0]));
	return &o->v[o->n++];
}

/* the old archive views, copied out (values of a write transaction may
 * move at its next write) */
static int find_sources(cache_t *c, MDB_txn *txn, struct olds *o)
{
	MDB_cursor *cur;
	MDB_val k = { sizeof(OLD_SOURCE) - 1, OLD_SOURCE }, d;
	int rc;

	if ((rc = cache_cursor_open(txn, c->view, &cur)))
		return rc;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size > sizeof(OLD_SOURCE) - 1 &&
	       !memcmp(k.mv_data, OLD_SOURCE, sizeof(OLD_SOURCE) - 1)) {
		struct view_rec r;
		struct old *s;

		if (d.mv_size < sizeof(r)) {
			rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
			continue;       /* unreadable: left as it is */
		}
		memcpy(&r, d.mv_data, sizeof(r));
		if (!(s = olds_add(o)) || !(s->name = strndup(k.mv_data, k.mv_size))) {
			rc = ENOMEM;
			break;
		}
		s->id = r.id;
		s->created = r.created;
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* client file `name` of view id, copied into s->data (none: left NULL) */
static int read_file(cache_t *c, MDB_txn *txn, uint64_t id, const char *name,
		     struct old *s, int64_t *mtime)
{
	unsigned char key[8 + 64];
	struct file_rec fr;
	MDB_val k, d;
	int rc;

	if ((rc = cache_key_name(key, sizeof(key), &k, id, name)))
		return rc;
	if ((rc = cache_errno(mdb_get(txn, c->files, &k, &d))))
		return rc == ENOENT ? 0 : rc;
	if (d.mv_size < sizeof(fr))
		return 0;       /* unreadable: none (an import starts over, harmless) */
	memcpy(&fr, d.mv_data, sizeof(fr));
	if (mtime)
		*mtime = fr.mtime;
	s->len = d.mv_size - sizeof(fr);
	if (!(s->data = malloc(s->len + 1)))
		return ENOMEM;
	memcpy(s->data, (char *)d.mv_data + sizeof(fr), s->len);
	return 0;
}

static int move_source(cache_t *c, MDB_txn *txn, struct old *s, char *why, size_t whylen)
{
	const char *spec = s->name + sizeof(OLD_SOURCE) - 1;
	unsigned char idkey[8];
	MDB_val k = { strlen(s->name), s->name }, ik = { sizeof(idkey), idkey };
	int rc;

	if ((rc = read_file(c, txn, s->id, OLD_POSITION, s, NULL)))
		goto fail;
	/* a source recorded already (this leifs, then an older one that made
	 * the view anew): the view is the newer, its import wins */
	cache_key_id(idkey, s->id);
	if ((rc = cache_source_alive(c, txn, spec, s->id)) && rc != ENOENT)
		goto fail;
	if ((rc == ENOENT && (rc = cache_source_drop(c, txn, spec))) ||
	    (rc = cache_source_store(c, txn, spec, s->id, s->created,
				     s->data ? s->data : "", s->data ? s->len : 0)) ||
	    (rc = cache_errno(mdb_del(txn, c->view, &k, NULL))) ||
	    ((rc = cache_errno(mdb_del(txn, c->ids, &ik, NULL))) && rc != ENOENT) ||
	    ((rc = cache_errno(mdb_del(txn, c->counts, &ik, NULL))) && rc != ENOENT) ||
	    (rc = cache_walk_prefix(c, txn, c->files, s->id, cache_walk_drop, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->marks, s->id, cache_walk_drop, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->away, s->id, cache_walk_drop, NULL)) ||
	    (rc = cache_walk_prefix(c, txn, c->dedupe, s->id, cache_walk_drop, NULL)))
		goto fail;
	return 0;
fail:
	/* the reason first: a spec may fill the line */
	snprintf(why, whylen, "%s, moving the record of local archive %s",
		 strerror(rc), spec);
	return rc;
}

/* the old .config files, copied out */
static int find_configs(cache_t *c, MDB_txn *txn, struct olds *o)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_cursor_open(txn, c->files, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		const unsigned char *p = k.mv_data;
		struct file_rec fr;
		struct old *s;
		int i;

		if (k.mv_size != 8 + sizeof(OLD_CONFIG) - 1 ||
		    memcmp(p + 8, OLD_CONFIG, sizeof(OLD_CONFIG) - 1))
			continue;
		if (d.mv_size < sizeof(fr))
			continue;       /* unreadable: left as it is */
		memcpy(&fr, d.mv_data, sizeof(fr));
		if (!(s = olds_add(o)) || !(s->data = malloc(d.mv_size - sizeof(fr) + 1))) {
			rc = ENOMEM;
			break;
		}
		for (i = 0; i < 8; i++)
			s->id = s->id << 8 | p[i];
		s->created = fr.mtime;
		s->len = d.mv_size - sizeof(fr);
		memcpy(s->data, (char *)d.mv_data + sizeof(fr), s->len);
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

static int move_config(cache_t *c, MDB_txn *txn, struct old *s, char *why, size_t whylen)
{
	unsigned char key[8 + sizeof(OLD_CONFIG)];
	MDB_val k;
	int rc;

	if ((rc = cache_key_name(key, sizeof(key), &k, s->id, OLD_CONFIG)) ||
	    (rc = cache_settings_store(c, txn, s->id, s->created, s->data, s->len)) ||
	    (rc = cache_errno(mdb_del(txn, c->files, &k, NULL)))) {
		snprintf(why, whylen, "%s, moving the .config of view %llu",
			 strerror(rc), (unsigned long long)s->id);
		return rc;
	}
	return 0;
}

int cache_migrate(cache_t *c, MDB_txn *txn, char *why, size_t whylen)
{
	struct olds srcs = { 0 }, cfgs = { 0 };
	size_t i;
	int rc;

	/* the archives first: their views' files go with them */
	if ((rc = find_sources(c, txn, &srcs))) {
		snprintf(why, whylen, "%s, reading the records of local archives",
			 strerror(rc));
		goto out;
	}
	for (i = 0; i < srcs.n; i++)
		if ((rc = move_source(c, txn, &srcs.v[i], why, whylen)))
			goto out;
	if ((rc = find_configs(c, txn, &cfgs))) {
		snprintf(why, whylen, "%s, reading the views' .config files",
			 strerror(rc));
		goto out;
	}
	for (i = 0; i < cfgs.n; i++)
		if ((rc = move_config(c, txn, &cfgs.v[i], why, whylen)))
			goto out;
out:
	olds_free(&srcs);
	olds_free(&cfgs);
	return rc;
}

int cache_migrate_leftovers(cache_t *c)
{
	MDB_cursor *cur;
	MDB_val k = { sizeof(OLD_SOURCE) - 1, OLD_SOURCE }, d;
	MDB_txn *txn;
	char why[512];
	int rc, found;

	/* a read transaction of its own: an error reading a damaged page
	 * fails that transaction, never a writer's, and the mount goes on
	 * (its reader will say EIO) */
	if (cache_rd_begin(c, &txn))
		return 0;
	if ((rc = cache_cursor_open(txn, c->view, &cur))) {
		cache_rd_end(txn);
		return 0;
	}
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	found = !rc && k.mv_size > sizeof(OLD_SOURCE) - 1 &&
		!memcmp(k.mv_data, OLD_SOURCE, sizeof(OLD_SOURCE) - 1);
	cache_cursor_close(cur);
	cache_rd_end(txn);
	if (!found || cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn)))
		return 0;
	/* all or nothing; a move that fails leaves the old records unseen */
	if (cache_migrate(c, txn, why, sizeof(why))) {
		mdb_txn_abort(txn);
		return 0;
	}
	return cache_errno(mdb_txn_commit(txn)) ? 0 : 1;
}

int cache_migrate_config(cache_t *c, uint64_t id)
{
	unsigned char key[8 + sizeof(OLD_CONFIG)];
	struct old s = { 0 };
	MDB_txn *txn;
	MDB_val k, d;
	char why[256];
	int rc;

	if ((rc = cache_key_name(key, sizeof(key), &k, id, OLD_CONFIG)) ||
	    (rc = cache_rd_begin(c, &txn)))
		return rc;
	rc = cache_errno(mdb_get(txn, c->files, &k, &d));
	cache_rd_end(txn);
	if (rc)
		return rc == ENOENT ? 0 : rc;
	if ((rc = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return rc;
	s.id = id;
	if (!(rc = read_file(c, txn, id, OLD_CONFIG, &s, &s.created)) && s.data &&
	    !(rc = cache_view_alive(c, txn, id, NULL)) &&
	    !(rc = move_config(c, txn, &s, why, sizeof(why)))) {
		free(s.data);
		return cache_errno(mdb_txn_commit(txn));
	}
	free(s.data);
	mdb_txn_abort(txn);
	/* unreadable, or the view is gone: nothing to take */
	return rc == ENOENT ? 0 : rc;
}

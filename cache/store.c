/*
 * The LMDB environment (open, its tables and their migration (older
 * layouts in migrate.c), mappings),
 * the ids and counters tables, references.  The views' records are in
 * view.c, a view's entries in entries.c, what it
 * loses (sweep, limit, delete) in sweep.c, message bytes in msgstore.c,
 * ingest batches in batch.c; the record layouts they share are in
 * cache-private.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache-private.h"

int cache_errno(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return ENOENT;
	case MDB_KEYEXIST:
		return EEXIST;
	case MDB_MAP_FULL:
		return ENOSPC;
	case MDB_READERS_FULL:
		return EAGAIN;
	default:
		return rc > 0 ? rc : EIO;     /* LMDB passes system errnos through */
	}
}

int cache_mkdir_p(const char *dir)
{
	char *p = strdup(dir), *s;
	int err = 0;

	if (!p)
		return ENOMEM;
	for (s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0700) && errno != EEXIST) {
				err = errno;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return err;
}

/* the process's resident file-backed pages, libraries and the map (statm's
 * third field); -1 if it cannot be read */
static long shared_pages(cache_t *c)
{
	char buf[128];
	long size, res, shared;
	ssize_t n = pread(c->statm, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%ld %ld %ld", &size, &res, &shared) == 3 ? shared : -1;
}

/* LMDB does not say where it mapped the file (me_mapaddr is set only with
 * MDB_FIXEDMAP): find our shared mapping of data.mdb by device and inode */
static void find_map(cache_t *c)
{
	mdb_filehandle_t fd;
	struct stat st;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (mdb_env_get_fd(c->env, &fd) || fstat(fd, &st) ||
	    !(f = fopen("/proc/self/maps", "re")))
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms,
			   &off, &maj, &min, &ino) == 7 && off == 0 &&
		    perms[3] == 's' && ino == st.st_ino &&
		    makedev(maj, min) == st.st_dev) {
			c->map = (void *)lo;
			c->maplen = hi - lo;
			break;
		}
	}
	free(line);
	fclose(f);
	if (c->map && (c->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) >= 0)
		c->shared_base = shared_pages(c);
}

int cache_id_put(cache_t *c, MDB_txn *txn, uint64_t id, const char *name)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d = { strlen(name), (void *)name };

	cache_key_id(key, id);
	return cache_errno(mdb_put(txn, c->ids, &k, &d, 0));
}

/* Caches made before the ids table: give every view its id record (a
 * cache of today has them all, and this walk of the views finds nothing
 * to add). */
static int index_ids(cache_t *c, MDB_txn *txn)
{
	MDB_stat ids, views;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	/* the counts are in the tables' own records: no page is read when
	 * there is nothing to do (and a damaged page waits for its reader) */
	if ((rc = cache_errno(mdb_stat(txn, c->ids, &ids))) ||
	    (rc = cache_errno(mdb_stat(txn, c->view, &views))))
		return rc;
	if (ids.ms_entries == views.ms_entries)
		return 0;       /* else a walk; a stale one left is mended by cache_view_alive */
	if ((rc = cache_cursor_open(txn, c->view, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		unsigned char key[8];
		MDB_val ik = { sizeof(key), key }, id;
		struct view_rec r;

		if (d.mv_size < sizeof(r))
			continue;
		memcpy(&r, d.mv_data, sizeof(r));
		cache_key_id(key, r.id);
		if ((rc = cache_errno(mdb_get(txn, c->ids, &ik, &id))) != ENOENT) {
			if (rc)
				break;
			continue;
		}
		id.mv_size = k.mv_size;
		id.mv_data = k.mv_data;
		if ((rc = cache_errno(mdb_put(txn, c->ids, &ik, &id, 0))))
			break;
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* the view whose record says `id`, by a walk of the views (a cache whose
 * id records an older leifs let go stale); ENOENT if none */
static int find_view_by_id(cache_t *c, MDB_txn *txn, uint64_t id, struct cache_view *out)
{
	MDB_cursor *cur;
	MDB_val k, d;
	int rc, err = ENOENT;

	if ((rc = cache_cursor_open(txn, c->view, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		struct view_rec r;

		if (d.mv_size < sizeof(r))
			continue;
		memcpy(&r, d.mv_data, sizeof(r));
		if (r.id == id) {
			err = cache_view_decode(&k, &d, out);
			break;
		}
	}
	cache_cursor_close(cur);
	if (rc && rc != ENOENT)
		return rc;
	return err;
}

int cache_count_put(cache_t *c, MDB_txn *txn, uint64_t id, const struct count_rec *r)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d = { sizeof(*r), (void *)r };

	cache_key_id(key, id);
	return cache_errno(mdb_put(txn, c->counts, &k, &d, 0));
}

/* view id's counters; ENOENT if it has none (yet) */
int cache_count_get(cache_t *c, MDB_txn *txn, uint64_t id, struct count_rec *r)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d;
	int rc;

	cache_key_id(key, id);
	if ((rc = cache_errno(mdb_get(txn, c->counts, &k, &d))))
		return rc;
	if (d.mv_size != sizeof(*r))
		return EIO;     /* a damaged record */
	memcpy(r, d.mv_data, sizeof(*r));
	return 0;
}

int cache_count_add(cache_t *c, MDB_txn *txn, uint64_t id, const int64_t delta[3])
{
	struct count_rec r = { { 0 } };
	int rc, i;

	if (!delta[0] && !delta[1] && !delta[2])
		return 0;
	if ((rc = cache_count_get(c, txn, id, &r)) && rc != ENOENT)
		return rc;
	for (i = 0; i < 3; i++)
		r.n[i] = (uint64_t)((int64_t)r.n[i] + delta[i]);
	return cache_count_put(c, txn, id, &r);
}

/* count view id's entries by where, the slow way (a walk) */
int cache_count_walk(cache_t *c, MDB_txn *txn, uint64_t id, struct count_rec *r)
{
	unsigned char pfx[8];
	MDB_cursor *cur;
	MDB_val k = { sizeof(pfx), pfx }, d;
	int rc;

	memset(r, 0, sizeof(*r));
	cache_key_id(pfx, id);
	if ((rc = cache_cursor_open(txn, c->entry, &cur)))
		return rc;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size >= 8 && !memcmp(k.mv_data, pfx, 8)) {
		struct entry_rec e;

		if (d.mv_size != sizeof(e)) {
			rc = EIO;       /* a damaged record */
			break;
		}
		memcpy(&e, d.mv_data, sizeof(e));
		r->n[e.where < 3 ? e.where : CACHE_NEW]++;
		rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

/* Caches made before the counters: count the entries of each view that
 * has none, once (a cache of today has them all: nothing is read). */
static int index_counts(cache_t *c, MDB_txn *txn)
{
	MDB_stat ids, counts;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = cache_errno(mdb_stat(txn, c->ids, &ids))) ||
	    (rc = cache_errno(mdb_stat(txn, c->counts, &counts))))
		return rc;
	if (counts.ms_entries >= ids.ms_entries)
		return 0;
	if ((rc = cache_cursor_open(txn, c->ids, &cur)))
		return rc;
	while (!(rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT)))) {
		const unsigned char *p = k.mv_data;
		struct count_rec r;
		uint64_t id = 0;
		int i;

		if (k.mv_size != 8)
			continue;
		for (i = 0; i < 8; i++)
			id = id << 8 | p[i];
		if ((rc = cache_count_get(c, txn, id, &r)) != ENOENT) {
			if (rc)
				break;
			continue;
		}
		if ((rc = cache_count_walk(c, txn, id, &r)) || (rc = cache_count_put(c, txn, id, &r)))
			break;
	}
	cache_cursor_close(cur);
	return rc == ENOENT ? 0 : rc;
}

int cache_view_alive(cache_t *c, MDB_txn *txn, uint64_t id, uint32_t *epoch)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d;
	struct cache_view v = { 0 };
	int rc, err = ENOENT;

	cache_key_id(key, id);
	if (!(rc = cache_errno(mdb_get(txn, c->ids, &k, &d)))) {
		MDB_val nk = d, nd;

		if ((rc = cache_errno(mdb_get(txn, c->view, &nk, &nd))) && rc != ENOENT)
			return rc;
		if (!rc && !(err = cache_view_decode(&nk, &nd, &v)) && v.id != id) {
			cache_view_release(&v);
			err = ENOENT;
		}
	} else if (rc != ENOENT) {
		return rc;
	}
	if (err == ENOENT) {
		/* no record, or a stale one (an older leifs removed or made
		 * views since): ask the views themselves, and mend it in a
		 * write transaction */
		if ((err = find_view_by_id(c, txn, id, &v)))
			return err;
		rc = cache_id_put(c, txn, id, v.name);
		err = rc == EACCES ? 0 : rc;    /* EACCES: read-only */
	}
	if (!err && epoch)
		*epoch = v.epoch;
	cache_view_release(&v);
	return err;
}

static int open_cache(const char *dir, size_t map_size, int upgrade, cache_t **out,
		      char *why, size_t whylen)
{
	cache_t *c = calloc(1, sizeof(*c));
	char path[4096], mwhy[512];
	MDB_txn *txn = NULL;
	int rc, err, older;

	*out = NULL;
	if (!c)
		return ENOMEM;
	c->statm = -1;
	snprintf(path, sizeof(path), "%s/lmdb", dir);
	if ((err = cache_mkdir_p(path))) {
		snprintf(why, whylen, "cannot create %s: %s", path, strerror(err));
		free(c);
		return err;
	}
	if (asprintf(&c->datafile, "%s/data.mdb", path) < 0) {
		free(c);
		return ENOMEM;
	}
	/* LMDB would map a short file and fault on its first read past the end */
	if ((err = cache_check_file(c->datafile, why, whylen))) {
		free(c->datafile);
		free(c);
		return err;
	}
	/* here rc keeps LMDB's own code until `fail`, for the message: the
	 * one place in cache/ where it is translated away from its call */
	if ((rc = mdb_env_create(&c->env)))
		goto fail;
	mdb_env_set_maxdbs(c->env, 24);        /* 16 tables, and room */
	mdb_env_set_maxreaders(c->env, 512);
	if ((rc = mdb_env_set_mapsize(c->env, map_size)))
		goto fail;
	/* NOTLS: FUSE worker threads share read transactions' slots freely */
	if ((rc = mdb_env_open(c->env, path, MDB_NOTLS, 0600)))
		goto fail;
	if ((rc = mdb_txn_begin(c->env, NULL, 0, &txn)) ||
	    (rc = mdb_dbi_open(txn, "msg", MDB_CREATE, &c->msg)) ||
	    (rc = mdb_dbi_open(txn, "view", MDB_CREATE, &c->view)) ||
	    (rc = mdb_dbi_open(txn, "entry", MDB_CREATE, &c->entry)) ||
	    (rc = mdb_dbi_open(txn, "dedupe", MDB_CREATE, &c->dedupe)) ||
	    (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &c->meta)) ||
	    (rc = mdb_dbi_open(txn, "refs", MDB_CREATE, &c->refs)) ||
	    (rc = mdb_dbi_open(txn, "files", MDB_CREATE, &c->files)) ||
	    (rc = mdb_dbi_open(txn, "marks", MDB_CREATE, &c->marks)) ||
	    (rc = mdb_dbi_open(txn, "ids", MDB_CREATE, &c->ids)) ||
	    (rc = mdb_dbi_open(txn, "away", MDB_CREATE, &c->away)) ||
	    (rc = mdb_dbi_open(txn, "counts", MDB_CREATE, &c->counts)) ||
	    (rc = index_ids(c, txn)) ||
	    (rc = index_counts(c, txn)))
		goto fail;
	/* no sources table: a cache made before it, to migrate (once: a
	 * cache of today has nothing to move, and no page of it is read) */
	if ((rc = mdb_dbi_open(txn, "sources", 0, &c->sources)) && rc != MDB_NOTFOUND)
		goto fail;
	older = rc == MDB_NOTFOUND;
	if (older && !upgrade) {
		/* --check reads an older cache as it is: it is upgraded by
		 * the mount that uses it, never under an older daemon */
		c->older = 1;
	} else if ((rc = mdb_dbi_open(txn, "sources", MDB_CREATE, &c->sources)) ||
		   (rc = mdb_dbi_open(txn, "settings", MDB_CREATE, &c->settings))) {
		goto fail;
	}
	/* the IMAP delivery tables: made by a mount, never by --check (which
	 * does not read them) */
	if (upgrade && ((rc = mdb_dbi_open(txn, "imap", MDB_CREATE, &c->imap)) ||
			(rc = mdb_dbi_open(txn, "imapfolder", MDB_CREATE, &c->imapfolder)) ||
			(rc = mdb_dbi_open(txn, "imapcount", MDB_CREATE, &c->imapcount)) ||
			(rc = mdb_dbi_open(txn, "series", MDB_CREATE, &c->series)) ||
			(rc = cache_imap_open(c, txn))))
		goto fail;
	/* the flags views share: a cache from before them is marked, for
	 * the views to fill once they know which share (keywords.c) */
	if (upgrade && (rc = mdb_dbi_open(txn, "kw", 0, &c->kw)) == MDB_NOTFOUND &&
	    (!(rc = mdb_dbi_open(txn, "kw", MDB_CREATE, &c->kw))))
		rc = cache_kw_mark_pending(c, txn);
	if (upgrade && rc)
		goto fail;
	if (older && upgrade && (rc = cache_migrate(c, txn, mwhy, sizeof(mwhy)))) {
		/* nothing of it was written: the transaction is aborted */
		snprintf(why, whylen, "cannot upgrade cache %s to this leifs (it is left as it "
			 "was): %s%s", path, mwhy, rc == ENOSPC ?
			 "; mount it once with a larger -o map_size" : "");
		err = cache_errno(rc);
		goto fail_quiet;
	}
	if ((rc = mdb_txn_commit(txn))) {
		txn = NULL;
		goto fail;
	}
	c->mounted = upgrade;
	find_map(c);
	cache_guard_map(c->map, c->maplen);
	/* an older leifs used the cache since: what it wrote again */
	if (!older && upgrade)
		cache_migrate_leftovers(c);
	*out = c;
	return 0;
fail:
	/* EIO: index_ids or index_counts met a damaged page */
	if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID ||
	    rc == MDB_BAD_TXN || rc == MDB_VERSION_MISMATCH || rc == EIO)
		snprintf(why, whylen, "cache %s is damaged (%s); move it away to start afresh",
			 path, mdb_strerror(rc));
	else
		snprintf(why, whylen, "cannot open cache %s: %s", path, mdb_strerror(rc));
	err = cache_errno(rc);
fail_quiet:
	if (txn)
		mdb_txn_abort(txn);
	if (c->env)
		mdb_env_close(c->env);
	free(c->datafile);
	free(c);
	return err;
}

int cache_open(const char *dir, size_t map_size, cache_t **out,
	       char *why, size_t whylen)
{
	return open_cache(dir, map_size, 1, out, why, whylen);
}

int cache_open_check(const char *dir, cache_t **out, char *why, size_t whylen)
{
	return open_cache(dir, (size_t)64 << 30, 0, out, why, whylen);
}

uint64_t cache_version(cache_t *c)
{
	MDB_envinfo info;

	if (mdb_env_info(c->env, &info))
		return 0;
	return (uint64_t)info.me_last_txnid;
}

/*
 * Reading a page of the map makes the kernel map the cached pages around it
 * too (fault-around), so an ingest that looks up a few b-tree leaves ends up
 * with most of the message bytes it wrote counted in its resident set,
 * growing with the answer although the daemon never reads them.  Dropping
 * our mappings after each write keeps the resident set to what is in use;
 * the pages stay in the kernel's page cache, and a reader that touches one
 * again (its MDB_val pointers stay valid: committed pages never change
 * under a live reader) takes a minor fault.
 * Each drop costs those faults again: dropping after every 64 lookups made
 * a lookup fault its b-tree pages back each time (~100 us a lookup, most of
 * a local fill's time), so the map is dropped only once more than
 * MAP_RESIDENT of it is resident (statm, read in a few us, against what
 * was resident at open: the libraries).  One thread drops at a time:
 * others that find a drop under way leave it be.  (Taking the baseline
 * again after each drop was tried: at 200,000 messages ls -f went 2.62x
 * tmpfs, against 0.68x with it taken at open; tests/bench/README,
 * 2026-12-07.)
 */
void cache_drop_mappings(cache_t *c)
{
	MDB_envinfo info;
	MDB_stat st;
	size_t len;
	long shared;

	if (!c->map)
		return;
	if (c->statm >= 0 && (shared = shared_pages(c)) >= 0 &&
	    (shared - c->shared_base) * sysconf(_SC_PAGESIZE) < MAP_RESIDENT)
		return;
	if (mdb_env_info(c->env, &info) || mdb_env_stat(c->env, &st))
		return;
	len = ((size_t)info.me_last_pgno + 1) * st.ms_psize;
	if (atomic_exchange(&c->dropping, 1))
		return;         /* another thread is dropping it */
	madvise(c->map, len < c->maplen ? len : c->maplen, MADV_DONTNEED);
	atomic_store(&c->dropping, 0);
}

void cache_close(cache_t *c)
{
	if (!c)
		return;
	cache_imap_close(c);
	cache_guard_map(NULL, 0);
	if (c->statm >= 0)
		close(c->statm);
	mdb_env_close(c->env);
	free(c->datafile);
	free(c);
}



int cache_ref(cache_t *c, MDB_txn *txn, const unsigned char *oid, int delta)
{
	MDB_val k = { CACHE_OID_LEN, (void *)oid }, d;
	uint32_t n = 0;
	int rc;

	rc = cache_errno(mdb_get(txn, c->refs, &k, &d));
	if (rc == 0 && d.mv_size == sizeof(n))
		memcpy(&n, d.mv_data, sizeof(n));
	else if (rc && rc != ENOENT)
		return rc;
	if (delta > 0) {
		n++;
	} else if (n <= 1) {
		/* the last holder: the message goes */
		rc = cache_errno(mdb_del(txn, c->refs, &k, NULL));
		if (rc && rc != ENOENT)
			return rc;
		rc = cache_errno(mdb_del(txn, c->msg, &k, NULL));
		return rc == ENOENT ? 0 : rc;
	} else {
		n--;
	}
	d.mv_size = sizeof(n);
	d.mv_data = &n;
	return cache_errno(mdb_put(txn, c->refs, &k, &d, 0));
}

/*
 * Walk the keys of `dbi` under view `id`; drop() says whether to delete
 * each (WALK_DROP) or keep it (WALK_KEEP), and may act on it first;
 * WALK_STOP ends the walk, with 0 (drop keeps the reason in its context).
 */
enum walk cache_walk_drop(void *arg, const MDB_val *k, const MDB_val *d)
{
	(void)arg, (void)k, (void)d;
	return WALK_DROP;
}

int cache_walk_prefix(cache_t *c, MDB_txn *txn, MDB_dbi dbi, uint64_t id,
		      enum walk (*drop)(void *arg, const MDB_val *k, const MDB_val *d),
		      void *arg)
{
	unsigned char pfx[8];
	MDB_cursor *cur;
	MDB_val k, d;
	uint64_t n = 0;
	int rc;

	cache_key_id(pfx, id);
	k.mv_size = sizeof(pfx);
	k.mv_data = pfx;
	if ((rc = cache_cursor_open(txn, dbi, &cur)))
		return rc;
	rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE));
	while (!rc && k.mv_size >= 8 && !memcmp(k.mv_data, pfx, 8)) {
		enum walk r = drop(arg, &k, &d);

		if (++n % DROP_EVERY == 0)
			cache_drop_mappings(c);

		if (r == WALK_STOP)
			break;
		if (r == WALK_DROP) {
			/* after a delete the cursor already stands on the next key */
			if ((rc = cache_errno(mdb_cursor_del(cur, 0))))
				break;
			rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_GET_CURRENT));
		} else {
			rc = cache_errno(mdb_cursor_get(cur, &k, &d, MDB_NEXT));
		}
	}
	cache_cursor_close(cur);
	/* EINVAL: the last key was deleted, nothing is current */
	return rc == ENOENT || rc == EINVAL ? 0 : rc;
}


int cache_view_get_id(cache_t *c, uint64_t id, struct cache_view *out)
{
	unsigned char key[8];
	MDB_val k = { sizeof(key), key }, d, nd;
	MDB_txn *txn;
	int rc, err = ENOENT;

	memset(out, 0, sizeof(*out));
	if ((rc = cache_rd_begin(c, &txn)))
		return rc;
	cache_key_id(key, id);
	if (!(rc = cache_errno(mdb_get(txn, c->ids, &k, &d))) &&
	    !(rc = cache_errno(mdb_get(txn, c->view, &d, &nd))) &&
	    !(err = cache_view_decode(&d, &nd, out)) && out->id != id) {
		cache_view_release(out);
		err = ENOENT;
	}
	if (rc && rc != ENOENT)
		err = rc;
	else if (err == ENOENT)         /* a stale ids record: the walk */
		err = find_view_by_id(c, txn, id, out);
	cache_rd_end(txn);
	return err;
}

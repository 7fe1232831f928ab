/*
 * Client files of a view: key view id (8, big-endian) + name, value a
 * file_rec and the bytes.  Small by contract, so a write reads, patches and
 * puts the whole value in one transaction: simple and crash-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache-private.h"

#define KEY_MAX (8 + 256)

static int make_key(unsigned char *key, MDB_val *k, uint64_t id, const char *name)
{
	return cache_key_name(key, KEY_MAX, k, id, name);
}

static int get_rec(MDB_txn *txn, cache_t *c, MDB_val *k, MDB_val *d)
{
	int rc = cache_errno(mdb_get(txn, c->files, k, d));

	if (rc)
		return rc;
	return d->mv_size < sizeof(struct file_rec) ? EIO : 0;
}

/* A file's size and mtime, and a copy of its bytes if `data` is given. */
static int lookup(cache_t *c, uint64_t id, const char *name, size_t *len,
		  int64_t *mtime, char **data)
{
	unsigned char key[KEY_MAX];
	struct file_rec r;
	MDB_val k, d;
	MDB_txn *txn;
	int err;

	if (data)
		*data = NULL;
	if ((err = make_key(key, &k, id, name)))
		return err;
	if ((err = cache_rd_begin(c, &txn)))
		return err;
	if (!(err = get_rec(txn, c, &k, &d))) {
		memcpy(&r, d.mv_data, sizeof(r));
		*len = d.mv_size - sizeof(r);
		if (mtime)
			*mtime = r.mtime;
		if (data && !(*data = malloc(*len + 1)))
			err = ENOMEM;
		else if (data)
			memcpy(*data, (char *)d.mv_data + sizeof(r), *len);
	}
	cache_rd_end(txn);
	return err;
}

int cache_file_stat(cache_t *c, uint64_t id, const char *name, size_t *len, int64_t *mtime)
{
	return lookup(c, id, name, len, mtime, NULL);
}

int cache_file_read(cache_t *c, uint64_t id, const char *name, char **data, size_t *len)
{
	return lookup(c, id, name, len, NULL, data);
}

static enum walk count_one(void *arg, const MDB_val *k, const MDB_val *d)
{
	(void)k, (void)d;
	(*(size_t *)arg)++;
	return WALK_KEEP;
}

static int count_files(MDB_txn *txn, cache_t *c, uint64_t id, size_t *n)
{
	*n = 0;
	return cache_walk_prefix(c, txn, c->files, id, count_one, n);
}

/* the whole value, patched by `patch`, put back with a new mtime */
static int rewrite(cache_t *c, uint64_t id, const char *name, int create,
		   int (*patch)(void *arg, char **buf, size_t *len), void *arg)
{
	unsigned char key[KEY_MAX];
	struct file_rec r = { .mtime = (int64_t)time(NULL) };
	MDB_val k, d;
	MDB_txn *txn;
	char *buf = NULL;
	size_t len = 0, n;
	int err;

	if ((err = make_key(key, &k, id, name)))
		return err;
	if ((err = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return err;
	err = get_rec(txn, c, &k, &d);
	if (!err) {
		len = d.mv_size - sizeof(r);
		if (!(buf = malloc(len + 1)))
			err = ENOMEM;
		else
			memcpy(buf, (char *)d.mv_data + sizeof(r), len);
	} else if (err == ENOENT && create) {
		/* never a file under a removed view */
		err = cache_view_alive(c, txn, id, NULL);
		if (!err)
			err = count_files(txn, c, id, &n);
		if (!err && n >= CACHE_FILES_MAX)
			err = ENOSPC;
		if (!err && !(buf = malloc(1)))
			err = ENOMEM;
	}
	if (!err && patch)
		err = patch(arg, &buf, &len);
	if (!err && len > CACHE_FILE_MAX)
		err = EFBIG;
	if (!err) {
		d.mv_size = sizeof(r) + len;
		err = cache_errno(mdb_put(txn, c->files, &k, &d, MDB_RESERVE));
	}
	if (!err) {
		memcpy(d.mv_data, &r, sizeof(r));
		memcpy((char *)d.mv_data + sizeof(r), buf, len);
		err = cache_errno(mdb_txn_commit(txn));
		txn = NULL;
	}
	if (txn)
		mdb_txn_abort(txn);
	free(buf);
	return err;
}

int cache_file_create(cache_t *c, uint64_t id, const char *name, int excl)
{
	size_t len;
	int64_t mtime;
	int err = cache_file_stat(c, id, name, &len, &mtime);

	if (!err)
		return excl ? EEXIST : 0;
	if (err != ENOENT)
		return err;
	return rewrite(c, id, name, 1, NULL, NULL);
}

struct span {
	uint64_t off;
	const char *buf;
	size_t len;
};

static int patch_write(void *arg, char **buf, size_t *len)
{
	struct span *s = arg;
	size_t end;
	char *b;

	if (s->off > CACHE_FILE_MAX || s->len > CACHE_FILE_MAX - s->off)
		return EFBIG;
	end = (size_t)s->off + s->len;
	if (end > *len) {
		if (!(b = realloc(*buf, end + 1)))
			return ENOMEM;
		memset(b + *len, 0, end - *len);        /* a hole reads as zeros */
		*buf = b;
		*len = end;
	}
	memcpy(*buf + s->off, s->buf, s->len);
	return 0;
}

int cache_file_write(cache_t *c, uint64_t id, const char *name, uint64_t off,
		     const char *buf, size_t len)
{
	struct span s = { off, buf, len };

	return rewrite(c, id, name, 0, patch_write, &s);
}

struct whole {
	const char *buf;
	size_t len;
};

static int patch_replace(void *arg, char **buf, size_t *len)
{
	const struct whole *w = arg;
	char *b;

	if (w->len > CACHE_FILE_MAX)
		return EFBIG;
	if (!(b = realloc(*buf, w->len + 1)))
		return ENOMEM;
	memcpy(b, w->buf, w->len);
	*buf = b;
	*len = w->len;
	return 0;
}

int cache_file_put(cache_t *c, uint64_t id, const char *name, const char *buf, size_t len)
{
	struct whole w = { buf, len };

	return rewrite(c, id, name, 1, patch_replace, &w);
}

static int patch_truncate(void *arg, char **buf, size_t *len)
{
	uint64_t want = *(uint64_t *)arg;
	char *b;

	if (want > CACHE_FILE_MAX)
		return EFBIG;
	if (want > *len) {
		if (!(b = realloc(*buf, (size_t)want + 1)))
			return ENOMEM;
		memset(b + *len, 0, (size_t)want - *len);
		*buf = b;
	}
	*len = (size_t)want;
	return 0;
}

int cache_file_truncate(cache_t *c, uint64_t id, const char *name, uint64_t len)
{
	return rewrite(c, id, name, 0, patch_truncate, &len);
}

int cache_file_remove(cache_t *c, uint64_t id, const char *name)
{
	unsigned char key[KEY_MAX];
	MDB_val k;
	MDB_txn *txn;
	int err;

	if ((err = make_key(key, &k, id, name)))
		return err;
	if ((err = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return err;
	if ((err = cache_errno(mdb_del(txn, c->files, &k, NULL)))) {
		mdb_txn_abort(txn);
		return err;
	}
	return cache_errno(mdb_txn_commit(txn));
}

int cache_file_rename(cache_t *c, uint64_t id, const char *from, const char *to)
{
	unsigned char fkey[KEY_MAX], tkey[KEY_MAX];
	MDB_val fk, tk, d;
	MDB_txn *txn;
	char *copy = NULL;
	int err;

	if ((err = make_key(fkey, &fk, id, from)) || (err = make_key(tkey, &tk, id, to)))
		return err;
	if ((err = cache_errno(mdb_txn_begin(c->env, NULL, 0, &txn))))
		return err;
	if ((err = get_rec(txn, c, &fk, &d)))
		goto out;
	/* the value lives in the map: copy it before writing */
	if (!(copy = malloc(d.mv_size))) {
		err = ENOMEM;
		goto out;
	}
	memcpy(copy, d.mv_data, d.mv_size);
	d.mv_data = copy;
	if ((err = cache_errno(mdb_put(txn, c->files, &tk, &d, 0))) ||
	    (err = cache_errno(mdb_del(txn, c->files, &fk, NULL))))
		goto out;
	err = cache_errno(mdb_txn_commit(txn));
	txn = NULL;
out:
	if (txn)
		mdb_txn_abort(txn);
	free(copy);
	return err;
}

struct each {
	int (*fn)(void *arg, const char *name);
	void *arg;
	int err;
};

static enum walk each_one(void *arg, const MDB_val *k, const MDB_val *d)
{
	struct each *e = arg;
	char name[KEY_MAX];

	(void)d;
	memcpy(name, (char *)k->mv_data + 8, k->mv_size - 8);
	name[k->mv_size - 8] = '\0';
	return (e->err = e->fn(e->arg, name)) ? WALK_STOP : WALK_KEEP;
}

int cache_file_each(cache_t *c, uint64_t id, int (*fn)(void *arg, const char *name), void *arg)
{
	struct each e = { fn, arg, 0 };
	MDB_txn *txn;
	int rc, err;

	if ((err = cache_rd_begin(c, &txn)))
		return err;
	rc = cache_walk_prefix(c, txn, c->files, id, each_one, &e);
	cache_rd_end(txn);
	return rc ? rc : e.err;
}

static enum walk drop_one(void *arg, const MDB_val *k, const MDB_val *d)
{
	(void)arg, (void)k, (void)d;
	return WALK_DROP;
}

int cache_files_drop(cache_t *c, MDB_txn *txn, uint64_t id)
{
	return cache_walk_prefix(c, txn, c->files, id, drop_one, NULL);
}

/*
 * Reading a view's series/ (views.h): names, times, sizes and bytes of the
 * records view-series.c keeps, each read in one LMDB read, with no lock
 * (an update replaces a record whole).
 */
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view-series-rec.h"
#include "fs/views-private.h"

struct each_ctx {
	int (*fn)(void *arg, const char *name);
	void *arg;
};

static int each_name(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct each_ctx *e = arg;
	char *name = g_strndup((const char *)key + 1, klen - 1);
	int err;

	(void)val;
	(void)vlen;
	if (!name)
		return ENOMEM;
	err = e->fn(e->arg, name);
	free(name);
	return err;
}

int views_series_each(views_t *v, uint64_t id, int (*fn)(void *arg, const char *name),
		      void *arg)
{
	struct each_ctx e = { fn, arg };

	/* by the small "I" records (one for each "N", written with it): the
	 * "N" ones hold am.mbx, and a walk of them faults a page of each */
	return cache_series_each(v->cache, id, "I", 1, each_name, &e);
}

int views_series_mtime(views_t *v, uint64_t id, int64_t *mtime)
{
	struct stamp_rec st;
	size_t vlen;
	void *val;
	int err;

	*mtime = 0;
	if ((err = cache_series_get(v->cache, id, "S", 1, &val, &vlen)))
		return err == ENOENT ? 0 : err;
	if (vlen == sizeof(st)) {
		memcpy(&st, val, sizeof(st));
		*mtime = st.mtime;
	}
	free(val);
	return 0;
}

/* where file `which` of revision `name` is in its record */
static int locate(views_t *v, uint64_t id, const char *name, int which, char *key,
		  size_t *klen, size_t *voff, size_t *vlen, int64_t *mtime)
{
	struct ser_rec h;
	size_t kl = strlen(name), n;
	int err;

	if (kl + 1 > 500)
		return ENOENT;
	key[0] = which == VIEWS_SERIES_INFO ? 'I' : 'N';
	memcpy(key + 1, name, kl);
	*klen = kl + 1;
	if (which == VIEWS_SERIES_INFO) {
		void *val;

		/* small: read whole; mtime is the revision's */
		if ((err = cache_series_get(v->cache, id, key, *klen, &val, vlen)))
			return err;
		free(val);
		*voff = 0;
		key[0] = 'N';
		err = cache_series_read(v->cache, id, key, *klen, 0, sizeof(h), 0, sizeof(h),
					(char *)&h, &n);
		key[0] = 'I';
		if (err)
			return err;
		*mtime = n == sizeof(h) ? h.mtime : 0;
		return 0;
	}
	if ((err = cache_series_read(v->cache, id, key, *klen, 0, sizeof(h), 0, sizeof(h),
				     (char *)&h, &n)))
		return err;
	if (n != sizeof(h) || h.magic != SER_MAGIC)
		return EIO;
	if (which == VIEWS_SERIES_COVER && !h.has_cover)
		return ENOENT;
	*voff = sizeof(h) + h.midlen + h.cidlen + h.subjlen;
	*vlen = h.amlen;
	if (which == VIEWS_SERIES_COVER) {
		*voff += h.amlen;
		*vlen = h.coverlen;
	}
	*mtime = h.mtime;
	return 0;
}

int views_series_stat(views_t *v, uint64_t id, const char *name, int which, size_t *size,
		      int64_t *mtime)
{
	char key[512];
	size_t klen, voff;

	return locate(v, id, name, which, key, &klen, &voff, size, mtime);
}

/* where file *which is in the N (am.mbx, cover) or I (info) record `val` */
static int place_part(const void *val, size_t len, void *arg, size_t *voff, size_t *vlen)
{
	int which = *(int *)arg;
	struct ser_rec h;

	if (which == VIEWS_SERIES_INFO) {
		*voff = 0;
		*vlen = len;
		return 0;
	}
	if (len < sizeof(h))
		return EIO;
	memcpy(&h, val, sizeof(h));
	if (h.magic != SER_MAGIC)
		return EIO;
	if (which == VIEWS_SERIES_COVER && !h.has_cover)
		return ENOENT;
	*voff = sizeof(h) + (size_t)h.midlen + h.cidlen + h.subjlen;
	*vlen = h.amlen;
	if (which == VIEWS_SERIES_COVER) {
		*voff += h.amlen;
		*vlen = h.coverlen;
	}
	return 0;
}

int views_series_read(views_t *v, uint64_t id, const char *name, int which, off_t off,
		      size_t size, char *buf, size_t *n)
{
	char key[512];
	size_t klen, voff, vlen;
	int64_t mtime;
	int err;

	*n = 0;
	if ((err = locate(v, id, name, which, key, &klen, &voff, &vlen, &mtime)))
		return err;
	/* the offsets again from the record the bytes come from */
	return cache_series_read_placed(v->cache, id, key, klen, place_part, &which, off, size,
					buf, n);
}

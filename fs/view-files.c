/*
 * The writes a user's tools make in a view, as fs.c and fs-change.c
 * receive them: a
 * message moved between new/ and cur/, flagged or unlinked, and the small
 * files a client keeps there.  They go through views.h like every other
 * write (the FUSE adapter only reads the cache directly), and each is one cache
 * transaction.
 */
#include "fs/views-private.h"

int views_msg_move(views_t *v, uint64_t vid, const unsigned char *oid, int where,
		   uint32_t flags, uint32_t uid)
{
	return cache_entry_update(v->cache, vid, oid, where, flags, uid);
}

int views_file_create(views_t *v, uint64_t vid, const char *name, int excl, int trunc)
{
	int err = cache_file_create(v->cache, vid, name, excl);

	if (!err && trunc)
		err = cache_file_truncate(v->cache, vid, name, 0);
	return err;
}

int views_file_write(views_t *v, uint64_t vid, const char *name, uint64_t off,
		     const char *buf, size_t len)
{
	return cache_file_write(v->cache, vid, name, off, buf, len);
}

int views_file_truncate(views_t *v, uint64_t vid, const char *name, uint64_t len)
{
	return cache_file_truncate(v->cache, vid, name, len);
}

int views_file_remove(views_t *v, uint64_t vid, const char *name)
{
	return cache_file_remove(v->cache, vid, name);
}

int views_file_rename(views_t *v, uint64_t vid, const char *from, const char *to)
{
	return cache_file_rename(v->cache, vid, from, to);
}

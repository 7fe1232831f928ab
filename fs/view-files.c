/*
 * The writes a user's tools make in a view, as fs.c and fs-change.c
 * receive them: a
 * message moved between new/ and cur/, flagged or unlinked, and the small
 * files a client keeps there.  They go through views.h like every other
 * write (the FUSE adapter only reads the cache directly), and each is one cache
 * transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/log.h"
#include "fs/views-private.h"

/* the ids of the views that share flags, view `but` left out (malloc'd);
 * *mine: whether `but` shares them */
static int sharing_views(views_t *v, uint64_t but, uint64_t **ids, size_t *n, int *mine)
{
	struct names ns = { 0 };
	size_t i;
	int err;

	*ids = NULL;
	*n = 0;
	*mine = 0;
	if ((err = views_names(v, &ns)))
		return err;
	if (ns.n && !(*ids = calloc(ns.n, sizeof(**ids)))) {
		names_free(&ns);
		return ENOMEM;
	}
	for (i = 0; i < ns.n; i++) {
		struct cache_view cv;
		struct settings set;

		if (cache_view_get(v->cache, ns.name[i], &cv))
			continue;       /* removed meanwhile */
		if (!view_settings(v, &cv, &set)) {
			if (cv.id == but)
				*mine = !set.own_flags;
			else if (!set.own_flags)
				(*ids)[(*n)++] = cv.id;
			settings_free(&set);
		}
		cache_view_release(&cv);
	}
	names_free(&ns);
	return 0;
}

/*
 * A client's rename: the entry's new place and flags; when the view
 * shares flags and the rename sets or clears a shared one (seen, flagged,
 * replied, trashed), that change, and only it, goes to the message's
 * keywords and every other sharing view's entry in the same transaction
 * (cache_entry_update_shared).  Their listings show it at their next
 * look: the kernel is told nothing here, since invalidating another
 * view's directories from a handler could wait on a handler of that view
 * doing the same.  A hide stays the view's own.
 */
int views_msg_move(views_t *v, uint64_t vid, const unsigned char *oid, int where,
		   uint32_t flags, uint32_t uid)
{
	struct cache_entry e;
	uint64_t *ids = NULL;
	size_t n = 0, nchanged = 0;
	int err, mine = 0;

	if (cache_entry_get(v->cache, vid, oid, &e) || where == CACHE_HIDDEN ||
	    !((e.flags ^ flags) & CACHE_SHARED_FLAGS))
		return cache_entry_update(v->cache, vid, oid, where, flags, uid);
	if ((err = sharing_views(v, vid, &ids, &n, &mine)))
		return err;
	if (mine)
		err = cache_entry_update_shared(v->cache, vid, oid, where, flags, uid, ids, n, NULL,
						&nchanged);
	else
		err = cache_entry_update(v->cache, vid, oid, where, flags, uid);
	free(ids);
	return err;
}

int view_kw_migrate(views_t *v)
{
	uint64_t *ids = NULL;
	size_t n = 0;
	int err, pending = 0, mine;

	if ((err = cache_kw_pending(v->cache, &pending)) || !pending)
		return err;
	/* the views that share: those whose settings do not say flags = view */
	if ((err = sharing_views(v, 0, &ids, &n, &mine)))
		return err;
	err = cache_kw_migrate(v->cache, ids, n);
	if (!err)
		log_debug("flags of %zu views shared: each message has what any of them set", n);
	free(ids);
	return err;
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

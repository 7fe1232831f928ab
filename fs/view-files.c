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

/* the ids of the views that share flags, view `but` left out (malloc'd),
 * and of each the flags that count for the one fill of an older cache
 * (`count`, may be NULL: a flagged-hits view's F is the search's);
 * *mine: whether `but` shares them; *all: how many views there are */
static int sharing_views(views_t *v, uint64_t but, uint64_t **ids, uint32_t **count, size_t *n,
			 int *mine, size_t *all)
{
	struct names ns = { 0 };
	size_t i;
	int err;

	*ids = NULL;
	if (count)
		*count = NULL;
	*n = 0;
	*mine = 0;
	if ((err = views_names(v, &ns)))
		return err;
	if (all)
		*all = ns.n;
	if (ns.n && (!(*ids = calloc(ns.n, sizeof(**ids))) ||
		     (count && !(*count = calloc(ns.n, sizeof(**count)))))) {
		free(*ids);
		*ids = NULL;
		names_free(&ns);
		return ENOMEM;
	}
	for (i = 0; i < ns.n; i++) {
		struct cache_view cv;
		struct settings set;

		if (cache_view_get(v->cache, ns.name[i], &cv))
			continue;       /* removed meanwhile */
		if (!view_settings(v, &cv, &set)) {
			if (cv.id == but) {
				*mine = !set.own_flags;
			} else if (!set.own_flags) {
				if (count)
					(*count)[*n] = set.threads == THREADS_FLAG_HITS ?
						       CACHE_SHARED_FLAGS & ~CACHE_FLAG_FLAGGED :
						       CACHE_SHARED_FLAGS;
				(*ids)[(*n)++] = cv.id;
			}
			settings_free(&set);
		}
		cache_view_release(&cv);
	}
	names_free(&ns);
	return 0;
}

/*
 * A client's rename: the flags that differ between the message's old name
 * and its new one are what changes (a change another view made since the
 * client read the name stays); when the view shares flags and a shared one
 * (seen, flagged, replied, trashed) is among them, the message's keywords
 * and every other sharing view's entry follow, all in one transaction
 * (cache_entry_update_shared).  Their listings show it at their next
 * look: the kernel is told nothing here, since invalidating another
 * view's directories from a handler could wait on a handler of that view
 * doing the same.  A hide stays the view's own.
 */
int views_msg_move(views_t *v, uint64_t vid, const unsigned char *oid, int where,
		   uint32_t was, uint32_t flags, uint32_t uid)
{
	uint64_t *ids = NULL;
	size_t n = 0, nchanged = 0;
	int err, mine = 0;

	if (where == CACHE_HIDDEN)
		return cache_entry_update(v->cache, vid, oid, where, flags, uid);
	if (!((was ^ flags) & CACHE_SHARED_FLAGS))
		return cache_entry_update_shared(v->cache, vid, oid, where, was, flags, uid, NULL, 0,
						 NULL, &nchanged);
	if ((err = sharing_views(v, vid, &ids, NULL, &n, &mine, NULL)))
		return err;
	err = cache_entry_update_shared(v->cache, vid, oid, where, was, flags, uid, ids,
					mine ? n : 0, NULL, &nchanged);
	free(ids);
	return err;
}

int view_kw_migrate(views_t *v)
{
	uint64_t *ids = NULL;
	uint32_t *count = NULL;
	size_t n = 0, all = 0;
	int err, pending = 0, mine;

	if ((err = cache_kw_pending(v->cache, &pending)) || !pending)
		return err;
	/* the views that share: those whose settings do not say flags = view */
	if ((err = sharing_views(v, 0, &ids, &count, &n, &mine, &all)))
		return err;
	/* none shares now (a mount with -o flags=view): the fill waits for
	 * one that has views sharing, unless there is no view at all */
	if (n || !all) {
		err = cache_kw_migrate(v->cache, ids, count, n);
		if (!err)
			log_debug("flags of %zu views shared: each message has what any of them set",
				  n);
	}
	free(ids);
	free(count);
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

/* Reads of the cache under the fault guard, for the request handlers. */
#include <errno.h>

#include "fs/guard.h"
#include "fs/log.h"

int fs_log_damage(views_t *v)
{
	char why[600];

	if (cache_damaged(views_cache(v), why, sizeof(why)))
		log_err("%s", why);
	return 0;
}

int fs_node_view(views_t *v, const struct node *n, struct cache_view *cv)
{
	int err = GUARD(v, views_get(v, n->view, cv));

	if (!err && cv->id != n->vid) {
		cache_view_release(cv);
		err = ENOENT;
	}
	return err;
}

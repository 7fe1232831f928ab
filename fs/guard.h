/*
 * Reads of the cache made for a FUSE request run under GUARD: damage in
 * data.mdb that makes LMDB fault becomes EIO for the request (and for every
 * later one), logged once, instead of the end of the mount (cache.h).
 * Only around calls that take no lock of ours and write nothing.  Shared
 * by the files of fs/ that answer requests (fs.c, fs-dir.c, fs-change.c,
 * viewtext.c).
 */
#ifndef LEIFS_FS_GUARD_H
#define LEIFS_FS_GUARD_H

#include "fs/node.h"
#include "fs/views.h"

/* logs why the cache is damaged (once known); always 0 */
int fs_log_damage(views_t *v);
#define GUARD(v, call) CACHE_GUARDED(views_cache(v), call, fs_log_damage(v))

/* The view node n belongs to, under GUARD and checked to be the same view
 * (same id): ENOENT once it was removed or made anew.  The caller releases
 * *cv (cache_view_release). */
int fs_node_view(views_t *v, const struct node *n, struct cache_view *cv);

#endif

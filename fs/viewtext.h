/*
 * The text files of a view and of queries/: .query, .config, .status,
 * .refresh, .unhide, queries/.status and queries/.refresh.  Their text is
 * made when asked and kept on the node for the reads that follow (no open
 * file has a handle: fs.c answers open with ENOSYS); writes to .query and
 * .config are gathered per writer (its pid) and handed to views.h whole.
 * Every function may be called from any FUSE thread; the kept texts and
 * rewrites are protected by one lock of viewtext.c, never held while the
 * cache is read.  Errors are positive errno values.
 */
#ifndef LEIFS_FS_VIEWTEXT_H
#define LEIFS_FS_VIEWTEXT_H

#include <sys/stat.h>
#include <sys/types.h>

#include "fs/node.h"
#include "fs/views.h"

/* the most a .query (QUERY_MAX) or a .config may hold, written or renamed */
#define WRITE_MAX 16384

/* whether a node of `kind` is one of these text files */
int viewtext_generated(int kind);

/* Make n's text afresh, keep it, and fill in st's size and times; the
 * times of .query and .config (given their view `cv`, else NULL) move
 * with their text, the others' at every call.  A .refresh has the size
 * and time of `pid`'s summary (none: empty, st's time kept).  *timeout
 * gets 0: the kernel never caches their attributes. */
int viewtext_attr(views_t *v, struct node *n, const struct cache_view *cv, int pid,
		  struct stat *st, double *timeout);

/* A read of a .refresh by `pid`: the refresh runs and is waited for
 * (views_refresh_wait), its summary kept for pid's reads, unless pid is
 * reading one already (`anew`: and read it within the last 2 s).  EINTR
 * when *interrupted is set meanwhile. */
int viewtext_refresh(views_t *v, struct node *n, int pid, int anew, atomic_int *interrupted);

/* A copy of [off, off+size) of the kept text (made now if none is kept;
 * of a .refresh, pid's summary): *out (the caller frees it; NULL when
 * *len is 0). */
int viewtext_read(views_t *v, struct node *n, int pid, off_t off, size_t size,
		  char **out, size_t *len);

/* A truncation of .query or .config by `pid` (as `>` makes at 0). */
int viewtext_truncate(struct node *n, int pid, off_t size);

/* A write to .query or .config by `pid`: checked, then applied (EINVAL
 * with the reason in .status when refused). */
int viewtext_write(views_t *v, struct node *n, int pid, const char *buf,
		   size_t size, off_t off);

#endif

/*
 * VIEW/series/ for the FUSE handlers (fs-series.c): nodes N_SERIES (the
 * directory), N_SREV (a revision; node name = its name) and N_SFILE (a
 * file of one; node name = "REVISION/FILE").  Each returns an errno.
 */
#ifndef LEIFS_FS_SERIES_H
#define LEIFS_FS_SERIES_H

#include <sys/stat.h>

#include "fs/dirbuf.h"
#include "fs/node.h"
#include "fs/views.h"

/* mode, size, mtime of a series node into st (the rest is the caller's) */
int fs_series_attr(views_t *v, struct node *n, struct stat *st);
/* the child `name` of an N_SERIES or N_SREV node, one kernel lookup
 * counted; NULL with *err */
struct node *fs_series_lookup(views_t *v, const struct node *parent, const char *name,
			      int *err);
/* the entries of an N_SERIES or N_SREV directory into d */
int fs_series_list(fuse_req_t req, views_t *v, const struct node *n, struct dirbuf *d);
/* a slice of an N_SFILE's bytes (*buf malloc'd, the caller's) */
int fs_series_read(views_t *v, const struct node *n, off_t off, size_t size, char **buf,
		   size_t *got);

#endif

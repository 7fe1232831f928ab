/*
 * FUSE side of VIEW/series/ (views.h: series): the directory, one
 * directory per revision, and its am.mbx, cover and info.  Read-only.
 * A lookup or listing of series/ brings the view's series up to date
 * first (cheap when its messages did not change); names and attributes
 * are never cached by the kernel, so a refresh shows at the next look,
 * and a file's pages are dropped at each open (fs.c: direct_io off,
 * keep_cache off), so a reopened am.mbx reads its new bytes.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fs/dirbuf.h"
#include "fs/fs-series.h"
#include "fs/guard.h"
#include "fs/log.h"

static const struct {
	const char *name;
	int which;
} files[] = {
	{ "am.mbx", VIEWS_SERIES_AM }, { "cover", VIEWS_SERIES_COVER },
	{ "info", VIEWS_SERIES_INFO },
};
#define NFILES (sizeof(files) / sizeof(files[0]))

/* an N_SFILE node's name is "REVISION/FILE" */
static int split(const char *key, char *rev, size_t cap, int *which)
{
	const char *slash = strrchr(key, '/');
	size_t i;

	if (!slash || (size_t)(slash - key) >= cap)
		return ENOENT;
	memcpy(rev, key, (size_t)(slash - key));
	rev[slash - key] = '\0';
	for (i = 0; i < NFILES; i++)
		if (!strcmp(slash + 1, files[i].name)) {
			*which = files[i].which;
			return 0;
		}
	return ENOENT;
}

/* whether file `which` of revision `rev` is there (a function of its own:
 * the guard's sigsetjmp stays away from the callers' loop counters) */
static int has_file(views_t *v, uint64_t vid, const char *rev, int which)
{
	int64_t mtime;
	size_t size;

	return GUARD(v, views_series_stat(v, vid, rev, which, &size, &mtime));
}

static int update(views_t *v, uint64_t vid)
{
	/* it writes the series table: not under GUARD (a fault there is
	 * the cache's, as for any write) */
	int err = views_series_update(v, vid);

	if (err && err != ENOENT)
		log_err("series of view %llu: %s", (unsigned long long)vid, strerror(err));
	return err;
}

int fs_series_attr(views_t *v, struct node *n, struct stat *st)
{
	char rev[NAME_MAX + 1];
	int64_t mtime = 0;
	size_t size;
	int which, err;

	switch (n->kind) {
	case N_SERIES:
		if ((err = GUARD(v, views_series_mtime(v, n->vid, &mtime))))
			return err;
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		break;
	case N_SREV:
		if ((err = GUARD(v, views_series_stat(v, n->vid, n->name, VIEWS_SERIES_AM, &size,
						      &mtime))))
			return err;
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		break;
	case N_SFILE:
		if ((err = split(n->name, rev, sizeof(rev), &which)) ||
		    (err = GUARD(v, views_series_stat(v, n->vid, rev, which, &size, &mtime))))
			return err;
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)((size + 511) / 512);
		break;
	default:
		return EIO;
	}
	st->st_mtime = st->st_ctime = st->st_atime = (time_t)mtime;
	return 0;
}

struct node *fs_series_lookup(views_t *v, const struct node *parent, const char *name,
			      int *err)
{
	char key[2 * NAME_MAX + 2];
	size_t i;

	*err = 0;
	switch (parent->kind) {
	case N_SERIES:
		/* a name not there yet may be after an update (series/ first
		 * looked at, or looked up before its listing); the view's
		 * searches keep the others current */
		if ((*err = has_file(v, parent->vid, name, VIEWS_SERIES_AM)) == ENOENT &&
		    !(*err = update(v, parent->vid)))
			*err = has_file(v, parent->vid, name, VIEWS_SERIES_AM);
		if (*err)
			return NULL;
		return node_lookup_named(N_SREV, parent->vid, parent->view, name);
	case N_SREV:
		for (i = 0; i < NFILES; i++)
			if (!strcmp(name, files[i].name))
				break;
		if (i == NFILES) {
			*err = ENOENT;
			return NULL;
		}
		if ((*err = has_file(v, parent->vid, parent->name, files[i].which)))
			return NULL;
		snprintf(key, sizeof(key), "%s/%s", parent->name, name);
		return node_lookup_named(N_SFILE, parent->vid, parent->view, key);
	default:
		*err = ENOENT;
		return NULL;
	}
}

struct list_ctx {
	fuse_req_t req;
	struct dirbuf *d;
	uint64_t n;
};

static int add_rev(void *arg, const char *name)
{
	struct list_ctx *c = arg;

	/* not an inode the kernel can use: only lookup hands those out */
	dir_add(c->req, c->d, name, (fuse_ino_t)(++c->n << 8 | 3), S_IFDIR);
	return c->d->err;
}

int fs_series_list(fuse_req_t req, views_t *v, const struct node *n, struct dirbuf *d)
{
	struct list_ctx c = { req, d, 0 };
	size_t i;
	int err;

	switch (n->kind) {
	case N_SERIES:
		if ((err = update(v, n->vid)))
			return err;
		return GUARD(v, views_series_each(v, n->vid, add_rev, &c));
	case N_SREV:
		for (i = 0; i < NFILES; i++)
			if (!has_file(v, n->vid, n->name, files[i].which))
				dir_add(req, d, files[i].name, (fuse_ino_t)(i << 8 | 7), S_IFREG);
		return d->err;
	default:
		return ENOTDIR;
	}
}

int fs_series_read(views_t *v, const struct node *n, off_t off, size_t size, char **buf,
		   size_t *got)
{
	char rev[NAME_MAX + 1];
	int which, err;

	*buf = NULL;
	*got = 0;
	if ((err = split(n->name, rev, sizeof(rev), &which)))
		return err;
	if (!(*buf = malloc(size ? size : 1)))
		return ENOMEM;
	return GUARD(v, views_series_read(v, n->vid, rev, which, off, size, *buf, got));
}

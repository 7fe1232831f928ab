/*
 * FUSE handlers of directories: listings (opendir, readdir, releasedir)
 * and the making and removing of views (mkdir, rmdir).  Each handler
 * replies exactly once (fs-private.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/dirbuf.h"
#include "fs/fs-private.h"
#include "fs/fs-series.h"
#include "fs/guard.h"
#include "fs/log.h"
#include "fs/msgname.h"
#include "fs/node.h"
#include "fs/viewnames.h"
#include "fs/viewtext.h"

struct list_ctx {
	fuse_req_t req;
	struct dirbuf *d;
	int where;
	uint64_t vid;
};

static int add_view(void *arg, const struct cache_view *cv)
{
	struct list_ctx *c = arg;

	if (views_thread_name(cv->name) || views_subsys_name(cv->name))
		return 0;
	/* not an inode the kernel can use: only lookup hands those out */
	dir_add(c->req, c->d, cv->name, (fuse_ino_t)(cv->id << 8 | 1), S_IFDIR);
	return c->d->err;
}

static int add_thread(void *arg, const struct cache_view *cv)
{
	struct list_ctx *c = arg;
	const char *name = views_thread_name(cv->name);

	if (name)
		dir_add(c->req, c->d, name, (fuse_ino_t)(cv->id << 8 | 1), S_IFDIR);
	return c->d->err;
}

static int add_subsys(void *arg, const struct cache_view *cv)
{
	struct list_ctx *c = arg;
	const char *name = views_subsys_name(cv->name);

	if (name)
		dir_add(c->req, c->d, name, (fuse_ino_t)(cv->id << 8 | 1), S_IFDIR);
	return c->d->err;
}

static int add_msg(void *arg, const struct cache_entry *e)
{
	struct list_ctx *c = arg;
	char name[128];
	uint64_t h;
	int i;

	if (e->where != c->where)
		return 0;
	msgname_format(e, name, sizeof(name));
	/* numbers that rise as the listing goes (entries come in oid order):
	 * gnulib's fts, in grep -r, find and du, sorts a big directory by
	 * them on any file system but a few, and frees its entries in that
	 * order (12% of a warm grep -r of 200,000 files in random order) */
	for (h = 0, i = 0; i < 8; i++)
		h = h << 8 | e->oid[i];
	dir_add(c->req, c->d, name, (fuse_ino_t)(h | 1), S_IFREG);
	return c->d->err;
}

static int add_file(void *arg, const char *name)
{
	struct list_ctx *c = arg;

	/* a name of leifs's own (a .config an older leifs kept as a file)
	 * is listed once, as leifs's */
	if (!viewnames_client_file(name))
		return 0;
	dir_add(c->req, c->d, name, (fuse_ino_t)(c->vid << 8 | 15), S_IFREG);
	return c->d->err;
}

static int listing(fuse_req_t req, views_t *v, const struct node *n, int *filling)
{
	struct fs_waiting w;
	int err;

	fs_wait_begin(req, &w);
	/* a listing waiting for a first fill ends at an interrupt, the fill
	 * going on.  A view's own directory is opened by mkdir -p and cd as well: a
	 * view never searched waits for a listing of its mail (its name may
	 * be a label, its query written to .query next) */
	err = GUARD(v, views_listing(v, n->view, &w.interrupted, filling, n->kind != N_VIEW));
	fs_wait_end(req);       /* w ends here */
	return err;
}

static int do_opendir(fuse_req_t req, views_t *v, const struct node *n,
		      struct dirbuf *d)
{
	struct list_ctx c = { req, d, 0, n->vid };
	const char *own;
	size_t i;
	int kind;
	int err = 0;

	dir_add(req, d, ".", n->ino, S_IFDIR);
	dir_add(req, d, "..", 1, S_IFDIR);
	switch (n->kind) {
	case N_ROOT:
		dir_add(req, d, "queries", 2, S_IFDIR);
		dir_add(req, d, "threads", 5, S_IFDIR);
		dir_add(req, d, "subsystems", 6, S_IFDIR);
		break;
	case N_SUBSYS:
		dir_add(req, d, ".sections", 7, S_IFREG);
		dir_add(req, d, ".status", 8, S_IFREG);
		err = GUARD(v, cache_view_each(views_cache(v), add_subsys, &c));
		break;
	case N_THREADS:
		err = GUARD(v, cache_view_each(views_cache(v), add_thread, &c));
		break;
	case N_QUERIES:
		dir_add(req, d, ".status", 3, S_IFREG);
		dir_add(req, d, ".refresh", 4, S_IFREG);
		err = GUARD(v, cache_view_each(views_cache(v), add_view, &c));
		break;
	case N_VIEW:
		if ((err = listing(req, v, n, NULL)))
			break;
		for (i = 0; (own = viewnames_nth(i, &kind)); i++)
			dir_add(req, d, own, (fuse_ino_t)(n->vid << 8 | (i + 2)),
				kind <= N_TMP || kind == N_SERIES ? S_IFDIR : S_IFREG);
		err = GUARD(v, cache_file_each(views_cache(v), n->vid, add_file, &c));
		break;
	case N_CUR:
	case N_NEW:
		/* the kernel may answer readdir from its cache (see
		 * fs_opendir): the listing is made only when it asks */
		if ((err = listing(req, v, n, &d->filling)))
			break;
		d->lazy = 1;
		d->where = n->kind == N_CUR ? CACHE_CUR : CACHE_NEW;
		d->vid = n->vid;
		break;
	case N_TMP:
		break;
	case N_SERIES:
	case N_SREV:
		err = fs_series_list(req, v, n, d);
		break;
	default:
		err = ENOTDIR;
	}
	return err ? err : d->err;
}

void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = node_get(ino);
	struct dirbuf *d = calloc(1, sizeof(*d));
	int err;

	if (!n || !d) {
		if (n)
			node_put(n);
		free(d);
		fuse_reply_err(req, n ? ENOMEM : ENOENT);
		return;
	}
	err = do_opendir(req, fs_views(req), n, d);
	node_put(n);
	if (err) {
		dir_free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	dir_link(d);
	if (d->lazy) {
		/* listings of cur/ new/ stay in the kernel across opens; the
		 * kernel drops them when it changes the directory itself
		 * (rename, unlink) or sees its mtime change (a refresh) */
		fi->cache_readdir = !d->filling;        /* a part of a first */
		fi->keep_cache = !d->filling;           /* fill: ask again */
	}
	if (fuse_reply_open(req, fi) == -ENOENT)        /* interrupted */
		dir_free(d);
}

void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dirbuf *d = (struct dirbuf *)(uintptr_t)fi->fh;
	size_t end;

	(void)ino;
	if (d->lazy) {
		struct list_ctx c = { req, d, d->where, d->vid };
		int err = GUARD(fs_views(req), cache_entry_each(views_cache(fs_views(req)), d->vid, add_msg, &c));

		d->lazy = 0;
		if (!err)
			err = d->err;
		if (err) {
			fuse_reply_err(req, err);
			return;
		}
	}
	if (off < 0 || (size_t)off >= d->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	/* whole entries only: walk the records up to `size` */
	end = (size_t)off;
	while (end < d->size) {
		const struct { uint64_t ino, off; uint32_t namelen, type; } *e =
			(const void *)(d->buf + end);
		size_t rec = (size_t)e->off - end;

		if (end - (size_t)off + rec > size)
			break;
		end += rec;
	}
	fs_reply_copy(req, d->buf, end, off, end - (size_t)off);
}

void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirbuf *d = (struct dirbuf *)(uintptr_t)fi->fh;

	(void)ino;
	dir_free(d);
	fuse_reply_err(req, 0);
}

static int do_mkdir(views_t *v, fuse_ino_t parent, const char *name,
		    struct fuse_entry_param *ep)
{
	struct node *p = node_get(parent);
	char why[512];
	int err;

	if (!p)
		return ENOENT;
	if (p->kind == N_VIEW)
		views_mkdir_in_view(v, p->view, name);  /* mkdir -p of a query with '/' */
	if (p->kind != N_QUERIES && p->kind != N_THREADS && p->kind != N_SUBSYS) {
		node_put(p);
		return EROFS;
	}
	if (strlen(name) > NAME_MAX) {
		node_put(p);
		return ENAMETOOLONG;
	}
	if (p->kind == N_THREADS)
		err = views_create_thread(v, name, why, sizeof(why));
	else if (p->kind == N_SUBSYS)
		err = views_create_subsys(v, name, why, sizeof(why));
	else
		err = views_create(v, name, why, sizeof(why));
	if (!err)
		err = fs_do_lookup(v, p, name, ep);
	node_put(p);
	return err;
}

void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fuse_entry_param ep;
	int err;

	(void)mode;
	err = do_mkdir(fs_views(req), parent, name, &ep);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_entry(req, &ep);
}

void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *p = node_get(parent);
	int err;

	if (!p) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (p->kind == N_QUERIES)
		err = strcmp(name, ".status") && strcmp(name, ".refresh") ?
		      views_remove(fs_views(req), name) : ENOTDIR;
	else if (p->kind == N_THREADS)
		err = views_remove_thread(fs_views(req), name);
	else if (p->kind == N_SUBSYS)
		err = strcmp(name, ".status") && strcmp(name, ".sections") ?
		      views_remove_subsys(fs_views(req), name) : ENOTDIR;
	else if (p->kind == N_VIEW && viewnames_child(name) >= 0 && viewnames_child(name) <= N_TMP) {
		/* rm -rf VIEW removes cur/ new/ tmp/ before it reaches the
		 * view's own rmdir, and gives up on the view if one fails:
		 * they are the view's own, so removing one does nothing, and
		 * the view goes with its rmdir */
		node_unkey(viewnames_child(name), p->vid);
		err = 0;
	} else if ((p->kind == N_VIEW && viewnames_child(name) == N_SERIES) ||
		   p->kind == N_SERIES) {
		/* series/ and its revisions likewise: derived, read-only,
		 * there again at the next lookup (with a new inode: the
		 * kernel takes a removed directory's for dead) */
		if (p->kind == N_VIEW)
			node_unkey(N_SERIES, p->vid);
		else
			node_unkey_named(N_SREV, p->vid, name);
		err = 0;
	} else
		err = p->kind == N_VIEW ? EPERM : EROFS;
	node_put(p);
	fuse_reply_err(req, err);
}

/*
 * FUSE low-level handlers: lookup, attributes, files (open, read, write)
 * and the handler table; directories are in fs-dir.c, renames, unlinks
 * and client files in fs-change.c.  Each handler resolves its inode,
 * calls one helper that returns an errno, and replies exactly once.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/fs-notify.h"
#include "fs/fs-private.h"
#include "fs/fs-series.h"
#include "fs/guard.h"
#include "fs/dirbuf.h"
#include "fs/log.h"
#include "fs/msgname.h"
#include "fs/node.h"
#include "fs/viewnames.h"
#include "fs/viewtext.h"

#define FIXED_TIMEOUT 60.0      /* names that never change meaning */
#define LIST_TIMEOUT 1.0        /* directories whose contents move */
#define MSG_ATTR_TIMEOUT 3600.0 /* message bytes never change */
#define MSG_ENTRY_TIMEOUT 3600.0 /* names that leave otherwise than by the
				  * kernel's own rename are told (fs-notify.h) */

static time_t mount_time;

views_t *fs_views(fuse_req_t req)
{
	return *(views_t **)fuse_req_userdata(req);
}

int fs_init(void)
{
	mount_time = time(NULL);
	return node_table_init();
}

void fs_destroy(void)
{
	fs_notify_stop();
	dir_free_all();
	node_table_destroy();
}

/* the current name of a client file node; ENOENT once replaced */
int fs_file_node_name(const struct node *n, char **name)
{
	*name = node_file_name(n);
	return *name ? 0 : ENOENT;
}

/* ---- attributes ---- */

static void dir_attr(struct stat *st, time_t mtime)
{
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_mtime = st->st_ctime = st->st_atime = mtime;
}

static void file_attr(struct stat *st, mode_t mode, off_t size, time_t mtime)
{
	st->st_mode = S_IFREG | mode;
	st->st_nlink = 1;
	st->st_size = size;
	st->st_blocks = (size + 511) / 512;
	st->st_mtime = st->st_ctime = st->st_atime = mtime;
}

/* what every inode's attributes share */
static void base_attr(struct stat *st, uint64_t ino)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_blksize = 4096;
}

/* a message file's attributes, from its entry */
static void msg_attr(struct stat *st, uint64_t ino, const struct cache_entry *e)
{
	base_attr(st, ino);
	file_attr(st, 0444, (off_t)e->size, (time_t)e->date);
}

static int node_attr(views_t *v, struct node *n, int pid, struct stat *st,
		     double *timeout)
{
	struct cache_view cv;
	struct cache_entry e;
	int err = 0;

	base_attr(st, n->ino);
	*timeout = FIXED_TIMEOUT;
	switch (n->kind) {
	case N_ROOT:
	case N_QUERIES:
	case N_THREADS:
	case N_SUBSYS:
		dir_attr(st, mount_time);
		*timeout = LIST_TIMEOUT;
		return 0;
	case N_SSTATUS:
	case N_SECTIONS:
	case N_QSTATUS:
		file_attr(st, 0444, 0, time(NULL));
		return viewtext_attr(v, n, NULL, pid, st, timeout);
	case N_QREFRESH:
		file_attr(st, 0644, 0, mount_time);
		return viewtext_attr(v, n, NULL, pid, st, timeout);
	case N_MSG:
		/* the bytes of a name never change: its lookup's are still true */
		e.date = n->date;
		e.size = n->size;
		if (e.size == UINT64_MAX &&
		    (err = GUARD(v, cache_entry_get(views_cache(v), n->vid, n->oid, &e))))
			return err;
		msg_attr(st, n->ino, &e);
		*timeout = MSG_ATTR_TIMEOUT;
		return 0;
	case N_FILE: {
		char *name;
		size_t len;
		int64_t mtime;

		if ((err = fs_file_node_name(n, &name)))
			return err;
		err = GUARD(v, cache_file_stat(views_cache(v), n->vid, name, &len, &mtime));
		free(name);
		if (err)
			return err;
		/* the owner's, as .config: it may be a copy of it (an editor's
		 * swap file or backup, a temporary file renamed over it) */
		file_attr(st, 0600, (off_t)len, (time_t)mtime);
		*timeout = 0;
		return 0;
	}
	case N_SERIES:
	case N_SREV:
	case N_SFILE:
		/* series change at a refresh, which tells the kernel
		 * (fs_view_changed); a listing's own update within a second */
		*timeout = LIST_TIMEOUT;
		if ((err = fs_node_view(v, n, &cv)))
			return err;
		cache_view_release(&cv);
		return fs_series_attr(v, n, st);
	default:
		break;
	}
	if ((err = fs_node_view(v, n, &cv)))
		return err;
	/* a client watching the view (mail_check stats new/ and cur/) gets
	 * its new mail without listing it */
	if (n->kind == N_VIEW || n->kind == N_CUR || n->kind == N_NEW)
		views_watched(v, &cv);
	switch (n->kind) {
	case N_VIEW:
		dir_attr(st, (time_t)cv.created);
		break;
	case N_CUR:
	case N_NEW:
	case N_TMP:
		/* mail clients rescan when new/ or cur/ change mtime, and so
		 * does the kernel's readdir cache: the nanoseconds change with
		 * every write to the cache, so no change goes unseen */
		dir_attr(st, (time_t)(cv.last_try > cv.created ? cv.last_try : cv.created));
		st->st_mtim.tv_nsec = (long)(cache_version(views_cache(v)) % 1000000000u);
		*timeout = LIST_TIMEOUT;
		break;
	case N_QUERY:
		/* a subsystem view's is derived: read-only */
		file_attr(st, views_subsys_name(cv.name) ? 0444 : 0644, 0, (time_t)cv.created);
		err = viewtext_attr(v, n, &cv, pid, st, timeout);
		break;
	case N_CONFIG:
		/* its sources may hold a password: the owner's alone */
		file_attr(st, 0600, 0, (time_t)cv.created);
		err = viewtext_attr(v, n, &cv, pid, st, timeout);
		break;
	case N_REFRESH:
	case N_UNHIDE:
		file_attr(st, 0644, 0, (time_t)(cv.last_try ? cv.last_try : cv.created));
		err = viewtext_attr(v, n, NULL, pid, st, timeout);
		break;
	case N_STATUS:
		file_attr(st, 0444, 0, (time_t)(cv.last_try ? cv.last_try : cv.created));
		err = viewtext_attr(v, n, NULL, pid, st, timeout);
		break;
	default:
		err = EIO;
	}
	cache_view_release(&cv);
	return err;
}

/* ---- lookup ---- */

/* the entry for `name` in cur/ or new/ if that is exactly its name now */
int fs_find_msg(views_t *v, const struct node *dir, const char *name,
		    struct cache_entry *e)
{
	struct msgname m;
	char now[128];
	int err;

	if (msgname_parse(name, &m))
		return ENOENT;
	if ((err = GUARD(v, cache_entry_get(views_cache(v), dir->vid, m.oid, e))))
		return err;
	if (e->where != (dir->kind == N_CUR ? CACHE_CUR : CACHE_NEW))
		return ENOENT;
	msgname_format(e, now, sizeof(now));
	return strcmp(now, name) ? ENOENT : 0;
}

int fs_do_lookup(views_t *v, const struct node *parent, const char *name,
		     struct fuse_entry_param *ep)
{
	struct cache_view cv;
	struct cache_entry e;
	struct node *n = NULL;
	int kind;
	int err;

	memset(ep, 0, sizeof(*ep));
	/* FUSE lets names of up to 1024 bytes through; we promise 255 */
	if (strlen(name) > NAME_MAX)
		return ENAMETOOLONG;
	switch (parent->kind) {
	case N_ROOT:
		if (!strcmp(name, "threads"))
			n = node_lookup(N_THREADS, 0, NULL);
		else if (!strcmp(name, "subsystems"))
			n = node_lookup(N_SUBSYS, 0, NULL);
		else if (!strcmp(name, "queries"))
			n = node_lookup(N_QUERIES, 0, NULL);
		else
			return ENOENT;
		break;
	case N_SUBSYS:
		if (!strcmp(name, ".status")) {
			n = node_lookup(N_SSTATUS, 0, NULL);
			break;
		}
		if (!strcmp(name, ".sections")) {
			n = node_lookup(N_SECTIONS, 0, NULL);
			break;
		}
		if ((err = GUARD(v, views_get_subsys(v, name, &cv))))
			return err;
		n = node_lookup(N_VIEW, cv.id, cv.name);
		cache_view_release(&cv);
		break;
	case N_THREADS:
		/* "<id>" and "id" are one view: its node has the record's name */
		if ((err = GUARD(v, views_get_thread(v, name, &cv))))
			return err;
		n = node_lookup(N_VIEW, cv.id, cv.name);
		cache_view_release(&cv);
		break;
	case N_QUERIES:
		if (!strcmp(name, ".status")) {
			n = node_lookup(N_QSTATUS, 0, NULL);
			break;
		}
		if (!strcmp(name, ".refresh")) {
			n = node_lookup(N_QREFRESH, 0, NULL);
			break;
		}
		if ((err = GUARD(v, views_get(v, name, &cv))))
			return err;
		n = node_lookup(N_VIEW, cv.id, name);
		cache_view_release(&cv);
		break;
	case N_VIEW:
		if ((kind = viewnames_child(name)) >= 0)
			n = node_lookup(kind, parent->vid, parent->view);
		if (!n && viewnames_client_file(name)) {
			size_t len;
			int64_t mtime;

			if ((err = GUARD(v, cache_file_stat(views_cache(v), parent->vid, name,
							    &len, &mtime))))
				return err;
			n = node_lookup_file(parent->vid, parent->view, name);
		} else if (!n) {
			return ENOENT;
		}
		break;
	case N_CUR:
	case N_NEW:
		if ((err = fs_find_msg(v, parent, name, &e)))
			return err;
		/* its entry, just read, has its attributes; its name changes
		 * only by renames the kernel makes itself */
		if (!(ep->ino = node_lookup_msg(parent->vid, &e)))
			return ENOMEM;
		msg_attr(&ep->attr, ep->ino, &e);
		ep->attr_timeout = MSG_ATTR_TIMEOUT;
		ep->entry_timeout = MSG_ENTRY_TIMEOUT;
		return 0;
	case N_SERIES:
	case N_SREV:
		if ((err = fs_node_view(v, parent, &cv)))
			return err;
		cache_view_release(&cv);
		if (!(n = fs_series_lookup(v, parent, name, &err)))
			return err ? err : ENOMEM;
		break;
	default:
		return ENOENT;
	}
	if (!n)
		return ENOMEM;
	/* pid 0: no reader's summary of a .refresh (viewtext_attr) */
	if ((err = node_attr(v, n, 0, &ep->attr, &ep->attr_timeout))) {
		node_forget(n->ino, 1);
		return err;
	}
	ep->ino = n->ino;
	/* views and client files come and go by other hands; a client file
	 * renamed over .config or .query leaves the name to leifs's own file
	 * at once, which the kernel learns at its next lookup */
	ep->entry_timeout = FIXED_TIMEOUT;
	if (n->kind == N_VIEW)
		ep->entry_timeout = LIST_TIMEOUT;
	if (n->kind == N_FILE)
		ep->entry_timeout = 0;
	if (n->kind == N_SREV || n->kind == N_SFILE)
		ep->entry_timeout = LIST_TIMEOUT;
	return 0;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param ep;
	struct node *p = node_get(parent);
	int err;

	if (!p) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	err = fs_do_lookup(fs_views(req), p, name, &ep);
	node_put(p);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_entry(req, &ep);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_forget(ino, nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		node_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* another thread: the kernel forwards a signal to the process that waits
 * (Ctrl-C, kill): the wait gives up with EINTR, what it waits for goes on */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct fs_waiting *w = data;

	(void)req;
	atomic_store(&w->interrupted, 1);
	views_wake(w->v);
}

void fs_wait_begin(fuse_req_t req, struct fs_waiting *w)
{
	w->v = fs_views(req);
	atomic_init(&w->interrupted, 0);
	fuse_req_interrupt_func(req, on_interrupt, w);
}

void fs_wait_end(fuse_req_t req)
{
	fuse_req_interrupt_func(req, NULL, NULL);
}

/* a read of a .refresh: its refresh, waited for */
static int refresh_read(fuse_req_t req, struct node *n, int anew)
{
	struct fs_waiting w;
	int err;

	fs_wait_begin(req, &w);
	err = GUARD(w.v, viewtext_refresh(w.v, n, fuse_req_ctx(req)->pid, anew, &w.interrupted));
	fs_wait_end(req);       /* w ends here */
	return err;
}

static void reply_attr(fuse_req_t req, fuse_ino_t ino, int reading)
{
	struct node *n = node_get(ino);
	struct stat st;
	double timeout;
	int err = 0;

	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* the kernel asks with the file at each read(): of a .refresh, the
	 * read that runs the refresh (viewtext.c) */
	if (reading && (n->kind == N_REFRESH || n->kind == N_QREFRESH))
		err = refresh_read(req, n, 1);
	if (!err)
		err = node_attr(fs_views(req), n, fuse_req_ctx(req)->pid, &st, &timeout);
	node_put(n);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, timeout);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	reply_attr(req, ino, fi != NULL);
}

static int do_setattr(views_t *v, struct node *n, int pid, int to_set,
		      const struct stat *attr)
{
	off_t size = attr->st_size;

	/* chmod and fchown to the owner, as git config -f and sed -i make on
	 * their temporary file, are accepted and ignored: a client file is
	 * always the owner's, mode 0600 */
	if (n->kind == N_FILE && (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
					    FUSE_SET_ATTR_GID))) {
		if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != getuid()) ||
		    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != getgid()))
			return EPERM;
		to_set &= ~(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID);
	}
	if (n->kind == N_FILE && (to_set & FUSE_SET_ATTR_SIZE)) {
		char *name;
		int err;

		if (size < 0)
			return EINVAL;
		if ((err = fs_file_node_name(n, &name)))
			return err;
		err = views_file_truncate(v, n->vid, name, (uint64_t)size);
		free(name);
		if (err)
			return err;
		to_set &= ~FUSE_SET_ATTR_SIZE;
	}
	/* truncating .query or .refresh is the first half of rewriting it */
	if ((to_set & FUSE_SET_ATTR_SIZE) && n->kind != N_QUERY && n->kind != N_REFRESH &&
	    n->kind != N_QREFRESH && n->kind != N_CONFIG && n->kind != N_UNHIDE)
		return EROFS;
	if ((to_set & FUSE_SET_ATTR_SIZE) && (n->kind == N_QUERY || n->kind == N_CONFIG)) {
		int err = viewtext_truncate(n, pid, size);

		if (err)
			return err;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		return EROFS;
	/* touch .refresh: refresh now */
	if (n->kind == N_REFRESH && (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)))
		return views_refresh(v, n->view, 0);
	if (n->kind == N_QREFRESH && (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)))
		return views_refresh_all(v, 0);
	/* other time changes are accepted and ignored: clients (mbsync,
	 * cp -p) set them as a courtesy */
	return 0;
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct node *n = node_get(ino);
	views_t *v = fs_views(req);    /* req is gone once replied to */
	int err;

	(void)fi;

	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	err = do_setattr(v, n, fuse_req_ctx(req)->pid, to_set, attr);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_attr(req, ino, 0);        /* a touch or a write waits for nothing */
	/* the kernel takes the attributes of a setattr's reply without
	 * checking its cached pages against them: the next getattr must
	 * bring a new mtime (see viewtext_attr) */
	if (n->kind == N_QUERY || n->kind == N_CONFIG)
		views_text_written(v, n->vid, n->view, n->kind == N_CONFIG);
	node_put(n);
}

/*
 * Reply with a copy of buf[off, off+size): the kernel may answer the caller,
 * and the caller close the handle (freeing buf in release), while
 * fuse_reply_buf() is still returning.
 */
void fs_reply_copy(fuse_req_t req, const char *buf, size_t len, off_t off,
		       size_t size)
{
	char *copy;

	if (off < 0 || (size_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (len - (size_t)off < size)
		size = len - (size_t)off;
	copy = malloc(size);
	if (!copy) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(copy, buf + off, size);
	fuse_reply_buf(req, copy, size);
	free(copy);
}

/* ---- files ---- */

static int no_open;     /* the kernel takes ENOSYS from open as "no state" */

static void fs_init_conn(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	no_open = !!(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	/* with no open request, O_TRUNC must arrive as a setattr */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
}

static int may_write(int kind)
{
	return kind == N_QUERY || kind == N_REFRESH || kind == N_QREFRESH || kind == N_FILE ||
	       kind == N_CONFIG || kind == N_UNHIDE;
}

/* Where the kernel cannot skip opens, answer them with the same flags it
 * assumes in no-open mode, still keeping no state per open file. */
static int do_open(views_t *v, struct node *n, struct fuse_file_info *fi)
{
	char *s;
	size_t len;
	int err;

	if (((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) &&
	    !may_write(n->kind))
		return n->kind == N_MSG || n->kind == N_SFILE || viewtext_generated(n->kind) ?
		       EROFS : EISDIR;
	fi->fh = 0;
	fi->noflush = 1;
	if (n->kind == N_MSG) {
		fi->keep_cache = 1;     /* bytes never change under a name */
		return 0;
	}
	if (n->kind == N_SFILE) {
		/* pages kept across opens: a change of the file changes its
		 * mtime (auto_inval_data), and a refresh drops them */
		fi->keep_cache = 1;
		return 0;
	}
	fi->direct_io = 1;
	if (!viewtext_generated(n->kind))
		return 0;
	if (n->kind == N_REFRESH || n->kind == N_QREFRESH)
		return 0;       /* its read runs the refresh (fs_read) */
	err = viewtext_read(v, n, 0, 0, 0, &s, &len);    /* a snapshot for this open */
	free(s);
	return err;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n;
	int err;

	if (no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	n = node_get(ino);
	err = n ? do_open(fs_views(req), n, fi) : ENOENT;
	if (n)
		node_put(n);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_open(req, fi);
}

/* a function of its own: the guard's sigsetjmp stays away from fs_read's
 * pointers (gcc's use-after-free analysis does not see through it) */
static int guarded_file_read(views_t *v, uint64_t vid, const char *name, char **buf,
			     size_t *got)
{
	return GUARD(v, cache_file_read(views_cache(v), vid, name, buf, got));
}

/*
 * .config shows source URLs as written, password included, so that the
 * owner's editor writes back what it read.  main.c mounts with
 * default_permissions, so the kernel already keeps others out by its mode
 * (0600); this says the same in the handler, should that ever change.
 */
static int may_touch_config(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return ctx->uid == 0 || ctx->uid == getuid();
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct node *n = node_get(ino);
	char *buf = NULL, *name;
	size_t got = 0;
	int err;

	(void)fi;
	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (n->kind == N_CONFIG && !may_touch_config(req)) {
		err = EACCES;
	} else if (viewtext_generated(n->kind)) {
		/* a .refresh read with no summary yet (no getattr came first:
		 * a direct read, or another thread) runs its refresh here */
		err = 0;
		if (n->kind == N_REFRESH || n->kind == N_QREFRESH)
			err = refresh_read(req, n, off == 0);
		if (!err)
			err = viewtext_read(fs_views(req), n, fuse_req_ctx(req)->pid, off, size,
					    &buf, &got);
	} else if (n->kind == N_FILE) {
		if (!(err = fs_file_node_name(n, &name))) {
			err = guarded_file_read(fs_views(req), n->vid, name, &buf, &got);
			free(name);
		}
		if (!err && buf) {
			/* the record comes whole: keep the asked slice */
			size_t from = off < 0 || (size_t)off > got ? got : (size_t)off;

			got -= from;
			if (got > size)
				got = size;
			memmove(buf, buf + from, got);
		}
	} else if (n->kind == N_SFILE) {
		err = fs_series_read(fs_views(req), n, off, size, &buf, &got);
	} else if (n->kind == N_MSG) {
		buf = malloc(size ? size : 1);
		err = buf ? GUARD(fs_views(req), cache_msg_read(views_cache(fs_views(req)), n->oid, off, size, buf, &got))
			  : ENOMEM;
	} else {
		err = EISDIR;
	}
	node_put(n);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, got);
	free(buf);
}

static int do_write(views_t *v, struct node *n, int pid, const char *buf, size_t size,
		    off_t off)
{
	char *name;
	int err;

	switch (n->kind) {
	case N_FILE:
		if (off < 0)
			return EINVAL;
		if ((err = fs_file_node_name(n, &name)))
			return err;
		err = views_file_write(v, n->vid, name, (uint64_t)off, buf, size);
		free(name);
		return err;
	case N_REFRESH:
		/* any write asks for a refresh; "full" for a full one */
		return views_refresh(v, n->view, off == 0 && size >= 4 && !memcmp(buf, "full", 4));
	case N_QREFRESH:
		/* the same for every view */
		return views_refresh_all(v, off == 0 && size >= 4 && !memcmp(buf, "full", 4));
	case N_QUERY:
	case N_CONFIG:
		/* the kernel may keep the bytes written in its cache of the
		 * file: a new mtime makes it drop them */
		views_text_written(v, n->vid, n->view, n->kind == N_CONFIG);
		return viewtext_write(v, n, pid, buf, size, off);
	case N_UNHIDE: {
		char why[256];

		/* each write names whole lines ("all", or blob ids) */
		return views_unhide(v, n->view, buf, size, why, sizeof(why));
	}
	default:
		return EROFS;
	}
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n = node_get(ino);
	int err = !n ? ENOENT : n->kind == N_CONFIG && !may_touch_config(req) ? EACCES :
		  do_write(fs_views(req), n, fuse_req_ctx(req)->pid, buf, size, off);

	(void)fi;
	if (n)
		node_put(n);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

/* writes take effect as they arrive: nothing to do at close, ever (ENOSYS
 * tells the kernel to stop sending flushes) */
static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino, (void)fi;
	fuse_reply_err(req, ENOSYS);
}

/* each write is its own LMDB transaction, committed before the reply */
static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	fuse_reply_err(req, 0);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };

	(void)ino;
	fuse_reply_statfs(req, &st);
}

const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init_conn,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.unlink = fs_unlink,
	.rmdir = fs_rmdir,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.flush = fs_flush,
	.fsync = fs_fsync,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.statfs = fs_statfs,
	.create = fs_create,
};

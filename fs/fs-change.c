/*
 * FUSE handlers that change names: a message's flags or place by rename,
 * unlink (hide), and the client files of a view (create, rename over
 * .config or .query, unlink); what cannot be made here is refused.  Each
 * handler replies exactly once (fs-private.h).
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
#include "fs/fs-notify.h"
#include "fs/fs-private.h"
#include "fs/guard.h"
#include "fs/log.h"
#include "fs/msgname.h"
#include "fs/node.h"
#include "fs/viewnames.h"
#include "fs/viewtext.h"

void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *p = node_get(parent);
	struct cache_entry e;
	int err;

	if (!p) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (p->kind == N_VIEW && viewnames_client_file(name)) {
		err = views_file_remove(fs_views(req), p->vid, name);
	} else if (p->kind == N_VIEW && !strcmp(name, ".config")) {
		char why[256];

		/* staged like a write, so it also cancels one still pending */
		err = views_stage_config(fs_views(req), p->view, "", 0, 0, 0, why, sizeof(why));
	} else if (p->kind == N_VIEW && viewnames_child(name) > N_TMP) {
		/* .query .status .refresh .unhide: part of the view, as cur/
		 * is (see fs_rmdir): unlink does nothing, so rm -rf VIEW goes
		 * on to the rmdir that removes the view */
		err = 0;
	} else if (p->kind == N_SREV) {
		/* a revision's files are derived, as .query is the view's: rm
		 * does nothing, so rm -rf VIEW goes on (writes stay EROFS);
		 * the next lookup makes a new inode, as for a name gone */
		char key[2 * NAME_MAX + 2];

		snprintf(key, sizeof(key), "%s/%s", p->name, name);
		node_unkey_named(N_SFILE, p->vid, key);
		err = 0;
	} else if (p->kind != N_CUR && p->kind != N_NEW) {
		err = p->kind == N_QUERIES || p->kind == N_THREADS || p->kind == N_SUBSYS || p->kind == N_VIEW ?
		      EPERM : EROFS;
	} else if (!(err = fs_find_msg(fs_views(req), p, name, &e))) {
		err = views_msg_move(fs_views(req), p->vid, e.oid, CACHE_HIDDEN, e.flags, e.flags,
				     e.uid);
	}
	node_put(p);
	fuse_reply_err(req, err);
}


/*
 * A rename of a message that changes a shared flag renames it in the
 * other views that share flags (views_msg_move).  The kernel keeps the
 * names it looked up there for MSG_ENTRY_TIMEOUT: those whose name
 * changed are told gone (fs-notify.h), from their names before the move.
 * So is the client's new name when the entry came out otherwise (another
 * view's change came in between): the kernel moves its entry to that name
 * once we answer, and the notice waits for the rename's directory locks.
 * A view that looks the message up between the two reads of the others
 * is not told (a race of microseconds; its name then lasts its timeout).
 */
struct other {
	uint64_t vid;
	struct cache_entry e;
};

/* a function of its own: the guard's sigsetjmp stays away from move_msg's
 * variables */
static int entry_of(views_t *v, uint64_t vid, const unsigned char *oid, struct cache_entry *e)
{
	return GUARD(v, cache_entry_get(views_cache(v), vid, oid, e));
}

static int move_msg(views_t *v, uint64_t vid, const struct cache_entry *e, int where,
		    uint32_t was, uint32_t flags, uint32_t uid, uint64_t newdir,
		    const char *newname)
{
	struct cache_entry now;
	char got[128];
	struct other *o = NULL;
	uint64_t *vids = NULL;
	long n = 0, i, k = 0;
	int err;

	if ((was ^ flags) & CACHE_SHARED_FLAGS &&
	    (n = node_msg_views(e->oid, vid, &vids)) > 0 && (o = calloc(n, sizeof(*o))))
		for (i = 0; i < n; i++)
			if (!entry_of(v, vids[i], e->oid, &o[k].e))
				o[k++].vid = vids[i];
	free(vids);
	err = views_msg_move(v, vid, e->oid, where, was, flags, uid);
	if (!err && !entry_of(v, vid, e->oid, &now)) {
		msgname_format(&now, got, sizeof(got));
		if (now.where != where || strcmp(got, newname))
			fs_notify_gone(newdir, newname, 0);
	}
	for (i = 0; !err && i < k; i++) {
		char before[128], after[128] = "";
		uint64_t dir;

		msgname_format(&o[i].e, before, sizeof(before));
		if (!entry_of(v, o[i].vid, e->oid, &now) &&
		    now.where == o[i].e.where)
			msgname_format(&now, after, sizeof(after));
		if (strcmp(before, after) && o[i].e.where <= CACHE_CUR &&
		    (dir = node_find_ino(o[i].e.where == CACHE_CUR ? N_CUR : N_NEW, o[i].vid)))
			fs_notify_gone(dir, before, 0);
	}
	free(o);
	return err;
}

/*
 * A client file renamed over .config or .query, as git config -f, sed -i
 * and other editors save a file: its text is taken as a whole write of it
 * would be (checked, refused with EINVAL and the reason in .status, else
 * applied), then the client file is gone.  A refused rename changes
 * nothing, the client file included.
 */
static int rename_onto(views_t *v, const struct node *p, const char *name, int kind)
{
	char *text = NULL, why[256];
	size_t len = 0;
	int err;

	if ((err = GUARD(v, cache_file_read(views_cache(v), p->vid, name, &text, &len))))
		return err;
	if (len > WRITE_MAX)
		err = EFBIG;
	else if (kind == N_CONFIG)
		err = views_stage_config(v, p->view, text, len, 0, 0, why, sizeof(why));
	else if (memchr(text, '\0', len))
		err = EINVAL;
	else {
		text[len] = '\0';      /* cache_file_read leaves room for it */
		err = views_set_query(v, p->view, text, why, sizeof(why));
	}
	free(text);
	if (!err)
		err = views_file_remove(v, p->vid, name);
	if (!err) {
		/* the kernel drops the replaced inode: the name gets a new one */
		node_file_gone(p->vid, name);
		node_unkey(kind, p->vid);
	}
	return err;
}

static int do_rename(views_t *v, const struct node *p, const char *name,
		     const struct node *np, const char *newname, unsigned flags)
{
	struct cache_entry e;
	struct msgname from, to;
	int err;

	if (flags & RENAME_EXCHANGE)
		return EINVAL;
	if (p->kind == N_QUERIES && np->kind == N_QUERIES) {
		struct cache_view cv;

		/* mv of a view: a new name, the same view (its query kept) */
		if (!strcmp(name, ".status") || !strcmp(name, ".refresh"))
			return EPERM;
		if ((err = GUARD(v, views_get(v, name, &cv))))
			return err;
		err = views_rename(v, name, newname);
		if (!err)
			err = node_rename_view(cv.id, newname);
		cache_view_release(&cv);
		return err;
	}
	if (p->kind == N_VIEW && np->kind == N_VIEW && p->vid == np->vid &&
	    viewnames_client_file(name) && (viewnames_child(newname) == N_CONFIG ||
				       viewnames_child(newname) == N_QUERY))
		return flags & RENAME_NOREPLACE ? EEXIST :
		       rename_onto(v, p, name, viewnames_child(newname));
	if (p->kind == N_VIEW && np->kind == N_VIEW && p->vid == np->vid &&
	    viewnames_client_file(name) && viewnames_client_file(newname)) {
		size_t len;
		int64_t mtime;

		if ((flags & RENAME_NOREPLACE) &&
		    !cache_file_stat(views_cache(v), p->vid, newname, &len, &mtime))
			return EEXIST;
		if ((err = views_file_rename(v, p->vid, name, newname)))
			return err;
		return node_rename_file(p->vid, name, newname);
	}
	if ((p->kind != N_CUR && p->kind != N_NEW) ||
	    (np->kind != N_CUR && np->kind != N_NEW))
		return p->kind == N_VIEW || p->kind == N_QUERIES || p->kind == N_THREADS || p->kind == N_SUBSYS ?
		       EPERM : EROFS;
	if (p->vid != np->vid)
		return EXDEV;
	if ((err = fs_find_msg(v, p, name, &e)))
		return err;
	/* only the maildir info and mbsync's ,U= tag may change: same time,
	 * same oid; cur/ names carry the info, new/ names only when there
	 * are flags (as mutt names flagged unread mail), so that a name is
	 * one entry's state */
	if (msgname_parse(newname, &to) || msgname_parse(name, &from) ||
	    to.date != from.date || memcmp(to.oid, from.oid, CACHE_OID_LEN) ||
	    (np->kind == N_CUR ? !to.has_info : to.has_info != (to.flags != 0)))
		return EINVAL;
	if (flags & RENAME_NOREPLACE) {
		struct cache_entry cur;

		if (!fs_find_msg(v, np, newname, &cur))
			return EEXIST;
	}
	return move_msg(v, p->vid, &e, np->kind == N_CUR ? CACHE_CUR : CACHE_NEW,
			from.flags, to.flags, to.uid, np->ino, newname);
}

void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct node *p = node_get(parent), *np = node_get(newparent);
	int err = p && np ? do_rename(fs_views(req), p, name, np, newname, flags) : ENOENT;

	if (p)
		node_put(p);
	if (np)
		node_put(np);
	fuse_reply_err(req, err);
}

static void fs_refuse(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	fs_refuse(req);
}

/* only client files (mbsync's .uidvalidity) can be made, in a view */
static int do_create(views_t *v, fuse_ino_t parent, const char *name,
		     struct fuse_file_info *fi, struct fuse_entry_param *ep)
{
	struct node *p = node_get(parent);
	struct cache_view cv;
	int err;

	if (!p)
		return ENOENT;
	if (p->kind != N_VIEW || !viewnames_client_file(name)) {
		err = p->kind == N_QUERIES || p->kind == N_THREADS || p->kind == N_SUBSYS ? EPERM : EROFS;
	} else if (!(err = fs_node_view(v, p, &cv))) {
		cache_view_release(&cv);
		err = views_file_create(v, p->vid, name, !!(fi->flags & O_EXCL),
					!!(fi->flags & O_TRUNC));
		if (!err)
			err = fs_do_lookup(v, p, name, ep);
	}
	node_put(p);
	fi->fh = 0;
	fi->direct_io = 1;      /* every read and write goes to the cache */
	return err;
}

void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param ep;
	int err;

	(void)mode;
	err = do_create(fs_views(req), parent, name, fi, &ep);
	if (err)
		fuse_reply_err(req, err);
	else if (fuse_reply_create(req, &ep, fi) == -ENOENT)
		node_forget(ep.ino, 1);         /* interrupted */
}

void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link, (void)parent, (void)name;
	fs_refuse(req);
}

void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	fs_refuse(req);
}

/*
 * What the FUSE handler files (fs.c: lookup, attributes, files and the
 * handler table; fs-dir.c: directories; fs-change.c: renames, unlinks,
 * client files) share.  Every handler resolves its inodes, calls one
 * helper that returns an errno, and replies exactly once; handlers run on
 * libfuse's worker threads.  Not for the rest of fs/.
 */
#ifndef LEIFS_FS_PRIVATE_H
#define LEIFS_FS_PRIVATE_H

#include <stdatomic.h>
#include <sys/types.h>

#include "fs/fs.h"
#include "fs/node.h"

/* the views of the mount a request came to */
views_t *fs_views(fuse_req_t req);

/* A handler that waits (a listing on a first fill, a read of .refresh):
 * fs_wait_begin has the kernel's interrupt (the caller got a signal, as
 * Ctrl-C) set w->interrupted and wake the views; fs_wait_end before w
 * goes out of scope. */
struct fs_waiting {
	atomic_int interrupted;
	views_t *v;
};
void fs_wait_begin(fuse_req_t req, struct fs_waiting *w);
void fs_wait_end(fuse_req_t req);
/* the current name of a client file node (malloc'd); ENOENT once replaced */
int fs_file_node_name(const struct node *n, char **name);
/* the entry for `name` in cur/ or new/ if that is exactly its name now */
int fs_find_msg(views_t *v, const struct node *dir, const char *name,
		struct cache_entry *e);
/* a lookup of `name` in `parent`: *ep filled, one kernel lookup counted */
int fs_do_lookup(views_t *v, const struct node *parent, const char *name,
		 struct fuse_entry_param *ep);
/* reply with a copy of buf[off, off+size) (of len bytes) */
void fs_reply_copy(fuse_req_t req, const char *buf, size_t len, off_t off, size_t size);

/* fs-dir.c */
void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);

/* fs-change.c */
void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags);
void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	      dev_t rdev);
void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);

#endif

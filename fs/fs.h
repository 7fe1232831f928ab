/*
 * fs: the FUSE low-level glue.  Maps inodes to views, view files and
 * messages, and turns each request into one reply.  No parsing, no network:
 * views_* and cache_* do the work; this file only translates.
 *
 * Tree:  /queries/<view>/{cur,new,tmp,.query,.status,.refresh,.config,
 * .unhide}, /queries/{.status,.refresh}, /threads/<message-id>/ (the same
 * files); a view may also hold a client's small files (viewnames.h)
 * Inodes are handed out on lookup and freed on forget (nlookup counting),
 * so a renamed message keeps its inode.  Handlers run on libfuse's worker
 * threads; the node table is protected by its own lock.
 */
#ifndef LEIFS_FS_H
#define LEIFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "fs/views.h"

/* The operations table; userdata for fuse_session_new() is a views_t **
 * (the views open after daemonizing, before the loop starts). */
extern const struct fuse_lowlevel_ops fs_ops;

/* Prepare the node table; call once before the session starts. */
int fs_init(void);
void fs_destroy(void);

/* views_opts.changed: drop the kernel's listings of the view's cur/ and
 * new/ and the names in `gone` it looked up (fs-notify.c); arg is the
 * struct fuse_session. */
void fs_view_changed(void *arg, uint64_t vid, const struct cache_gone *gone);

#endif

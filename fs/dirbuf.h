/*
 * A directory listing as the kernel reads it: entries added with
 * fuse_add_direntry into one growing buffer, made at opendir (or at the
 * first readdir of cur/ and new/) and served by offset until releasedir.
 * Buffers open now are on a list, because the kernel sends no releasedir
 * once the session ends: fs_destroy frees what is left (dir_free_all).
 * The list is locked; one buffer is used by one request at a time.
 */
#ifndef LEIFS_FS_DIRBUF_H
#define LEIFS_FS_DIRBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 314   /* as fs.h */
#endif
#include <fuse_lowlevel.h>

struct dirbuf {
	char *buf;
	size_t size, cap;
	int err;                /* ENOMEM met while adding: the listing fails */
	int lazy;               /* cur/ new/: filled at the first readdir */
	int filling;            /* a first fill runs: a part of it, not kept */
	int where;
	uint64_t vid;
	struct dirbuf *prev, *next;     /* the open list; protected by its lock */
};

/* put d (calloc'd by the caller) on the open list; dir_free takes it off
 * and frees it */
void dir_link(struct dirbuf *d);
void dir_free(struct dirbuf *d);
/* at the end of the session: every buffer still open */
void dir_free_all(void);
/* append one entry (inode ino, type S_IF*); d->err is set if memory ran out */
void dir_add(fuse_req_t req, struct dirbuf *d, const char *name, fuse_ino_t ino,
	     mode_t type);

#endif

/*
 * Names the kernel may keep after they left a view (a sweep or a limit
 * dropped their messages, a shared flag set in another view renamed
 * them), told to the kernel from a thread of their own: the kernel takes
 * the directory's lock for it, which a handler of that directory may hold
 * while it waits on the very search, or rename, that sent them.
 *
 * The kernel's side waits, uninterruptibly, for that lock: while it waits
 * the thread holds the device open.  A daemon killed (SIGKILL) at that
 * moment, with the holder's request unanswered, leaves the mount hanging
 * until it is aborted (/sys/fs/fuse/connections/N/abort); so does a stop
 * by signal with such a request still queued.  The invalidations of
 * listings (fs_view_changed) share the risk for page locks.
 */
#ifndef LEIFS_FS_NOTIFY_H
#define LEIFS_FS_NOTIFY_H

#include <stdint.h>

struct fuse_session;

/* The session to tell; before the loop starts. */
void fs_notify_session(struct fuse_session *se);
/* Queue "the entry `name` of directory `parent` is gone": 0, or -1 when
 * NOTIFY_MAX names wait already (or memory ran out), for a caller that
 * then tells the kernel a whole directory went (force: past the bound). */
#define NOTIFY_MAX 262144
int fs_notify_gone(uint64_t parent, const char *name, int force);
/* Stop the thread and drop what waits; after the session's unmount. */
void fs_notify_stop(void);

#endif

/*
 * A mount point left behind by a killed daemon.  After SIGKILL the kernel
 * keeps the FUSE mount and answers every access with ENOTCONN; libfuse
 * then refuses the mount point with its own message.  deadmount_clear()
 * looks first: a dead FUSE mount of this user (no process serves it) is
 * unmounted, lazily, as fusermount3 -u -z would; one it cannot unmount,
 * or a FUSE mount of another user, is named with what to do.  Called
 * before the mount, in main() only.
 */
#ifndef LEIFS_FS_DEADMOUNT_H
#define LEIFS_FS_DEADMOUNT_H

#include <stddef.h>

/* 0 when `mnt` may be mounted on (*cleared set when a dead mount of this
 * user was unmounted first); -1 with the reason in why */
int deadmount_clear(const char *mnt, int *cleared, char *why, size_t whylen);

#endif

/* What net/archive.c and net/archive-git.c share. */
#ifndef LEIFS_ARCHIVE_PRIVATE_H
#define LEIFS_ARCHIVE_PRIVATE_H

#include <stdatomic.h>
#include <sys/stat.h>

#include "net/net.h"

/* the reason of a failed read, in res->error (cut to fit) */
__attribute__((format(printf, 2, 3)))
void archive_say(struct net_res *res, const char *fmt, ...);
/* whether another thread asked the read to stop */
int archive_stopped(atomic_int *stop);
/* 0 if `path` (stat st) is the user's or root's, else EPERM with why */
int archive_owned(const char *path, const struct stat *st, char *why, size_t whylen);
/* a public-inbox inbox (v1: one bare repository), read from position
 * `from` with git in the empty repository `priv`; as net_archive_read */
int archive_read_git(const char *path, int v1, const char *priv, const char *from, size_t max,
		     long idle_ms, atomic_int *stop, net_msg_fn fn, void *arg, char **next,
		     struct net_res *res);

#endif

/*
 * The inodes of message files, for node.c only.  A view lists up to
 * hundreds of thousands of messages and the kernel keeps an inode for each
 * file a grep -r or a client opened: one record of 56 bytes each, in slabs,
 * instead of a node with its hash entries (~280 bytes).  A record keeps
 * the entry's date and size, so that the kernel's getattr of a message
 * (after each first read: the kernel drops its atime) reads no cache,
 * unless its view lost entries since (msgnodes_swept): then the cache
 * says whether it is still there.
 *
 * An inode number is its record's slot with the slot's generation, so a
 * number comes back only after 2^30 reuses of one slot.  A record lives
 * while the kernel holds lookups on it or a handler holds it (get .. put).
 * Thread-safe: one mutex of its own.
 */
#ifndef LEIFS_MSGNODES_H
#define LEIFS_MSGNODES_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

#define MSGNODE_BIT ((uint64_t)1 << 62)       /* set in every message inode */

static inline int msgnodes_is(uint64_t ino)
{
	return (ino & MSGNODE_BIT) != 0;
}

/* The inode of (vid, oid), made if need be, with one kernel lookup
 * counted and the entry's date and size kept; 0 if out of memory. */
uint64_t msgnodes_lookup(uint64_t vid, const unsigned char *oid, int64_t date, uint64_t size);
/* Hold the record of ino and say what it stands for: 0, or ENOENT.
 * *size is UINT64_MAX when it was too large to keep, or its view lost
 * entries since its lookup. */
int msgnodes_get(uint64_t ino, uint64_t *vid, unsigned char oid[CACHE_OID_LEN],
		 int64_t *date, uint64_t *size);
void msgnodes_put(uint64_t ino);
/* View vid lost entries (a sweep, a limit): getattrs of its records made
 * before ask the cache again. */
void msgnodes_swept(uint64_t vid);
/* The kernel forgot `count` lookups of ino. */
void msgnodes_forget(uint64_t ino, uint64_t count);
/* Append the inodes of view vid's messages to *a (n used of cap,
 * realloc'd); 0 or ENOMEM. */
int msgnodes_view_inos(uint64_t vid, uint64_t **a, size_t *n, size_t *cap);
/* The views other than `skip` in which the kernel holds a lookup of oid,
 * in *vids (malloc'd, NULL when none; a probe for each view that has
 * records): their number, or -1 (ENOMEM). */
long msgnodes_views_of(const unsigned char *oid, uint64_t skip, uint64_t **vids);
/* Records live (for the tests) */
size_t msgnodes_count(void);
void msgnodes_destroy(void);

#endif

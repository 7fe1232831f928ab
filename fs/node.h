/*
 * The inode table of fs/: what each inode number stands for, with the
 * kernel's lookup count.  Shared by the files of fs/ only.
 */
#ifndef LEIFS_NODE_H
#define LEIFS_NODE_H

#include <stdint.h>
#include <time.h>

#include "cache/cache.h"

enum node_kind {
	N_ROOT = 1, N_QUERIES, N_QSTATUS, N_VIEW, N_CUR, N_NEW, N_TMP,
	N_QUERY, N_STATUS, N_REFRESH, N_MSG, N_FILE, N_CONFIG, N_UNHIDE,
	N_QREFRESH,                     /* queries/.refresh */
	N_THREADS,                      /* threads/: thread views (view-thread.c) */
	N_SERIES, N_SREV, N_SFILE,      /* VIEW/series/ (fs-series.h) */
	N_SUBSYS, N_SSTATUS, N_SECTIONS, /* subsystems/, its .status and
					  * .sections (view-subsys.c) */
};

struct node {
	uint64_t ino;
	uint64_t nlookup;               /* protected by the table lock */
	int kind;
	uint64_t vid;                   /* view id, for kinds under a view */
	char *view;                     /* view name, likewise; replaced by a
					 * rename of the view, the old kept
					 * (a handler may be reading it) */
	char **old_views;
	size_t nold;
	unsigned char oid[CACHE_OID_LEN];  /* N_MSG, with the entry's date and */
	int64_t date;                   /* size at its lookup (UINT64_MAX: */
	uint64_t size;                  /* ask the cache) */
	char *name;                     /* N_FILE: a client file of the view;
					 * protected by the table lock */
	/* generated files (.query, .status, ...), protected by viewtext.c's
	 * text lock: the text the last getattr made, and the rewrites of a .query
	 * or .config being written, one per writer */
	char *text;
	size_t textlen;
	struct wtext *writers;
	struct rtext *readers;          /* .refresh, queries/.refresh */
};

/* One reader's summary of the refresh its read of a .refresh ran (by pid,
 * as writers are told apart; see viewtext_refresh). */
struct rtext {
	struct rtext *next;
	int pid;
	char *buf;
	size_t len;
	struct timespec mtime;          /* the file's while it is read */
	int64_t used;                   /* CLOCK_MONOTONIC ms of its last read */
};

/* One writer's rewrite of a .query or .config.  Writes carry no open file
 * (fs.c answers open with ENOSYS), so a writer is told by its pid. */
struct wtext {
	struct wtext *next;
	int pid;
	char *buf;                      /* len bytes and a NUL; NULL: none yet */
	size_t len;
	int refused;                    /* a write of it failed: the rest fails */
	uint64_t serial;                /* which rewrite (views_stage_config) */
	int64_t used;                   /* time of its last write */
};

int node_table_init(void);
void node_table_destroy(void);

/* The node for ino with a reference held by the caller, or NULL. */
struct node *node_get(uint64_t ino);
void node_put(struct node *n);

/* Find or make the node for (kind, vid) and count one kernel lookup;
 * NULL if out of memory, and for N_MSG (node_lookup_msg). */
struct node *node_lookup(int kind, uint64_t vid, const char *view);
/* The inode of entry e of view vid, with one kernel lookup counted; 0 if
 * out of memory.  node_get gives its node: kind, ino, vid, oid, date and
 * size, no view name. */
uint64_t node_lookup_msg(uint64_t vid, const struct cache_entry *e);
/* View vid lost entries: see msgnodes_swept. */
void node_msg_swept(uint64_t vid);
/* The views but `skip` whose message oid the kernel holds: see
 * msgnodes_views_of. */
long node_msg_views(const unsigned char *oid, uint64_t skip, uint64_t **vids);
/* The inode of (kind, vid) if the kernel knows it, else 0; no lookup counted. */
uint64_t node_find_ino(int kind, uint64_t vid);
/* Likewise for a node named within its view (N_SREV, N_SFILE). */
struct node *node_lookup_named(int kind, uint64_t vid, const char *view, const char *name);
/* Likewise for the client file `name` of a view. */
struct node *node_lookup_file(uint64_t vid, const char *view, const char *name);
/* A client file was renamed: its node (if any) now stands for `to`, as the
 * kernel keeps the inode across a rename. */
int node_rename_file(uint64_t vid, const char *from, const char *to);
/* The client file `name` of a view is gone (renamed over .config or
 * .query): its node, if any, keeps its inode but stands for no name. */
void node_file_gone(uint64_t vid, const char *name);
/* The node of (kind, vid), if any, stands for no name any more: the next
 * lookup makes a node with a new inode (the kernel marks a directory it
 * saw removed as dead, and a dead inode must not come back). */
void node_unkey(int kind, uint64_t vid);
/* Likewise for a named node (N_SREV, N_SFILE). */
void node_unkey_named(int kind, uint64_t vid, const char *name);
/* The inodes of view vid's nodes of kinds lo..hi the kernel knows, in
 * *out (malloc'd; NULL when none); their number, or -1 (ENOMEM). */
long node_view_inos(uint64_t vid, int lo, int hi, uint64_t **out);
/* A copy of an N_FILE node's name (it may be renamed meanwhile), or NULL. */
char *node_file_name(const struct node *n);
/* View `vid` was renamed to `view`: every node under it stands for the
 * new name (the kernel keeps its inodes across a rename). */
int node_rename_view(uint64_t vid, const char *view);
/* The kernel forgot `count` lookups. */
void node_forget(uint64_t ino, uint64_t count);

#endif

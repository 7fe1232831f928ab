/*
 * A damaged data.mdb: what can be told at open, and containing the rest.
 *
 * LMDB trusts its file.  A file shorter than its meta page says makes the
 * first read past the end a SIGBUS (mdb_env_open does not check); pages
 * overwritten with garbage send it after wild page numbers, a SIGBUS or
 * SIGSEGV.  So: (1) before mdb_env_open, read the two meta pages ourselves
 * and refuse a file shorter than the newer valid one claims; (2) run the
 * reads that FUSE handlers make under a guard (CACHE_GUARDED in cache.h):
 * a fault there jumps back to the caller, which answers EIO, and the cache
 * is marked damaged so that every later guarded read fails at once.
 *
 * The meta page is parsed by hand: LMDB does not export MDB_meta or a way to
 * read a meta page without opening (and so mapping and trusting) the
 * environment, and mdb_env_info after open is too late.  The layout is
 * LMDB 0.9's (mdb.c, MDB_page header then MDB_meta), stable since 0.9.0
 * and the one Debian's liblmdb 0.9.24 writes, on a 64-bit host:
 *   page header: pgno (8), pad (2), flags (2), lower/upper (4) = 16 bytes
 *   MDB_meta:    magic u32 0xBEEFC0DE, version u32 (1), address (8),
 *                mapsize (8), two MDB_db of 48 bytes (the free DB's first
 *                field, md_pad, holds the page size; md_root, the tree's
 *                root page, at 40 in each), last_pg (8), txnid (8)
 * last_pg does not bound a whole file: a page taken at the end and freed
 * in the same transaction (LMDB's loose pages) counts in it but is never
 * written, so a sound file may end before it (seen: last_pg 373 in a file
 * of 373 pages).  What mdb_env_open and the first lookups read are the
 * roots of the two trees: a file that ends before one of them, or inside
 * a page, is truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <unistd.h>

#include "cache/cache-private.h"

#define META_HDR 16             /* page header before MDB_meta */
#define META_MAGIC 0xBEEFC0DEu
#define META_OFF_MAGIC 0
#define META_OFF_VERSION 4
#define META_OFF_PSIZE 24       /* mm_dbs[0].md_pad: the page size */
#define META_OFF_ROOT0 64       /* mm_dbs[0].md_root: the free DB's root */
#define META_OFF_ROOT1 112      /* mm_dbs[1].md_root: the main DB's root */
#define NO_PAGE (~(uint64_t)0)  /* P_INVALID: an empty tree */
#define META_OFF_LASTPG 120     /* after address, mapsize, two 48-byte MDB_db */
#define META_OFF_TXNID 128
#define META_LEN 136

struct meta {
	uint32_t psize;
	uint64_t last_pg, txnid, root[2];
};

/* the meta page at `at`: 0, or EIO if it is unreadable or not one */
static int meta_read(int fd, off_t at, struct meta *m)
{
	unsigned char b[META_HDR + META_LEN];
	uint32_t magic, version;

	if (pread(fd, b, sizeof(b), at) != (ssize_t)sizeof(b))
		return EIO;
	memcpy(&magic, b + META_HDR + META_OFF_MAGIC, 4);
	memcpy(&version, b + META_HDR + META_OFF_VERSION, 4);
	memcpy(&m->psize, b + META_HDR + META_OFF_PSIZE, 4);
	memcpy(&m->last_pg, b + META_HDR + META_OFF_LASTPG, 8);
	memcpy(&m->txnid, b + META_HDR + META_OFF_TXNID, 8);
	memcpy(&m->root[0], b + META_HDR + META_OFF_ROOT0, 8);
	memcpy(&m->root[1], b + META_HDR + META_OFF_ROOT1, 8);
	if (magic != META_MAGIC || version != 1 || m->psize < 512 ||
	    m->psize > 65536 || (m->psize & (m->psize - 1)))
		return EIO;
	return 0;
}

int cache_check_file(const char *file, char *why, size_t whylen)
{
	struct meta m0, m1, *m = NULL;
	struct stat st;
	uint64_t want;
	int fd = open(file, O_RDONLY | O_CLOEXEC), ok0, ok1, i;

	if (fd < 0)
		return 0;       /* none yet: LMDB makes it */
	if (fstat(fd, &st) || st.st_size == 0) {
		close(fd);
		return 0;
	}
	ok0 = !meta_read(fd, 0, &m0);
	/* page 1 is one page further, at the size page 0 gives */
	ok1 = ok0 && !meta_read(fd, (off_t)m0.psize, &m1) && m1.psize == m0.psize;
	close(fd);
	if (!ok0) {
		snprintf(why, whylen, "cache %s is damaged (no valid LMDB meta page); "
			 "move it away to start afresh", file);
		return EIO;
	}
	m = ok1 && m1.txnid > m0.txnid ? &m1 : &m0;
	want = 2 * (uint64_t)m->psize;  /* the meta pages */
	for (i = 0; i < 2; i++) {
		/* a root past any file (a garbage meta) must not overflow */
		uint64_t r = m->root[i] < (1ull << 40) ? m->root[i] : 1ull << 40;

		if (m->root[i] != NO_PAGE && (r + 1) * m->psize > want)
			want = (r + 1) * m->psize;
	}
	if ((uint64_t)st.st_size < want || st.st_size % m->psize) {
		snprintf(why, whylen, "cache %s is damaged (truncated: %lld bytes, LMDB expects %llu bytes); "
			 "move it away to start afresh", file, (long long)st.st_size,
			 (unsigned long long)want);
		return EIO;
	}
	return 0;
}

/* ---- faults in guarded reads ---- */

_Thread_local sigjmp_buf *cache_guard_jb;
static void *map_lo, *map_hi;   /* the map of the open cache, for messages */
static struct sigaction old_bus, old_segv;  /* whoever handled them before */

void cache_guard_map(void *map, size_t len)
{
	map_lo = map;
	map_hi = map ? (char *)map + len : NULL;
}

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = cache_guard_jb;
	char *a = si->si_addr;

	if (jb && (!map_lo || a >= (char *)map_lo)) {
		/* a guarded read that faulted in the map, or past it (LMDB
		 * follows a damaged page number forward from the map's start):
		 * back to CACHE_GUARDED, which answers EIO (SA_NODEFER: the
		 * signal is not blocked, nothing to restore).  A fault below
		 * the map (a NULL pointer) is a bug, not damage: it goes on
		 * to the previous handler, which says where. */
		cache_guard_jb = NULL;
		siglongjmp(*jb, 1);
	}
	if (map_lo && a >= (char *)map_lo && a < (char *)map_hi) {
		/* in a write transaction or another unguarded use of the map:
		 * unwinding would leave LMDB's writer lock held; stop here */
		say("leifs: fault in the cache's map outside a guarded read: data.mdb is damaged; "
		    "move it away to start afresh\n");
		syslog(LOG_ERR, "fault in the cache's map outside a guarded read: data.mdb is damaged; "
		       "move it away to start afresh");
		abort();
	}
	/* not ours: to whoever handled it before us (the sanitizers print
	 * where it happened), else the default action, with its core dump,
	 * on return */
	struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction && old->sa_sigaction != on_fault) {
		old->sa_sigaction(sig, si, uc);
		return;
	}
	if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL &&
	    old->sa_handler != SIG_IGN && old->sa_handler) {
		old->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
}

int cache_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old_bus) || sigaction(SIGSEGV, &sa, &old_segv))
		return errno;
	return 0;
}

/* What a guarded read holds, so that a fault that jumps out of it leaves
 * no reader slot taken and nothing allocated: per thread, as the guard. */
#define HELD_MAX 16
static _Thread_local MDB_txn *held_txn[HELD_MAX];
static _Thread_local MDB_cursor *held_cur[HELD_MAX];
static _Thread_local int n_txn, n_cur;

static void hold(void **set, int *n, void *p)
{
	if (*n < HELD_MAX)
		set[(*n)++] = p;
}

static void drop(void **set, int *n, void *p)
{
	int i;

	for (i = *n - 1; i >= 0; i--) {
		if (set[i] == p) {
			set[i] = set[--*n];
			return;
		}
	}
}

int cache_rd_begin(cache_t *c, MDB_txn **txn)
{
	int rc = cache_errno(mdb_txn_begin(c->env, NULL, MDB_RDONLY, txn));

	if (!rc)
		hold((void **)held_txn, &n_txn, *txn);
	return rc;
}

void cache_rd_end(MDB_txn *txn)
{
	drop((void **)held_txn, &n_txn, txn);
	mdb_txn_abort(txn);
}

int cache_cursor_open(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cur)
{
	int rc = cache_errno(mdb_cursor_open(txn, dbi, cur));

	if (!rc)
		hold((void **)held_cur, &n_cur, *cur);
	return rc;
}

void cache_cursor_close(MDB_cursor *cur)
{
	drop((void **)held_cur, &n_cur, cur);
	mdb_cursor_close(cur);
}

int cache_guard_fault(cache_t *c)
{
	/* what the read jumped out of: a read transaction's end touches
	 * only its reader slot in the lock file, not the damaged map */
	while (n_cur)
		mdb_cursor_close(held_cur[--n_cur]);
	while (n_txn)
		mdb_txn_abort(held_txn[--n_txn]);
	return !atomic_exchange(&c->damaged, 1);
}

int cache_damaged(cache_t *c, char *why, size_t whylen)
{
	if (!atomic_load(&c->damaged))
		return 0;
	if (why)
		snprintf(why, whylen, "cache %s is damaged (a read of it faulted); "
			 "unmount, move it away to start afresh", c->datafile);
	return 1;
}

/* ---- a full filesystem ---- */

/* LMDB says ENOSPC for a write the filesystem refused, EIO for one it cut
 * short, and MDB_MAP_FULL (ENOSPC here too) for a full map: what is left on
 * the filesystem tells them apart, since after a failed write on a full one
 * less than a commit's worth of pages is free. */
#define FS_LOW (1u << 20)
int cache_fs_full(cache_t *c)
{
	struct statvfs sv;
	unsigned long long left;

	if (!c || statvfs(c->datafile, &sv))
		return 0;
	/* root may use the blocks kept back for it */
	left = (unsigned long long)(geteuid() == 0 ? sv.f_bfree : sv.f_bavail) * sv.f_frsize;
	return left < FS_LOW;
}

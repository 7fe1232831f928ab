/*
 * cache: the LMDB store behind every view.
 *
 * What is kept, under one LMDB environment in DIR/lmdb:
 *   messages  oid -> raw bytes (+ date, content hash): stored once, however
 *             many views hold them.  oid is the git blob id, SHA-1 of
 *             "blob <len>\0<raw>", as public-inbox and lei name messages.
 *   views     name -> id, query, refresh bookmark, state, last error.
 *   entries   (view id, oid) -> where the message is in the view (new/,
 *             cur/ or hidden by unlink), its maildir flags, date and size.
 *   dedupe    (view id, content hash) -> oid, lei's "content" dedupe.
 *   refs      oid -> how many entries hold it; a message goes with its last.
 *   ids       view id -> name: the views that exist, for writers that hold
 *             only an id (nothing is written under a removed view).
 *   counts    view id -> how many of its entries are in new/, cur/, hidden:
 *             .status answers from it, at the same cost for any view.
 *   away      (view id, oid) -> the user's state (flags, hidden, name tag,
 *             new/ or cur/) of a message that left the view (a full search
 *             no longer found it, a limit): it returns as the user left it.
 *             One small record per message the view ever lost; removed with
 *             the view.
 *   settings  view id -> the view's .config text; removed with the view.
 *   imap      (view id, IMAP folder URL, oid) -> pending or done: what
 *             leifs APPENDed to a view's folder; with each folder's
 *             UIDVALIDITY (imapfolder), a new one of which starts over,
 *             and how many are done (imapcount, kept in the transaction
 *             that marks them: .status answers from it, at the same cost
 *             for any folder).  Removed with the view.
 *   sources   spec -> a local archive's record: where its next import
 *             resumes, and the id its messages are held under (entries
 *             under an id that is never a view's: see sources.c).
 *   files     (view id, name) -> a file a client keeps in the view (files.c).
 *   series    (view id, key) -> what views derived of the view's patch
 *             series (series/): made again from its messages at will.
 *   marks     (view id, source) -> when the view's last search of the
 *             source that found something began: its next dt: bound.
 *   meta      the next view id.
 * A view's id is never reused, so rmdir + mkdir of one name starts fresh.
 *
 * Invariants: every entry's oid is in messages; a write transaction is never
 * open across network I/O (ingest buffers a batch in memory, then writes it
 * in one short transaction); a commit is all-or-nothing, so a crash leaves the
 * last committed state.
 *
 * Threads: every function may be called from any thread at once (LMDB
 * serialises writers, readers see a consistent snapshot).  Strings and
 * buffers handed out are malloc'd copies, owned by the caller, since LMDB
 * values die with their transaction.  Errors: 0 or a positive errno, each
 * LMDB code translated where it is met (cache_errno: MDB_NOTFOUND -> ENOENT,
 * MDB_KEYEXIST -> EEXIST, MDB_MAP_FULL -> ENOSPC, MDB_READERS_FULL ->
 * EAGAIN, a system errno as it is, other LMDB errors -> EIO).
 */
#ifndef LEIFS_CACHE_H
#define LEIFS_CACHE_H

#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CACHE_OID_LEN 20
#define CACHE_CHASH_LEN 32

typedef struct cache cache_t;

/* Open (creating as needed) the cache in `dir`, 0700.  On failure `why`
 * holds a one-line reason. */
int cache_open(const char *dir, size_t map_size, cache_t **out,
	       char *why, size_t whylen);
/* The same for leifs --check: a cache of an older layout is read as it
 * is, never upgraded (an older daemon may be using it). */
int cache_open_check(const char *dir, cache_t **out, char *why, size_t whylen);
void cache_close(cache_t *c);

/*
 * Damage.  LMDB checks the structure of what it reads only in part and
 * trusts its file: a data.mdb shorter than its meta page says is refused by
 * cache_open (EIO, "truncated" in why); garbage in a page can send LMDB's
 * reads outside the map, a SIGBUS or SIGSEGV.  Reads made for a FUSE
 * request run under CACHE_GUARDED: a fault there becomes EIO for that call
 * and marks the cache damaged, after which every guarded read fails at once
 * with EIO (the map is not trusted again until a remount with the file moved
 * away).  A fault outside a guard on the map (a write transaction: unwinding
 * would leave LMDB's writer lock held) is logged and aborts the daemon.
 * What nothing detects: a bit flipped in a page whose structure stays valid
 * (a message's bytes, a flag, a date) is served as it is; LMDB keeps no
 * checksums.  A message's name carries its blob id, so `git hash-object`
 * on the file tells a damaged message from a good one.
 */
/* Once, at startup: the SIGBUS/SIGSEGV handler behind CACHE_GUARDED. */
int cache_guard_install(void);
/* Whether a guarded read has faulted; `why` (if not NULL) gets a line
 * saying so and what to do. */
int cache_damaged(cache_t *c, char *why, size_t whylen);
/* For CACHE_GUARDED: marks the cache damaged; 1 the first time. */
int cache_guard_fault(cache_t *c);
extern _Thread_local sigjmp_buf *cache_guard_jb;   /* armed guard, this thread */
/*
 * `r = CACHE_GUARDED(c, cache_x(c, ...), on_fault);` runs the read call and
 * gives its result; or EIO at once if the cache is damaged; or, after a
 * fault in the call, EIO, having evaluated `on_fault` (e.g. to log) if this
 * was the cache's first fault.  Only for calls
 * that hold no lock and open no write transaction while they read: a fault
 * jumps out of them; their read transactions and cursors are released
 * (cache_rd_begin), what else they allocated is lost (the cache is given
 * up as damaged anyway).
 */
#define CACHE_GUARDED(c, call, on_fault) __extension__ ({		\
	sigjmp_buf cache_jb_;						\
	volatile int cache_r_ = EIO;					\
	if (cache_damaged((c), NULL, 0)) {				\
		cache_r_ = EIO;						\
	} else if (sigsetjmp(cache_jb_, 0)) {				\
		if (cache_guard_fault(c))				\
			(void)(on_fault);				\
		cache_r_ = EIO;						\
	} else {							\
		cache_guard_jb = &cache_jb_;				\
		cache_r_ = (call);					\
		cache_guard_jb = NULL;					\
	}								\
	cache_r_; })

/* Whether the filesystem the cache is on is (nearly) full: after a write
 * failed with ENOSPC or EIO, says that the disk is the cause, not the map
 * (MDB_MAP_FULL, also ENOSPC: raising map_size helps only then). */
int cache_fs_full(cache_t *c);

/* Take the cache directory `dir` (made if need be) for this process:
 * an exclusive flock() on DIR/lock, which holds the holder's pid.  The
 * caller keeps *fd open for as long as it serves (the lock goes with the
 * last descriptor of it, and with the process, however it ends; fork()
 * shares it).  EBUSY when another process holds it, with its pid in `why`.
 * Take it before cache_open(), once per process. */
int cache_lock(const char *dir, int *fd, char *why, size_t whylen);
/* After fork() (daemonizing): write the new holder's pid into the lock. */
void cache_lock_moved(int fd);

/* ---- views ---- */

enum cache_view_state {
	CACHE_VIEW_NEW = 0,     /* never searched successfully */
	CACHE_VIEW_FRESH,       /* last search succeeded */
	CACHE_VIEW_FAILED,      /* last search failed; older results kept */
};

struct cache_view {
	uint64_t id;
	char *name;             /* directory name (the encoded query) */
	char *query;            /* query text */
	int64_t created;
	int64_t last_ok;        /* start time of the last successful search, 0: none */
	int64_t last_try;       /* end time of the last search, ok or not */
	int state;              /* enum cache_view_state */
	char *error;            /* last error, "" when none */
	uint32_t gen;           /* generation of the last full search */
	uint32_t epoch;         /* bumped by set_query and reset */
	int filled;             /* a search of it ended whole once (its first
				 * fill is done; a new query or a forced full
				 * search keeps it): what later searches add is
				 * new mail.  Kept from the first search
				 * recorded fresh; in a cache from before it, a
				 * bookmark or a fresh state says so. */
	char *last;             /* how the last search went, as views wrote it
				 * (opaque here), "" when none: kept so that
				 * .status says it after a remount */
};

void cache_view_release(struct cache_view *v);

/* Make a view; EEXIST if the name is taken. */
int cache_view_create(cache_t *c, const char *name, const char *query,
		      struct cache_view *out);
/* Look up a view by name; ENOENT if there is none. */
int cache_view_get(cache_t *c, const char *name, struct cache_view *out);
/* The same by id (its name may have changed meanwhile: a rename). */
int cache_view_get_id(cache_t *c, uint64_t id, struct cache_view *out);
/* Call fn for each view in name order; a non-zero return stops and is
 * returned.  `v` is valid only during the call. */
int cache_view_each(cache_t *c, int (*fn)(void *arg, const struct cache_view *v),
		    void *arg);
/* Record the outcome of a search of view `id` (looked up by name).  The
 * bookmark becomes last_ok only if the view's epoch is still the one the
 * search started in (no new query, no forced full search meanwhile);
 * last_ok < 0 keeps it; `last` (NULL keeps it) becomes the view's last. */
int cache_view_set_result(cache_t *c, const char *name, uint64_t id, int state,
			  uint32_t epoch, int64_t last_ok, int64_t last_try,
			  const char *error, const char *last);
/* Remove a view, its entries, flags, dedupe records, bookmarks, client
 * files, settings and the state of messages that left it; messages no other view
 * holds go too. */
int cache_view_delete(cache_t *c, const char *name);
/* Rename view `id` (now named `from`) to `to`, in one transaction: its
 * record, query and all it holds stay (they are kept by its id).  EEXIST
 * when `to` names a view, ENOENT when `from` is not view `id`. */
int cache_view_rename(cache_t *c, const char *from, uint64_t id, const char *to);
/* Replace a view's query; the bookmark is cleared so that the next search
 * is a full one.  EINVAL-free: the caller validated the query. */
int cache_view_set_query(cache_t *c, const char *name, uint64_t id,
			 const char *query);
/* A full search's generation: the view's next one, recorded now, so that
 * a full search that is cut short or held never lends its marks to the
 * next (see cache_view_sweep). */
int cache_view_next_gen(cache_t *c, const char *name, uint64_t id, uint32_t *gen);
/* How many entries (not hidden) a sweep of generation `gen` would drop. */
int cache_view_stale(cache_t *c, uint64_t id, uint32_t gen, uint64_t *n);
/* Clear the bookmark: the next search is a full one. */
int cache_view_reset(cache_t *c, const char *name, uint64_t id);
/* What a sweep or a limit dropped, for a caller that tells the kernel
 * those names are gone: the first CACHE_GONE_MAX entries that were not
 * hidden, the others counted in `missed`.  Zeroed by the caller; free
 * with cache_gone_free. */
#ifndef CACHE_GONE_MAX          /* a build with 1 takes the callers' fallback at
				 * every sweep (T110, T130, T147 pass so) */
#define CACHE_GONE_MAX 65536
#endif
struct cache_gone {
	struct cache_entry *e;
	size_t n, cap;
	uint64_t missed;
};
void cache_gone_free(struct cache_gone *g);
/* After a successful full search of generation `gen`, started in `epoch`:
 * drop the entries it did not see (hidden ones stay hidden), record gen.
 * Does nothing if the epoch moved on (a newer full search will sweep).
 * *dropped gets the count; gone (may be NULL) what went. */
int cache_view_sweep(cache_t *c, const char *name, uint64_t id, uint32_t gen,
		     uint32_t epoch, uint64_t *dropped, struct cache_gone *gone);

/* ---- entries (a view's messages) ---- */

enum cache_where { CACHE_NEW = 0, CACHE_CUR = 1, CACHE_HIDDEN = 2 };

struct cache_entry {
	unsigned char oid[CACHE_OID_LEN];
	int64_t date;           /* unix time, from the Date header */
	uint64_t size;          /* bytes of the raw message */
	uint32_t flags;         /* maildir flags, see cache_flags_* */
	int where;              /* enum cache_where */
	uint32_t uid;           /* a client's ",U=" name tag (mbsync); 0: none */
};

/* Call fn for each entry of view `id` that is not hidden (oid order). */
int cache_entry_each(cache_t *c, uint64_t id,
		     int (*fn)(void *arg, const struct cache_entry *e), void *arg);
/* One entry; ENOENT if the view never had it (hidden ones are returned). */
int cache_entry_get(cache_t *c, uint64_t id, const unsigned char *oid,
		    struct cache_entry *out);
/* Move an entry (rename between new/ and cur/, new flags or name tag, or
 * hide it for good with CACHE_HIDDEN).  ENOENT if the view does not have it. */
int cache_entry_update(cache_t *c, uint64_t id, const unsigned char *oid,
		       int where, uint32_t flags, uint32_t uid);
/* Call fn for each hidden entry of view `id` (unlinked by the user). */
int cache_hidden_each(cache_t *c, uint64_t id,
		      int (*fn)(void *arg, const struct cache_entry *e), void *arg);
/* Bring back hidden entries of view `id` (oid NULL: all of them) where they
 * were when they were hidden; *n gets the count. */
int cache_entry_unhide(cache_t *c, uint64_t id, const unsigned char *oid, uint64_t *n);
/* Whether view `id` has ever had an entry (hidden ones count): cheap. */
int cache_entry_any(cache_t *c, uint64_t id, int *any);
/* Count the entries of a view that are not hidden: a lookup of the view's
 * counters, whatever its size. */
int cache_entry_count(cache_t *c, uint64_t id, uint64_t *out);
/* The entries of a view in new/, cur/ and hidden, from its counters (kept
 * in the transaction that moves the entries; a cache from before them is
 * counted once at open).  ENOENT: no such view. */
struct cache_counts {
	uint64_t new_, cur, hidden;
};
int cache_view_counts(cache_t *c, uint64_t id, struct cache_counts *out);

/*
 * How a view tells copies of one message apart, as lei's --dedupe
 * (PublicInbox::LeiDedupe): by content hash (the default), by blob id, by
 * Message-ID, or not at all.  Entries are keyed by blob id, so "none" and
 * "oid" are the same here: two copies with one blob id are one file.
 * The first copy to arrive wins.
 */
enum { CACHE_DEDUPE_CONTENT, CACHE_DEDUPE_OID, CACHE_DEDUPE_MID, CACHE_DEDUPE_NONE };
/* Forget which copies a view kept (a new strategy): the next full search
 * decides again, in arrival order. */
int cache_view_clear_dedupe(cache_t *c, uint64_t id);
/* Keep the n newest entries of a view that are not hidden (by date, then
 * blob id); drop the others (into gone, which may be NULL). */
int cache_view_limit(cache_t *c, uint64_t id, uint64_t n, uint64_t *dropped,
		     struct cache_gone *gone);

/* Per-source bookmarks of a view: when the last search of `src` that found
 * something began.  ENOENT: none.  Set only if view `name` is still view
 * `id` in `epoch` (else nothing is done); cleared with cache_marks_clear(),
 * and with the view. */
int cache_mark_get(cache_t *c, uint64_t id, const char *src, int64_t *t);
int cache_mark_set(cache_t *c, const char *name, uint64_t id, uint32_t epoch,
		   const char *src, int64_t t);
int cache_marks_clear(cache_t *c, uint64_t id);

/*
 * Client files: small files a mail client keeps in a maildir it syncs
 * (mbsync's .uidvalidity), stored per view and removed with it.  At most
 * CACHE_FILES_MAX per view, CACHE_FILE_MAX bytes each (ENOSPC, EFBIG).
 * Each call is one transaction; bytes returned are the caller's to free.
 */
#define CACHE_FILES_MAX 16
#define CACHE_FILE_MAX (256 * 1024)
int cache_file_stat(cache_t *c, uint64_t id, const char *name, size_t *len, int64_t *mtime);
int cache_file_read(cache_t *c, uint64_t id, const char *name, char **data, size_t *len);
/* Make an empty file; EEXIST if it is there and `excl`, else keep it. */
int cache_file_create(cache_t *c, uint64_t id, const char *name, int excl);
int cache_file_write(cache_t *c, uint64_t id, const char *name, uint64_t off,
		     const char *buf, size_t len);
int cache_file_truncate(cache_t *c, uint64_t id, const char *name, uint64_t len);
/* Replace the whole content (making the file if need be), in one transaction. */
int cache_file_put(cache_t *c, uint64_t id, const char *name, const char *buf, size_t len);
int cache_file_remove(cache_t *c, uint64_t id, const char *name);
/* Rename, replacing `to` if it exists. */
int cache_file_rename(cache_t *c, uint64_t id, const char *from, const char *to);
int cache_file_each(cache_t *c, uint64_t id, int (*fn)(void *arg, const char *name), void *arg);

/* ---- settings (a view's .config) ---- */

#define CACHE_SETTINGS_MAX (256 * 1024)
/* The settings text of view id (malloc'd, NUL-terminated, the caller's;
 * `text` NULL: only its length and the time it was stored).  ENOENT: the
 * view has none (it takes the defaults). */
int cache_settings_get(cache_t *c, uint64_t id, char **text, size_t *len, int64_t *mtime);
/* Store view id's settings text (stamped now); ENOENT once the view is
 * removed, EFBIG over CACHE_SETTINGS_MAX. */
int cache_settings_put(cache_t *c, uint64_t id, const char *text, size_t len);
/* Forget them (ENOENT if there were none): the view takes the defaults. */
int cache_settings_remove(cache_t *c, uint64_t id);

/* ---- IMAP delivery (imap.c): what was APPENDed to a view's folders ---- */

/* Recorded before an APPEND (it may have happened: ask the server) and
 * after it (it did). */
enum { CACHE_IMAP_PENDING = 1, CACHE_IMAP_DONE = 2 };
/* Record folder `url`'s UIDVALIDITY for view id; a different one than
 * recorded, or `fresh` (leifs just made the folder: a server may give a
 * new folder its old UIDVALIDITY), drops the folder's delivery records
 * (*changed = 1 if there were) and sets its done counter to 0, so all is
 * delivered again.  ENOENT once the view is removed. */
int cache_imap_folder(cache_t *c, uint64_t id, const char *url, uint32_t uidvalidity,
		      int fresh, int *changed);
/* states[i] = the CACHE_IMAP_* of oids[i] (n of them, CACHE_OID_LEN each)
 * in folder `url` of view id, 0 if never recorded; one read transaction. */
int cache_imap_states(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		      size_t n, unsigned char *states);
/* Record n oids as `state`, in one write transaction that also moves the
 * folder's done counter by the records that become done or stop being
 * done (ENOENT once the view is removed). */
int cache_imap_mark(cache_t *c, uint64_t id, const char *url, const unsigned char *oids,
		    size_t n, unsigned char state);
/* How many messages folder `url` of view id has as delivered (done): one
 * read of its counter.  A folder not counted yet (a cache from before the
 * counter, or one written since this leifs's last clean close by anything
 * else: an older leifs, a crash, a compaction) is counted once, by a walk
 * of its records, and the counter stored. */
int cache_imap_count(cache_t *c, uint64_t id, const char *url, uint64_t *done);

/* ---- sources (local archives) ---- */

struct cache_source {
	char *spec;             /* the archive as views name it */
	uint64_t id;            /* its messages' entries are under this id,
				 * never a view's: for cache_batch_new_source */
	int64_t created;
	char *position;         /* where its next import resumes, "" at first */
};
void cache_source_release(struct cache_source *s);
/* The record of `spec`; ENOENT if none, ENAMETOOLONG if it is empty or
 * longer than 511 bytes (LMDB's key limit). */
int cache_source_get(cache_t *c, const char *spec, struct cache_source *out);
/* The same, making it (position "") if there is none. */
int cache_source_add(cache_t *c, const char *spec, struct cache_source *out);
/* Record where the next import resumes; ENOENT if `spec` is no longer
 * source `id` (removed, maybe made anew, meanwhile). */
int cache_source_set_position(cache_t *c, const char *spec, uint64_t id, const char *pos);
/* Forget a source: its record and entries; messages no view holds go.
 * ENOENT if there is none.  (The daemon does not call it yet: an archive
 * no view names any more keeps its messages, ready for the next view that
 * names it, as before the sources table; --check lists every source.) */
int cache_source_remove(cache_t *c, const char *spec);
/* Call fn for each source, in spec order; a non-zero return stops and is
 * returned.  `s` is valid only during the call. */
int cache_source_each(cache_t *c, int (*fn)(void *arg, const struct cache_source *s),
		      void *arg);

/* A view's holder (holder.c): the messages its series fetched beyond the
 * view (the rest of a thread it holds part of), as entries under a source
 * record of spec "series:<view>", gone with the view.  Get it (ENOENT if
 * none), or with `make` make it, ENOENT once the view is removed; fill it
 * with cache_batch_new_source and read it with cache_entry_each(s.id);
 * forget n of its messages (those of threads the view no longer has) in
 * one transaction. */
void cache_holder_spec(uint64_t view, char out[40]);
int cache_holder_get(cache_t *c, uint64_t view, int make, struct cache_source *out);
int cache_holder_forget(cache_t *c, const struct cache_source *s, const unsigned char *oids,
			size_t n);

/* A number that changes with every write to the cache (LMDB's last
 * transaction id): directories use it to tell the kernel their listing
 * may have changed. */
uint64_t cache_version(cache_t *c);

/* The flags of a message that views share by default, as lei keeps
 * keywords per message: flagged, replied, seen, trashed (F R S T).  Draft,
 * passed, the keywords a..z and mbsync's ,U= stay a view's own. */
#define CACHE_FLAG_FLAGGED (1u << 1)
#define CACHE_FLAG_REPLIED (1u << 3)
#define CACHE_FLAG_SEEN    (1u << 4)
#define CACHE_FLAG_TRASHED (1u << 5)
#define CACHE_SHARED_FLAGS (CACHE_FLAG_FLAGGED | CACHE_FLAG_REPLIED | CACHE_FLAG_SEEN | \
			    CACHE_FLAG_TRASHED)
/* A message's shared flags (keywords.c): 0 when it has none. */
int cache_kw_get(cache_t *c, const unsigned char *oid, uint32_t *flags);
/* A client's rename of view id's entry, from a name with flags `was` to
 * one with `flags`: the flags that differ between the two names are set
 * or cleared in the entry as it is now (a change another view made since
 * the client read the name stays), it moves to `where` with name tag uid,
 * and, in the same transaction, the shared ones among them are set or
 * cleared in the message's keywords and in the entry, or the record kept
 * while it is out of the view, of each of the `nviews` views (a message
 * seen goes from new/ to cur/; id itself among them is skipped; none with
 * nviews 0).  `changed` (room for nviews; may be NULL) gets the ids of
 * the views whose entry changed.  With no keywords table (not opened by a
 * mount) only id's entry moves.  ENOENT if the view does not have it. */
int cache_entry_update_shared(cache_t *c, uint64_t id, const unsigned char *oid, int where,
			      uint32_t was, uint32_t flags, uint32_t uid, const uint64_t *views,
			      size_t nviews, uint64_t *changed, size_t *nchanged);
/* A cache from before keywords: *pending until cache_kw_migrate has given
 * the `nviews` views that share the union of their flags (a flag set in
 * any of them counts; of view i, the flags in count[i]: a flagged-hits
 * view's F is the search's, not the user's), in one transaction. */
int cache_kw_pending(cache_t *c, int *pending);
int cache_kw_migrate(cache_t *c, const uint64_t *views, const uint32_t *count, size_t nviews);

/* Maildir flags <-> bits: "DFPRST" and lowercase keywords a..z. */
int cache_flags_parse(const char *s, uint32_t *out);  /* EINVAL on others */
void cache_flags_format(uint32_t flags, char out[40]);

/* ---- message bytes ---- */

/* Copy up to `size` bytes at `off` of message `oid` into buf; *n gets the
 * count (0 at or past the end). */
int cache_msg_read(cache_t *c, const unsigned char *oid, off_t off,
		   size_t size, char *buf, size_t *n);

/* The whole of message `oid`, malloc'd (the caller frees *raw). */
int cache_msg_get(cache_t *c, const unsigned char *oid, char **raw, size_t *len);
/* Its size in bytes, without reading it. */
int cache_msg_size(cache_t *c, const unsigned char *oid, size_t *len);

/* ---- ingest ---- */

/*
 * A batch gathers messages for one view in memory and writes them in one
 * transaction at cache_batch_flush().  cache_batch_add() does the cheap
 * checks first: a message already in the view (by oid, hidden ones too) is
 * skipped before any parsing; one already in the store is not parsed again.
 * Content dedupe happens at flush, in arrival order: the first copy wins.
 * Messages land in new/ or, with to_cur, in cur/ (as lei's first fill).
 */
typedef struct cache_batch cache_batch_t;

/* gen: the generation that entries added get; with `full`, entries the view
 * already has are marked with gen too (see cache_view_sweep).  epoch: the
 * view's epoch when the search began; a flush writes nothing and answers
 * ECANCELED once view `view` is removed or its epoch moved on (a new
 * query, a forced full search), so no search outlives its view.  A message
 * that returns to a view gets back the state the user left it in. */
int cache_batch_new(cache_t *c, uint64_t view, uint32_t epoch, int to_cur, uint32_t gen,
		    int full, int dedupe, cache_batch_t **out);
/* A batch that holds messages for source `s` (its entries, in cur/, no
 * dedupe): a flush writes nothing and answers ECANCELED once the source
 * is removed. */
int cache_batch_new_source(cache_t *c, const struct cache_source *s, cache_batch_t **out);
/* 0: queued (or skipped as known).  Flushes by itself when the batch is big. */
int cache_batch_add(cache_batch_t *b, const char *raw, size_t len);
/* The same for a message the store has (a local index's hit): cheap when
 * the view has it; ENOENT if the store does not. */
int cache_batch_add_stored(cache_batch_t *b, const unsigned char *oid);
/* The same, and a message that becomes an entry now gets maildir flags
 * `flags` (lei q -tt's flagged hits).  One the view holds, or that comes
 * back to it with the state the user left it in, keeps its flags: the
 * user's state is never overwritten. */
int cache_batch_add_stored_flags(cache_batch_t *b, const unsigned char *oid, uint32_t flags);
/* The view shares flags (cache_entry_update_shared): a message that becomes an entry,
 * or comes back to the view, has the flags its message has now (a seen
 * one in cur/); off by default. */
void cache_batch_share(cache_batch_t *b, int on);
int cache_batch_flush(cache_batch_t *b);
/* Messages that became entries so far, and those skipped as known. */
uint64_t cache_batch_added(const cache_batch_t *b);
uint64_t cache_batch_known(const cache_batch_t *b);
void cache_batch_free(cache_batch_t *b);   /* drops what was not flushed */

/* ---- series (seriestab.c): what views derive of a view's patch series ---- */

/* Records under view id, keyed by up to 492 bytes of the caller's, with
 * values opaque to the cache; removed with the view.  Derived data: views
 * can make every record again from the view's messages. */
struct cache_series_rec {
	const void *key;
	size_t klen;
	const void *val;
	size_t vlen;
};
/* Delete `del` then put `put`, in one transaction; ENOENT once the view is
 * removed (nothing is written). */
int cache_series_write(cache_t *c, uint64_t id, const struct cache_series_rec *put,
		       size_t nput, const struct cache_series_rec *del, size_t ndel);
/* A copy of one record's value, NUL-terminated (malloc'd, the caller's);
 * ENOENT if there is none. */
int cache_series_get(cache_t *c, uint64_t id, const void *key, size_t klen,
		     void **val, size_t *vlen);
/* Copy up to `size` bytes at `off` of the part [voff, voff + vlen) of a
 * record's value into buf; *n gets the count.  EIO if the value is shorter
 * than the part. */
int cache_series_read(cache_t *c, uint64_t id, const void *key, size_t klen,
		      size_t voff, size_t vlen, off_t off, size_t size, char *buf,
		      size_t *n);
/* Likewise with the part found by `place` in the value itself, in the same
 * read (a record rewritten meanwhile is never read at old offsets):
 * place(val, len, arg, &voff, &vlen) returns 0 or an error for the caller. */
int cache_series_read_placed(cache_t *c, uint64_t id, const void *key, size_t klen,
			     int (*place)(const void *val, size_t len, void *arg, size_t *voff,
					  size_t *vlen),
			     void *arg, off_t off, size_t size, char *buf, size_t *n);
/* Call fn for each record of view id whose key starts with `prefix`, in
 * key order (key and value valid during the call only); a non-zero
 * return stops and is returned. */
int cache_series_each(cache_t *c, uint64_t id, const void *prefix, size_t plen,
		      int (*fn)(void *arg, const void *key, size_t klen, const void *val,
				size_t vlen),
		      void *arg);

/* ---- consistency ---- */

/* What cache_check() found: counts of records, and of problems (orphans:
 * records under a view id that is no view's, entries under an id that is
 * no view's or source's). */
struct cache_check {
	uint64_t views, sources, settings, messages, held;
	uint64_t orphans, missing_messages, unheld_messages, wrong_refs, bad_records;
	uint64_t wrong_counts;  /* views whose entry counters disagree with their entries */
};
/* Check the cache in one read transaction (a snapshot: safe while a
 * daemon writes); each problem is a line on `out` (if not NULL). */
int cache_check(cache_t *c, FILE *out, struct cache_check *r);
uint64_t cache_check_problems(const struct cache_check *r);

/* ---- helpers shared with tests ---- */

void cache_oid(const char *raw, size_t len, unsigned char oid[CACHE_OID_LEN]);
void cache_oid_hex(const unsigned char *oid, char hex[2 * CACHE_OID_LEN + 1]);
int cache_oid_parse(const char *hex, unsigned char oid[CACHE_OID_LEN]);

/* Parse a raw message with gmime: its date (Date header; 0 if missing,
 * unparseable, before 1970 or after 9999) and lei's content hash (PublicInbox::ContentHash). */
int cache_mail_info(const char *raw, size_t len, int64_t *date,
		    unsigned char chash[CACHE_CHASH_LEN]);
/* SHA-256 of the first Message-ID header, raw (lei's dedupe=mid key);
 * ENOENT if it has none. */
int cache_mail_mid(const char *raw, size_t len, unsigned char out[CACHE_CHASH_LEN]);
/* The first Message-ID as "<id>", as gmime decodes it (malloc'd, the
 * caller's); ENOENT if it has none. */
int cache_mail_msgid(const char *raw, size_t len, char **mid);
void cache_mail_init(void);   /* once, before threads (g_mime_init) */

#endif

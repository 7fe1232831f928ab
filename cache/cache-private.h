/* What the files of cache/ share: the environment and record layouts. */
#ifndef LEIFS_CACHE_PRIVATE_H
#define LEIFS_CACHE_PRIVATE_H

#include <gmime/gmime.h>
#include <lmdb.h>
#include <stdatomic.h>

#include "cache/cache.h"

struct cache {
	MDB_env *env;
	MDB_dbi msg;    /* oid -> msg_rec + raw bytes */
	MDB_dbi view;   /* name -> view_rec + query + error */
	MDB_dbi entry;  /* view id (8, big-endian) + oid -> entry_rec */
	MDB_dbi dedupe; /* view id + content hash -> oid */
	MDB_dbi meta;   /* "next-view-id" -> uint64_t; "imap-counts" ->
			 * imap_trust (imap.c) */
	MDB_dbi refs;   /* oid -> uint32_t: entries (of any view) holding it */
	MDB_dbi files;  /* view id + name -> file_rec + bytes: client files */
	MDB_dbi marks;  /* view id + source URL -> int64_t: per-source bookmark */
	MDB_dbi ids;    /* view id (8, big-endian) -> name: which views exist */
	MDB_dbi away;   /* view id + oid -> away_rec: the user's state of a
			 * message that left the view, for when it returns */
	MDB_dbi counts; /* view id (8, big-endian) -> count_rec: its entries
			 * by where, kept in the transaction that changes them */
	MDB_dbi sources;        /* spec -> source_rec + position (sources.c) */
	MDB_dbi settings;       /* view id (8, big-endian) -> settings_rec +
				 * the view's .config text (settings.c) */
	int older;              /* opened by cache_open_check with neither
				 * table: an older layout, read as it is */
	MDB_dbi imap;           /* view id + folder URL + '\0' + oid -> a
				 * CACHE_IMAP_* byte (imap.c) */
	MDB_dbi imapfolder;     /* view id + folder URL -> UIDVALIDITY (imap.c) */
	MDB_dbi series;         /* view id + a key of views' -> what views
				 * derived of its series (seriestab.c); made
				 * by a mount, never by --check */
	MDB_dbi imapcount;      /* view id + folder URL -> imapcount_rec (imap.c) */
	MDB_dbi kw;             /* oid -> uint32_t: the flags views share
				 * (keywords.c); made by a mount, 0 under
				 * --check */
	_Atomic uint64_t imap_gen;      /* the generation counters are exact
				 * in (a random number, imap.c); UINT64_MAX
				 * until the first write of imap.c after the
				 * open settles it, and set only after that
				 * transaction is committed */
	uint64_t imap_started;  /* the generation this process last started
				 * (UINT64_MAX: none); protected by LMDB's
				 * write lock (set and read only in a write
				 * transaction) */
	uint64_t imap_open_last;        /* the id of the last transaction
					 * committed before the open: a close
					 * stamp of the same id is trusted */
	int mounted;            /* opened by cache_open: the IMAP tables are
				 * open, cache_close stamps the close */
	void *map;      /* where LMDB mapped data.mdb (NULL: not found) */
	atomic_uint gets;       /* message and series reads, for cache_drop_mappings */
	size_t maplen;
	int statm;              /* /proc/self/statm (-1: none), and its */
	atomic_int dropping;    /* a thread is in cache_drop_mappings's madvise */
	long shared_base;       /* shared pages at open (the libraries) */
	char *datafile; /* DIR/lmdb/data.mdb, for messages */
	atomic_int damaged;     /* a guarded read faulted (damage.c) */
};

/* Unmap the map's pages from this process (they stay cached) once more
 * than MAP_RESIDENT of them are resident: see store.c.  Called after a
 * write and after walks or lookups of DROP_EVERY records. */
#define MAP_RESIDENT ((long)32 << 20)
void cache_drop_mappings(cache_t *c);
#define DROP_EVERY 64

/* Read transactions and cursors as a guarded read (CACHE_GUARDED) must
 * take them: a fault that jumps out of the read releases what it held
 * (damage.c).  Every read transaction and cursor of cache/ goes through
 * these. */
int cache_rd_begin(cache_t *c, MDB_txn **txn);        /* 0 or an errno */
void cache_rd_end(MDB_txn *txn);
int cache_cursor_open(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cur);     /* the same */
void cache_cursor_close(MDB_cursor *cur);

/* Records are host-endian and copied in and out with memcpy (LMDB values
 * need not be aligned).  The cache is not meant to move between hosts. */
#define MSG_REC_MAGIC 0x6c656931u       /* "lei1" */
struct msg_rec {
	uint32_t magic;
	uint32_t pad;
	int64_t date;
	unsigned char chash[CACHE_CHASH_LEN];
};

struct view_rec {
	uint64_t id;
	int64_t created, last_ok, last_try;
	uint32_t state, qlen, elen;
	uint32_t gen;   /* generation of the last full search */
	uint32_t epoch; /* bumped when the query changes or a full search is forced */
	uint32_t flags; /* VIEW_REC_*; 0 in caches from before it */
};

/* a search of the view has ended whole once: its first fill is done */
#define VIEW_REC_FILLED 1u

struct entry_rec {
	int64_t date;
	uint64_t size;
	uint32_t flags;
	uint8_t where;
	uint8_t was;    /* where it was before it was hidden (for .unhide) */
	uint8_t pad[2];
	uint32_t gen;   /* generation of the last full search that saw it */
	uint32_t uid;   /* a client's ",U=" tag (mbsync), 0: none */
};

/* what the user made of a message (cache_entry_update) while it is out of
 * the view: where, flags, name tag */
struct away_rec {
	uint32_t flags;
	uint32_t uid;
	uint8_t where;
	uint8_t was;
	uint8_t pad[2];
};

/* how many entries of a view are in new/, cur/ and hidden (indexed by
 * enum cache_where) */
struct count_rec {
	uint64_t n[3];
};

struct file_rec {
	int64_t mtime;
};

/* how many of an IMAP folder's delivery records are done, exact while
 * `gen` is the cache's imap_gen (imap.c); read only then */
struct imapcount_rec {
	uint64_t done;
	uint64_t gen;
};

/* meta "imap-counts": the counters' generation (random, never ordered),
 * and the id of the transaction that stamped it at this leifs's close, or 0
 * while it is in use (imap.c: trusted only if no other commit followed) */
struct imap_trust {
	uint64_t gen;
	uint64_t closed;
};

/* a local archive (key: its spec): the id its entries are kept under and
 * when the record was made; then the position its next import resumes
 * at, to the end of the value */
struct source_rec {
	uint64_t id;
	int64_t created;
};

/* a view's settings: when they were stored; then the .config text */
struct settings_rec {
	int64_t mtime;
};

/*
 * One error convention: every function of cache/ that can fail returns 0
 * or a positive errno.  cache_errno is the one translator of an LMDB
 * result, applied where each mdb_* call is made (MDB_NOTFOUND -> ENOENT,
 * MDB_KEYEXIST -> EEXIST, MDB_MAP_FULL -> ENOSPC, MDB_READERS_FULL ->
 * EAGAIN, another LMDB code -> EIO); 0 and errnos pass through unchanged.
 * A damaged record (a value of the wrong size) is EIO.  Only cache_open
 * keeps LMDB's own code to its one exit, for the words of its message.
 */
int cache_errno(int rc);
/* a view record (view.c): decoded into v (the caller releases it), or
 * written with mdb_put flags (EEXIST: MDB_NOOVERWRITE and the name is
 * taken) */
int cache_view_decode(const MDB_val *k, const MDB_val *d, struct cache_view *v);
int cache_view_put(MDB_txn *txn, cache_t *c, const struct cache_view *v, unsigned flags);
/* the entry record at key k, copied out (sweep.c); ENOENT if none */
int cache_entry_read(cache_t *c, MDB_txn *txn, MDB_val *k, struct entry_rec *r);
/* entries.c: cache_entry_update in the caller's transaction; *old (may
 * be NULL) gets the flags the entry had */
int cache_entry_update_txn(cache_t *c, MDB_txn *txn, uint64_t id, const unsigned char *oid,
			   int where, uint32_t flags, uint32_t uid, uint32_t *old);
/* keywords.c: a message's shared flags (0 when none, a damaged record, or
 * no table) */
int cache_kw_read(cache_t *c, MDB_txn *txn, const unsigned char *oid, uint32_t *flags);
/* the table made just now, for a cache that had none: to fill */
int cache_kw_mark_pending(cache_t *c, MDB_txn *txn);
/* the ids table: view id -> its name (store.c) */
int cache_id_put(cache_t *c, MDB_txn *txn, uint64_t id, const char *name);
/* set view id's counters */
int cache_count_put(cache_t *c, MDB_txn *txn, uint64_t id, const struct count_rec *r);
/* view id's counters; ENOENT if it has none yet (store.c) */
int cache_count_get(cache_t *c, MDB_txn *txn, uint64_t id, struct count_rec *r);
/* the same, counted the slow way (a walk of its entries) */
int cache_count_walk(cache_t *c, MDB_txn *txn, uint64_t id, struct count_rec *r);
/* Whether view `id` exists (inside the caller's txn): 0, or ENOENT once it
 * was removed; *epoch (if given) gets its epoch.  Writers under a view id
 * call it so that nothing is written under a removed view. */
int cache_view_alive(cache_t *c, MDB_txn *txn, uint64_t id, uint32_t *epoch);
/* Before mdb_env_open: EIO, with why, if `file` is shorter than its
 * newer valid LMDB meta page says (damage.c); 0 if it has no pages yet. */
int cache_check_file(const char *file, char *why, size_t whylen);
/* Where the open cache's map is, for the fault handler's messages. */
void cache_guard_map(void *map, size_t len);
/* mkdir -p, mode 0700; 0 or an errno */
int cache_mkdir_p(const char *dir);
/* Walk the keys of `dbi` that start with view id `id` (store.c): fn
 * returns WALK_KEEP to go on, WALK_DROP to delete the record and go on,
 * WALK_STOP to end the walk.  A callback that stops for an error keeps the
 * errno in its context (arg): the walk returns 0 or an errno of its own
 * (a failed read or delete), and the caller checks both. */
enum walk { WALK_KEEP, WALK_DROP, WALK_STOP };
int cache_walk_prefix(cache_t *c, MDB_txn *txn, MDB_dbi dbi, uint64_t id,
		      enum walk (*fn)(void *arg, const MDB_val *k, const MDB_val *d),
		      void *arg);
/* A walk's fn that drops every record. */
enum walk cache_walk_drop(void *arg, const MDB_val *k, const MDB_val *d);
/* The series records of view id (seriestab.c), inside the caller's txn. */
int cache_series_drop(cache_t *c, MDB_txn *txn, uint64_t id);
/* The next id of a view or a source, from one counter: ids are never
 * reused, and a source's is never a view's (view.c). */
int cache_next_id(cache_t *c, MDB_txn *txn, uint64_t *id);
/* Drop every entry under id, releasing its messages (sweep.c). */
int cache_entries_drop(cache_t *c, MDB_txn *txn, uint64_t id);
/* sources.c, inside the caller's txn: whether source `spec` is still the
 * one with id `id` (0, ENOENT, or another errno); write its record;
 * drop it and its entries (0 if there was none). */
int cache_source_alive(cache_t *c, MDB_txn *txn, const char *spec, uint64_t id);
int cache_source_store(cache_t *c, MDB_txn *txn, const char *spec, uint64_t id,
		       int64_t created, const char *pos, size_t plen);
int cache_source_drop(cache_t *c, MDB_txn *txn, const char *spec);
/* the record of `spec` in the caller's txn, copied out; ENOENT if none */
int cache_source_get_txn(cache_t *c, MDB_txn *txn, const char *spec, struct cache_source *out);
/* imap.c, inside the caller's txn: drop view id's delivery records */
int cache_imap_drop_view(cache_t *c, MDB_txn *txn, uint64_t id);
/* imap.c, inside cache_open's write txn, before it writes: notes the id
 * of the last transaction committed, to match a close stamp's (read no
 * page), and leaves the counters' generation unsettled */
int cache_imap_open(cache_t *c, MDB_txn *txn);
/* imap.c, from cache_close: stamps the close with the generation and the
 * id of the stamping transaction (one of its own, if anything was committed
 * since the open); a failure only costs a walk per folder after the next
 * open */
void cache_imap_close(cache_t *c);
/* settings.c: write view id's settings record, inside the caller's txn */
int cache_settings_store(cache_t *c, MDB_txn *txn, uint64_t id, int64_t mtime,
			 const char *text, size_t len);
/* migrate.c: bring a cache of an older layout to this one, inside
 * cache_open's write transaction (all of it, or none); `why` says what
 * failed. */
int cache_migrate(cache_t *c, MDB_txn *txn, char *why, size_t whylen);
/* After cache_open's transaction: if an older leifs made an archive's
 * view again since the upgrade, move it (and any .config files) as above,
 * in a transaction of its own; a failure leaves them unseen.  1 if moved,
 * else 0. */
int cache_migrate_leftovers(cache_t *c);
/* An older leifs's .config file of view id, written since the upgrade:
 * moved into the settings table (the newer wins).  0 or an errno. */
int cache_migrate_config(cache_t *c, uint64_t id);
/* Delete the client files of a view (inside the caller's write txn). */
int cache_files_drop(cache_t *c, MDB_txn *txn, uint64_t id);
void cache_key_id(unsigned char out[8], uint64_t id);
/* view id + name as a key in key[cap]; ENAMETOOLONG if empty or too long */
int cache_key_name(unsigned char *key, size_t cap, MDB_val *k, uint64_t id,
		   const char *name);
int cache_entry_decode(const MDB_val *k, const MDB_val *d, struct cache_entry *e);
/* Count one more (delta 1) or one less (-1) entry holding oid; the message
 * goes when none is left. */
int cache_ref(cache_t *c, MDB_txn *txn, const unsigned char *oid, int delta);
/* Add delta[where] to view id's entry counts (inside the caller's write
 * txn, the one that moves the entries). */
int cache_count_add(cache_t *c, MDB_txn *txn, uint64_t id, const int64_t delta[3]);

/* gmime helpers (mail.c) shared with the indexer (terms.c).
 * cache_hdr_raw: every value of a header, unfolded and trimmed
 * (Eml header_raw); cache_hdr_str: the same, RFC 2047 decoded;
 * both return a GPtrArray of g_malloc'd strings.  cache_part_body: the
 * transfer-decoded body of a leaf, a GByteArray.  cache_extract_ids: the
 * <ids> of a value, skipping those in `seen` (a GHashTable of strings). */
GPtrArray *cache_hdr_raw(GMimeObject *obj, const char *name);
/* cache_mail_parse: raw as a GMimeMessage (NULL if not one) that reads
 * raw in place, so raw must outlive it; at most CACHE_MIME_PARTS parts are
 * made (hashed, indexed), as PublicInbox::Eml's limit, however many the
 * message has.  cache_mail_done unrefs the message and *hold, always. */
#define CACHE_MIME_PARTS 1000
GMimeMessage *cache_mail_parse(const char *raw, size_t len, GByteArray **hold);
void cache_mail_done(GMimeMessage *msg, GByteArray *hold);
GPtrArray *cache_hdr_str(GMimeObject *obj, const char *name);
GByteArray *cache_part_body(GMimePart *part);
/* the same, at most max bytes of it (whole lines, *cut set, if longer):
 * what is beyond is never decoded */
GByteArray *cache_part_body_max(GMimePart *part, size_t max, int *cut);
void cache_extract_ids(const char *v, GPtrArray *out, GHashTable *seen);
/* threadrefs.c: the ids the message is threaded by (REFS_MAX of them at
 * most, the nearest) into d->refs, which holds none yet
 * (ENOMEM in d->err) */
struct term_doc;
void term_refs(struct term_doc *d, GMimeObject *o);

/* `git patch-id --stable` of a body (patchid.c); ENOENT: no patch in it */
int cache_patch_id(const char *text, size_t len, char hex[41]);

#endif

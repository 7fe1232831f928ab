/*
 * What the files of views (views.c, view-*.c) share: the state of the
 * views while the daemon runs.  They call each other in one direction
 * (view-config.c, view-thread.c and view-timer.c call views.c, which calls
 * the rest; view-live.c, the core, is at the bottom): no two files call
 * each other.
 * Not for fs.c, which goes through views.h.
 */
#ifndef LEIFS_VIEWS_PRIVATE_H
#define LEIFS_VIEWS_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

/* refusals queries/.status keeps */
#define REFUSALS_KEPT 20
#define SERIES_SEEN 32     /* views whose series up-to-dateness is remembered */

#include "fs/settings.h"
#include "fs/views.h"

/* how the last search of one source went */
struct src_state {
	char *url;
	int failed;
	int local;              /* an archive: msgs are hits, bytes were read */
	uint64_t imported;      /* local: messages new in the archive */
	uint64_t msgs, bytes;
	char error[300];
	long busy;              /* the server was busy: its HTTP status (429,
				 * 503), else 0 */
	int64_t next_try;       /* busy: no request before this time(NULL) */
};

/* a source that answered a full search of a view with nothing, since
 * `since`, for query `query` */
struct empty_src {
	struct empty_src *next;
	char *url, *query;
	int64_t since;
};
void free_empty(struct empty_src *e);

/*
 * What is known of a view while the daemon runs; protected by views.lock.
 * Counted: the list views.live holds one reference until the view is
 * removed (views_remove unlinks it), and each thread that uses it outside
 * the lock (a refresh, a staged .config, a listing waiting for the first
 * fill) holds one; live_put frees it with the last.
 */
struct live {
	struct live *next;
	int refs;
	uint64_t id;
	int refreshing;         /* a refresh is queued or runs */
	int queued;             /* ... and waits for a worker (max_refreshes) */
	struct live *qnext;     /* views.queue */
	int again;              /* a refresh was asked for while one ran */
	uint64_t begun, done;   /* searches of it begun and ended in this
				 * process (a reader of .refresh waits for
				 * the one after those begun when it asked) */
	uint64_t last_added;    /* what its last search added */
	struct timespec ended;  /* CLOCK_BOOTTIME end of its last search in
				 * this process; 0: none yet (see view_aged) */
	time_t watched_until;   /* a client stats it: refreshed on its interval
				 * by the timer until then (views_watched) */
	long watch_every;       /* its interval, as of the last stat */
	atomic_ulong progress;  /* messages received by the running refresh */
	atomic_int cancel;      /* the view was removed: its search stops */
	struct empty_src *empty;  /* sources whose answer to a full search of
				   * the view was empty (see view-search.c) */
	uint64_t held;          /* messages kept meanwhile (for .status) */
	char *name;
	char **old_names;       /* names before renames (views_rename): a
				 * search may still read one */
	size_t nold;
	char *last_query;       /* the query text last sent */
	uint64_t last_msgs, last_bytes;  /* what the last search fetched */
	struct src_state *src;  /* per source, of the last search */
	int nsrc;
	char *refusal;          /* why the last .config written was refused */
	char *pending;          /* a .config written, applied when writes pause */
	uint64_t pending_gen;
	uint64_t pending_by;    /* the rewrite it is the text of (see
				 * views_stage_config); 0: none */
	char *before;           /* what another rewrite had staged when that
				 * one began: staged again if it is refused */
	char *tail;             /* the whole text of rewrite pending_by when
				 * its last line is unfinished: judged when
				 * writes pause (views_stage_config) */
	uint64_t refused_by;    /* the rewrite last refused: its later
				 * writes are refused too */
	struct settings set;    /* the view's settings, parsed (view_settings) */
	int has_set;            /* set is valid; cleared when .config changes */
	struct imap_state *imap;  /* per IMAP folder, how its last delivery
				   * went (view-imap.c) */
	struct local_memo *memos; /* per local source (view-local.c); used by
				   * the one refresh of the view at a time */
	char *seen[2];          /* .query, .config: the text last read ... */
	struct timespec seen_at[2];  /* ... and when it was first read (their
				 * mtime: see views_text_time) */
	int written[2];         /* written since: a new mtime, same text or not */
	char *subsys_change;    /* a subsystem view: when and from what its
				 * query was last derived anew */
	char *subsys_note;      /* ... and what its last search had to do
				 * (a wildcard the server refused) */
};

/* a busy source (HTTP 429/503) left alone until `until` */
struct backoff {
	struct backoff *next;
	char *url;
	int64_t until;          /* time(NULL) of the next try */
	long delay;             /* seconds of the last back-off (it doubles) */
	long status;            /* the HTTP status that began it */
};

struct views {
	struct views_opts o;
	struct settings def;    /* what a view without .config gets */
	cache_t *cache;
	pthread_mutex_t lock;
	pthread_mutex_t apply;  /* a staged .config is applied by one thread at
				 * a time, so the last staged is applied last;
				 * taken before lock */
	/* each condition variable is one event, all under lock: */
	pthread_cond_t refreshed; /* a refresh ended (listings wait for it),
				 * or a worker or applier thread is done
				 * (views_close waits for none left) */
	pthread_cond_t wake;    /* stop, or a waiting listing interrupted:
				 * the timer and staged .config waits look */
	pthread_cond_t done;    /* indexer jobs queued, or stop (view-local.c) */
	struct live *live;      /* protected by lock */
	int workers;            /* refresh worker threads (max_refreshes);
				 * protected by lock */
	int appliers;           /* staged .config threads; protected by lock */
	struct live *queue, **queue_end; /* refreshes waiting for a worker, in
				 * order (each holds a reference); lock */
	atomic_int stop;
	/* the last refusals (mkdir, .query), oldest first from refusal_next
	 * on: queries/.status shows them all, so that one refusal does not
	 * hide another; protected by lock */
	struct refusal {
		int64_t when;   /* wall clock; 0: an empty slot */
		char text[512];
	} refusals[REFUSALS_KEPT];
	unsigned refusal_next;
	pthread_t timer;        /* refresh_all schedule */
	int timer_running;
	struct local *locals;   /* open local archives; protected by lock */
	pthread_mutex_t local_open; /* one open of a local index at a time;
				 * never taken under lock */
	pthread_mutex_t series; /* one update of a series table at a time
				 * (view-series.c); never taken under lock */
	struct {                /* views whose series were found up to date
				 * as of the cache's write `txn`; series */
		uint64_t id, txn;
	} series_seen[SERIES_SEEN];
	unsigned series_seen_next;
	struct index_job *jobs; /* for the indexer thread; protected by lock */
	pthread_t indexer;
	int indexer_running;    /* protected by lock */
	struct backoff *backoffs; /* busy sources; protected by lock */
	uint64_t config_gen;    /* bumped at each .config stored; protected by lock */
	atomic_ulong idx_queued;  /* messages given to the indexer since mount */
	atomic_ulong idx_done;    /* ... and done with by it (indexed or gone) */
	struct subsys *subsys;  /* the MAINTAINERS files (view-subsys.c) */
	/* view-series-fetch.c: views with threads to fetch the rest of, in
	 * turn (ids, each once), for the one fetcher thread; lock */
	uint64_t *fetch_q;
	size_t fetch_n, fetch_cap;
	pthread_t fetcher;
	int fetcher_running;
	pthread_cond_t fetch_wake; /* a view queued, or stop */
	struct settings def_subsys; /* def, with threads on: a subsystem view's */
};

/* a thread view's record name: this, then its directory name */
#define THREAD_PREFIX "threads/"
/* a subsystem view's likewise */
#define SUBSYS_PREFIX "subsystems/"
/* the record name of a thread or subsystem view: the prefix, then the
 * decoded name written as a queries/ name is (its canonical form) */
int view_prefixed_key(const char *prefix, const char *decoded, char **key);

/* view-files.c: a cache from before shared flags gets the union of its
 * sharing views' flags (cache_kw_migrate), once */
int view_kw_migrate(views_t *v);

/* view-series-fetch.c: look for threads of view id to fetch the rest of
 * (cheap: a walk of its fetch records, in the background); stop at close */
void view_series_fetch_kick(views_t *v, uint64_t id);
void view_series_fetch_close(views_t *v);

/* view-subsys.c: the MAINTAINERS files of the mount, at open and close */
int view_subsys_open(views_t *v);
void view_subsys_close(views_t *v);
/* Before a search of subsystem view cv (live state l): its query derived
 * from the file as it is now; when it differs, the record's is replaced
 * (as a .query write: the search that follows is a full one, the user's
 * state kept) and *changed is set.  *parts (malloc'd, NULL when the
 * section is gone: the stored query stands) are what a remote source is
 * asked, one request each, for the query; *safe the same parts without
 * word wildcards, for a server that refuses one (HTTP 500: public-inbox's
 * limit of 100 terms).  EINVAL (why) when the section is gone and the
 * query derived last is too long for one request. */
int view_subsys_prepare(views_t *v, struct live *l, const struct cache_view *cv, char ***parts,
			char ***safe, size_t *nparts, int *changed, char *why, size_t whylen);
/* the lines of VIEW/.status of a subsystem view: its section, where it
 * is, what of it was widened or left out, when the query last changed */
void view_subsys_status(views_t *v, const struct cache_view *cv, FILE *f);
/* the defaults a view's .config is read over: a subsystem view's has
 * threads on (the whole thread of each patch, as lei q --threads) */
const struct settings *view_defaults(views_t *v, const char *name);

/* view-live.c: what the files of views share */
/* Whether mid (without <>) can name a thread: one token that is a safe
 * path segment of a URL and a mid: query (EINVAL, why, if not). */
int view_mid_ok(const char *mid, const char **why);
void free_src(struct src_state *src, int n);
/* how long a wait sleeps at most before it looks at a stop (views_stop
 * cannot signal from a signal handler) */
#define WAIT_SLICE_NS 100000000L

/* "new", "fresh" or "failed": a record's state as .status says it */
const char *views_state_name(int state);

/* the names of every view, from one walk of the records */
struct names {
	char **name;
	size_t n, cap;
};
int views_names(views_t *v, struct names *ns);
void names_free(struct names *ns);

/* keep a refusal (printf-style text) for queries/.status, and log it;
 * the _locked one with v->lock held (it does not log) */
void views_refused(views_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void views_refused_locked(views_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the live state of view id, made if need be; lock held.  The reference
 * is the list's: take one (l->refs++) to use it after unlocking. */
struct live *live_get(views_t *v, uint64_t id, const char *name);
/* drop a reference; the last frees it; lock held */
void live_put(struct live *l);
/* free it whatever its references (at close, when no thread holds one) */
void live_free(struct live *l);
/* a view's settings (s is the caller's, settings_free): its .config over
 * the defaults, parsed once and kept in its live state until .config
 * changes */
int view_settings(views_t *v, const struct cache_view *cv, struct settings *s);
/* .config of view id changed: forget its parsed settings; lock held */
void view_settings_forget(views_t *v, uint64_t id);
/* a URL as shown in .status and logs: any user:password@ masked */
void url_shown(const char *url, char *buf, size_t len);
void print_url(FILE *f, const char *url);
/* How the last search of view l went (last_query, last_msgs, last_bytes,
 * src), as text for the view's record in the cache (view-status.c), so
 * that .status still says it after a remount: malloc'd, NULL when memory
 * runs out; lock held. */
char *view_last_text(const struct live *l);
/* views.c, for the timer (view-timer.c): start a refresh of l (queued;
 * lock held); a view's refresh interval; whether it is due by it (lock
 * held) */
int start_refresh(views_t *v, struct live *l, int forced);
long view_every(views_t *v, const struct cache_view *cv);
int view_due(views_t *v, const struct live *l, const struct cache_view *cv, long every);
int view_aged(const struct live *l, const struct cache_view *cv, long every);
/* one search of every source of the view (view-search.c) */
void view_search(views_t *v, struct live *l);

/* IMAP delivery (view-imap.c).  After a search, from the refresh thread
 * and under no lock, view_imap_deliver APPENDs the view's messages that
 * are not yet in each of its folders (settings' imaps), recording each
 * in the cache as pending before its APPEND and done after it; a pending
 * one (a crash came between) is looked for by Message-ID before it is
 * sent again.  A folder that fails is tried again at the next refresh
 * and never fails the search.  view_imap_status writes one `imap:` line
 * per folder for .status. */
struct imap_state {
	struct imap_state *next;
	char *url;
	int tried;              /* a delivery ran since the mount */
	int failed;
	char error[400];        /* failed: why (the server's words) */
	char folder[256];       /* its name on the server, when not the URL's
				 * (another separator: net_imap_select) */
};
void view_imap_deliver(views_t *v, struct live *l, const struct cache_view *cv,
		       const struct settings *set);
void view_imap_status(views_t *v, const struct cache_view *cv, const struct settings *set,
		      FILE *f);
void free_imap_state(struct imap_state *s);

/* Local archives (view-local.c): a source of kind NET_SOURCE_ARCHIVE or
 * NET_SOURCE_CACHE (net_source_parse).  view_local_search imports what is
 * new (an archive), then adds the messages `query` matches to `batch`;
 * res as net_search's. */
struct net_res;
struct net_source;
/* What a view's last search of a local source was (in its live state, one
 * per source): an incremental search with the same index generation and
 * the same query (dates resolved) is skipped, as it can find nothing new.
 * The caller sets full, and takes next_gen/next_q into gen/q once the
 * search's batch is stored. */
struct local_memo {
	struct local_memo *next;
	char *spec;
	int full;
	unsigned long gen, next_gen;
	char *q, *next_q;
	int threads, next_threads; /* the threads setting q was searched with */
	uint64_t mark, next_mark; /* the index's mark then (the next search
				 * of q looks only at what came after it) */
};
/* threads: THREADS_* (settings.h): whole threads of the matches, the
 * matches flagged with flag-hits; max_msgs: EFBIG after that many
 * messages (0: no bound, a view's own search) */
int view_local_search(views_t *v, const struct net_source *src, const char *query, int threads,
		      size_t max_msgs, cache_batch_t *batch, atomic_ulong *progress,
		      struct net_res *res, uint64_t *imported, struct local_memo *memo);
void view_local_close(views_t *v);
/* Index messages of the store (n blob ids) that came from remote source
 * `url`, in a background thread; searched as source "cache:URL". */
void view_index_later(views_t *v, const char *url, const unsigned char *oids, size_t n);
/* queries/.status: lines on the remote indexes (on or off, messages
 * queued and indexed, each index opened so far: its documents and bytes) */
void view_index_status(views_t *v, FILE *f);

#endif

/*
 * views: a view's life and refresh policy; the one place that calls query,
 * net and cache together.  The FUSE adapter (fs.c, fs-*.c, main.c) calls it
 * and never reaches net/ or query/; it reads the cache directly (cache.h,
 * through views_cache), but every write it makes goes through here.
 * (options.c and settings.c check sources and IMAP URLs with net.h.)
 *
 * State machine per view: new (never searched) -> refreshing -> fresh or
 * failed -> refreshing ...  A listing calls views_listing(): when the last
 * search ended longer than `refresh` seconds ago a refresh starts in its own
 * thread; a view that has never finished a search makes the caller wait for
 * it, up to `first_wait` seconds (then it sees what has come, and the next
 * listing more); otherwise the caller goes on with what the
 * cache holds and the results show up at the next listing.  One refresh per
 * view at a time.  No lock is held across network I/O.
 *
 * A source that answered HTTP 429 or 503 is not asked again by any search
 * (a listing's, refresh_all's or a forced one, as `lei up` fails fast)
 * until its back-off ends; meanwhile the view keeps what it has and
 * .status says when the next try comes.
 *
 * Thread-safe.  Errors: 0 or a positive errno.
 */
#ifndef LEIFS_VIEWS_H
#define LEIFS_VIEWS_H

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "cache/cache.h"

/* Once per process, before any thread starts (libcurl's global state),
 * and at its end. */
int views_global_init(void);
void views_global_cleanup(void);
/* A source given at mount: EINVAL if it is none of an http(s) URL,
 * cache:URL or [TYPE:]/absolute/path; ENOENT or ENOTDIR if such an archive
 * is not there (a typo, said at mount rather than at the first listing);
 * the reason in why. */
int views_source_check(const char *spec, char *why, size_t whylen);

struct views_opts {
	char **sources;         /* as written (URL, cache:URL, [TYPE:]/path):
				 * the default sources */
	int nsources;
	char **imaps;           /* the default IMAP folders (settings.h) */
	int nimaps;
	char **maintainers;     /* MAINTAINERS files, absolute paths */
	int nmaintainers;
	int threads;            /* defaults of the view settings (settings.h) */
	int dedupe;
	int own_flags;          /* flags = view by default (settings.h) */
	long limit;
	const char *cache_dir;
	long refresh;           /* seconds; 0: every listing */
	long timeout;           /* seconds a caller may wait for the network */
	long low_speed;         /* bytes/s an answer must bring over `timeout` */
	long deadline;          /* seconds one search of a source may last */
	long backoff_max;       /* seconds: the longest a busy server (HTTP 429,
				 * 503) is left alone, its Retry-After or a
				 * doubling from 30 s capped to this */
	const char *user_agent; /* sent with every request */
	long first_wait;        /* seconds a first listing waits for a first
				 * fill before it shows what has come (at
				 * most timeout) */
	long margin;            /* seconds subtracted from the dt: bound */
	long refresh_all;       /* refresh every view this often; 0: off */
	long empty_confirm;     /* seconds between two empty answers to full
				 * searches of a view that has messages
				 * before the view is emptied */
	int series_fetch;       /* fetch the rest of such threads; 0: never */
	long series_refetch;    /* seconds between fetches of the rest of a
				 * thread a view holds part of, while its
				 * series is under 30 days old; 0: once */
	int max_refreshes;      /* views searched at once (the rest queue) */
	int host_refreshes;     /* searches at once per server host */
	size_t max_message;
	size_t map_size;        /* LMDB map size */
	const char *cafile;
	int insecure;
	const char *proxy;
	int index_remote;       /* index what remote sources send, for
				 * cache:URL sources (view-local.c); 0: off */
	/* called from a refresh thread when a search changed what view `id`
	 * holds, so that fs can tell the kernel its listings are stale and
	 * which names left (gone: what a sweep or limit dropped, or NULL) */
	void (*changed)(void *arg, uint64_t id, const struct cache_gone *gone);
	void *changed_arg;
};

typedef struct views views_t;

int views_open(const struct views_opts *o, views_t **out, char *why, size_t whylen);
/* Start the timer (after daemonizing): watched views, refresh_all. */
int views_start(views_t *v);
/* Ask every running search and waiting listing to stop, at the next
 * message or within a fraction of a second; nothing else.  Safe in a
 * signal handler (SIGTERM), so that the session's end does not wait. */
void views_stop(views_t *v);
/* Stop refreshes and close.  A search cut short leaves no result behind:
 * the view's state and last refresh stay those of its last whole search
 * (what was stored stays), so the next mount's policy is not misled. */
void views_close(views_t *v);

/* Reads go straight to the cache; views_t owns it. */
cache_t *views_cache(views_t *v);

/* mkdir: decode and check the name, then make the view.  EINVAL with the
 * reason in `why` (also kept for views_errors()). */
int views_create(views_t *v, const char *name, char *why, size_t whylen);
/*
 * Thread views (view-thread.c): MOUNT/threads/<message-id>, the whole
 * thread of one message, refreshed as any view.  A name there is a
 * Message-ID, its angle brackets optional, '/' and '%' escaped as in
 * queries/ names; the view's record is keyed "threads/<canonical name>"
 * (no queries/ name holds a '/'), which is the name every other call of
 * views.h takes for it.
 */
/* mkdir under threads/: EINVAL (reason in `why`, and queries/.status)
 * for a name that is no Message-ID; EEXIST if the view is there. */
int views_create_thread(views_t *v, const char *name, char *why, size_t whylen);
/* views_get and views_remove of the view a name under threads/ stands
 * for ("<id>" and "id" alike); ENOENT if it is none. */
int views_get_thread(views_t *v, const char *name, struct cache_view *out);
int views_remove_thread(views_t *v, const char *name);
/* The name under threads/ of a view's key, NULL if it is no thread view
 * (a pointer into key). */
const char *views_thread_name(const char *key);
/* The Message-ID of a thread view's key (malloc'd). */
int views_thread_mid(const char *key, char **mid);
/*
 * Subsystem views (view-subsys.c): MOUNT/subsystems/<title>, a view whose
 * query is derived from the section of that title in the mount's
 * MAINTAINERS files (opts.maintainers; query/maintainers.h has the
 * rules) and derived anew before each search; its .query is read-only,
 * its threads on unless its .config says otherwise.  A name is the title,
 * '/' and '%' escaped as in queries/; the record is keyed
 * "subsystems/<canonical name>".
 */
/* mkdir under subsystems/: ENOENT when no file has the title, EINVAL when
 * it cannot be searched (the reason in why and subsystems/.status);
 * EEXIST if the view is there. */
int views_create_subsys(views_t *v, const char *name, char *why, size_t whylen);
int views_get_subsys(views_t *v, const char *name, struct cache_view *out);
int views_remove_subsys(views_t *v, const char *name);
/* The name under subsystems/ of a view's key, NULL if it is none (a
 * pointer into key). */
const char *views_subsys_name(const char *key);
/* subsystems/.sections: a line per section of the files, its title and
 * the query it derives to ("-": none), tab-separated; malloc'd. */
int views_subsys_sections(views_t *v, char **out);
/* subsystems/.status: each file (sections, when read, what is wrong with
 * it), sections that cannot be searched, the last refused mkdirs, then a
 * line per subsystem view (name, state, messages, query); malloc'd. */
int views_subsys_status(views_t *v, char **out);

/* rmdir (and the end of rm -rf): the view's running search stops and
 * nothing more is written under it; then it goes with all it holds. */
int views_remove(views_t *v, const char *name);
/* A mkdir inside view `view` (refused: EROFS): mkdir -p of a query that
 * holds '/' made its first part a view (not searched until listed);
 * queries/.status says to write '/' as %2F. */
void views_mkdir_in_view(views_t *v, const char *view, const char *name);
/* mv queries/FROM queries/TO: the view keeps its query and all it holds,
 * under a name that need not be a query (not starting with '.', no
 * control character: else EPERM, said in queries/.status).  EEXIST when
 * TO is a view, EPERM for thread views (named by their Message-ID). */
int views_rename(views_t *v, const char *from, const char *to);
/* view-files.c: a user's writes in view `vid`, each one cache transaction
 * (cache.h says what each answers).  A message moved (to CACHE_CUR or
 * CACHE_NEW, from a name with flags `was` to one with `flags` and name
 * tag uid: the flags that differ between the names are what changes, so
 * a change another view made meanwhile stays) or unlinked (CACHE_HIDDEN): */
int views_msg_move(views_t *v, uint64_t vid, const unsigned char *oid, int where,
		   uint32_t was, uint32_t flags, uint32_t uid);
/* a client file of the view: made (EEXIST if there and excl; emptied if
 * trunc), written, cut, removed, renamed (replacing `to`) */
int views_file_create(views_t *v, uint64_t vid, const char *name, int excl, int trunc);
int views_file_write(views_t *v, uint64_t vid, const char *name, uint64_t off,
		     const char *buf, size_t len);
int views_file_truncate(views_t *v, uint64_t vid, const char *name, uint64_t len);
int views_file_remove(views_t *v, uint64_t vid, const char *name);
int views_file_rename(views_t *v, uint64_t vid, const char *from, const char *to);

/* VIEW/.unhide: the blob ids of the messages unlinked from the view, a
 * line each (malloc'd); and bring back "all" of them or those named, a
 * line each (a blob id, or a message file name holding one), where they
 * were.  EINVAL with the reason in `why` (and .status). */
int views_hidden(views_t *v, const char *name, char **out);
int views_unhide(views_t *v, const char *name, const char *text, size_t len,
		 char *why, size_t whylen);
/* The record of a view, ENOENT if none. */
int views_get(views_t *v, const char *name, struct cache_view *out);

/* A listing of the view (or its cur/ new/): refresh by the policy above.
 * A first fill is waited for until it ends or first_wait seconds pass,
 * whichever comes first; then the listing shows what has arrived and the
 * fill goes on.  `interrupted` (may be NULL) is set by another thread,
 * which then calls views_wake(): the wait ends at once with EINTR, the
 * fill going on.  *filling (may be NULL) is set to 1 when the first fill
 * still runs, i.e. what the cache holds now is not all of it.  Without
 * `may_start`, a view never searched is left as it is (a listing of the
 * view's own directory: mkdir -p and cd open it too). */
int views_listing(views_t *v, const char *name, atomic_int *interrupted, int *filling,
		  int may_start);
/* A client looks at the view (a stat of it, or of its cur/ new/, as
 * neomutt's mail_check and sidebars do): when it is due by the same
 * policy as a listing, a refresh starts in the background; never waits.
 * The view is then "watched" for 5 minutes from the last such stat: the
 * timer refreshes it each time it is due, so a client checking every few
 * seconds sees new mail within the view's interval plus its check period.
 * Not for a view never filled, nor with a refresh interval of 0 (every
 * listing): only listings start those. */
void views_watched(views_t *v, const struct cache_view *cv);
/* Wake listings waiting in views_listing() to look at their flags again. */
void views_wake(views_t *v);

/* Refresh now (VIEW/.refresh); `full` forgets the bookmark, so the whole
 * answer is fetched again and what it no longer holds leaves the view.
 * Does not wait. */
int views_refresh(views_t *v, const char *name, int full);
/* Refresh every view (queries/.refresh), as views_refresh does each:
 * through the queue, so at most max_refreshes run at once.  Does not
 * wait. */
int views_refresh_all(views_t *v, int full);
/* Refresh view `name` (NULL: every view) now and wait for it: until the
 * search after those begun when asked has ended, for each view, at most
 * the mount's deadline, or until *interrupted is set (EINTR; the searches
 * go on) or leifs stops.  *out (malloc'd): a header line, then per view,
 * tab-separated, its name, messages the search added, messages, in new/,
 * state (fresh, failed; refreshing past the deadline, with "~" before the
 * count so far) and the first line of its error ("-" when none). */
int views_refresh_wait(views_t *v, const char *name, atomic_int *interrupted, char **out);
/* Replace the query (VIEW/.query): checked as at mkdir, then a full
 * refresh; flags and hidden messages of what stays are kept. */
int views_set_query(views_t *v, const char *name, const char *text,
		    char *why, size_t whylen);

/* Whether a query text would be taken (0, EINVAL), with no effect: a
 * writer whose text ends inside a line may not be done. */
int views_query_ok(const char *text);
/* VIEW/.config: the view's effective settings (settings.h), malloc'd; and
 * a new .config, checked (EINVAL, the reason in `why` and in .status),
 * stored, then a full search with the new settings. */
int views_config(views_t *v, const char *name, char **out);
int views_set_config(views_t *v, const char *name, const char *text, size_t len,
		     char *why, size_t whylen);
/* The same for a .config being written: checked now, applied once no write
 * came for a moment (see view-config.c).  `rewrite` tells which rewrite the
 * text is of (fs.c numbers them; 0 for a whole file at once): a text
 * refused cancels the one staged before it only if it is of the same
 * rewrite (its first lines, perhaps); another's text stays staged.  With
 * `more` (the writer may not be done), a text whose unfinished last line
 * makes it bad is judged whole when writes pause instead of now. */
int views_stage_config(views_t *v, const char *name, const char *text, size_t len,
		       uint64_t rewrite, int more, char *why, size_t whylen);

/* The mtime (and ctime) of VIEW/.query (which 0) or VIEW/.config
 * (which 1), whose text reads `text` now: the time the daemon first read
 * this text, unlike the one it read before (or after a write), so that it
 * moves when the text changes or the file is written, and only then (an editor that compares mtimes sees no change it
 * did not make; the kernel, which drops its cached pages of a file when its
 * mtime moves, reads a new text afresh).  The first text read since the
 * mount gets the time .config was stored, else the view's creation time. */
int views_text_time(views_t *v, const struct cache_view *cv, int which, const char *text,
		    struct timespec *ts);
/* The file was written: its next mtime is new even if its text is the
 * same, since the kernel may hold the bytes written, not the text that
 * reads back, in its cache of the file until the mtime moves. */
void views_text_written(views_t *v, uint64_t id, const char *name, int which);

/* The text of VIEW/.status; malloc'd. */
int views_status(views_t *v, const char *name, char **out);
/* The text of queries/.status, malloc'd: sources, the last refused mkdir
 * or .query (error:), the last 20 of them with their times
 * (refused:, oldest first), the remote index's state, then a line per
 * view (name, state, messages, in new/, last refresh, error, query),
 * tab-separated.  From each view's record and counters: its cost grows with the number of views, never with the
 * messages they hold. */
int views_errors(views_t *v, char **out);

/*
 * Series (view-series.c): VIEW/series/NAME/{am.mbx,cover,info}, what
 * `b4 am -m VIEW MSGID` writes for each revision of each patch series
 * the view holds, derived from its messages and kept in the cache.
 */
enum { VIEWS_SERIES_AM, VIEWS_SERIES_COVER, VIEWS_SERIES_INFO };
/* Bring view id's series up to date with its messages: cheap when none
 * changed (a walk of its entries), else only changed threads are read.
 * A search that changed a view whose series were made calls it. */
int views_series_update(views_t *v, uint64_t id);
/* The names under series/, in name order. */
int views_series_each(views_t *v, uint64_t id, int (*fn)(void *arg, const char *name),
		      void *arg);
/* When series/ last changed (0: never made). */
int views_series_mtime(views_t *v, uint64_t id, int64_t *mtime);
/* A file of revision `name`: ENOENT if there is no such revision (or no
 * cover); its size and mtime; a slice of its bytes. */
int views_series_stat(views_t *v, uint64_t id, const char *name, int which, size_t *size,
		      int64_t *mtime);
int views_series_read(views_t *v, uint64_t id, const char *name, int which, off_t off,
		      size_t size, char *buf, size_t *n);

#endif

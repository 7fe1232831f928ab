/*
 * settings: what shapes a view's search, as lei q's options shape a saved
 * search: threads (--threads, -tt), dedupe (--dedupe), source (--only, for
 * each source), limit (--limit) and refresh; and flags (shared, as lei's
 * keywords are per message, or view).  Defaults come from the
 * command line and the config file (main.c); a view's own .config, in
 * git-config syntax under [leifs], overrides them key by key, and several
 * `source` lines replace the default sources as a whole; `imap` lines
 * (folders the view is delivered to) replace the default folders so.
 *
 * Errors: 0 or a positive errno; EINVAL with a one-line reason in `why`.
 */
#ifndef LEIFS_SETTINGS_H
#define LEIFS_SETTINGS_H

#include <stddef.h>

enum { THREADS_OFF, THREADS_ON, THREADS_FLAG_HITS };

struct settings {
	int threads;            /* THREADS_* */
	int dedupe;             /* CACHE_DEDUPE_* */
	long limit;             /* most messages kept, newest first; 0: all */
	long refresh;           /* seconds */
	char **sources;         /* owned */
	int nsources;
	char **imaps;           /* IMAP folder URLs (imap = ...), owned: after
				 * each search the view's messages are
				 * APPENDed to each (view-imap.c) */
	int nimaps;
	int own_flags;          /* flags = view: its flags are its own; else
				 * (flags = shared, the default) a message's
				 * seen, flagged, replied and trashed are the
				 * same in every sharing view (cache_entry_update_shared) */
};

/* `def` with the keys of `text` (a view's .config) over it, into `out`. */
int settings_parse(const struct settings *def, const char *text, size_t len,
		   struct settings *out, char *why, size_t whylen);
/* One key as the command line or config file gives it (threads, dedupe,
 * limit, refresh, flags): 0, EINVAL for a bad value, ENOENT if `key` is not one
 * of them. */
int settings_set(struct settings *s, const char *key, const char *value);
int settings_copy(const struct settings *from, struct settings *to);
/* The settings as a view's .config reads back; malloc'd. */
char *settings_format(const struct settings *s);
void settings_free(struct settings *s);
/* An http(s) URL, or a local archive: [mboxrd:|mboxo:|maildir:|v2:|v1:]/path */
int settings_source_ok(const char *v);

/* An IMAP folder URL (net_imap_parse): 0, or EINVAL with why (a password
 * in it is refused) */
int settings_imap_ok(const char *v, char *why, size_t whylen);

const char *settings_dedupe_name(int dedupe);

#endif

/*
 * series: b4 am's reading of a mail thread (b4 0.12, Debian 12's), so that
 * a view's series/ holds what `b4 am -m VIEW MSGID` writes.
 *
 * series_links() gives what a message threads by (its Message-ID, then the
 * ids of References and In-Reply-To); series_thread() takes the messages of
 * one thread, in any order, and gives each revision of each patch series in
 * it: b4's name for its .mbx, the am.mbx b4 writes (patches 1..N with the
 * trailers replies gave), the .cover, and the lines of `info` that are the
 * revision's own.  Pure computation on bytes (gmime for parsing), no cache
 * or network; bounded by `struct series_limits`, never by the input: a
 * thread past a limit gives a warning in `info`, not more memory.
 *
 * Thread-safe (no shared state).  Errors: 0 or a positive errno.
 */
#ifndef LEIFS_SERIES_H
#define LEIFS_SERIES_H

#include <stddef.h>
#include <stdint.h>

struct series_msg {
	const char *raw;
	size_t len;
};

struct series_limits {
	size_t max_msgs;        /* messages of a thread read (the rest: a warning) */
	size_t max_patches;     /* patches of a revision (N of M/N above it: a warning) */
};

struct series_rev {
	char *name;             /* b4's .mbx name without ".mbx" */
	char *msgid;            /* the cover's Message-ID, else patch 1's (no <>) */
	int revision;
	char *change_id;        /* the cover's change-id, "" when none */
	char *subject;          /* the series' subject, cleaned (b4 relates
				 * revisions by it when there is no change-id) */
	int64_t date;           /* of its newest message (patch, cover or reply) */
	char *am;               /* am.mbx */
	size_t amlen;
	char *cover;            /* the .cover, NULL when there is no cover */
	size_t coverlen;
	char *info;             /* its own lines of `info` ("key: value\n"...) */
	unsigned missing;       /* how many of its patches the thread lacks */
};

/* A message's Message-ID (ids[0], "" when it has none) and the ids it
 * refers to (References, In-Reply-To), without <>, each once; *n the count.
 * The caller frees with series_links_free. */
int series_links(const char *raw, size_t len, char ***ids, size_t *n);
void series_links_free(char **ids, size_t n);
/* Whether a message's subject makes it a patch or a cover letter as b4
 * takes one (a cheap test on the raw header: threads with none are not
 * read again). */
int series_is_patch(const char *raw, size_t len);

/* The revisions of the series in one thread; *out NULL and *n 0 when it
 * holds none.  Free with series_revs_free. */
int series_thread(const struct series_msg *msgs, size_t nmsgs,
		  const struct series_limits *lim, struct series_rev **out, size_t *n);
void series_revs_free(struct series_rev *r, size_t n);

#endif

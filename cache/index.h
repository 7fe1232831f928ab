/*
 * cache index: a Xapian database of messages, searched with the
 * public-inbox query language (query/qparser.hh) and built with the terms
 * public-inbox's SearchIdx.pm gives a message (terms.h).
 *
 * One index per source (a local archive or a remote URL), in its own
 * directory, so that a query sees the same term statistics and wildcard
 * expansions as the source's own server would.  Documents are keyed by
 * blob id: adding a message twice indexes it once.
 *
 * Threads: one writer per index per process; every call takes the index's
 * lock, so any thread may call.  Changes are visible to searches at once
 * and durable after cache_index_commit() (Xapian commits are atomic: a
 * crash loses only what was not committed, never the index).  Errors: 0 or
 * a positive errno with a one-line reason in `why` (Xapian's message).
 */
#ifndef LEIFS_CACHE_INDEX_H
#define LEIFS_CACHE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cache_index cache_index_t;

/* Open (creating) the index in directory `dir`.  EAGAIN if another
 * process holds it. */
int cache_index_open(const char *dir, cache_index_t **out, char *why, size_t whylen);
void cache_index_close(cache_index_t *x);   /* commits */

/* Index a raw message under its blob id (20 bytes).  *added (if given) is
 * 1 when it was new, 0 when it was there, 2 when it was left out because
 * each of its Message-IDs is indexed already (public-inbox-index's "is a
 * duplicate": the first copy of a Message-ID is the one found). */
int cache_index_add(cache_index_t *x, const unsigned char *oid, const char *raw,
		    size_t len, int *added, char *why, size_t whylen);
int cache_index_has(cache_index_t *x, const unsigned char *oid, int *has);
int cache_index_commit(cache_index_t *x, char *why, size_t whylen);
uint64_t cache_index_count(cache_index_t *x);

/* Run `query` (already through query_approxidate): fn gets each matching
 * blob id, newest first (docid order); a non-zero return stops and is
 * returned.  EINVAL for a query Xapian refuses. */
int cache_index_search(cache_index_t *x, const char *query,
		       int (*fn)(void *arg, const unsigned char *oid), void *arg,
		       char *why, size_t whylen);

/* Threads (threads.cc): every document has the thread id public-inbox's
 * OverIdx.pm would give it (ids from Message-ID, References and
 * In-Reply-To; ghosts for parents not indexed yet; threads merged when a
 * message links them), kept in the index and committed with it.
 * cache_index_search_threads with `threads` runs the query and answers
 * every message of the matches' threads, as public-inbox-httpd's t=1
 * (Mbox.pm results_thread_cb): thread by thread, the newest match's
 * first, each in indexing order; `hit` is 1 for a message the query
 * itself found.  Without `threads` it is cache_index_search. */
int cache_index_search_threads(cache_index_t *x, const char *query, int threads,
			       int (*fn)(void *arg, const unsigned char *oid, int hit),
			       void *arg, char *why, size_t whylen);
/* The same over what was indexed after mark `after` (0: everything):
 * the new documents' matches and, with `threads`, the whole threads of
 * those and of every thread a new document joined that holds a match (a
 * reply to an old match, threads merged by a new message), so that what
 * it adds to a view holding the answer at `after` makes the view hold
 * the whole answer now.  *mark (if given): what to pass next time.
 * Documents never change their terms once indexed, so an old document's
 * answer is the old one. */
int cache_index_search_since(cache_index_t *x, const char *query, int threads, uint64_t after,
			     uint64_t *mark, int (*fn)(void *arg, const unsigned char *oid, int hit),
			     void *arg, char *why, size_t whylen);
/* An index made before thread ids: thread every document, once, reading
 * its message with get (0, or an errno: the message is gone and only its
 * own Message-IDs thread it); a no-op for a threaded index.  *threaded:
 * the documents threaded now. */
int cache_index_thread_upgrade(cache_index_t *x,
			       int (*get)(void *arg, const unsigned char *oid, char **raw,
					  size_t *len),
			       void *arg, uint64_t *threaded, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif

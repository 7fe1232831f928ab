/*
 * query: the public-inbox query language as leifs handles it.
 *
 * A view's directory name is its query: "%2F" stands for '/', "%25" for '%'
 * (no other escapes exist, "%2f" included, so a name decodes one way only
 * and a query has one name).  Queries are
 * validated before a view is made so that a typo is refused at mkdir with
 * EINVAL rather than remembered as a view that can never succeed.  The
 * incremental form is what lei up sends: "(Q) AND dt:YYYYMMDDhhmmss..".
 *
 * All functions are pure (no I/O, no globals; query_approxidate calls the
 * caller's function for dates) and safe from any thread.
 * Strings returned through `char **out` are malloc'd; the caller frees them.
 * Errors are 0 or a positive errno; `why` (if given) receives a static
 * human-readable reason, or one written into why[whylen] where a length
 * is given.
 */
#ifndef LEIFS_QUERY_H
#define LEIFS_QUERY_H

#include <stddef.h>
#include <time.h>

/* Longest query accepted, in bytes; longer ones are refused with E2BIG. */
#define QUERY_MAX 4096

/* Decode a directory name into query text.  EINVAL for an empty or
 * blank name, a bad '%' escape, or control characters. */
int query_name_decode(const char *name, char **out, const char **why);

/* Encode query text as a directory name (inverse of query_name_decode).
 * ENAMETOOLONG when the result would not fit in NAME_MAX. */
int query_name_encode(const char *query, char **out);

/* Check a query for what the server would reject or misread:
 * unbalanced parentheses or quotes, a dangling operator, an unknown
 * "prefix:" or one leifs refuses (uid:, kw:, L:; see prefix.h), empty.
 * 0 when it may be sent. */
int query_validate(const char *query, const char **why);

/* Normalise whitespace as lei does before sending ("make URLs less ugly"). */
int query_normalize(const char *query, char **out);

/* The incremental query: "(QUERY) AND dt:YYYYMMDDhhmmss.." for `since`
 * (UTC), or a plain copy when since <= 0. */
int query_incremental(const char *query, time_t since, char **out);

/*
 * For searching a local index.
 *
 * query_approxidate: d:, dt: and rt: rewritten to the numbers the index
 * holds, as public-inbox does before Xapian parses a query: "d:2024-01-02"
 * becomes "d:20240102..20240103", "rt:2.weeks.ago.." "rt:1795111404..".
 * Dates not yet in the index's form (git's approxidate: "2.weeks.ago",
 * "2024-01-02", a lone d:YYYYMMDD as YYYY-MM-DD) are read by the caller's
 * `resolve` function, called at most once per query with all of them, in
 * order (none: not called): it puts the unix time of each into out[], or
 * returns an errno with a reason in why (query_approxidate's why and
 * whylen).  leifs's (fs/view-local.c) asks git.  A query with such dates
 * and no `resolve` is EINVAL.  On failure `why` says why.
 */
typedef int (*query_dates_fn)(void *arg, char *const *dates, size_t n, long long *out,
			      char *why, size_t whylen);
int query_approxidate(const char *query, query_dates_fn resolve, void *arg, char **out,
		      char *why, size_t whylen);

/* What Xapian's QueryParser, set up as public-inbox's Search.pm does,
 * refuses in a query before query_approxidate (no I/O), such as
 * a size range z:1k..2k that is not numbers; d:, dt:, rt: ranges take any
 * text here (public-inbox rewrites their dates first).  EINVAL with
 * Xapian's reason. */
int query_syntax_check(const char *query, char *why, size_t whylen);

/* Xapian's description of the query as the local index parses it
 * (after query_approxidate), e.g. "Query(0 * Qx@y)", malloc'd into *out;
 * for tests and debugging.  EINVAL when it does not parse. */
int query_describe(const char *query, char **out);

#endif

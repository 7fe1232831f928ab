/*
 * prefix: the one table of search prefixes ("s:", "dfn:", "d:" ...).
 *
 * Both readers of a query take their prefixes from query_prefixes[] and
 * nowhere else: query_validate() (validate.c), which refuses an unknown or
 * unsupported prefix at mkdir, and query_parser() (qparser.cc), which sets
 * up Xapian's QueryParser for the local index.  So what mkdir accepts is
 * what the local index understands, and a test walks the table to hold
 * them together (tests/c/test-units.c, test_prefixes).  As notmuch's
 * lib/prefix.cc, one row per prefix: its name, its kind, its Xapian term
 * prefixes or value slot, and flags.
 *
 * The authority is public-inbox 1.9: Search.pm's %bool_pfx_external,
 * %prob_prefix and the range processors of qparse_new (d: dt: z: rt: uid:),
 * and LeiSearch.pm's qparse_new for lei's kw: and L:.  Term prefixes and
 * value slots are Search.pm's, so a query means the same on a remote
 * public-inbox and in leifs's own index.
 *
 * Refused prefixes (flag QP_UNSUPPORTED; validate.c gives `why`, and the
 * parser does not register them):
 *   uid:      Search.pm parses it for IMAP ("undocumented for WWW"): a range
 *             over an inbox's article numbers, which differ in every inbox
 *             and every source.  leifs's index stores none, so the same
 *             query could never mean the same on two sources.
 *   kw: L:    lei's keywords and labels, kept in lei's own local store
 *             (LeiSearch.pm adds them on top of Search.pm).  A public-inbox
 *             server does not know them and would read "kw:seen" as the
 *             words "kw seen", an empty answer that looks like success;
 *             leifs keeps no keywords or labels in its index either.
 *             (leifs's flags are maildir names, per view.)
 * Before this table, the validator accepted kw: and L: and refused uid:
 * as an unknown prefix; the parser knew uid: but not kw: or L:.
 *
 * The table is constant data: safe from any thread.
 */
#ifndef LEIFS_QUERY_PREFIX_H
#define LEIFS_QUERY_PREFIX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Search.pm's value slots (TS YYYYMMDD DT BYTES UID THREADID) */
enum { QV_TS = 0, QV_YYYYMMDD = 1, QV_DT = 2, QV_BYTES = 3, QV_UID = 4, QV_THREADID = 5 };

enum query_prefix_kind {
	QP_BOOLEAN,     /* exact terms: Xapian add_boolean_prefix (mid: dfpre:) */
	QP_PROB,        /* words, stemmed: Xapian add_prefix (s: b: dfn:) */
	QP_RANGE,       /* A..B over a value slot: NumberRangeProcessor */
};

/* flags */
#define QP_DATE        1u  /* a range of dates public-inbox rewrites first
			    * (approxidate: "rt:2.weeks.ago..") */
#define QP_LEI_ONLY    2u  /* lei's own local store only (kw: L:) */
#define QP_IMAP_ONLY   4u  /* public-inbox's IMAP server only (uid:) */
#define QP_UNSUPPORTED (QP_LEI_ONLY | QP_IMAP_ONLY)  /* refused by leifs */

struct query_prefix {
	const char *name;       /* before the ':'; "" is the default (no prefix) */
	enum query_prefix_kind kind;
	const char *terms;      /* QP_BOOLEAN, QP_PROB: Xapian term prefixes,
				 * separated by one space; NULL for QP_RANGE */
	int slot;               /* QP_RANGE: the value slot (QV_*) */
	unsigned flags;         /* QP_* */
	const char *why;        /* QP_UNSUPPORTED: why mkdir refuses it */
};

/* Every prefix, the default ("") first; ends with a NULL name. */
extern const struct query_prefix query_prefixes[];

/* The row named by the `len` bytes at `name` (no ':'); NULL if none.
 * len 0 finds the default row. */
const struct query_prefix *query_prefix_find(const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif

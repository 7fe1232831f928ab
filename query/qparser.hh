/*
 * The Xapian side of the query language (C++ only; included by .cc files).
 *
 * query_parser() sets up a QueryParser exactly as public-inbox 1.9's
 * Search.pm qparse_new does: the prefixes of query_prefixes[] (prefix.h;
 * boolean, probabilistic and the value ranges d: dt: z: rt:, not the ones
 * leifs refuses), English stemming (STEM_SOME), default AND, at most
 * 100 terms per wildcard.  QUERY_FLAGS are Search.pm's $QP_FLAGS with
 * FLAG_PHRASE (glass databases).  The value slots are Search.pm's.
 */
#ifndef LEIFS_QUERY_QPARSER_HH
#define LEIFS_QUERY_QPARSER_HH

#include <xapian.h>

#include "query/prefix.h"     /* the prefixes, and the value slots QV_* */

#define QUERY_FLAGS (Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_BOOLEAN | \
		     Xapian::QueryParser::FLAG_LOVEHATE | Xapian::QueryParser::FLAG_WILDCARD)

/* qp owns the range processors it is given (reference counted) */
void query_parser(Xapian::QueryParser &qp, const Xapian::Database &db);
/* the same; with any_dates, d: dt: rt: ranges take any text (as before
 * public-inbox's approxidate rewrite), so only their syntax is checked */
void query_parser(Xapian::QueryParser &qp, const Xapian::Database &db, bool any_dates);

#endif

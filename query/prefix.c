/*
 * The table of search prefixes: see prefix.h.  Rows follow public-inbox
 * 1.9's Search.pm (and LeiSearch.pm for kw: and L:), in its order.
 */
#include <string.h>

#include "query/prefix.h"

/* Search.pm's $non_quoted_body */
#define NQ "XNQ XDFN XDFA XDFB XDFHH XDFCTX XDFPRE XDFPOST XDFID"

#define BOOL(n, t)  { n, QP_BOOLEAN, t, 0, 0, NULL }
#define PROB(n, t)  { n, QP_PROB, t, 0, 0, NULL }
#define RANGE(n, s, f) { n, QP_RANGE, NULL, s, f, NULL }

const struct query_prefix query_prefixes[] = {
	/* %prob_prefix: the default, words without a prefix */
	PROB("", "XM S A XQUOT XFN " NQ),
	/* %prob_prefix, mairix-compatible */
	PROB("s", "S"),
	PROB("m", "XM"),                /* mid: is exact, m: partial */
	PROB("l", "XL"),                /* lid: is exact, l: partial */
	PROB("f", "A"),
	PROB("t", "XTO"),
	PROB("tc", "XTO XCC"),
	PROB("c", "XCC"),
	PROB("tcf", "XTO XCC A"),
	PROB("a", "XTO XCC A"),
	PROB("b", NQ " XQUOT"),
	PROB("bs", NQ " XQUOT S"),
	PROB("n", "XFN"),
	PROB("q", "XQUOT"),
	PROB("nq", NQ),
	PROB("dfn", "XDFN"),
	PROB("dfa", "XDFA"),
	PROB("dfb", "XDFB"),
	PROB("dfhh", "XDFHH"),
	PROB("dfctx", "XDFCTX"),
	/* %bool_pfx_external */
	BOOL("mid", "Q"),
	BOOL("lid", "G"),
	BOOL("dfpre", "XDFPRE"),
	BOOL("dfpost", "XDFPOST"),
	BOOL("dfblob", "XDFPRE XDFPOST"),
	BOOL("patchid", "XDFID"),
	/* qparse_new's range processors */
	RANGE("d", QV_YYYYMMDD, QP_DATE),
	RANGE("dt", QV_DT, QP_DATE),
	RANGE("z", QV_BYTES, 0),
	RANGE("rt", QV_TS, QP_DATE),
	{ "uid", QP_RANGE, NULL, QV_UID, QP_IMAP_ONLY,
	  "uid: (IMAP article numbers, different in every inbox) is not supported" },
	/* LeiSearch.pm qparse_new */
	{ "kw", QP_BOOLEAN, "K", 0, QP_LEI_ONLY,
	  "kw: is lei's own keywords; public-inbox servers and leifs keep none" },
	{ "L", QP_BOOLEAN, "L", 0, QP_LEI_ONLY,
	  "L: is lei's own labels; public-inbox servers and leifs keep none" },
	{ NULL, QP_PROB, NULL, 0, 0, NULL }
};

const struct query_prefix *query_prefix_find(const char *name, size_t len)
{
	const struct query_prefix *p;

	for (p = query_prefixes; p->name; p++)
		if (strlen(p->name) == len && !memcmp(p->name, name, len))
			return p;
	return NULL;
}

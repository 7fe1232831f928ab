/*
 * The index document of one message, as public-inbox 1.9's SearchIdx.pm
 * builds it (eml2doc at indexlevel=full): what terms.c extracts with gmime
 * and index.cc hands to Xapian's TermGenerator.  Plain C so that both sides
 * can include it; only cache/ does.
 *
 * Fields come in the order SearchIdx indexes them, since term positions
 * (phrases) follow that order: headers (A XTO XCC S), then each MIME part
 * (XFN, quoted XQUOT, non-quoted XNQ, the diff prefixes XDF*), then the
 * Message-IDs (XM, Q) and List-Id (G, XL).
 */
#ifndef LEIFS_CACHE_TERMS_H
#define LEIFS_CACHE_TERMS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum term_kind {
	TERM_TEXT,      /* TermGenerator::index_text(text, wdf, prefix), then
			 * increase_termpos() (index_phrase / index_text) */
	TERM_BOOL,      /* Document::add_boolean_term(prefix + text) */
	TERM_RAW,       /* Document::add_term(prefix + text) */
};

struct term_field {
	int kind;
	const char *prefix;     /* static */
	char *text;             /* owned */
	unsigned wdf;
};

struct term_doc {
	struct term_field *f;
	size_t n, cap;
	/* the values public-inbox sets (Search.pm TS, YYYYMMDD, DT, BYTES) */
	double ts, yyyymmdd, dt, bytes;
	/* the ids it is threaded by (threadrefs.c): References then
	 * In-Reply-To, as parse_references keeps them; owned */
	char **refs;
	size_t nrefs;
	int err;                /* ENOMEM met while adding */
	size_t text_left;       /* bytes of body text still indexed */
};

/* Body text indexed per message: beyond it a message's text is not
 * searched (its headers, ids and the text before are).  The document of
 * a message of max_message text would take several times that in terms;
 * public-inbox-index offers --max-size, which leaves such a message out. */
#define CACHE_INDEX_TEXT_MAX (4u << 20)

/* Build the document of a raw message.  EINVAL if gmime cannot parse it. */
int cache_terms(const char *raw, size_t len, struct term_doc *d);
void cache_terms_free(struct term_doc *d);
/* Only what threading needs (its Q terms and refs), for documents indexed
 * before thread ids were (threads.cc's upgrade).  EINVAL as above. */
int cache_thread_ids(const char *raw, size_t len, struct term_doc *d);

/* For terms.c and diffterms.c (termdoc.c): append a field (text copied,
 * len bytes); a term longer than Xapian takes is left out. */
void term_add(struct term_doc *d, int kind, const char *prefix, const char *text,
	      size_t len, unsigned wdf);
/* SearchIdx index_diff: the terms of a section that looks like a patch. */
void term_diff(struct term_doc *d, const char *txt, size_t len);

#ifdef __cplusplus
}
#endif

#endif

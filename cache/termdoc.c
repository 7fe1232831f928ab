/*
 * The index document's fields (terms.h): appended by terms.c and
 * diffterms.c, which both build on this file and on nothing of each
 * other's but term_diff.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/terms.h"

#define MAX_TERM 245            /* Xapian's term limit */

void term_add(struct term_doc *d, int kind, const char *prefix, const char *text,
	      size_t len, unsigned wdf)
{
	struct term_field *f;
	char *t;

	if (kind != TERM_TEXT && strlen(prefix) + len > MAX_TERM)
		return;         /* Xapian refuses longer terms */
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;

		if (!(f = realloc(d->f, cap * sizeof(*f)))) {
			d->err = ENOMEM;
			return;
		}
		d->f = f;
		d->cap = cap;
	}
	if (!(t = malloc(len + 1))) {
		d->err = ENOMEM;
		return;
	}
	memcpy(t, text, len);
	t[len] = '\0';
	d->f[d->n++] = (struct term_field){ kind, prefix, t, wdf };
}

void cache_terms_free(struct term_doc *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->f[i].text);
	free(d->f);
	for (i = 0; i < d->nrefs; i++)
		free(d->refs[i]);
	free(d->refs);
	memset(d, 0, sizeof(*d));
}

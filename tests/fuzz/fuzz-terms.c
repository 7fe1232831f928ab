/*
 * libFuzzer: what the local index reads out of a message (cache/terms.c
 * with gmime, the diff terms of diffterms.c, the patch id of patchid.c).
 * Oracles: no GLib critical or warning (they are made fatal), a boolean or
 * raw term fits Xapian's limit, a patch id is 40 hex digits, and the same
 * input gives the same terms and size twice (not the same dates: a message
 * with no date gets the time it is indexed, as in public-inbox's MsgTime).
 */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/cache-private.h"
#include "cache/terms.h"

static uint64_t digest(const struct term_doc *d)
{
	uint64_t h = d->n;
	size_t i;
	const char *p;

	for (i = 0; i < d->n; i++) {
		const struct term_field *f = &d->f[i];

		if (f->kind != TERM_TEXT && strlen(f->prefix) + strlen(f->text) > 245)
			abort();
		h = (h ^ (uint64_t)f->kind ^ f->wdf) * 1099511628211u;
		for (p = f->prefix; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211u;
		for (p = f->text; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211u;
	}
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	const char *s = (const char *)data;
	struct term_doc a = { 0 }, b = { 0 };
	char hex[41];
	int ra, rb, i;

	if (!ready) {
		cache_mail_init();
		g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
		ready = 1;
	}
	ra = cache_terms(s, size, &a);
	rb = cache_terms(s, size, &b);
	if (ra != rb || (!ra && (digest(&a) != digest(&b) || a.bytes != b.bytes)))
		abort();
	cache_terms_free(&a);
	cache_terms_free(&b);
	/* the input as a body: its diff terms, its patch id */
	term_diff(&a, s, size);
	digest(&a);
	cache_terms_free(&a);
	if (!cache_patch_id(s, size, hex)) {
		for (i = 0; i < 40; i++)
			if (!strchr("0123456789abcdef", hex[i]))
				abort();
		if (hex[40])
			abort();
	}
	return 0;
}

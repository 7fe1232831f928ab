/*
 * What a message threads by, and whether b4 takes it for a patch
 * (series.h): the cheap facts view-series.c keeps for each message, so
 * that a thread is read whole only when it holds a patch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"
#include "cache/series-private.h"

int series_links(const char *raw, size_t len, char ***ids, size_t *n)
{
	GByteArray *hold;
	GMimeMessage *msg = cache_mail_parse(raw, len, &hold);
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GPtrArray *out = g_ptr_array_new(), *v;
	static const char *const hs[] = { "Message-Id", "In-Reply-To", "References" };
	guint i, j;

	*ids = NULL;
	*n = 0;
	if (!msg) {
		cache_mail_done(NULL, hold);
		g_hash_table_destroy(seen);
		g_ptr_array_free(out, TRUE);
		return EINVAL;
	}
	for (j = 0; j < 3; j++) {
		GPtrArray *got = g_ptr_array_new_with_free_func(g_free);

		v = cache_hdr_raw(GMIME_OBJECT(msg), hs[j]);
		/* the first Message-ID only: what b4 keys a message by */
		for (i = 0; i < v->len && (j || !got->len); i++)
			cache_extract_ids(v->pdata[i], got, seen);
		if (j == 0 && !got->len)
			g_ptr_array_add(out, strdup(""));
		for (i = 0; i < got->len && (j || i < 1); i++)
			g_ptr_array_add(out, strdup(got->pdata[i]));
		g_ptr_array_unref(got);
		g_ptr_array_unref(v);
	}
	cache_mail_done(msg, hold);
	g_hash_table_destroy(seen);
	for (i = 0; i < out->len; i++)
		if (!out->pdata[i]) {
			series_links_free((char **)out->pdata, out->len);
			g_ptr_array_free(out, FALSE);
			return ENOMEM;
		}
	*n = out->len;
	*ids = (char **)g_ptr_array_free(out, FALSE);
	return 0;
}

void series_links_free(char **ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ids[i]);
	g_free(ids);
}

int series_is_patch(const char *raw, size_t len)
{
	struct lmsg *m = lmsg_new(raw, len);
	int patch;

	if (!m)
		return 0;
	/* add_message: a patch, or a cover letter */
	patch = !m->reply && (m->has_diff || (m->counter == 0 &&
					      (!m->counters_inferred || m->has_diffstat)));
	lmsg_free(m);
	return patch;
}

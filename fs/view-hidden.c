/*
 * VIEW/.unhide (views.h): the messages unlinked from a view, and bringing
 * them back.  A hide is a view's own; what it hid stays in the cache with
 * the view, where .unhide finds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views-private.h"

int views_unhide(views_t *v, const char *name, const char *text, size_t len,
		 char *why, size_t whylen)
{
	struct cache_view cv;
	uint64_t n = 0, total = 0;
	int err;

	why[0] = '\0';
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	/* "all", or blob ids (or message file names holding one), a line each */
	while (len && !err) {
		const char *nl = memchr(text, '\n', len);
		size_t ll = nl ? (size_t)(nl - text) : len, i;
		unsigned char oid[CACHE_OID_LEN];
		char line[256];

		if (ll >= sizeof(line)) {
			snprintf(why, whylen, ".unhide: a line is too long");
			err = EINVAL;
			break;
		}
		memcpy(line, text, ll);
		line[ll] = '\0';
		text += ll + (nl != NULL);
		len -= ll + (nl != NULL);
		while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t'))
			line[--ll] = '\0';
		if (!ll)
			continue;
		if (!strcmp(line, "all")) {
			err = cache_entry_unhide(v->cache, cv.id, NULL, &n);
			total += n;
			continue;
		}
		/* a bare id, or a name such as 1700000000.<id>.leifs:2,S */
		for (i = 0; i + 40 <= ll; i++)
			if ((i == 0 || line[i - 1] == '.') && !cache_oid_parse(line + i, oid) &&
			    (line[i + 40] == '\0' || line[i + 40] == '.'))
				break;
		if (i + 40 > ll) {
			snprintf(why, whylen, ".unhide: not \"all\" or a blob id: %.80s", line);
			err = EINVAL;
			break;
		}
		err = cache_entry_unhide(v->cache, cv.id, oid, &n);
		total += n;
	}
	if (total && v->o.changed)
		v->o.changed(v->o.changed_arg, cv.id, NULL);
	if (err && why[0]) {
		struct live *l;

		pthread_mutex_lock(&v->lock);
		if ((l = live_get(v, cv.id, name))) {
			free(l->refusal);
			l->refusal = strdup(why);
		}
		pthread_mutex_unlock(&v->lock);
	}
	cache_view_release(&cv);
	return err;
}

static int add_hidden(void *arg, const struct cache_entry *e)
{
	char hex[2 * CACHE_OID_LEN + 1];

	cache_oid_hex(e->oid, hex);
	return fprintf(arg, "%s\n", hex) < 0 ? EIO : 0;
}

int views_hidden(views_t *v, const char *name, char **out)
{
	struct cache_counts counts;
	struct cache_view cv;
	size_t len;
	FILE *f;
	int err;

	*out = NULL;
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if (!(f = open_memstream(out, &len))) {
		cache_view_release(&cv);
		return ENOMEM;
	}
	/* made at every getattr (ls -l of the view): walk only when the
	 * view's counters say something is hidden */
	if (cache_view_counts(v->cache, cv.id, &counts) || counts.hidden)
		err = cache_hidden_each(v->cache, cv.id, add_hidden, f);
	fclose(f);
	cache_view_release(&cv);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

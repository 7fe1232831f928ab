/*
 * A revision's info (view-series.c's update): its own lines, as series.c
 * made them, then older: and newer:, the other revisions of the same
 * series in the view.  A revision whose thread did not change keeps its
 * own lines from its I record; every I record is written again, as a new
 * revision changes its relatives' lines.
 */
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view-series-upd.h"
#include "fs/views-private.h"

/* ---- info: a revision's own lines, then older: and newer: ---- */

struct relrev {
	const char *name, *change_id, *subject;
	int revision;
	int64_t date;
	const char *own;        /* its own lines, NULL: keep its I record's */
};

/* revisions of one series: the same change-id (b4 ez's), or the same
 * subject (b4's series subject: the cover's, else patch 1's) */
static int same_series(const struct relrev *a, const struct relrev *b)
{
	return (*a->change_id && !strcmp(a->change_id, b->change_id)) ||
	       !strcmp(a->subject, b->subject);
}

static int cmp_relrev(const void *x, const void *y)
{
	const struct relrev *a = x, *b = y;

	if (a->revision != b->revision)
		return a->revision < b->revision ? -1 : 1;
	return strcmp(a->name, b->name);
}

#define RELATED_MAX 32

static int info_text(struct upd *u, const struct relrev *all, size_t n, size_t k,
		     const char *own, char **out, size_t *len)
{
	GString *s = g_string_new(own);
	const char *what[2] = { "older", "newer" };
	int dir;
	size_t i;

	(void)u;
	/* the nearest RELATED_MAX each way (4999 "[PATCH] x" of one subject
	 * would list each other in every info): `all` is in revision order */
	for (dir = 0; dir < 2; dir++) {
		size_t pick[RELATED_MAX], np = 0, j;

		for (i = k; np < RELATED_MAX && (dir == 0 ? i-- > 0 : ++i < n);) {
			if (!same_series(&all[i], &all[k]))
				continue;
			if (dir == 0 ? all[i].revision >= all[k].revision
				     : all[i].revision <= all[k].revision)
				continue;
			pick[np++] = i;
		}
		for (j = 0; j < np; j++) {
			const char *name = all[pick[dir == 0 ? np - 1 - j : j]].name;

			if (!j)
				g_string_append_printf(s, "%s: %s", what[dir], name);
			else
				g_string_append_printf(s, " %s", name);
		}
		if (np)
			g_string_append_c(s, '\n');
	}
	*len = s->len;
	*out = g_string_free(s, FALSE);
	return 0;
}

/* a kept revision's own lines: those of its I record before older:/newer: */
static int kept_own(struct upd *u, const char *name, char **own)
{
	size_t kl = strlen(name), olen;
	char *key = malloc(kl + 1), *p;
	void *val;
	int err;

	if (!key)
		return ENOMEM;
	key[0] = 'I';
	memcpy(key + 1, name, kl);
	err = cache_series_get(u->v->cache, u->id, key, kl + 1, &val, &olen);
	free(key);
	if (err == ENOENT)
		return (*own = strdup("")) ? 0 : ENOMEM;
	if (err)
		return err;
	*own = val;
	if (!strncmp(*own, "older: ", 7) || !strncmp(*own, "newer: ", 7))
		(*own)[0] = '\0';
	else if ((p = strstr(*own, "\nolder: ")) || (p = strstr(*own, "\nnewer: ")))
		p[1] = '\0';
	return 0;
}

int ser_write_infos(struct upd *u)
{
	GArray *all = g_array_new(FALSE, TRUE, sizeof(struct relrev));
	guint i;
	int err = 0;

	for (i = 0; i < u->old.revs->len; i++) {
		struct old_rev *o = u->old.revs->pdata[i];
		struct relrev r = { o->name, o->change_id, o->subject, o->revision, o->date, NULL };

		if (o->keep)
			g_array_append_val(all, r);
	}
	for (i = 0; i < u->fresh->len; i++) {
		struct series_rev *x = u->fresh->pdata[i];
		struct relrev r = { u->fresh_names->pdata[i], x->change_id, x->subject, x->revision,
				    x->date, x->info };

		g_array_append_val(all, r);
	}
	/* older: and newer: list them by revision */
	g_array_sort(all, cmp_relrev);
	for (i = 0; i < all->len && !err; i++) {
		struct relrev *r = &g_array_index(all, struct relrev, i);
		char *own = NULL, *text;
		size_t len;

		if (!r->own && (err = kept_own(u, r->name, &own)))
			break;
		err = info_text(u, (struct relrev *)all->data, all->len, i, r->own ? r->own : own,
				&text, &len);
		free(own);
		if (!err)
			err = ser_queue(u->w.put, 'I', r->name, strlen(r->name), text, len);
	}
	g_array_free(all, TRUE);
	return err;
}

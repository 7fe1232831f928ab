/*
 * The records kept in memory per view (struct live, views-private.h) and
 * what they own: made on first use, counted, freed with the last
 * reference; among them a view's settings, parsed once from its .config.
 * And how a source's URL is shown (its credentials masked), and what a
 * thread view's record name stands for (view-thread.c).  The core that views.c and the view-*.c files share, so that
 * each of them depends on it and none on another one's internals.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/log.h"
#include "fs/views-private.h"
#include "query/query.h"

cache_t *views_cache(views_t *v)
{
	return v->cache;
}

void free_src(struct src_state *src, int n)
{
	int i;

	for (i = 0; src && i < n; i++)
		free(src[i].url);
	free(src);
}

void free_imap_state(struct imap_state *s)
{
	while (s) {
		struct imap_state *next = s->next;

		free(s->url);
		free(s);
		s = next;
	}
}

void free_empty(struct empty_src *e)
{
	while (e) {
		struct empty_src *next = e->next;

		free(e->url);
		free(e->query);
		free(e);
		e = next;
	}
}

struct live *live_get(views_t *v, uint64_t id, const char *name)
{
	struct live *l;

	for (l = v->live; l; l = l->next)
		if (l->id == id)
			return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->name = strdup(name);
	if (!l->name) {
		free(l);
		return NULL;
	}
	l->id = id;
	l->refs = 1;            /* the list's */
	l->next = v->live;
	v->live = l;
	return l;
}

void live_free(struct live *l)
{
	size_t i;

	free(l->name);
	for (i = 0; i < l->nold; i++)
		free(l->old_names[i]);
	free(l->old_names);
	free(l->last_query);
	free_src(l->src, l->nsrc);
	free(l->refusal);
	free(l->pending);
	free(l->before);
	free(l->tail);
	free(l->seen[0]);
	free(l->seen[1]);
	free(l->subsys_change);
	free(l->subsys_note);
	free_empty(l->empty);
	free_imap_state(l->imap);
	if (l->has_set)
		settings_free(&l->set);
	while (l->memos) {
		struct local_memo *m = l->memos;

		l->memos = m->next;
		free(m->spec);
		free(m->q);
		free(m->next_q);
		free(m);
	}
	free(l);
}

void live_put(struct live *l)
{
	if (--l->refs == 0)
		live_free(l);
}

/* the settings as stored, read and parsed */
const struct settings *view_defaults(views_t *v, const char *name)
{
	return views_subsys_name(name) ? &v->def_subsys : &v->def;
}

static int settings_read(views_t *v, const struct cache_view *cv, struct settings *s)
{
	const struct settings *def = view_defaults(v, cv->name);
	char *text = NULL, why[256];
	size_t len = 0;
	int err = cache_settings_get(v->cache, cv->id, &text, &len, NULL);

	if (err == ENOENT)
		return settings_copy(def, s);
	if (err)
		return err;
	err = settings_parse(def, text, len, s, why, sizeof(why));
	free(text);
	if (err == EINVAL) {    /* checked when written: only a damaged record */
		log_err("view %llu: stored .config does not parse (%s): defaults used",
			(unsigned long long)cv->id, why);
		err = settings_copy(def, s);
	}
	return err;
}

void view_settings_forget(views_t *v, uint64_t id)
{
	struct live *l;

	v->config_gen++;        /* a read under way keeps what it read to itself */
	for (l = v->live; l; l = l->next)
		if (l->id == id && l->has_set) {
			settings_free(&l->set);
			l->has_set = 0;
		}
}

int view_settings(views_t *v, const struct cache_view *cv, struct settings *s)
{
	struct settings mine;
	struct live *l;
	uint64_t gen;
	int err;

	pthread_mutex_lock(&v->lock);
	l = live_get(v, cv->id, cv->name);
	if (l && l->has_set) {
		err = settings_copy(&l->set, s);
		pthread_mutex_unlock(&v->lock);
		return err;
	}
	gen = v->config_gen;
	pthread_mutex_unlock(&v->lock);
	if ((err = settings_read(v, cv, s)))
		return err;
	/* kept only if no .config was stored meanwhile */
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next)
		if (l->id == cv->id && !l->has_set && gen == v->config_gen &&
		    !settings_copy(s, &mine)) {
			l->set = mine;
			l->has_set = 1;
		}
	pthread_mutex_unlock(&v->lock);
	return 0;
}

void url_shown(const char *url, char *buf, size_t len)
{
	const char *scheme = strstr(url, "://");
	const char *host = scheme ? scheme + 3 : url;
	const char *end = host + strcspn(host, "/?#");
	const char *at = memchr(host, '@', (size_t)(end - host));

	if (!at)
		snprintf(buf, len, "%s", url);
	else
		snprintf(buf, len, "%.*s***@%s", (int)(host - url), url, at + 1);
}

void print_url(FILE *f, const char *url)
{
	char buf[1024];

	url_shown(url, buf, sizeof(buf));
	fputs(buf, f);
}


const char *views_thread_name(const char *key)
{
	size_t n = strlen(THREAD_PREFIX);

	return key && !strncmp(key, THREAD_PREFIX, n) && key[n] ? key + n : NULL;
}

int views_thread_mid(const char *key, char **mid)
{
	const char *name = views_thread_name(key), *why;

	*mid = NULL;
	return name ? query_name_decode(name, mid, &why) : EINVAL;
}

int view_prefixed_key(const char *prefix, const char *decoded, char **key)
{
	char *canon = NULL;
	int err;

	*key = NULL;
	if ((err = query_name_encode(decoded, &canon)))
		return err;
	if (asprintf(key, "%s%s", prefix, canon) < 0) {
		*key = NULL;
		err = ENOMEM;
	}
	free(canon);
	return err;
}

int view_mid_ok(const char *mid, const char **why)
{
	size_t i;

	/* a path segment of the thread's URL: a '.' first would hide a
	 * directory named by it or be another name for it, and "." or ".."
	 * would climb out of the inbox's URL (curl folds dot segments) */
	if (mid[0] == '.') {
		*why = "a Message-ID starting with '.' (reserved names, and a URL's dot segments)";
		return EINVAL;
	}
	/* a Message-ID is one token: none of these is in one, and each would
	 * make another query of mid: than the id */
	for (i = 0; mid[i]; i++)
		if (strchr(" <>\"", mid[i]) || (unsigned char)mid[i] < 0x20 || mid[i] == 0x7f) {
			*why = "not a Message-ID (it holds a space, '<', '>', '\"' or a control character)";
			return EINVAL;
		}
	return 0;
}

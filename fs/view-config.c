/*
 * VIEW/.config: the view's settings (settings.h) stored in the cache's settings
 * table, read back as the settings in effect, written with a pause.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/log.h"
#include "fs/views-private.h"

int views_config(views_t *v, const char *name, char **out)
{
	struct cache_view cv;
	struct settings set;
	int err;

	struct live *l;
	char *pending = NULL, why[256];

	*out = NULL;
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next)
		if (l->id == cv.id && l->pending)
			pending = strdup(l->pending);
	pthread_mutex_unlock(&v->lock);
	/* what was written reads back at once, though applied a moment later */
	if (pending)
		err = settings_parse(view_defaults(v, name), pending, strlen(pending), &set, why, sizeof(why));
	else
		err = view_settings(v, &cv, &set);
	if (!err) {
		if (!(*out = settings_format(&set)))
			err = ENOMEM;
		settings_free(&set);
	}
	free(pending);
	cache_view_release(&cv);
	return err;
}

int views_text_time(views_t *v, const struct cache_view *cv, int which, const char *text,
		    struct timespec *ts)
{
	struct timespec now, *at;
	struct live *l;
	int64_t base = cv->created, stored;
	size_t len;
	char *copy = NULL;
	int err = 0;

	if (which && !cache_settings_get(v->cache, cv->id, NULL, &len, &stored))
		base = stored;
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&v->lock);
	if (!(l = live_get(v, cv->id, cv->name))) {
		err = ENOMEM;
		goto out;
	}
	at = &l->seen_at[which];
	if (l->seen[which] && !l->written[which] && !strcmp(l->seen[which], text)) {
		*ts = *at;
		goto out;
	}
	if (!(copy = strdup(text))) {
		err = ENOMEM;
		goto out;
	}
	if (!l->seen[which]) {
		now = (struct timespec){ .tv_sec = (time_t)base };
	} else if (now.tv_sec < at->tv_sec ||
		   (now.tv_sec == at->tv_sec && now.tv_nsec <= at->tv_nsec)) {
		/* a new text, a new time, even with the clock set back */
		now = *at;
		if (++now.tv_nsec == 1000000000L) {
			now.tv_sec++;
			now.tv_nsec = 0;
		}
	}
	free(l->seen[which]);
	l->seen[which] = copy;
	l->written[which] = 0;
	*at = *ts = now;
out:
	pthread_mutex_unlock(&v->lock);
	return err;
}

void views_text_written(views_t *v, uint64_t id, const char *name, int which)
{
	struct live *l;

	pthread_mutex_lock(&v->lock);
	if ((l = live_get(v, id, name)))
		l->written[which] = 1;
	pthread_mutex_unlock(&v->lock);
}

/* remember (or forget, with NULL) why the view's last .config was refused */
static void set_refusal(views_t *v, const struct cache_view *cv, const char *why)
{
	struct live *l;

	pthread_mutex_lock(&v->lock);
	if ((l = live_get(v, cv->id, cv->name))) {
		free(l->refusal);
		l->refusal = NULL;
		if (why && asprintf(&l->refusal, ".config: %s", why) < 0)
			l->refusal = NULL;
	}
	pthread_mutex_unlock(&v->lock);
}

int views_set_config(views_t *v, const char *name, const char *text, size_t len,
		     char *why, size_t whylen)
{
	struct cache_view cv;
	struct settings old, set;
	int err;

	why[0] = '\0';
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if ((err = view_settings(v, &cv, &old)))
		goto out;
	if ((err = settings_parse(view_defaults(v, name), text, len, &set, why, whylen))) {
		if (err == EINVAL) {
			log_err("new .config for %s refused: %s", name, why);
			set_refusal(v, &cv, why);
		}
		settings_free(&old);
		goto out;
	}
	err = cache_settings_put(v->cache, cv.id, text, len);
	pthread_mutex_lock(&v->lock);
	view_settings_forget(v, cv.id);
	pthread_mutex_unlock(&v->lock);
	/* another strategy: the next full search picks the copies anew */
	if (!err && set.dedupe != old.dedupe)
		err = cache_view_clear_dedupe(v->cache, cv.id);
	settings_free(&old);
	settings_free(&set);
	if (!err) {
		set_refusal(v, &cv, NULL);
		err = views_refresh(v, name, 1);
	}
out:
	cache_view_release(&cv);
	return err;
}

/*
 * A .config arrives by write(2)s with no close to tell its end (fs.c keeps
 * no open-file state), and some writers send a line per write.  Each write
 * is checked at once (a bad line fails that write, and nothing of it is
 * applied); the text is applied when no write came for STAGE_MS, so that a
 * good first line is never applied on its own before a bad second one.
 * fs.c hands over one writer's whole text so far at each write, and a
 * staged text replaces the one staged before: with two writers at once,
 * what is applied is one writer's text, never a mix.
 *
 * A text that ends inside a line may be a line cut by the writer's
 * chunking (dd bs=7) or a last line with no newline (printf '...\tkey = 1').
 * Its complete lines are staged, and the whole text is judged when writes
 * pause, as a close would see it (the kernel sends no close here: a FLUSH
 * for every close would cost every message file a round trip): good, it is
 * applied; bad, it is refused then, with its first lines, the reason in
 * .status and the log, and the rewrite's next write fails with EINVAL.
 */
#define STAGE_MS 300

struct stage {
	views_t *v;
	struct live *l;
	uint64_t gen;
};

/* whether view `name` is still view `id` (not removed, nor made anew) */
static int still_view(views_t *v, const char *name, uint64_t id)
{
	struct cache_view cv;
	int same;

	if (cache_view_get(v->cache, name, &cv))
		return 0;
	same = cv.id == id;
	cache_view_release(&cv);
	return same;
}

/*
 * With v->apply held: a staged text whose last line never came whole is
 * judged whole now.  Refused, it takes its first lines back with it, as a
 * refused write does, and what another rewrite had staged before comes
 * back (st->gen follows it).
 */
static void judge_tail(views_t *v, struct stage *st)
{
	struct live *l = st->l;
	struct settings set;
	char *tail = NULL, why[256];
	uint64_t by = 0;
	int err;

	pthread_mutex_lock(&v->lock);
	if (l->pending_gen == st->gen && l->tail) {
		tail = l->tail;
		l->tail = NULL;
		by = l->pending_by;
	}
	pthread_mutex_unlock(&v->lock);
	if (!tail)
		return;
	err = settings_parse(&v->def, tail, strlen(tail), &set, why, sizeof(why));
	if (!err)
		settings_free(&set);
	else if (err == EINVAL)
		log_err("new .config for %s refused: %s (its last line has no newline)",
			l->name, why);
	pthread_mutex_lock(&v->lock);
	if (l->pending_gen != st->gen) {
		;               /* a write came meanwhile: it is judged anew */
	} else if (!err) {
		free(l->pending);
		l->pending = tail;
		tail = NULL;
	} else {
		free(l->refusal);
		l->refusal = NULL;
		if (err == EINVAL &&
		    asprintf(&l->refusal, ".config: %s (its last line has no newline)", why) < 0)
			l->refusal = NULL;
		free(l->pending);
		l->pending = l->before;
		l->before = NULL;
		l->pending_by = 0;
		l->refused_by = by;
		st->gen = ++l->pending_gen;
	}
	pthread_mutex_unlock(&v->lock);
	free(tail);
}

static void *apply_later(void *arg)
{
	struct stage *st = arg;
	views_t *v = st->v;
	struct timespec until;
	char *text = NULL, *name = NULL, why[256];
	int err;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += STAGE_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&v->lock);
	while (!atomic_load(&v->stop) &&
	       pthread_cond_timedwait(&v->wake, &v->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&v->lock);
	/* a text staged after this one waits until this one is stored */
	pthread_mutex_lock(&v->apply);
	judge_tail(v, st);
	pthread_mutex_lock(&v->lock);
	/* the text stays pending until it is stored: .config reads it back
	 * meanwhile, never the settings before it (a text that changed and
	 * changed back would move the mtime under an editor: emacs's "has
	 * changed since visited") */
	if (st->l->pending_gen == st->gen && st->l->pending) {
		text = strdup(st->l->pending);
		name = strdup(st->l->name);
	}
	pthread_mutex_unlock(&v->lock);
	/* stored at unmount too (views_close waits for it): a text written
	 * just before is the user's last word; only its refresh is not run */
	if (text && name && still_view(v, name, st->l->id) &&
	    (err = views_set_config(v, name, text, strlen(text), why, sizeof(why))) &&
	    err != ESHUTDOWN)
		log_err("cannot apply the .config of %s: %s", name, why[0] ? why : "error");
	pthread_mutex_lock(&v->lock);
	/* dropped once tried; a failed copy (ENOMEM) leaves it staged */
	if (text && name && st->l->pending_gen == st->gen && st->l->pending) {
		free(st->l->pending);   /* applied (or failed): nothing to go back to */
		st->l->pending = NULL;
		free(st->l->before);
		st->l->before = NULL;
	}
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&v->apply);
	free(text);
	free(name);
	pthread_mutex_lock(&v->lock);
	live_put(st->l);
	v->appliers--;
	pthread_cond_broadcast(&v->refreshed);
	pthread_mutex_unlock(&v->lock);
	free(st);
	return NULL;
}

static int config_ok(views_t *v, const char *text, size_t len)
{
	struct settings set;
	char why[256];
	int err = settings_parse(&v->def, text, len, &set, why, sizeof(why));

	if (!err)
		settings_free(&set);
	return err;
}

/* the length of text's complete lines, when its last line is unfinished
 * and they are good but the whole is not (the rest may still come); 0 */
static size_t unfinished(views_t *v, const char *text, size_t len, int err)
{
	const char *nl;

	if (err != EINVAL || !len || text[len - 1] == '\n' || memchr(text, '\0', len))
		return 0;
	for (nl = text + len; nl > text && nl[-1] != '\n'; nl--)
		;
	if (nl > text && config_ok(v, text, (size_t)(nl - text)))
		return 0;
	return (size_t)(nl - text) + 1;     /* + 1: an empty first part counts */
}

int views_stage_config(views_t *v, const char *name, const char *text, size_t len,
		       uint64_t rewrite, int more, char *why, size_t whylen)
{
	struct cache_view cv;
	struct settings set;
	struct stage *st = NULL;
	struct live *l;
	pthread_attr_t attr;
	pthread_t t;
	size_t keep = 0;
	int err;

	why[0] = '\0';
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	err = settings_parse(view_defaults(v, name), text, len, &set, why, whylen);
	if (!err)
		settings_free(&set);
	else if (more && (keep = unfinished(v, text, len, err)))
		err = 0;        /* judged when writes pause (judge_tail) */
	else if (err == EINVAL)
		log_err("new .config for %s refused: %s", name, why);
	pthread_mutex_lock(&v->lock);
	if (!(l = live_get(v, cv.id, name))) {
		err = ENOMEM;
		goto out;
	}
	if (rewrite && rewrite == l->refused_by) {
		/* judged whole and refused when its writes paused: the rest
		 * of that rewrite fails too, with the same reason */
		snprintf(why, whylen, "%s", l->refusal ? l->refusal + 9 : "refused");
		err = EINVAL;
		goto out;
	}
	free(l->refusal);
	l->refusal = NULL;
	if (err) {
		if (err == EINVAL && asprintf(&l->refusal, ".config: %s", why) < 0)
			l->refusal = NULL;
		/* a refused text cancels what its own rewrite staged (its
		 * first lines), and what another rewrite had staged before
		 * comes back; another rewrite's text is left alone */
		if (!rewrite || rewrite != l->pending_by)
			goto out;
		free(l->tail);
		l->tail = NULL;
		free(l->pending);
		l->pending = l->before;
		l->before = NULL;
		l->pending_by = 0;
		l->pending_gen++;
		if (!l->pending || atomic_load(&v->stop))
			goto out;
		if (!(st = malloc(sizeof(*st))))
			goto out;
	} else if (atomic_load(&v->stop)) {
		err = ESHUTDOWN;
		goto out;
	} else {
		char *mine = strndup(text, keep ? keep - 1 : len);
		char *whole = keep ? strndup(text, len) : NULL;

		if (!mine || (keep && !whole) || !(st = malloc(sizeof(*st)))) {
			free(mine);
			free(whole);
			err = ENOMEM;
			goto out;
		}
		free(l->tail);
		l->tail = whole;
		if (!rewrite || rewrite != l->pending_by) {
			/* a rewrite begins: what it replaces is kept */
			free(l->before);
			l->before = l->pending;
		} else {
			free(l->pending);
		}
		l->pending = mine;
		l->pending_by = rewrite;
		l->pending_gen++;
	}
	*st = (struct stage){ v, l, l->pending_gen };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, apply_later, st) == 0) {
		l->refs++;      /* the staging thread's */
		v->appliers++;
		st = NULL;
	} else if (!err) {
		err = EAGAIN;
	}
	pthread_attr_destroy(&attr);
out:
	pthread_mutex_unlock(&v->lock);
	free(st);
	cache_view_release(&cv);
	return err;
}

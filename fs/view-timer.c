/*
 * The timer: views that clients watch (a stat of the view, its cur/ or
 * new/, see views_watched in views.h) are refreshed each time they are
 * due, and with refresh_all every view is.  Once a second, until unmount.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/views-private.h"

/* how long a view stays watched after a client's last stat of it */
#define WATCH_TTL 300

static int view_every_get(views_t *v, const struct cache_view *cv, long *every)
{
	*every = view_every(v, cv);
	return 0;
}

/* Reads of the timer and of views_watched, made as a request's are: under
 * the guard (cache.h), so a damaged cache fails them instead of ending
 * the daemon.  Apart, so that no local lives across the jump. */
static int guarded_every(views_t *v, const struct cache_view *cv, long *every)
{
	return CACHE_GUARDED(v->cache, view_every_get(v, cv, every), (void)0);
}

static int guarded_view_get(views_t *v, const char *name, struct cache_view *cv)
{
	return CACHE_GUARDED(v->cache, cache_view_get(v->cache, name, cv), (void)0);
}

void views_watched(views_t *v, const struct cache_view *cv)
{
	struct live *l;
	long every;

	if (guarded_every(v, cv, &every))
		return;

	/* refresh=0 asks at every listing; a stat is not one */
	if (every <= 0 || cv->last_try == 0)
		return;
	pthread_mutex_lock(&v->lock);
	if (!atomic_load(&v->stop) && (l = live_get(v, cv->id, cv->name))) {
		/* the timer keeps it current from now on, so that the
		 * client's next check finds the new mail */
		l->watched_until = time(NULL) + WATCH_TTL;
		l->watch_every = every;
		if (!l->refreshing && view_due(v, l, cv, every))
			start_refresh(v, l, 0);
	}
	pthread_mutex_unlock(&v->lock);
}

/* The timer's part for watched views: each one due by its interval is
 * refreshed, so that a client checking every few seconds sees new mail
 * within the interval plus its own check period. */
static void refresh_watched(views_t *v)
{
	time_t now = time(NULL);
	char **names = NULL;
	size_t n = 0, i;
	struct live *l;

	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next) {
		char **t;

		if (l->watched_until < now || l->refreshing)
			continue;
		if (!(t = realloc(names, (n + 1) * sizeof(*names))))
			break;
		names = t;
		if (!(names[n] = strdup(l->name)))
			break;
		n++;
	}
	pthread_mutex_unlock(&v->lock);
	for (i = 0; i < n; i++) {
		struct cache_view cv;

		if (!guarded_view_get(v, names[i], &cv)) {
			pthread_mutex_lock(&v->lock);
			if (!atomic_load(&v->stop) && (l = live_get(v, cv.id, cv.name)) &&
			    !l->refreshing && l->watched_until >= now &&
			    view_due(v, l, &cv, l->watch_every))
				start_refresh(v, l, 0);
			pthread_mutex_unlock(&v->lock);
			cache_view_release(&cv);
		}
		free(names[i]);
	}
	free(names);
}

struct due {
	views_t *v;
	time_t now;
};

static int refresh_if_due(void *arg, const struct cache_view *cv)
{
	struct due *d = arg;
	struct live *l;

	/* a cheap first look in whole seconds; view_aged decides */
	if (d->now - cv->last_try < d->v->o.refresh_all)
		return 0;
	pthread_mutex_lock(&d->v->lock);
	l = live_get(d->v, cv->id, cv->name);
	if (l && view_aged(l, cv, d->v->o.refresh_all))
		start_refresh(d->v, l, 0);
	pthread_mutex_unlock(&d->v->lock);
	return 0;
}

static void guarded_each(views_t *v, struct due *d)
{
	(void)CACHE_GUARDED(v->cache, cache_view_each(v->cache, refresh_if_due, d), (void)0);
}

/* Each second: views that clients watch (views_watched); and, with
 * refresh_all (lei up --all on a timer), every view whose last search is
 * older than that, checked every few seconds, so views made meanwhile
 * join. */
static void *timer_thread(void *arg)
{
	views_t *v = arg;
	long tick = v->o.refresh_all < 10 ? v->o.refresh_all : 10;
	time_t next_all = 0;

	while (!atomic_load(&v->stop)) {
		struct timespec until;
		struct due d = { v, time(NULL) };

		if (v->o.refresh_all > 0 && d.now >= next_all) {
			guarded_each(v, &d);
			next_all = d.now + (tick > 0 ? tick : 1);
		}
		refresh_watched(v);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_mutex_lock(&v->lock);
		while (!atomic_load(&v->stop) &&
		       pthread_cond_timedwait(&v->wake, &v->lock, &until) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&v->lock);
	}
	return NULL;
}

int views_start(views_t *v)
{
	int err;

	if ((err = pthread_create(&v->timer, NULL, timer_thread, v)))
		return err;
	v->timer_running = 1;
	return 0;
}

/*
 * Views: their life and the refresh policy.  The search itself is in
 * view-search.c, the timer (watched views, refresh_all) in view-timer.c,
 * .status in view-status.c, .config in view-config.c, .unhide in
 * view-hidden.c, the records kept in memory per view (struct live) in
 * view-live.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fs/log.h"
#include "fs/trim.h"
#include "fs/views-private.h"
#include "net/net.h"
#include "query/query.h"

/* a waiting listing looks at the stop flag this often (nanoseconds) */

int views_global_init(void)
{
	return net_global_init();
}

void views_global_cleanup(void)
{
	net_global_cleanup();
}

int views_source_check(const char *spec, char *why, size_t whylen)
{
	struct net_source s;
	struct stat st;

	if (net_source_parse(spec, &s)) {
		snprintf(why, whylen, "source %s: not an http:// or https:// URL or an absolute path",
			 spec);
		return EINVAL;
	}
	if (s.kind == NET_SOURCE_ARCHIVE && stat(s.path, &st) &&
	    (errno == ENOENT || errno == ENOTDIR)) {
		int err = errno;

		snprintf(why, whylen, "source %s: %s", s.path, strerror(err));
		return err;
	}
	return 0;
}

int views_open(const struct views_opts *o, views_t **out, char *why, size_t whylen)
{
	views_t *v = calloc(1, sizeof(*v));
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (!v)
		return ENOMEM;
	v->o = *o;
	{
		struct settings d = {
			.threads = o->threads, .dedupe = o->dedupe, .limit = o->limit,
			.own_flags = o->own_flags,
			.refresh = o->refresh, .sources = o->sources, .nsources = o->nsources,
			.imaps = o->imaps, .nimaps = o->nimaps,
		};

		if ((err = settings_copy(&d, &v->def))) {
			free(v);
			return err;
		}
		/* a subsystem's mail is its patches with their replies */
		if (d.threads == THREADS_OFF)
			d.threads = THREADS_ON;
		if ((err = settings_copy(&d, &v->def_subsys))) {
			settings_free(&v->def);
			free(v);
			return err;
		}
	}
	if ((err = view_subsys_open(v)) ||
	    (err = cache_open(o->cache_dir, o->map_size, &v->cache, why, whylen))) {
		view_subsys_close(v);
		settings_free(&v->def);
		settings_free(&v->def_subsys);
		free(v);
		return err;
	}
	{
		/* the empty repository git reads dates of local queries in */
		char dates[4096];

		snprintf(dates, sizeof(dates), "%s/dates.git", o->cache_dir);
		if (net_git_dir_init(dates))
			log_err("cannot make %s: dates of local queries will fail", dates);
	}
	v->queue_end = &v->queue;
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->apply, NULL);
	pthread_mutex_init(&v->local_open, NULL);
	pthread_mutex_init(&v->series, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->done, &ca);
	pthread_cond_init(&v->refreshed, &ca);
	pthread_cond_init(&v->wake, &ca);
	pthread_cond_init(&v->fetch_wake, &ca);
	pthread_condattr_destroy(&ca);
	/* not fatal: the cache stays pending, to be filled at the next mount */
	if ((err = view_kw_migrate(v)))
		log_err("cannot share the flags of the views of this cache yet: %s%s",
			strerror(err), err == ENOSPC ? " (mount once with a larger -o map_size)" : "");
	*out = v;
	return 0;
}

void views_stop(views_t *v)
{
	if (v)
		atomic_store(&v->stop, 1);      /* lock-free: signal-safe */
}

void views_close(views_t *v)
{
	struct live *l, *next;

	if (!v)
		return;
	atomic_store(&v->stop, 1);
	pthread_mutex_lock(&v->lock);
	pthread_cond_broadcast(&v->wake);       /* the timer, staged .config */
	pthread_cond_broadcast(&v->refreshed);  /* waiting listings */
	pthread_mutex_unlock(&v->lock);
	if (v->timer_running)
		pthread_join(v->timer, NULL);
	view_series_fetch_close(v);
	pthread_mutex_lock(&v->lock);
	while (v->workers || v->appliers)
		pthread_cond_wait(&v->refreshed, &v->lock);
	while (v->queue) {              /* never run: unmounted first */
		l = v->queue;
		v->queue = l->qnext;
		l->refreshing = l->queued = 0;
		live_put(l);
	}
	v->queue_end = &v->queue;
	pthread_mutex_unlock(&v->lock);
	for (l = v->live; l; l = next) {      /* no thread holds one now */
		next = l->next;
		live_free(l);
	}
	while (v->backoffs) {
		struct backoff *b = v->backoffs;

		v->backoffs = b->next;
		free(b->url);
		free(b);
	}
	view_local_close(v);
	view_subsys_close(v);
	settings_free(&v->def);
	settings_free(&v->def_subsys);
	cache_close(v->cache);
	pthread_mutex_destroy(&v->lock);
	pthread_mutex_destroy(&v->apply);
	pthread_mutex_destroy(&v->local_open);
	pthread_mutex_destroy(&v->series);
	pthread_cond_destroy(&v->done);
	pthread_cond_destroy(&v->refreshed);
	pthread_cond_destroy(&v->wake);
	pthread_cond_destroy(&v->fetch_wake);
	free(v);
}

/* query_validate, then what Xapian's QueryParser would refuse (a bad
 * range); the reason in why */
static int check_query(const char *q, char *why, size_t whylen)
{
	const char *reason = NULL;
	char xwhy[200];
	int err;

	if ((err = query_validate(q, &reason))) {
		snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		return err;
	}
	if ((err = query_syntax_check(q, xwhy, sizeof(xwhy))))
		snprintf(why, whylen, "the query does not parse: %s",
			 xwhy[0] ? xwhy : strerror(err));
	return err;
}

int views_create(views_t *v, const char *name, char *why, size_t whylen)
{
	const char *reason = NULL;
	char *query = NULL;
	int err;

	why[0] = '\0';
	if (name[0] == '.')
		reason = "names starting with '.' are reserved";
	if (reason)
		err = EINVAL;
	else if (!(err = query_name_decode(name, &query, &reason)) &&
		 (err = check_query(query, why, whylen)))
		reason = why;
	if (err) {
		char shown[201];
		size_t i;

		/* the name may hold anything but '/' and NUL: show it safely */
		for (i = 0; name[i] && i < sizeof(shown) - 1; i++)
			shown[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
		shown[i] = '\0';
		if (reason != why)
			snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		views_refused(v, "mkdir refused: %s: %s", shown, why);
		free(query);
		return err;
	}
	err = cache_view_create(v->cache, name, query, NULL);
	if (err && err != EEXIST) {
		snprintf(why, whylen, "cannot store view: %s", strerror(err));
		log_err("mkdir %s: %s", name, why);
	}
	free(query);
	return err;
}

int views_remove(views_t *v, const char *name)
{
	struct cache_view cv;
	struct live *l, **p;
	int err;

	/* gone from the cache first, so that no caller finds the view and
	 * makes its live state anew; then its search stops at the next
	 * message and writes nothing more (cache batches check the view at
	 * each flush); its live state goes with the last thread holding it */
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if ((err = cache_view_delete(v->cache, name))) {
		cache_view_release(&cv);
		return err;
	}
	pthread_mutex_lock(&v->lock);
	for (p = &v->live; (l = *p); ) {
		if (l->id != cv.id) {
			p = &l->next;
			continue;
		}
		*p = l->next;
		atomic_store(&l->cancel, 1);
		free(l->pending);       /* a .config still to apply */
		l->pending = NULL;
		free(l->before);
		l->before = NULL;
		live_put(l);
	}
	pthread_mutex_unlock(&v->lock);
	cache_view_release(&cv);
	return 0;
}

void views_mkdir_in_view(views_t *v, const char *view, const char *name)
{
	char *enc = NULL, *whole = NULL;

	if (views_thread_name(view) || views_subsys_name(view))
		return;
	if (asprintf(&whole, "%s/%s", view, name) >= 0 && !query_name_encode(whole, &enc))
		views_refused(v, "mkdir refused: %s/%s: a view holds no views; write each '/' of "
			      "a query as %%2F (mkdir 'queries/%s...'), then rmdir 'queries/%s'",
			      view, name, enc, view);
	free(enc);
	free(whole);
}

int views_rename(views_t *v, const char *from, const char *to)
{
	struct cache_view cv;
	struct live *l;
	char *copy = NULL, **olds;
	size_t i;
	int err;

	/* a name, not a query: anything a directory name may be but leifs's
	 * own dot names and control characters */
	for (i = 0; to[i]; i++)
		if ((unsigned char)to[i] < 0x20 || to[i] == 0x7f)
			break;
	if (to[0] == '.' || to[i]) {
		/* EPERM: mv reads EINVAL as "a subdirectory of itself" */
		views_refused(v, "rename refused: %s: a view's name may not start with '.' nor hold "
			      "a control character", from);
		return EPERM;
	}
	if (views_thread_name(from) || views_thread_name(to) || views_subsys_name(from) ||
	    views_subsys_name(to))
		return EPERM;   /* named by their Message-ID, their title */
	if ((err = cache_view_get(v->cache, from, &cv)))
		return err;
	if ((err = cache_view_rename(v->cache, from, cv.id, to)))
		goto out;
	/* its live state takes the new name; the old stays allocated (a
	 * search running reads it unlocked) and is freed with it.  A search
	 * running records under the old name and fails to: one more runs */
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next) {
		if (l->id != cv.id)
			continue;
		if (!(copy = strdup(to)) ||
		    !(olds = realloc(l->old_names, (l->nold + 1) * sizeof(*olds)))) {
			free(copy);
			break;  /* the old name stays; the record is right */
		}
		l->old_names = olds;
		l->old_names[l->nold++] = l->name;
		l->name = copy;
		if (l->refreshing)
			l->again = 1;
	}
	pthread_mutex_unlock(&v->lock);
out:
	cache_view_release(&cv);
	return err;
}

int views_get(views_t *v, const char *name, struct cache_view *out)
{
	return cache_view_get(v->cache, name, out);
}

/* A worker: refreshes queued views, in order, until none is left.  At
 * most max_refreshes run at once (refresh_all over many views queues
 * them), so threads and connections are bounded by a setting. */
static void *refresh_worker(void *arg)
{
	views_t *v = arg;

	pthread_mutex_lock(&v->lock);
	while (v->queue && !atomic_load(&v->stop)) {
		struct live *l = v->queue;

		if (!(v->queue = l->qnext))
			v->queue_end = &v->queue;
		l->qnext = NULL;
		l->queued = 0;
		atomic_store(&l->progress, 0);
		do {
			l->again = 0;
			l->begun++;
			pthread_mutex_unlock(&v->lock);
			view_search(v, l);
			pthread_mutex_lock(&v->lock);
			l->done++;
			pthread_cond_broadcast(&v->refreshed);
		} while (l->again && !atomic_load(&v->stop));
		l->refreshing = 0;
		live_put(l);
		pthread_cond_broadcast(&v->refreshed);
	}
	v->workers--;
	pthread_cond_broadcast(&v->refreshed);
	pthread_mutex_unlock(&v->lock);
	/* a search may have held a big message: give the memory back */
	give_back_memory();
	return NULL;
}

/* lock held */
int start_refresh(views_t *v, struct live *l, int forced)
{
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (l->refreshing) {
		l->again |= forced && !l->queued;
		return 0;
	}
	if (atomic_load(&v->stop))
		return ESHUTDOWN;
	l->refs++;              /* the queue's, then the worker's */
	l->refreshing = 1;
	l->queued = 1;
	atomic_store(&l->progress, 0);
	*v->queue_end = l;
	v->queue_end = &l->qnext;
	if (v->workers >= v->o.max_refreshes)
		return 0;       /* a worker takes it when it is done */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, refresh_worker, v);
	pthread_attr_destroy(&attr);
	if (err && !v->workers) {
		/* no worker at all to take it: unqueue it (it is the last) */
		struct live **p = &v->queue;

		while (*p != l)
			p = &(*p)->qnext;
		*p = NULL;
		v->queue_end = p;
		l->refreshing = l->queued = 0;
		l->refs--;
		return err;
	}
	if (!err)
		v->workers++;
	return 0;
}

void views_wake(views_t *v)
{
	pthread_mutex_lock(&v->lock);
	pthread_cond_broadcast(&v->refreshed);
	pthread_cond_broadcast(&v->wake);
	pthread_mutex_unlock(&v->lock);
}

/* the view's refresh interval: its own, else the mount's */
long view_every(views_t *v, const struct cache_view *cv)
{
	struct settings set;
	long every = v->o.refresh;

	if (!view_settings(v, cv, &set)) {
		every = set.refresh;
		settings_free(&set);
	}
	return every;
}

/* lock held: whether a search that ended at l->ended (else at the cache's
 * last_try) is at least `every` seconds old; the interval is a minimum */
int view_aged(const struct live *l, const struct cache_view *cv, long every)
{
	/* a search of this process: counted on the boot clock, which goes on
	 * through a suspend and is never set back (whole seconds of last_try
	 * would let a search ended at 11.99 run again at 12.00 with refresh=1).
	 * Checked before last_try, which the caller may have read before the
	 * search it waited on recorded it. */
	if (l->ended.tv_sec || l->ended.tv_nsec) {
		struct timespec now;

		clock_gettime(CLOCK_BOOTTIME, &now);
		return (long long)(now.tv_sec - l->ended.tv_sec) -
		       (now.tv_nsec < l->ended.tv_nsec) >= every;
	}
	if (cv->last_try == 0)
		return 1;
	/* ended before this mount: a whole second more, never less */
	return time(NULL) - cv->last_try > every;
}

/* lock held: whether the view is due for a refresh by the policy */
int view_due(views_t *v, const struct live *l, const struct cache_view *cv, long every)
{
	/* a view holding mail after an empty answer asks again soon */
	if (l->held && v->o.empty_confirm < every)
		every = v->o.empty_confirm;
	return every <= 0 || view_aged(l, cv, every);
}

int views_listing(views_t *v, const char *name, atomic_int *interrupted, int *filling,
		  int may_start)
{
	struct cache_view cv;
	struct live *l;
	struct timespec deadline;
	int err;
	long every;

	if (filling)
		*filling = 0;
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if (!may_start && cv.last_try == 0) {
		/* not its first search: that waits for cur/ or new/ */
		cache_view_release(&cv);
		return 0;
	}
	every = view_every(v, &cv);     /* the view's own interval, if it has one */
	pthread_mutex_lock(&v->lock);
	l = live_get(v, cv.id, name);
	if (!l) {
		err = ENOMEM;
		goto out;
	}
	if (view_due(v, l, &cv, every) && (err = start_refresh(v, l, 0))) {
		/* the listing still answers from the cache */
		if (err != ESHUTDOWN)
			log_err("cannot start a refresh of %s: %s", name, strerror(err));
		err = 0;
		goto out;
	}
	if (cv.last_try != 0)
		goto out;
	/* the first fill: wait for it, but never past first_wait (nor the
	 * timeout); an interrupt ends the wait (the fill goes on); wake often
	 * enough to see a stop (views_stop cannot signal from a signal
	 * handler) */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	l->refs++;      /* an rmdir meanwhile leaves l to this reference */
	deadline.tv_sec += v->o.first_wait < v->o.timeout ? v->o.first_wait : v->o.timeout;
	while (l->refreshing && !atomic_load(&v->stop)) {
		struct timespec slice;

		if (interrupted && atomic_load(interrupted)) {
			err = EINTR;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &slice);
		if (slice.tv_sec > deadline.tv_sec ||
		    (slice.tv_sec == deadline.tv_sec && slice.tv_nsec >= deadline.tv_nsec))
			break;
		slice.tv_nsec += WAIT_SLICE_NS;
		if (slice.tv_nsec >= 1000000000L) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&v->refreshed, &v->lock, &slice);
	}
	if (filling)
		*filling = l->refreshing;
	live_put(l);
out:
	pthread_mutex_unlock(&v->lock);
	cache_view_release(&cv);
	return err;
}

int views_refresh(views_t *v, const char *name, int full)
{
	struct cache_view cv;
	struct live *l;
	int err;

	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if (full && ((err = cache_view_reset(v->cache, name, cv.id)) ||
		     (err = cache_marks_clear(v->cache, cv.id)))) {
		cache_view_release(&cv);
		return err;
	}
	pthread_mutex_lock(&v->lock);
	l = live_get(v, cv.id, name);
	err = l ? start_refresh(v, l, 1) : ENOMEM;
	pthread_mutex_unlock(&v->lock);
	cache_view_release(&cv);
	return err;
}

static int collect_name(void *arg, const struct cache_view *cv)
{
	struct names *ns = arg;

	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 64;
		char **t = realloc(ns->name, cap * sizeof(*t));

		if (!t)
			return ENOMEM;
		ns->name = t;
		ns->cap = cap;
	}
	if (!(ns->name[ns->n] = strdup(cv->name)))
		return ENOMEM;
	ns->n++;
	return 0;
}

int views_names(views_t *v, struct names *ns)
{
	memset(ns, 0, sizeof(*ns));
	return cache_view_each(v->cache, collect_name, ns);
}

void names_free(struct names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->name[i]);
	free(ns->name);
	memset(ns, 0, sizeof(*ns));
}

int views_refresh_all(views_t *v, int full)
{
	struct names ns = { 0 };
	size_t i;
	int err, e;

	/* names first: a full refresh writes to the cache, which is not done
	 * inside the read transaction of cache_view_each */
	err = cache_view_each(v->cache, collect_name, &ns);
	for (i = 0; i < ns.n; i++) {
		/* a view removed meanwhile is no error */
		if (!err && (e = views_refresh(v, ns.name[i], full)) && e != ENOENT)
			err = e;
		free(ns.name[i]);
	}
	free(ns.name);
	return err;
}

int views_query_ok(const char *text)
{
	char why[256];
	char *q = strdup(text);
	size_t i;
	int err;

	if (!q)
		return ENOMEM;
	for (i = 0; q[i]; i++)          /* as views_set_query reads it */
		if (q[i] == '\n' || q[i] == '\r' || q[i] == '\t')
			q[i] = ' ';
	err = check_query(q, why, sizeof(why));
	free(q);
	return err;
}


static void refusal_add(views_t *v, const char *fmt, va_list ap)
{
	struct refusal *r = &v->refusals[v->refusal_next];

	r->when = (int64_t)time(NULL);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	v->refusal_next = (v->refusal_next + 1) % REFUSALS_KEPT;
}

void views_refused_locked(views_t *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	refusal_add(v, fmt, ap);
	va_end(ap);
}

void views_refused(views_t *v, const char *fmt, ...)
{
	struct refusal *r;
	va_list ap;

	pthread_mutex_lock(&v->lock);
	va_start(ap, fmt);
	refusal_add(v, fmt, ap);
	va_end(ap);
	r = &v->refusals[(v->refusal_next + REFUSALS_KEPT - 1) % REFUSALS_KEPT];
	log_err("%s", r->text);
	pthread_mutex_unlock(&v->lock);
}

/*
 * Say why a .query written to view `name` was refused (why), or forget a
 * .query refusal (NULL, after one is taken): in the view's .status
 * ("refused: .query: ...") and in queries/.status, as for .config and
 * mkdir, so that the reason is where the user looks, not only in the log.
 */
static void query_refusal(views_t *v, const char *name, const char *why)
{
	struct cache_view cv;
	struct live *l;

	if (cache_view_get(v->cache, name, &cv))
		return;
	pthread_mutex_lock(&v->lock);
	if ((l = live_get(v, cv.id, name))) {
		if (why || (l->refusal && !strncmp(l->refusal, ".query: ", 8))) {
			free(l->refusal);
			l->refusal = NULL;
		}
		if (why && asprintf(&l->refusal, ".query: %s", why) < 0)
			l->refusal = NULL;
	}
	if (why)
		views_refused_locked(v, "new query for %s refused: %s", name, why);
	pthread_mutex_unlock(&v->lock);
	cache_view_release(&cv);
}

int views_set_query(views_t *v, const char *name, const char *text,
		    char *why, size_t whylen)
{
	struct cache_view cv;
	char *q = NULL;
	size_t n = strlen(text), i;
	int err;

	why[0] = '\0';
	if (views_thread_name(name)) {
		/* its query is its name's: another thread is another view */
		snprintf(why, whylen, "a thread view's query is its Message-ID "
			 "(make another view with mkdir MOUNT/threads/ID)");
		query_refusal(v, name, why);
		return EPERM;
	}
	if (views_subsys_name(name)) {
		snprintf(why, whylen, "a subsystem view's query is derived from MAINTAINERS "
			 "(edit the file, or set .config; a query of your own goes in queries/)");
		query_refusal(v, name, why);
		return EPERM;
	}
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	if (!(q = strndup(text, n)))
		return ENOMEM;
	for (i = 0; i < n; i++)         /* several lines make one query */
		if (q[i] == '\n' || q[i] == '\r' || q[i] == '\t')
			q[i] = ' ';
	if ((err = check_query(q, why, whylen))) {
		log_err("new query for %s refused: %s", name, why);
		query_refusal(v, name, why);
		free(q);
		return err;
	}
	if (!(err = cache_view_get(v->cache, name, &cv))) {
		err = cache_view_set_query(v->cache, name, cv.id, q);
		cache_view_release(&cv);
	}
	if (!err)
		query_refusal(v, name, NULL);
	free(q);
	return err ? err : views_refresh(v, name, 1);
}

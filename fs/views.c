/*
 * Views: refresh policy and the refresh itself (query -> net -> cache).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/log.h"
#include "fs/views.h"
#include "net/net.h"
#include "query/query.h"

/* what is known of a view while the daemon runs; protected by views.lock */
struct live {
	struct live *next;
	uint64_t id;
	int refreshing;
	atomic_ulong progress;  /* messages received by the running refresh */
	char *name;
};

struct views {
	struct views_opts o;
	cache_t *cache;
	pthread_mutex_t lock;
	pthread_cond_t done;    /* a refresh ended */
	struct live *live;      /* protected by lock */
	int running;            /* refresh threads; protected by lock */
	atomic_int stop;
	char last_refusal[512]; /* protected by lock */
};

struct job {
	views_t *v;
	struct live *l;
};

cache_t *views_cache(views_t *v)
{
	return v->cache;
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
	if ((err = cache_open(o->cache_dir, o->map_size, &v->cache, why, whylen))) {
		free(v);
		return err;
	}
	pthread_mutex_init(&v->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->done, &ca);
	pthread_condattr_destroy(&ca);
	*out = v;
	return 0;
}

void views_close(views_t *v)
{
	struct live *l, *next;

	if (!v)
		return;
	atomic_store(&v->stop, 1);
	pthread_mutex_lock(&v->lock);
	while (v->running)
		pthread_cond_wait(&v->done, &v->lock);
	pthread_mutex_unlock(&v->lock);
	for (l = v->live; l; l = next) {
		next = l->next;
		free(l->name);
		free(l);
	}
	cache_close(v->cache);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->done);
	free(v);
}

/* the live state of view id; lock held */
static struct live *live_get(views_t *v, uint64_t id, const char *name)
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
	l->next = v->live;
	v->live = l;
	return l;
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
	else if (!(err = query_name_decode(name, &query, &reason)))
		err = query_validate(query, &reason);
	if (err) {
		char shown[201];
		size_t i;

		/* the name may hold anything but '/' and NUL: show it safely */
		for (i = 0; name[i] && i < sizeof(shown) - 1; i++)
			shown[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
		shown[i] = '\0';
		snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		pthread_mutex_lock(&v->lock);
		snprintf(v->last_refusal, sizeof(v->last_refusal),
			 "mkdir refused: %s: %s", shown, why);
		pthread_mutex_unlock(&v->lock);
		log_err("mkdir refused: %s: %s", shown, why);
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
	return cache_view_delete(v->cache, name);
}

int views_get(views_t *v, const char *name, struct cache_view *out)
{
	return cache_view_get(v->cache, name, out);
}

struct sink {
	cache_batch_t *batch;
	struct live *l;
};

static int on_message(void *arg, const char *raw, size_t len)
{
	struct sink *s = arg;

	atomic_fetch_add(&s->l->progress, 1);
	return cache_batch_add(s->batch, raw, len);
}

/* one search of every source; records the outcome in the cache */
static void refresh(views_t *v, struct live *l)
{
	struct cache_view cv;
	char *norm = NULL, *q = NULL, err_text[600] = "";
	cache_batch_t *batch = NULL;
	uint64_t count = 0, received = 0;
	time_t start = time(NULL);
	int i, err, failed = 0;

	if ((err = cache_view_get(v->cache, l->name, &cv)))
		return;         /* removed meanwhile */
	if (cv.id != l->id)
		goto out;
	if ((err = cache_entry_count(v->cache, cv.id, &count)) ||
	    (err = query_normalize(cv.query, &norm)) ||
	    (err = query_incremental(norm, cv.last_ok > 0 ? cv.last_ok - v->o.margin : 0, &q)) ||
	    (err = cache_batch_new(v->cache, cv.id, count == 0, &batch))) {
		snprintf(err_text, sizeof(err_text), "%s", strerror(err));
		failed = 1;
		goto record;
	}
	for (i = 0; i < v->o.nsources; i++) {
		struct net_req req = {
			.url = v->o.sources[i], .query = q, .timeout = v->o.timeout,
			.max_message = v->o.max_message, .cafile = v->o.cafile,
			.insecure = v->o.insecure, .stop = &v->stop,
		};
		struct net_res res;
		struct sink s = { batch, l };

		log_debug("search %s q=%s", req.url, q);
		err = net_search(&req, on_message, &s, &res);
		received += res.messages;
		if (!err)
			err = cache_batch_flush(batch);
		else
			cache_batch_flush(batch);   /* keep whole messages that came */
		if (err) {
			size_t n = strlen(err_text);

			snprintf(err_text + n, sizeof(err_text) - n, "%s%s: %s",
				 n ? "; " : "", req.url,
				 res.error[0] ? res.error : strerror(err));
			failed = 1;
		}
	}
record:
	if (failed)
		log_err("refresh of %s failed: %s", l->name, err_text);
	/* as lei: move the bookmark only after a search that succeeded and
	 * found something (an empty answer may be a server-side hiccup) */
	cache_view_set_result(v->cache, l->name, l->id,
			      failed ? CACHE_VIEW_FAILED : CACHE_VIEW_FRESH,
			      !failed && received ? (int64_t)start : -1,
			      (int64_t)time(NULL), err_text);
out:
	cache_batch_free(batch);
	free(norm);
	free(q);
	cache_view_release(&cv);
}

static void *refresh_thread(void *arg)
{
	struct job *j = arg;
	views_t *v = j->v;

	refresh(v, j->l);
	pthread_mutex_lock(&v->lock);
	j->l->refreshing = 0;
	v->running--;
	pthread_cond_broadcast(&v->done);
	pthread_mutex_unlock(&v->lock);
	free(j);
	return NULL;
}

/* lock held */
static int start_refresh(views_t *v, struct live *l)
{
	pthread_attr_t attr;
	pthread_t t;
	struct job *j;
	int err;

	if (l->refreshing)
		return 0;
	if (atomic_load(&v->stop))
		return ESHUTDOWN;
	j = malloc(sizeof(*j));
	if (!j)
		return ENOMEM;
	j->v = v;
	j->l = l;
	l->refreshing = 1;
	atomic_store(&l->progress, 0);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, refresh_thread, j);
	pthread_attr_destroy(&attr);
	if (err) {
		l->refreshing = 0;
		free(j);
		return err;
	}
	v->running++;
	return 0;
}

int views_listing(views_t *v, const char *name)
{
	struct cache_view cv;
	struct live *l;
	struct timespec deadline;
	time_t now = time(NULL);
	int err;

	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	pthread_mutex_lock(&v->lock);
	l = live_get(v, cv.id, name);
	if (!l) {
		err = ENOMEM;
		goto out;
	}
	if (cv.last_try == 0 || now - cv.last_try >= v->o.refresh)
		err = start_refresh(v, l);
	if (err || cv.last_try != 0)
		goto out;
	/* the first fill: wait for it, but never past the timeout */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += v->o.timeout;
	while (l->refreshing &&
	       pthread_cond_timedwait(&v->done, &v->lock, &deadline) != ETIMEDOUT)
		;
out:
	pthread_mutex_unlock(&v->lock);
	cache_view_release(&cv);
	return err;
}

static const char *state_name(int state)
{
	switch (state) {
	case CACHE_VIEW_FRESH:
		return "fresh";
	case CACHE_VIEW_FAILED:
		return "failed";
	default:
		return "new";
	}
}

static void fmt_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !gmtime_r(&tt, &tm))
		snprintf(buf, len, "never");
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int views_status(views_t *v, const char *name, char **out)
{
	struct cache_view cv;
	struct live *l;
	uint64_t count = 0;
	char last[64], ok[64];
	int refreshing = 0, i, err;
	unsigned long progress = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if ((err = cache_entry_count(v->cache, cv.id, &count))) {
		cache_view_release(&cv);
		return err;
	}
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next)
		if (l->id == cv.id && l->refreshing) {
			refreshing = 1;
			progress = atomic_load(&l->progress);
		}
	pthread_mutex_unlock(&v->lock);
	fmt_time(cv.last_try, last, sizeof(last));
	fmt_time(cv.last_ok, ok, sizeof(ok));
	f = open_memstream(&buf, &len);
	if (!f) {
		cache_view_release(&cv);
		return ENOMEM;
	}
	fprintf(f, "query: %s\n", cv.query);
	fprintf(f, "state: %s\n", refreshing ? "refreshing" : state_name(cv.state));
	fprintf(f, "messages: %llu\n", (unsigned long long)count);
	fprintf(f, "last-refresh: %s\n", last);
	fprintf(f, "last-result: %s\n", ok);
	if (refreshing)
		fprintf(f, "progress: %lu received\n", progress);
	for (i = 0; i < v->o.nsources; i++)
		fprintf(f, "source: %s\n", v->o.sources[i]);
	fprintf(f, "error: %s\n", cv.error);
	fclose(f);
	cache_view_release(&cv);
	*out = buf;
	return buf ? 0 : ENOMEM;
}

int views_errors(views_t *v, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	int i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return ENOMEM;
	for (i = 0; i < v->o.nsources; i++)
		fprintf(f, "source: %s\n", v->o.sources[i]);
	pthread_mutex_lock(&v->lock);
	fprintf(f, "error: %s\n", v->last_refusal);
	pthread_mutex_unlock(&v->lock);
	fclose(f);
	*out = buf;
	return buf ? 0 : ENOMEM;
}

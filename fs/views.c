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
#include "fs/settings.h"
#include "fs/views.h"
#include "net/net.h"
#include "query/query.h"

/* how the last search of one source went */
struct src_state {
	char *url;
	int failed;
	uint64_t msgs, bytes;
	char error[300];
};

/* what is known of a view while the daemon runs; protected by views.lock */
struct live {
	struct live *next;
	uint64_t id;
	int refreshing;
	int again;              /* a refresh was asked for while one ran */
	atomic_ulong progress;  /* messages received by the running refresh */
	char *name;
	char *last_query;       /* the query text last sent */
	uint64_t last_msgs, last_bytes;  /* what the last search fetched */
	struct src_state *src;  /* per source, of the last search */
	int nsrc;
	char *refusal;          /* why the last .config written was refused */
	char *pending;          /* a .config written, applied when writes pause */
	uint64_t pending_gen;
};

static void free_src(struct src_state *src, int n)
{
	int i;

	for (i = 0; src && i < n; i++)
		free(src[i].url);
	free(src);
}

struct views {
	struct views_opts o;
	struct settings def;    /* what a view without .config gets */
	cache_t *cache;
	pthread_mutex_t lock;
	pthread_cond_t done;    /* a refresh ended */
	struct live *live;      /* protected by lock */
	int running;            /* refresh threads; protected by lock */
	atomic_int stop;
	char last_refusal[512]; /* protected by lock */
	pthread_t timer;        /* refresh_all schedule */
	int timer_running;
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
	{
		struct settings d = {
			.threads = o->threads, .dedupe = o->dedupe, .limit = o->limit,
			.refresh = o->refresh, .sources = o->sources, .nsources = o->nsources,
		};

		if ((err = settings_copy(&d, &v->def))) {
			free(v);
			return err;
		}
	}
	if ((err = cache_open(o->cache_dir, o->map_size, &v->cache, why, whylen))) {
		settings_free(&v->def);
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
	pthread_cond_broadcast(&v->done);       /* wakes the timer */
	pthread_mutex_unlock(&v->lock);
	if (v->timer_running)
		pthread_join(v->timer, NULL);
	pthread_mutex_lock(&v->lock);
	while (v->running)
		pthread_cond_wait(&v->done, &v->lock);
	pthread_mutex_unlock(&v->lock);
	for (l = v->live; l; l = next) {
		next = l->next;
		free(l->name);
		free(l->last_query);
		free_src(l->src, l->nsrc);
		free(l->refusal);
		free(l->pending);
		free(l);
	}
	settings_free(&v->def);
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

/* append a copy of *st to src[n]; NULL (src freed) when memory runs out */
static struct src_state *strdup_src(struct src_state *src, int *n, const struct src_state *st)
{
	struct src_state *v = realloc(src, (size_t)(*n + 1) * sizeof(*v));

	if (!v || !(v[*n].url = strdup(st->url))) {
		free_src(v ? v : src, *n);
		*n = 0;
		return NULL;
	}
	memcpy(v[*n].error, st->error, sizeof(st->error));
	v[*n].failed = st->failed;
	v[*n].msgs = st->msgs;
	v[*n].bytes = st->bytes;
	(*n)++;
	return v;
}

/* a view's settings: its .config over the defaults */
static int view_settings(views_t *v, uint64_t id, struct settings *s)
{
	char *text = NULL, why[256];
	size_t len = 0;
	int err = cache_file_read(v->cache, id, ".config", &text, &len);

	if (err == ENOENT)
		return settings_copy(&v->def, s);
	if (err)
		return err;
	err = settings_parse(&v->def, text, len, s, why, sizeof(why));
	free(text);
	if (err == EINVAL) {    /* checked when written: only a damaged record */
		log_err("view %llu: stored .config does not parse (%s): defaults used",
			(unsigned long long)id, why);
		err = settings_copy(&v->def, s);
	}
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

/* a URL as shown in .status and logs: any user:password@ is masked */
static void url_shown(const char *url, char *buf, size_t len)
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

static void print_url(FILE *f, const char *url)
{
	char buf[1024];

	url_shown(url, buf, sizeof(buf));
	fputs(buf, f);
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

/* one source's part of a refresh, in a thread of its own when there are
 * several: its own query bound, batch and outcome */
struct run {
	views_t *v;
	struct live *l;
	const char *url;
	char *q;
	int threads;
	cache_batch_t *batch;
	struct net_res res;
	int err;
};

static void *run_source(void *arg)
{
	struct run *r = arg;
	struct net_req req = {
		.url = r->url, .query = r->q, .threads = r->threads,
		.timeout = r->v->o.timeout, .max_message = r->v->o.max_message,
		.cafile = r->v->o.cafile, .insecure = r->v->o.insecure,
		.proxy = r->v->o.proxy, .stop = &r->v->stop,
	};
	struct sink s = { r->batch, r->l };
	char shown[512];

	url_shown(r->url, shown, sizeof(shown));
	log_debug("search %s q=%s", shown, r->q);
	memset(&r->res, 0, sizeof(r->res));
	r->err = net_search(&req, on_message, &s, &r->res);
	if (!r->err)
		r->err = cache_batch_flush(r->batch);
	else
		cache_batch_flush(r->batch);    /* keep whole messages that came */
	return NULL;
}

static void run_reason(const struct run *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->err == ENOSPC ? "the cache is full (raise -o map_size)" :
		 r->res.error[0] ? r->res.error : strerror(r->err));
}

/* one search of every source of the view, in parallel; records the outcome */
static void refresh(views_t *v, struct live *l)
{
	struct cache_view cv;
	struct settings set = { 0 };
	struct run *runs = NULL;
	struct src_state *src = NULL;
	pthread_t *tids = NULL;
	char *norm = NULL, err_text[600] = "";
	uint64_t received = 0, dropped = 0, bytes = 0;
	time_t start = time(NULL);
	int i, err, failed = 0, full, any = 0, n = 0;
	uint32_t gen;

	if ((err = cache_view_get(v->cache, l->name, &cv)))
		return;         /* removed meanwhile */
	if (cv.id != l->id)
		goto out;
	/* no bookmark: a full search, after which what it did not find goes */
	full = cv.last_ok <= 0;
	/* a full search marks what it sees with a new generation; what an
	 * incremental one adds belongs to the current one, so the next full
	 * search can still drop it */
	gen = full ? cv.gen + 1 : cv.gen;
	if ((err = view_settings(v, cv.id, &set)) ||
	    (err = cache_entry_any(v->cache, cv.id, &any)) ||
	    (err = query_normalize(cv.query, &norm)))
		goto broken;
	n = set.nsources;
	runs = calloc((size_t)n + 1, sizeof(*runs));
	tids = calloc((size_t)n + 1, sizeof(*tids));
	src = calloc((size_t)n + 1, sizeof(*src));
	if (!runs || !tids || !src) {
		err = ENOMEM;
		goto broken;
	}
	for (i = 0; i < n; i++) {
		struct run *r = &runs[i];
		int64_t mark = 0;

		r->v = v;
		r->l = l;
		r->url = set.sources[i];
		/* lei remote threads: t=1; flag-hits flags nothing remote
		 * (LeiXSearch flags hits of local externals only) */
		r->threads = set.threads != THREADS_OFF;
		/* each source from its own bookmark (the view's if it has none) */
		if (!full && (cache_mark_get(v->cache, cv.id, r->url, &mark) || mark <= 0))
			mark = cv.last_ok;
		/* as lei: the first fill goes to cur/, what later searches add to new/ */
		if ((err = query_incremental(norm, full ? 0 : mark - v->o.margin, &r->q)) ||
		    (err = cache_batch_new(v->cache, cv.id, !any, gen, full, set.dedupe,
					   &r->batch)))
			goto broken;
	}
	pthread_mutex_lock(&v->lock);
	free(l->last_query);
	l->last_query = n ? strdup(runs[0].q) : NULL;
	pthread_mutex_unlock(&v->lock);
	for (i = 1; i < n; i++)
		if (pthread_create(&tids[i], NULL, run_source, &runs[i]))
			run_source(&runs[i]), tids[i] = 0;
	if (n)
		run_source(&runs[0]);
	for (i = 1; i < n; i++)
		if (tids[i])
			pthread_join(tids[i], NULL);
	for (i = 0; i < n; i++) {
		struct run *r = &runs[i];

		received += r->res.messages;
		bytes += r->res.bytes;
		src[i].url = strdup(r->url);
		src[i].msgs = r->res.messages;
		src[i].bytes = r->res.bytes;
		if (r->err) {
			size_t len = strlen(err_text), room = sizeof(err_text) - 1 - len;
			char shown[256], piece[600];
			int m;

			src[i].failed = 1;
			run_reason(r, src[i].error, sizeof(src[i].error));
			/* one "URL: reason" per failed source, "; " between */
			url_shown(r->url, shown, sizeof(shown));
			m = snprintf(piece, sizeof(piece), "%s%s: %s", len ? "; " : "", shown,
				     src[i].error);
			if (m > 0) {
				size_t k = (size_t)m < room ? (size_t)m : room;

				memcpy(err_text + len, piece, k);
				err_text[len + k] = '\0';
			}
			failed = 1;
		} else if (r->res.messages) {
			/* as lei: a source's bookmark moves when it found something */
			cache_mark_set(v->cache, l->name, cv.id, cv.epoch, r->url, (int64_t)start);
		}
	}
	if (!failed && full &&
	    (err = cache_view_sweep(v->cache, l->name, l->id, gen, cv.epoch, &dropped))) {
		snprintf(err_text, sizeof(err_text), "cannot drop old results: %s",
			 strerror(err));
		failed = 1;
	}
	if (set.limit > 0) {
		uint64_t over = 0;

		if ((err = cache_view_limit(v->cache, cv.id, (uint64_t)set.limit, &over)))
			log_err("limit of %s: %s", l->name, strerror(err));
		dropped += over;
	}
	goto record;
broken:
	snprintf(err_text, sizeof(err_text), "%s", strerror(err));
	failed = 1;
record:
	pthread_mutex_lock(&v->lock);
	l->last_msgs = received;
	l->last_bytes = bytes;
	if (src) {
		free_src(l->src, l->nsrc);
		l->src = src;
		l->nsrc = n;
		src = NULL;
	}
	pthread_mutex_unlock(&v->lock);
	if (failed)
		log_err("refresh of %s failed: %s", l->name, err_text);
	else
		log_debug("refresh of %s: %llu received, %llu dropped", l->name,
			  (unsigned long long)received, (unsigned long long)dropped);
	/* as lei: move the bookmark only after a search that succeeded and
	 * found something (an empty answer may be a server-side hiccup) */
	cache_view_set_result(v->cache, l->name, l->id,
			      failed ? CACHE_VIEW_FAILED : CACHE_VIEW_FRESH, cv.epoch,
			      !failed && received ? (int64_t)start : -1,
			      (int64_t)time(NULL), err_text);
out:
	for (i = 0; runs && i < n; i++) {
		cache_batch_free(runs[i].batch);
		free(runs[i].q);
	}
	free(runs);
	free(tids);
	free_src(src, n);
	settings_free(&set);
	free(norm);
	cache_view_release(&cv);
}

static void *refresh_thread(void *arg)
{
	struct job *j = arg;
	views_t *v = j->v;

	pthread_mutex_lock(&v->lock);
	do {
		j->l->again = 0;
		pthread_mutex_unlock(&v->lock);
		refresh(v, j->l);
		pthread_mutex_lock(&v->lock);
	} while (j->l->again && !atomic_load(&v->stop));
	j->l->refreshing = 0;
	v->running--;
	pthread_cond_broadcast(&v->done);
	pthread_mutex_unlock(&v->lock);
	free(j);
	return NULL;
}

/* lock held */
static int start_refresh(views_t *v, struct live *l, int forced)
{
	pthread_attr_t attr;
	pthread_t t;
	struct job *j;
	int err;

	if (l->refreshing) {
		l->again |= forced;
		return 0;
	}
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

	struct settings set;
	long every = v->o.refresh;

	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if (!view_settings(v, cv.id, &set)) {
		every = set.refresh;    /* the view's own interval, if it has one */
		settings_free(&set);
	}
	pthread_mutex_lock(&v->lock);
	l = live_get(v, cv.id, name);
	if (!l) {
		err = ENOMEM;
		goto out;
	}
	if ((cv.last_try == 0 || now - cv.last_try >= every) &&
	    (err = start_refresh(v, l, 0))) {
		/* the listing still answers from the cache */
		if (err != ESHUTDOWN)
			log_err("cannot start a refresh of %s: %s", name, strerror(err));
		err = 0;
		goto out;
	}
	if (cv.last_try != 0)
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
	char *buf = NULL, *last_query = NULL, *refusal = NULL;
	uint64_t last_msgs = 0, last_bytes = 0;
	struct src_state *src = NULL;
	struct settings set;
	int nsrc = 0;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	if ((err = cache_entry_count(v->cache, cv.id, &count))) {
		cache_view_release(&cv);
		return err;
	}
	if ((err = view_settings(v, cv.id, &set))) {
		cache_view_release(&cv);
		return err;
	}
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next) {
		if (l->id != cv.id)
			continue;
		refreshing = l->refreshing;
		progress = atomic_load(&l->progress);
		last_query = l->last_query ? strdup(l->last_query) : NULL;
		last_msgs = l->last_msgs;
		last_bytes = l->last_bytes;
		refusal = l->refusal ? strdup(l->refusal) : NULL;
		for (i = 0; i < l->nsrc; i++)
			if (!(src = strdup_src(src, &nsrc, &l->src[i])))
				break;
	}
	pthread_mutex_unlock(&v->lock);
	fmt_time(cv.last_try, last, sizeof(last));
	fmt_time(cv.last_ok, ok, sizeof(ok));
	f = open_memstream(&buf, &len);
	if (!f) {
		free(last_query);
		free(refusal);
		free_src(src, nsrc);
		settings_free(&set);
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
	if (last_query) {
		fprintf(f, "last-query: %s\n", last_query);
		fprintf(f, "last-fetch: %llu messages, %llu bytes\n",
			(unsigned long long)last_msgs, (unsigned long long)last_bytes);
	}
	/* one line per source: how its part of the last search went */
	for (i = 0; i < set.nsources; i++) {
		const struct src_state *st = NULL;
		int j;

		for (j = 0; j < nsrc; j++)
			if (!strcmp(src[j].url, set.sources[i]))
				st = &src[j];
		fputs("source: ", f);
		print_url(f, set.sources[i]);
		if (st && st->failed)
			fprintf(f, ": failed: %s", st->error);
		else if (st)
			fprintf(f, ": ok, %llu messages, %llu bytes", (unsigned long long)st->msgs,
				(unsigned long long)st->bytes);
		fputc('\n', f);
	}
	if (refusal)
		fprintf(f, "refused: %s\n", refusal);
	fprintf(f, "error: %s\n", cv.error);
	fclose(f);
	free(last_query);
	free(refusal);
	free_src(src, nsrc);
	settings_free(&set);
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
	for (i = 0; i < v->o.nsources; i++) {
		fputs("source: ", f);
		print_url(f, v->o.sources[i]);
		fputc('\n', f);
	}
	pthread_mutex_lock(&v->lock);
	fprintf(f, "error: %s\n", v->last_refusal);
	pthread_mutex_unlock(&v->lock);
	fclose(f);
	*out = buf;
	return buf ? 0 : ENOMEM;
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

int views_set_query(views_t *v, const char *name, const char *text,
		    char *why, size_t whylen)
{
	struct cache_view cv;
	const char *reason = NULL;
	char *q = NULL;
	size_t n = strlen(text), i;
	int err;

	why[0] = '\0';
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	if (!(q = strndup(text, n)))
		return ENOMEM;
	for (i = 0; i < n; i++)         /* several lines make one query */
		if (q[i] == '\n' || q[i] == '\r' || q[i] == '\t')
			q[i] = ' ';
	if ((err = query_validate(q, &reason))) {
		snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		log_err("new query for %s refused: %s", name, why);
		free(q);
		return err;
	}
	if (!(err = cache_view_get(v->cache, name, &cv))) {
		err = cache_view_set_query(v->cache, name, cv.id, q);
		cache_view_release(&cv);
	}
	free(q);
	return err ? err : views_refresh(v, name, 1);
}

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
		err = settings_parse(&v->def, pending, strlen(pending), &set, why, sizeof(why));
	else
		err = view_settings(v, cv.id, &set);
	if (!err) {
		if (!(*out = settings_format(&set)))
			err = ENOMEM;
		settings_free(&set);
	}
	free(pending);
	cache_view_release(&cv);
	return err;
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
	if ((err = view_settings(v, cv.id, &old)))
		goto out;
	if ((err = settings_parse(&v->def, text, len, &set, why, whylen))) {
		if (err == EINVAL) {
			log_err("new .config for %s refused: %s", name, why);
			set_refusal(v, &cv, why);
		}
		settings_free(&old);
		goto out;
	}
	err = cache_file_put(v->cache, cv.id, ".config", text, len);
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
 */
#define STAGE_MS 300

struct stage {
	views_t *v;
	struct live *l;
	uint64_t gen;
};

static void *apply_later(void *arg)
{
	struct stage *st = arg;
	views_t *v = st->v;
	struct timespec until;
	char *text = NULL, *name = NULL, why[256];

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += STAGE_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&v->lock);
	while (!atomic_load(&v->stop) &&
	       pthread_cond_timedwait(&v->done, &v->lock, &until) != ETIMEDOUT)
		;
	if (st->l->pending_gen == st->gen && st->l->pending) {
		text = st->l->pending;
		st->l->pending = NULL;
		name = strdup(st->l->name);
	}
	pthread_mutex_unlock(&v->lock);
	if (text && name && !atomic_load(&v->stop) &&
	    views_set_config(v, name, text, strlen(text), why, sizeof(why)))
		log_err("cannot apply the .config of %s: %s", name, why[0] ? why : "error");
	free(text);
	free(name);
	pthread_mutex_lock(&v->lock);
	v->running--;
	pthread_cond_broadcast(&v->done);
	pthread_mutex_unlock(&v->lock);
	free(st);
	return NULL;
}

int views_stage_config(views_t *v, const char *name, const char *text, size_t len,
		       char *why, size_t whylen)
{
	struct cache_view cv;
	struct settings set;
	struct stage *st = NULL;
	struct live *l;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	why[0] = '\0';
	if ((err = cache_view_get(v->cache, name, &cv)))
		return err;
	err = settings_parse(&v->def, text, len, &set, why, whylen);
	if (!err)
		settings_free(&set);
	else if (err == EINVAL)
		log_err("new .config for %s refused: %s", name, why);
	pthread_mutex_lock(&v->lock);
	if (!(l = live_get(v, cv.id, name))) {
		err = ENOMEM;
		goto out;
	}
	free(l->pending);
	l->pending = NULL;
	l->pending_gen++;       /* a refused text also cancels what was staged */
	free(l->refusal);
	l->refusal = NULL;
	if (err) {
		if (err == EINVAL && asprintf(&l->refusal, ".config: %s", why) < 0)
			l->refusal = NULL;
		goto out;
	}
	if (atomic_load(&v->stop)) {
		err = ESHUTDOWN;
		goto out;
	}
	if (!(l->pending = strndup(text, len)) || !(st = malloc(sizeof(*st)))) {
		err = ENOMEM;
		goto out;
	}
	*st = (struct stage){ v, l, l->pending_gen };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, apply_later, st);
	pthread_attr_destroy(&attr);
	if (!err) {
		v->running++;
		st = NULL;
	}
out:
	pthread_mutex_unlock(&v->lock);
	free(st);
	cache_view_release(&cv);
	return err;
}

struct due {
	views_t *v;
	time_t now;
};

static int refresh_if_due(void *arg, const struct cache_view *cv)
{
	struct due *d = arg;
	struct live *l;

	if (d->now - cv->last_try < d->v->o.refresh_all)
		return 0;
	pthread_mutex_lock(&d->v->lock);
	l = live_get(d->v, cv->id, cv->name);
	if (l)
		start_refresh(d->v, l, 0);
	pthread_mutex_unlock(&d->v->lock);
	return 0;
}

/* lei up --all on a timer: every view whose last search is older than
 * refresh_all, checked every few seconds, so views made meanwhile join */
static void *timer_thread(void *arg)
{
	views_t *v = arg;
	long tick = v->o.refresh_all < 10 ? v->o.refresh_all : 10;

	while (!atomic_load(&v->stop)) {
		struct timespec until;
		struct due d = { v, time(NULL) };

		cache_view_each(v->cache, refresh_if_due, &d);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += tick > 0 ? tick : 1;
		pthread_mutex_lock(&v->lock);
		while (!atomic_load(&v->stop) &&
		       pthread_cond_timedwait(&v->done, &v->lock, &until) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&v->lock);
	}
	return NULL;
}

int views_start(views_t *v)
{
	int err;

	if (v->o.refresh_all <= 0)
		return 0;
	if ((err = pthread_create(&v->timer, NULL, timer_thread, v)))
		return err;
	v->timer_running = 1;
	return 0;
}

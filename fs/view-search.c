/*
 * A view's search: every source at once, each in a thread of its own, into
 * the cache (query -> net -> cache).
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
#include "net/net.h"
#include "query/query.h"

struct sink {
	cache_batch_t *batch;
	struct live *l;
	unsigned char *oids;    /* what came, for the source's index */
	size_t n, cap;
};

static int on_message(void *arg, const char *raw, size_t len)
{
	struct sink *s = arg;

	if (atomic_load(&s->l->cancel))
		return ECANCELED;       /* rmdir: stop the stream now */
	atomic_fetch_add(&s->l->progress, 1);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		unsigned char *t = realloc(s->oids, cap * CACHE_OID_LEN);

		if (t) {
			s->oids = t;
			s->cap = cap;
		}
	}
	if (s->n < s->cap)
		cache_oid(raw, len, s->oids + s->n++ * CACHE_OID_LEN);
	return cache_batch_add(s->batch, raw, len);
}

/* one source's part of a refresh, in a thread of its own when there are
 * several: its own query bound, batch and outcome */
struct run {
	views_t *v;
	struct live *l;
	const char *url;
	const char *full_q;     /* the query without the dt: bound */
	char *q;
	int threads;
	cache_batch_t *batch;
	struct net_res res;
	uint64_t imported;      /* local: new in the archive */
	int err;
};

static void *run_source(void *arg)
{
	struct run *r = arg;
	struct net_req req = {
		.url = r->url, .query = r->q, .threads = r->threads,
		.timeout = r->v->o.timeout, .max_message = r->v->o.max_message,
		.cafile = r->v->o.cafile, .insecure = r->v->o.insecure,
		.proxy = r->v->o.proxy, .stop = &r->v->stop, .cancel = &r->l->cancel,
	};
	struct sink s = { .batch = r->batch, .l = r->l };
	char shown[512];

	memset(&r->res, 0, sizeof(r->res));
	url_shown(r->url, shown, sizeof(shown));        /* cache:URL too */
	if (view_is_local(r->url)) {
		/* the whole query every time: an import may bring mail of any
		 * date, so a dt: bound would miss it; what the view has is
		 * skipped cheaply */
		log_debug("search %s q=%s", shown, r->full_q);
		r->err = view_local_search(r->v, r->url, r->full_q, r->batch, &r->l->progress,
					   &r->res, &r->imported);
	} else {
		log_debug("search %s q=%s", shown, r->q);
		r->err = net_search(&req, on_message, &s, &r->res);
	}
	if (!r->err)
		r->err = cache_batch_flush(r->batch);
	else
		cache_batch_flush(r->batch);    /* keep whole messages that came */
	/* what a remote source sent is indexed too, in the background, so
	 * that "cache:URL" can search it with no network (once stored) */
	if (s.n)
		view_index_later(r->v, r->url, s.oids, s.n);
	free(s.oids);
	return NULL;
}

static void run_reason(const struct run *r, char *buf, size_t len)
{
	/* a full disk shows as ENOSPC, or EIO when LMDB's write was cut short */
	if ((r->err == ENOSPC || r->err == EIO) && cache_fs_full(views_cache(r->v)))
		snprintf(buf, len, "no space left on the cache's filesystem (free some space there)");
	else
		snprintf(buf, len, "%s", r->err == ENOSPC ? "the cache is full (raise -o map_size)" :
			 r->res.error[0] ? r->res.error : strerror(r->err));
}

/*
 * An empty answer to a full search of a view that holds messages may be a
 * server's hiccup (a 404 from a broken index, an empty gzip): sweeping on
 * it would empty the view.  Nothing is swept until another full search,
 * empty_confirm seconds or more later, finds nothing too; meanwhile
 * .status says what is held.  1: hold (do not sweep).
 */
static int hold_empty(views_t *v, struct live *l, const struct cache_view *cv,
		      uint64_t received, time_t start)
{
	uint64_t count = 0;
	int hold = 0;

	if (!received && cache_entry_count(v->cache, cv->id, &count))
		count = 1;      /* cannot tell: keep what is there */
	pthread_mutex_lock(&v->lock);
	if (received || !count) {
		l->empty_since = 0;     /* nothing to hold */
	} else {
		if (!l->empty_since || !l->empty_query || strcmp(l->empty_query, cv->query)) {
			free(l->empty_query);
			l->empty_query = strdup(cv->query);
			l->empty_since = (int64_t)start;
		}
		hold = (int64_t)start - l->empty_since < v->o.empty_confirm;
		if (!hold)
			l->empty_since = 0;     /* confirmed: the sweep goes on */
	}
	l->held = hold ? count : 0;
	pthread_mutex_unlock(&v->lock);
	if (hold)
		log_err("%s: a full search found nothing; its %llu messages stay until "
			"another, %ld s or more later, finds nothing too", l->name,
			(unsigned long long)count, v->o.empty_confirm);
	return hold;
}

/* one search of every source of the view, in parallel; records the outcome */
void view_search(views_t *v, struct live *l)
{
	struct cache_view cv;
	struct settings set = { 0 };
	struct run *runs = NULL;
	struct src_state *src = NULL;
	pthread_t *tids = NULL;
	char *norm = NULL, err_text[600] = "";
	uint64_t received = 0, dropped = 0, bytes = 0, added = 0;
	time_t start = time(NULL);
	int i, err, failed = 0, full, any = 0, n = 0;
	uint32_t gen;

	if ((err = cache_view_get(v->cache, l->name, &cv)))
		return;         /* removed meanwhile */
	if (cv.id != l->id || atomic_load(&l->cancel))
		goto out;
	/* no bookmark: a full search, after which what it did not find goes */
	full = cv.last_ok <= 0;
	/* a full search marks what it sees with a new generation; what an
	 * incremental one adds belongs to the current one, so the next full
	 * search can still drop it */
	gen = full ? cv.gen + 1 : cv.gen;
	if ((err = view_settings(v, &cv, &set)) ||
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
		r->full_q = norm;
		/* lei remote threads: t=1; flag-hits flags nothing remote
		 * (LeiXSearch flags hits of local externals only) */
		r->threads = set.threads != THREADS_OFF;
		/* each source from its own bookmark (the view's if it has none) */
		if (!full && (cache_mark_get(v->cache, cv.id, r->url, &mark) || mark <= 0))
			mark = cv.last_ok;
		/* as lei: the first fill goes to cur/, what later searches add to new/ */
		if ((err = query_incremental(norm, full ? 0 : mark - v->o.margin, &r->q)) ||
		    (err = cache_batch_new(v->cache, cv.id, cv.epoch, !any, gen, full, set.dedupe,
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
		src[i].local = view_is_local(r->url);
		src[i].imported = r->imported;
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
	for (i = 0; i < n; i++)
		if (runs[i].err == ECANCELED) {
			/* the view was removed or searched anew meanwhile
			 * (nothing was written), or leifs is stopping */
			log_debug("search of %s stopped", l->name);
			goto out;
		}
	if (!failed && full && hold_empty(v, l, &cv, received, start))
		full = 0;
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
	for (i = 0; i < n; i++)
		added += cache_batch_added(runs[i].batch);
	if ((added || dropped) && v->o.changed)
		v->o.changed(v->o.changed_arg, cv.id);
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

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
	views_t *v;
	cache_batch_t *batch;
	struct live *l;
	unsigned char *oids;    /* what came, for the source's index */
	size_t n, cap;
	struct timespec flushed; /* when the batch was last written */
};

/* a slow answer is written at least this often, so that a listing shows
 * what came of a first fill while it goes on (seconds) */
#define FLUSH_EVERY 1

static int on_message(void *arg, const char *raw, size_t len)
{
	struct sink *s = arg;
	struct timespec now;
	int err;

	if (atomic_load(&s->l->cancel) || atomic_load(&s->v->stop))
		return ECANCELED;       /* rmdir or shutdown: stop the stream now */
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
	if ((err = cache_batch_add(s->batch, raw, len)))
		return err;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - s->flushed.tv_sec >= FLUSH_EVERY) {
		s->flushed = now;
		err = cache_batch_flush(s->batch);
	}
	return err;
}

/* one source's part of a refresh, in a thread of its own when there are
 * several: its own query bound, batch and outcome */
struct run {
	views_t *v;
	struct live *l;
	const char *spec;       /* the source as written: its key (marks,
				 * memos, back-off, the remote index) */
	struct net_source src;  /* and as parsed: which kind runs */
	const char *full_q;     /* the query without the dt: bound */
	char *q;
	int threads;            /* THREADS_* (settings.h) */
	cache_batch_t *batch;
	struct net_res res;
	uint64_t imported;      /* local: new in the archive */
	int64_t next_try;       /* busy (EBUSY): no request before then */
	int full;               /* a full search (the memo of a local source
				 * does not skip it) */
	const char *mid;        /* a thread view's Message-ID: a remote source
				 * is asked for its thread (net_thread) */
	char **parts;           /* a subsystem view's query in parts: a remote
				 * source is asked each, its answers joined in
				 * the one batch */
	char **safe;            /* each without word wildcards: asked instead
				 * when the server refuses a part (HTTP 500) */
	size_t nparts;
	char fallback[200];     /* what was asked instead, for .status */
	int err;
};

/* The back-off of a busy source (lock held): its record, made if `make`. */
static struct backoff *backoff_get(views_t *v, const char *url, int make)
{
	struct backoff *b;

	for (b = v->backoffs; b; b = b->next)
		if (!strcmp(b->url, url))
			return b;
	if (!make || !(b = calloc(1, sizeof(*b))))
		return NULL;
	if (!(b->url = strdup(url))) {
		free(b);
		return NULL;
	}
	b->next = v->backoffs;
	v->backoffs = b;
	return b;
}

/* 1 when url is left alone for now, with why in res->error, and when
 * the next try may come in *next_try */
static int backing_off(views_t *v, const char *url, struct net_res *res, int64_t *next_try)
{
	struct backoff *b;
	int64_t now = (int64_t)time(NULL);
	int skip = 0;

	pthread_mutex_lock(&v->lock);
	b = backoff_get(v, url, 0);
	if (b && b->until > now) {
		skip = 1;
		*next_try = b->until;
		res->http_status = b->status;
		snprintf(res->error, sizeof(res->error),
			 "server busy (HTTP %ld), next try in %lld s (backing off: not asked now)",
			 b->status, (long long)(b->until - now));
	}
	pthread_mutex_unlock(&v->lock);
	return skip;
}

/* After a search of url: a busy answer starts (or doubles) its back-off,
 * any other answer of the server ends it (no answer at all, a refused
 * connection, leaves it to double at the next busy one).  res->error and
 * *next_try say when the next try comes. */
static void busy_result(views_t *v, const char *url, int err, struct net_res *res,
			int64_t *next_try)
{
	struct backoff *b;
	long delay, cap = v->o.backoff_max;

	pthread_mutex_lock(&v->lock);
	b = backoff_get(v, url, err == EBUSY);
	if (b && err != EBUSY && res->http_status > 0) {
		b->until = 0;
		b->delay = 0;
	} else if (b && err == EBUSY) {
		if (res->retry_after > 0)
			delay = res->retry_after;
		else
			delay = b->delay > 0 ? b->delay * 2 : 30;
		if (delay > cap)
			delay = cap;
		b->delay = delay;
		b->status = res->http_status;
		b->until = (int64_t)time(NULL) + delay;
		*next_try = b->until;
		snprintf(res->error, sizeof(res->error), "server busy (HTTP %ld), next try in %ld s",
			 res->http_status, delay);
	}
	pthread_mutex_unlock(&v->lock);
}

/* the view's memo of local source r->spec, made if need be (NULL: none,
 * out of memory: the search just runs) */
static struct local_memo *memo_get(struct run *r)
{
	struct local_memo *m;

	pthread_mutex_lock(&r->v->lock);
	for (m = r->l->memos; m; m = m->next)
		if (!strcmp(m->spec, r->spec))
			break;
	if (!m && (m = calloc(1, sizeof(*m)))) {
		if (!(m->spec = strdup(r->spec))) {
			free(m);
			m = NULL;
		} else {        /* new: linked in once */
			m->next = r->l->memos;
			r->l->memos = m;
		}
	}
	pthread_mutex_unlock(&r->v->lock);
	return m;
}

/* an archive on disk or cache:URL: view-local.c, never bounded by dt:
 * (an import may bring mail of any date, so a dt: bound would miss it);
 * the memo makes a search of an unchanged query look only at what was
 * indexed since the last one */
static void search_local(struct run *r, const char *shown)
{
	struct local_memo *m = memo_get(r);

	log_debug("search %s q=%s", shown, r->full_q);
	if (m)
		m->full = r->full;
	r->err = view_local_search(r->v, &r->src, r->full_q, r->threads, 0, r->batch,
				   &r->l->progress, &r->res, &r->imported, m);
	if (!r->err && !(r->err = cache_batch_flush(r->batch)) && m && m->next_q) {
		free(m->q);     /* stored: what the next search compares */
		m->q = m->next_q;
		m->gen = m->next_gen;
		m->mark = m->next_mark;
		m->threads = m->next_threads;
		m->next_q = NULL;
	}
}

/* a public-inbox over HTTP(S): net_search, or net_thread for a thread
 * view; not while the server asked to be left alone, and at most
 * host_refreshes at once per server */
static void search_remote(struct run *r, struct sink *s, const char *shown)
{
	struct net_req req = {
		.url = r->src.url, .query = r->q, .threads = r->threads != THREADS_OFF,
		.timeout = r->v->o.timeout, .max_message = r->v->o.max_message,
		.low_speed = r->v->o.low_speed, .deadline = r->v->o.deadline,
		.user_agent = r->v->o.user_agent,
		.cafile = r->v->o.cafile, .insecure = r->v->o.insecure,
		.proxy = r->v->o.proxy, .stop = &r->v->stop, .cancel = &r->l->cancel,
	};
	char *ticket;

	if (backing_off(r->v, r->spec, &r->res, &r->next_try)) {
		log_debug("search %s skipped: %s", shown, r->res.error);
		r->err = EBUSY;
		return;
	}
	if ((r->err = net_host_enter(r->src.url, r->v->o.host_refreshes, &r->v->stop,
				     &r->l->cancel, &ticket)))
		return;
	if (r->mid) {
		req.query = r->mid;
		log_debug("thread %s mid=%s", shown, r->mid);
		r->err = net_thread(&req, on_message, s, &r->res);
	} else if (r->nparts > 0) {
		size_t k;

		/* one batch: a message two parts find is stored and counted
		 * once, and a full search marks all the parts found */
		for (k = 0; k < r->nparts && !r->err; k++) {
			struct net_res one = { 0 };

			req.query = r->parts[k];
			log_debug("search %s part %zu/%zu q=%s", shown, k + 1, r->nparts, req.query);
			r->err = net_search(&req, on_message, s, &one);
			/* public-inbox fails a wildcard that expands past 100
			 * terms with a 500: the part without its wildcards,
			 * once (nothing of the failed answer was stored) */
			if (r->err && one.http_status == 500 && strcmp(r->parts[k], r->safe[k])) {
				log_err("search %s: part %zu refused (HTTP 500): asked without its "
					"wildcards", shown, k + 1);
				snprintf(r->fallback, sizeof(r->fallback), "the server refused a "
					 "wildcard (HTTP 500: over its 100 terms?) in part %zu of %zu: "
					 "asked without it (N: words as words, globs as their phrases)",
					 k + 1, r->nparts);
				memset(&one, 0, sizeof(one));
				req.query = r->safe[k];
				r->err = net_search(&req, on_message, s, &one);
			}
			r->res.messages += one.messages;
			r->res.bytes += one.bytes;
			r->res.http_status = one.http_status;
			r->res.retry_after = one.retry_after;
			if (r->err)
				snprintf(r->res.error, sizeof(r->res.error), "part %zu of %zu: %.200s",
					 k + 1, r->nparts, one.error);
		}
	} else {
		log_debug("search %s q=%s", shown, r->q);
		r->err = net_search(&req, on_message, s, &r->res);
	}
	net_host_leave(ticket);
	busy_result(r->v, r->spec, r->err, &r->res, &r->next_try);
}

/* One search of one source, whatever its kind (a thread of view_search's
 * for each source but the first): its messages go to the view's batch. */
static void *source_search(void *arg)
{
	struct run *r = arg;
	struct sink s = { .v = r->v, .batch = r->batch, .l = r->l };
	char shown[512];

	clock_gettime(CLOCK_MONOTONIC, &s.flushed);
	memset(&r->res, 0, sizeof(r->res));
	url_shown(r->spec, shown, sizeof(shown));       /* cache:URL too */
	if (net_source_parse(r->spec, &r->src)) {
		/* settings_source_ok let it in: only a damaged .config */
		snprintf(r->res.error, sizeof(r->res.error),
			 "not an http:// or https:// URL, cache:URL or an absolute path");
		r->err = EINVAL;
		return NULL;
	}
	switch (r->src.kind) {
	case NET_SOURCE_REMOTE:
		search_remote(r, &s, shown);
		break;
	case NET_SOURCE_CACHE:          /* what the remote sent, as indexed */
	case NET_SOURCE_ARCHIVE:        /* imported, then indexed */
		search_local(r, shown);
		break;
	}
	if (!r->err)
		r->err = cache_batch_flush(r->batch);
	else
		cache_batch_flush(r->batch);    /* keep whole messages that came */
	/* what a remote source sent is indexed too, in the background, so
	 * that "cache:URL" can search it with no network (once stored) */
	if (s.n)
		view_index_later(r->v, r->spec, s.oids, s.n);
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
 * it would empty the view, or a source's share of it.  Nothing is swept
 * until every source that answered nothing has done so for empty_confirm
 * seconds or more (a later full search finds nothing there too);
 * meanwhile .status says what is held, and listings ask again after
 * empty_confirm.  1: hold (do not sweep).
 */
static int hold_empty(views_t *v, struct live *l, const struct cache_view *cv,
		      const struct run *runs, int n, uint32_t gen, time_t start)
{
	struct empty_src *e, **pp;
	uint64_t count = 0;
	int hold = 0, i, any_empty = 0;

	for (i = 0; i < n; i++)
		any_empty |= !runs[i].res.messages;
	if (any_empty && cache_view_stale(v->cache, cv->id, gen, &count))
		count = 1;      /* cannot tell: keep what is there */
	pthread_mutex_lock(&v->lock);
	for (i = 0; i < n; i++) {
		for (pp = &l->empty; (e = *pp); pp = &e->next)
			if (!strcmp(e->url, runs[i].spec))
				break;
		if (runs[i].res.messages || !count) {
			if (e) {        /* it answered: no hold for it */
				*pp = e->next;
				e->next = NULL;
				free_empty(e);
			}
			continue;
		}
		if (e && strcmp(e->query, cv->query)) {
			free(e->query);
			e->query = strdup(cv->query);
			e->since = (int64_t)start;
		} else if (!e && (e = calloc(1, sizeof(*e)))) {
			e->url = strdup(runs[i].spec);
			e->query = strdup(cv->query);
			e->since = (int64_t)start;
			e->next = l->empty;
			l->empty = e;
		}
		if (!e || !e->url || !e->query ||
		    (int64_t)start - e->since < v->o.empty_confirm)
			hold = 1;
	}
	l->held = hold ? count : 0;
	pthread_mutex_unlock(&v->lock);
	if (hold)
		log_err("%s: a full search found nothing at a source; the view's %llu messages "
			"stay until another, %ld s or more later, agrees", l->name,
			(unsigned long long)count, v->o.empty_confirm);
	return hold;
}

/*
 * After the sources of a thread view answered: a source that does not
 * have the message (a server's 404, a local source that found nothing) is
 * no failure when another has it (a mirror that lags, an archive of
 * another list).  When none has it, each says "no such message" in
 * .status and the search failed: a mistyped id is seen, a view that
 * holds the thread keeps it (nothing is swept on a failure), and the next
 * refresh tries again (the message may not have reached the archive yet).
 */
static void thread_found(views_t *v, const struct cache_view *cv, struct run *runs, int n)
{
	int i, any = 0, found = 0;

	for (i = 0; i < n; i++)
		found |= !runs[i].err && runs[i].res.messages > 0;
	if (!found && cache_entry_any(v->cache, cv->id, &any))
		any = 1;
	for (i = 0; i < n; i++) {
		struct run *r = &runs[i];

		if (found) {
			if (r->err == ENOENT)
				r->err = 0;     /* another source has it */
			continue;
		}
		/* no source has it: a failure, never an empty answer, so a
		 * view that holds the thread keeps it (a purged message, a
		 * mirror behind) and nothing is swept */
		if (r->err == ENOENT || (!r->err && !r->res.messages)) {
			r->err = ENOENT;
			snprintf(r->res.error, sizeof(r->res.error), "no such message <%s>%s", r->mid,
				 any ? " (the view keeps what it has)" : "");
		}
	}
}

/* one search of every source of the view, in parallel; records the outcome */
void view_search(views_t *v, struct live *l)
{
	struct cache_view cv;
	struct settings set = { 0 };
	struct run *runs = NULL;
	struct src_state *src = NULL;
	pthread_t *tids = NULL;
	char *norm = NULL, *last = NULL, *mid = NULL, err_text[600] = "", **parts = NULL;
	char **safe = NULL;
	size_t nparts = 0, k;
	uint64_t received = 0, dropped = 0, bytes = 0, added = 0;
	struct cache_gone gone = { 0 };         /* what a sweep or limit dropped */
	time_t start = time(NULL);
	int i, err, failed = 0, full, n = 0, held = 0;
	uint32_t gen;

	if ((err = cache_view_get(v->cache, l->name, &cv)))
		return;         /* removed meanwhile */
	if (views_thread_name(l->name) && (err = views_thread_mid(l->name, &mid)))
		goto broken;
	if (cv.id != l->id || atomic_load(&l->cancel))
		goto out;
	if (views_subsys_name(l->name)) {
		int changed = 0;

		/* derived from the file as it is now; a new query is stored
		 * and searched whole */
		if ((err = view_subsys_prepare(v, l, &cv, &parts, &safe, &nparts, &changed, err_text,
					       sizeof(err_text)))) {
			if (err != EINVAL)
				err_text[0] = '\0';
			goto broken;
		}
		if (changed) {
			cache_view_release(&cv);
			if ((err = cache_view_get(v->cache, l->name, &cv)))
				goto free_parts;
			if (cv.id != l->id)
				goto out;
		}
	}
	/* no bookmark: a full search, after which what it did not find goes */
	full = cv.last_ok <= 0;
	/* a full search marks what it sees with a new generation; what an
	 * incremental one adds belongs to the current one, so the next full
	 * search can still drop it */
	gen = cv.gen;
	if (full && (err = cache_view_next_gen(v->cache, l->name, l->id, &gen)))
		goto broken;
	if ((err = view_settings(v, &cv, &set)) ||
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
		r->spec = set.sources[i];
		r->full_q = norm;
		r->full = full;
		/* lei remote threads: t=1; flag-hits flags nothing remote
		 * (LeiXSearch flags hits of local externals only), the hits
		 * of a local source (or cache:URL) are flagged */
		r->threads = set.threads;
		/* a thread view: the whole thread at each refresh, a small
		 * answer (what the view has is skipped), so no dt: bound;
		 * remote sources GET it, local ones search mid: with threads
		 * forced on (what they do with it is view-local.c's) */
		if (mid) {
			r->mid = mid;
			if (r->threads == THREADS_OFF)
				r->threads = THREADS_ON;
		}
		/* each source from its own bookmark (the view's if it has none) */
		if (!full && (cache_mark_get(v->cache, cv.id, r->spec, &mark) || mark <= 0))
			mark = cv.last_ok;
		/* as lei: the first fill goes to cur/, what later searches add to
		 * new/; a first fill cut short (SIGTERM, a failed source) is
		 * not done, so what the next search brings of it is old mail */
		if (nparts && (!(r->parts = calloc(nparts, sizeof(*r->parts))) ||
			       !(r->safe = calloc(nparts, sizeof(*r->safe))))) {
			err = ENOMEM;
			goto broken;
		}
		for (k = 0; k < nparts; k++, r->nparts++) {
			char *pn = NULL, *sn = NULL;

			if (!(err = query_normalize(parts[k], &pn)) &&
			    !(err = query_normalize(safe[k], &sn)) &&
			    !(err = query_incremental(pn, full ? 0 : mark - v->o.margin, &r->parts[k])))
				err = query_incremental(sn, full ? 0 : mark - v->o.margin, &r->safe[k]);
			free(pn);
			free(sn);
			if (err)
				goto broken;
		}
		if ((err = query_incremental(norm, full || mid ? 0 : mark - v->o.margin, &r->q)) ||
		    (err = cache_batch_new(v->cache, cv.id, cv.epoch, !cv.filled, gen, full, set.dedupe,
					   &r->batch)))
			goto broken;
		cache_batch_share(r->batch, !set.own_flags);
	}
	pthread_mutex_lock(&v->lock);
	free(l->last_query);
	if (n && runs[0].nparts > 1) {
		/* what was sent: the first of the parts */
		if (asprintf(&l->last_query, "%s (part 1 of %zu sent to a remote source)",
			     runs[0].parts[0], runs[0].nparts) < 0)
			l->last_query = NULL;
	} else {
		l->last_query = n ? strdup(runs[0].q) : NULL;
	}
	pthread_mutex_unlock(&v->lock);
	for (i = 1; i < n; i++)
		if (pthread_create(&tids[i], NULL, source_search, &runs[i]))
			source_search(&runs[i]), tids[i] = 0;
	if (n)
		source_search(&runs[0]);
	for (i = 1; i < n; i++)
		if (tids[i])
			pthread_join(tids[i], NULL);
	if (mid)
		thread_found(v, &cv, runs, n);
	for (i = 0; i < n; i++) {
		struct run *r = &runs[i];

		received += r->res.messages;
		bytes += r->res.bytes;
		src[i].url = strdup(r->spec);
		src[i].msgs = r->res.messages;
		src[i].bytes = r->res.bytes;
		src[i].local = r->src.kind != NET_SOURCE_REMOTE;
		src[i].imported = r->imported;
		if (r->err == EBUSY) {
			src[i].busy = r->res.http_status;
			src[i].next_try = r->next_try;
		}
		if (r->err) {
			size_t len = strlen(err_text), room = sizeof(err_text) - 1 - len;
			char shown[256], piece[600];
			int m;

			src[i].failed = 1;
			run_reason(r, src[i].error, sizeof(src[i].error));
			/* one "URL: reason" per failed source, "; " between */
			url_shown(r->spec, shown, sizeof(shown));
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
			cache_mark_set(v->cache, l->name, cv.id, cv.epoch, r->spec, (int64_t)start);
		}
	}
	for (i = 0; i < n; i++)
		if (runs[i].err == ECANCELED) {
			/* the view was removed or searched anew meanwhile
			 * (nothing was written), or leifs is stopping */
			log_debug("search of %s stopped", l->name);
			goto out;
		}
	if (!failed && full && hold_empty(v, l, &cv, runs, n, gen, start)) {
		full = 0;
		held = 1;       /* the next search is a full one again */
	}
	if (!failed && full &&
	    (err = cache_view_sweep(v->cache, l->name, l->id, gen, cv.epoch, &dropped,
					   &gone))) {
		snprintf(err_text, sizeof(err_text), "cannot drop old results: %s",
			 strerror(err));
		failed = 1;
	}
	if (set.limit > 0) {
		uint64_t over = 0;

		if ((err = cache_view_limit(v->cache, cv.id, (uint64_t)set.limit, &over, &gone)))
			log_err("limit of %s: %s", l->name, strerror(err));
		dropped += over;
	}
	for (i = 0; i < n; i++)
		added += cache_batch_added(runs[i].batch);
	/* series/ follows the view as it changes, before a wait on .refresh
	 * ends and before the kernel is told (once it was looked at: the stamp says so) */
	{
		int64_t smtime = 0;

		if (views_series_mtime(v, cv.id, &smtime) || !smtime)
			;
		else if (!added && !dropped)    /* a thread's refetch may be due */
			view_series_fetch_kick(v, cv.id);
		else if ((err = views_series_update(v, cv.id)))
			log_err("series of %s: %s", l->name, strerror(err));
	}
	if ((added || dropped) && v->o.changed)
		v->o.changed(v->o.changed_arg, cv.id, &gone);
	goto record;
broken:
	if (!err_text[0])       /* else the reason said already */
		snprintf(err_text, sizeof(err_text), "%s", strerror(err));
	failed = 1;
	free_src(src, n);       /* not filled in: nothing to show */
	src = NULL;
record:
	pthread_mutex_lock(&v->lock);
	free(l->subsys_note);
	l->subsys_note = NULL;
	for (i = 0; runs && i < n && !l->subsys_note; i++)
		if (runs[i].fallback[0])
			l->subsys_note = strdup(runs[i].fallback);
	l->last_msgs = received;
	l->last_added = added;
	l->last_bytes = bytes;
	if (src) {
		free_src(l->src, l->nsrc);
		l->src = src;
		l->nsrc = n;
		src = NULL;
	}
	last = view_last_text(l);
	clock_gettime(CLOCK_BOOTTIME, &l->ended);
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
			      !failed && received && !held ? (int64_t)start : -1,
			      (int64_t)time(NULL), err_text, last);
	/* what the view holds now goes to its IMAP folders, whether or not
	 * every source answered (never under a lock) */
	if (set.nimaps && !atomic_load(&l->cancel))
		view_imap_deliver(v, l, &cv, &set);
out:
	free(last);
	for (i = 0; runs && i < n; i++) {
		cache_batch_free(runs[i].batch);
		free(runs[i].q);
		for (k = 0; k < runs[i].nparts; k++) {
			free(runs[i].parts[k]);
			free(runs[i].safe[k]);
		}
		free(runs[i].parts);
		free(runs[i].safe);
	}
	free(runs);
	free(tids);
	free_src(src, n);
	cache_gone_free(&gone);
	settings_free(&set);
	free(norm);
	free(mid);
	cache_view_release(&cv);
free_parts:
	for (k = 0; k < nparts; k++) {
		free(parts[k]);
		free(safe[k]);
	}
	free(parts);
	free(safe);
}

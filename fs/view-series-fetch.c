/*
 * The rest of a thread a view holds part of (series/, views.h): a query
 * that matched patch 2/5 alone has the whole series under series/, as a
 * threads/ view would, fetched in the background so that no listing
 * waits for it.
 *
 * An update of series/ (view-series.c) asks for a thread it finds
 * incomplete (a revision lacks a patch, or a message replies to one the
 * view lacks: the cover letter, a patch 1) with a "W" record of the
 * series table, keyed by a Message-ID of the view's in it (struct
 * fetch_rec; fetched 0: to fetch), and kicks the fetcher.  One fetcher
 * thread per mount takes the views in turn, FETCH_TURN threads of a view
 * per turn, one request at a time: each of the view's sources is asked
 * as for a threads/ view (a remote one for <url><id>/t.mbox.gz, a local
 * one mid:<id> with threads on), and what comes goes to the view's holder
 * (cache.h), never to its entries: the view's maildir, flags and refresh
 * are not touched.  Then series/ is updated and the kernel told.
 *
 * A thread is asked again when the view's own share of it changes, and
 * every series_refetch seconds while its newest revision is under
 * FETCH_RECENT old (a new trailer in a reply the view's query does not
 * match).  A view that fetches whole threads itself (threads/, threads =
 * true or flag-hits) asks nothing: its records are marked as fetched.
 * With -o series_fetch=0 nothing is asked and the holder is not read (the
 * records wait, for a mount that asks).  A fetch that no source answered
 * (a dead server, an unmount) is asked again at the next kick; a busy
 * server ends the view's turn.  Bounds: the queue holds each view once; a
 * fetch stops after FETCH_MAX_MSGS messages of a source (what came stays);
 * a Message-ID that could not name a
 * thread (view_mid_ok) is never asked; a Date to come counts as now.
 */
#include <errno.h>
#include <glib.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/series.h"
#include "fs/log.h"
#include "fs/views-private.h"
#include "net/net.h"

#include "fs/view-series-upd.h"

#define FETCH_TURN 16                   /* threads of one view per turn */
#define FETCH_MAX_MSGS 5000             /* as an update reads of a thread */
#define FETCH_RECENT (30 * 86400)       /* a series this young is asked again */

/* ---- the update's part (under views.series) ---- */

int ser_own(const struct upd *u, size_t i)
{
	return u->own.n && bsearch(u->m.oids + i * CACHE_OID_LEN, u->own.oids, u->own.n,
				   CACHE_OID_LEN, ser_cmp_oid);
}

/* u->m: the view's own messages and its holder's, sorted, each once */
int ser_with_holder(struct upd *u)
{
	size_t i, j;
	int err;

	if (u->own.n) {
		qsort(u->own.oids, u->own.n, CACHE_OID_LEN, ser_cmp_oid);
		if (!(u->m.oids = malloc(u->own.n * CACHE_OID_LEN)))
			return ENOMEM;
		memcpy(u->m.oids, u->own.oids, u->own.n * CACHE_OID_LEN);
		u->m.n = u->m.cap = u->own.n;
	}
	/* -o series_fetch=0: what the view holds alone, as b4 am -m reads it */
	if (!u->v->o.series_fetch ||
	    (err = cache_holder_get(u->v->cache, u->id, 0, &u->holder)) == ENOENT)
		return 0;
	if (err)
		return err;
	u->has_holder = 1;
	if ((err = cache_entry_each(u->v->cache, u->holder.id, ser_add_oid, &u->m)))
		return err;
	if (!u->m.n)
		return 0;
	qsort(u->m.oids, u->m.n, CACHE_OID_LEN, ser_cmp_oid);
	for (i = j = 1; i < u->m.n; i++)
		if (memcmp(u->m.oids + i * CACHE_OID_LEN, u->m.oids + (j - 1) * CACHE_OID_LEN,
			   CACHE_OID_LEN))
			memmove(u->m.oids + j++ * CACHE_OID_LEN, u->m.oids + i * CACHE_OID_LEN,
				CACHE_OID_LEN);
	u->m.n = j;
	return 0;
}

static int load_one(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct upd *u = arg;
	struct fetch_rec r;

	if (vlen != sizeof(r) || klen < 2)
		return 0;       /* derived data: a bad record is asked anew */
	memcpy(&r, val, sizeof(r));
	if (r.magic != FETCH_MAGIC)
		return 0;
	g_hash_table_insert(u->fetches, g_strndup((const char *)key + 1, klen - 1),
			    g_memdup2(&r, sizeof(r)));
	return 0;
}

int ser_fetch_load(struct upd *u)
{
	u->fetches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	return cache_series_each(u->v->cache, u->id, "W", 1, load_one, u);
}

/* a message of the thread the view lacks: an id named by one of them
 * that none of them has */
static int dangling(struct upd *u, const size_t *idx, size_t n)
{
	GHashTable *have = g_hash_table_new(g_str_hash, g_str_equal);
	size_t i, j;
	int lacks = 0;

	for (i = 0; i < n; i++)
		if (u->facts[idx[i]].nids)
			g_hash_table_add(have, u->facts[idx[i]].ids[0]);
	for (i = 0; i < n && !lacks; i++)
		for (j = 1; j < u->facts[idx[i]].nids && !lacks; j++)
			lacks = *u->facts[idx[i]].ids[j] &&
				!g_hash_table_contains(have, u->facts[idx[i]].ids[j]);
	g_hash_table_destroy(have);
	return lacks;
}

int ser_fetch_consider(struct upd *u, const size_t *idx, size_t n, const struct series_rev *r,
		       size_t nr)
{
	struct fetch_rec rec = { .magic = FETCH_MAGIC };
	const char *key = NULL, *why;
	EVP_MD_CTX *ctx;
	size_t i, lacks = 0;

	for (i = 0; i < nr; i++) {
		lacks += r[i].missing;
		if (r[i].date > rec.date)
			rec.date = r[i].date;
	}
	if (rec.date > u->now)          /* a Date to come: as of now */
		rec.date = u->now;
	if (!lacks && !dangling(u, idx, n))
		return 0;
	/* the view's own share of it (idx is in oid order) */
	if (!(ctx = EVP_MD_CTX_new()))
		return ENOMEM;
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (i = 0; i < n; i++)
		if (ser_own(u, idx[i]))
			EVP_DigestUpdate(ctx, u->m.oids + idx[i] * CACHE_OID_LEN, CACHE_OID_LEN);
	EVP_DigestFinal_ex(ctx, rec.vsig, NULL);
	EVP_MD_CTX_free(ctx);
	/* asked already by a Message-ID of it: the same key, asked again
	 * only for a new share */
	for (i = 0; i < n && !key; i++) {
		const struct fact *f = &u->facts[idx[i]];
		const struct fetch_rec *o;

		if (f->nids && (o = g_hash_table_lookup(u->fetches, f->ids[0]))) {
			if (!memcmp(o->vsig, rec.vsig, sizeof(rec.vsig)))
				return 0;
			key = f->ids[0];
		}
	}
	/* else one of the view's own, a patch first */
	for (i = 0; i < 2 * n && !key; i++) {
		const struct fact *f = &u->facts[idx[i % n]];

		if (ser_own(u, idx[i % n]) && (i >= n || f->patch) && f->nids && *f->ids[0] &&
		    strlen(f->ids[0]) < 400 && !view_mid_ok(f->ids[0], &why))
			key = f->ids[0];
	}
	if (!key)
		return 0;
	g_hash_table_replace(u->fetches, g_strdup(key), g_memdup2(&rec, sizeof(rec)));
	return ser_queue(u->w.put, 'W', key, strlen(key), g_memdup2(&rec, sizeof(rec)),
			 sizeof(rec));
}

/* ---- the queue ---- */

static void *fetcher(void *arg);

void view_series_fetch_kick(views_t *v, uint64_t id)
{
	size_t i;

	if (!v->o.series_fetch)
		return;         /* -o series_fetch=0: records wait, untouched */
	pthread_mutex_lock(&v->lock);
	if (atomic_load(&v->stop))
		goto out;
	for (i = 0; i < v->fetch_n; i++)
		if (v->fetch_q[i] == id)
			goto out;       /* queued already: each view once */
	if (v->fetch_n == v->fetch_cap) {
		size_t cap = v->fetch_cap ? 2 * v->fetch_cap : 16;
		uint64_t *q = realloc(v->fetch_q, cap * sizeof(*q));

		if (!q)
			goto out;       /* its records wait for the next kick */
		v->fetch_q = q;
		v->fetch_cap = cap;
	}
	v->fetch_q[v->fetch_n++] = id;
	if (!v->fetcher_running && !pthread_create(&v->fetcher, NULL, fetcher, v))
		v->fetcher_running = 1;
	pthread_cond_broadcast(&v->fetch_wake);
out:
	pthread_mutex_unlock(&v->lock);
}

void view_series_fetch_close(views_t *v)
{
	int running;

	pthread_mutex_lock(&v->lock);   /* stop is set: no kick starts one now */
	running = v->fetcher_running;
	pthread_cond_broadcast(&v->fetch_wake);
	pthread_mutex_unlock(&v->lock);
	if (running)
		pthread_join(v->fetcher, NULL);
	free(v->fetch_q);
	v->fetch_q = NULL;
	v->fetch_n = v->fetch_cap = 0;
}

/* ---- a view's turn ---- */

struct due {
	char *mid;
	struct fetch_rec r;
};

struct dues {
	GArray *a;              /* of struct due */
	int64_t now;
	long refetch;
	size_t more;            /* due beyond this turn's */
};

static int find_due(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct dues *d = arg;
	struct due x;

	if (vlen != sizeof(x.r) || klen < 2)
		return 0;
	memcpy(&x.r, val, sizeof(x.r));
	if (x.r.magic != FETCH_MAGIC)
		return 0;
	if (x.r.fetched && !(d->refetch > 0 && d->now - x.r.fetched >= d->refetch &&
			     d->now - x.r.date < FETCH_RECENT))
		return 0;
	if (d->a->len >= FETCH_TURN) {
		d->more++;
		return 0;
	}
	if (!(x.mid = g_strndup((const char *)key + 1, klen - 1)))
		return ENOMEM;
	g_array_append_val(d->a, x);
	return 0;
}

struct fsink {
	views_t *v;
	cache_batch_t *batch;
	size_t n;
};

static int on_message(void *arg, const char *raw, size_t len)
{
	struct fsink *s = arg;

	if (atomic_load(&s->v->stop))
		return ECANCELED;
	if (++s->n > FETCH_MAX_MSGS)
		return EFBIG;
	return cache_batch_add(s->batch, raw, len);
}

/* one thread from every source of the view into batch: how many sources
 * answered (a 404, no such message, is an answer); *busy when one was
 * busy (HTTP 429, 503) */
static int fetch_thread(views_t *v, const struct settings *set, const char *mid,
			cache_batch_t *batch, int *busy)
{
	int answered = 0;
	atomic_int cancel = 0;
	atomic_ulong progress = 0;
	char *q = NULL;
	int i, err;

	if (asprintf(&q, "mid:%s", mid) < 0)
		return 0;
	for (i = 0; i < set->nsources && !atomic_load(&v->stop); i++) {
		struct net_source src;
		struct net_res res = { 0 };
		char shown[512];

		url_shown(set->sources[i], shown, sizeof(shown));
		if (net_source_parse(set->sources[i], &src))
			continue;
		if (src.kind == NET_SOURCE_REMOTE) {
			struct net_req req = {
				.url = src.url, .query = mid, .timeout = v->o.timeout,
				.max_message = v->o.max_message, .low_speed = v->o.low_speed,
				.deadline = v->o.deadline, .user_agent = v->o.user_agent,
				.cafile = v->o.cafile, .insecure = v->o.insecure,
				.proxy = v->o.proxy, .stop = &v->stop, .cancel = &cancel,
			};
			struct fsink s = { v, batch, 0 };
			char *ticket;

			if (net_host_enter(src.url, v->o.host_refreshes, &v->stop, &cancel, &ticket))
				continue;
			err = net_thread(&req, on_message, &s, &res);
			net_host_leave(ticket);
		} else {
			uint64_t imported;

			err = view_local_search(v, &src, q, THREADS_ON, FETCH_MAX_MSGS, batch,
						&progress, &res, &imported, NULL);
		}
		if (err && err != ENOENT)
			log_debug("series: thread of <%s> from %s: %s", mid, shown,
				  res.error[0] ? res.error : strerror(err));
		*busy |= err == EBUSY;
		/* whole messages that came stay; an answer counts once stored */
		if (!cache_batch_flush(batch) && (!err || err == ENOENT || err == EFBIG))
			answered++;
	}
	free(q);
	return answered;
}

/* a view's turn: its due threads, FETCH_TURN at most; 1 if more wait */
static int turn(views_t *v, uint64_t id)
{
	struct dues d = { .now = time(NULL), .refetch = v->o.series_refetch };
	struct cache_view cv;
	struct cache_source h;
	struct settings set;
	uint64_t added = 0;
	int fetch, err, more, have_h = 0, gone = 0;
	guint i;

	if (cache_view_get_id(v->cache, id, &cv))
		return 0;       /* removed meanwhile: its records went with it */
	if (view_settings(v, &cv, &set)) {
		cache_view_release(&cv);
		return 0;
	}
	d.a = g_array_new(FALSE, FALSE, sizeof(struct due));
	/* views that hold whole threads: nothing to ask (a record to fetch
	 * is marked as fetched, and no record is due again) */
	fetch = set.threads == THREADS_OFF && strncmp(cv.name, THREAD_PREFIX, strlen(THREAD_PREFIX));
	if (!fetch)
		d.refetch = 0;
	err = cache_series_each(v->cache, id, "W", 1, find_due, &d);
	if (!err && fetch && d.a->len && !(err = cache_holder_get(v->cache, id, 1, &h)))
		have_h = 1;
	if (err == ENOENT)
		err = gone = 1;         /* the view went meanwhile: nothing to ask */
	for (i = 0; !err && i < d.a->len && !atomic_load(&v->stop); i++) {
		struct due *x = &g_array_index(d.a, struct due, i);
		struct cache_series_rec put = { 0 };
		cache_batch_t *b = NULL;

		int answered = 1, busy = 0;

		x->r.got = 0;
		if (fetch && !(err = cache_batch_new_source(v->cache, &h, &b))) {
			answered = fetch_thread(v, &set, x->mid, b, &busy);
			x->r.got = (uint32_t)cache_batch_added(b);
			added += x->r.got;
			cache_batch_free(b);
		}
		/* no source answered (a dead server, unmount): asked again at
		 * the next kick; a busy one ends the view's turn */
		if (!answered || atomic_load(&v->stop)) {
			if (!busy)
				continue;
			d.more = 0;     /* the rest wait for the next kick */
			break;
		}
		x->r.fetched = time(NULL);
		put.key = g_strdup_printf("W%s", x->mid);
		put.klen = strlen(put.key);
		put.val = &x->r;
		put.vlen = sizeof(x->r);
		/* ENOENT: the view went meanwhile */
		if (!err && (err = cache_series_write(v->cache, id, &put, 1, NULL, 0)) == ENOENT)
			err = 0;
		g_free((void *)put.key);
	}
	if (have_h)
		cache_source_release(&h);
	if (gone)
		err = 0;
	else if (err)
		log_err("series of %s: fetching threads: %s", cv.name, strerror(err));
	else if (d.a->len && fetch)
		log_debug("series of %s: %u threads fetched (%zu wait), %llu messages came",
			  cv.name, d.a->len, d.more, (unsigned long long)added);
	more = !err && !gone && d.more > 0;
	/* what came joins series/ (the update kicks again: nothing is due) */
	if (added && !atomic_load(&v->stop) && !views_series_update(v, id) && v->o.changed)
		v->o.changed(v->o.changed_arg, id, NULL);
	for (i = 0; i < d.a->len; i++)
		g_free(g_array_index(d.a, struct due, i).mid);
	g_array_free(d.a, TRUE);
	settings_free(&set);
	cache_view_release(&cv);
	return more;
}

/* the fetcher: views in turn, until unmount (view_series_fetch_close) */
static void *fetcher(void *arg)
{
	views_t *v = arg;

	for (;;) {
		uint64_t id;

		pthread_mutex_lock(&v->lock);
		while (!v->fetch_n && !atomic_load(&v->stop))
			pthread_cond_wait(&v->fetch_wake, &v->lock);
		if (atomic_load(&v->stop)) {
			pthread_mutex_unlock(&v->lock);
			return NULL;
		}
		id = v->fetch_q[0];
		memmove(v->fetch_q, v->fetch_q + 1, --v->fetch_n * sizeof(*v->fetch_q));
		pthread_mutex_unlock(&v->lock);
		if (turn(v, id))
			view_series_fetch_kick(v, id);  /* the rest after the others */
	}
}

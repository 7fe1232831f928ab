/*
 * A local archive as a view's source (net -> cache index -> cache):
 * import what the archive gained since the last import, index it, then
 * search the index with the view's query.
 *
 * Each archive has a source record in the cache (cache.h, sources.c):
 * its entries hold the archive's messages while any view or the archive
 * needs them, and its position (where the next import resumes,
 * net_archive_read) is written only after the messages and the index are
 * committed: a crash
 * imports again what it had not recorded, which is harmless (blob ids).
 * Imports of one archive run one at a time; searches run at once.
 *
 * Mail that remote sources send is indexed as well, by a background
 * thread, into an index per URL: source "cache:URL" searches it, with no
 * network (a view over what the cache holds, for when one is offline).
 * What is still queued at unmount is not indexed; it is when it comes
 * again.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "cache/index.h"
#include "fs/log.h"
#include "fs/trim.h"
#include "fs/views-private.h"
#include "net/net.h"
#include "query/query.h"

struct local {
	struct local *next;
	char *spec;
	cache_index_t *idx;
	pthread_mutex_t import; /* one import of this archive at a time */
	atomic_ulong gen;       /* moves whenever the index may have gained */
};

struct index_job {
	struct index_job *next;
	char *url;
	unsigned char *oids;
	size_t n;
};

/* the directory of spec's index: named for the source, not by it, never a
 * path made of what a user or a server wrote */
static void index_dir(views_t *v, const char *spec, char *dir, size_t len)
{
	unsigned char h[EVP_MAX_MD_SIZE];
	char hex[17];
	int i;

	EVP_Digest(spec, strlen(spec), h, NULL, EVP_sha256(), NULL);
	for (i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	snprintf(dir, len, "%s/index/%s", v->o.cache_dir, hex);
}

static int get_stored(void *arg, const unsigned char *oid, char **raw, size_t *len)
{
	return cache_msg_get(arg, oid, raw, len);
}

/* An index made before thread ids gets them now, once, from the messages
 * the store holds (an archive's are all there: its source record's
 * entries hold them); a few seconds for a big one, at its first open after an
 * upgrade of leifs.  Re-importing instead would read the whole archive
 * again. */
static int thread_old_index(views_t *v, struct local *l, char *why, size_t whylen)
{
	uint64_t n = 0;
	int err = cache_index_thread_upgrade(l->idx, get_stored, v->cache, &n, why, whylen);

	if (n)
		log_info("index of %s: %llu messages threaded", l->spec, (unsigned long long)n);
	if (err) {
		cache_index_close(l->idx);
		l->idx = NULL;
	}
	return err;
}

static struct local *find_local(views_t *v, const char *spec)
{
	struct local *l;

	pthread_mutex_lock(&v->lock);
	for (l = v->locals; l; l = l->next)
		if (!strcmp(l->spec, spec))
			break;
	pthread_mutex_unlock(&v->lock);
	return l;
}

/* The open index of a local source, opened on first use.  Opening (and
 * threading an index from before thread ids, which reads every message)
 * runs under local_open only, never under the lock all views share: the
 * other views list, refresh and unmount meanwhile. */
static int open_local(views_t *v, const char *spec, struct local **out, char *why,
		      size_t whylen)
{
	char dir[4096];
	struct local *l;
	int err = 0;

	if ((*out = find_local(v, spec)))
		return 0;
	pthread_mutex_lock(&v->local_open);
	if ((*out = find_local(v, spec)))       /* another thread was first */
		goto done;
	snprintf(dir, sizeof(dir), "%s/index", v->o.cache_dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = errno;
		snprintf(why, whylen, "cannot make the index directory: %s", strerror(err));
		goto done;
	}
	index_dir(v, spec, dir, sizeof(dir));
	if (!(l = calloc(1, sizeof(*l))) || !(l->spec = strdup(spec))) {
		free(l);
		err = ENOMEM;
		goto done;
	}
	if ((err = cache_index_open(dir, &l->idx, why, whylen)) ||
	    (err = thread_old_index(v, l, why, whylen))) {
		if (l->idx)
			cache_index_close(l->idx);
		free(l->spec);
		free(l);
		goto done;
	}
	pthread_mutex_init(&l->import, NULL);
	pthread_mutex_lock(&v->lock);
	l->next = v->locals;
	v->locals = l;
	pthread_mutex_unlock(&v->lock);
	*out = l;
done:
	pthread_mutex_unlock(&v->local_open);
	return err;
}

static void *indexer(void *arg);

void view_index_later(views_t *v, const char *url, const unsigned char *oids, size_t n)
{
	struct index_job *j, **p;

	if (!v->o.index_remote || !n)
		return;         /* -o index_remote=0: cache:URL finds nothing new */
	if (!(j = calloc(1, sizeof(*j))) || !(j->url = strdup(url)) || !(j->oids = malloc(n * CACHE_OID_LEN))) {
		if (j)
			free(j->url);
		free(j);
		return;         /* not indexed now; it is when it comes again */
	}
	memcpy(j->oids, oids, n * CACHE_OID_LEN);
	j->n = n;
	atomic_fetch_add(&v->idx_queued, n);
	pthread_mutex_lock(&v->lock);
	for (p = &v->jobs; *p; p = &(*p)->next)
		;
	*p = j;
	if (!v->indexer_running && !atomic_load(&v->stop) &&
	    !pthread_create(&v->indexer, NULL, indexer, v))
		v->indexer_running = 1;
	pthread_cond_broadcast(&v->done);       /* wakes the indexer */
	pthread_mutex_unlock(&v->lock);
}

static void free_job(struct index_job *j)
{
	free(j->url);
	free(j->oids);
	free(j);
}

/* the background indexer: jobs in order, waiting for more, until unmount
 * (views_close sets stop and wakes it) */
static void *indexer(void *arg)
{
	views_t *v = arg;
	char why[300];

	for (;;) {
		struct index_job *j;
		struct local *l = NULL;
		size_t i;

		pthread_mutex_lock(&v->lock);
		while (!v->jobs && !atomic_load(&v->stop))
			pthread_cond_wait(&v->done, &v->lock);
		if (atomic_load(&v->stop)) {
			pthread_mutex_unlock(&v->lock);
			break;
		}
		j = v->jobs;
		v->jobs = j->next;
		pthread_mutex_unlock(&v->lock);
		if (!open_local(v, j->url, &l, why, sizeof(why))) {
			for (i = 0; i < j->n && !atomic_load(&v->stop); i++) {
				const unsigned char *oid = j->oids + i * CACHE_OID_LEN;
				char *raw = NULL;
				size_t len = 0;
				int big;

				atomic_fetch_add(&v->idx_done, 1);
				if (cache_msg_size(v->cache, oid, &len))
					continue;       /* gone meanwhile */
				/* a big message waits for the process's turn */
				big = len > NET_BIG_MESSAGE;
				if (big && net_big_enter(&v->stop, NULL))
					break;
				if (!cache_msg_get(v->cache, oid, &raw, &len)) {
					cache_index_add(l->idx, oid, raw, len, NULL, why, sizeof(why));
					free(raw);
				}
				/* small commits: the daemon's resident set stays
				 * near a fill's while it indexes in the background;
				 * a big message's document goes at once */
				if (big || i % 200 == 199)
					cache_index_commit(l->idx, why, sizeof(why));
				if (big)
					net_big_leave();
			}
			cache_index_commit(l->idx, why, sizeof(why));
			atomic_fetch_add(&l->gen, 1);
		} else {
			char shown[512];

			url_shown(j->url, shown, sizeof(shown));
			log_err("cannot index mail of %s: %s", shown, why);
			atomic_fetch_add(&v->idx_done, j->n);   /* none waits now */
		}
		free_job(j);
		/* nothing more to index: what the documents took goes back
		 * (the idle daemon returns to its baseline, #15) */
		pthread_mutex_lock(&v->lock);
		j = v->jobs;
		pthread_mutex_unlock(&v->lock);
		if (!j)
			give_back_memory();
	}
	return NULL;    /* at unmount */
}

/* bytes of the files in dir (an index is one flat directory) */
static uint64_t dir_bytes(const char *dir)
{
	char path[4096 + 260];
	struct dirent *d;
	struct stat st;
	uint64_t sum = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (d->d_name[0] != '.' && !lstat(path, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(dp);
	return sum;
}

void view_index_status(views_t *v, FILE *f)
{
	unsigned long queued = atomic_load(&v->idx_queued), done = atomic_load(&v->idx_done);
	struct local *l, *first;
	char dir[4096];

	if (!v->o.index_remote) {
		fputs("index-remote: off (index_remote = 0): remote mail is not indexed, "
		      "cache:URL sources find only what was indexed before\n", f);
		return;
	}
	fprintf(f, "index-remote: on, %lu messages queued, %lu indexed since mount\n",
		queued > done ? queued - done : 0, done);
	/* locals are only added at the head and freed at unmount: the list
	 * from its head as read now is safe to walk unlocked */
	pthread_mutex_lock(&v->lock);
	first = v->locals;
	pthread_mutex_unlock(&v->lock);
	for (l = first; l; l = l->next) {
		if (net_source_kind(l->spec) == NET_SOURCE_ARCHIVE)
			continue;       /* an archive's: its views' .status says */
		index_dir(v, l->spec, dir, sizeof(dir));
		fputs("index: ", f);
		print_url(f, l->spec);
		fprintf(f, ": %llu messages, %llu bytes\n",
			(unsigned long long)cache_index_count(l->idx),
			(unsigned long long)dir_bytes(dir));
	}
}

void view_local_close(views_t *v)
{
	struct local *l, *next;
	struct index_job *j;
	int running;

	pthread_mutex_lock(&v->lock);
	running = v->indexer_running;
	pthread_cond_broadcast(&v->done);
	pthread_mutex_unlock(&v->lock);
	if (running)
		pthread_join(v->indexer, NULL);
	while ((j = v->jobs)) {
		v->jobs = j->next;
		free_job(j);
	}

	for (l = v->locals; l; l = next) {
		next = l->next;
		cache_index_close(l->idx);
		pthread_mutex_destroy(&l->import);
		free(l->spec);
		free(l);
	}
	v->locals = NULL;
}

struct hits {
	views_t *v;
	cache_batch_t *batch;
	size_t n, max;          /* max: 0, no bound */
	size_t missing;         /* found in the index, not yet in the store */
	uint32_t hit_flags;     /* flags of a new entry the query found */
};

static int add_hit(void *arg, const unsigned char *oid)
{
	struct hits *h = arg;
	int err;

	if (atomic_load(&h->v->stop))
		return ECANCELED;       /* shutdown: at once */
	err = cache_batch_add_stored_flags(h->batch, oid, h->hit_flags);

	if (err == ENOENT)
		return 0;       /* indexed, but its import did not commit: next time */
	h->n++;
	return err;
}

/* a message of a match's thread; `hit`: the query found it */
static int add_thread_msg(void *arg, const unsigned char *oid, int hit)
{
	struct hits *h = arg;
	int err;

	if (atomic_load(&h->v->stop))
		return ECANCELED;
	if (h->max && h->n >= h->max)
		return EFBIG;
	err = cache_batch_add_stored_flags(h->batch, oid, hit ? h->hit_flags : 0);

	if (err == ENOENT) {
		h->missing++;   /* indexed, but its import did not commit: next time */
		return 0;
	}
	h->n++;
	return err;
}

/* A long import shows the view what it has found so far: the query is run
 * over what is indexed after 2,000 messages, 4,000, 8,000 ... (a few
 * searches in all, however big the archive), so that a first listing of a
 * big archive has mail before the whole import ends. */
#define PEEK_FIRST 2000

struct importer {
	struct local *l;
	cache_batch_t *batch;
	atomic_ulong *progress;
	uint64_t indexed, seen;
	const char *peek_q;     /* the view's query (NULL: no peeks) */
	struct hits peek;       /* into the view's batch */
	uint64_t next_peek;
	char why[300];
};

static int peek(struct importer *im)
{
	char why[300];
	int err;

	/* the hits must be in the store before the view can take them */
	if ((err = cache_batch_flush(im->batch)) ||
	    (err = cache_index_commit(im->l->idx, why, sizeof(why))))
		return err;
	err = cache_index_search(im->l->idx, im->peek_q, add_hit, &im->peek, why, sizeof(why));
	if (!err)
		err = cache_batch_flush(im->peek.batch);
	if (err == ECANCELED && atomic_load(&im->peek.v->stop))
		return err;             /* shutdown */
	if (err)
		im->peek_q = NULL;      /* the view went, or its search fails: the
					 * import goes on, and says nothing */
	return 0;
}

static int import_msg(void *arg, const char *raw, size_t len)
{
	struct importer *im = arg;
	unsigned char oid[CACHE_OID_LEN];
	int added = 0, err;

	cache_oid(raw, len, oid);
	if (im->progress)
		atomic_fetch_add(im->progress, 1);
	if ((err = cache_index_add(im->l->idx, oid, raw, len, &added, im->why, sizeof(im->why)))) {
		if (err != EINVAL)
			return err;
		added = 1;      /* unparseable: stored all the same, never found */
	}
	if (added == 2)
		return 0;       /* a duplicate Message-ID: public-inbox leaves it out */
	im->indexed += added == 1;
	if ((err = cache_batch_add(im->batch, raw, len)))
		return err;
	if (im->peek_q && ++im->seen >= im->next_peek) {
		im->next_peek *= 2;
		return peek(im);
	}
	return 0;
}

/* bring the index up to date with the archive */
static int import(views_t *v, struct local *l, atomic_ulong *progress, struct net_res *res,
		  uint64_t *imported, const char *peek_q, cache_batch_t *view_batch,
		  uint32_t hit_flags)
{
	/* a peek's hits are flagged as the search's (flag-hits): the
	 * search after it finds them in the view, and leaves them be */
	struct importer im = { .l = l, .progress = progress, .peek_q = peek_q,
			       .peek = { .v = v, .batch = view_batch, .hit_flags = hit_flags },
			       .next_peek = PEEK_FIRST };
	struct cache_source src = { 0 };
	const char *pos;
	char *next = NULL, priv[4096];
	int err, e2;

	pthread_mutex_lock(&l->import);
	if ((err = cache_source_add(v->cache, l->spec, &src)) ||
	    (err = cache_batch_new_source(v->cache, &src, &im.batch)))
		goto out;
	pos = src.position;
	/* git reads inboxes in leifs's own empty repository, never in theirs */
	snprintf(priv, sizeof(priv), "%s/dates.git", v->o.cache_dir);
	err = net_archive_read(l->spec, pos, priv, v->o.max_message, v->o.timeout * 1000L,
			       &v->stop, import_msg, &im, &next, res);
	/* keep whole messages that came, even from a read that failed */
	e2 = cache_batch_flush(im.batch);
	if (!err)
		err = e2;
	e2 = cache_index_commit(l->idx, im.why, sizeof(im.why));
	if (!err)
		err = e2;
	if (res->messages || err)
		atomic_fetch_add(&l->gen, 1);
	if (!err && next)
		err = cache_source_set_position(v->cache, l->spec, src.id, next);
	if (err && !res->error[0]) {
		const char *why = im.why[0] ? im.why : err == ENOSPC ?
			"the cache is full (raise -o map_size)" : strerror(err);
		size_t n = strlen(why);

		if (n >= sizeof(res->error))
			n = sizeof(res->error) - 1;
		memcpy(res->error, why, n);
		res->error[n] = '\0';
	}
	*imported = im.indexed;
	log_debug("import of %s from \"%s\": %zu read, %llu new, now at \"%s\"", l->spec,
		  pos, res->messages, (unsigned long long)im.indexed, next ? next : "");
out:
	pthread_mutex_unlock(&l->import);
	cache_batch_free(im.batch);
	cache_source_release(&src);
	free(next);
	return err;
}

/* query_approxidate's dates, read by git in the cache's dates.git, as
 * bounded as the network (-o timeout, and the daemon's end) */
struct dates_git {
	const char *dir;
	views_t *v;
};

static int git_dates(void *arg, char *const *dates, size_t n, long long *out, char *why,
		     size_t whylen)
{
	struct dates_git *d = arg;

	return net_git_dates(d->dir, dates, n, out, d->v->o.timeout * 1000L, &d->v->stop, why,
			     whylen);
}

int view_local_search(views_t *v, const struct net_source *src, const char *query, int threads,
		      size_t max_msgs, cache_batch_t *batch, atomic_ulong *progress,
		      struct net_res *res, uint64_t *imported, struct local_memo *memo)
{
	size_t read_bytes;
	struct hits h = { .v = v, .batch = batch, .max = max_msgs };
	struct local *l = NULL;
	char *q = NULL, dates[4096];
	unsigned long gen;
	uint64_t after, mark = 0;
	int err;

	memset(res, 0, sizeof(*res));
	*imported = 0;
	/* lei q -tt (LeiXSearch.pm query_one_mset): the hits of a local
	 * source are flagged, the rest of their threads not.  Every hit, as
	 * lei-q(1) says ("flag the actual matches"): lei itself flags only
	 * the newest hit of each thread, the one its mset keeps when it
	 * collapses on THREADID (Search.pm mset) */
	if (threads == THREADS_FLAG_HITS && cache_flags_parse("F", &h.hit_flags))
		h.hit_flags = 0;
	/* resolved first: a long import runs it over what it has indexed */
	snprintf(dates, sizeof(dates), "%s/dates.git", v->o.cache_dir);
	if ((err = query_approxidate(query, git_dates, &(struct dates_git){ dates, v }, &q,
				     res->error, sizeof(res->error))))
		goto out;
	if (src->kind == NET_SOURCE_CACHE) {
		struct stat st;

		/* what remote source URL sent, as indexed: no import; with
		 * index_remote = 0 an index never made stays unmade (and
		 * finds nothing) */
		index_dir(v, src->url, dates, sizeof(dates));
		if (!v->o.index_remote && stat(dates, &st) && errno == ENOENT)
			goto out;
		if ((err = open_local(v, src->url, &l, res->error, sizeof(res->error))))
			goto out;
	} else if (src->kind != NET_SOURCE_ARCHIVE) {
		err = EINVAL;   /* a remote source is net_search's */
		goto out;
	} else if ((err = open_local(v, src->spec, &l, res->error, sizeof(res->error))) ||
		   (err = import(v, l, progress, res, imported, q, batch, h.hit_flags))) {
		goto out;
	}
	read_bytes = res->bytes;
	memset(res, 0, sizeof(*res));
	res->bytes = read_bytes;
	/* the index and the query (its dates resolved) as at the view's
	 * last search of it: the same hits, all in the view already; a
	 * search would only look each one up (seconds at 200k) */
	gen = atomic_load(&l->gen);
	if (memo && !memo->full && memo->q && memo->gen == gen && memo->threads == threads &&
	    !strcmp(memo->q, q)) {
		res->messages = 0;
		goto out;
	}
	/* the whole thread of every match, as public-inbox-httpd's t=1: a
	 * new reply in the thread of an earlier match comes with the next
	 * refresh (a local search is never bounded by dt:).  The same query
	 * as the view's last search of it, which took all it found: only
	 * what was indexed since (a refresh costs what came, not the view) */
	after = memo && !memo->full && memo->q && memo->threads == threads &&
		!strcmp(memo->q, q) ? memo->mark : 0;
	err = cache_index_search_since(l->idx, q, threads != THREADS_OFF, after, &mark,
				       add_thread_msg, &h, res->error, sizeof(res->error));
	res->messages = h.n;
	/* a hit not in the store (not yet, or no more: its holders went)
	 * is looked for again by the next search of a grown index, from
	 * where this one looked */
	if (!err && memo) {
		memo->next_mark = h.missing ? after : mark;
		memo->next_gen = gen;
		memo->next_threads = threads;
		free(memo->next_q);
		memo->next_q = q;
		q = NULL;
	}
out:
	if (err && !res->error[0])
		snprintf(res->error, sizeof(res->error), "%s", strerror(err));
	free(q);
	return err;
}

/*
 * The text of VIEW/.status and queries/.status.
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

#define ROW_ERROR 200   /* bytes of a view's error in queries/.status */

/* append a copy of *st to src[n]; NULL (src freed) when memory runs out */
static struct src_state *copy_src(struct src_state *src, int *n, const struct src_state *st)
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
	v[*n].local = st->local;
	v[*n].imported = st->imported;
	v[*n].busy = st->busy;
	v[*n].next_try = st->next_try;
	(*n)++;
	return v;
}

/* a line of the record's text: tabs and line ends become spaces */
static void put_field(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/*
 * The text of the last search in a view's record: "query QUERY", "fetch
 * MSGS BYTES", then a line per source: "source FAILED LOCAL IMPORTED MSGS
 * BYTES BUSY NEXT_TRY URL<tab>ERROR".
 */
char *view_last_text(const struct live *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	if (!(f = open_memstream(&buf, &len)))
		return NULL;
	if (l->last_query) {
		fputs("query ", f);
		put_field(f, l->last_query);
		fprintf(f, "\nfetch %llu %llu\n", (unsigned long long)l->last_msgs,
			(unsigned long long)l->last_bytes);
	}
	for (i = 0; i < l->nsrc; i++) {
		const struct src_state *st = &l->src[i];

		fprintf(f, "source %d %d %llu %llu %llu %ld %lld ", st->failed, st->local,
			(unsigned long long)st->imported, (unsigned long long)st->msgs,
			(unsigned long long)st->bytes, st->busy, (long long)st->next_try);
		put_field(f, st->url);
		fputc('\t', f);
		put_field(f, st->error);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* the inverse, for a view the daemon has not searched since it started:
 * what the record says (lines it cannot read are left out) */
static void last_from_text(const char *text, char **last_query, uint64_t *msgs,
			   uint64_t *bytes, struct src_state **src, int *nsrc)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, n);
		unsigned long long a, b, c;
		long long next = 0;
		struct src_state st;
		int off = 0;

		p += n + (nl != NULL);
		if (!line)
			return;
		memset(&st, 0, sizeof(st));
		if (!strncmp(line, "query ", 6) && !*last_query) {
			*last_query = strdup(line + 6);
		} else if (sscanf(line, "fetch %llu %llu", &a, &b) == 2) {
			*msgs = a;
			*bytes = b;
		} else if (sscanf(line, "source %d %d %llu %llu %llu %ld %lld %n", &st.failed,
				  &st.local, &a, &b, &c, &st.busy, &next,
				  &off) == 7 && off > 0) {
			char *tab = strchr(line + off, '\t');

			st.next_try = next;
			st.imported = a;
			st.msgs = b;
			st.bytes = c;
			if (tab) {
				*tab = '\0';
				snprintf(st.error, sizeof(st.error), "%s", tab + 1);
			}
			st.url = line + off;
			*src = copy_src(*src, nsrc, &st);
		}
		free(line);
	}
}

const char *views_state_name(int state)
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
	int refreshing = 0, queued = 0, i, err;
	unsigned long progress = 0;
	char *buf = NULL, *last_query = NULL, *refusal = NULL;
	uint64_t last_msgs = 0, last_bytes = 0, held = 0;
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
	if ((err = view_settings(v, &cv, &set))) {
		cache_view_release(&cv);
		return err;
	}
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next) {
		if (l->id != cv.id)
			continue;
		refreshing = l->refreshing;
		queued = l->queued;
		progress = atomic_load(&l->progress);
		last_query = l->last_query ? strdup(l->last_query) : NULL;
		last_msgs = l->last_msgs;
		last_bytes = l->last_bytes;
		refusal = l->refusal ? strdup(l->refusal) : NULL;
		held = l->held;
		for (i = 0; i < l->nsrc; i++)
			if (!(src = copy_src(src, &nsrc, &l->src[i])))
				break;
	}
	pthread_mutex_unlock(&v->lock);
	/* not searched since the mount: what the cache kept of the last */
	if (!last_query && !nsrc && cv.last && cv.last[0])
		last_from_text(cv.last, &last_query, &last_msgs, &last_bytes, &src, &nsrc);
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
	view_subsys_status(v, &cv, f);
	fprintf(f, "state: %s\n", refreshing ? "refreshing" : views_state_name(cv.state));
	fprintf(f, "messages: %llu\n", (unsigned long long)count);
	fprintf(f, "last-refresh: %s\n", last);
	fprintf(f, "last-result: %s\n", ok);
	if (refreshing && queued)
		fputs("progress: waiting for a turn (max_refreshes)\n", f);
	else if (refreshing)
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
		if (st && st->busy && st->next_try > (int64_t)time(NULL))
			/* counted from now, not from the search */
			fprintf(f, ": failed: server busy (HTTP %ld), next try in %lld s",
				st->busy, (long long)(st->next_try - (int64_t)time(NULL)));
		else if (st && st->busy)
			fprintf(f, ": failed: server busy (HTTP %ld), next try at the next refresh",
				st->busy);
		else if (st && st->failed)
			fprintf(f, ": failed: %s", st->error);
		else if (st && st->local && net_source_kind(set.sources[i]) == NET_SOURCE_CACHE)
			fprintf(f, ": ok, %llu messages", (unsigned long long)st->msgs);
		else if (st && st->local)
			fprintf(f, ": ok, %llu messages, %llu new in the archive (%llu bytes read)",
				(unsigned long long)st->msgs, (unsigned long long)st->imported,
				(unsigned long long)st->bytes);
		else if (st)
			fprintf(f, ": ok, %llu messages, %llu bytes", (unsigned long long)st->msgs,
				(unsigned long long)st->bytes);
		if (!v->o.index_remote && net_source_kind(set.sources[i]) == NET_SOURCE_CACHE)
			fputs(" (remote mail is not indexed: index_remote = 0)", f);
		fputc('\n', f);
	}
	view_imap_status(v, &cv, &set, f);
	if (held)
		fprintf(f, "held: the last full search found nothing at a source; %llu messages "
			"stay until another, %ld s or more later, agrees\n",
			(unsigned long long)held, v->o.empty_confirm);
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

/* one view of queries/.status: what its record and counters say */
struct row {
	char *name;
	char *query;                    /* tabs and newlines made spaces */
	uint64_t id;
	int state;
	int64_t last_try;
	char error[ROW_ERROR + 1];      /* the first line, cut */
	struct cache_counts n;
};

struct rows {
	struct row *r;
	size_t n, cap;
};

static int add_row(void *arg, const struct cache_view *cv)
{
	struct rows *rs = arg;
	struct row *r;
	size_t i;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct row *t = realloc(rs->r, cap * sizeof(*t));

		if (!t)
			return ENOMEM;
		rs->r = t;
		rs->cap = cap;
	}
	r = &rs->r[rs->n];
	memset(r, 0, sizeof(*r));
	if (!(r->name = strdup(cv->name)))
		return ENOMEM;
	if (!(r->query = strdup(cv->query))) {
		free(r->name);
		return ENOMEM;
	}
	for (i = 0; r->query[i]; i++)
		if ((unsigned char)r->query[i] < 0x20)
			r->query[i] = ' ';
	r->id = cv->id;
	r->state = cv->state;
	r->last_try = cv->last_try;
	/* a line of a tab-separated table: the error's first line, tabs
	 * made spaces, at most ROW_ERROR bytes */
	for (i = 0; cv->error[i] && cv->error[i] != '\n' && cv->error[i] != '\r' &&
		    i < ROW_ERROR; i++)
		r->error[i] = cv->error[i] == '\t' ? ' ' : cv->error[i];
	r->error[i] = '\0';
	rs->n++;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the ids of the views a refresh is queued for or runs, sorted; malloc'd */
static uint64_t *refreshing_ids(views_t *v, size_t *n)
{
	struct live *l;
	uint64_t *ids = NULL;
	size_t cap = 0;

	*n = 0;
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next)
		cap += !!l->refreshing;
	if (cap && (ids = malloc(cap * sizeof(*ids))))
		for (l = v->live; l; l = l->next)
			if (l->refreshing)
				ids[(*n)++] = l->id;
	pthread_mutex_unlock(&v->lock);
	if (ids)
		qsort(ids, *n, sizeof(*ids), cmp_id);
	return ids;
}

/* the table of queries/.status: a line per view, from the records (one
 * read transaction) and each view's counters (a lookup each) */
static int print_views(views_t *v, FILE *f)
{
	struct rows rs = { 0 };
	uint64_t *busy;
	size_t i, nbusy;
	int err;

	if ((err = cache_view_each(v->cache, add_row, &rs)))
		goto out;
	for (i = 0; i < rs.n; i++)
		if ((err = cache_view_counts(v->cache, rs.r[i].id, &rs.r[i].n)) && err != ENOENT)
			goto out;
	err = 0;
	busy = refreshing_ids(v, &nbusy);
	fprintf(f, "views: %zu\n", rs.n);
	/* the query last: a view's name need not be its query (a rename,
	 * a new .query) */
	fputs("name\tstate\tmessages\tnew\tlast-refresh\terror\tquery\n", f);
	for (i = 0; i < rs.n; i++) {
		const struct row *r = &rs.r[i];
		char last[64];

		fmt_time(r->last_try, last, sizeof(last));
		fprintf(f, "%s\t%s\t%llu\t%llu\t%s\t%s\t%s\n", r->name,
			busy && bsearch(&r->id, busy, nbusy, sizeof(*busy), cmp_id) ?
			"refreshing" : views_state_name(r->state),
			(unsigned long long)(r->n.new_ + r->n.cur), (unsigned long long)r->n.new_,
			last, r->error[0] ? r->error : "-", r->query);
	}
	free(busy);
out:
	for (i = 0; i < rs.n; i++) {
		free(rs.r[i].name);
		free(rs.r[i].query);
	}
	free(rs.r);
	return err;
}

/* the table under the guard (cache.h): queries/.status is made outside
 * any (it must still answer, saying so, once the cache is damaged), and
 * the table is its one part that reads the cache */
static int guarded_views(views_t *v, FILE *f)
{
	return CACHE_GUARDED(v->cache, print_views(v, f), (void)0);
}

int views_errors(views_t *v, char **out)
{
	char *buf = NULL, damage[600];
	size_t len = 0;
	int i, err = 0;
	FILE *f = open_memstream(&buf, &len);

	*out = NULL;
	if (!f)
		return ENOMEM;
	for (i = 0; i < v->o.nsources; i++) {
		fputs("source: ", f);
		print_url(f, v->o.sources[i]);
		fputc('\n', f);
	}
	if (cache_damaged(v->cache, damage, sizeof(damage))) {
		/* nothing more is read from a damaged cache */
		fprintf(f, "error: %s\n", damage);
	} else {
		const struct refusal *r;
		char when[64];

		/* the latest on the error line, as always; then each kept,
		 * oldest first, with its time */
		pthread_mutex_lock(&v->lock);
		r = &v->refusals[(v->refusal_next + REFUSALS_KEPT - 1) % REFUSALS_KEPT];
		fprintf(f, "error: %s\n", r->when ? r->text : "");
		for (i = 0; i < REFUSALS_KEPT; i++) {
			r = &v->refusals[(v->refusal_next + (unsigned)i) % REFUSALS_KEPT];
			if (!r->when)
				continue;
			fmt_time(r->when, when, sizeof(when));
			fprintf(f, "refused: %s %s\n", when, r->text);
		}
		pthread_mutex_unlock(&v->lock);
		view_index_status(v, f);
		/* the table reads every view's record: a cache that cannot
		 * be read (LMDB says it is corrupted) leaves the lines
		 * above, and says so, rather than failing the whole file */
		if ((err = guarded_views(v, f)))
			fprintf(f, "error: the views cannot be read from the cache: %s\n",
				strerror(err));
		err = 0;
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return buf ? 0 : ENOMEM;
}

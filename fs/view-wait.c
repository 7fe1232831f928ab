/*
 * A refresh that waits (views.h: views_refresh_wait): what `lei up` is to
 * a script, reading VIEW/.refresh or queries/.refresh is to a shell.  Each
 * view asked is refreshed as a write to its .refresh would (a search
 * running meanwhile is followed by another), and the caller waits for the
 * search after those begun when it asked: the one that saw the archive as
 * it was when the read came.  The wait is bounded by the mount's deadline
 * (and a second, for the search stopped by it to say so) and ends at an
 * interrupt (Ctrl-C of the reader) or at unmount; the
 * searches go on either way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/views-private.h"

struct asked {
	struct live *l;         /* a reference held; NULL: the view went */
	uint64_t id;
	uint64_t until;         /* wait until l->done reaches it */
	int err;                /* it could not be refreshed */
};

static int past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* one line of the summary: name, added, messages, new, state, error */
static void summary_line(views_t *v, FILE *f, const char *name, const struct asked *a,
			 int late)
{
	struct cache_counts n = { 0 };
	struct cache_view cv;
	uint64_t added = 0;
	const char *state;
	char err[256] = "-";

	if (a->err || cache_view_get(v->cache, name, &cv)) {
		fprintf(f, "%s\t-\t-\t-\tgone\t%s\n", name,
			a->err && a->err != ENOENT ? strerror(a->err) : "the view was removed");
		return;
	}
	if (cache_view_counts(v->cache, cv.id, &n))
		memset(&n, 0, sizeof(n));
	pthread_mutex_lock(&v->lock);
	if (a->l)
		added = a->l->last_added;
	pthread_mutex_unlock(&v->lock);
	state = late ? "refreshing" : views_state_name(cv.state);
	if (late)
		snprintf(err, sizeof(err), "still refreshing after deadline=%ld s", v->o.deadline);
	else if (cv.error[0])
		snprintf(err, sizeof(err), "%.*s", (int)strcspn(cv.error, "\n"), cv.error);
	fprintf(f, "%s\t%s%llu\t%llu\t%llu\t%s\t%s\n", name, late ? "~" : "",
		(unsigned long long)added, (unsigned long long)(n.new_ + n.cur),
		(unsigned long long)n.new_, state, err);
	cache_view_release(&cv);
}

int views_refresh_wait(views_t *v, const char *name, atomic_int *interrupted, char **out)
{
	struct names ns = { 0 };
	struct asked *a = NULL;
	struct timespec deadline;
	char *buf = NULL;
	size_t i, len = 0;
	FILE *f = NULL;
	int err = 0, waiting;

	*out = NULL;
	if (name) {
		if (!(ns.name = malloc(sizeof(*ns.name))) || !(ns.name[0] = strdup(name))) {
			free(ns.name);
			return ENOMEM;
		}
		ns.n = ns.cap = 1;
	} else if ((err = views_names(v, &ns))) {
		names_free(&ns);
		return err;
	}
	if (ns.n && !(a = calloc(ns.n, sizeof(*a)))) {
		names_free(&ns);
		return ENOMEM;
	}
	/* ask for every refresh first, then wait for them all at once */
	for (i = 0; i < ns.n; i++) {
		struct cache_view cv;

		if ((a[i].err = cache_view_get(v->cache, ns.name[i], &cv)))
			continue;
		a[i].id = cv.id;
		cache_view_release(&cv);
		pthread_mutex_lock(&v->lock);
		if (!(a[i].l = live_get(v, a[i].id, ns.name[i]))) {
			a[i].err = ENOMEM;
		} else if ((a[i].err = start_refresh(v, a[i].l, 1))) {
			a[i].l = NULL;
		} else {
			a[i].l->refs++;
			a[i].until = a[i].l->begun + 1;
		}
		pthread_mutex_unlock(&v->lock);
	}
	/* a search stops itself at the deadline: a second more lets it say
	 * so (a view queued behind max_refreshes may be later still) */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += v->o.deadline + 1;
	pthread_mutex_lock(&v->lock);
	for (;;) {
		struct timespec slice;

		for (waiting = 0, i = 0; i < ns.n; i++)
			if (a[i].l && a[i].l->done < a[i].until && !atomic_load(&a[i].l->cancel))
				waiting++;
		if (!waiting || atomic_load(&v->stop) || past(&deadline))
			break;
		if (interrupted && atomic_load(interrupted)) {
			err = EINTR;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &slice);
		slice.tv_nsec += WAIT_SLICE_NS;
		if (slice.tv_nsec >= 1000000000L) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&v->refreshed, &v->lock, &slice);
	}
	pthread_mutex_unlock(&v->lock);
	if (!err && !(f = open_memstream(&buf, &len)))
		err = ENOMEM;
	if (f) {
		fputs("name\tadded\tmessages\tnew\tstate\terror\n", f);
		for (i = 0; i < ns.n; i++) {
			int late;

			pthread_mutex_lock(&v->lock);
			late = a[i].l && a[i].l->done < a[i].until && !atomic_load(&a[i].l->cancel);
			pthread_mutex_unlock(&v->lock);
			summary_line(v, f, ns.name[i], &a[i], late);
		}
		if (fclose(f))
			err = ENOMEM;
	}
	pthread_mutex_lock(&v->lock);
	for (i = 0; i < ns.n; i++)
		if (a[i].l)
			live_put(a[i].l);
	pthread_mutex_unlock(&v->lock);
	free(a);
	names_free(&ns);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

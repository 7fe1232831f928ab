/*
 * The text files of views (viewtext.h): made when asked, kept on the node,
 * rewritten per writer.
 *
 * .query, .status, .refresh, queries/.status and queries/.refresh are text
 * made when asked.
 * leifs answers open() with ENOSYS (FUSE's no-open mode): opening a message
 * then costs no round trip at all, which is what makes grep -r over a view
 * run near tmpfs speed.  The price is that no open file has a handle of its
 * own, so nothing here keeps state per open: getattr makes the text and
 * keeps it on the node, read serves that copy, and a write takes effect as
 * it arrives.  Attributes of generated files are never cached, so the
 * kernel (auto_inval_data) drops its cached pages of one whenever its mtime
 * moves and reads afresh.  The mtime of .status, .refresh and .unhide moves
 * (its nanoseconds) at every getattr; that of .query and .config moves when
 * they are written or their text changes, and only then (views_text_time),
 * since editors compare it to tell a change made by another hand (vim: "The
 * file has been changed since reading it").
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/guard.h"
#include "fs/viewtext.h"

static pthread_mutex_t text_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t text_serial;            /* protected by text_lock */
static uint64_t rewrites;               /* rewrites started; text_lock */

static int gen_text(views_t *v, const struct node *n, char **out)
{
	struct cache_view cv;
	int err;

	*out = NULL;
	switch (n->kind) {
	case N_QSTATUS:
		return views_errors(v, out);
	case N_SSTATUS:
		return views_subsys_status(v, out);
	case N_SECTIONS:
		return views_subsys_sections(v, out);
	case N_STATUS:
		/* it reads the cache with locks held: not under GUARD, so
		 * never once the cache is known damaged */
		if (cache_damaged(views_cache(v), NULL, 0))
			return EIO;
		return views_status(v, n->view, out);
	case N_REFRESH:
	case N_QREFRESH:
		*out = strdup("");     /* a reader's summary is its own (readers) */
		return *out ? 0 : ENOMEM;
	case N_CONFIG:
		if (cache_damaged(views_cache(v), NULL, 0))
			return EIO;
		return views_config(v, n->view, out);
	case N_UNHIDE:
		return views_hidden(v, n->view, out);
	case N_QUERY:
		if ((err = fs_node_view(v, n, &cv)))
			return err;
		if (asprintf(out, "%s\n", cv.query) < 0) {
			*out = NULL;
			err = ENOMEM;
		}
		cache_view_release(&cv);
		return err;
	default:
		return EISDIR;
	}
}

int viewtext_generated(int kind)
{
	return kind == N_QSTATUS || kind == N_SSTATUS || kind == N_SECTIONS || kind == N_STATUS || kind == N_REFRESH ||
	       kind == N_QREFRESH || kind == N_QUERY || kind == N_CONFIG || kind == N_UNHIDE;
}

/*
 * A read of .refresh runs a refresh and waits for it (views_refresh_wait);
 * what it reads is the summary, kept per reader (its pid: there is no open
 * handle).  The kernel reads through its page cache and asks for the
 * attributes, with the file, at every read(): that getattr starts the
 * refresh (a stat, an ls -l, a touch or a write do not: they come without
 * the file), and the reader's next reads, each within READER_IDLE_MS of
 * the one before, continue the same summary at the same size and mtime
 * (a new mtime would make the kernel drop the pages and read afresh).  A
 * read after a pause of the same process is a new read: a new refresh.
 */
#define READER_IDLE_MS 2000
#define READER_FORGET_MS 60000
#define READERS_MAX 16

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int refresh_kind(int kind)
{
	return kind == N_REFRESH || kind == N_QREFRESH;
}

/* With text_lock held: the summary of `pid`, made (empty) if `make`;
 * forgets those unread for READER_FORGET_MS, and the least recent of
 * READERS_MAX to make room */
static struct rtext *reader_get(struct node *n, int pid, int make)
{
	struct rtext **p, **oldest = NULL, *r;
	int64_t now = now_ms();
	int count = 0;

	for (p = &n->readers; (r = *p);) {
		if (r->pid == pid)
			return r;
		if (now - r->used > READER_FORGET_MS) {
			*p = r->next;
			free(r->buf);
			free(r);
			continue;
		}
		if (!oldest || r->used < (*oldest)->used)
			oldest = p;
		count++;
		p = &r->next;
	}
	if (!make)
		return NULL;
	if (count >= READERS_MAX) {
		r = *oldest;
		*oldest = r->next;
		free(r->buf);
		free(r);
	}
	if (!(r = calloc(1, sizeof(*r))))
		return NULL;
	r->pid = pid;
	r->used = now;
	r->next = n->readers;
	n->readers = r;
	return r;
}

int viewtext_refresh(views_t *v, struct node *n, int pid, int anew, atomic_int *interrupted)
{
	struct rtext *r;
	char *s = NULL;
	int err;

	pthread_mutex_lock(&text_lock);
	r = reader_get(n, pid, 0);
	if (r && !(anew && now_ms() - r->used >= READER_IDLE_MS)) {
		r->used = now_ms();
		pthread_mutex_unlock(&text_lock);
		return 0;
	}
	pthread_mutex_unlock(&text_lock);
	if ((err = views_refresh_wait(v, n->kind == N_QREFRESH ? NULL : n->view, interrupted, &s)))
		return err;
	pthread_mutex_lock(&text_lock);
	if (!(r = reader_get(n, pid, 1))) {
		err = ENOMEM;
	} else {
		free(r->buf);
		r->buf = s;
		s = NULL;
		r->len = strlen(r->buf);
		r->used = now_ms();
		clock_gettime(CLOCK_REALTIME, &r->mtime);
	}
	pthread_mutex_unlock(&text_lock);
	free(s);
	return err;
}

/* make the text afresh and keep it for the reads that follow; the times
 * of .query and .config (given their view `cv`) move with their text */
int viewtext_attr(views_t *v, struct node *n, const struct cache_view *cv, int pid,
		     struct stat *st, double *timeout)
{
	struct timespec ts;
	struct rtext *r;
	char *s;
	int err;

	*timeout = 0;
	if (refresh_kind(n->kind)) {
		/* the reader's summary, if it has one; else empty, with the
		 * time the caller gave */
		pthread_mutex_lock(&text_lock);
		st->st_size = 0;
		if ((r = reader_get(n, pid, 0))) {
			st->st_size = (off_t)r->len;
			st->st_mtim = st->st_ctim = r->mtime;
		}
		st->st_blocks = (st->st_size + 511) / 512;
		pthread_mutex_unlock(&text_lock);
		return 0;
	}
	if ((err = gen_text(v, n, &s)))
		return err;
	if (cv && (err = views_text_time(v, cv, n->kind == N_CONFIG, s, &ts))) {
		free(s);
		return err;
	}
	pthread_mutex_lock(&text_lock);
	free(n->text);
	n->text = s;
	n->textlen = strlen(s);
	st->st_size = (off_t)n->textlen;
	st->st_blocks = (st->st_size + 511) / 512;
	if (cv)
		st->st_mtim = st->st_ctim = ts;
	else
		st->st_mtim.tv_nsec = (long)(++text_serial % 1000000000u);
	pthread_mutex_unlock(&text_lock);
	*timeout = 0;
	return 0;
}

/* With text_lock held, and held again on return whatever it returns: keep
 * the text made now on n if it has none (made unlocked: it reads the
 * cache) */
static int ensure_text(views_t *v, struct node *n)
{
	char *s;
	int err;

	if (n->text)
		return 0;
	pthread_mutex_unlock(&text_lock);
	err = gen_text(v, n, &s);
	pthread_mutex_lock(&text_lock);
	if (err)
		return err;
	if (n->text) {
		free(s);        /* another thread was first */
		return 0;
	}
	n->text = s;
	n->textlen = strlen(s);
	return 0;
}

/* a copy of [off, off+size) of the kept text (made now if none is kept) */
int viewtext_read(views_t *v, struct node *n, int pid, off_t off, size_t size,
		     char **out, size_t *len)
{
	const char *text = NULL;
	size_t tlen = 0;
	struct rtext *r;
	int err = 0;

	*out = NULL;
	*len = 0;
	pthread_mutex_lock(&text_lock);
	if (refresh_kind(n->kind)) {
		if ((r = reader_get(n, pid, 0))) {
			r->used = now_ms();
			text = r->buf;
			tlen = r->len;
		}
	} else if (!(err = ensure_text(v, n))) {
		text = n->text;
		tlen = n->textlen;
	}
	if (!err && text && off >= 0 && (size_t)off < tlen) {
		*len = tlen - (size_t)off < size ? tlen - (size_t)off : size;
		if (!(*out = malloc(*len ? *len : 1)))
			err = ENOMEM;
		else
			memcpy(*out, text + off, *len);
	}
	pthread_mutex_unlock(&text_lock);
	return err;
}

/*
 * A .query or .config rewrite is gathered on the node, one per writer (its
 * pid; a truncation, as `>` makes, or a write at offset 0 starts it empty,
 * a write further on with none started starts from the current text, as
 * `>>` appends), and handed over whole at every write: with no open handle
 * there is no close to wait for.  Two writers at once thus never mix their
 * texts: each hand-over is one writer's text so far, and the last one is
 * the whole text of the writer that finished last.  A write that ends a
 * query with a newline ends its rewrite; a refused write fails the rest of
 * its rewrite too.  Rewrites idle for WRITER_IDLE seconds are forgotten.
 */
#define WRITERS_MAX 16
#define WRITER_IDLE 60

static void writer_drop(struct wtext **p)
{
	struct wtext *w = *p;

	*p = w->next;
	free(w->buf);
	free(w);
}

/* With text_lock held: the rewrite of `pid`, made if `make`; NULL if none
 * (or out of memory).  Forgets idle rewrites, and the least recent one of
 * WRITERS_MAX to make room. */
static struct wtext *writer_get(struct node *n, int pid, int make)
{
	struct wtext **p, **oldest = NULL, *w;
	int64_t now = (int64_t)time(NULL);
	int count = 0;

	for (p = &n->writers; (w = *p);) {
		if (w->pid == pid) {
			w->used = now;
			return w;
		}
		if (now - w->used > WRITER_IDLE) {
			writer_drop(p);
			continue;
		}
		if (!oldest || w->used < (*oldest)->used)
			oldest = p;
		count++;
		p = &w->next;
	}
	if (!make)
		return NULL;
	if (count >= WRITERS_MAX)
		writer_drop(oldest);
	if (!(w = calloc(1, sizeof(*w))))
		return NULL;
	w->pid = pid;
	w->used = now;
	w->next = n->writers;
	n->writers = w;
	return w;
}

/* With text_lock held: the text of `pid`'s rewrite with [off, off+size)
 * written, copied to *text (a NUL byte in it kept: it must fail the
 * write, not end the text). */
static int writer_put(views_t *v, struct node *n, int pid, const char *buf,
		      size_t size, off_t off, char **text, size_t *len, uint64_t *serial)
{
	size_t end = (size_t)off + size;
	struct wtext *w;
	char *s = NULL;

	if (!(w = writer_get(n, pid, 1)))
		return ENOMEM;
	if (off == 0) {                 /* a rewrite starts anew */
		free(w->buf);
		w->buf = NULL;
		w->len = 0;
		w->refused = 0;
		w->serial = ++rewrites;
		if (!(w->buf = calloc(1, 1)))
			return ENOMEM;
	}
	if (w->refused)
		return EINVAL;
	if (!w->buf) {
		/* an append to what the file reads now: made unlocked (it
		 * reads the cache), and `w` looked up again after */
		int err;

		pthread_mutex_unlock(&text_lock);
		err = gen_text(v, n, &s);
		pthread_mutex_lock(&text_lock);
		if (err)
			return err;
		if (!(w = writer_get(n, pid, 1))) {
			free(s);
			return ENOMEM;
		}
		if (!w->buf) {
			w->buf = s;
			w->len = strlen(s);
			w->serial = ++rewrites;
		} else {
			free(s);
		}
	}
	if (end > w->len) {
		if (!(s = realloc(w->buf, end + 1)))
			return ENOMEM;
		w->buf = s;
	}
	if ((size_t)off > w->len)
		memset(w->buf + w->len, ' ', (size_t)off - w->len);
	memcpy(w->buf + off, buf, size);
	if (end > w->len)
		w->len = end;
	w->buf[w->len] = '\0';
	if (!(*text = malloc(w->len + 1)))
		return ENOMEM;
	memcpy(*text, w->buf, w->len + 1);
	*len = w->len;
	*serial = w->serial;
	return 0;
}


/* A truncation of .query or .config by `pid`: to 0 (as `>` makes) its
 * rewrite starts empty; shorter, its rewrite so far is cut. */
int viewtext_truncate(struct node *n, int pid, off_t size)
{
	char *empty = size == 0 ? calloc(1, 1) : NULL;
	struct wtext *w;
	int err = 0;

	if (size == 0 && !empty)
		return ENOMEM;
	pthread_mutex_lock(&text_lock);
	w = writer_get(n, pid, !!empty);
	if (empty && !w) {
		err = ENOMEM;
	} else if (empty) {     /* `>`: this writer's rewrite starts empty */
		free(w->buf);
		w->buf = empty;
		empty = NULL;
		w->len = 0;
		w->refused = 0;
		w->serial = ++rewrites;
	} else if (w && w->buf && (size_t)size < w->len) {
		w->len = (size_t)size;
		w->buf[w->len] = '\0';
	}
	pthread_mutex_unlock(&text_lock);
	free(empty);
	if (err)
		return err;
	return 0;
}

int viewtext_write(views_t *v, struct node *n, int pid, const char *buf,
		      size_t size, off_t off)
{
	char why[256], *text = NULL;
	struct wtext *w;
	uint64_t serial = 0;
	size_t len = 0;
	int err, done;

	if (off < 0 || (size_t)off > WRITE_MAX || size > WRITE_MAX - (size_t)off)
		return EFBIG;
	pthread_mutex_lock(&text_lock);
	err = writer_put(v, n, pid, buf, size, off, &text, &len, &serial);
	pthread_mutex_unlock(&text_lock);
	if (err)
		return err;
	/* a query is one line; a .config comes a line per write from some
	 * writers (bash's printf), so its rewrite lasts until the next `>` */
	done = n->kind == N_QUERY && text[0] && text[strlen(text) - 1] == '\n';
	if (n->kind == N_QUERY && len && text[len - 1] != '\n' && views_query_ok(text)) {
		/* a line cut by the writer's chunking (dd bs=7): wait for the
		 * rest rather than refuse half a line; a query that reads
		 * whole as it is (`printf 's:foo' >.query`) is taken */
		free(text);
		return 0;
	}
	if (n->kind == N_CONFIG)
		/* a last line without its newline is judged when writes
		 * pause (view-config.c) */
		err = views_stage_config(v, n->view, text, len, serial,
					 len && text[len - 1] != '\n', why, sizeof(why));
	else
		err = views_set_query(v, n->view, text, why, sizeof(why));
	free(text);
	if (err || done) {
		pthread_mutex_lock(&text_lock);
		if ((w = writer_get(n, pid, 0))) {
			free(w->buf);
			w->buf = NULL;
			w->len = 0;
			w->refused = err == EINVAL;
		}
		pthread_mutex_unlock(&text_lock);
	}
	return err;
}

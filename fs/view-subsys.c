/*
 * Subsystem views: MOUNT/subsystems/<section title>/, a view whose query
 * is derived from one section of a MAINTAINERS file (-o maintainers=FILE,
 * query/maintainers.h has the rules) and derived anew before each of its
 * searches, so that an edit of the file reaches the view at its next
 * refresh.  Like a thread view, it is a view like any other, keyed
 * "subsystems/<canonical name>" (no queries/ name holds '/'), its user
 * state kept as any view's: a new query is stored as a .query write is
 * (cache_view_set_query: a full search follows, flags and hidden kept).
 *
 * The files are read when looked at (a mkdir, .sections, .status, a
 * search) and parsed again only when their size, mtime or inode moved.
 * A file that cannot be read (gone, too big, binary) keeps the sections
 * read from it last, so its views keep their query and serve what they
 * have; subsystems/.status says what went wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/log.h"
#include "fs/views-private.h"
#include "query/maintainers.h"
#include "query/query.h"

/* the most of a MAINTAINERS file read: the kernel's is under 1 MiB */
#define MAINT_FILE_MAX (4u << 20)
/* the longest search sent to a remote source: a URL of at most three
 * times this (each ':' '/' ' ' escaped), well inside what public-inbox-httpd
 * (16 KiB of request head) and the proxies in front of lore take */
#define PART_MAX 2048

struct mfile {
	char *path;
	int loaded;             /* f holds what was read last */
	struct stat st;         /* of what was last looked at (read, or
				 * refused: not read again until it moves) */
	int looked;             /* st is set */
	struct maint_file f;
	char *error;            /* why the last look at it failed; NULL: ok */
	int64_t read_at;
};

struct subsys {
	pthread_mutex_t lock;   /* all of it; never taken with v->lock held,
				 * nor across a file's reading */
	int loading;            /* a thread reads the files (the others use
				 * what was read: a file that is a file of
				 * this mount is read by this mount's
				 * handlers, which must not wait for it) */
	struct mfile *files;
	int nfiles;
	uint64_t gen;           /* bumped when a file's sections change */
	char *sections;         /* .sections as of sections_gen (the kernel
				 * reads a long file in many reads, each
				 * making the text anew) */
	uint64_t sections_gen;
	struct refusal refused[REFUSALS_KEPT];
	unsigned next;
};

int view_subsys_open(views_t *v)
{
	struct subsys *s = calloc(1, sizeof(*s));
	int i;

	if (!s)
		return ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	if (v->o.nmaintainers && !(s->files = calloc((size_t)v->o.nmaintainers, sizeof(*s->files)))) {
		free(s);
		return ENOMEM;
	}
	for (i = 0; i < v->o.nmaintainers; i++)
		if (!(s->files[s->nfiles++].path = strdup(v->o.maintainers[i]))) {
			v->subsys = s;
			return ENOMEM;
		}
	v->subsys = s;
	return 0;
}

void view_subsys_close(views_t *v)
{
	struct subsys *s = v->subsys;
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].error);
		maint_free(&s->files[i].f);
	}
	free(s->files);
	free(s->sections);
	pthread_mutex_destroy(&s->lock);
	free(s);
	v->subsys = NULL;
}

/* what a look at one file found, made with no lock held */
struct look {
	int same;               /* unchanged since it was last looked at */
	struct stat st;
	int looked;             /* st is set */
	char *error;            /* malloc'd; NULL: parsed into f */
	struct maint_file f;
};

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void look_error(struct look *k, const char *fmt, const char *arg)
{
	if (asprintf(&k->error, fmt, arg) < 0)
		k->error = NULL;
}

/* read and parse path, unless it is as `prev` says it was */
static void look_at(const char *path, const struct stat *prev, int looked, struct look *k)
{
	struct stat after;
	char *buf = NULL, why[300];
	size_t got = 0;
	ssize_t r;
	int fd, err;

	memset(k, 0, sizeof(*k));
	/* O_NONBLOCK: a FIFO put there does not hang the caller */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		look_error(k, "cannot read it: %s", strerror(errno));
		return;
	}
	if (fstat(fd, &k->st) || !S_ISREG(k->st.st_mode)) {
		close(fd);
		look_error(k, "%s", "not a regular file");
		return;
	}
	k->looked = 1;
	if (looked && same_file(&k->st, prev)) {
		close(fd);
		k->same = 1;
		return;
	}
	if ((unsigned long long)k->st.st_size > MAINT_FILE_MAX) {
		close(fd);
		snprintf(why, sizeof(why), "%llu bytes", (unsigned long long)k->st.st_size);
		look_error(k, "too big to be a MAINTAINERS file (%s, over 4 MiB): not read", why);
		return;
	}
	if (!(buf = malloc((size_t)k->st.st_size + 1))) {
		close(fd);
		look_error(k, "%s", "out of memory");
		return;
	}
	/* what the file holds now, at most the size seen (it may grow) */
	while (got < (size_t)k->st.st_size &&
	       (r = read(fd, buf + got, (size_t)k->st.st_size - got)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		got += (size_t)r;
	}
	/* an editor writing it in place: read again at the next look */
	if (got < (size_t)k->st.st_size || fstat(fd, &after) || !same_file(&after, &k->st)) {
		close(fd);
		free(buf);
		k->looked = 0;
		look_error(k, "%s", "it changed as it was read (read again at the next look)");
		return;
	}
	close(fd);
	err = maint_parse(buf, got, &k->f, why, sizeof(why));
	free(buf);
	if (err)
		look_error(k, "%s", err == EINVAL ? why : strerror(err));
}

/* look at every file, one thread at a time; a thread that finds another
 * at it goes on with what was read before */
static void load_all(struct subsys *s)
{
	struct look *k;
	struct stat *prev;
	int *looked, i, n;

	pthread_mutex_lock(&s->lock);
	if (s->loading || !(n = s->nfiles)) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	k = calloc((size_t)n, sizeof(*k));
	prev = calloc((size_t)n, sizeof(*prev));
	looked = calloc((size_t)n, sizeof(*looked));
	if (!k || !prev || !looked) {
		pthread_mutex_unlock(&s->lock);
		free(k);
		free(prev);
		free(looked);
		return;
	}
	for (i = 0; i < n; i++) {
		prev[i] = s->files[i].st;
		looked[i] = s->files[i].looked;
	}
	s->loading = 1;
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)         /* paths are never changed: read freely */
		look_at(s->files[i].path, &prev[i], looked[i], &k[i]);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		struct mfile *m = &s->files[i];

		m->looked = k[i].looked;
		if (k[i].looked)
			m->st = k[i].st;
		if (k[i].same) {
			continue;       /* as it was: its error (or none) stands */
		} else if (k[i].error) {
			if (!m->error || strcmp(m->error, k[i].error))
				log_err("maintainers %s: %s", m->path, k[i].error);
			free(m->error);
			m->error = k[i].error;
		} else {
			maint_free(&m->f);
			m->f = k[i].f;
			m->loaded = 1;
			s->gen++;
			m->read_at = (int64_t)time(NULL);
			free(m->error);
			m->error = NULL;
			log_info("maintainers %s: %zu sections", m->path, m->f.n);
		}
	}
	s->loading = 0;
	pthread_mutex_unlock(&s->lock);
	free(k);
	free(prev);
	free(looked);
}

/* the section a title names in the first file that has it (s->lock held) */
static const struct maint_section *find(struct subsys *s, const char *title, int *file)
{
	const struct maint_section *sec;
	int i;

	for (i = 0; i < s->nfiles; i++)
		if (s->files[i].loaded && (sec = maint_find(&s->files[i].f, title))) {
			if (file)
				*file = i;
			return sec;
		}
	return NULL;
}

const char *views_subsys_name(const char *key)
{
	size_t n = strlen(SUBSYS_PREFIX);

	return key && !strncmp(key, SUBSYS_PREFIX, n) && key[n] ? key + n : NULL;
}

/* the title a name under subsystems/ stands for, and its view's key */
static int subsys_key(const char *name, char **key, char **title, const char **why)
{
	char *t = NULL;
	int err;

	*key = NULL;
	if (name[0] == '.') {
		*why = "names starting with '.' are reserved";
		return EINVAL;
	}
	if (!(err = query_name_decode(name, &t, why)))
		err = view_prefixed_key(SUBSYS_PREFIX, t, key);
	if (!err && title)
		*title = t;
	else
		free(t);
	return err;
}

static void refuse(views_t *v, const char *fmt, const char *a, const char *b)
{
	struct subsys *s = v->subsys;
	struct refusal *r;
	char shown[201];
	size_t i;

	/* the name may hold anything but '/' and NUL: a line of its own */
	for (i = 0; a[i] && i < sizeof(shown) - 1; i++)
		shown[i] = (unsigned char)a[i] < 0x20 || a[i] == 0x7f ? '?' : a[i];
	shown[i] = '\0';
	pthread_mutex_lock(&s->lock);
	r = &s->refused[s->next];
	r->when = (int64_t)time(NULL);
	snprintf(r->text, sizeof(r->text), fmt, shown, b);
	s->next = (s->next + 1) % REFUSALS_KEPT;
	log_err("%s", r->text);
	pthread_mutex_unlock(&s->lock);
}

/* the derivation of `title` from the files as they are now: ENOENT when
 * no file has it, EINVAL (why) when it cannot be searched */
static int derive(views_t *v, const char *title, struct maint_query *q, const char **path,
		  size_t *line, char *why, size_t whylen)
{
	struct subsys *s = v->subsys;
	const struct maint_section *sec;
	const char *where = NULL;
	int err, i, file = 0;

	if (path)
		*path = NULL;
	load_all(s);
	pthread_mutex_lock(&s->lock);
	if ((sec = find(s, title, &file)))
		where = s->files[file].path;
	if (!sec) {
		snprintf(why, whylen, "no section of that title in %s%s", s->nfiles ?
			 s->files[0].path : "(no -o maintainers=FILE given)",
			 s->nfiles > 1 ? " or the other maintainers files" : "");
		pthread_mutex_unlock(&s->lock);
		return ENOENT;
	}
	if (line)
		*line = sec->line;
	err = maint_derive(&s->files[file].f, sec, PART_MAX, q, why, whylen);
	for (i = 0; !err && (size_t)i < 2 * q->nparts; i++) {
		const char *reason = NULL, *part = i % 2 ? q->safe[i / 2] : q->parts[i / 2];

		if ((err = query_validate(part, &reason)) ||
		    (err = query_syntax_check(part, why, whylen))) {
			if (reason)
				snprintf(why, whylen, "the derived search does not parse: %s", reason);
			maint_query_free(q);
			err = EINVAL;
		}
	}
	if (path && !err && !(*path = strdup(where))) {      /* the caller's */
		maint_query_free(q);
		err = ENOMEM;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int views_create_subsys(views_t *v, const char *name, char *why, size_t whylen)
{
	const char *reason = NULL, *path = NULL;
	char *key = NULL, *title = NULL;
	struct maint_query q;
	int err;

	why[0] = '\0';
	if ((err = subsys_key(name, &key, &title, &reason))) {
		snprintf(why, whylen, "%s", reason ? reason : strerror(err));
		refuse(v, "mkdir refused: subsystems/%.200s: %s", name, why);
		return err;
	}
	if ((err = derive(v, title, &q, &path, NULL, why, whylen))) {
		refuse(v, "mkdir refused: subsystems/%.200s: %s", name, why);
		goto out;
	}
	err = cache_view_create(v->cache, key, q.query, NULL);
	if (err && err != EEXIST) {
		snprintf(why, whylen, "cannot store view: %s", strerror(err));
		log_err("mkdir %s: %s", key, why);
	}
	maint_query_free(&q);
	free((char *)path);
out:
	free(title);
	free(key);
	return err;
}

int views_get_subsys(views_t *v, const char *name, struct cache_view *out)
{
	const char *why;
	char *key;
	int err = subsys_key(name, &key, NULL, &why);

	if (!err)
		err = views_get(v, key, out);
	free(key);
	return err == EINVAL ? ENOENT : err;
}

int views_remove_subsys(views_t *v, const char *name)
{
	const char *why;
	char *key;
	int err = subsys_key(name, &key, NULL, &why);

	if (!err)
		err = views_remove(v, key);
	free(key);
	return err == EINVAL ? ENOENT : err;
}

static void one_line(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

int views_subsys_sections(views_t *v, char **out)
{
	struct subsys *s = v->subsys;
	char *buf = NULL, why[300];
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	int k;

	*out = NULL;
	if (!f)
		return ENOMEM;
	load_all(s);
	pthread_mutex_lock(&s->lock);
	if (s->sections && s->sections_gen == s->gen) {
		fclose(f);
		free(buf);
		*out = strdup(s->sections);
		pthread_mutex_unlock(&s->lock);
		return *out ? 0 : ENOMEM;
	}
	for (k = 0; k < s->nfiles; k++) {
		const struct mfile *m = &s->files[k];

		for (i = 0; m->loaded && i < m->f.n; i++) {
			const struct maint_section *sec = &m->f.s[i];
			struct maint_query q;

			/* a title an earlier file has is that file's */
			if (k && find(s, sec->title, NULL) != sec)
				continue;
			one_line(f, sec->title);
			fputc('\t', f);
			if (!maint_derive(&m->f, sec, PART_MAX, &q, why, sizeof(why))) {
				one_line(f, q.query);
				maint_query_free(&q);
			} else {
				fputc('-', f);  /* .status says why */
			}
			fputc('\n', f);
		}
	}
	fclose(f);
	if (buf) {
		free(s->sections);
		s->sections = strdup(buf);
		s->sections_gen = s->gen;
	}
	pthread_mutex_unlock(&s->lock);
	*out = buf;
	return buf ? 0 : ENOMEM;
}

static void fmt_when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct subsys_rows {
	FILE *f;
	views_t *v;
};

static int status_row(void *arg, const struct cache_view *cv)
{
	struct subsys_rows *r = arg;
	const char *name = views_subsys_name(cv->name);
	uint64_t count = 0;

	if (!name)
		return 0;
	cache_entry_count(views_cache(r->v), cv->id, &count);
	fprintf(r->f, "%s\t%s\t%llu\t", name, views_state_name(cv->state),
		(unsigned long long)count);
	/* a section of 400 F: lines makes a long one: its .query has it all */
	if (strlen(cv->query) > 300) {
		char *head = strndup(cv->query, 300);

		one_line(r->f, head ? head : "");
		free(head);
		fprintf(r->f, "... (%zu bytes)", strlen(cv->query));
	} else {
		one_line(r->f, cv->query);
	}
	fputc('\n', r->f);
	return 0;
}

int views_subsys_status(views_t *v, char **out)
{
	struct subsys *s = v->subsys;
	struct subsys_rows rows;
	char *buf = NULL, when[40], why[300];
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	unsigned k;
	int j, err, first;

	*out = NULL;
	if (!f)
		return ENOMEM;
	load_all(s);
	pthread_mutex_lock(&s->lock);
	if (!s->nfiles)
		fputs("maintainers: none (mount with -o maintainers=FILE, or set maintainers "
		      "in the config file)\n", f);
	for (j = 0; j < s->nfiles; j++) {
		const struct mfile *m = &s->files[j];
		size_t bad = 0;

		fprintf(f, "maintainers: %s", m->path);
		if (m->loaded) {
			fmt_when(m->read_at, when, sizeof(when));
			fprintf(f, ": %zu sections, read %s", m->f.n, when);
		}
		if (m->error)
			fprintf(f, "%s%s%s", m->loaded ? "; now " : ": ", m->error,
				m->loaded ? " (the sections read before are kept)" : "");
		fputc('\n', f);
		if (!m->loaded)
			continue;
		/* what the file says that leifs cannot follow */
		for (i = 0; m->f.problems[i]; i += strcspn(m->f.problems + i, "\n") + 1)
			fprintf(f, "problem: %s: %.*s\n", m->path, (int)strcspn(m->f.problems + i, "\n"),
				m->f.problems + i);
		for (i = 0; i < m->f.n; i++) {
			struct maint_query q;

			if (j && find(s, m->f.s[i].title, &first) && first < j) {
				fprintf(f, "problem: %s: line %zu: a title %s has (its section is "
					"used): ", m->path, m->f.s[i].line, s->files[first].path);
				one_line(f, m->f.s[i].title);
				fputc('\n', f);
				continue;
			}
			if (maint_derive(&m->f, &m->f.s[i], PART_MAX, &q, why, sizeof(why))) {
				if (bad++ < 50) {
					fprintf(f, "unsearchable: ");
					one_line(f, m->f.s[i].title);
					fprintf(f, ": %s\n", why);
				}
				continue;
			}
			maint_query_free(&q);
		}
		if (bad > 50)
			fprintf(f, "unsearchable: %zu sections more\n", bad - 50);
	}
	for (k = 0; k < REFUSALS_KEPT; k++) {
		const struct refusal *r = &s->refused[(s->next + k) % REFUSALS_KEPT];

		if (!r->when)
			continue;
		fmt_when(r->when, when, sizeof(when));
		fprintf(f, "refused: %s %s\n", when, r->text);
	}
	pthread_mutex_unlock(&s->lock);
	fputs("# view\tstate\tmessages\tquery\n", f);
	rows.f = f;
	rows.v = v;
	err = cache_view_each(v->cache, status_row, &rows);
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return buf ? 0 : ENOMEM;
}

/* The terms of a derived query, a NUL-separated list: each atom, "NOT "
 * before those under a NOT (the X: terms); the boolean words dropped. */
static GPtrArray *atoms(const char *q)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
	int depth = 0, neg_depth = -1, after_not = 0;
	const char *p = q;

	while (*p) {
		size_t n;
		int open = 0, close = 0;

		p += strspn(p, " ");
		if (!*p)
			break;
		n = strcspn(p, " ");
		while (n && *p == '(')
			p++, n--, open++;
		while (n && p[n - 1] == ')' && close < depth + open)
			n--, close++;
		if (after_not && open)
			neg_depth = depth + 1;
		depth += open;
		if (n == 3 && !strncmp(p, "NOT", 3)) {
			after_not = 1;
		} else if ((n == 2 && !strncmp(p, "OR", 2)) || (n == 3 && !strncmp(p, "AND", 3))) {
			after_not = 0;
		} else if (n) {
			int neg = after_not || (neg_depth >= 0 && depth >= neg_depth);

			g_ptr_array_add(a, g_strdup_printf("%s%.*s", neg ? "NOT " : "", (int)n, p));
			after_not = 0;
		}
		p += n;
		while (*p == ')')
			p++;
		depth -= close;
		if (neg_depth >= 0 && depth < neg_depth)
			neg_depth = -1;
	}
	return a;
}

static int has_atom(GPtrArray *a, const char *s)
{
	guint i;

	for (i = 0; i < a->len; i++)
		if (!strcmp(g_ptr_array_index(a, i), s))
			return 1;
	return 0;
}

/* "added A, B; removed C" of two derived queries */
static char *atoms_diff(const char *was, const char *now)
{
	GPtrArray *a = atoms(was), *b = atoms(now);
	GString *out = g_string_new("");
	const char *sep = "added ";
	guint i;

	for (i = 0; i < b->len; i++)
		if (!has_atom(a, g_ptr_array_index(b, i))) {
			g_string_append_printf(out, "%s%s", sep, (char *)g_ptr_array_index(b, i));
			sep = ", ";
		}
	sep = out->len ? "; removed " : "removed ";
	for (i = 0; i < a->len; i++)
		if (!has_atom(b, g_ptr_array_index(a, i))) {
			g_string_append_printf(out, "%s%s", sep, (char *)g_ptr_array_index(a, i));
			sep = ", ";
		}
	if (!out->len)
		g_string_append(out, "the same terms, joined otherwise");
	g_ptr_array_free(a, TRUE);
	g_ptr_array_free(b, TRUE);
	return g_string_free(out, FALSE);
}

int view_subsys_prepare(views_t *v, struct live *l, const struct cache_view *cv, char ***parts,
			char ***safe, size_t *nparts, int *changed, char *why, size_t whylen)
{
	const char *name = views_subsys_name(cv->name), *reason = NULL, *path = NULL;
	struct maint_query q;
	char *title = NULL, when[40], *diff;
	int err;

	*parts = *safe = NULL;
	*nparts = 0;
	*changed = 0;
	if ((err = query_name_decode(name, &title, &reason)))
		return err;
	err = derive(v, title, &q, &path, NULL, why, whylen);
	free((char *)path);
	free(title);
	/* the section gone or now unsearchable: the view keeps its query
	 * and what it holds (.status says so), and searches it as long as
	 * it fits in one request */
	if ((err == ENOENT || err == EINVAL) && strlen(cv->query) > PART_MAX) {
		size_t n = strlen(why);

		snprintf(why + n, whylen - n, ": the query derived last (%zu bytes) is too long "
			 "for one request; the view keeps what it has", strlen(cv->query));
		return EINVAL;
	}
	if (err == ENOENT || err == EINVAL)
		return 0;
	if (err)
		return err;
	if (strcmp(q.query, cv->query)) {
		/* stored as a .query write is: the next search is a full one,
		 * the user's state kept */
		if ((err = cache_view_set_query(v->cache, cv->name, cv->id, q.query))) {
			maint_query_free(&q);
			return err;
		}
		fmt_when((int64_t)time(NULL), when, sizeof(when));
		log_info("%s: MAINTAINERS changed: query derived anew", cv->name);
		diff = atoms_diff(cv->query, q.query);
		pthread_mutex_lock(&v->lock);
		free(l->subsys_change);
		if (asprintf(&l->subsys_change, "%s, the file changed: %s; the query was: %s", when,
			     diff, cv->query) < 0)
			l->subsys_change = NULL;
		pthread_mutex_unlock(&v->lock);
		g_free(diff);
		*changed = 1;
	}
	*parts = q.parts;
	*safe = q.safe;
	*nparts = q.nparts;
	q.parts = q.safe = NULL;
	q.nparts = 0;
	maint_query_free(&q);
	return 0;
}

void view_subsys_status(views_t *v, const struct cache_view *cv, FILE *f)
{
	const char *name = views_subsys_name(cv->name), *reason, *path = NULL;
	char *title = NULL, *change = NULL, *note = NULL, why[300];
	struct maint_query q;
	struct live *l;
	size_t line = 0, i, n;
	int err;

	if (!name || query_name_decode(name, &title, &reason))
		return;
	fprintf(f, "section: %s\n", title);
	err = derive(v, title, &q, &path, &line, why, sizeof(why));
	if (err) {
		fprintf(f, "derived: %s (the query derived last is kept)\n",
			err == ENOENT || err == EINVAL ? why : strerror(err));
	} else {
		fprintf(f, "maintainers: %s line %zu\n", path, line);
		if (q.nparts > 1)
			fprintf(f, "parts: %zu (a remote source is asked each, the answers joined)\n",
				q.nparts);
		/* what of the section was widened or left out */
		for (i = 0; q.notes[i]; i += n + 1) {
			n = strcspn(q.notes + i, "\n");
			fprintf(f, "derived: %.*s\n", (int)n, q.notes + i);
			if (!q.notes[i + n])
				break;
		}
		if (strcmp(q.query, cv->query))
			fputs("derived: the file changed: the next refresh searches its new query\n", f);
		maint_query_free(&q);
	}
	free((char *)path);
	pthread_mutex_lock(&v->subsys->lock);
	for (i = 0; i < (size_t)v->subsys->nfiles; i++)
		if (v->subsys->files[i].error)
			fprintf(f, "derived: %s: %s (the sections read before are kept)\n",
				v->subsys->files[i].path, v->subsys->files[i].error);
	pthread_mutex_unlock(&v->subsys->lock);
	pthread_mutex_lock(&v->lock);
	for (l = v->live; l; l = l->next)
		if (l->id == cv->id) {
			if (l->subsys_change)
				change = strdup(l->subsys_change);
			if (l->subsys_note)
				note = strdup(l->subsys_note);
		}
	pthread_mutex_unlock(&v->lock);
	if (note)
		fprintf(f, "derived: %s\n", note);
	if (change)
		fprintf(f, "rederived: %s\n", change);
	free(note);
	free(change);
	free(title);
}

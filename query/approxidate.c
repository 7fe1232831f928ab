/*
 * d:, dt: and rt: ranges made numeric, as public-inbox's Search.pm does
 * (query_approxidate, date_parse_prepare, date_parse_finalize) before
 * Xapian sees the query.
 *
 * Dates other than plain digits are git's "approxidate" ("2.weeks.ago",
 * "2024-01-02", "last.monday"): like public-inbox, leifs asks git itself
 * (git rev-parse --since=X ...), since approxidate is a large hand-written
 * parser no library offers and the answer must be git's to agree with the
 * server.  git gets the date words as arguments (no shell) and an empty
 * repository of ours to run in.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "query/query.h"

extern char **environ;

struct buf {
	char *s;
	size_t n, cap;
	int err;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *t = realloc(b->s, cap);

		if (!t) {
			b->err = ENOMEM;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

struct dates {
	char **arg;     /* what git parses */
	size_t n, cap;
};

static int add_date(struct dates *d, const char *s, size_t n)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		char **t = realloc(d->arg, cap * sizeof(*t));

		if (!t)
			return ENOMEM;
		d->arg = t;
		d->cap = cap;
	}
	if (!(d->arg[d->n] = strndup(s, n)))
		return ENOMEM;
	d->n++;
	return 0;
}

/* a placeholder: \001 format index \001, format d=%Y%m%d t=%Y%m%d%H%M%S
 * s=%s; index "+" is the previous one plus a day */
static void placeholder(struct buf *b, char fmt, long idx)
{
	char tmp[32];

	if (idx < 0)
		snprintf(tmp, sizeof(tmp), "\001%c+\001", fmt);
	else
		snprintf(tmp, sizeof(tmp), "\001%c%ld\001", fmt, idx);
	puts_(b, tmp);
}

static int all_digits(const char *s, size_t n, size_t min, size_t max)
{
	size_t i;

	if (n < min || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int ymd_dash(const char *s, size_t n)
{
	return n == 10 && all_digits(s, 4, 4, 4) && s[4] == '-' && all_digits(s + 5, 2, 2, 2) &&
	       s[7] == '-' && all_digits(s + 8, 2, 2, 2);
}

/* date_parse_prepare: "pfx:range" (range has no spaces) into b */
static int prepare(struct buf *b, struct dates *d, const char *pfx, const char *r, size_t rn)
{
	const char *end = r + rn, *dots;
	char fmt;
	size_t tail = 0;
	int err = 0, two;
	const char *a, *z;
	size_t an, zn;

	/* my $end = $range =~ s/([\)\s]*)\z// */
	while (tail < rn && (r[rn - 1 - tail] == ')' || r[rn - 1 - tail] == ' ' ||
			     r[rn - 1 - tail] == '\t'))
		tail++;
	end = r + rn - tail;
	dots = NULL;
	for (a = r; a + 1 < end; a++)
		if (a[0] == '.' && a[1] == '.') {
			dots = a;
			break;
		}
	two = dots != NULL;
	a = r;
	an = (size_t)((two ? dots : end) - r);
	z = two ? dots + 2 : NULL;
	zn = two ? (size_t)(end - z) : 0;

	if (!strcmp(pfx, "d")) {
		fmt = 'd';
		if (!two) {
			if (all_digits(a, an, 8, 8)) {
				char tmp[16];

				snprintf(tmp, sizeof(tmp), "%.4s-%.2s-%.2s", a, a + 4, a + 6);
				err = add_date(d, tmp, 10);
			} else {
				err = add_date(d, a, an);
				if (!ymd_dash(a, an)) {
					pfx = "dt";
					fmt = 't';
				}
			}
			puts_(b, pfx);
			puts_(b, ":");
			placeholder(b, fmt, (long)d->n - 1);
			puts_(b, "..");
			placeholder(b, fmt, -1);
		} else {
			const char *x[2] = { a, z };
			size_t xn[2] = { an, zn };
			long idx[2] = { -2, -2 };   /* -2: keep as written */
			int i;

			for (i = 0; i < 2 && !err; i++) {
				if (!xn[i] || all_digits(x[i], xn[i], 8, 8))
					continue;
				err = add_date(d, x[i], xn[i]);
				if (!ymd_dash(x[i], xn[i]))
					pfx = "dt";
				idx[i] = (long)d->n - 1;
			}
			puts_(b, pfx);
			puts_(b, ":");
			for (i = 0; i < 2; i++) {
				if (i)
					puts_(b, "..");
				if (idx[i] >= 0) {
					placeholder(b, !strcmp(pfx, "dt") ? 't' : 'd', idx[i]);
				} else {
					put(b, x[i], xn[i]);
					/* s/\A([0-9]{8})\z/${1}000000/ once upgraded */
					if (!strcmp(pfx, "dt") && xn[i] == 8)
						puts_(b, "000000");
				}
			}
		}
	} else if (!strcmp(pfx, "dt")) {
		if (!two) {
			if (all_digits(a, an, 14, 14)) {
				char tmp[32];

				snprintf(tmp, sizeof(tmp), "%.4s-%.2s-%.2s %.2s:%.2s:%.2s",
					 a, a + 4, a + 6, a + 8, a + 10, a + 12);
				err = add_date(d, tmp, strlen(tmp));
			} else {
				err = add_date(d, a, an);
			}
			puts_(b, "dt:");
			placeholder(b, 't', (long)d->n - 1);
			puts_(b, "..");
			placeholder(b, 't', -1);
		} else {
			const char *x[2] = { a, z };
			size_t xn[2] = { an, zn };
			int i;

			puts_(b, "dt:");
			for (i = 0; i < 2 && !err; i++) {
				if (i)
					puts_(b, "..");
				if (!xn[i] || all_digits(x[i], xn[i], 14, 14)) {
					put(b, x[i], xn[i]);
					continue;
				}
				err = add_date(d, x[i], xn[i]);
				placeholder(b, 't', (long)d->n - 1);
			}
		}
	} else {        /* rt: git reads "YYYY" itself */
		const char *x[2] = { a, z };
		size_t xn[2] = { an, zn };
		int i;

		puts_(b, "rt:");
		for (i = 0; i < 2 && !err; i++) {
			if (i)
				puts_(b, "..");
			if (i == 1 && !two) {
				placeholder(b, 's', -1);
				continue;
			}
			if (!xn[i] || all_digits(x[i], xn[i], 5, 64)) {
				put(b, x[i], xn[i]);
				continue;
			}
			err = add_date(d, x[i], xn[i]);
			placeholder(b, 's', (long)d->n - 1);
		}
	}
	put(b, end, tail);
	return err ? err : b->err;
}

/* git rev-parse --since=X...: one unix time per date */
static int git_dates(const char *git_dir, struct dates *d, long long *out, char *why,
		     size_t whylen)
{
	char **argv = calloc(d->n + 5, sizeof(*argv)), *gd = NULL, buf[64];
	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 }, err = 0, st = 0;
	size_t i, got = 0, ln = 0;
	pid_t pid = -1;
	FILE *f = NULL;

	if (!argv || asprintf(&gd, "--git-dir=%s", git_dir) < 0) {
		free(argv);
		return ENOMEM;
	}
	argv[0] = "git";
	argv[1] = gd;
	argv[2] = "rev-parse";
	for (i = 0; i < d->n; i++)
		if (asprintf(&argv[3 + i], "--since=%s", d->arg[i]) < 0) {
			err = ENOMEM;
			goto out;
		}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	pfd[1] = -1;
	if (err) {
		snprintf(why, whylen, "cannot read dates: git: %s", strerror(err));
		pid = -1;
		goto out;
	}
	if (!(f = fdopen(pfd[0], "r"))) {
		err = errno;
		goto out;
	}
	pfd[0] = -1;
	while (fgets(buf, sizeof(buf), f)) {
		ln++;
		if (got < d->n && !strncmp(buf, "--max-age=", 10))
			out[got++] = strtoll(buf + 10, NULL, 10);
	}
out:
	if (f)
		fclose(f);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pid > 0 && (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
		if (!err) {
			snprintf(why, whylen, "cannot read dates: git rev-parse failed");
			err = EIO;
		}
	if (!err && got != d->n) {
		snprintf(why, whylen, "cannot read dates: git gave %zu of %zu", got, d->n);
		err = EIO;
	}
	for (i = 0; i < d->n; i++)
		free(argv[3 + i]);
	free(argv);
	free(gd);
	return err;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (unsigned char)c >= 0x80;
}

/* the placeholders replaced by numbers (date_parse_finalize) */
static int finalize(struct buf *out, const char *s, const long long *t)
{
	long long last = 0;

	while (*s) {
		const char *p = strchr(s, '\001'), *e;
		char fmt, tmp[32];
		long long v;
		struct tm tm;
		time_t tt;

		if (!p) {
			puts_(out, s);
			break;
		}
		put(out, s, (size_t)(p - s));
		e = strchr(p + 1, '\001');
		if (!e)
			return EINVAL;
		fmt = p[1];
		if (p[2] == '+') {
			v = last + 86400;
		} else {
			v = last = t[strtol(p + 2, NULL, 10)];
		}
		tt = (time_t)v;
		if (fmt == 's') {
			snprintf(tmp, sizeof(tmp), "%lld", v);
		} else {
			if (!gmtime_r(&tt, &tm))
				return EINVAL;
			strftime(tmp, sizeof(tmp), fmt == 'd' ? "%Y%m%d" : "%Y%m%d%H%M%S", &tm);
		}
		puts_(out, tmp);
		s = e + 1;
	}
	return out->err;
}

int query_approxidate(const char *query, const char *git_dir, char **out, char *why,
		      size_t whylen)
{
	struct buf b = { 0 }, fin = { 0 };
	struct dates d = { 0 };
	long long *t = NULL;
	const char *p = query;
	int err = 0, quoted = 0;
	size_t i;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	/* dates are rewritten outside "phrases" only ("" and curly quotes) */
	while (*p && !err) {
		size_t q = 0;

		if (*p == '"')
			q = 1;
		else if (!strncmp(p, "\xe2\x80\x9c", 3) || !strncmp(p, "\xe2\x80\x9d", 3))
			q = 3;
		if (q) {
			quoted = !quoted;
			put(&b, p, q);
			p += q;
			continue;
		}
		if (!quoted && (p == query || !word_char(p[-1]))) {
			const char *pfx = NULL;

			if (!strncmp(p, "d:", 2))
				pfx = "d";
			else if (!strncmp(p, "dt:", 3))
				pfx = "dt";
			else if (!strncmp(p, "rt:", 3))
				pfx = "rt";
			if (pfx) {
				const char *r = p + strlen(pfx) + 1, *e = r;

				while (*e && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r' &&
				       *e != '"' && strncmp(e, "\xe2\x80\x9c", 3) &&
				       strncmp(e, "\xe2\x80\x9d", 3))
					e++;
				if (e > r) {
					err = prepare(&b, &d, pfx, r, (size_t)(e - r));
					p = e;
					continue;
				}
			}
		}
		put(&b, p, 1);
		p++;
	}
	if (!err)
		err = b.err;
	if (!err && !b.s)
		put(&b, "", 0), err = b.err;
	if (err)
		goto out;
	if (!d.n && !strchr(b.s, '\001')) {
		*out = b.s;
		b.s = NULL;
		goto out;
	}
	if (!(t = calloc(d.n + 1, sizeof(*t)))) {
		err = ENOMEM;
		goto out;
	}
	if (d.n && (err = git_dates(git_dir, &d, t, why, whylen)))
		goto out;
	if ((err = finalize(&fin, b.s, t)))
		goto out;
	*out = fin.s;
	fin.s = NULL;
out:
	for (i = 0; i < d.n; i++)
		free(d.arg[i]);
	free(d.arg);
	free(t);
	free(b.s);
	free(fin.s);
	return err;
}

int query_git_dir(const char *dir)
{
	char p[4096];
	FILE *f;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/objects", dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/refs", dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		return errno;
	snprintf(p, sizeof(p), "%s/HEAD", dir);
	if (access(p, F_OK)) {
		if (!(f = fopen(p, "w")))
			return errno;
		fputs("ref: refs/heads/main\n", f);
		if (fclose(f))
			return EIO;
	}
	return 0;
}
